//! Audio input for the spectrogram: one path from any source to the analysis.
//!
//! Every source feeds ONE single-producer/single-consumer [`rtrb`] ring of **mono `f32` samples in
//! [-1, 1]** at the source's own sample rate ([`AudioSource::sample_rate`]). "Mono" is the
//! [`ChannelChoice`]: the mean of the channels ([`ChannelChoice::Mix`], the default) or one
//! channel.
//!
//! - live input ([`capture`]): the cpal data callback converts whatever sample format the device
//!   delivers, takes the chosen channel (or averages) and pushes; it never allocates, locks, logs
//!   or blocks. Watchdogs report a device that stops delivering or disappears
//!   ([`AudioSource::stream_error`], [`AudioSource::status`]); the time without data is handed
//!   to the analysis as a gap ([`AudioSource::gap_samples`]); [`AudioSource::reopen`] opens it
//!   again without restarting. A live stream that is lost (stream error, device gone, no data
//!   for [`reconnect::LOST_AFTER`]) is reopened by itself, same device, with backoff, off the
//!   frame thread ([`reconnect`]); the time without data is a gap.
//! - file ([`file`](mod@file), decoded fully into memory by symphonia when opened) and synthetic
//!   ([`synth`]) sources are *clocked*: the frame loop calls [`AudioSource::advance_to`] with the
//!   time since the source started, and exactly `floor(t · sample_rate)` samples have been
//!   produced after that call (while playing, never paused or seeked). With the simulated clock
//!   of headless mode the sample stream is therefore deterministic. They have a transport: pause,
//!   seek, loop, and a fast mode that analyses as fast as the ring allows.
//!
//! The frame loop drains the ring with [`AudioSource::drain_into`] and feeds [`stft::Stft`].
//! Samples that do not fit in the ring are dropped (the newest ones: an SPSC producer cannot
//! discard what the consumer has not read) and counted, see [`AudioSource::dropped`].

pub mod capture;
pub mod file;
pub mod reconnect;
pub mod stft;
pub mod synth;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Instant, SystemTime};

use rtrb::{Consumer, Producer, RingBuffer};

pub use capture::{InputDeviceInfo, input_devices};
pub use stft::WindowKind;
pub use synth::SynthSignal;

/// Ring capacity (in mono samples) suggested for [`AudioSource::open`]: 2^20 samples, about 21.8 s
/// at 48 kHz, 4 MiB of `f32`.
pub const DEFAULT_RING_CAPACITY: usize = 1 << 20;

/// Which channel of a multi-channel source becomes the mono stream. 0-based inside; the command
/// line (`--audio-channel`) and [`Display`](std::fmt::Display) are 1-based.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ChannelChoice {
    /// The mean of all channels, `(1/C)·Σ_c x_c` (a tone on one channel of a stereo pair reads
    /// 20·log10(1/2) = −6.02 dB lower than that channel alone).
    #[default]
    Mix,
    /// Channel `i`, 0-based (0 = left, 1 = right).
    Channel(usize),
}

impl ChannelChoice {
    /// Parses `--audio-channel`: `mix` (or `all`), `left` (= 1), `right` (= 2), or a 1-based
    /// channel number `N` ≥ 1. Case-insensitive.
    ///
    /// # Errors
    ///
    /// One line saying what is accepted.
    pub fn from_cli(s: &str) -> Result<ChannelChoice, String> {
        let v = s.trim().to_ascii_lowercase();
        match v.as_str() {
            "mix" | "all" => Ok(ChannelChoice::Mix),
            "left" | "l" => Ok(ChannelChoice::Channel(0)),
            "right" | "r" => Ok(ChannelChoice::Channel(1)),
            _ => match v.parse::<usize>() {
                Ok(n) if (1..=1024).contains(&n) => Ok(ChannelChoice::Channel(n - 1)),
                _ => Err(format!(
                    "'{s}' is not a channel: use mix, left, right or a channel number 1..=1024"
                )),
            },
        }
    }
}

impl std::fmt::Display for ChannelChoice {
    /// `mix` or the 1-based channel number.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ChannelChoice::Mix => f.write_str("mix"),
            ChannelChoice::Channel(c) => write!(f, "{}", c + 1),
        }
    }
}

/// How a selection is opened, besides the selection itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AudioOptions {
    /// Channel kept (or mix) for live input and files. Fixed per stream: reopen to change it.
    pub channel: ChannelChoice,
    /// Seed of the synthetic noises.
    pub seed: u64,
    /// Live input only: capture in this sample format instead of the device's default one (the
    /// same rate and channels); `None` keeps the default. PulseAudio offers U8, I16, I24, I32 and
    /// F32 on every source and converts.
    pub sample_format: Option<cpal::SampleFormat>,
}

impl Default for AudioOptions {
    /// Mix, seed 1, the device's own sample format.
    fn default() -> AudioOptions {
        AudioOptions {
            channel: ChannelChoice::Mix,
            seed: 1,
            sample_format: None,
        }
    }
}

