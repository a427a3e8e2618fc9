//! Audio input for the spectrogram: one path from any source to the analysis.
//!
//! Every source feeds ONE single-producer/single-consumer [`rtrb`] ring of **mono `f32` samples in
//! [-1, 1]** at the source's own sample rate ([`AudioSource::sample_rate`]):
//!
//! - live input ([`capture`]): the cpal data callback converts whatever sample format the device
//!   delivers, averages the channels and pushes; it never allocates, locks, logs or blocks;
//! - file ([`file`]) and synthetic ([`synth`]) sources are *clocked*: the frame loop calls
//!   [`AudioSource::advance_to`] with the time since the source started, and exactly
//!   `floor(t · sample_rate)` samples have been produced after that call. With the simulated clock
//!   of headless mode the sample stream is therefore deterministic.
//!
//! The frame loop drains the ring with [`AudioSource::drain_into`] and feeds [`stft::Stft`].
//! Samples that do not fit in the ring are dropped (the newest ones: an SPSC producer cannot
//! discard what the consumer has not read) and counted, see [`AudioSource::dropped`].

pub mod capture;
pub mod file;
pub mod stft;
pub mod synth;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use rtrb::{Consumer, Producer, RingBuffer};

/// Ring capacity (in mono samples) suggested for [`AudioSource::open`]: 2^20 samples, about 21.8 s
/// at 48 kHz, 4 MiB of `f32`.
pub const DEFAULT_RING_CAPACITY: usize = 1 << 20;

/// What the user asked for (from CLI `--audio default|synthetic|NAME` and `--audio-file PATH`).
#[derive(Clone, Debug, PartialEq)]
pub enum AudioSelection {
    /// The default input device of cpal's default host; falls back to [`AudioSelection::Synthetic`]
    /// (with a [`AudioSource::notice`]) when it cannot be opened.
    Default,
    /// The built-in deterministic generator, [`synth::Synth`].
    Synthetic,
    /// An input device chosen by name: exact match first, else a case-insensitive substring.
    Device(String),
    /// A WAV file, decoded fully when opened and played at real-time rate.
    File(PathBuf),
}

impl AudioSelection {
    /// Parses the value of `--audio`: `default` and `synthetic` (any case) are the keywords,
    /// anything else is a device name. An empty string means `Default`.
    pub fn from_cli(value: &str) -> AudioSelection {
        let v = value.trim();
        if v.is_empty() || v.eq_ignore_ascii_case("default") {
            AudioSelection::Default
        } else if v.eq_ignore_ascii_case("synthetic") || v.eq_ignore_ascii_case("synth") {
            AudioSelection::Synthetic
        } else {
            AudioSelection::Device(v.to_string())
        }
    }
}

