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
//!
//! Files: this one holds the [`AudioSource`] type and its state; `options.rs` what to open
//! ([`AudioSelection`], [`AudioOptions`], [`ChannelChoice`]); `error.rs` [`AudioError`];
//! `open.rs` opening a source and what it was opened as; `clocked.rs` the clock and transport of
//! file and synthetic sources; `live.rs` draining the ring and the life of a live stream
//! (reconnection, gaps, the sample clock, problems).

pub mod capture;
mod clocked;
mod error;
pub mod file;
mod live;
mod open;
mod options;
pub mod peak;
pub mod reconnect;
pub mod stft;
pub mod synth;

use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::{Instant, SystemTime};

use rtrb::{Consumer, Producer};

pub use capture::{InputDeviceInfo, input_devices};
pub use error::AudioError;
pub use options::{AudioOptions, AudioSelection, ChannelChoice};
pub use stft::WindowKind;
pub use synth::SynthSignal;

/// Ring capacity (in mono samples) suggested for [`AudioSource::open`]: 2^20 samples, about 21.8 s
/// at 48 kHz, 4 MiB of `f32`.
pub const DEFAULT_RING_CAPACITY: usize = 1 << 20;

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
    /// Clocked file sources: pause by itself once this many file samples have been produced
    /// ([`AudioSource::set_stop_at`]).
    stop_at: Option<u64>,
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

/// A ring of `capacity` (at least 1) mono samples between a source and the analysis, every page
/// of it written once here (filled with zeros, then emptied), so its memory is resident from the
/// start rather than growing as the producer first goes round it.
pub(crate) fn new_ring(capacity: usize) -> (Producer<f32>, Consumer<f32>) {
    let capacity = capacity.max(1);
    let (mut producer, mut consumer) = rtrb::RingBuffer::new(capacity);
    if let Ok(chunk) = producer.write_chunk_uninit(capacity) {
        chunk.fill_from_iter(std::iter::repeat(0.0));
    }
    if let Ok(chunk) = consumer.read_chunk(consumer.slots()) {
        chunk.commit_all();
    }
    (producer, consumer)
}

/// Size of the chunks in which the synthesizer is rendered by `advance_to` (samples).
const SYNTH_CHUNK: usize = 4096;

/// Lists the names of the input devices cpal's default host offers (on ALSA, real capture routes
/// only), for messages and the UI. Empty when the host cannot enumerate devices. See
/// [`input_devices`] for ids, rates, channels and formats.
pub fn input_device_names() -> Vec<String> {
    capture::default_host()
        .map(|host| capture::input_device_names_of(&host))
        .unwrap_or_default()
}

/// Averages interleaved frames of `channels` samples into mono, appending to `out`:
/// `out[i] = (1/channels) Σ_c interleaved[i·channels + c]`. A trailing partial frame is ignored;
/// `channels == 0` appends nothing.
pub(crate) fn mix_to_mono(interleaved: &[f32], channels: usize, out: &mut Vec<f32>) {
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
}
