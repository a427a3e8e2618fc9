//! Payloads of live network sources (an MQTT message, a ZeroMQ multipart message, a UDP
//! datagram) decoded into samples for the time-series chart: a list of (series name, value) and,
//! when the payload carries one, its time. PlotJuggler's streaming plugins are the model.
//!
//! Formats ([`PayloadFormat`]): JSON, MessagePack and CBOR trees, whose numeric leaves are the
//! samples, named by their paths; one bare number; CSV-like lines (`1.5,2,3`, `temp=21.5,hum=40`).
//! `Auto` tells them apart message by message.
//!
//! Gaps: a null leaf, a NaN or an infinity (JSON `null`, the bare `NaN` / `Infinity` /
//! `-Infinity` Python's `json.dumps` writes, MessagePack nil, CBOR null, non-finite MessagePack
//! and CBOR floats, `nan` / `null` / `inf` as a plain number or CSV value) is a sample of value
//! NaN, which the store keeps as a gap. The network ingest puts a gap only into a series that
//! already exists: a path that never held a number starts no series.
//!
//! Time fields: a number of at least 1e8 in magnitude, or a date-time, is wall-clock (Unix) time;
//! a smaller number is seconds from an origin of the publisher's own ([`TimeBase`]). The first
//! message with a time field fixes which one a [`Decoder`] takes; messages of the other kind
//! are refused ([`PayloadError::TimeBaseMixed`]).
//!
//! Speed: a [`Decoder`] keeps its sample names and buffers from one message to the next. JSON and
//! MessagePack are streamed through serde straight into the samples (no tree is built); CBOR is
//! read into ciborium's `Value` and walked without recursion; CSV lines are split by `csv_core`
//! readers kept across messages.
//!
//! Robustness: no input makes it panic. Nesting deeper than 128 maps and arrays is refused
//! (serde_json's own limit is the same) and the readers stop there, so a hostile
//! `[[[[…` cannot overflow the stack.

mod cbor;
mod csv;
mod json;
mod msgpack;
mod number;
mod serde_walk;
mod sink;

use std::fmt::{self, Display};

use cbor::{cbor_value, untag, walk_cbor};
use csv::CsvSplit;
use json::{JsonRetry, json};
use msgpack::msgpack;
use number::number_payload;
use sink::{Sink, number_or_gap, snippet};
use vizdeck_base::text::one_line;

/// Largest payload decoded, bytes; larger ones are refused with [`PayloadError::TooLarge`].
pub(crate) const MAX_PAYLOAD_BYTES: usize = 1 << 20;

/// Most leaves taken from one message; the rest are counted as skipped (see
/// [`Decoder::skipped`]).
pub const MAX_LEAVES: usize = 4096;

/// Deepest nesting of maps and arrays read.
const MAX_DEPTH: usize = 128;

/// Characters of a payload quoted in an error message.
const SNIPPET_CHARS: usize = 40;

/// Message of a payload nested deeper than [`MAX_DEPTH`].
const TOO_DEEP: &str = "nested deeper than 128 levels";

/// Message of a MessagePack or CBOR value followed by more bytes.
const TRAILING: &str = "trailing bytes after the value";

/// Payload encodings.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PayloadFormat {
    /// Told apart per message: first byte (after whitespace) `{` or `[`: JSON; a JSON string
    /// holding a number (`"3.5"`): that number; else, for UTF-8 text, one number (or
    /// `nan`, `inf`, `null`: a gap): `Number`; text containing `,`, `;`, `=`, `:`, a tab or a
    /// line break: `Csv`; else MessagePack, then CBOR, whichever reads the whole payload as one
    /// map or array.
    #[default]
    Auto,
    /// A JSON value (UTF-8). Every numeric leaf is a sample (see [`Decoder::decode`]).
    Json,
    /// One number as UTF-8 text (surrounding whitespace ignored), e.g. `21.5`, or a JSON string
    /// holding one (`"21.5"`); `nan`, `inf`, `null` (any case) are a gap.
    Number,
    /// Lines of fields separated by `,` (or `;`, or a tab, when the line has no comma): bare numbers
    /// (`1.5,2,3`) or `name=value` / `name:value` pairs (`temp=21.5,hum=40`); a value `nan`,
    /// `inf` or `null` (any case) is a gap, an empty one is skipped.
    Csv,
    /// A MessagePack value; as JSON.
    MsgPack,
    /// A CBOR value (RFC 8949); as JSON. Tags are looked through; integer keys name by their digits.
    Cbor,
}

impl PayloadFormat {
    /// Every format, in the order of [`PayloadFormat::parse`]'s list.
    pub const ALL: [PayloadFormat; 6] = [
        PayloadFormat::Auto,
        PayloadFormat::Json,
        PayloadFormat::Number,
        PayloadFormat::Csv,
        PayloadFormat::MsgPack,
        PayloadFormat::Cbor,
    ];

    /// Parses a format name: `auto`, `json`, `number`, `csv`, `msgpack`, `cbor` (ASCII case and
    /// surrounding whitespace ignored).
    ///
    /// # Errors
    ///
    /// A one-line message quoting `s` and listing the accepted names.
    pub fn parse(s: &str) -> Result<PayloadFormat, String> {
        let t = s.trim();
        PayloadFormat::ALL
            .into_iter()
            .find(|f| f.name().eq_ignore_ascii_case(t))
            .ok_or_else(|| {
                format!(
                    "'{}' is not a payload format (auto, json, number, csv, msgpack, cbor)",
                    one_line(s)
                )
            })
    }