/// Everything that can go wrong in the audio module. Every message is one line that names the
/// input (file path, device name, STFT parameter) and the problem.
#[derive(Debug, thiserror::Error)]
pub enum AudioError {
    /// The file does not exist.
    #[error("audio file '{}': no such file", .path.display())]
    FileNotFound {
        /// The path as given.
        path: PathBuf,
    },
    /// The file exists but could not be read (permissions, a directory, I/O error).
    #[error("audio file '{}': cannot read: {reason}", .path.display())]
    FileRead {
        /// The path as given.
        path: PathBuf,
        /// The operating system's message.
        reason: String,
    },
    /// The file has zero bytes.
    #[error("audio file '{}': empty file (0 bytes)", .path.display())]
    EmptyFile {
        /// The path as given.
        path: PathBuf,
    },
    /// The first four bytes are not `RIFF`.
    #[error("audio file '{}': not a WAV file (RIFF header missing)", .path.display())]
    NotWav {
        /// The path as given.
        path: PathBuf,
    },
    /// A RIFF file whose WAVE structure `hound` rejects (bad fmt chunk, truncated data, ...).
    #[error("audio file '{}': invalid WAV: {reason}", .path.display())]
    InvalidWav {
        /// The path as given.
        path: PathBuf,
        /// What is wrong, from the decoder.
        reason: String,
    },
    /// A well-formed WAV in an encoding this module does not decode.
    #[error("audio file '{}': unsupported WAV encoding: {reason}", .path.display())]
    UnsupportedWav {
        /// The path as given.
        path: PathBuf,
        /// The encoding found.
        reason: String,
    },
    /// The fmt chunk says 0 Hz.
    #[error("audio file '{}': sample rate is 0 Hz", .path.display())]
    ZeroSampleRate {
        /// The path as given.
        path: PathBuf,
    },
    /// The fmt chunk says 0 channels.
    #[error("audio file '{}': zero channels", .path.display())]
    ZeroChannels {
        /// The path as given.
        path: PathBuf,
    },
    /// The data chunk holds no sample frames.
    #[error("audio file '{}': contains no audio samples", .path.display())]
    NoSamples {
        /// The path as given.
        path: PathBuf,
    },
    /// No input device matches the requested name.
    #[error("audio device '{name}' not found; input devices: {available}")]
    DeviceNotFound {
        /// The name as given.
        name: String,
        /// Comma-separated names of the input devices of the default host, or `none`.
        available: String,
    },
    /// The name is not an exact match and is a substring of several device names.
    #[error("audio device '{name}' is ambiguous; it matches: {matches}")]
    DeviceAmbiguous {
        /// The name as given.
        name: String,
        /// Comma-separated names of the matching devices.
        matches: String,
    },
    /// The input devices of the default host could not be listed.
    #[error("audio device '{name}': cannot list input devices: {reason}")]
    DeviceList {
        /// The name as given.
        name: String,
        /// cpal's message.
        reason: String,
    },
    /// The device was found but no input stream could be built or started on it.
    #[error("audio device '{name}': cannot open: {reason}")]
    DeviceOpen {
        /// The device's name.
        name: String,
        /// cpal's message (or the unsupported sample format).
        reason: String,
    },
    /// [`stft::Stft::new`] got an FFT size that is not a power of two in 16..=65536.
    #[error("STFT fft size {fft_size}: must be a power of two in 16..=65536")]
    InvalidFftSize {
        /// The size given.
        fft_size: usize,
    },
    /// [`stft::Stft::new`] got a hop outside 1..=fft_size.
    #[error("STFT hop {hop}: must be in 1..={fft_size} (the fft size)")]
    InvalidHop {
        /// The hop given.
        hop: usize,
        /// The FFT size it was checked against.
        fft_size: usize,
    },
    /// [`AudioSource::open`] got a ring capacity of 0.
    #[error("audio ring capacity {capacity}: must be at least 1 sample")]
    InvalidRingCapacity {
        /// The capacity given.
        capacity: usize,
    },
}

/// The producing side of a clocked source (file or synthetic).
enum Generator {
    Synth(synth::Synth),
    File { samples: Vec<f32>, looping: bool },
}

/// How the ring is fed.
enum Feed {
    /// The cpal callback owns the producer; the stream must stay alive.
    Live(capture::LiveCapture),
    /// The frame loop produces through `advance_to`.
    Clocked {
        producer: Producer<f32>,
        generator: Generator,
        /// Samples produced so far (pushed or dropped), i.e. the clock position in samples.
        position: u64,
        /// Reused buffer for the synthesizer's output (no allocation per call after the first).
        scratch: Vec<f32>,
    },
}

/// A running source feeding the ring. Lives on the main thread (a live source holds a
/// `cpal::Stream`, which may be `!Send`).
pub struct AudioSource {
    feed: Feed,
    consumer: Consumer<f32>,
    dropped: Arc<AtomicU64>,
    sample_rate: u32,
    label: String,
    kind: &'static str,
    notice: Option<String>,
}