/// What the user asked for (from CLI `--audio default|synthetic[:SIGNAL]|NAME` and
/// `--audio-file PATH`).
#[derive(Clone, Debug, PartialEq)]
pub enum AudioSelection {
    /// The default input device of cpal's default host; falls back to [`AudioSelection::Synthetic`]
    /// (with a [`AudioSource::notice`]) when it cannot be opened.
    Default,
    /// The built-in deterministic generator, [`synth::Synth`], with its default signal
    /// ([`SynthSignal::ChirpTones`]).
    Synthetic,
    /// The built-in generator with a chosen signal.
    Signal(SynthSignal),
    /// An input device chosen by name: exact match first, else a case-insensitive substring.
    Device(String),
    /// An audio file (WAV, FLAC, Ogg Vorbis, MP3), decoded fully when opened and played at
    /// real-time rate.
    File(PathBuf),
}

impl AudioSelection {
    /// Parses the value of `--audio`: `default`, `synthetic` (or `synth`) and
    /// `synthetic:SIGNAL` (any case; signals: `sine`, `two-tone`, `chirp`, `chirp-tones`,
    /// `white`, `pink`, see [`SynthSignal::from_name`]) are the keywords, anything else is a
    /// device name. An empty string means `Default`. An unknown signal name is taken as a device
    /// name (use [`AudioSelection::parse`] to reject it).
    pub fn from_cli(value: &str) -> AudioSelection {
        Self::parse(value).unwrap_or_else(|_| AudioSelection::Device(value.trim().to_string()))
    }

    /// As [`from_cli`](Self::from_cli), but `synthetic:NAME` with an unknown signal name is an
    /// error listing the signals.
    ///
    /// # Errors
    ///
    /// One line naming the bad signal and the accepted ones.
    pub fn parse(value: &str) -> Result<AudioSelection, String> {
        let v = value.trim();
        if v.is_empty() || v.eq_ignore_ascii_case("default") {
            return Ok(AudioSelection::Default);
        }
        if v.eq_ignore_ascii_case("synthetic") || v.eq_ignore_ascii_case("synth") {
            return Ok(AudioSelection::Synthetic);
        }
        if let Some((kw, sig)) = v.split_once(':')
            && (kw.eq_ignore_ascii_case("synthetic") || kw.eq_ignore_ascii_case("synth"))
        {
            return match SynthSignal::from_name(sig) {
                Some(SynthSignal::ChirpTones) => Ok(AudioSelection::Synthetic),
                Some(s) => Ok(AudioSelection::Signal(s)),
                None => {
                    let names: Vec<_> = SynthSignal::ALL.iter().map(|s| s.name()).collect();
                    Err(format!(
                        "unknown synthetic signal '{sig}'; signals: {}",
                        names.join(", ")
                    ))
                }
            };
        }
        Ok(AudioSelection::Device(v.to_string()))
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
    /// No decoder recognises the file (not WAV, FLAC, Ogg Vorbis or MP3), or its codec is not
    /// supported.
    #[error("audio file '{}': unsupported or unrecognised format: {reason}", .path.display())]
    UnsupportedFormat {
        /// The path as given.
        path: PathBuf,
        /// What the decoder said.
        reason: String,
    },
    /// A RIFF/WAVE file whose chunks cannot be read even leniently (see
    /// [`file::decode_file`]): no `fmt ` or `data` chunk, a chunk past the end of the file, a
    /// `fmt ` chunk too short for its format.
    #[error("audio file '{}': malformed WAV header: {reason}", .path.display())]
    MalformedWav {
        /// The path as given.
        path: PathBuf,
        /// What is wrong, one line.
        reason: String,
    },
    /// The file was recognised but not one sample could be decoded from it.
    #[error("audio file '{}': nothing could be decoded: {reason}", .path.display())]
    Decode {
        /// The path as given.
        path: PathBuf,
        /// The first decoder error.
        reason: String,
    },
    /// The header says 0 Hz.
    #[error("audio file '{}': sample rate is 0 Hz", .path.display())]
    ZeroSampleRate {
        /// The path as given.
        path: PathBuf,
    },
    /// The header says 0 channels.
    #[error("audio file '{}': zero channels", .path.display())]
    ZeroChannels {
        /// The path as given.
        path: PathBuf,
    },
    /// The file decodes to no sample frames.
    #[error("audio file '{}': contains no audio samples", .path.display())]
    NoSamples {
        /// The path as given.
        path: PathBuf,
    },
    /// The chosen channel does not exist in the file or on the device.
    #[error("audio {source_name}: channel {channel} requested, it has {channels} channel(s)")]
    InvalidChannel {
        /// `file '<path>'` or `device '<name>'`.
        source_name: String,
        /// The channel asked for, 1-based.
        channel: usize,
        /// Channels available.
        channels: usize,
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
        /// cpal's message (or the unsupported sample format or channel).
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

/// What a source is doing, for the UI ([`AudioSource::status`]).
#[derive(Clone, Debug, PartialEq)]
pub enum SourceStatus {
    /// Delivering samples (or ready to, for a clocked source).
    Running,
    /// Paused by [`AudioSource::set_paused`].
    Paused,
    /// A file source reached its end (not looping).
    Finished,
    /// A live source has a problem: the stream reported an error, the device left the device
    /// list, or no data came for [`capture::STALE_AFTER`] (`"no data from <device> for N s"`).
    Problem(String),
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
        /// Samples produced so far (pushed or dropped).
        produced: u64,
        /// Index of the next sample of the signal or file (in `0..len` for a looping file).
        cursor: u64,
        /// Clock origin: at time `t_base` (seconds), `produced` was `pos_base`.
        t_base: f64,
        pos_base: u64,
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
    warning: Option<String>,
    selection: AudioSelection,
    options: AudioOptions,
    paused: bool,
    fast: bool,
    /// Gap samples counted but not yet handed out by `gap_samples`.
    gap_pending: u64,
    /// Up to when a stale live stream's gap has been counted.
    gap_until: Option<Instant>,
    /// Clocked sources: when `advance_to` last produced samples.
    last_advance: Option<Instant>,
    /// Live sources: reopen by itself when lost (default `true`).
    auto_reconnect: bool,
    /// Live sources: the reconnection under way, if any.
    reconnect: Option<reconnect::Reconnect>,
    /// Live sources: what reopens the device (set when the stream opened).
    target: Option<reconnect::Target>,
    /// Live sources: the automatic reconnection counters.
    reopen_stats: ReopenStats,
    /// Samples dropped by the streams replaced by a reconnection.
    dropped_base: u64,
    /// Samples handed out by `drain_into` (for the sample clock across reconnections).
    delivered: u64,
    /// Sample-clock offset of the current live stream (its frame 0 in the source's count).
    frames_base: u64,
    /// The sample rate changed at a reconnection and nobody asked yet.
    rate_changed: bool,
}

/// Counters of the automatic reconnection of a live source ([`AudioSource::reopen_stats`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ReopenStats {
    /// Streams lost (each one starts a reconnection).
    pub losses: u64,
    /// Reconnections that succeeded.
    pub reopens: u64,
    /// Wall-clock time of the last reopen.
    pub last_reopen: Option<SystemTime>,
    /// Wall-clock time of the first sample handed out after the last reopen.
    pub first_data_after_reopen: Option<SystemTime>,
    /// Samples handed out since the last reopen.
    pub samples_since_reopen: u64,
    /// From the loss being noticed to the last reopen, seconds.
    pub last_outage_s: Option<f64>,
    /// Why the last stream was lost.
    pub last_loss: Option<String>,
}

impl std::fmt::Debug for AudioSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AudioSource")
            .field("label", &self.label)
            .field("kind", &self.kind)
            .field("sample_rate", &self.sample_rate)
            .field("notice", &self.notice)
            .field("warning", &self.warning)
            .field("dropped", &self.dropped())
            .finish_non_exhaustive()
    }
}

