//! The wire format of `--publish` / `--follow`, version [`VERSION`] (this is its specification).
//!
//! Every MQTT message is one frame:
//!
//! | bytes | what |
//! |---|---|
//! | 0..4 | magic `VZDK` |
//! | 4..6 | protocol version, u16 little-endian |
//! | 6 | flags: bit 0 = the body is zstd-compressed |
//! | 7.. | the body: one [`Envelope`] as MessagePack (`rmp-serde`, struct fields by name) |
//!
//! Bodies of [`COMPRESS_FROM`] bytes or more are compressed (zstd level 3); a decompressed body
//! is at most [`MAX_BODY`] bytes. A reader refuses a frame of a newer version
//! ([`DecodeError::Newer`]) rather than misreading it, and a frame that does not decode
//! ([`DecodeError::Corrupt`]), each with one line.

use serde::{Deserialize, Serialize};

mod particles;
mod pointcloud;
mod series;
mod spectrogram;

use particles::check_particles;
pub use particles::{
    MAX_FRAME_STEPS, MAX_KEY_FRAMES, PARTICLE_BYTES, ParticleConfig, ParticleFrame, ParticlesDelta,
    ParticlesKeyframe, ParticlesView, STEP_PARAMS_BYTES,
};
use pointcloud::check_pointcloud;
pub use pointcloud::{
    POINTCLOUD_MAX_NAME, PointCloudCamera, PointCloudDelta, PointCloudKeyframe, PointCloudSource,
    PointCloudView,
};
use series::series_of;
pub use series::{SeriesDelta, SeriesKeyframe, SeriesSamples, SeriesView};
use spectrogram::check_spectrogram;
pub use spectrogram::{
    SPECTROGRAM_MAX_COLUMNS, SPECTROGRAM_MAX_INDEX, SPECTROGRAM_MAX_RATE, SPECTROGRAM_MAX_VALUES,
    SpectrogramAnalysis, SpectrogramColumns, SpectrogramDelta, SpectrogramKeyframe,
    SpectrogramView,
};

/// The protocol version this vizdeck writes and reads.
pub const VERSION: u16 = 1;
/// The first four bytes of every frame.
pub const MAGIC: [u8; 4] = *b"VZDK";
/// Bodies from this many bytes on are zstd-compressed.
pub(crate) const COMPRESS_FROM: usize = 1024;
/// Largest body accepted after decompression, bytes (a corrupt size cannot make a reader
/// allocate more).
pub const MAX_BODY: usize = 64 << 20;
/// zstd level of compressed bodies (the library's default: fast, about 3× on dB columns).
const ZSTD_LEVEL: i32 = 3;
/// Header bytes before the body.
const HEADER: usize = 7;

/// One message: who sent it, where in the publisher's run it belongs, and what it carries.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Envelope {
    /// The publisher's random id, fixed for its run (two publishers on one topic differ).
    pub publisher: u64,
    /// Per publisher and scene, +1 a message (keyframes included): a follower sees gaps.
    pub seq: u64,
    /// The publisher's frame index when it was sent.
    pub frame: u64,
    /// The publisher's stream time, s (its run clock: the logical frame's time).
    pub stream_s: f64,
    /// The publisher's wall clock when the frame was handed to its connection, ns since the
    /// Unix epoch (the follower's lag is its present time less this: exact on one machine,
    /// offset by the clocks' difference between two).
    pub sent_unix_ns: i64,
    /// The scene's id (the views' `SCENES` table).
    pub scene: String,
    /// What it carries.
    pub body: Body,
}