impl std::fmt::Debug for AudioSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AudioSource")
            .field("label", &self.label)
            .field("kind", &self.kind)
            .field("sample_rate", &self.sample_rate)
            .field("notice", &self.notice)
            .field("dropped", &self.dropped())
            .finish_non_exhaustive()
    }
}

/// Size of the chunks in which the synthesizer is rendered by `advance_to` (samples).
const SYNTH_CHUNK: usize = 4096;

impl AudioSource {
    /// Opens the selection.
    ///
    /// - `Default`: the default input device of cpal's default host (PulseAudio when a server
    ///   runs, else ALSA). If there is none, or it cannot be opened, the synthetic source is used
    ///   instead and [`notice`](Self::notice) says so: "No audio input could be opened (<why>);
    ///   showing the built-in synthetic source". Only the default device is tried (on ALSA the
    ///   other "devices" include `null`, which would open and deliver silence).
    /// - `Device(name)`: exact match on the device name (or the host's device id, e.g. the
    ///   PulseAudio source name `viz.monitor`), else a case-insensitive substring of exactly one
    ///   name. Unknown → [`AudioError::DeviceNotFound`] listing the input devices; several
    ///   substring matches → [`AudioError::DeviceAmbiguous`]; no fallback.
    /// - `File(path)`: decoded fully here ([`file::decode_wav`]; its errors surface here), then
    ///   played at real-time rate by [`advance_to`](Self::advance_to).
    /// - `Synthetic`: [`synth::Synth`] at [`synth::SYNTH_SAMPLE_RATE`].
    ///
    /// `ring_capacity` is in mono samples ([`DEFAULT_RING_CAPACITY`] is a good value).
    ///
    /// # Errors
    ///
    /// [`AudioError::InvalidRingCapacity`] for 0; for `File`, every error of
    /// [`file::decode_wav`]; for `Device`, [`AudioError::DeviceNotFound`],
    /// [`AudioError::DeviceAmbiguous`], [`AudioError::DeviceList`], [`AudioError::DeviceOpen`].
    /// `Default` and `Synthetic` never fail (with a valid capacity).
    pub fn open(sel: &AudioSelection, ring_capacity: usize) -> Result<AudioSource, AudioError> {
        if ring_capacity == 0 {
            return Err(AudioError::InvalidRingCapacity {
                capacity: ring_capacity,
            });
        }
        match sel {
            AudioSelection::Synthetic => Ok(Self::synthetic(ring_capacity, None)),
            AudioSelection::File(path) => Self::open_file(path, ring_capacity),
            AudioSelection::Device(name) => {
                let device = capture::find_input_device(name)?;
                let parts = capture::LiveCapture::open(&device, ring_capacity).map_err(|e| {
                    AudioError::DeviceOpen {
                        name: capture::device_name(&device),
                        reason: e,
                    }
                })?;
                Ok(Self::live(parts))
            }
            AudioSelection::Default => match capture::open_default(ring_capacity) {
                Ok(parts) => Ok(Self::live(parts)),
                Err(why) => {
                    let notice = format!(
                        "No audio input could be opened ({why}); showing the built-in synthetic source"
                    );
                    log::warn!("{notice}");
                    Ok(Self::synthetic(ring_capacity, Some(notice)))
                }
            },
        }
    }

    fn live((live, consumer, dropped): capture::LiveParts) -> AudioSource {
        AudioSource {
            sample_rate: live.sample_rate(),
            label: live.label(),
            kind: "live",
            notice: None,
            consumer,
            dropped,
            feed: Feed::Live(live),
        }
    }

    fn synthetic(ring_capacity: usize, notice: Option<String>) -> AudioSource {
        let (producer, consumer) = RingBuffer::new(ring_capacity);
        AudioSource {
            feed: Feed::Clocked {
                producer,
                generator: Generator::Synth(synth::Synth::new()),
                position: 0,
                scratch: Vec::new(),
            },
            consumer,
            dropped: Arc::new(AtomicU64::new(0)),
            sample_rate: synth::SYNTH_SAMPLE_RATE,
            label: format!("synthetic ({} Hz)", synth::SYNTH_SAMPLE_RATE),
            kind: "synthetic",
            notice,
        }
    }