/// Size of the chunks in which the synthesizer is rendered by `advance_to` (samples).
const SYNTH_CHUNK: usize = 4096;

impl AudioSource {
    /// `open_with(sel, ring_capacity, &AudioOptions::default())`: mix of all channels, seed 1.
    ///
    /// # Errors
    ///
    /// As [`open_with`](Self::open_with).
    pub fn open(sel: &AudioSelection, ring_capacity: usize) -> Result<AudioSource, AudioError> {
        Self::open_with(sel, ring_capacity, &AudioOptions::default())
    }

    /// Opens the selection.
    ///
    /// - `Default`: the default input device of cpal's default host (PulseAudio when a server
    ///   runs, else ALSA). If there is none, or it cannot be opened, the synthetic source is used
    ///   instead and [`notice`](Self::notice) says so: "No audio input could be opened (\<why\>);
    ///   showing the built-in synthetic source". Only the default device is tried (on ALSA the
    ///   other "devices" include `null`, which would open and deliver silence).
    /// - `Device(name)`: exact match on the device name (or the host's device id, e.g. the
    ///   PulseAudio source name `viz.monitor`), else a case-insensitive substring of exactly one
    ///   name. Unknown → [`AudioError::DeviceNotFound`] listing the input devices; several
    ///   substring matches → [`AudioError::DeviceAmbiguous`]; no fallback.
    /// - `File(path)`: decoded fully here, on the calling thread ([`file::decode_file`]; its
    ///   errors surface here; a partly decodable file opens with a [`warning`](Self::warning)),
    ///   then played at real-time rate by [`advance_to`](Self::advance_to). The whole file is
    ///   held in memory as mono `f32` (4 bytes per frame: 11 MB per minute at 48 kHz).
    /// - `Synthetic` / `Signal(s)`: [`synth::Synth`] at [`synth::SYNTH_SAMPLE_RATE`] with
    ///   `options.seed`.
    ///
    /// `ring_capacity` is in mono samples ([`DEFAULT_RING_CAPACITY`] is a good value).
    ///
    /// # Errors
    ///
    /// [`AudioError::InvalidRingCapacity`] for 0; for `File`, every error of
    /// [`file::decode_file`] and [`AudioError::InvalidChannel`]; for `Device`,
    /// [`AudioError::DeviceNotFound`], [`AudioError::DeviceAmbiguous`],
    /// [`AudioError::DeviceList`], [`AudioError::DeviceOpen`] (also for a channel or a forced
    /// sample format the device lacks). `Default`, `Synthetic` and `Signal` never fail (with a
    /// valid capacity).
    pub fn open_with(
        sel: &AudioSelection,
        ring_capacity: usize,
        options: &AudioOptions,
    ) -> Result<AudioSource, AudioError> {
        if ring_capacity == 0 {
            return Err(AudioError::InvalidRingCapacity {
                capacity: ring_capacity,
            });
        }
        let mut src = match sel {
            AudioSelection::Synthetic => {
                Self::synthetic(ring_capacity, SynthSignal::ChirpTones, options.seed, None)
            }
            AudioSelection::Signal(s) => Self::synthetic(ring_capacity, *s, options.seed, None),
            AudioSelection::File(path) => Self::open_file(path, ring_capacity, options.channel)?,
            AudioSelection::Device(name) => {
                let device = capture::find_input_device(name)?;
                let parts = capture::LiveCapture::open(
                    &device,
                    ring_capacity,
                    options.channel,
                    options.sample_format,
                )
                .map_err(|e| AudioError::DeviceOpen {
                    name: capture::device_name(&device),
                    reason: e,
                })?;
                Self::from_live(parts)
            }
            AudioSelection::Default => {
                match capture::open_default(ring_capacity, options.channel, options.sample_format) {
                    Ok(parts) => Self::from_live(parts),
                    Err(why) => {
                        let notice = format!(
                            "No audio input could be opened ({why}); showing the built-in synthetic source"
                        );
                        log::warn!("{notice}");
                        Self::synthetic(
                            ring_capacity,
                            SynthSignal::ChirpTones,
                            options.seed,
                            Some(notice),
                        )
                    }
                }
            }
        };
        // The synthetic source is mono: a channel other than the first is named, not silently
        // ignored (it still plays, so a UI switch to it never fails on the channel).
        if let (true, ChannelChoice::Channel(c)) = (src.kind == "synthetic", options.channel)
            && c > 0
        {
            let note = format!(
                "audio channel {} ignored: the synthetic source has 1 channel",
                c + 1
            );
            log::warn!("{note}");
            src.notice = Some(match src.notice.take() {
                Some(n) => format!("{n}; {note}"),
                None => note,
            });
        }
        src.selection = sel.clone();
        src.options = *options;
        if let Feed::Live(live) = &src.feed {
            let key = if live.device_id().is_empty() {
                live.device_name().to_string()
            } else {
                live.device_id().to_string()
            };
            src.target = Some(reconnect::Target {
                key,
                name: live.device_name().to_string(),
                ring_capacity,
                channel: options.channel,
                format: options.sample_format,
            });
        }
        Ok(src)
    }

