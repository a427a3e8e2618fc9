//! Live input through cpal 0.18: device listing and lookup, stream set-up, the real-time data
//! callback, and the watchdogs that notice a device going away.
//!
//! The stream uses the device's default input config (PulseAudio's monitor source, for instance,
//! gives 2 channels, 48 kHz, `I16`), or the same config in another sample format when one is
//! forced ([`super::AudioOptions::sample_format`]). Whatever the sample format, one generic callback
//! ([`push_frames`]) converts each sample to `f32` in [-1, 1] with `dasp_sample`'s `FromSample`
//! (re-exported by cpal: signed integers divide by 2^(bits−1), unsigned ones are centred first,
//! so `u8` 128 → 0.0), keeps the chosen channel or averages them ([`ChannelChoice`], fixed per
//! stream) and pushes the mono value into the `rtrb` ring. It never allocates, locks, logs or
//! blocks; what does not fit is counted in an `Arc<AtomicU64>`, and the time of the last callback
//! is stored in an `AtomicU64` (nanoseconds since the stream was opened) for the data watchdog.
//!
//! The error callback (a different callback, on a non-real-time path) stores the last error in a
//! `Mutex<Option<String>>` that only it and the UI touch; buffer over/underruns are only counted.
//!
//! **Device disappearance.** Three signals, whichever comes first:
//! 1. cpal's error callback (ALSA reports a vanished device this way);
//! 2. the data watchdog: no callback for [`STALE_AFTER`] while not paused;
//! 3. on the PulseAudio host, a presence watchdog thread that lists the input devices every
//!    [`PRESENCE_PERIOD`] and latches when the device's id is gone. This one is needed because
//!    PulseAudio, when the source of a record stream is unloaded, *moves* the stream to another
//!    source (seen: `auto_null.monitor` of module-always-sink) and cpal 0.18.2 reports nothing —
//!    samples keep coming, from another device. cpal gives no access to the stream's current
//!    source index nor to PulseAudio's `DONT_MOVE` flag, so the device list is the only way to see
//!    it. Once latched, the status stays "gone" until the stream is reopened — by
//!    [`super::AudioSource::reopen`], or by the automatic reconnection ([`super::reconnect`]),
//!    which retries until a device of the same id comes back — because the stream is still on
//!    the other source.
//!
//! Files: `mod.rs` the stream ([`LiveCapture`]: set-up, status, pause, the watchdogs);
//! `devices.rs` device listing, the ALSA filter and name matching; `frames.rs` the data
//! callback's conversion of interleaved frames to mono `f32`.

mod devices;
mod frames;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use cpal::traits::{DeviceTrait, HostTrait, StreamTrait};
use cpal::{FromSample, SampleFormat, SizedSample};
use rtrb::{Consumer, Producer};

use super::ChannelChoice;
pub use devices::{
    InputDeviceInfo, alsa_offered, default_host, device_id, device_name, find_input_device,
    input_device_names_of, input_devices, listed_name, match_device_name, offered_inputs,
};
pub use frames::{push_frames, push_mono_frames, sample_to_f32};

/// How long the backend may take to build a stream before it is given up (seconds).
const BUILD_TIMEOUT: Duration = Duration::from_secs(5);

/// A live stream with no data callback for this long (while not paused) is reported stale:
/// `"no data from <device> for N s"`, and the time since counts as a gap.
pub(crate) const STALE_AFTER: Duration = Duration::from_millis(500);

/// Period of the presence watchdog (PulseAudio host only).
pub(crate) const PRESENCE_PERIOD: Duration = Duration::from_millis(500);

