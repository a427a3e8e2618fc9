//! Text helpers for the one-line messages vizdeck gives about bad input.

/// `text` from an input (a CSV cell, a header name) as a message quotes it: on one line, control
/// characters written as Rust escapes (`\n`, `\r`, `\t`, `\u{1b}`); other text unchanged. So a
/// quoted line break in a stranger's file cannot split a message in two.
pub fn one_line(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
        }
    }
    out
}

/// Parses a count: a number ≥ 1 with an optional `k`, `M` or `G` suffix (`500k`, `10M`,
/// `1.5G`), at most 10¹².
pub fn parse_count(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (num, mult) = match t.chars().last() {
        Some('k' | 'K') => (&t[..t.len() - 1], 1e3),
        Some('M') => (&t[..t.len() - 1], 1e6),
        Some('G') => (&t[..t.len() - 1], 1e9),
        _ => (t, 1.0),
    };
    let v = num
        .trim()
        .parse::<f64>()
        .map(|v| (v * mult).round())
        .map_err(|_| format!("'{s}' is not a count (e.g. 500000, 500k, 10M)"))?;
    if !(v.is_finite() && (1.0..=1e12).contains(&v)) {
        return Err(format!("'{s}' is out of range: from 1 to 1e12"));
    }
    Ok(v as u64)
}

#[cfg(test)]
mod tests {
    #[test]
    fn control_characters_are_escaped_and_nothing_else() {
        assert_eq!(super::one_line("a\nb\r\tc\u{1b}é"), "a\\nb\\r\\tc\\u{1b}é");
        assert_eq!(super::one_line("plain, text"), "plain, text");
    }
}
