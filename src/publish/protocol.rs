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

/// The protocol version this vizdeck writes and reads.
pub const VERSION: u16 = 1;
/// The first four bytes of every frame.
pub const MAGIC: [u8; 4] = *b"VZDK";
/// Bodies from this many bytes on are zstd-compressed.
pub const COMPRESS_FROM: usize = 1024;
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
    /// The scene's id ([`crate::scene::SCENES`]).
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

/// One series' samples: times relative to the series' origin and values, the same length.
/// The origin travels with them, so a follower stores the very same relative times as the
/// publisher (the chart is drawn from them) rather than a rounding of `origin + t`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SeriesSamples {
    /// The series' index in the publisher's store (stable for its run).
    pub id: u32,
    /// Its name.
    pub name: String,
    /// The publisher's index of the first sample (its store numbers a series' samples 0, 1, …
    /// for the run): a follower applies each sample once by it, even out of time order.
    pub first_index: u64,
    /// Absolute time of the series' first sample, s (the store's [`origin`]).
    ///
    /// [`origin`]: crate::series::store::Series::origin
    pub origin: f64,
    /// The same origin in integer ns, when the series was fed integer nanoseconds.
    pub origin_ns: Option<i64>,
    /// Sample times, s after `origin`.
    pub times: Vec<f64>,
    /// Sample values (the store keeps f32).
    pub values: Vec<f32>,
}

/// The chart's view: what a follower attached to the publisher's view shows.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SeriesView {
    /// Width of the window while following the newest data, s.
    pub window_s: f64,
    /// `true`: the window follows the newest sample; `false`: `paused` is shown.
    pub follow: bool,
    /// The time range shown while paused, s after the chart origin.
    pub paused: (f64, f64),
    /// A fixed value range (`None`: automatic).
    pub fixed_y: Option<(f64, f64)>,
}

/// A keyframe of the time-series scene: every series with its samples of the last
/// `window_s` seconds (at most the publisher's store holds), and the view.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SeriesKeyframe {
    /// The publisher's store generation, +1 each time it starts empty again (another source
    /// opened): a follower holding another generation starts empty too.
    pub generation: u64,
    /// The chart's view when it was sent.
    pub view: SeriesView,
    /// The series, in the publisher's order.
    pub series: Vec<SeriesSamples>,
}

/// The samples one publisher frame ingested, series by series (series without new samples are
/// left out).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SeriesDelta {
    /// The new samples.
    pub series: Vec<SeriesSamples>,
    /// The chart's view, when it changed since the previous message.
    pub view: Option<SeriesView>,
}

/// Bytes of one particle in [`ParticlesKeyframe::state`]: the layout of
/// [`Particle`](crate::scene::particles::Particle) (`pos` xyz + age, `vel` xyz + lifetime, eight
/// little-endian f32).
pub const PARTICLE_BYTES: usize = 32;
/// Bytes of one step's parameters in [`ParticleFrame::params`]: the layout of
/// [`StepParams`](crate::scene::particles::StepParams) (`StepParams` in `integrate.wgsl`,
/// little-endian).
pub const STEP_PARAMS_BYTES: usize = 208;
/// Most steps one [`ParticleFrame`] carries: a frame runs at most
/// [`crate::clock::MAX_STEPS`].
pub const MAX_FRAME_STEPS: usize = crate::clock::MAX_STEPS as usize;
/// Most frames a [`ParticlesKeyframe`] carries after its state (the state readback comes back
/// 1–3 frames after it was asked for; a publisher gives up on one that takes longer).
pub const MAX_KEY_FRAMES: usize = 120;

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

/// What the particle simulation starts from: the follower rebuilds it the same way (the
/// initial state is a function of count and seed).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ParticleConfig {
    /// The publisher's configuration number, +1 each time its simulation restarts from the
    /// seed (another count or mode, a lost device): step numbers count from 0 in each.
    pub epoch: u64,
    /// Particles simulated (after the publisher's adapter clamped the count asked for).
    pub count: u32,
    /// Simulation mode: `free`, `grid` or `brute` (`--particle-mode`).
    pub mode: String,
    /// Seed of the initial state.
    pub seed: u64,
}

