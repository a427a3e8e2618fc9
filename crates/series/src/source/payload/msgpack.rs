//! Format `MsgPack`: a MessagePack payload streamed through rmp-serde into the sink.

use serde::Deserialize as _;
use serde::de::{DeserializeSeed, IgnoredAny};

use super::serde_walk::Walk;
use super::sink::Sink;
use super::{MAX_DEPTH, PayloadError, TRAILING};

/// Format `MsgPack`: streamed into `sink`; the value must span the whole payload.
pub(super) fn msgpack(sink: &mut Sink, payload: &[u8]) -> Result<(), PayloadError> {
    let mut de = rmp_serde::Deserializer::from_read_ref(payload);
    // The walk stops at MAX_DEPTH; this bounds the keys and extension values it skips.
    de.set_max_depth(MAX_DEPTH + 2);
    Walk(sink)
        .deserialize(&mut de)
        .map_err(|e| sink.failed(e, PayloadError::NotMsgPack))?;
    // Nothing may follow: reading another value must meet the end of the payload.
    match IgnoredAny::deserialize(&mut de) {
        Err(rmp_serde::decode::Error::InvalidMarkerRead(e))
            if e.kind() == std::io::ErrorKind::UnexpectedEof =>
        {
            Ok(())
        }
        _ => Err(PayloadError::NotMsgPack(TRAILING.to_owned())),
    }
}