/// What a message carries.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Body {
    /// Time series: a keyframe (the series and their recent samples).
    SeriesKey(SeriesKeyframe),
    /// Time series: the samples ingested in one publisher frame.
    SeriesDelta(SeriesDelta),
    /// Particles: a keyframe (the configuration, the particle state at a step, and the steps
    /// run since).
    ParticlesKey(ParticlesKeyframe),
    /// Particles: the steps one publisher frame ran (and a restart or flocking change before
    /// them).
    ParticlesDelta(ParticlesDelta),
    /// Spectrogram: a keyframe (the analysis, the view and the scrollback's dB columns).
    SpectrogramKey(SpectrogramKeyframe),
    /// Spectrogram: the dB columns new since the last message (and the view when it changed).
    SpectrogramDelta(SpectrogramDelta),
    /// Point cloud: a keyframe (where the cloud comes from, the camera and the view).
    PointCloudKey(PointCloudKeyframe),
    /// Point cloud: the camera and / or the view, when they changed since the last message.
    PointCloudDelta(PointCloudDelta),
    /// Nothing new this second: the publisher is alive (a follower tells a publisher that has
    /// ended from one whose scene stands still). A delta of no content.
    Heartbeat,
}

impl Body {
    /// Whether this body is a keyframe (a follower can start from it).
    pub fn is_keyframe(&self) -> bool {
        matches!(
            self,
            Body::SeriesKey(_)
                | Body::ParticlesKey(_)
                | Body::SpectrogramKey(_)
                | Body::PointCloudKey(_)
        )
    }

    /// Topic suffix under `{base}/{scene}/`: `key` (retained) or `delta`.
    pub fn topic(&self) -> &'static str {
        if self.is_keyframe() { "key" } else { "delta" }
    }
}

/// Raw bytes, as one MessagePack `bin` (a `Vec<u8>` would be an array of integers); `Debug`
/// shows the length only.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Bytes(pub Vec<u8>);

impl std::fmt::Debug for Bytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Bytes({} B)", self.0.len())
    }
}

impl Serialize for Bytes {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(&self.0)
    }
}

impl<'de> Deserialize<'de> for Bytes {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Bytes, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = Bytes;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("bytes")
            }
            fn visit_bytes<E: serde::de::Error>(self, v: &[u8]) -> Result<Bytes, E> {
                Ok(Bytes(v.to_vec()))
            }
            fn visit_byte_buf<E: serde::de::Error>(self, v: Vec<u8>) -> Result<Bytes, E> {
                Ok(Bytes(v))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut a: A) -> Result<Bytes, A::Error> {
                let mut v = Vec::with_capacity(a.size_hint().unwrap_or(0).min(1 << 16));
                while let Some(b) = a.next_element::<u8>()? {
                    v.push(b);
                }
                Ok(Bytes(v))
            }
        }
        d.deserialize_bytes(Visitor)
    }
}
/// Why a frame did not decode.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum DecodeError {
    /// Not a vizdeck frame, cut short, or its body does not read.
    #[error("a corrupt or truncated message ({0})")]
    Corrupt(String),
    /// A frame of a newer protocol version than this vizdeck reads.
    #[error("a message of protocol version {0}; this vizdeck reads version {VERSION}: update it")]
    Newer(u16),
}

/// Encodes `e` as one frame (see the module docs).
///
/// # Errors
///
/// MessagePack or zstd failed (an out-of-memory case in practice); the message names it.
pub fn encode(e: &Envelope) -> Result<Vec<u8>, String> {
    let body = rmp_serde::to_vec_named(e).map_err(|err| format!("encoding a message: {err}"))?;
    let (flags, body) = if body.len() >= COMPRESS_FROM {
        let z = zstd::bulk::compress(&body, ZSTD_LEVEL)
            .map_err(|err| format!("compressing a message: {err}"))?;
        (1u8, z)
    } else {
        (0u8, body)
    };
    let mut out = Vec::with_capacity(HEADER + body.len());
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.push(flags);
    out.extend_from_slice(&body);
    Ok(out)
}