/// The steps one publisher frame ran, in order: the follower runs exactly these.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ParticleFrame {
    /// The publisher's step count (in its configuration) before these steps.
    pub step: u64,
    /// Flocking radius (world units) and speed cap (world units / s) set before the steps,
    /// when they changed since the last frame sent.
    pub flocking: Option<(f32, f32)>,
    /// Each step's parameters, [`STEP_PARAMS_BYTES`] each, at most [`MAX_FRAME_STEPS`] steps
    /// (empty: a frame without a step).
    pub params: Bytes,
    /// Whether the publisher reduced its statistics (kinetic energy …) after these steps: a
    /// follower reduces at the same step, so the two can be compared.
    pub stats: bool,
}

/// A particles keyframe: the configuration, the state at step `step` (read back from the
/// publisher's GPU, or the seeded initial state), and the frames the publisher ran after
/// that step up to the one sending it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ParticlesKeyframe {
    /// The configuration the state belongs to.
    pub config: ParticleConfig,
    /// The step count (in the configuration) of `state`.
    pub step: u64,
    /// Flocking radius (world units) and speed cap (world units / s) in effect at `step`.
    pub flocking: (f32, f32),
    /// Simulated time at `step`, s (the camera's auto-rotation follows it).
    pub sim_time_s: f32,
    /// The particle state at `step`: `config.count` × [`PARTICLE_BYTES`] bytes (4 MiB at the
    /// default 131,072 particles; 3.0–3.2 MiB after zstd). `None`: the seeded initial state
    /// (`step` is 0), or a state too large for a message (`step` > 0: a follower cannot start
    /// from this keyframe and says so).
    pub state: Option<Bytes>,
    /// The frames run after `step`, in order (at most [`MAX_KEY_FRAMES`]).
    pub frames: Vec<ParticleFrame>,
    /// The view when it was sent.
    pub view: Option<ParticlesView>,
}

/// How the particle scene is looked at: what a follower attached to the publisher's view shows.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ParticlesView {
    /// Orbit camera: the point looked at (world units).
    pub target: [f32; 3],
    /// Eye distance from the target (world units, > 0).
    pub distance: f32,
    /// Rotation about +y, radians (0 while `auto_rotate`: the follower's own rotation follows
    /// the simulated time, which is the publisher's).
    pub yaw: f32,
    /// Elevation, radians.
    pub pitch: f32,
    /// Vertical field of view, radians (0 < fov < π).
    pub fov_y: f32,
    /// The camera turns with the simulated time.
    pub auto_rotate: bool,
    /// What the colour shows: `speed`, `density` or `age`.
    pub color_by: String,
    /// Sprite size, world units (> 0).
    pub sprite_size: f32,
    /// Draw style: `auto`, `sprites`, `splat` or `opaque`.
    pub style: String,
}

/// One publisher frame of the particle simulation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ParticlesDelta {
    /// The simulation restarted from the seed before this frame (its steps then count from 0).
    pub restart: Option<ParticleConfig>,
    /// The frame's steps.
    pub frame: ParticleFrame,
    /// The view, when it changed since the previous message.
    pub view: Option<ParticlesView>,
}

/// Most dB values one spectrogram message carries (48 MiB of levels, under [`MAX_BODY`] with
/// the rest of the message): a scrollback larger than this at the chosen settings is sent as
/// its newest columns that fit (at the defaults, N = 2048 and hop 512 at 48 kHz, the whole
/// scrollback is 6,563 columns × 1,025 bins = 6.7 M values, 26.9 MB before compression).
pub const SPECTROGRAM_MAX_VALUES: usize = 12 << 20;
/// Most columns one spectrogram message carries (more than the widest ring, 16,384 columns).
pub const SPECTROGRAM_MAX_COLUMNS: usize = 1 << 16;
/// Largest stream position or written index a spectrogram message may carry (2⁴⁷, beyond any
/// run: 2⁴⁷ samples at 1 MHz are 4.4 years), so a follower's arithmetic on them (an index
/// difference times a hop of at most 2¹⁵) cannot overflow and each converts to f64 exactly.
pub const SPECTROGRAM_MAX_INDEX: u64 = 1 << 47;
/// Highest sample rate a spectrogram message may carry, Hz.
pub const SPECTROGRAM_MAX_RATE: u32 = 1_000_000;

