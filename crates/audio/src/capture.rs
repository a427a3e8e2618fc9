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

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use cpal::traits::{DeviceTrait, HostTrait, StreamTrait};
use cpal::{FromSample, Sample, SampleFormat, SizedSample};
use rtrb::{Consumer, Producer};

use super::{AudioError, ChannelChoice};

/// How long the backend may take to build a stream before it is given up (seconds).
const BUILD_TIMEOUT: Duration = Duration::from_secs(5);

/// A live stream with no data callback for this long (while not paused) is reported stale:
/// `"no data from <device> for N s"`, and the time since counts as a gap.
pub const STALE_AFTER: Duration = Duration::from_millis(500);

/// Period of the presence watchdog (PulseAudio host only).
pub const PRESENCE_PERIOD: Duration = Duration::from_millis(500);

/// One input device of the default host, for a device picker.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputDeviceInfo {
    /// User-facing name (cpal's description name), e.g. `Monitor of Null Output`.
    pub name: String,
    /// The host's id of the device, e.g. PulseAudio's source name `viz.monitor`; empty when the
    /// host gives none. [`super::AudioSelection::Device`] accepts either.
    pub id: String,
    /// Default input sample rate, Hz (0 when the device reports no default config).
    pub sample_rate: u32,
    /// Default input channel count (0 when unknown).
    pub channels: u16,
    /// Default input sample format, e.g. `I16`, `F32`; `None` when unknown.
    pub sample_format: Option<SampleFormat>,
}

/// The input devices of cpal's default host that are offered to the user ([`offered_inputs`]:
/// on ALSA, real capture routes only), with their default configs, in enumeration order (empty
/// when the host cannot enumerate). Talks to the sound server: call it when the picker opens, not
/// every frame.
pub fn input_devices() -> Vec<InputDeviceInfo> {
    let Ok(host) = default_host() else {
        return Vec::new();
    };
    let Ok(devices) = host.input_devices() else {
        return Vec::new();
    };
    let devices: Vec<cpal::Device> = devices.collect();
    let pairs: Vec<(String, String)> = devices
        .iter()
        .map(|d| (device_name(d), device_id(d)))
        .collect();
    offered_inputs(is_alsa(&host), &pairs)
        .into_iter()
        .map(|i| {
            let cfg = devices[i].default_input_config().ok();
            let (name, id) = pairs[i].clone();
            InputDeviceInfo {
                name,
                id,
                sample_rate: cfg.as_ref().map_or(0, |c| c.sample_rate()),
                channels: cfg.as_ref().map_or(0, |c| c.channels()),
                sample_format: cfg.as_ref().map(|c| c.sample_format()),
            }
        })
        .collect()
}

/// cpal's default host — PipeWire, then PulseAudio when their server runs, then ALSA, in cpal's
/// order — without cpal's panic when none can be opened (an ALSA configuration that does not
/// load: a broken `~/.asoundrc` or `ALSA_CONFIG_PATH`).
///
/// # Errors
///
/// The last host's reason, e.g. `ALSA: …`.
pub fn default_host() -> Result<cpal::Host, String> {
    let mut reason = "no audio host in this build".to_string();
    for id in cpal::available_hosts() {
        match cpal::host_from_id(id) {
            Ok(host) => return Ok(host),
            Err(e) => reason = format!("{}: {e}", id.name()),
        }
    }
    Err(reason)
}

/// Whether `host` is cpal's ALSA host (whose device list holds ALSA's plugin definitions too).
fn is_alsa(host: &cpal::Host) -> bool {
    host.id().name() == "ALSA"
}

/// ALSA plugins bound to a card that only play (dmix, surround and digital outputs): no capture.
const ALSA_OUTPUT_ONLY: &[&str] = &[
    "dmix",
    "surround21",
    "surround40",
    "surround41",
    "surround50",
    "surround51",
    "surround71",
    "iec958",
    "spdif",
    "hdmi",
    "usbstream",
];

/// ALSA PCMs without a card that lead to real capture: the configured default and the sound
/// servers' plugins.
const ALSA_SERVER_ROUTES: &[&str] = &["default", "sysdefault", "pulse", "pipewire"];