    fn open_file(path: &Path, ring_capacity: usize) -> Result<AudioSource, AudioError> {
        let (samples, sample_rate, channels) = file::decode_wav(path)?;
        let (producer, consumer) = RingBuffer::new(ring_capacity);
        Ok(AudioSource {
            feed: Feed::Clocked {
                producer,
                generator: Generator::File {
                    samples,
                    looping: false,
                },
                position: 0,
                scratch: Vec::new(),
            },
            consumer,
            dropped: Arc::new(AtomicU64::new(0)),
            sample_rate,
            label: format!(
                "file: {} ({} Hz, {} ch)",
                path.display(),
                sample_rate,
                channels
            ),
            kind: "file",
            notice: None,
        })
    }

    /// Sample rate of the mono samples in the ring, in Hz (never 0).
    pub fn sample_rate(&self) -> u32 {
        self.sample_rate
    }

    /// One line for the UI and reports: `"live: <device name> (48000 Hz, 2 ch, I16)"`,
    /// `"synthetic (48000 Hz)"` or `"file: <path> (44100 Hz, 1 ch)"` (the file's own channel
    /// count; the ring is always mono).
    pub fn label(&self) -> &str {
        &self.label
    }

    /// Short kind for reports: `"live"` | `"synthetic"` | `"file"`.
    pub fn kind(&self) -> &'static str {
        self.kind
    }

    /// A visible one-line notice for the user, set when `Default` fell back to the synthetic
    /// source; `None` otherwise.
    pub fn notice(&self) -> Option<&str> {
        self.notice.as_deref()
    }

    /// For clocked sources (file, synthetic): produces every sample whose time is `< t_seconds`
    /// since the source started, so that after the call the total produced is
    /// `floor(t_seconds · sample_rate)` (capped at the file's end unless looping). Samples that do
    /// not fit in the ring are counted in [`dropped`](Self::dropped), the clock still moves past
    /// them. Going back in time, NaN or infinite `t_seconds` do nothing. No-op for live input.
    pub fn advance_to(&mut self, t_seconds: f64) {
        let Feed::Clocked {
            producer,
            generator,
            position,
            scratch,
        } = &mut self.feed
        else {
            return;
        };
        if !t_seconds.is_finite() || t_seconds <= 0.0 {
            return;
        }
        // `as` saturates for values beyond u64::MAX.
        let mut target = (t_seconds * f64::from(self.sample_rate)).floor() as u64;
        if let Generator::File {
            samples,
            looping: false,
        } = generator
        {
            target = target.min(samples.len() as u64);
        }
        if target <= *position {
            return;
        }
        let wanted = target - *position;
        let room = producer.slots() as u64;
        let to_push = wanted.min(room) as usize;
        match generator {
            Generator::Synth(synth) => {
                // `to_push` samples starting at `position`: the synthesizer is positioned there
                // (it may lag after samples were dropped).
                synth.seek(*position);
                if scratch.len() < SYNTH_CHUNK {
                    scratch.resize(SYNTH_CHUNK, 0.0);
                }
                let mut left = to_push;
                while left > 0 {
                    let n = left.min(SYNTH_CHUNK);
                    synth.fill(&mut scratch[..n]);
                    let (pushed, _) = producer.push_partial_slice(&scratch[..n]);
                    debug_assert_eq!(pushed.len(), n);
                    left -= n;
                }
            }
            Generator::File { samples, .. } => {
                let len = samples.len() as u64;
                let mut pos = *position;
                let mut left = to_push as u64;
                while left > 0 && len > 0 {
                    let start = (pos % len) as usize;
                    let n = (left as usize).min(samples.len() - start);
                    let (pushed, _) = producer.push_partial_slice(&samples[start..start + n]);
                    debug_assert_eq!(pushed.len(), n);
                    pos += n as u64;
                    left -= n as u64;
                }
            }
        }
        let lost = wanted - to_push as u64;
        if lost > 0 {
            self.dropped.fetch_add(lost, Ordering::Relaxed);
        }
        *position = target;
    }

    /// Drains every available sample from the ring into `out` (appends). Never blocks.
    pub fn drain_into(&mut self, out: &mut Vec<f32>) {
        let n = self.consumer.slots();
        if n == 0 {
            return;
        }
        if let Ok(chunk) = self.consumer.read_chunk(n) {
            let (a, b) = chunk.as_slices();
            out.reserve(a.len() + b.len());
            out.extend_from_slice(a);
            out.extend_from_slice(b);
            chunk.commit_all();
        }
    }

    /// Samples that did not fit in the ring, total since open (counted by the producer with an
    /// atomic: the cpal callback for live input, `advance_to` for clocked sources).
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// Last stream error reported by cpal's error callback (e.g. the device disappeared), if any.
    /// Always `None` for clocked sources.
    pub fn stream_error(&self) -> Option<String> {
        match &self.feed {
            Feed::Live(live) => live.last_error(),
            Feed::Clocked { .. } => None,
        }
    }

    /// Whether the file source has delivered all its samples (its clock reached the end and it is
    /// not looping). Always `false` for live and synthetic sources.
    pub fn finished(&self) -> bool {
        match &self.feed {
            Feed::Clocked {
                generator: Generator::File { samples, looping },
                position,
                ..
            } => !*looping && *position >= samples.len() as u64,
            _ => false,
        }
    }

    /// Makes a file source start over at its beginning when it reaches its end (the clock keeps
    /// running: sample `i` of the stream is file sample `i mod len`). No effect on other sources.
    pub fn set_looping(&mut self, looping: bool) {
        if let Feed::Clocked {
            generator: Generator::File { looping: l, .. },
            ..
        } = &mut self.feed
        {
            *l = looping;
        }
    }

    /// Samples produced so far by a clocked source (pushed or dropped), i.e. its clock in samples;
    /// `None` for live input.
    pub fn position(&self) -> Option<u64> {
        match &self.feed {
            Feed::Clocked { position, .. } => Some(*position),
            Feed::Live(_) => None,
        }
    }

    /// Capacity of the ring, in mono samples.
    pub fn ring_capacity(&self) -> usize {
        self.consumer.buffer().capacity()
    }
}