/// The spectrogram's analysis settings: what a follower needs to label the rows (bin
/// frequencies `k · sample_rate / fft_size`) and to place the columns in time (a column's
/// centre is `(start + fft_size / 2) / sample_rate`). A follower whose own settings differ adopts
/// these (and starts its history again).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpectrogramAnalysis {
    /// Sample rate of the analysed (mono) stream, Hz (1..=[`SPECTROGRAM_MAX_RATE`]).
    pub sample_rate: u32,
    /// FFT size N, a power of two in [`MIN_ANALYSIS_FFT_SIZE`]..=[`MAX_ANALYSIS_FFT_SIZE`].
    ///
    /// [`MIN_ANALYSIS_FFT_SIZE`]: crate::audio::stft::MIN_ANALYSIS_FFT_SIZE
    /// [`MAX_ANALYSIS_FFT_SIZE`]: crate::audio::stft::MAX_ANALYSIS_FFT_SIZE
    pub fft_size: u32,
    /// Hop between columns, samples (1..=N).
    pub hop: u32,
    /// Analysis window, by name (`hann`, `hamming`, `blackman-harris`, `flat-top`,
    /// `rectangular`).
    pub window: String,
    /// Bins per column: N/2 + 1.
    pub bins: u32,
}

/// The spectrogram's view: what a follower attached to the publisher's view shows.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SpectrogramView {
    /// Level drawn with the colormap's first colour, dBFS.
    pub db_floor: f32,
    /// Level drawn with its last colour, dBFS (above the floor).
    pub db_ceil: f32,
    /// Colormap, by name ([`COLORMAPS`](crate::scene::spectrogram::COLORMAPS)).
    pub colormap: String,
    /// Frequency axis: `linear`, `log` or `mel`.
    pub frequency_axis: String,
    /// The spectrum strip beside the image is shown.
    pub spectrum_strip: bool,
    /// Columns across the image (the time zoom; the follower shows as many, whatever its
    /// width).
    pub columns: u32,
    /// A frozen view: the publisher's written index one past the newest column shown; `None`:
    /// the view follows the newest column.
    pub frozen_at: Option<u64>,
}

/// Consecutive spectrogram columns, by the publisher's written index (the ring's column count:
/// 0, 1, … from the start of its history, see [`SpectrogramKeyframe::epoch`]).
///
/// What goes on the wire are the dB columns the publisher shows (its history: the CPU or the
/// GPU FFT's levels, exactly as its export writes them), not its audio: a follower then shows
/// the publisher's values bit for bit, whichever FFT path either side would use. Audio would be
/// 1 value per sample against N/2 + 1 per hop, smaller whenever hop < N/2 + 1 (half at the
/// default N = 2048, hop 512), but a follower would have to run the very same analysis (the
/// same FFT path and floating-point order, the STFT's state across messages, the gaps and the
/// skipped backlog) to show the same values, and a keyframe would still need the scrollback's
/// columns or its 70 s of audio and an analysis of all of it on joining.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SpectrogramColumns {
    /// Written index of the first column.
    pub first: u64,
    /// Values per column (the analysis' bins).
    pub bins: u32,
    /// Stream position of each column's first sample (samples since the publisher's source
    /// started, gaps counted as the time they lasted): one per column.
    pub starts: Vec<u64>,
    /// The columns' levels, dBFS: `starts.len() × bins` little-endian f32, column after column,
    /// bin 0 first. A column of the publisher's hatched gap (no input) holds
    /// [`GAP_DB`](crate::scene::spectrogram::GAP_DB) in every bin; a column whose levels the
    /// publisher never got back from its GPU holds NaN in every bin (it has no values: the
    /// export writes NaN).
    pub levels: Bytes,
}

impl SpectrogramColumns {
    /// Columns carried.
    pub fn len(&self) -> usize {
        self.starts.len()
    }

    /// Whether it carries no column.
    pub fn is_empty(&self) -> bool {
        self.starts.is_empty()
    }

    /// Column `j`'s levels (dBFS, `bins` values); `None` past the end.
    pub fn column(&self, j: usize) -> Option<Vec<f32>> {
        let b = self.bins as usize * 4;
        let bytes = self.levels.0.get(j * b..(j + 1) * b)?;
        Some(
            bytes
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect(),
        )
    }
}