/// Whether the ALSA PCM `id` (as `arecord -L` lists it, and cpal's device id on its ALSA host)
/// is a capture route worth offering: `default`, `sysdefault`, `pulse`, `pipewire`, or a PCM
/// bound to a card (`CARD=` among its arguments: `hw:CARD=PCH,DEV=0`, `plughw:…`, `dsnoop:…`,
/// `front:…`, `sysdefault:CARD=…`) that is not output-only ([`ALSA_OUTPUT_ONLY`]). ALSA's plugin
/// definitions without a card (`null`, `lavrate`, `samplerate`, `speexrate`, `speex`, `upmix`,
/// `vdownmix`, `oss`, `jack`) are not devices: they are not offered, though `--audio` still opens
/// one named by its exact id.
pub fn alsa_offered(id: &str) -> bool {
    let (plugin, args) = id.split_once(':').unwrap_or((id, ""));
    if args.is_empty() {
        return ALSA_SERVER_ROUTES.contains(&plugin);
    }
    let on_card = args.split(',').any(|a| a.trim().starts_with("CARD="));
    on_card && !ALSA_OUTPUT_ONLY.contains(&plugin)
}

/// The parts of an ALSA id that name the same device: plugin, `CARD=` value, `DEV=` value.
fn alsa_parts(id: &str) -> (&str, &str, &str) {
    let (plugin, args) = id.split_once(':').unwrap_or((id, ""));
    let arg = |key: &str| {
        args.split(',')
            .find_map(|a| a.trim().strip_prefix(key))
            .unwrap_or("")
    };
    (plugin, arg("CARD="), arg("DEV="))
}

/// Indices of the input devices to offer among `devices` ((name, id) pairs in enumeration
/// order). On a sound-server host (PulseAudio, PipeWire, JACK) every one. On ALSA
/// (`alsa == true`), those [`alsa_offered`] accepts, without the numbered copies cpal adds of
/// card devices (`hw:CARD=0,DEV=0` next to `hw:CARD=PCH,DEV=0` of the same name and device).
pub fn offered_inputs(alsa: bool, devices: &[(String, String)]) -> Vec<usize> {
    if !alsa {
        return (0..devices.len()).collect();
    }
    let numbered = |card: &str| !card.is_empty() && card.bytes().all(|b| b.is_ascii_digit());
    devices
        .iter()
        .enumerate()
        .filter(|(_, (_, id))| alsa_offered(id))
        .filter(|(_, (name, id))| {
            let (plugin, card, dev) = alsa_parts(id);
            // A numbered card device is a copy when a named one of the same plugin, device and
            // name is listed.
            !numbered(card)
                || !devices.iter().any(|(other_name, other)| {
                    let (p, c, d) = alsa_parts(other);
                    p == plugin
                        && d == dev
                        && !numbered(c)
                        && other_name == name
                        && alsa_offered(other)
                })
        })
        .map(|(i, _)| i)
        .collect()
}

/// How a device is listed in messages: `name (id)`, or the name alone when the host gives no id
/// or the id is the name.
pub fn listed_name(name: &str, id: &str) -> String {
    if id.is_empty() || id == name {
        name.to_string()
    } else {
        format!("{name} ({id})")
    }
}

/// The host's id string of a device (`viz.monitor`), or empty.
pub fn device_id(device: &cpal::Device) -> String {
    device
        .id()
        .map(|id| id.id().to_string())
        .unwrap_or_default()
}

/// Converts one sample of any cpal sample type to `f32` in [-1, 1].
///
/// Integer formats divide by 2^(bits−1) (`i16::MIN` → −1.0, `i16::MAX` → 32767/32768); unsigned
/// formats are centred on their midpoint first (`u8` 128 → 0.0, 255 → 127/128); `f32` passes
/// through, `f64` is rounded to `f32`. Formulas: `dasp_sample::conv`.
#[inline]
pub fn sample_to_f32<T: Sample>(s: T) -> f32
where
    f32: FromSample<T>,
{
    f32::from_sample(s)
}

