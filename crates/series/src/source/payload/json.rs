//! Format `Json`: a payload streamed through serde_json into the sink, with a second reading
//! that takes Python's bare `NaN` / `Infinity` tokens as gaps (serde_json, following RFC 8259,
//! refuses them).

use serde::de::DeserializeSeed;

use super::PayloadError;
use super::serde_walk::Walk;
use super::sink::Sink;
use vizdeck_base::text::one_line;

/// Format `Json`: streamed into `sink`. A payload serde_json refuses as a syntax error that holds
/// the bare tokens `NaN`, `Infinity` or `-Infinity` outside strings (what Python's `json.dumps`
/// writes for non-finite floats; serde_json follows RFC 8259, which has none) is read a second
/// time with those tokens as `null` (gaps; see [`nonfinite_to_null`]). An error of that second
/// reading is reported at its place in the payload as sent.
pub(super) fn json(
    sink: &mut Sink,
    payload: &[u8],
    retry: &mut JsonRetry,
) -> Result<(), PayloadError> {
    let Err(first) = json_walk(sink, payload) else {
        return Ok(());
    };
    if sink.fatal.is_some()
        || !first.is_syntax()
        || !nonfinite_to_null(payload, &mut retry.text, &mut retry.grown)
    {
        return Err(sink.failed(first, PayloadError::NotJson));
    }
    sink.rewind();
    let Err(second) = json_walk(sink, &retry.text) else {
        return Ok(());
    };
    if let Some(e) = sink.fatal.take() {
        return Err(e);
    }
    Err(PayloadError::NotJson(retry.message(&second)))
}

/// One serde walk of JSON `text` into `sink`, the whole text one value.
pub(super) fn json_walk(sink: &mut Sink, text: &[u8]) -> Result<(), serde_json::Error> {
    let mut de = serde_json::Deserializer::from_slice(text);
    Walk(&mut *sink)
        .deserialize(&mut de)
        .and_then(|()| de.end())
}

/// The rewritten JSON of a second reading (see [`json`]), kept across messages.
#[derive(Default)]
pub(super) struct JsonRetry {
    /// The payload with its non-finite tokens as `null`.
    pub(super) text: Vec<u8>,
    /// Offsets in `text` just after each `null` one byte longer than the token it replaced.
    pub(super) grown: Vec<usize>,
}

impl JsonRetry {
    /// serde_json's message of an error in `text`, its column moved back to the payload as sent
    /// (one byte less for each grown `null` before it on its line).
    pub(super) fn message(&self, e: &serde_json::Error) -> String {
        let full = e.to_string();
        if e.line() == 0 {
            return one_line(&full);
        }
        let suffix = format!(" at line {} column {}", e.line(), e.column());
        let what = full.strip_suffix(&suffix).unwrap_or(&full);
        // serde_json counts lines from 1 and columns in bytes from the line's start.
        let line_start = if e.line() == 1 {
            0
        } else {
            self.text
                .iter()
                .enumerate()
                .filter(|&(_, &b)| b == b'\n')
                .nth(e.line() - 2)
                .map_or(self.text.len(), |(i, _)| i + 1)
        };
        let at = line_start + e.column();
        let shift = self
            .grown
            .iter()
            .filter(|&&g| g > line_start && g <= at)
            .count();
        one_line(&format!(
            "{what} at line {} column {}",
            e.line(),
            e.column().saturating_sub(shift)
        ))
    }
}

/// Copies JSON `text` into `out` with the bare tokens `NaN`, `Infinity`, `-Infinity` and
/// `-NaN` (outside strings, not part of a longer word) replaced by `null`: spaces pad it to the
/// token's length, and a `NaN` after a space or tab takes that byte, so that positions stay
/// those of `text`; where neither works (`[1,NaN]`) `out` grows by one byte and the offset
/// after the `null` is pushed to `grown`. Returns whether any token was replaced (`out` and
/// `grown` are cleared first).
pub(super) fn nonfinite_to_null(text: &[u8], out: &mut Vec<u8>, grown: &mut Vec<usize>) -> bool {
    out.clear();
    grown.clear();
    let word = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'+' | b'-');
    let mut replaced = false;
    let (mut in_string, mut escaped) = (false, false);
    let mut i = 0;
    while let Some(&b) = text.get(i) {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
        } else if b == b'"' {
            in_string = true;
        } else if matches!(b, b'N' | b'I' | b'-')
            && (i == 0 || !word(text[i - 1]))
            && let Some(len) = [&b"NaN"[..], b"Infinity", b"-NaN", b"-Infinity"]
                .iter()
                .find(|t| {
                    text[i..].starts_with(t) && text.get(i + t.len()).is_none_or(|&c| !word(c))
                })
                .map(|t| t.len())
        {
            if len >= 4 {
                out.extend_from_slice(b"null");
                out.resize(out.len() + len - 4, b' ');
            } else if matches!(out.last(), Some(b' ' | b'\t')) {
                out.pop();
                out.extend_from_slice(b"null");
            } else {
                out.extend_from_slice(b"null");
                grown.push(out.len());
            }
            replaced = true;
            i += len;
            continue;
        }
        out.push(b);
        i += 1;
    }
    replaced
}