/// A spectrogram keyframe: the analysis, the view, and the scrollback (every column the
/// publisher's history holds whose levels are final, at most [`SPECTROGRAM_MAX_VALUES`]
/// values: the newest that fit), so that a follower joining late shows what the publisher
/// shows.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SpectrogramKeyframe {
    /// The publisher's history number, +1 each time its written index starts again at 0 (new
    /// analysis settings, a file analysed again): a follower holding another one starts again
    /// from this keyframe.
    pub epoch: u64,
    /// The analysis the columns come from.
    pub analysis: SpectrogramAnalysis,
    /// The view when it was sent.
    pub view: SpectrogramView,
    /// The scrollback.
    pub columns: SpectrogramColumns,
}

/// The spectrogram columns whose levels became final since the last message (each column is
/// sent once, in written order: the GPU path's levels come back 1–3 frames after their frame),
/// and the view when it changed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SpectrogramDelta {
    /// The publisher's history number ([`SpectrogramKeyframe::epoch`]) the columns belong to.
    pub epoch: u64,
    /// The new columns (possibly none).
    pub columns: SpectrogramColumns,
    /// The view, when it changed since the previous message.
    pub view: Option<SpectrogramView>,
}

/// Longest file path or URL a point-cloud keyframe may name, bytes.
pub const POINTCLOUD_MAX_NAME: usize = 4096;

/// Where a published point cloud comes from. The points never travel: a follower opens the
/// same source itself.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum PointCloudSource {
    /// A LAS, LAZ, COPC or PLY file: its absolute path on the publisher's machine (UTF-8, a
    /// non-UTF-8 name lossily), 1..=[`POINTCLOUD_MAX_NAME`] bytes. A follower opens the same
    /// path on its own machine.
    File(String),
    /// A COPC file over HTTP(S): its `http://` or `https://` URL,
    /// 1..=[`POINTCLOUD_MAX_NAME`] bytes.
    Url(String),
    /// The synthetic terrain: `points` points (1..=10¹⁰), deterministic from `seed`.
    Synthetic {
        /// Points in the cloud.
        points: u64,
        /// The publisher's `--seed`.
        seed: u64,
    },
}

/// The point-cloud camera: an orbit camera around a pivot, file coordinates (z up). Every
/// value is finite.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct PointCloudCamera {
    /// The point orbited: x, y, z in file units (the cloud's own coordinates, f64).
    pub pivot: [f64; 3],
    /// The eye's angle around the pivot in the xy plane, radians (0: the eye on the +x side).
    pub yaw: f64,
    /// The eye's elevation, radians, within ±π/2 (+π/2: straight above).
    pub pitch: f64,
    /// The eye's distance from the pivot, file units (> 0).
    pub distance: f64,
    /// Orthographic projection (else perspective, 50° vertical field of view); either way
    /// the viewport's height spans `2 · distance · tan 25°` at the pivot.
    pub ortho: bool,
}

/// How the point cloud is drawn: what a follower attached to the publisher's view shows.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PointCloudView {
    /// Colour mode, by name ([`ColorMode::name`]: `RGB`, `intensity`, `elevation`,
    /// `classification`, `return number`).
    ///
    /// [`ColorMode::name`]: crate::pointcloud::raster::ColorMode::name
    pub color: String,
    /// Point radius, pixels (0..=3).
    pub point_radius: u32,
    /// Eye-dome lighting strength, 0 (off) to 4.
    pub edl: f32,
    /// The point budget (most points drawn a frame, 1..=10¹⁰) the publisher's user chose;
    /// `None`: the publisher's adapter default, a follower keeps its own.
    pub budget: Option<u64>,
    /// ASPRS classes hidden in the legend: class `c` is bit `c % 32` of word `c / 32`.
    pub hidden_classes: [u32; 8],
}

/// A point-cloud keyframe: everything a follower needs to show what the publisher shows.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PointCloudKeyframe {
    /// The cloud.
    pub source: PointCloudSource,
    /// The camera; `None` while the publisher has not framed the cloud yet (still opening).
    pub camera: Option<PointCloudCamera>,
    /// The view settings.
    pub view: PointCloudView,
}

/// What changed in the point-cloud scene since the publisher's last message (at least one of
/// the two is `Some`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PointCloudDelta {
    /// The camera, when it moved.
    pub camera: Option<PointCloudCamera>,
    /// The view settings, when they changed.
    pub view: Option<PointCloudView>,
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