/// Lists the input device names of cpal's default host (for messages and the UI). Empty when the
/// host cannot enumerate devices.
pub fn input_device_names() -> Vec<String> {
    capture::input_device_names_of(&cpal::default_host())
}

/// Averages interleaved frames of `channels` samples into mono, appending to `out`:
/// `out[i] = (1/channels) Σ_c interleaved[i·channels + c]`. A trailing partial frame is ignored;
/// `channels == 0` appends nothing.
pub fn mix_to_mono(interleaved: &[f32], channels: usize, out: &mut Vec<f32>) {
    if channels == 0 {
        return;
    }
    if channels == 1 {
        out.extend_from_slice(interleaved);
        return;
    }
    let inv = 1.0 / channels as f32;
    out.extend(
        interleaved
            .chunks_exact(channels)
            .map(|frame| frame.iter().sum::<f32>() * inv),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mix_interleaved_stereo_to_mono() {
        let mut out = Vec::new();
        mix_to_mono(&[1.0, 0.0, -0.5, -0.25, 0.2, 0.2, 0.9], 2, &mut out);
        // The trailing 0.9 is half a frame and is ignored.
        assert_eq!(out, vec![0.5, -0.375, 0.2]);
        let mut mono = Vec::new();
        mix_to_mono(&[0.1, 0.2], 1, &mut mono);
        assert_eq!(mono, vec![0.1, 0.2]);
        let mut none = Vec::new();
        mix_to_mono(&[0.1, 0.2], 0, &mut none);
        assert!(none.is_empty());
    }

    #[test]
    fn selection_from_cli() {
        assert_eq!(AudioSelection::from_cli("default"), AudioSelection::Default);
        assert_eq!(AudioSelection::from_cli(""), AudioSelection::Default);
        assert_eq!(
            AudioSelection::from_cli("Synthetic"),
            AudioSelection::Synthetic
        );
        assert_eq!(
            AudioSelection::from_cli("Monitor of Null Output"),
            AudioSelection::Device("Monitor of Null Output".into())
        );
    }

    #[test]
    fn zero_ring_capacity_is_an_error() {
        let err = AudioSource::open(&AudioSelection::Synthetic, 0).unwrap_err();
        assert!(matches!(err, AudioError::InvalidRingCapacity { .. }));
        assert!(err.to_string().contains("capacity 0"));
    }

    #[test]
    fn synthetic_advance_pushes_floor_t_times_rate() {
        let mut src = AudioSource::open(&AudioSelection::Synthetic, DEFAULT_RING_CAPACITY).unwrap();
        assert_eq!(src.kind(), "synthetic");
        assert_eq!(src.sample_rate(), 48_000);
        assert_eq!(src.label(), "synthetic (48000 Hz)");
        assert!(src.notice().is_none());
        let mut got = Vec::new();
        // Times chosen so that t·48000 is not an integer: 0.0100001 s → 480.0048 → 480.
        let steps = [
            (0.0100001, 480u64),
            (0.0166667, 800), // 800.0016
            (0.1, 4800),
            (0.1, 4800),         // same time: nothing new
            (0.05, 4800),        // going back: nothing
            (1.23456789, 59259), // 59259.25
        ];
        for (t, total) in steps {
            src.advance_to(t);
            src.drain_into(&mut got);
            assert_eq!(got.len() as u64, total, "after advance_to({t})");
            assert_eq!(src.position(), Some(total));
        }
        assert_eq!(src.dropped(), 0);
        assert!(!src.finished());
        // The stream is the synthesizer's output, whatever the chunking.
        let mut reference = vec![0.0; got.len()];
        synth::Synth::new().fill(&mut reference);
        assert_eq!(got, reference);
        src.advance_to(f64::NAN);
        src.advance_to(f64::INFINITY);
        assert_eq!(src.position(), Some(59259));
    }

    #[test]
    fn synthetic_ring_overflow_is_counted_and_clock_moves_on() {
        let mut src = AudioSource::open(&AudioSelection::Synthetic, 1000).unwrap();
        src.advance_to(0.05); // 2400 samples, 1000 fit
        assert_eq!(src.dropped(), 1400);
        let mut got = Vec::new();
        src.drain_into(&mut got);
        assert_eq!(got.len(), 1000);
        let mut reference = vec![0.0; 1000];
        synth::Synth::new().fill(&mut reference);
        assert_eq!(got, reference);
        // Next samples continue at the clock position (sample 2400), not where pushing stopped.
        src.advance_to(0.06); // 2880
        got.clear();
        src.drain_into(&mut got);
        assert_eq!(got.len(), 480);
        let mut s = synth::Synth::new();
        s.seek(2400);
        let mut expected = vec![0.0; 480];
        s.fill(&mut expected);
        assert_eq!(got, expected);
        assert_eq!(src.dropped(), 1400);
    }

    #[test]
    fn stream_error_and_finished_for_synthetic() {
        let src = AudioSource::open(&AudioSelection::Synthetic, 16).unwrap();
        assert!(src.stream_error().is_none());
        assert!(!src.finished());
        assert_eq!(src.ring_capacity(), 16);
    }
}