    fn base(
        feed: Feed,
        consumer: Consumer<f32>,
        dropped: Arc<AtomicU64>,
        sample_rate: u32,
        label: String,
        kind: &'static str,
    ) -> AudioSource {
        AudioSource {
            feed,
            consumer,
            dropped,
            sample_rate,
            label,
            kind,
            notice: None,
            warning: None,
            selection: AudioSelection::Synthetic,
            options: AudioOptions::default(),
            paused: false,
            fast: false,
            gap_pending: 0,
            gap_until: None,
            last_advance: None,
            auto_reconnect: true,
            reconnect: None,
            target: None,
            reopen_stats: ReopenStats::default(),
            dropped_base: 0,
            delivered: 0,
            frames_base: 0,
            rate_changed: false,
        }
    }

    fn clocked(producer: Producer<f32>, generator: Generator) -> Feed {
        Feed::Clocked {
            producer,
            generator,
            produced: 0,
            cursor: 0,
            t_base: 0.0,
            pos_base: 0,
            scratch: Vec::new(),
        }
    }

    fn from_live((live, consumer, dropped): capture::LiveParts) -> AudioSource {
        let sample_rate = live.sample_rate();
        let label = live.label();
        Self::base(
            Feed::Live(live),
            consumer,
            dropped,
            sample_rate,
            label,
            "live",
        )
    }

    fn synthetic(
        ring_capacity: usize,
        signal: SynthSignal,
        seed: u64,
        notice: Option<String>,
    ) -> AudioSource {
        let (producer, consumer) = RingBuffer::new(ring_capacity);
        let label = match signal {
            SynthSignal::ChirpTones => format!("synthetic ({} Hz)", synth::SYNTH_SAMPLE_RATE),
            s => format!("synthetic: {s} ({} Hz)", synth::SYNTH_SAMPLE_RATE),
        };
        let mut src = Self::base(
            Self::clocked(
                producer,
                Generator::Synth(synth::Synth::with_signal(signal, seed)),
            ),
            consumer,
            Arc::new(AtomicU64::new(0)),
            synth::SYNTH_SAMPLE_RATE,
            label,
            "synthetic",
        );
        src.notice = notice;
        src
    }