/// The series samples a body carries.
fn series_of(b: &Body) -> &[SeriesSamples] {
    match b {
        Body::SeriesKey(k) => &k.series,
        Body::SeriesDelta(d) => &d.series,
        Body::ParticlesKey(_) | Body::ParticlesDelta(_) => &[],
        Body::SpectrogramKey(_) | Body::SpectrogramDelta(_) => &[],
        Body::PointCloudKey(_) | Body::PointCloudDelta(_) | Body::Heartbeat => &[],
    }
}

/// The lengths a particles body carries: each frame's parameters a whole number of steps, at
/// most [`MAX_FRAME_STEPS`]; a keyframe's state `count` particles and at most
/// [`MAX_KEY_FRAMES`] frames; a known mode.
fn check_particles(b: &Body) -> Result<(), String> {
    let frame = |f: &ParticleFrame| {
        let n = f.params.0.len();
        if !n.is_multiple_of(STEP_PARAMS_BYTES) || n / STEP_PARAMS_BYTES > MAX_FRAME_STEPS {
            Err(format!(
                "particles: {n} bytes of step parameters (a whole number of \
                 {STEP_PARAMS_BYTES}-byte steps, at most {MAX_FRAME_STEPS}, expected)"
            ))
        } else {
            Ok(())
        }
    };
    let config = |c: &ParticleConfig| {
        if matches!(c.mode.as_str(), "free" | "grid" | "brute") {
            Ok(())
        } else {
            Err(format!("particles: unknown mode {:?}", c.mode))
        }
    };
    let view = |v: &Option<ParticlesView>| match v {
        Some(v)
            if !(v.target.iter().all(|x| x.is_finite())
                && v.distance.is_finite()
                && v.distance > 0.0
                && v.yaw.is_finite()
                && v.pitch.is_finite()
                && v.fov_y > 0.0
                && v.fov_y < std::f32::consts::PI
                && v.sprite_size.is_finite()
                && v.sprite_size > 0.0) =>
        {
            Err("particles: a view with a non-finite or out-of-range camera or size".to_string())
        }
        _ => Ok(()),
    };
    match b {
        Body::ParticlesDelta(d) if d.view.is_some() => view(&d.view)?,
        Body::ParticlesKey(k) => view(&k.view)?,
        _ => {}
    }
    match b {
        Body::ParticlesKey(k) => {
            config(&k.config)?;
            if let Some(state) = &k.state {
                let want = k.config.count as usize * PARTICLE_BYTES;
                if state.0.len() != want {
                    return Err(format!(
                        "particles: a state of {} bytes for {} particles ({want} expected)",
                        state.0.len(),
                        k.config.count
                    ));
                }
            }
            if k.frames.len() > MAX_KEY_FRAMES {
                return Err(format!(
                    "particles: a keyframe of {} frames (at most {MAX_KEY_FRAMES})",
                    k.frames.len()
                ));
            }
            k.frames.iter().try_for_each(frame)
        }
        Body::ParticlesDelta(d) => {
            if let Some(c) = &d.restart {
                config(c)?;
            }
            frame(&d.frame)
        }
        Body::SeriesKey(_) | Body::SeriesDelta(_) => Ok(()),
        Body::SpectrogramKey(_) | Body::SpectrogramDelta(_) => Ok(()),
        Body::PointCloudKey(_) | Body::PointCloudDelta(_) | Body::Heartbeat => Ok(()),
    }
}