/// The body of the data callback for [`ChannelChoice::Mix`]: `push_frames(data, channels, None,
/// producer)`.
pub fn push_mono_frames<T: Sample>(data: &[T], channels: usize, producer: &mut Producer<f32>) -> u64
where
    f32: FromSample<T>,
{
    push_frames(data, channels, None, producer)
}

/// The body of the data callback: turns each frame of `channels` interleaved samples into one
/// mono `f32` — channel `pick` (0-based) when given, else the mean of the channels — and pushes
/// it into `producer`. Returns how many mono samples did not fit (the newest ones of `data`).
/// A trailing partial frame is ignored; `channels == 0`, or `pick ≥ channels`, pushes nothing and
/// returns 0 (callers check the channel when opening).
///
/// Real-time safe: no allocation, lock, log or blocking call.
pub fn push_frames<T: Sample>(
    data: &[T],
    channels: usize,
    pick: Option<usize>,
    producer: &mut Producer<f32>,
) -> u64
where
    f32: FromSample<T>,
{
    if channels == 0 || pick.is_some_and(|c| c >= channels) {
        return 0;
    }
    let frames = data.len() / channels;
    let room = producer.slots();
    let n = frames.min(room);
    if n > 0 {
        let frames_in = data[..n * channels].chunks_exact(channels);
        if let Ok(chunk) = producer.write_chunk_uninit(n) {
            match pick {
                Some(c) => {
                    chunk.fill_from_iter(frames_in.map(|frame| sample_to_f32(frame[c])));
                }
                None => {
                    let inv = 1.0 / channels as f32;
                    chunk.fill_from_iter(frames_in.map(|frame| {
                        let mut sum = 0.0f32;
                        for &s in frame {
                            sum += sample_to_f32(s);
                        }
                        sum * inv
                    }));
                }
            }
        }
    }
    (frames - n) as u64
}

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
pub type LiveParts = (LiveCapture, Consumer<f32>, Arc<AtomicU64>);

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

/// The user-facing name of a device: its description's name, else its `Display` form.
pub fn device_name(device: &cpal::Device) -> String {
    match device.description() {
        Ok(d) => d.name().to_string(),
        Err(_) => device.to_string(),
    }
}

/// The names of the input devices of `host` offered to the user ([`offered_inputs`]), in
/// enumeration order; empty when enumeration fails.
pub fn input_device_names_of(host: &cpal::Host) -> Vec<String> {
    let Ok(devices) = host.input_devices() else {
        return Vec::new();
    };
    let pairs: Vec<(String, String)> = devices.map(|d| (device_name(&d), device_id(&d))).collect();
    offered_inputs(is_alsa(host), &pairs)
        .into_iter()
        .map(|i| pairs[i].0.clone())
        .collect()
}

/// Picks the index of the device matching `wanted` among `(name, id)` pairs: an exact match on the
/// name or the host id first, else the one name or id containing `wanted` case-insensitively.
///
/// # Errors
///
/// `Err(None)`: no match; `Err(Some(indices))`: several substring matches.
pub fn match_device_name(
    wanted: &str,
    candidates: &[(String, String)],
) -> Result<usize, Option<Vec<usize>>> {
    if let Some(i) = candidates
        .iter()
        .position(|(name, id)| name == wanted || id == wanted)
    {
        return Ok(i);
    }
    let needle = wanted.to_lowercase();
    let hits: Vec<usize> = candidates
        .iter()
        .enumerate()
        .filter(|(_, (name, id))| {
            name.to_lowercase().contains(&needle) || id.to_lowercase().contains(&needle)
        })
        .map(|(i, _)| i)
        .collect();
    match hits.len() {
        0 => Err(None),
        1 => Ok(hits[0]),
        _ => Err(Some(hits)),
    }
}