    /// The name [`PayloadFormat::parse`] reads: `auto`, `json`, `number`, `csv`, `msgpack`, `cbor`.
    pub fn name(self) -> &'static str {
        match self {
            PayloadFormat::Auto => "auto",
            PayloadFormat::Json => "json",
            PayloadFormat::Number => "number",
            PayloadFormat::Csv => "csv",
            PayloadFormat::MsgPack => "msgpack",
            PayloadFormat::Cbor => "cbor",
        }
    }
}

/// Options for decoding.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PayloadOptions {
    /// Encoding of the payloads.
    pub format: PayloadFormat,
    /// Path of the timestamp field, its keys joined with `/` and without the topic (`ts`,
    /// `header/stamp`, `stamps/0`; for CSV the pair's name, or a bare field's index); `None`: the
    /// caller uses the arrival time.
    pub time_field: Option<String>,
}

/// What the time-field values of a source count from, fixed by its first message that has one
/// (see [`Decoder::decode`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeBase {
    /// Wall-clock time: a number of at least 1e8 in magnitude, read as Unix seconds,
    /// milliseconds, microseconds or nanoseconds by [`TimeUnit::from_magnitude`](super::TimeUnit::from_magnitude), or a
    /// date-time string. Comparable with this machine's clock (publish → present latency).
    Unix,
    /// Seconds from an origin of the publisher's own (a number below 1e8 in magnitude, e.g.
    /// `12.5` seconds since it started): charted as those seconds, not as dates; not
    /// comparable with this machine's clock.
    Relative,
}

impl TimeBase {
    /// Short name for reports: `unix`, `relative`.
    pub fn name(self) -> &'static str {
        match self {
            TimeBase::Unix => "unix",
            TimeBase::Relative => "relative",
        }
    }
}

impl Display for TimeBase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TimeBase::Unix => "wall-clock (Unix) times",
            TimeBase::Relative => "relative seconds (numbers below 1e8)",
        })
    }
}

/// Why a payload gave no samples. Each displays as one short line; quoted payload text is made
/// one line ([`one_line`]) and cut to about 40 characters, binary bytes are shown in hex.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum PayloadError {
    /// The payload is longer than [`MAX_PAYLOAD_BYTES`] (`len` bytes); nothing was parsed.
    #[error("{len} bytes, more than the {max}-byte cap", max = MAX_PAYLOAD_BYTES)]
    TooLarge {
        /// Length of the payload, bytes.
        len: usize,
    },
    /// Not JSON (format `Json`, or `Auto` with a leading `{` or `[`): the parser's message.
    #[error("not JSON: {0}")]
    NotJson(String),
    /// Not one MessagePack value (format `MsgPack`): the decoder's message.
    #[error("not MessagePack: {0}")]
    NotMsgPack(String),
    /// Not one CBOR value (format `Cbor`): the decoder's message.
    #[error("not CBOR: {0}")]
    NotCbor(String),
    /// A payload (`Number`) or CSV field that is neither a finite number nor a gap (`nan`, `inf`,
    /// `null`): the text, quoted.
    #[error("not a number: {0}")]
    NotNumber(String),
    /// Format `Auto` recognised nothing: the start of the payload, quoted or in hex.
    #[error("not JSON, a number, CSV, MessagePack or CBOR: {0}")]
    Unrecognized(String),
    /// The payload decoded but holds no numeric leaf and no gap (strings, byte strings,
    /// extension values and the time field aside).
    #[error("no numeric field")]
    NoNumeric,
    /// The time field (named) is neither a number nor a date-time (a boolean, null, string,
    /// map, array).
    #[error("time field '{0}' is not a number or a date")]
    TimeNotReadable(String),
    /// The time field (named) is a number or date outside the i64 nanosecond range (about
    /// 292 years either side of its origin: years 1677 to 2262 for Unix times).
    #[error("time field '{0}' is out of the nanosecond range")]
    TimeOutOfRange(String),
    /// The time field (`field`) holds a time of one [`TimeBase`] (`found`) in a source whose
    /// first timed message fixed the other (`base`): e.g. a Unix time among relative seconds.
    #[error(
        "time field '{field}' holds {found}, but this source's times are {base}, set by its first timed message"
    )]
    TimeBaseMixed {
        /// The time field's path.
        field: String,
        /// What this message's value reads as.
        found: TimeBase,
        /// What the source's first timed message fixed.
        base: TimeBase,
    },
    /// The message has no time field (named) although the source's times are relative seconds:
    /// its arrival time (wall clock) cannot be placed among them.
    #[error(
        "no time field '{0}': this source's times are relative seconds, which an arrival time cannot join"
    )]
    TimeMissing(String),
}

/// A decoder that reuses its buffers across messages.
///
/// Naming (JSON, MessagePack, CBOR): every numeric leaf (integer, float; a boolean as 0 or 1; a
/// string that reads whole, surrounding whitespace aside, as a finite number) becomes a sample
/// named by its path joined with `/` and prefixed by the topic: topic `sensors/a`, payload
/// `{"temp": 21.5, "imu": {"x": 1, "y": [2, 3]}}` gives `sensors/a/temp`, `sensors/a/imu/x`,
/// `sensors/a/imu/y/0`, `sensors/a/imu/y/1`, in document order (repeated keys repeat the name).
/// With an empty topic there is no leading `/` (`temp`). A number at the top level is named by
/// the topic, or `value` when the topic is empty. Other strings, nulls, byte strings and
/// MessagePack extension values are skipped. Integer keys (MessagePack, CBOR) name by their
/// digits, boolean and float keys by their text; entries with other keys are skipped.
/// Nulls (JSON `null`, MessagePack nil, CBOR null), non-finite floats (MessagePack, CBOR) and the
/// bare JSON tokens `NaN`, `Infinity`, `-Infinity` are samples of value NaN: gaps (see the module
/// docs).
pub struct Decoder {
    format: PayloadFormat,
    sink: Sink,
    csv: CsvSplit,
    /// Scratch of the second JSON reading (non-finite tokens as `null`).
    retry: JsonRetry,
    /// What the time fields count from, fixed by the first message with one.
    base: Option<TimeBase>,
}