/// The shapes a spectrogram body carries: a known analysis (FFT size, hop, window, rate, bins =
/// N/2 + 1), columns whose levels are `columns × bins` values within the bounds
/// ([`SPECTROGRAM_MAX_VALUES`], [`SPECTROGRAM_MAX_COLUMNS`], [`SPECTROGRAM_MAX_INDEX`]), a
/// keyframe's columns of its analysis' bins, a view with finite levels.
fn check_spectrogram(b: &Body) -> Result<(), String> {
    use crate::audio::stft::{MAX_ANALYSIS_FFT_SIZE, MIN_ANALYSIS_FFT_SIZE, WindowKind};
    let columns = |c: &SpectrogramColumns| {
        let n = c.starts.len();
        let bins = c.bins as usize;
        if bins == 0 || bins > MAX_ANALYSIS_FFT_SIZE / 2 + 1 {
            return Err(format!("spectrogram: columns of {bins} bins"));
        }
        if n > SPECTROGRAM_MAX_COLUMNS || n * bins > SPECTROGRAM_MAX_VALUES {
            return Err(format!(
                "spectrogram: {n} columns of {bins} bins (at most {SPECTROGRAM_MAX_COLUMNS} \
                 columns and {SPECTROGRAM_MAX_VALUES} values)"
            ));
        }
        if c.levels.0.len() != n * bins * 4 {
            return Err(format!(
                "spectrogram: {} bytes of levels for {n} columns of {bins} bins ({} expected)",
                c.levels.0.len(),
                n * bins * 4
            ));
        }
        let last = c.first.checked_add(n as u64);
        if last.is_none_or(|l| l > SPECTROGRAM_MAX_INDEX)
            || c.starts.iter().any(|&s| s > SPECTROGRAM_MAX_INDEX)
        {
            return Err("spectrogram: a column index or stream position out of range".into());
        }
        Ok(())
    };
    let view = |v: &SpectrogramView| {
        if !(v.db_floor.is_finite() && v.db_ceil.is_finite() && v.db_floor < v.db_ceil) {
            return Err(format!(
                "spectrogram: a view from {} to {} dB",
                v.db_floor, v.db_ceil
            ));
        }
        if v.frozen_at.is_some_and(|w| w > SPECTROGRAM_MAX_INDEX) {
            return Err("spectrogram: a frozen view out of range".into());
        }
        Ok(())
    };
    match b {
        Body::SpectrogramKey(k) => {
            let a = &k.analysis;
            let n = a.fft_size as usize;
            if !n.is_power_of_two() || !(MIN_ANALYSIS_FFT_SIZE..=MAX_ANALYSIS_FFT_SIZE).contains(&n)
            {
                return Err(format!("spectrogram: an FFT size of {n}"));
            }
            if a.hop == 0 || a.hop > a.fft_size {
                return Err(format!("spectrogram: a hop of {} at N = {n}", a.hop));
            }
            if a.sample_rate == 0 || a.sample_rate > SPECTROGRAM_MAX_RATE {
                return Err(format!(
                    "spectrogram: a sample rate of {} Hz",
                    a.sample_rate
                ));
            }
            if WindowKind::from_name(&a.window).is_none() {
                return Err(format!("spectrogram: unknown window {:?}", a.window));
            }
            if a.bins as usize != n / 2 + 1 || k.columns.bins != a.bins {
                return Err(format!(
                    "spectrogram: {} bins at N = {n}, columns of {} ({} expected)",
                    a.bins,
                    k.columns.bins,
                    n / 2 + 1
                ));
            }
            view(&k.view)?;
            columns(&k.columns)
        }
        Body::SpectrogramDelta(d) => {
            if let Some(v) = &d.view {
                view(v)?;
            }
            columns(&d.columns)
        }
        _ => Ok(()),
    }
}

