//! The serde walk shared by the streamed formats (JSON and MessagePack): a `DeserializeSeed`
//! ([`Walk`]) that hands every leaf of a value to the sink and reads map keys as path parts
//! ([`Key`]), with the sink's bridge between its errors and serde's.

use std::fmt::{self, Display};

use serde::Deserialize as _;
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::sink::Sink;
use super::{MAX_DEPTH, PayloadError, TOO_DEEP};
use vizdeck_base::text::one_line;

impl Sink {
    /// `r` as a serde error, keeping the [`PayloadError`] in `fatal`.
    pub(super) fn de<E: de::Error>(&mut self, r: Result<(), PayloadError>) -> Result<(), E> {
        r.map_err(|e| {
            self.fatal = Some(e);
            E::custom("stopped")
        })
    }

    /// Enters a map or array in a serde walk (time field, depth limit).
    pub(super) fn open<E: de::Error>(&mut self) -> Result<(), E> {
        let r = self.enter();
        self.de(r)?;
        if self.depth > MAX_DEPTH {
            return Err(E::custom(TOO_DEEP));
        }
        Ok(())
    }

    /// The error of a failed serde walk: the kept [`PayloadError`], or `make` of the message.
    pub(super) fn failed(
        &mut self,
        e: impl Display,
        make: fn(String) -> PayloadError,
    ) -> PayloadError {
        self.fatal
            .take()
            .unwrap_or_else(|| make(one_line(&e.to_string())))
    }
}

/// A serde walk of a value: its leaves into the sink (see [`Decoder`](super::Decoder) for the names).
pub(super) struct Walk<'s>(pub(super) &'s mut Sink);

impl<'de> DeserializeSeed<'de> for Walk<'_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Walk<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<(), E> {
        let r = self.0.boolean(v);
        self.0.de(r)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<(), E> {
        let r = self.0.int(v.into());
        self.0.de(r)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<(), E> {
        let r = self.0.int(v.into());
        self.0.de(r)
    }

    fn visit_i128<E: de::Error>(self, v: i128) -> Result<(), E> {
        let r = self.0.int(v);
        self.0.de(r)
    }

    fn visit_u128<E: de::Error>(self, v: u128) -> Result<(), E> {
        let r = match i128::try_from(v) {
            Ok(v) => self.0.int(v),
            Err(_) => self.0.float(v as f64),
        };
        self.0.de(r)
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<(), E> {
        let r = self.0.float(v);
        self.0.de(r)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<(), E> {
        let r = self.0.text(v);
        self.0.de(r)
    }

    fn visit_bytes<E: de::Error>(self, _: &[u8]) -> Result<(), E> {
        let r = self.0.other();
        self.0.de(r)
    }

    /// JSON `null`, MessagePack nil: a gap.
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        let r = self.0.null();
        self.0.de(r)
    }

    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        self.visit_unit()
    }

    fn visit_some<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }

    /// A MessagePack extension value: skipped.
    fn visit_newtype_struct<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        IgnoredAny::deserialize(d)?;
        let r = self.0.other();
        self.0.de(r)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let sink = self.0;
        sink.open()?;
        let base = sink.path.len();
        let mut index = 0usize;
        loop {
            sink.push_display(index);
            let more = seq.next_element_seed(Walk(&mut *sink))?.is_some();
            sink.path.truncate(base);
            if !more {
                break;
            }
            index += 1;
        }
        sink.depth -= 1;
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let sink = self.0;
        sink.open()?;
        let base = sink.path.len();
        while let Some(named) = map.next_key_seed(Key(&mut *sink))? {
            if named {
                map.next_value_seed(Walk(&mut *sink))?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
            sink.path.truncate(base);
        }
        sink.depth -= 1;
        Ok(())
    }
}

/// A map key in a serde walk: appended to the path; `false` for a key that names nothing (null,
/// a map or array, bytes that are not UTF-8).
struct Key<'s>(&'s mut Sink);

impl<'de> DeserializeSeed<'de> for Key<'_> {
    type Value = bool;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Key<'_> {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a map key")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<bool, E> {
        self.0.push_display(v);
        Ok(true)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<bool, E> {
        self.0.push_display(v);
        Ok(true)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<bool, E> {
        self.0.push_display(v);
        Ok(true)
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<bool, E> {
        self.0.push_display(v);
        Ok(true)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<bool, E> {
        self.0.push_key(v);
        Ok(true)
    }

    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<bool, E> {
        match std::str::from_utf8(v) {
            Ok(s) => self.visit_str(s),
            Err(_) => Ok(false),
        }
    }

    fn visit_unit<E: de::Error>(self) -> Result<bool, E> {
        Ok(false)
    }

    fn visit_none<E: de::Error>(self) -> Result<bool, E> {
        Ok(false)
    }

    fn visit_some<D: de::Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        d.deserialize_any(self)
    }

    fn visit_newtype_struct<D: de::Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        IgnoredAny::deserialize(d)?;
        Ok(false)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<bool, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(false)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<bool, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(false)
    }
}