    fn open_file(
        path: &Path,
        ring_capacity: usize,
        channel: ChannelChoice,
    ) -> Result<AudioSource, AudioError> {
        let decoded = file::decode_file(path)?;
        let channels = usize::from(decoded.channels);
        let mut mono = Vec::with_capacity(decoded.samples.len() / channels.max(1));
        match channel {
            ChannelChoice::Mix => mix_to_mono(&decoded.samples, channels, &mut mono),
            ChannelChoice::Channel(c) if c < channels => {
                mono.extend(decoded.samples.chunks_exact(channels).map(|f| f[c]));
            }
            ChannelChoice::Channel(c) => {
                return Err(AudioError::InvalidChannel {
                    source_name: format!("file '{}'", path.display()),
                    channel: c + 1,
                    channels,
                });
            }
        }
        drop(decoded.samples);
        let (producer, consumer) = RingBuffer::new(ring_capacity);
        let ch = match channel {
            ChannelChoice::Mix => String::new(),
            ChannelChoice::Channel(c) => format!(", channel {}", c + 1),
        };
        let label = format!(
            "file: {} ({} Hz, {} ch{ch})",
            path.display(),
            decoded.sample_rate,
            decoded.channels
        );
        let mut src = Self::base(
            Self::clocked(
                producer,
                Generator::File {
                    samples: mono,
                    looping: false,
                },
            ),
            consumer,
            Arc::new(AtomicU64::new(0)),
            decoded.sample_rate,
            label,
            "file",
        );
        if let Some(w) = &decoded.warning {
            log::warn!("audio file '{}': {w}", path.display());
        }
        src.warning = decoded.warning;
        Ok(src)
    }

    /// Sample rate of the mono samples in the ring, in Hz (never 0).
    pub fn sample_rate(&self) -> u32 {
        self.sample_rate
    }