/// Decodes one frame.
///
/// # Errors
///
/// [`DecodeError::Newer`] for a newer version, [`DecodeError::Corrupt`] for anything else that
/// does not read (wrong magic, cut short, unknown flags, bad zstd or MessagePack, over
/// [`MAX_BODY`]).
pub fn decode(bytes: &[u8]) -> Result<Envelope, DecodeError> {
    if bytes.len() < HEADER || bytes[..4] != MAGIC {
        return Err(DecodeError::Corrupt("not a vizdeck message".into()));
    }
    let version = u16::from_le_bytes([bytes[4], bytes[5]]);
    if version > VERSION {
        return Err(DecodeError::Newer(version));
    }
    let flags = bytes[6];
    if flags & !1 != 0 {
        return Err(DecodeError::Corrupt(format!("unknown flags {flags:#04x}")));
    }
    let raw = &bytes[HEADER..];
    let owned;
    let body = if flags & 1 == 1 {
        owned = zstd::bulk::decompress(raw, MAX_BODY)
            .map_err(|e| DecodeError::Corrupt(format!("zstd: {e}")))?;
        &owned[..]
    } else {
        raw
    };
    let e: Envelope =
        rmp_serde::from_slice(body).map_err(|e| DecodeError::Corrupt(e.to_string()))?;
    check_particles(&e.body).map_err(DecodeError::Corrupt)?;
    check_spectrogram(&e.body).map_err(DecodeError::Corrupt)?;
    check_pointcloud(&e.body).map_err(DecodeError::Corrupt)?;
    for s in series_of(&e.body) {
        if s.times.len() != s.values.len() {
            return Err(DecodeError::Corrupt(format!(
                "series {}: {} times but {} values",
                s.name,
                s.times.len(),
                s.values.len()
            )));
        }
    }
    Ok(e)
}
#[cfg(test)]
mod tests {
    use super::*;

    fn delta(n: usize) -> Envelope {
        Envelope {
            publisher: 0x1234_5678_9abc_def0,
            seq: 7,
            frame: 42,
            stream_s: 1.5,
            sent_unix_ns: 1_780_000_000_123_456_789,
            scene: "timeseries".into(),
            body: Body::SeriesDelta(SeriesDelta {
                series: vec![SeriesSamples {
                    id: 3,
                    name: "a".into(),
                    first_index: 1000,
                    origin: 1.78e9,
                    origin_ns: Some(1_780_000_000_000_000_000),
                    times: (0..n).map(|i| i as f64 * 0.01).collect(),
                    values: (0..n).map(|i| (i as f32).sin()).collect(),
                }],
                view: None,
            }),
        }
    }

    #[test]
    fn round_trip_small_and_compressed() {
        for n in [0, 3, 5000] {
            let e = delta(n);
            let bytes = encode(&e).expect("encode");
            assert_eq!(&bytes[..4], b"VZDK");
            assert_eq!(u16::from_le_bytes([bytes[4], bytes[5]]), VERSION);
            // Small bodies go as they are, large ones compressed.
            assert_eq!(bytes[6], u8::from(n == 5000), "n = {n}");
            assert_eq!(decode(&bytes).expect("decode"), e);
        }
    }

    #[test]
    fn newer_corrupt_and_truncated_frames_are_refused() {
        let bytes = encode(&delta(5000)).expect("encode");
        let mut newer = bytes.clone();
        newer[4..6].copy_from_slice(&(VERSION + 1).to_le_bytes());
        assert_eq!(decode(&newer), Err(DecodeError::Newer(VERSION + 1)));
        let m = DecodeError::Newer(VERSION + 1).to_string();
        assert!(m.contains("version 2") && m.contains("update"), "{m}");
        for cut in [0, 3, 7, 20, bytes.len() - 1] {
            assert!(
                matches!(decode(&bytes[..cut]), Err(DecodeError::Corrupt(_))),
                "cut at {cut}"
            );
        }
        let mut flipped = bytes.clone();
        let mid = bytes.len() / 2;
        flipped[mid] ^= 0xff;
        assert!(decode(&flipped).is_err());
        let mut flags = bytes;
        flags[6] = 0x80;
        assert!(matches!(decode(&flags), Err(DecodeError::Corrupt(_))));
        assert!(matches!(
            decode(b"{\"a\": 1}"),
            Err(DecodeError::Corrupt(_))
        ));
    }

    #[test]
    fn unequal_times_and_values_are_corrupt() {
        let mut e = delta(4);
        if let Body::SeriesDelta(d) = &mut e.body {
            d.series[0].values.pop();
        }
        let bytes = encode(&e).expect("encode");
        assert!(matches!(decode(&bytes), Err(DecodeError::Corrupt(_))));
    }
}
