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