/// A running cpal input stream feeding the ring. Dropping it stops the stream and its watchdog
/// thread.
pub struct LiveCapture {
    // Kept alive for as long as samples should flow.
    stream: cpal::Stream,
    last_error: Arc<Mutex<Option<String>>>,
    xruns: Arc<AtomicU64>,
    /// Nanoseconds since `opened` of the last data callback + 1; 0 = none yet.
    last_data_ns: Arc<AtomicU64>,
    /// Capture instant of the newest delivered frame, ns since `opened` + 1 (0: none yet).
    newest_capture_ns: Arc<AtomicU64>,
    /// Frames delivered by the device (pushed or not).
    frames_in: Arc<AtomicU64>,
    /// Latched by the presence watchdog when the device left the host's device list.
    gone: Arc<AtomicBool>,
    /// Dropping it stops the presence watchdog thread.
    _watchdog_stop: Option<mpsc::Sender<()>>,
    opened: Instant,
    paused: bool,
    /// When the last pause ended (the watchdog measures from there).
    resumed: Instant,
    device_name: String,
    device_id: String,
    sample_rate: u32,
    channels: u16,
    format: SampleFormat,
    channel: ChannelChoice,
}

impl std::fmt::Debug for LiveCapture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveCapture")
            .field("label", &self.label())
            .finish_non_exhaustive()
    }
}

/// What [`LiveCapture::open`] hands back: the stream, the consuming end of its ring, and the
/// counter of samples that did not fit.
pub(crate) type LiveParts = (LiveCapture, Consumer<f32>, Arc<AtomicU64>);

impl LiveCapture {
    /// Builds and starts an input stream on `device` with its default input config — in
    /// `format` instead of the default sample format when given — feeding a new ring of
    /// `ring_capacity` mono samples (at least 1), taking `channel` of each frame.
    ///
    /// # Errors
    ///
    /// cpal's message (no default config, stream not built or not started), the unsupported
    /// sample format (DSD, or a forced `format` the device does not offer), or a channel the
    /// device does not have, as one line to be wrapped with the device name by the caller.
    pub fn open(
        device: &cpal::Device,
        ring_capacity: usize,
        channel: ChannelChoice,
        format: Option<SampleFormat>,
    ) -> Result<LiveParts, String> {
        let supported = device
            .default_input_config()
            .map_err(|e| format!("no default input config: {e}"))?;
        let mut config = supported.config();
        let mut sample_format = supported.sample_format();
        if let Some(wanted) = format.filter(|f| *f != sample_format) {
            let offered = device
                .supported_input_configs()
                .map_err(|e| format!("cannot list input configs: {e}"))?
                .any(|r| {
                    r.sample_format() == wanted
                        && r.channels() == config.channels
                        && (r.min_sample_rate()..=r.max_sample_rate()).contains(&config.sample_rate)
                });
            if !offered {
                return Err(format!(
                    "the device does not offer sample format {wanted:?} at {} Hz, {} ch",
                    config.sample_rate, config.channels
                ));
            }
            sample_format = wanted;
            config.buffer_size = cpal::BufferSize::Default;
        }
        // Small delivery chunks, about 5 ms, where the device states a range that holds them:
        // PulseAudio's default record fragment is about 2 s, which would make the display jump in
        // steps and put seconds between capture and screen.
        let chunk = (config.sample_rate / 200).max(64);
        if let cpal::SupportedBufferSize::Range { min, max } = supported.buffer_size()
            && (*min..=*max).contains(&chunk)
        {
            config.buffer_size = cpal::BufferSize::Fixed(chunk);
        }
        if config.channels == 0 {
            return Err("the device reports 0 input channels".to_string());
        }
        if config.sample_rate == 0 {
            return Err("the device reports a sample rate of 0 Hz".to_string());
        }
        let pick = match channel {
            ChannelChoice::Mix => None,
            ChannelChoice::Channel(c) if c < usize::from(config.channels) => Some(c),
            ChannelChoice::Channel(c) => {
                return Err(format!(
                    "channel {} requested, the device has {} channel(s)",
                    c + 1,
                    config.channels
                ));
            }
        };
        // Every page written once now (the ring holds 87 s at 48 kHz): its memory is resident
        // from the start instead of growing while the callback first goes round it.
        let (producer, consumer) = super::new_ring(ring_capacity);
        let dropped = Arc::new(AtomicU64::new(0));
        let last_error = Arc::new(Mutex::new(None));
        let xruns = Arc::new(AtomicU64::new(0));
        let last_data_ns = Arc::new(AtomicU64::new(0));
        let newest_capture_ns = Arc::new(AtomicU64::new(0));
        let frames_in = Arc::new(AtomicU64::new(0));
        let opened = Instant::now();
        let ctx = CallbackCtx {
            producer,
            pick,
            dropped: dropped.clone(),
            last_error: last_error.clone(),
            xruns: xruns.clone(),
            last_data_ns: last_data_ns.clone(),
            newest_capture_ns: newest_capture_ns.clone(),
            frames_in: frames_in.clone(),
            opened,
            sample_rate: config.sample_rate,
        };
        let stream = match sample_format {
            SampleFormat::I8 => build::<i8>(device, &config, ctx),
            SampleFormat::I16 => build::<i16>(device, &config, ctx),
            SampleFormat::I24 => build::<cpal::I24>(device, &config, ctx),
            SampleFormat::I32 => build::<i32>(device, &config, ctx),
            SampleFormat::I64 => build::<i64>(device, &config, ctx),
            SampleFormat::U8 => build::<u8>(device, &config, ctx),
            SampleFormat::U16 => build::<u16>(device, &config, ctx),
            SampleFormat::U24 => build::<cpal::U24>(device, &config, ctx),
            SampleFormat::U32 => build::<u32>(device, &config, ctx),
            SampleFormat::U64 => build::<u64>(device, &config, ctx),
            SampleFormat::F32 => build::<f32>(device, &config, ctx),
            SampleFormat::F64 => build::<f64>(device, &config, ctx),
            other => return Err(format!("unsupported sample format {other:?}")),
        }
        .map_err(|e| format!("cannot build the input stream: {e}"))?;
        stream
            .play()
            .map_err(|e| format!("cannot start the input stream: {e}"))?;
        let id = device_id(device);
        let gone = Arc::new(AtomicBool::new(false));
        let watchdog_stop = spawn_presence_watchdog(&id, gone.clone());
        let live = LiveCapture {
            stream,
            last_error,
            xruns,
            last_data_ns,
            newest_capture_ns,
            frames_in,
            gone,
            _watchdog_stop: watchdog_stop,
            opened,
            paused: false,
            resumed: opened,
            device_name: device_name(device),
            device_id: id,
            sample_rate: config.sample_rate,
            channels: config.channels,
            format: sample_format,
            channel,
        };
        Ok((live, consumer, dropped))
    }