impl Decoder {
    /// A decoder for payloads described by `opts`.
    pub fn new(opts: PayloadOptions) -> Decoder {
        Decoder {
            format: opts.format,
            sink: Sink {
                time_field: opts.time_field,
                samples: Vec::new(),
                len: 0,
                skipped: 0,
                path: String::new(),
                rel_start: 0,
                depth: 0,
                time: None,
                fatal: None,
                num: String::new(),
            },
            csv: CsvSplit {
                readers: [None, None, None],
                out: Vec::new(),
                ends: Vec::new(),
            },
            retry: JsonRetry::default(),
            base: None,
        }
    }

    /// Decodes `payload` received on `topic` (may be empty, e.g. UDP: then names have no topic
    /// prefix; see [`Decoder`] for the names).
    ///
    /// On success the samples are in [`Decoder::samples`] as (name, value) and the time, if the
    /// options name a time field, is returned as integer nanoseconds: a number is read by its
    /// magnitude ([`TimeUnit::from_magnitude`](super::TimeUnit::from_magnitude): Unix seconds, milliseconds, microseconds or
    /// nanoseconds) or, below 1e8, as seconds since an origin of the publisher's own
    /// ([`TimeBase::Relative`]); decimals are converted exactly (a float through its shortest
    /// decimal form), rounded to the nanosecond. A string is read as such a number, or as an
    /// RFC 3339 date-time (`2023-11-14T22:13:20.5+01:00`), or as `YYYY-MM-DDTHH:MM:SS[.f]` /
    /// `YYYY-MM-DD HH:MM:SS[.f]` taken as UTC. The time field is not a sample; when it occurs
    /// more than once the first wins (CSV: the first line's). The first message with a time
    /// field fixes the decoder's [`TimeBase`] ([`Decoder::time_base`]). `Ok(None)` when no time
    /// field is set or the message has none (the caller then takes the arrival time), unless the
    /// base is [`TimeBase::Relative`].
    ///
    /// # Errors
    ///
    /// [`PayloadError`]: too large, not in the format, no numeric leaf, a time field that is
    /// there but unreadable, a time of the other [`TimeBase`] than the first timed message's
    /// ([`PayloadError::TimeBaseMixed`]), no time field where the base is relative
    /// ([`PayloadError::TimeMissing`]). After an error [`Decoder::samples`] is empty and the
    /// base is as before.
    pub fn decode(&mut self, topic: &str, payload: &[u8]) -> Result<Option<i64>, PayloadError> {
        self.sink.start(topic);
        let result = self.decode_inner(payload).and_then(|()| {
            if self.sink.len == 0 && self.sink.skipped == 0 {
                Err(PayloadError::NoNumeric)
            } else {
                self.settle_time()
            }
        });
        if result.is_err() {
            self.sink.len = 0;
            self.sink.skipped = 0;
        }
        result
    }

    /// What the time fields of the messages decoded so far count from: fixed by the first
    /// message that had one; `None` before that (and always without a time field).
    pub fn time_base(&self) -> Option<TimeBase> {
        self.base
    }

    /// The message's time checked against the decoder's [`TimeBase`] (fixed here by the first
    /// timed message).
    fn settle_time(&mut self) -> Result<Option<i64>, PayloadError> {
        let field = || one_line(self.sink.time_field.as_deref().unwrap_or_default());
        match (self.sink.time, self.base) {
            (Some((t, found)), None) => {
                self.base = Some(found);
                Ok(Some(t))
            }
            (Some((t, found)), Some(base)) if found == base => Ok(Some(t)),
            (Some((_, found)), Some(base)) => Err(PayloadError::TimeBaseMixed {
                field: field(),
                found,
                base,
            }),
            (None, Some(TimeBase::Relative)) => Err(PayloadError::TimeMissing(field())),
            (None, _) => Ok(None),
        }
    }

    /// The samples of the last message, (name, value), in payload order; at most
    /// [`MAX_LEAVES`].
    pub fn samples(&self) -> &[(String, f64)] {
        &self.sink.samples[..self.sink.len]
    }

    /// Numeric leaves of the last message beyond [`MAX_LEAVES`], dropped.
    pub fn skipped(&self) -> usize {
        self.sink.skipped
    }

    fn decode_inner(&mut self, payload: &[u8]) -> Result<(), PayloadError> {
        if payload.len() > MAX_PAYLOAD_BYTES {
            return Err(PayloadError::TooLarge { len: payload.len() });
        }
        match self.format {
            PayloadFormat::Json => json(&mut self.sink, payload, &mut self.retry),
            PayloadFormat::Number => number_payload(&mut self.sink, payload),
            PayloadFormat::Csv => self.csv_payload(payload),
            PayloadFormat::MsgPack => msgpack(&mut self.sink, payload),
            PayloadFormat::Cbor => walk_cbor(&mut self.sink, &cbor_value(payload)?),
            PayloadFormat::Auto => self.auto(payload),
        }
    }