/// The values a point-cloud body carries: a source of a known kind and length, a camera of
/// finite values (distance > 0, pitch within ±π/2), a view of a known colour mode, radius,
/// strength and budget.
fn check_pointcloud(b: &Body) -> Result<(), String> {
    use crate::pointcloud::raster::{ColorMode, MAX_RADIUS};
    use crate::pointcloud::synthetic::MAX_POINTS;
    let camera = |c: &PointCloudCamera| {
        let finite = c
            .pivot
            .iter()
            .chain([&c.yaw, &c.pitch, &c.distance])
            .all(|v| v.is_finite());
        if finite && c.distance > 0.0 && c.pitch.abs() <= std::f64::consts::FRAC_PI_2 {
            Ok(())
        } else {
            Err(format!(
                "point cloud: a camera at {:?}, yaw {}, pitch {}, distance {}",
                c.pivot, c.yaw, c.pitch, c.distance
            ))
        }
    };
    let view = |v: &PointCloudView| {
        if !ColorMode::ALL.iter().any(|m| m.name() == v.color) {
            return Err(format!("point cloud: unknown colour mode {:?}", v.color));
        }
        if v.point_radius > MAX_RADIUS || !(0.0..=4.0).contains(&v.edl) {
            return Err(format!(
                "point cloud: a point radius of {} px, an EDL strength of {}",
                v.point_radius, v.edl
            ));
        }
        if v.budget.is_some_and(|b| b == 0 || b > MAX_POINTS) {
            return Err(format!("point cloud: a point budget of {:?}", v.budget));
        }
        Ok(())
    };
    match b {
        Body::PointCloudKey(k) => {
            match &k.source {
                PointCloudSource::File(s) | PointCloudSource::Url(s)
                    if s.is_empty() || s.len() > POINTCLOUD_MAX_NAME =>
                {
                    return Err(format!(
                        "point cloud: a source name of {} bytes (1 to {POINTCLOUD_MAX_NAME})",
                        s.len()
                    ));
                }
                PointCloudSource::Url(u) if !crate::pointcloud::http::is_url(u) => {
                    return Err(format!("point cloud: {u:?} is not an http(s) URL"));
                }
                PointCloudSource::Synthetic { points, .. }
                    if *points == 0 || *points > MAX_POINTS =>
                {
                    return Err(format!("point cloud: a synthetic cloud of {points} points"));
                }
                _ => {}
            }
            k.camera.as_ref().map_or(Ok(()), camera)?;
            view(&k.view)
        }
        Body::PointCloudDelta(d) => {
            d.camera.as_ref().map_or(Ok(()), camera)?;
            d.view.as_ref().map_or(Ok(()), view)
        }
        _ => Ok(()),
    }
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

#[cfg(test)]
mod particle_tests {
    use super::*;

    fn frame(steps: usize) -> ParticleFrame {
        ParticleFrame {
            step: 120,
            flocking: Some((0.05, 3.0)),
            params: Bytes((0..steps * STEP_PARAMS_BYTES).map(|i| i as u8).collect()),
            stats: true,
        }
    }

    fn envelope(body: Body) -> Envelope {
        Envelope {
            publisher: 1,
            seq: 2,
            frame: 3,
            stream_s: 0.05,
            sent_unix_ns: 4,
            scene: "particles".into(),
            body,
        }
    }

    fn key(count: u32, state_len: Option<usize>, frames: usize) -> Envelope {
        envelope(Body::ParticlesKey(ParticlesKeyframe {
            view: None,
            config: ParticleConfig {
                epoch: 1,
                count,
                mode: "grid".into(),
                seed: 42,
            },
            step: 120,
            flocking: (0.05, 3.0),
            sim_time_s: 2.0,
            state: state_len.map(|n| Bytes((0..n).map(|i| (i * 7) as u8).collect())),
            frames: (0..frames).map(|_| frame(1)).collect(),
        }))
    }

    #[test]
    fn particle_bodies_round_trip_with_their_bytes_as_bin() {
        let d = envelope(Body::ParticlesDelta(ParticlesDelta {
            view: None,
            restart: None,
            frame: frame(1),
        }));
        let bytes = encode(&d).expect("encode");
        // One step: its 208 bytes as one MessagePack bin, under the compression threshold.
        assert!(bytes.len() < 420, "{} bytes", bytes.len());
        assert_eq!(decode(&bytes).expect("decode"), d);
        let k = key(1000, Some(1000 * PARTICLE_BYTES), 3);
        assert!(k.body.is_keyframe() && k.body.topic() == "key");
        assert_eq!(decode(&encode(&k).expect("encode")).expect("decode"), k);
        let seed = key(1000, None, 1);
        assert_eq!(
            decode(&encode(&seed).expect("encode")).expect("decode"),
            seed
        );
    }

    #[test]
    fn particle_lengths_are_checked() {
        let bad = [
            key(1000, Some(1000 * PARTICLE_BYTES - 1), 1),
            key(10, Some(11 * PARTICLE_BYTES), 1),
            key(10, None, MAX_KEY_FRAMES + 1),
            envelope(Body::ParticlesDelta(ParticlesDelta {
                view: None,
                restart: None,
                frame: ParticleFrame {
                    params: Bytes(vec![0; STEP_PARAMS_BYTES + 1]),
                    ..frame(0)
                },
            })),
            envelope(Body::ParticlesDelta(ParticlesDelta {
                view: None,
                restart: None,
                frame: frame(MAX_FRAME_STEPS + 1),
            })),
            envelope(Body::ParticlesDelta(ParticlesDelta {
                view: None,
                restart: Some(ParticleConfig {
                    epoch: 0,
                    count: 1,
                    mode: "fast".into(),
                    seed: 0,
                }),
                frame: frame(0),
            })),
        ];
        for e in bad {
            let r = decode(&encode(&e).expect("encode"));
            assert!(matches!(r, Err(DecodeError::Corrupt(_))), "{r:?}");
        }
    }
}