    /// The device's sample rate in Hz.
    pub fn sample_rate(&self) -> u32 {
        self.sample_rate
    }

    /// Channels the device delivers (one is kept, or all mixed, before the ring).
    pub fn channels(&self) -> u16 {
        self.channels
    }

    /// The sample format the device delivers.
    pub fn sample_format(&self) -> SampleFormat {
        self.format
    }

    /// The channel choice of this stream.
    pub fn channel(&self) -> ChannelChoice {
        self.channel
    }

    /// The device's name.
    pub fn device_name(&self) -> &str {
        &self.device_name
    }

    /// The host's id of the device (`viz.monitor`), or empty.
    pub fn device_id(&self) -> &str {
        &self.device_id
    }

    /// `"live: <device name> (48000 Hz, 2 ch, I16)"`, with `", channel N"` (1-based) before the
    /// closing parenthesis when one channel is taken.
    pub fn label(&self) -> String {
        let ch = match self.channel {
            ChannelChoice::Mix => String::new(),
            ChannelChoice::Channel(c) => format!(", channel {}", c + 1),
        };
        format!(
            "live: {} ({} Hz, {} ch, {:?}{ch})",
            self.device_name, self.sample_rate, self.channels, self.format
        )
    }

    /// The last error the stream reported (other than over/underruns), if any.
    pub fn last_error(&self) -> Option<String> {
        match self.last_error.lock() {
            Ok(g) => g.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// Buffer over/underruns the backend reported since the stream started.
    pub fn xruns(&self) -> u64 {
        self.xruns.load(Ordering::Relaxed)
    }

    /// The sample clock of the stream: (frames delivered so far, the instant the newest of them
    /// was captured). The capture instant comes from cpal's callback timestamps (the callback
    /// instant less the latency the backend reports, plus the newest frame's offset in its
    /// buffer), so it includes the sound server's buffering; with a backend that reports no
    /// latency it is the callback instant. `None` before the first callback.
    pub fn sample_clock(&self) -> Option<(u64, Instant)> {
        let frames = self.frames_in.load(Ordering::Acquire);
        let ns = self.newest_capture_ns.load(Ordering::Acquire);
        (ns > 0).then(|| (frames, self.opened + Duration::from_nanos(ns - 1)))
    }

    /// Frames the device delivered since the stream started (pushed or dropped).
    pub fn frames_received(&self) -> u64 {
        self.frames_in.load(Ordering::Relaxed)
    }

    /// Time since the last data callback — or since the stream opened or was last resumed, if
    /// later. Zero while paused.
    pub fn silence_for(&self) -> Duration {
        if self.paused {
            return Duration::ZERO;
        }
        let ns = self.last_data_ns.load(Ordering::Relaxed);
        let last = if ns == 0 {
            self.opened
        } else {
            self.opened + Duration::from_nanos(ns - 1)
        };
        Instant::now().saturating_duration_since(last.max(self.resumed))
    }

    /// Whether the presence watchdog saw the device leave the host's device list (latched).
    pub fn device_gone(&self) -> bool {
        self.gone.load(Ordering::Relaxed)
    }

    /// The problem to show, if any, most specific first: the error callback's message; `"device
    /// '\<name\>' is gone (...)"` from the presence watchdog; `"no data from \<name\> for N.N s"` when
    /// stale. `None` while paused (except for the first two) and while data flows.
    pub fn problem(&self) -> Option<String> {
        if let Some(e) = self.last_error() {
            return Some(e);
        }
        if self.device_gone() {
            return Some(format!(
                "audio device '{}' is gone (the sound server moved the stream to another source); \
                 reopen or pick another device",
                self.device_name
            ));
        }
        let quiet = self.silence_for();
        if quiet >= STALE_AFTER {
            return Some(format!(
                "no data from {} for {:.1} s",
                self.device_name,
                quiet.as_secs_f64()
            ));
        }
        None
    }

    /// Pauses (`true`) or resumes the stream (cpal `pause`/`play`). While paused the watchdog is
    /// quiet. Errors from the backend are stored like stream errors.
    pub fn set_paused(&mut self, paused: bool) {
        if paused == self.paused {
            return;
        }
        let r = if paused {
            self.stream.pause()
        } else {
            self.stream.play()
        };
        if let Err(e) = r {
            let msg = format!(
                "cannot {} the stream: {e}",
                if paused { "pause" } else { "resume" }
            );
            match self.last_error.lock() {
                Ok(mut g) => *g = Some(msg),
                Err(poisoned) => *poisoned.into_inner() = Some(msg),
            }
        }
        self.paused = paused;
        if !paused {
            self.resumed = Instant::now();
        }
    }

    /// Whether [`set_paused`](Self::set_paused)`(true)` is in force.
    pub fn paused(&self) -> bool {
        self.paused
    }
}

/// On the PulseAudio host, starts a thread that lists the input devices every
/// [`PRESENCE_PERIOD`] and sets `gone` once `id` is missing. Returns the sender whose drop stops
/// it; `None` (no thread) on other hosts or when `id` is empty.
fn spawn_presence_watchdog(id: &str, gone: Arc<AtomicBool>) -> Option<mpsc::Sender<()>> {
    let pulse = default_host().is_ok_and(|h| h.id().name() == "PulseAudio");
    if id.is_empty() || !pulse {
        return None;
    }
    let (stop, stopped) = mpsc::channel::<()>();
    let id = id.to_string();
    let spawned = std::thread::Builder::new()
        .name("vizdeck-audio-watchdog".into())
        .spawn(move || {
            let Ok(host) = default_host() else {
                return;
            };
            loop {
                match stopped.recv_timeout(PRESENCE_PERIOD) {
                    Err(mpsc::RecvTimeoutError::Timeout) => {}
                    _ => return,
                }
                let Ok(devices) = host.input_devices() else {
                    continue;
                };
                let mut present = false;
                for d in devices {
                    if device_id(&d) == id {
                        present = true;
                        break;
                    }
                }
                if !present {
                    log::warn!("audio device '{id}' left the device list");
                    gone.store(true, Ordering::Relaxed);
                    return;
                }
            }
        });
    spawned.ok().map(|_| stop)
}

/// What the two callbacks own.
struct CallbackCtx {
    producer: Producer<f32>,
    pick: Option<usize>,
    dropped: Arc<AtomicU64>,
    last_error: Arc<Mutex<Option<String>>>,
    xruns: Arc<AtomicU64>,
    last_data_ns: Arc<AtomicU64>,
    newest_capture_ns: Arc<AtomicU64>,
    frames_in: Arc<AtomicU64>,
    opened: Instant,
    sample_rate: u32,
}

fn build<T>(
    device: &cpal::Device,
    config: &cpal::StreamConfig,
    ctx: CallbackCtx,
) -> Result<cpal::Stream, cpal::Error>
where
    T: SizedSample + Send + 'static,
    f32: FromSample<T>,
{
    let CallbackCtx {
        mut producer,
        pick,
        dropped,
        last_error,
        xruns,
        last_data_ns,
        newest_capture_ns,
        frames_in,
        opened,
        sample_rate,
    } = ctx;
    let channels = usize::from(config.channels);
    let ns_per_frame = 1e9 / f64::from(sample_rate.max(1));
    let data_callback = move |data: &[T], info: &cpal::InputCallbackInfo| {
        // Instant::now is a vDSO clock read: no allocation, lock or system call.
        let ns = opened.elapsed().as_nanos().min(u128::from(u64::MAX - 1)) as u64;
        last_data_ns.store(ns + 1, Ordering::Relaxed);
        let frames = (data.len() / channels.max(1)) as u64;
        // cpal's timestamps: `capture` is when the buffer's first frame was captured (the
        // callback instant less the stream's latency as the backend reports it, e.g.
        // PulseAudio's source + record-buffer latency); the newest frame came frames − 1
        // sample periods later, and never after now.
        let ts = info.timestamp();
        let behind = ts.callback.duration_since(ts.capture).as_nanos() as u64;
        let span = (frames.saturating_sub(1) as f64 * ns_per_frame) as u64;
        let newest = ns.saturating_sub(behind).saturating_add(span).min(ns);
        newest_capture_ns.store(newest + 1, Ordering::Relaxed);
        frames_in.fetch_add(frames, Ordering::Relaxed);
        let lost = push_frames(data, channels, pick, &mut producer);
        if lost > 0 {
            dropped.fetch_add(lost, Ordering::Relaxed);
        }
    };
    let error_callback = move |err: cpal::Error| {
        if err.kind() == cpal::ErrorKind::Xrun {
            xruns.fetch_add(1, Ordering::Relaxed);
            return;
        }
        let msg = format!("{:?}: {}", err.kind(), err);
        log::warn!("audio stream error: {msg}");
        match last_error.lock() {
            Ok(mut g) => *g = Some(msg),
            Err(poisoned) => *poisoned.into_inner() = Some(msg),
        }
    };
    device.build_input_stream::<T, _, _>(
        *config,
        data_callback,
        error_callback,
        Some(BUILD_TIMEOUT),
    )
}

/// Opens the default input device of the default host (see [`LiveCapture::open`]).
///
/// # Errors
///
/// A short reason for the fallback notice, e.g. "no default input device on host ALSA" or
/// "'Default Audio Device': no default input config: ...".
pub(crate) fn open_default(
    ring_capacity: usize,
    channel: ChannelChoice,
    format: Option<SampleFormat>,
) -> Result<LiveParts, String> {
    let host = default_host().map_err(|e| format!("no audio host ({e})"))?;
    let Some(device) = host.default_input_device() else {
        return Err(format!(
            "no default input device on host {}",
            host.id().name()
        ));
    };
    LiveCapture::open(&device, ring_capacity, channel, format)
        .map_err(|e| format!("'{}': {e}", device_name(&device)))
}