#[cfg(test)]
mod tests {
    use super::super::tests::{decode_ok, decoder, gaps, with_gaps};
    use super::super::{PayloadError, PayloadFormat};

    /// What Python's `json.dumps` writes for NaN and ±infinity (checked with Python 3:
    /// `json.dumps({"a": float("nan"), "b": float("inf"), "c": -float("inf"), "d": 1.5,
    /// "s": "NaN Infinity"})`; `separators=(",", ":")` for the compact one).
    #[test]
    fn python_nan_and_infinity_tokens_are_gaps() {
        let mut d = decoder(PayloadFormat::Json, None);
        let payload =
            br#"{"a": NaN, "b": Infinity, "c": -Infinity, "d": 1.5, "s": "NaN Infinity"}"#;
        decode_ok(&mut d, "py", payload);
        assert_eq!(
            gaps(&d),
            with_gaps(&[
                ("py/a", None),
                ("py/b", None),
                ("py/c", None),
                ("py/d", Some(1.5))
            ])
        );
        decode_ok(&mut d, "", b"[1,NaN]");
        assert_eq!(gaps(&d), with_gaps(&[("0", Some(1.0)), ("1", None)]));
        decode_ok(&mut d, "", b"NaN");
        assert_eq!(gaps(&d), with_gaps(&[("value", None)]));
        // Tokens inside strings (keys, values, after an escaped quote) are left alone.
        decode_ok(
            &mut d,
            "",
            br#"{"k NaN": NaN, "e\"NaN": 2, "v": "Infinity"}"#,
        );
        assert_eq!(
            gaps(&d),
            with_gaps(&[("k NaN", None), ("e\"NaN", Some(2.0))])
        );
        // Auto reads them too.
        let mut d = decoder(PayloadFormat::Auto, None);
        decode_ok(&mut d, "", br#"{"a": NaN, "b": 2}"#);
        assert_eq!(gaps(&d), with_gaps(&[("a", None), ("b", Some(2.0))]));
    }

    #[test]
    fn words_that_only_contain_the_tokens_stay_errors() {
        let mut d = decoder(PayloadFormat::Json, None);
        for payload in [
            &b"[NaNa]"[..],
            b"[xNaN]",
            b"[Infinity2]",
            b"[nan]",
            b"[+NaN]",
        ] {
            let e = d.decode("", payload).unwrap_err();
            assert!(matches!(e, PayloadError::NotJson(_)), "{e}");
        }
    }

    /// A payload with a NaN and a real syntax error: the error is placed in the payload as sent
    /// (the `}` is byte 8 of `[1,NaN,}` and byte 10 of `[1, NaN, }`, counting from 1), though
    /// the second reading had `null` (one byte longer) in place of the first `NaN`.
    #[test]
    fn errors_after_a_rewritten_token_point_into_the_payload_as_sent() {
        let mut d = decoder(PayloadFormat::Json, None);
        let e = d.decode("", b"[1,NaN,}").unwrap_err();
        assert_eq!(e.to_string(), "not JSON: expected value at line 1 column 8");
        let e = d.decode("", b"[1, NaN, }").unwrap_err();
        assert_eq!(
            e.to_string(),
            "not JSON: expected value at line 1 column 10"
        );
        // On the second line, after a grown token on the first: the column is the second line's.
        let e = d.decode("", b"[NaN,\n1,NaN,}").unwrap_err();
        assert_eq!(e.to_string(), "not JSON: expected value at line 2 column 7");
        assert!(d.samples().is_empty());
    }
}
