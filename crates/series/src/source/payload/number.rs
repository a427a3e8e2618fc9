//! Format `Number`: a payload that is one bare number (or a JSON string holding one).

use super::PayloadError;
use super::sink::{Sink, number_or_gap, snippet};

/// Format `Number`: the text, or the text of a JSON string (`"3.5"`), as [`number_or_gap`].
pub(super) fn number_payload(sink: &mut Sink, payload: &[u8]) -> Result<(), PayloadError> {
    let text = std::str::from_utf8(payload).ok().map(|t| {
        let t = t.trim();
        t.strip_prefix('"')
            .and_then(|t| t.strip_suffix('"'))
            .unwrap_or(t)
    });
    match text.and_then(number_or_gap) {
        Some(v) => {
            sink.emit(v);
            Ok(())
        }
        None => Err(PayloadError::NotNumber(snippet(payload))),
    }
}
