//! The sink a payload's leaves are decoded into ([`Sink`]): the sample names built from paths,
//! the time field found, the leaf kinds read as samples or gaps; and the number and snippet
//! helpers every format shares. The format readers (one file each) only walk their encoding
//! and hand each leaf to the sink, so the naming, time and gap rules live here once.

use std::fmt::{Display, Write as _};

use chrono::{DateTime, NaiveDateTime};

use super::{MAX_LEAVES, PayloadError, SNIPPET_CHARS, TimeBase};
use crate::source::{TimeUnit, parse_time_ns};
use vizdeck_base::text::one_line;

/// Where the samples of one message go: the names being built, the time found, the error that
/// stopped a serde walk.
pub(super) struct Sink {
    pub(super) time_field: Option<String>,
    /// Sample slots; the first `len` are this message's (the names' allocations are reused).
    pub(super) samples: Vec<(String, f64)>,
    pub(super) len: usize,
    pub(super) skipped: usize,
    /// Topic, then the path of the current node.
    pub(super) path: String,
    /// Where the path below the topic starts in `path`.
    pub(super) rel_start: usize,
    /// Maps and arrays entered (1 while reading CSV fields).
    pub(super) depth: usize,
    /// The message's time, ns, and what it counts from.
    pub(super) time: Option<(i64, TimeBase)>,
    /// An error found by a serde walk, which serde carries out only as a message.
    pub(super) fatal: Option<PayloadError>,
    /// Scratch for a float's decimal form.
    pub(super) num: String,
}

impl Sink {
    /// Ready for a message on `topic`.
    pub(super) fn start(&mut self, topic: &str) {
        self.path.clear();
        self.path.push_str(topic);
        self.rel_start = if topic.is_empty() { 0 } else { topic.len() + 1 };
        self.rewind();
    }

    /// Forgets what a failed attempt left (the topic stays).
    pub(super) fn rewind(&mut self) {
        self.path.truncate(self.rel_start.saturating_sub(1));
        self.len = 0;
        self.skipped = 0;
        self.depth = 0;
        self.time = None;
        self.fatal = None;
    }

    /// Appends the separator before a key (none before the first key under an empty topic).
    pub(super) fn sep(&mut self) {
        if self.depth > 1 || self.rel_start > 0 {
            self.path.push('/');
        }
    }

    pub(super) fn push_key(&mut self, key: &str) {
        self.sep();
        self.path.push_str(key);
    }

    pub(super) fn push_display(&mut self, key: impl Display) {
        self.sep();
        let _ = write!(self.path, "{key}");
    }

    /// Whether the current node is the time field.
    pub(super) fn at_time(&self) -> bool {
        self.depth > 0
            && self
                .time_field
                .as_deref()
                .is_some_and(|f| self.path.get(self.rel_start..) == Some(f))
    }

    pub(super) fn time_error(&self, make: fn(String) -> PayloadError) -> PayloadError {
        make(one_line(self.time_field.as_deref().unwrap_or_default()))
    }

    pub(super) fn set_time(&mut self, t: (i64, TimeBase)) {
        self.time.get_or_insert(t);
    }

    /// Appends a sample named by the current path (or counts it past [`MAX_LEAVES`]).
    pub(super) fn emit(&mut self, v: f64) {
        if self.len == MAX_LEAVES {
            self.skipped += 1;
            return;
        }
        let name = if self.depth == 0 && self.path.is_empty() {
            "value"
        } else {
            self.path.as_str()
        };
        match self.samples.get_mut(self.len) {
            Some(slot) => {
                slot.0.clear();
                slot.0.push_str(name);
                slot.1 = v;
            }
            None => self.samples.push((name.to_owned(), v)),
        }
        self.len += 1;
    }

    /// A float leaf: a sample (NaN, a gap, when not finite), or the time.
    pub(super) fn float(&mut self, v: f64) -> Result<(), PayloadError> {
        if !self.at_time() {
            self.emit(if v.is_finite() { v } else { f64::NAN });
            return Ok(());
        }
        if !v.is_finite() {
            return Err(self.time_error(PayloadError::TimeNotReadable));
        }
        // The shortest decimal that reads back as `v`, scaled exactly.
        self.num.clear();
        let _ = write!(self.num, "{v:e}");
        let (unit, base) = unit_of(v);
        let t = parse_time_ns(&self.num, unit)
            .ok_or_else(|| self.time_error(PayloadError::TimeOutOfRange))?;
        self.set_time((t, base));
        Ok(())
    }

    pub(super) fn int(&mut self, v: i128) -> Result<(), PayloadError> {
        if !self.at_time() {
            self.emit(v as f64);
            return Ok(());
        }
        let (unit, base) = unit_of(v as f64);
        let t = v
            .checked_mul(10i128.pow(unit.ns_exponent()))
            .and_then(|ns| i64::try_from(ns).ok())
            .ok_or_else(|| self.time_error(PayloadError::TimeOutOfRange))?;
        self.set_time((t, base));
        Ok(())
    }