    /// One line for the UI and reports: `"live: <device name> (48000 Hz, 2 ch, I16)"`,
    /// `"synthetic (48000 Hz)"`, `"synthetic: pink (48000 Hz)"` or
    /// `"file: <path> (44100 Hz, 1 ch)"` (the file's own channel count; the ring is always mono).
    /// When one channel is taken, `", channel N"` (1-based) precedes the closing parenthesis.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// Short kind for reports: `"live"` | `"synthetic"` | `"file"`.
    pub fn kind(&self) -> &'static str {
        self.kind
    }

    /// The selection this source was opened from (what [`reopen`](Self::reopen) opens again).
    pub fn selection(&self) -> &AudioSelection {
        &self.selection
    }

    /// The options this source was opened with.
    pub fn options(&self) -> &AudioOptions {
        &self.options
    }

    /// A visible one-line notice for the user, set when `Default` fell back to the synthetic
    /// source, or when a channel other than the first was asked of the (mono) synthetic source;
    /// `None` otherwise.
    pub fn notice(&self) -> Option<&str> {
        self.notice.as_deref()
    }

    /// A one-line warning about a file that was only partly decodable (truncated, corrupt
    /// packets): what was skipped or where decoding stopped. `None` for clean files and other
    /// sources. The decodable part plays normally.
    pub fn warning(&self) -> Option<&str> {
        self.warning.as_deref()
    }

    /// For clocked sources (file, synthetic), while playing: produces every sample whose time is
    /// `< t_seconds` since the source started, so that after the call the total produced is
    /// `floor(t_seconds · sample_rate)` (capped at the file's end unless looping; pauses and
    /// seeks shift the origin: time spent paused produces nothing, and a seek moves where the
    /// next samples come from, not how many). Samples that do not fit in the ring are counted in
    /// [`dropped`](Self::dropped), the clock still moves past them.
    ///
    /// In fast mode ([`set_fast`](Self::set_fast)) the clock is ignored: every call pushes as
    /// many samples as the ring has room for (up to the file's end), so nothing is dropped.
    ///
    /// Going back in time, NaN or infinite `t_seconds` do nothing. No-op for live input.
    pub fn advance_to(&mut self, t_seconds: f64) {
        let sr = f64::from(self.sample_rate);
        let (paused, fast) = (self.paused, self.fast);
        let Feed::Clocked {
            producer,
            generator,
            produced,
            cursor,
            t_base,
            pos_base,
            scratch,
        } = &mut self.feed
        else {
            return;
        };
        if !t_seconds.is_finite() {
            return;
        }
        let rebase = |t_base: &mut f64, pos_base: &mut u64, produced: u64| {
            if t_seconds > *t_base {
                *t_base = t_seconds;
                *pos_base = produced;
            }
        };
        if paused {
            rebase(t_base, pos_base, *produced);
            return;
        }
        let remaining = match generator {
            Generator::File {
                samples,
                looping: false,
            } => (samples.len() as u64).saturating_sub(*cursor),
            _ => u64::MAX,
        };
        let room = producer.slots() as u64;
        let wanted = if fast {
            room.min(remaining)
        } else {
            if t_seconds <= *t_base {
                return;
            }
            // `as` saturates for values beyond u64::MAX.
            let target = pos_base.saturating_add(((t_seconds - *t_base) * sr).floor() as u64);
            if target <= *produced {
                return;
            }
            (target - *produced).min(remaining)
        };
        let to_push = wanted.min(room) as usize;
        match generator {
            Generator::Synth(synth) => {
                // `to_push` samples starting at `cursor` (the synthesizer may lag after samples
                // were dropped).
                synth.seek(*cursor);
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
                *cursor = cursor.saturating_add(wanted);
            }
            Generator::File { samples, looping } => {
                let len = samples.len() as u64;
                let mut pos = *cursor;
                let mut left = to_push as u64;
                while left > 0 && len > 0 {
                    let start = (pos % len) as usize;
                    let n = (left as usize).min(samples.len() - start);
                    let (pushed, _) = producer.push_partial_slice(&samples[start..start + n]);
                    debug_assert_eq!(pushed.len(), n);
                    pos += n as u64;
                    left -= n as u64;
                }
                *cursor = if *looping && len > 0 {
                    (*cursor + wanted) % len
                } else {
                    (*cursor + wanted).min(len)
                };
            }
        }
        let lost = wanted - to_push as u64;
        if lost > 0 {
            self.dropped.fetch_add(lost, Ordering::Relaxed);
        }
        *produced += wanted;
        if wanted > 0 {
            self.last_advance = Some(Instant::now());
        }
        if fast || wanted == remaining {
            // Fast mode, or the file ran out: the clock restarts from here, so that leaving fast
            // mode or seeking back plays on from the next call without a burst.
            *t_base = t_seconds.max(*t_base);
            *pos_base = *produced;
        }
    }

    /// Drains every available sample from the ring into `out` (appends). Never blocks. For a
    /// live device that left the device list (its stream now carries another source's samples,
    /// see [`capture`]) the samples are discarded and counted as a gap instead.
    ///
    /// A live source also runs its reconnection here (see [`reconnect`]): it notices a lost
    /// stream, starts and collects reopen attempts on a background thread, and swaps in the new
    /// stream; none of it blocks. While reconnecting, what the old stream delivers is a gap.
    pub fn drain_into(&mut self, out: &mut Vec<f32>) {
        self.maintain_live();
        let n = self.consumer.slots();
        if n == 0 {
            return;
        }
        let discard = self.reconnect.is_some()
            || matches!(&self.feed, Feed::Live(live) if live.device_gone());
        if let Ok(chunk) = self.consumer.read_chunk(n) {
            if discard {
                self.gap_pending += n as u64;
            } else {
                let (a, b) = chunk.as_slices();
                out.reserve(a.len() + b.len());
                out.extend_from_slice(a);
                out.extend_from_slice(b);
                self.delivered += n as u64;
                let st = &mut self.reopen_stats;
                if st.reopens > 0 {
                    st.samples_since_reopen += n as u64;
                    if st.first_data_after_reopen.is_none() {
                        st.first_data_after_reopen = Some(SystemTime::now());
                    }
                }
            }
            chunk.commit_all();
        }
    }

    /// Why the live stream counts as lost now, if it does: a stream error, the device gone
    /// from the device list, or no data for [`reconnect::LOST_AFTER`] while not paused.
    fn loss_reason(&self) -> Option<String> {
        let Feed::Live(live) = &self.feed else {
            return None;
        };
        if let Some(e) = live.last_error() {
            return Some(e);
        }
        if live.device_gone() {
            return Some("the device left the device list".to_string());
        }
        let quiet = live.silence_for();
        (!self.paused && quiet >= reconnect::LOST_AFTER)
            .then(|| format!("no data for {:.1} s", quiet.as_secs_f64()))
    }

    /// The live reconnection state machine, polled once per drain; never blocks.
    fn maintain_live(&mut self) {
        if !self.auto_reconnect || !matches!(self.feed, Feed::Live(_)) {
            return;
        }
        let Some(rc) = &mut self.reconnect else {
            if let (Some(reason), Some(target)) = (self.loss_reason(), &self.target) {
                self.reopen_stats.losses += 1;
                self.reopen_stats.last_loss = Some(reason.clone());
                self.reconnect = Some(reconnect::Reconnect::start(target.clone(), reason));
            }
            return;
        };
        let Some(done) = rc.poll() else {
            return;
        };
        let reason = rc.reason().to_string();
        self.reconnect = None;
        let (live, consumer, dropped) = done.parts;
        let old_dropped = self.dropped.load(Ordering::Relaxed);
        self.dropped_base += old_dropped;
        self.frames_base = self.delivered + self.dropped_base;
        if live.sample_rate() != self.sample_rate {
            self.rate_changed = true;
        }
        self.sample_rate = live.sample_rate();
        self.label = live.label();
        let old = std::mem::replace(&mut self.feed, Feed::Live(live));
        // Dropping a stream of a dead server may wait on its threads: not on the frame thread.
        let _ = std::thread::Builder::new()
            .name("vizdeck-audio-drop".into())
            .spawn(move || drop(old));
        self.consumer = consumer;
        self.dropped = dropped;
        self.gap_until = None;
        if self.paused
            && let Feed::Live(live) = &mut self.feed
        {
            live.set_paused(true);
        }
        let st = &mut self.reopen_stats;
        st.reopens += 1;
        st.last_reopen = Some(done.at);
        st.first_data_after_reopen = None;
        st.samples_since_reopen = 0;
        st.last_outage_s = Some(done.after.as_secs_f64());
        let note = format!(
            "audio input '{}' was lost ({reason}) and reopened after {:.1} s ({} reconnection(s) so far)",
            self.target.as_ref().map_or("", |t| t.name.as_str()),
            done.after.as_secs_f64(),
            st.reopens
        );
        self.notice = Some(note);
    }

    /// Turns the automatic reconnection of a lost live stream on (the default) or off.
    pub fn set_auto_reconnect(&mut self, on: bool) {
        self.auto_reconnect = on;
        if !on {
            self.reconnect = None;
        }
    }

    /// Whether a lost live stream is being reopened now.
    pub fn reconnecting(&self) -> bool {
        self.reconnect.is_some()
    }

    /// The automatic reconnection counters (all zero for clocked sources).
    pub fn reopen_stats(&self) -> &ReopenStats {
        &self.reopen_stats
    }

    /// `true` once after a reconnection opened the device at another sample rate (the analysis
    /// must be rebuilt).
    pub fn take_rate_changed(&mut self) -> bool {
        std::mem::take(&mut self.rate_changed)
    }

    /// Samples of time for which a live source delivered nothing usable since the previous call:
    /// while no data has come for [`capture::STALE_AFTER`] (not paused), the whole silent span
    /// (counted once), plus the samples discarded because the device is gone. The analysis should
    /// show this many samples as a gap (no data), not as silence, and restart its frames after
    /// it. Always 0 for clocked sources. Call once per frame, after [`drain_into`](Self::drain_into).
    pub fn gap_samples(&mut self) -> u64 {
        let mut gap = std::mem::take(&mut self.gap_pending);
        if let Feed::Live(live) = &self.feed {
            let quiet = live.silence_for();
            if quiet >= capture::STALE_AFTER {
                let now = Instant::now();
                let start = now.checked_sub(quiet).unwrap_or(now);
                let from = match self.gap_until {
                    Some(u) if u > start => u,
                    _ => start,
                };
                gap += (now.saturating_duration_since(from).as_secs_f64()
                    * f64::from(self.sample_rate)) as u64;
                self.gap_until = Some(now);
            } else {
                self.gap_until = None;
            }
        }
        gap
    }

    /// The sample clock: (samples delivered so far, pushed or dropped; the instant the newest of
    /// them became available). Live input: the last data callback (see
    /// [`capture::LiveCapture::sample_clock`]); clocked sources: the last `advance_to` that
    /// produced samples. Used to measure latency from capture to present. `None` before any.
    pub fn sample_clock(&self) -> Option<(u64, Instant)> {
        match &self.feed {
            Feed::Live(live) => live
                .sample_clock()
                .map(|(frames, at)| (self.frames_base + frames, at)),
            Feed::Clocked { produced, .. } => self.last_advance.map(|t| (*produced, t)),
        }
    }

    /// Samples that did not fit in the ring, total since open (counted by the producer with an
    /// atomic: the cpal callback for live input, `advance_to` for clocked sources).
    pub fn dropped(&self) -> u64 {
        self.dropped_base + self.dropped.load(Ordering::Relaxed)
    }

    /// The current problem of a live source, one line, if any: the last stream error from cpal's
    /// error callback; "audio device '\<name\>' is gone (...)" once the device left the device list;
    /// "no data from \<device\> for N.N s" when nothing came for [`capture::STALE_AFTER`] while not
    /// paused. Always `None` for clocked sources.
    ///
    /// While a lost stream is being reopened: `"audio device 'NAME' lost (REASON) N s ago;
    /// reconnecting: ..."`.
    pub fn stream_error(&self) -> Option<String> {
        if let Some(rc) = &self.reconnect {
            return Some(rc.status());
        }
        match &self.feed {
            Feed::Live(live) => live.problem(),
            Feed::Clocked { .. } => None,
        }
    }

    /// What the source is doing: a live problem ([`stream_error`](Self::stream_error)) first,
    /// then paused, finished (file at its end, not looping), else running.
    pub fn status(&self) -> SourceStatus {
        if let Some(p) = self.stream_error() {
            return SourceStatus::Problem(p);
        }
        if self.paused {
            SourceStatus::Paused
        } else if self.finished() {
            SourceStatus::Finished
        } else {
            SourceStatus::Running
        }
    }

    /// Opens the same selection with the same options and ring capacity again and replaces this
    /// source with it (a live device that disappeared and came back, or `Default` that fell back
    /// to the synthetic source). The dropped-sample count starts over; the sample rate may change.
    ///
    /// # Errors
    ///
    /// As [`open_with`](Self::open_with); on error this source is left as it was.
    pub fn reopen(&mut self) -> Result<(), AudioError> {
        let sel = self.selection.clone();
        let options = self.options;
        self.reopen_with(&sel, &options)
    }

    /// Opens another selection (or the same with other options, e.g. another channel) with this
    /// source's ring capacity and replaces this source with it.
    ///
    /// # Errors
    ///
    /// As [`open_with`](Self::open_with); on error this source is left as it was.
    pub fn reopen_with(
        &mut self,
        sel: &AudioSelection,
        options: &AudioOptions,
    ) -> Result<(), AudioError> {
        let fresh = AudioSource::open_with(sel, self.ring_capacity(), options)?;
        *self = fresh;
        Ok(())
    }

    /// Whether the file source has delivered all its samples (its cursor reached the end and it
    /// is not looping). Always `false` for live and synthetic sources.
    pub fn finished(&self) -> bool {
        match &self.feed {
            Feed::Clocked {
                generator: Generator::File { samples, looping },
                cursor,
                ..
            } => !*looping && *cursor >= samples.len() as u64,
            _ => false,
        }
    }

    /// Makes a file source start over at its beginning when it reaches its end (sample `i` of
    /// the stream is then file sample `i mod len`, when not seeked). No effect on other sources.
    pub fn set_looping(&mut self, looping: bool) {
        if let Feed::Clocked {
            generator:
                Generator::File {
                    looping: l,
                    samples,
                },
            cursor,
            ..
        } = &mut self.feed
        {
            *l = looping;
            if looping && *cursor >= samples.len() as u64 {
                *cursor = 0;
            }
        }
    }

    /// Whether a file source loops; `false` for other sources.
    pub fn looping(&self) -> bool {
        matches!(
            &self.feed,
            Feed::Clocked {
                generator: Generator::File { looping: true, .. },
                ..
            }
        )
    }

    /// Pauses or resumes. Clocked sources produce nothing while paused and resume where they
    /// stopped (the time paused is skipped, not caught up); a live stream is paused in the
    /// backend (cpal `pause`/`play`) and its data watchdog is quiet meanwhile.
    pub fn set_paused(&mut self, paused: bool) {
        self.paused = paused;
        if let Feed::Live(live) = &mut self.feed {
            live.set_paused(paused);
        }
        self.gap_until = None;
    }

    /// Whether the source is paused.
    pub fn paused(&self) -> bool {
        self.paused
    }

    /// Moves a clocked source to `seconds` from its start: files clamp to `[0, duration]`, the
    /// synthetic signals to `≥ 0`. Samples already in the ring (from before the seek) are
    /// discarded, so the next [`drain_into`](Self::drain_into) starts at the new position.
    /// NaN does nothing; no-op for live input.
    pub fn seek(&mut self, seconds: f64) {
        if seconds.is_nan() {
            return;
        }
        let sr = f64::from(self.sample_rate);
        let Feed::Clocked {
            generator, cursor, ..
        } = &mut self.feed
        else {
            return;
        };
        // `as` saturates: negative → 0, +∞ → u64::MAX.
        let target = (seconds * sr).floor() as u64;
        *cursor = match generator {
            Generator::File { samples, .. } => target.min(samples.len() as u64),
            Generator::Synth(_) => target,
        };
        let n = self.consumer.slots();
        if let Ok(chunk) = self.consumer.read_chunk(n) {
            chunk.commit_all();
        }
    }

    /// Analyse as fast as possible (`true`): [`advance_to`](Self::advance_to) pushes as much as
    /// the ring has room for on every call, ignoring the clock; nothing is dropped. `false`
    /// returns to real-time rate from the current position. Clocked sources only.
    pub fn set_fast(&mut self, fast: bool) {
        self.fast = fast && !matches!(self.feed, Feed::Live(_));
    }

    /// Whether fast mode is on.
    pub fn fast(&self) -> bool {
        self.fast
    }

    /// Samples produced so far by a clocked source (pushed or dropped), i.e. its clock in samples;
    /// `None` for live input.
    pub fn position(&self) -> Option<u64> {
        match &self.feed {
            Feed::Clocked { produced, .. } => Some(*produced),
            Feed::Live(_) => None,
        }
    }

    /// Playback position of a clocked source, seconds: where the next sample comes from in the
    /// file (in `[0, duration]`) or in the synthetic signal. `None` for live input.
    pub fn position_s(&self) -> Option<f64> {
        match &self.feed {
            Feed::Clocked { cursor, .. } => Some(*cursor as f64 / f64::from(self.sample_rate)),
            Feed::Live(_) => None,
        }
    }

    /// Length of a file source in seconds (decoded frames / sample rate); `None` for live and
    /// synthetic sources.
    pub fn duration_s(&self) -> Option<f64> {
        match &self.feed {
            Feed::Clocked {
                generator: Generator::File { samples, .. },
                ..
            } => Some(samples.len() as f64 / f64::from(self.sample_rate)),
            _ => None,
        }
    }

    /// Length of a file source in samples per channel (what the ring receives from it: the
    /// mono mix or the chosen channel); `None` for live and synthetic sources.
    pub fn file_samples(&self) -> Option<usize> {
        match &self.feed {
            Feed::Clocked {
                generator: Generator::File { samples, .. },
                ..
            } => Some(samples.len()),
            _ => None,
        }
    }

    /// Capacity of the ring, in mono samples.
    pub fn ring_capacity(&self) -> usize {
        self.consumer.buffer().capacity()
    }

    /// The live stream, for device details (channels, sample format, frames received); `None`
    /// for clocked sources.
    pub fn live(&self) -> Option<&capture::LiveCapture> {
        match &self.feed {
            Feed::Live(live) => Some(live),
            Feed::Clocked { .. } => None,
        }
    }
}

/// Lists the input device names of cpal's default host (for messages and the UI). Empty when the
/// host cannot enumerate devices. See [`input_devices`] for rates, channels and formats.
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
    fn channel_beyond_the_first_on_the_synthetic_source_is_noticed() {
        let opts = |channel| AudioOptions {
            channel,
            ..AudioOptions::default()
        };
        for sel in [
            AudioSelection::Synthetic,
            AudioSelection::Signal(SynthSignal::Sine),
        ] {
            let src = AudioSource::open_with(&sel, 4096, &opts(ChannelChoice::Channel(4))).unwrap();
            assert_eq!(
                src.notice(),
                Some("audio channel 5 ignored: the synthetic source has 1 channel")
            );
            for ok in [ChannelChoice::Mix, ChannelChoice::Channel(0)] {
                let src = AudioSource::open_with(&sel, 4096, &opts(ok)).unwrap();
                assert!(src.notice().is_none(), "{ok:?}");
            }
        }
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