    /// Format `Auto` (see [`PayloadFormat::Auto`]).
    fn auto(&mut self, payload: &[u8]) -> Result<(), PayloadError> {
        let first = payload.iter().find(|b| !b.is_ascii_whitespace());
        if matches!(first, Some(b'{' | b'[')) {
            return json(&mut self.sink, payload, &mut self.retry);
        }
        if first == Some(&b'"') {
            // A JSON string holding a number (`"3.5"`); anything else that starts with a quote
            // (`"x=1"`, a quoted CSV field) reads as below.
            if json(&mut self.sink, payload, &mut self.retry).is_ok() && self.sink.len > 0 {
                return Ok(());
            }
            self.sink.rewind();
        }
        if let Ok(text) = std::str::from_utf8(payload) {
            if let Some(v) = number_or_gap(text) {
                self.sink.emit(v);
                return Ok(());
            }
            if text
                .bytes()
                .any(|b| matches!(b, b',' | b';' | b'=' | b':' | b'\t' | b'\n'))
            {
                return self.csv_payload(payload);
            }
        }
        // Binary: the first of MessagePack and CBOR that reads a map or an array.
        let mut msgpack_error = None;
        if matches!(payload.first(), Some(0x80..=0x9f | 0xdc..=0xdf)) {
            match msgpack(&mut self.sink, payload) {
                Ok(()) => return Ok(()),
                Err(e) => msgpack_error = Some(e),
            }
            self.sink.rewind();
        }
        if let Ok(value) = cbor_value(payload)
            && matches!(
                untag(&value),
                ciborium::Value::Array(_) | ciborium::Value::Map(_)
            )
        {
            return walk_cbor(&mut self.sink, &value);
        }
        match msgpack_error {
            Some(e @ (PayloadError::TimeNotReadable(_) | PayloadError::TimeOutOfRange(_))) => {
                Err(e)
            }
            _ => Err(PayloadError::Unrecognized(snippet(payload))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    pub(super) fn decoder(format: PayloadFormat, time_field: Option<&str>) -> Decoder {
        Decoder::new(PayloadOptions {
            format,
            time_field: time_field.map(str::to_owned),
        })
    }

    /// Samples as (name, value) with owned names, for comparisons.
    pub(super) fn owned(d: &Decoder) -> Vec<(String, f64)> {
        d.samples().to_vec()
    }

    pub(super) fn named(pairs: &[(&str, f64)]) -> Vec<(String, f64)> {
        pairs.iter().map(|&(n, v)| (n.to_owned(), v)).collect()
    }

    /// Samples as (name, value) with gaps (NaN) as `None`, for comparisons.
    pub(super) fn gaps(d: &Decoder) -> Vec<(String, Option<f64>)> {
        d.samples()
            .iter()
            .map(|(n, v)| (n.clone(), (!v.is_nan()).then_some(*v)))
            .collect()
    }

    pub(super) fn with_gaps(pairs: &[(&str, Option<f64>)]) -> Vec<(String, Option<f64>)> {
        pairs.iter().map(|&(n, v)| (n.to_owned(), v)).collect()
    }

    pub(super) fn decode_ok(d: &mut Decoder, topic: &str, payload: &[u8]) -> Option<i64> {
        match d.decode(topic, payload) {
            Ok(t) => t,
            Err(e) => panic!("{:?} failed: {e}", String::from_utf8_lossy(payload)),
        }
    }

    fn nested_example() -> serde_json::Value {
        json!({"temp": 21.5, "imu": {"x": 1, "y": [2, 3]}})
    }

    fn nested_expected(prefix: &str) -> Vec<(String, f64)> {
        ["temp", "imu/x", "imu/y/0", "imu/y/1"]
            .iter()
            .zip([21.5, 1.0, 2.0, 3.0])
            .map(|(n, v)| (format!("{prefix}{n}"), v))
            .collect()
    }

    #[test]
    fn nested_json_is_named_by_paths_under_the_topic() {
        let mut d = decoder(PayloadFormat::Json, None);
        let payload = br#"{"temp": 21.5, "imu": {"x": 1, "y": [2, 3]}}"#;
        assert_eq!(decode_ok(&mut d, "sensors/a", payload), None);
        assert_eq!(owned(&d), nested_expected("sensors/a/"));
        assert_eq!(d.skipped(), 0);
        // Empty topic: no leading slash.
        decode_ok(&mut d, "", payload);
        assert_eq!(owned(&d), nested_expected(""));
    }

    #[test]
    fn booleans_are_zero_and_one_strings_are_skipped_and_nulls_are_gaps() {
        let mut d = decoder(PayloadFormat::Json, None);
        decode_ok(
            &mut d,
            "t",
            br#"{"on": true, "off": false, "name": "pump", "x": null}"#,
        );
        assert_eq!(
            gaps(&d),
            with_gaps(&[("t/on", Some(1.0)), ("t/off", Some(0.0)), ("t/x", None)])
        );
        decode_ok(&mut d, "", br#"{"b": [1, null], "n": {"m": null}}"#);
        assert_eq!(
            gaps(&d),
            with_gaps(&[("b/0", Some(1.0)), ("b/1", None), ("n/m", None)])
        );
        // A top-level null is a gap of the topic's series.
        decode_ok(&mut d, "room", b"null");
        assert_eq!(gaps(&d), with_gaps(&[("room", None)]));
    }

    #[test]
    fn msgpack_and_cbor_nils_and_non_finite_floats_are_gaps() {
        // [nil, NaN, inf, 2.0] as MessagePack (rmp_serde writes `None` as nil) and as CBOR.
        let packed = rmp_serde::to_vec(&(None::<f64>, f64::NAN, f64::INFINITY, 2.0)).unwrap();
        let mut cbor = Vec::new();
        use ciborium::Value;
        let value = Value::Array(vec![
            Value::Null,
            Value::Float(f64::NAN),
            Value::Float(f64::NEG_INFINITY),
            Value::Float(2.0),
        ]);
        ciborium::ser::into_writer(&value, &mut cbor).unwrap();
        let want = with_gaps(&[
            ("m/0", None),
            ("m/1", None),
            ("m/2", None),
            ("m/3", Some(2.0)),
        ]);
        for (format, payload) in [
            (PayloadFormat::MsgPack, &packed),
            (PayloadFormat::Cbor, &cbor),
            (PayloadFormat::Auto, &packed),
            (PayloadFormat::Auto, &cbor),
        ] {
            let mut d = decoder(format, None);
            decode_ok(&mut d, "m", payload);
            assert_eq!(gaps(&d), want, "{format:?}");
        }
        // A nil time field is still unreadable.
        let packed = rmp_serde::to_vec_named(&json!({"ts": null, "v": 1})).unwrap();
        let e = decoder(PayloadFormat::MsgPack, Some("ts"))
            .decode("", &packed)
            .unwrap_err();
        assert_eq!(e, PayloadError::TimeNotReadable("ts".into()));
    }

    #[test]
    fn number_and_csv_gap_spellings() {
        let mut d = decoder(PayloadFormat::Number, None);
        for payload in [&b"nan"[..], b" NaN\n", b"null", b"inf", b"-Infinity"] {
            decode_ok(&mut d, "n", payload);
            assert_eq!(gaps(&d), with_gaps(&[("n", None)]));
        }
        // Digits beyond the f64 range are not a gap but an error.
        assert!(d.decode("n", b"1e400").is_err());
        let mut d = decoder(PayloadFormat::Csv, None);
        decode_ok(&mut d, "c", b"a=1,b=nan,c=NULL,d=");
        assert_eq!(
            gaps(&d),
            with_gaps(&[("c/a", Some(1.0)), ("c/b", None), ("c/c", None)])
        );
        decode_ok(&mut d, "", b"1,nan,3");
        assert_eq!(
            gaps(&d),
            with_gaps(&[("0", Some(1.0)), ("1", None), ("2", Some(3.0))])
        );
        let mut d = decoder(PayloadFormat::Auto, None);
        decode_ok(&mut d, "a", b"nan");
        assert_eq!(gaps(&d), with_gaps(&[("a", None)]));
    }

    #[test]
    fn a_json_string_holding_a_number_is_that_number() {
        for format in [
            PayloadFormat::Auto,
            PayloadFormat::Json,
            PayloadFormat::Number,
        ] {
            let mut d = decoder(format, None);
            decode_ok(&mut d, "room/temp", br#""3.5""#);
            assert_eq!(owned(&d), named(&[("room/temp", 3.5)]), "{format:?}");
            decode_ok(&mut d, "", b" \"-2e1\" \n");
            assert_eq!(owned(&d), named(&[("value", -20.0)]), "{format:?}");
        }
        // Auto: a quoted string that is no number reads as before (`"x=1"`: a CSV pair).
        let mut d = decoder(PayloadFormat::Auto, None);
        decode_ok(&mut d, "t", br#""x=1""#);
        assert_eq!(owned(&d), named(&[("t/x", 1.0)]));
        let e = d.decode("t", br#""abc""#).unwrap_err();
        assert_eq!(
            e.to_string(),
            r#"not JSON, a number, CSV, MessagePack or CBOR: '"abc"'"#
        );
        let e = decoder(PayloadFormat::Number, None)
            .decode("t", br#""abc""#)
            .unwrap_err();
        assert_eq!(e.to_string(), r#"not a number: '"abc"'"#);
    }

    #[test]
    fn the_first_timed_message_fixes_relative_or_unix_times() {
        let mut d = decoder(PayloadFormat::Json, Some("t"));
        assert_eq!(d.time_base(), None);
        // No time field yet: arrival time, nothing fixed.
        assert_eq!(decode_ok(&mut d, "", br#"{"v": 0}"#), None);
        assert_eq!(d.time_base(), None);
        // An unreadable message fixes nothing either.
        assert!(d.decode("", br#"{"t": 12.5, "v": }"#).is_err());
        assert_eq!(d.time_base(), None);
        // 12.5 s since the publisher started: 12_500_000_000 ns, relative.
        assert_eq!(
            decode_ok(&mut d, "", br#"{"t": 12.5, "v": 1}"#),
            Some(12_500_000_000)
        );
        assert_eq!(d.time_base(), Some(TimeBase::Relative));
        assert_eq!(
            decode_ok(&mut d, "", br#"{"t": "13", "v": 2}"#),
            Some(13_000_000_000)
        );
        assert_eq!(
            decode_ok(&mut d, "", br#"{"t": -1, "v": 2}"#),
            Some(-1_000_000_000)
        );
        // Unix times (a number of 1e8 or more, a date) are refused among relative ones.
        for payload in [
            &br#"{"t": 1700000000, "v": 3}"#[..],
            br#"{"t": "2023-11-14T22:13:20Z", "v": 3}"#,
        ] {
            let e = d.decode("", payload).unwrap_err();
            assert_eq!(
                e,
                PayloadError::TimeBaseMixed {
                    field: "t".into(),
                    found: TimeBase::Unix,
                    base: TimeBase::Relative
                }
            );
            assert!(d.samples().is_empty());
        }
        assert_eq!(
            d.decode("", br#"{"t": 1700000000, "v": 3}"#)
                .unwrap_err()
                .to_string(),
            "time field 't' holds wall-clock (Unix) times, but this source's times are relative \
             seconds (numbers below 1e8), set by its first timed message"
        );
        // No time field: an arrival time cannot join relative seconds.
        let e = d.decode("", br#"{"v": 4}"#).unwrap_err();
        assert_eq!(e, PayloadError::TimeMissing("t".into()));
        assert_eq!(
            e.to_string(),
            "no time field 't': this source's times are relative seconds, which an arrival time \
             cannot join"
        );
        assert_eq!(d.time_base(), Some(TimeBase::Relative));

        // The other way round: Unix first, then a relative time is refused; a message without
        // the field still takes its arrival time.
        let mut d = decoder(PayloadFormat::Json, Some("t"));
        assert_eq!(
            decode_ok(&mut d, "", br#"{"t": 1700000000, "v": 1}"#),
            Some(1_700_000_000_000_000_000)
        );
        assert_eq!(d.time_base(), Some(TimeBase::Unix));
        let e = d.decode("", br#"{"t": 5, "v": 1}"#).unwrap_err();
        assert_eq!(
            e,
            PayloadError::TimeBaseMixed {
                field: "t".into(),
                found: TimeBase::Relative,
                base: TimeBase::Unix
            }
        );
        assert_eq!(decode_ok(&mut d, "", br#"{"v": 2}"#), None);
        // CSV and MessagePack follow the same rule.
        let mut d = decoder(PayloadFormat::Csv, Some("t"));
        assert_eq!(decode_ok(&mut d, "", b"t=0.25,v=1"), Some(250_000_000));
        assert!(d.decode("", b"t=1700000000,v=1").is_err());
        let mut d = decoder(PayloadFormat::MsgPack, Some("t"));
        let packed = rmp_serde::to_vec_named(&json!({"t": 3, "v": 1})).unwrap();
        assert_eq!(decode_ok(&mut d, "", &packed), Some(3_000_000_000));
        assert_eq!(d.time_base(), Some(TimeBase::Relative));
    }

    #[test]
    fn numeric_strings_count_as_numbers() {
        let mut d = decoder(PayloadFormat::Json, None);
        let payload =
            br#"{"a": "2.5", "b": " 7 ", "c": "abc", "d": "nan", "e": "1e3", "f": "12abc"}"#;
        decode_ok(&mut d, "", payload);
        assert_eq!(owned(&d), named(&[("a", 2.5), ("b", 7.0), ("e", 1000.0)]));
    }

    #[test]
    fn arrays_are_named_by_index() {
        let mut d = decoder(PayloadFormat::Json, None);
        decode_ok(&mut d, "t", b"[1, [2, 3], {\"k\": -4}]");
        assert_eq!(
            owned(&d),
            named(&[
                ("t/0", 1.0),
                ("t/1/0", 2.0),
                ("t/1/1", 3.0),
                ("t/2/k", -4.0)
            ])
        );
    }

    #[test]
    fn a_top_level_number_is_named_by_the_topic_or_value() {
        let mut d = decoder(PayloadFormat::Json, None);
        decode_ok(&mut d, "room/temp", b" 3.5 ");
        assert_eq!(owned(&d), named(&[("room/temp", 3.5)]));
        decode_ok(&mut d, "", b"-2");
        assert_eq!(owned(&d), named(&[("value", -2.0)]));
    }

    #[test]
    fn time_in_epoch_milliseconds() {
        let mut d = decoder(PayloadFormat::Json, Some("ts"));
        let t = decode_ok(&mut d, "t", br#"{"ts": 1700000000123, "v": 1}"#);
        // 1 ms = 1_000_000 ns.
        assert_eq!(t, Some(1_700_000_000_123 * 1_000_000));
        assert_eq!(owned(&d), named(&[("t/v", 1.0)]));
    }

    #[test]
    fn time_in_epoch_seconds_with_a_fraction() {
        let mut d = decoder(PayloadFormat::Json, Some("ts"));
        let t = decode_ok(&mut d, "", br#"{"v": 2, "ts": 1700000000.5}"#);
        assert_eq!(t, Some(1_700_000_000 * 1_000_000_000 + 500_000_000));
        // 0.001 s has no exact binary form; the shortest decimal is read exactly.
        let t = decode_ok(&mut d, "", br#"{"v": 2, "ts": 1700000000.001}"#);
        assert_eq!(t, Some(1_700_000_000 * 1_000_000_000 + 1_000_000));
        assert_eq!(owned(&d), named(&[("v", 2.0)]));
    }

    #[test]
    fn time_at_a_nested_path_and_small_numbers_are_seconds() {
        let mut d = decoder(PayloadFormat::Json, Some("header/stamp"));
        let payload = br#"{"header": {"stamp": 12.25, "seq": 3}, "x": 1}"#;
        assert_eq!(decode_ok(&mut d, "t", payload), Some(12_250_000_000));
        assert_eq!(owned(&d), named(&[("t/header/seq", 3.0), ("t/x", 1.0)]));
        // As a string too, and epoch nanoseconds as an integer (a fresh decoder: the first
        // one's times are relative now).
        let mut d = decoder(PayloadFormat::Json, Some("header/stamp"));
        let payload = br#"{"header": {"stamp": "1700000000000000001"}, "x": 1}"#;
        assert_eq!(
            decode_ok(&mut d, "t", payload),
            Some(1_700_000_000_000_000_001)
        );
    }

    #[test]
    fn time_as_rfc3339_with_an_offset_and_as_naive_utc() {
        let mut d = decoder(PayloadFormat::Json, Some("ts"));
        let payload = br#"{"ts": "2023-11-14T22:13:20.5+01:00", "v": 1}"#;
        // 1_700_000_000 s is 2023-11-14T22:13:20Z; +01:00 is 3600 s earlier, plus 0.5 s.
        let expected = (1_700_000_000 - 3600) * 1_000_000_000 + 500_000_000;
        assert_eq!(decode_ok(&mut d, "", payload), Some(expected));
        let payload = br#"{"ts": "2023-11-14 22:13:20", "v": 1}"#;
        assert_eq!(
            decode_ok(&mut d, "", payload),
            Some(1_700_000_000_000_000_000)
        );
        let payload = br#"{"ts": "2023-11-14T22:13:20.25", "v": 1}"#;
        assert_eq!(
            decode_ok(&mut d, "", payload),
            Some(1_700_000_000_250_000_000)
        );
    }

    #[test]
    fn time_field_missing_is_arrival_time_unreadable_is_an_error() {
        let mut d = decoder(PayloadFormat::Json, Some("ts"));
        assert_eq!(d.decode("t", br#"{"v": 1}"#), Ok(None));
        assert_eq!(d.samples(), [("t/v".to_string(), 1.0)]);
        for payload in [
            &br#"{"ts": "soon", "v": 1}"#[..],
            br#"{"ts": true, "v": 1}"#,
            br#"{"ts": null, "v": 1}"#,
            br#"{"ts": {"s": 1}, "v": 1}"#,
        ] {
            let e = d.decode("t", payload).unwrap_err();
            assert_eq!(e.to_string(), "time field 'ts' is not a number or a date");
        }
        // 1e30 reads as nanoseconds: far beyond i64; a date in 2300 too.
        for payload in [
            &br#"{"ts": 1e30, "v": 1}"#[..],
            br#"{"ts": "2300-01-01T00:00:00Z", "v": 1}"#,
        ] {
            let e = d.decode("t", payload).unwrap_err();
            assert_eq!(e, PayloadError::TimeOutOfRange("ts".into()));
        }
    }

    #[test]
    fn msgpack_and_cbor_decode_to_the_same_samples_as_json() {
        // `json!` keeps its keys sorted (serde_json without `preserve_order`), so every encoding
        // of it lists `imu` before `temp`.
        let value = nested_example();
        let expected: Vec<(String, f64)> = named(&[
            ("sensors/a/imu/x", 1.0),
            ("sensors/a/imu/y/0", 2.0),
            ("sensors/a/imu/y/1", 3.0),
            ("sensors/a/temp", 21.5),
        ]);
        let text = serde_json::to_vec(&value).unwrap();
        let packed = rmp_serde::to_vec(&value).unwrap();
        let mut cbor = Vec::new();
        ciborium::ser::into_writer(&value, &mut cbor).unwrap();
        for (format, payload) in [
            (PayloadFormat::Json, &text),
            (PayloadFormat::MsgPack, &packed),
            (PayloadFormat::Cbor, &cbor),
            (PayloadFormat::Auto, &packed),
            (PayloadFormat::Auto, &cbor),
        ] {
            let mut d = decoder(format, None);
            decode_ok(&mut d, "sensors/a", payload);
            assert_eq!(owned(&d), expected, "{format:?}");
        }
    }

    #[test]
    fn msgpack_and_cbor_time_fields() {
        let value = json!({"ts": 1700000000123u64, "v": 2.5, "s": "3"});
        let packed = rmp_serde::to_vec(&value).unwrap();
        let mut cbor = Vec::new();
        ciborium::ser::into_writer(&value, &mut cbor).unwrap();
        for (format, payload) in [
            (PayloadFormat::MsgPack, &packed),
            (PayloadFormat::Cbor, &cbor),
        ] {
            let mut d = decoder(format, Some("ts"));
            assert_eq!(
                decode_ok(&mut d, "", payload),
                Some(1_700_000_000_123_000_000)
            );
            assert_eq!(owned(&d), named(&[("s", 3.0), ("v", 2.5)]));
        }
    }

    #[test]
    fn trailing_bytes_are_refused() {
        let mut packed = rmp_serde::to_vec(&json!({"a": 1})).unwrap();
        packed.push(0x01);
        let e = decoder(PayloadFormat::MsgPack, None)
            .decode("", &packed)
            .unwrap_err();
        assert_eq!(e, PayloadError::NotMsgPack(TRAILING.into()));
        let mut cbor = Vec::new();
        ciborium::ser::into_writer(&json!({"a": 1}), &mut cbor).unwrap();
        cbor.push(0x01);
        let e = decoder(PayloadFormat::Cbor, None)
            .decode("", &cbor)
            .unwrap_err();
        assert_eq!(e, PayloadError::NotCbor(TRAILING.into()));
        assert!(
            decoder(PayloadFormat::Json, None)
                .decode("", b"{\"a\":1} x")
                .is_err()
        );
    }

    #[test]
    fn auto_picks_each_format() {
        let mut d = decoder(PayloadFormat::Auto, None);
        decode_ok(&mut d, "t", b"  {\"a\": 1}");
        assert_eq!(owned(&d), named(&[("t/a", 1.0)]));
        decode_ok(&mut d, "t", b"[4, 5]");
        assert_eq!(owned(&d), named(&[("t/0", 4.0), ("t/1", 5.0)]));
        decode_ok(&mut d, "t", b"12.5\n");
        assert_eq!(owned(&d), named(&[("t", 12.5)]));
        decode_ok(&mut d, "t", b"1,2");
        assert_eq!(owned(&d), named(&[("t/0", 1.0), ("t/1", 2.0)]));
        decode_ok(&mut d, "t", b"temp=3");
        assert_eq!(owned(&d), named(&[("t/temp", 3.0)]));
        // A CBOR array whose first byte MessagePack would read as a map ([1, 2]: 0x82 0x01 0x02).
        decode_ok(&mut d, "t", &[0x82, 0x01, 0x02]);
        assert_eq!(owned(&d), named(&[("t/0", 1.0), ("t/1", 2.0)]));
    }

    #[test]
    fn error_texts() {
        let e = decoder(PayloadFormat::Json, None)
            .decode("t", b"hello")
            .unwrap_err();
        assert_eq!(e.to_string(), "not JSON: expected value at line 1 column 1");
        let mut d = decoder(PayloadFormat::Auto, None);
        let e = d.decode("t", b"hello").unwrap_err();
        assert_eq!(
            e.to_string(),
            "not JSON, a number, CSV, MessagePack or CBOR: 'hello'"
        );
        let e = d.decode("t", &[0xff, 0xfe, 0x00]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "not JSON, a number, CSV, MessagePack or CBOR: <ff fe 00>"
        );
        // Cut to 40 characters, one line.
        let long = format!("x\ny{}", "z".repeat(100));
        let e = decoder(PayloadFormat::Number, None)
            .decode("", long.as_bytes())
            .unwrap_err();
        // `x`, `\`, `n`, `y` and 36 `z`.
        let quoted = format!("'x\\ny{}'…", "z".repeat(36));
        assert_eq!(e.to_string(), format!("not a number: {quoted}"));
        assert_eq!(
            PayloadFormat::parse("xml").unwrap_err(),
            "'xml' is not a payload format (auto, json, number, csv, msgpack, cbor)"
        );
    }

    #[test]
    fn format_names_round_trip() {
        for f in PayloadFormat::ALL {
            assert_eq!(PayloadFormat::parse(f.name()), Ok(f));
        }
        assert_eq!(
            PayloadFormat::parse(" MsgPack "),
            Ok(PayloadFormat::MsgPack)
        );
        assert_eq!(PayloadFormat::default(), PayloadFormat::Auto);
    }

    #[test]
    fn too_large_is_refused_before_parsing() {
        let payload = vec![b'1'; MAX_PAYLOAD_BYTES + 1];
        let e = decoder(PayloadFormat::Number, None)
            .decode("", &payload)
            .unwrap_err();
        assert_eq!(e, PayloadError::TooLarge { len: 1_048_577 });
        assert_eq!(
            e.to_string(),
            "1048577 bytes, more than the 1048576-byte cap"
        );
    }

    #[test]
    fn no_numeric_field() {
        for format in [PayloadFormat::Json, PayloadFormat::Auto] {
            let e = decoder(format, None).decode("t", br#"{"a": "x", "c": [], "d": {}}"#);
            assert_eq!(e, Err(PayloadError::NoNumeric));
            // Only nulls: gaps, not an error (the ingest decides whether a series takes them).
            let mut d = decoder(format, None);
            decode_ok(&mut d, "t", br#"{"a": "x", "b": null}"#);
            assert_eq!(gaps(&d), with_gaps(&[("t/b", None)]));
        }
        assert_eq!(PayloadError::NoNumeric.to_string(), "no numeric field");
    }

    #[test]
    fn leaves_beyond_the_cap_are_counted() {
        let values: Vec<u32> = (0..5000).collect();
        let payload = serde_json::to_vec(&values).unwrap();
        let mut d = decoder(PayloadFormat::Json, None);
        decode_ok(&mut d, "", &payload);
        assert_eq!(d.samples().len(), 4096);
        assert_eq!(d.skipped(), 5000 - 4096);
        assert_eq!(d.samples()[4095], ("4095".to_owned(), 4095.0));
        // The next message reuses the slots and shows only its own samples.
        decode_ok(&mut d, "", b"[9]");
        assert_eq!(owned(&d), named(&[("0", 9.0)]));
        assert_eq!(d.skipped(), 0);
    }

    #[test]
    fn deep_nesting_is_refused_without_crashing() {
        let n = 100_000;
        let mut json = vec![b'['; n];
        json.push(b'1');
        json.extend(std::iter::repeat_n(b']', n));
        // MessagePack: fixarray of one (0x91); CBOR: array of one (0x81); innermost 1.
        let mut packed = vec![0x91; n];
        packed.push(0x01);
        let mut cbor = vec![0x81; n];
        cbor.push(0x01);
        for (format, payload) in [
            (PayloadFormat::Json, &json),
            (PayloadFormat::MsgPack, &packed),
            (PayloadFormat::Cbor, &cbor),
            (PayloadFormat::Auto, &json),
            (PayloadFormat::Auto, &packed),
            (PayloadFormat::Auto, &cbor),
        ] {
            assert!(
                decoder(format, None).decode("", payload).is_err(),
                "{format:?}"
            );
        }
        // Moderate nesting still reads.
        let depth = 100;
        let mut packed = vec![0x91; depth];
        packed.push(0x05);
        let mut d = decoder(PayloadFormat::MsgPack, None);
        decode_ok(&mut d, "", &packed);
        assert_eq!(owned(&d), named(&[(&vec!["0"; depth].join("/"), 5.0)]));
    }
}
