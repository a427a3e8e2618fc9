//! Live input through cpal 0.18: device lookup, stream set-up, and the real-time data callback.
//!
//! The stream uses the device's default input config (PulseAudio's monitor source, for instance,
//! gives 2 channels, 48 kHz, `I16`). Whatever the sample format, one generic callback
//! ([`push_mono_frames`]) converts each sample to `f32` in [-1, 1] with `dasp_sample`'s
//! `FromSample` (re-exported by cpal: signed integers divide by 2^(bits−1), unsigned ones are
//! centred first, so `u8` 128 → 0.0), averages the channels of each frame and pushes the mono
//! value into the `rtrb` ring. It never allocates, locks, logs or blocks; what does not fit is
//! counted in an `Arc<AtomicU64>`.
//!
//! The error callback (a different callback, on a non-real-time path) stores the last error in a
//! `Mutex<Option<String>>` that only it and the UI touch; buffer over/underruns are only counted.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use cpal::traits::{DeviceTrait, HostTrait, StreamTrait};
use cpal::{FromSample, Sample, SampleFormat, SizedSample};
use rtrb::{Consumer, Producer, RingBuffer};

use super::AudioError;

/// How long the backend may take to build a stream before it is given up (seconds).
const BUILD_TIMEOUT: Duration = Duration::from_secs(5);

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

/// The body of the data callback: averages each frame of `channels` interleaved samples to one
/// mono `f32` and pushes it into `producer`. Returns how many mono samples did not fit (the newest
/// ones of `data`). A trailing partial frame is ignored; `channels == 0` pushes nothing.
///
/// Real-time safe: no allocation, lock, log or blocking call.
pub fn push_mono_frames<T: Sample>(data: &[T], channels: usize, producer: &mut Producer<f32>) -> u64
where
    f32: FromSample<T>,
{
    if channels == 0 {
        return 0;
    }
    let frames = data.len() / channels;
    let room = producer.slots();
    let n = frames.min(room);
    if n > 0 {
        let inv = 1.0 / channels as f32;
        let mono = data[..n * channels].chunks_exact(channels).map(|frame| {
            let mut sum = 0.0f32;
            for &s in frame {
                sum += sample_to_f32(s);
            }
            sum * inv
        });
        if let Ok(chunk) = producer.write_chunk_uninit(n) {
            chunk.fill_from_iter(mono);
        }
    }
    (frames - n) as u64
}

