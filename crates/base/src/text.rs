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

#[cfg(test)]
mod tests {
    #[test]
    fn control_characters_are_escaped_and_nothing_else() {
        assert_eq!(super::one_line("a\nb\r\tc\u{1b}é"), "a\\nb\\r\\tc\\u{1b}é");
        assert_eq!(super::one_line("plain, text"), "plain, text");
    }
}