/// Finds the input device of the default host named `wanted` (see [`match_device_name`]) among
/// those offered ([`offered_inputs`]); one not offered (an ALSA plugin such as `jack`) is still
/// found by its exact id.
///
/// # Errors
///
/// [`AudioError::DeviceList`] when the host cannot enumerate, [`AudioError::DeviceNotFound`]
/// (listing the offered input devices as `name (id)`), [`AudioError::DeviceAmbiguous`].
pub fn find_input_device(wanted: &str) -> Result<cpal::Device, AudioError> {
    let host = default_host().map_err(|reason| AudioError::DeviceList {
        name: wanted.to_string(),
        reason,
    })?;
    let mut devices: Vec<cpal::Device> = host
        .input_devices()
        .map_err(|e| AudioError::DeviceList {
            name: wanted.to_string(),
            reason: e.to_string(),
        })?
        .collect();
    let all: Vec<(String, String)> = devices
        .iter()
        .map(|d| (device_name(d), device_id(d)))
        .collect();
    let offered = offered_inputs(is_alsa(&host), &all);
    let candidates: Vec<(String, String)> = offered.iter().map(|&i| all[i].clone()).collect();
    let join = |idx: &mut dyn Iterator<Item = usize>| {
        idx.map(|i| listed_name(&candidates[i].0, &candidates[i].1))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match match_device_name(wanted, &candidates) {
        Ok(i) => Ok(devices.swap_remove(offered[i])),
        Err(None) => {
            if let Some(i) = all.iter().position(|(_, id)| id == wanted) {
                return Ok(devices.swap_remove(i));
            }
            Err(AudioError::DeviceNotFound {
                name: wanted.to_string(),
                available: if candidates.is_empty() {
                    "none".to_string()
                } else {
                    join(&mut (0..candidates.len()))
                },
            })
        }
        Err(Some(hits)) => Err(AudioError::DeviceAmbiguous {
            name: wanted.to_string(),
            matches: join(&mut hits.into_iter()),
        }),
    }
}

/// Opens the default input device of the default host (see [`LiveCapture::open`]).
///
/// # Errors
///
/// A short reason for the fallback notice, e.g. "no default input device on host ALSA" or
/// "'Default Audio Device': no default input config: ...".
pub fn open_default(
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

#[cfg(test)]
mod tests {
    use super::*;
    use rtrb::RingBuffer;

    #[test]
    fn integer_and_float_conversion() {
        assert_eq!(sample_to_f32(i16::MIN), -1.0);
        assert_eq!(sample_to_f32(0i16), 0.0);
        assert_eq!(sample_to_f32(i16::MAX), 32767.0 / 32768.0);
        assert_eq!(sample_to_f32(i8::MIN), -1.0);
        assert_eq!(sample_to_f32(i32::MIN), -1.0);
        assert_eq!(sample_to_f32(i64::MIN), -1.0);
        assert_eq!(sample_to_f32(cpal::I24::new(-(1 << 23)).unwrap()), -1.0);
        assert_eq!(sample_to_f32(cpal::I24::new(1 << 22).unwrap()), 0.5);
        let x = 0.123_456_789_f64;
        assert_eq!(sample_to_f32(x), x as f32);
        assert_eq!(sample_to_f32(-0.375_f64), -0.375);
        assert_eq!(sample_to_f32(-0.75_f32), -0.75);
    }

    #[test]
    fn unsigned_conversion_is_centred() {
        assert_eq!(sample_to_f32(128u8), 0.0);
        assert_eq!(sample_to_f32(0u8), -1.0);
        let top = sample_to_f32(255u8);
        assert_eq!(top, 127.0 / 128.0);
        assert!((top - 1.0).abs() < 0.01);
        assert_eq!(sample_to_f32(32768u16), 0.0);
        assert_eq!(sample_to_f32(0u16), -1.0);
        assert_eq!(sample_to_f32(1u32 << 31), 0.0);
        assert_eq!(sample_to_f32(0u64), -1.0);
        assert_eq!(sample_to_f32(cpal::U24::new(1 << 23).unwrap()), 0.0);
    }

    fn drain(c: &mut Consumer<f32>) -> Vec<f32> {
        let mut v = Vec::new();
        while let Ok(x) = c.pop() {
            v.push(x);
        }
        v
    }

    #[test]
    fn callback_mixes_interleaved_stereo_i16_to_mono() {
        let (mut p, mut c) = RingBuffer::new(16);
        // Frames: (-32768, 0) → -0.5; (16384, 16384) → 0.5; (32767, -32768) → -1/65536.
        let data: [i16; 6] = [i16::MIN, 0, 16384, 16384, i16::MAX, i16::MIN];
        let lost = push_mono_frames(&data, 2, &mut p);
        assert_eq!(lost, 0);
        assert_eq!(drain(&mut c), vec![-0.5, 0.5, -1.0 / 65536.0]);
    }

    #[test]
    fn callback_mixes_u8_and_counts_what_does_not_fit() {
        let (mut p, mut c) = RingBuffer::new(2);
        // 3 channels of u8; frame means: (128,128,128) → 0; (0,0,0) → -1; (255,...) → 127/128.
        let data: [u8; 9] = [128, 128, 128, 0, 0, 0, 255, 255, 255];
        let lost = push_mono_frames(&data, 3, &mut p);
        assert_eq!(lost, 1, "ring of 2 takes 2 of 3 frames");
        assert_eq!(drain(&mut c), vec![0.0, -1.0]);
        // Partial trailing frame ignored, zero channels pushes nothing.
        assert_eq!(push_mono_frames(&[0.5f32, 0.25, 0.1], 2, &mut p), 0);
        assert_eq!(push_mono_frames(&[0.5f32], 0, &mut p), 0);
        assert_eq!(drain(&mut c), vec![0.375]);
    }

    /// `arecord -L` on Debian 12 with libasound2-plugins, PipeWire's ALSA plugin, an Intel HDA
    /// card (`PCH`) and a USB microphone (`Microphone`): the capture PCMs ALSA's hints give,
    /// each an id line and its description lines.
    const ARECORD_L: &str = "\
null
    Discard all samples (playback) or generate zero samples (capture)
lavrate
    Rate Converter Plugin Using Libav/FFmpeg Library
samplerate
    Rate Converter Plugin Using Samplerate Library
speexrate
    Rate Converter Plugin Using Speex Resampler
jack
    JACK Audio Connection Kit
oss
    Open Sound System
pipewire
    PipeWire Sound Server
pulse
    PulseAudio Sound Server
speex
    Plugin using Speex DSP (resample, agc, denoise, echo, dereverb)
upmix
    Plugin for channel upmix (4,6,8)
vdownmix
    Plugin for channel downmix (stereo) with a simple spacialization
default
    Default ALSA Output (currently PipeWire Media Server)
sysdefault:CARD=PCH
    HDA Intel PCH, ALC257 Analog
    Default Audio Device
front:CARD=PCH,DEV=0
    HDA Intel PCH, ALC257 Analog
    Front output / input
dsnoop:CARD=PCH,DEV=0
    HDA Intel PCH, ALC257 Analog
    Direct sample snooping device
hw:CARD=PCH,DEV=0
    HDA Intel PCH, ALC257 Analog
    Direct hardware device without any conversions
plughw:CARD=PCH,DEV=0
    HDA Intel PCH, ALC257 Analog
    Hardware device with all software conversions
usbstream:CARD=PCH
    HDA Intel PCH
    USB Stream Output
sysdefault:CARD=Microphone
    USB Microphone, USB Audio
    Default Audio Device
front:CARD=Microphone,DEV=0
    USB Microphone, USB Audio
    Front output / input
dsnoop:CARD=Microphone,DEV=0
    USB Microphone, USB Audio
    Direct sample snooping device
hw:CARD=Microphone,DEV=0
    USB Microphone, USB Audio
    Direct hardware device without any conversions
plughw:CARD=Microphone,DEV=0
    USB Microphone, USB Audio
    Hardware device with all software conversions
usbstream:CARD=Microphone
    USB Microphone
    USB Stream Output
";

    /// (name, id) as cpal's ALSA host lists them: the hints of `arecord -L` (name = first
    /// description line), then its numbered copies of each card's hw/plughw devices.
    fn alsa_devices(listing: &str, numbered: &[(&str, &str)]) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = Vec::new();
        let mut id: Option<&str> = None;
        for line in listing.lines() {
            if !line.starts_with(' ') {
                id = Some(line.trim());
            } else if let Some(i) = id.take() {
                out.push((line.trim().to_string(), i.to_string()));
            }
        }
        for (card, name) in numbered {
            for plugin in ["hw", "plughw"] {
                out.push((name.to_string(), format!("{plugin}:CARD={card},DEV=0")));
            }
        }
        out
    }

    #[test]
    fn alsa_plugins_are_not_offered_as_input_devices() {
        let devices = alsa_devices(
            ARECORD_L,
            &[
                ("0", "HDA Intel PCH, ALC257 Analog"),
                ("1", "USB Microphone, USB Audio"),
            ],
        );
        assert_eq!(devices.len(), 28, "24 hints and 4 numbered copies");
        let offered: Vec<&str> = offered_inputs(true, &devices)
            .into_iter()
            .map(|i| devices[i].1.as_str())
            .collect();
        // Worked out by hand from the listing: the sound servers and the default, then each
        // card's capture PCMs; no plugin definition, no USB stream output, no numbered copy.
        assert_eq!(
            offered,
            [
                "pipewire",
                "pulse",
                "default",
                "sysdefault:CARD=PCH",
                "front:CARD=PCH,DEV=0",
                "dsnoop:CARD=PCH,DEV=0",
                "hw:CARD=PCH,DEV=0",
                "plughw:CARD=PCH,DEV=0",
                "sysdefault:CARD=Microphone",
                "front:CARD=Microphone,DEV=0",
                "dsnoop:CARD=Microphone,DEV=0",
                "hw:CARD=Microphone,DEV=0",
                "plughw:CARD=Microphone,DEV=0",
            ]
        );
        for (name, _) in &devices {
            let plugin_name = name.contains("Plugin") || name.contains("Discard all samples");
            assert!(
                !plugin_name
                    || offered_inputs(true, &devices)
                        .iter()
                        .all(|&i| &devices[i].0 != name),
                "{name} is offered"
            );
        }
    }

    #[test]
    fn numbered_alsa_cards_stay_when_no_named_copy_is_listed() {
        // A card the hints do not list (no conf for its driver): cpal's numbered devices are all
        // there is, and they stay.
        let devices = alsa_devices("null\n    Discard all samples\n", &[("2", "Loopback PCM")]);
        let offered: Vec<&str> = offered_inputs(true, &devices)
            .into_iter()
            .map(|i| devices[i].1.as_str())
            .collect();
        assert_eq!(offered, ["hw:CARD=2,DEV=0", "plughw:CARD=2,DEV=0"]);
        // Two identical microphones on two cards are two devices.
        let twins = vec![
            ("USB Mic".to_string(), "hw:CARD=Device,DEV=0".to_string()),
            ("USB Mic".to_string(), "hw:CARD=Device_1,DEV=0".to_string()),
        ];
        assert_eq!(offered_inputs(true, &twins), [0, 1]);
    }

    #[test]
    fn sound_server_hosts_offer_every_device() {
        let list = vec![
            (
                "Monitor of Null Output".to_string(),
                "viz.monitor".to_string(),
            ),
            ("null".to_string(), "null".to_string()),
        ];
        assert_eq!(offered_inputs(false, &list), [0, 1]);
        assert_eq!(
            listed_name("Monitor of Null Output", "viz.monitor"),
            "Monitor of Null Output (viz.monitor)"
        );
        assert_eq!(listed_name("pulse", "pulse"), "pulse");
        assert_eq!(listed_name("Mic", ""), "Mic");
    }

    #[test]
    fn device_matching_rules() {
        let c = |n: &str, id: &str| (n.to_string(), id.to_string());
        let list = vec![
            c("Monitor of Null Output", "viz.monitor"),
            c("Built-in Audio Analog Stereo", "alsa_input.pci"),
            c("Monitor of Built-in Audio", "alsa_output.pci.monitor"),
        ];
        assert_eq!(match_device_name("Monitor of Null Output", &list), Ok(0));
        assert_eq!(match_device_name("viz.monitor", &list), Ok(0));
        assert_eq!(match_device_name("analog", &list), Ok(1));
        assert_eq!(match_device_name("null", &list), Ok(0));
        assert_eq!(match_device_name("monitor", &list), Err(Some(vec![0, 2])));
        assert_eq!(match_device_name("nothing", &list), Err(None));
        // An exact match wins over substring ambiguity.
        let list2 = vec![c("Mic", ""), c("Mic 2", "")];
        assert_eq!(match_device_name("Mic", &list2), Ok(0));
    }
}