/// A running cpal input stream feeding the ring. Dropping it stops the stream.
pub struct LiveCapture {
    // Kept alive for as long as samples should flow.
    _stream: cpal::Stream,
    last_error: Arc<Mutex<Option<String>>>,
    xruns: Arc<AtomicU64>,
    device_name: String,
    sample_rate: u32,
    channels: u16,
    format: SampleFormat,
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
    /// Builds and starts an input stream on `device` with its default input config, feeding a new
    /// ring of `ring_capacity` mono samples (at least 1).
    ///
    /// # Errors
    ///
    /// cpal's message (no default config, stream not built or not started) or the unsupported
    /// sample format (DSD), as one line to be wrapped with the device name by the caller.
    pub fn open(device: &cpal::Device, ring_capacity: usize) -> Result<LiveParts, String> {
        let supported = device
            .default_input_config()
            .map_err(|e| format!("no default input config: {e}"))?;
        let format = supported.sample_format();
        let config = supported.config();
        if config.channels == 0 {
            return Err("the device reports 0 input channels".to_string());
        }
        if config.sample_rate == 0 {
            return Err("the device reports a sample rate of 0 Hz".to_string());
        }
        let (producer, consumer) = RingBuffer::new(ring_capacity.max(1));
        let dropped = Arc::new(AtomicU64::new(0));
        let last_error = Arc::new(Mutex::new(None));
        let xruns = Arc::new(AtomicU64::new(0));
        let ctx = CallbackCtx {
            producer,
            dropped: dropped.clone(),
            last_error: last_error.clone(),
            xruns: xruns.clone(),
        };
        let stream = match format {
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
        let live = LiveCapture {
            _stream: stream,
            last_error,
            xruns,
            device_name: device_name(device),
            sample_rate: config.sample_rate,
            channels: config.channels,
            format,
        };
        Ok((live, consumer, dropped))
    }

    /// The device's sample rate in Hz.
    pub fn sample_rate(&self) -> u32 {
        self.sample_rate
    }

    /// Channels the device delivers (mixed to mono before the ring).
    pub fn channels(&self) -> u16 {
        self.channels
    }

    /// The sample format the device delivers.
    pub fn sample_format(&self) -> SampleFormat {
        self.format
    }

    /// The device's name.
    pub fn device_name(&self) -> &str {
        &self.device_name
    }

    /// `"live: <device name> (48000 Hz, 2 ch, I16)"`.
    pub fn label(&self) -> String {
        format!(
            "live: {} ({} Hz, {} ch, {:?})",
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
}

/// What the two callbacks own.
struct CallbackCtx {
    producer: Producer<f32>,
    dropped: Arc<AtomicU64>,
    last_error: Arc<Mutex<Option<String>>>,
    xruns: Arc<AtomicU64>,
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
        dropped,
        last_error,
        xruns,
    } = ctx;
    let channels = usize::from(config.channels);
    let data_callback = move |data: &[T], _: &cpal::InputCallbackInfo| {
        let lost = push_mono_frames(data, channels, &mut producer);
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

/// Input device names of `host`, in enumeration order; empty when enumeration fails.
pub fn input_device_names_of(host: &cpal::Host) -> Vec<String> {
    match host.input_devices() {
        Ok(devices) => devices.map(|d| device_name(&d)).collect(),
        Err(_) => Vec::new(),
    }
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

/// Finds the input device of the default host named `wanted` (see [`match_device_name`]).
///
/// # Errors
///
/// [`AudioError::DeviceList`] when the host cannot enumerate, [`AudioError::DeviceNotFound`]
/// (listing the input devices), [`AudioError::DeviceAmbiguous`].
pub fn find_input_device(wanted: &str) -> Result<cpal::Device, AudioError> {
    let host = cpal::default_host();
    let devices: Vec<cpal::Device> = host
        .input_devices()
        .map_err(|e| AudioError::DeviceList {
            name: wanted.to_string(),
            reason: e.to_string(),
        })?
        .collect();
    let candidates: Vec<(String, String)> = devices
        .iter()
        .map(|d| {
            let id = d.id().map(|id| id.id().to_string()).unwrap_or_default();
            (device_name(d), id)
        })
        .collect();
    let join = |idx: &mut dyn Iterator<Item = usize>| {
        idx.map(|i| candidates[i].0.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    match match_device_name(wanted, &candidates) {
        Ok(i) => {
            let mut devices = devices;
            Ok(devices.swap_remove(i))
        }
        Err(None) => Err(AudioError::DeviceNotFound {
            name: wanted.to_string(),
            available: if candidates.is_empty() {
                "none".to_string()
            } else {
                join(&mut (0..candidates.len()))
            },
        }),
        Err(Some(hits)) => Err(AudioError::DeviceAmbiguous {
            name: wanted.to_string(),
            matches: join(&mut hits.into_iter()),
        }),
    }
}

/// Opens the default input device of the default host.
///
/// # Errors
///
/// A short reason for the fallback notice, e.g. "no default input device on host ALSA" or
/// "'Default Audio Device': no default input config: ...".
pub fn open_default(ring_capacity: usize) -> Result<LiveParts, String> {
    let host = cpal::default_host();
    let Some(device) = host.default_input_device() else {
        return Err(format!(
            "no default input device on host {}",
            host.id().name()
        ));
    };
    LiveCapture::open(&device, ring_capacity)
        .map_err(|e| format!("'{}': {e}", device_name(&device)))
}

#[cfg(test)]
mod tests {
    use super::*;

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