    pub(super) fn boolean(&mut self, v: bool) -> Result<(), PayloadError> {
        if self.at_time() {
            return Err(self.time_error(PayloadError::TimeNotReadable));
        }
        self.emit(if v { 1.0 } else { 0.0 });
        Ok(())
    }

    pub(super) fn text(&mut self, s: &str) -> Result<(), PayloadError> {
        if self.at_time() {
            let t = self.time_of_text(s)?;
            self.set_time(t);
        } else if let Some(v) = number(s) {
            self.emit(v);
        }
        Ok(())
    }

    /// A byte string or extension value: skipped, unless it is the time field.
    pub(super) fn other(&self) -> Result<(), PayloadError> {
        if self.at_time() {
            return Err(self.time_error(PayloadError::TimeNotReadable));
        }
        Ok(())
    }

    /// A null: a gap (a NaN sample), unless it is the time field (an error).
    pub(super) fn null(&mut self) -> Result<(), PayloadError> {
        if self.at_time() {
            return Err(self.time_error(PayloadError::TimeNotReadable));
        }
        self.emit(f64::NAN);
        Ok(())
    }

    /// Enters a map or array (the time field cannot be one).
    pub(super) fn enter(&mut self) -> Result<(), PayloadError> {
        if self.at_time() {
            return Err(self.time_error(PayloadError::TimeNotReadable));
        }
        self.depth += 1;
        Ok(())
    }

    /// The time string `s` as nanoseconds, and what they count from (see [`Decoder::decode`](super::Decoder::decode)).
    pub(super) fn time_of_text(&self, s: &str) -> Result<(i64, TimeBase), PayloadError> {
        let s = s.trim();
        let (ns, base) = if let Some(v) = number(s) {
            let (unit, base) = unit_of(v);
            (parse_time_ns(s, unit), base)
        } else if let Ok(t) = DateTime::parse_from_rfc3339(s) {
            (t.timestamp_nanos_opt(), TimeBase::Unix)
        } else if let Ok(t) = NaiveDateTime::parse_from_str(s, "%Y-%m-%dT%H:%M:%S%.f")
            .or_else(|_| NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M:%S%.f"))
        {
            (t.and_utc().timestamp_nanos_opt(), TimeBase::Unix)
        } else {
            return Err(self.time_error(PayloadError::TimeNotReadable));
        };
        ns.map(|t| (t, base))
            .ok_or_else(|| self.time_error(PayloadError::TimeOutOfRange))
    }
}

/// `s` (surrounding whitespace aside) as a finite number.
pub(super) fn number(s: &str) -> Option<f64> {
    s.trim().parse::<f64>().ok().filter(|v| v.is_finite())
}

/// `s` (surrounding whitespace aside) as a finite number, or NaN (a gap) for `null` and for the
/// NaN and infinity spellings Rust reads (`nan`, `NaN`, `inf`, `-Infinity`, any case); not for a
/// number written in digits beyond the f64 range (`1e400`).
pub(super) fn number_or_gap(s: &str) -> Option<f64> {
    let s = s.trim();
    number(s).or_else(|| {
        let gap = s.eq_ignore_ascii_case("null")
            || (!s.bytes().any(|b| b.is_ascii_digit())
                && s.parse::<f64>().is_ok_and(|v| !v.is_finite()));
        gap.then_some(f64::NAN)
    })
}

/// The unit of a numeric time `v` and what it counts from: Unix time in the unit of its
/// magnitude ([`TimeUnit::from_magnitude`]), or, below 1e8, relative seconds.
pub(super) fn unit_of(v: f64) -> (TimeUnit, TimeBase) {
    match TimeUnit::from_magnitude(v) {
        Some(unit) => (unit, TimeBase::Unix),
        None => (TimeUnit::Seconds, TimeBase::Relative),
    }
}

/// The start of `bytes` for an error message: quoted text on one line, cut to about
/// [`SNIPPET_CHARS`] characters, or the first 16 bytes in hex when it is not UTF-8.
pub(super) fn snippet(bytes: &[u8]) -> String {
    let head = &bytes[..bytes.len().min(4 * SNIPPET_CHARS)];
    let text = match std::str::from_utf8(head) {
        Ok(s) => s,
        // Cut inside a character: the text before it.
        Err(e) if e.error_len().is_none() => {
            std::str::from_utf8(&head[..e.valid_up_to()]).unwrap_or("")
        }
        Err(_) => {
            let mut hex = String::from("<");
            for (i, b) in bytes.iter().take(16).enumerate() {
                let _ = write!(hex, "{}{b:02x}", if i == 0 { "" } else { " " });
            }
            hex.push_str(if bytes.len() > 16 { " …>" } else { ">" });
            return hex;
        }
    };
    let line = one_line(text);
    let mut out = String::with_capacity(SNIPPET_CHARS + 8);
    out.push('\'');
    out.extend(line.chars().take(SNIPPET_CHARS));
    out.push('\'');
    if line.chars().nth(SNIPPET_CHARS).is_some() || head.len() < bytes.len() {
        out.push('…');
    }
    out
}
