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

#[cfg(test)]
mod tests {
    use super::super::PayloadFormat;
    use super::super::tests::{decode_ok, decoder, named, owned};

    #[test]
    fn number_format() {
        let mut d = decoder(PayloadFormat::Number, None);
        decode_ok(&mut d, "a/b", b" 42.5\r\n");
        assert_eq!(owned(&d), named(&[("a/b", 42.5)]));
        decode_ok(&mut d, "", b"-1e-3");
        assert_eq!(owned(&d), named(&[("value", -0.001)]));
        let e = d.decode("a", b"abc").unwrap_err();
        assert_eq!(e.to_string(), "not a number: 'abc'");
        // `inf` is a gap (see `number_and_csv_gap_spellings`), `1e400` an error.
        assert!(d.decode("a", b"1e400").is_err());
    }
}
