//! `--fft-on auto` (the default): which FFT path is faster on this adapter, measured once,
//! before the first spectrogram is created ([`measure_at_startup`], from the scene table's
//! start-up hook, which may block: before the first frame when the spectrogram is the starting
//! scene), and kept for the adapter: every analysis built later (a new FFT size, hop,
//! window or source, in a frame) takes the kept choice without waiting ([`choose`]). On a
//! hardware GPU the WGSL FFT wins; on a software rasterizer (lavapipe) the GPU "device" is the
//! same CPU cores running compute shaders whose every storage access is a loop over lanes, and
//! rustfft wins by several times.

use std::sync::Mutex;
use std::time::Instant;

use super::{FftOn, MAX_BATCH, Settings};
use crate::audio::stft::Stft;
use crate::gpu::Gpu;
use crate::gpu::frame::OwnedFrame;
use crate::spectrogram::fft::GpuFft;

/// Repetitions of each measurement (the fastest counts).
pub const REPS: u32 = 5;

/// The outcome of one measurement.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct FftChoice {
    /// The path chosen: [`FftOn::Cpu`] or [`FftOn::Gpu`].
    pub on: FftOn,
    /// Columns per batch measured: the columns one 60 Hz frame brings at this sample rate and
    /// hop (at least 1, at most [`MAX_BATCH`]).
    pub columns: u32,
    /// CPU path: window + real FFT + dB of the batch (`Stft::pop_column` × columns), ms, the
    /// fastest of [`REPS`] runs.
    pub cpu_ms: f64,
    /// GPU path: the batch's [`GpuFft::encode`] passes, ms per run, by GPU timestamps where the
    /// device has them, else submit-to-idle wall time; `None` when the GPU FFT could not be
    /// built.
    pub gpu_ms: Option<f64>,
    /// Why, in words.
    pub reason: String,
}

/// Columns one 60 Hz frame brings at `sample_rate` Hz with hop `hop`: ⌈rate / hop / 60⌉ in
/// 1..=[`MAX_BATCH`].
pub(crate) fn columns_per_frame(sample_rate: u32, hop: usize) -> u32 {
    let c = (f64::from(sample_rate) / hop.max(1) as f64 / 60.0).ceil();
    (c as u32).clamp(1, MAX_BATCH)
}

/// The choices measured at start-up, per adapter ([`adapter_key`]).
static MEASURED: Mutex<Vec<(String, FftChoice)>> = Mutex::new(Vec::new());

/// The adapter a measurement holds for: its name, backend and kind.
fn adapter_key(gpu: &Gpu) -> String {
    let s = &gpu.summary;
    format!("{} / {} / {}", s.name, s.backend, s.device_type)
}

/// Start-up (before the frame loop; blocks for a few milliseconds): measures both paths for
/// `settings` at `sample_rate` ([`measure`], with a GPU FFT built for them) and keeps the
/// choice for this adapter, for [`choose`].
pub fn measure_at_startup(gpu: &Gpu, settings: &Settings, sample_rate: u32) -> FftChoice {
    let gpu_fft = GpuFft::new(&gpu.device, settings.fft_size, MAX_BATCH).ok();
    let mut c = measure(gpu, settings, sample_rate, gpu_fft.as_ref());
    c.reason = format!("measured at start-up: {}", c.reason);
    let key = adapter_key(gpu);
    if let Ok(mut m) = MEASURED.lock() {
        m.retain(|(k, _)| *k != key);
        m.push((key, c.clone()));
    }
    c
}

/// The start-up measurement kept for this adapter, if one was made.
fn kept(gpu: &Gpu) -> Option<FftChoice> {
    let key = adapter_key(gpu);
    let m = MEASURED.lock().ok()?;
    m.iter().find(|(k, _)| *k == key).map(|(_, c)| c.clone())
}

/// Whether a start-up measurement is kept for this adapter.
pub fn measured(gpu: &Gpu) -> bool {
    kept(gpu).is_some()
}

/// The path for `--fft-on auto`, without waiting on the GPU (so an analysis can be rebuilt in a
/// frame): the start-up measurement on this adapter ([`measure_at_startup`]), or, where none
/// was made (a scene built outside the app: tests, tools), the adapter's kind: the CPU on a CPU
/// adapter (a software rasterizer), the GPU on any other. `gpu_fft_built`: whether the GPU FFT
/// could be built for the new settings (if not, the CPU).
pub fn choose(gpu: &Gpu, gpu_fft_built: bool) -> FftChoice {
    let mut c = kept(gpu).unwrap_or_else(|| {
        let cpu_adapter = gpu.summary.device_type == format!("{:?}", wgpu::DeviceType::Cpu);
        FftChoice {
            on: if cpu_adapter { FftOn::Cpu } else { FftOn::Gpu },
            columns: 0,
            cpu_ms: f64::NAN,
            gpu_ms: None,
            reason: format!(
                "not measured: the {} on a {} adapter",
                if cpu_adapter { "CPU" } else { "GPU" },
                gpu.summary.device_type
            ),
        }
    });
    if !gpu_fft_built && c.on == FftOn::Gpu {
        c.on = FftOn::Cpu;
        c.reason = "the GPU FFT could not be built for these settings".to_string();
    }
    c
}

/// Measures both paths for `settings` at `sample_rate` (`gpu_fft`: the GPU FFT built for these
/// settings, or `None` when building it failed) and picks the faster; a tie goes to the GPU (it
/// leaves the CPU free). Blocks for a few milliseconds (a handful of batches each way, at most
/// 2·[`REPS`] + 2 GPU submits and waits): never in a frame; [`measure_at_startup`] runs it.
pub fn measure(
    gpu: &Gpu,
    settings: &Settings,
    sample_rate: u32,
    gpu_fft: Option<&GpuFft>,
) -> FftChoice {
    let columns = columns_per_frame(sample_rate, settings.hop);
    let n = settings.fft_size;
    let samples = noise((columns as usize - 1) * settings.hop + n, 0x5eed);
    let cpu_ms = match Stft::with_window(n, settings.hop, settings.window) {
        Ok(mut stft) => {
            let mut out = vec![0f32; stft.bins()];
            (0..REPS)
                .map(|_| {
                    stft.reset();
                    stft.push(&samples);
                    let t = Instant::now();
                    for _ in 0..columns {
                        stft.pop_column(&mut out);
                    }
                    t.elapsed().as_secs_f64() * 1e3
                })
                .fold(f64::INFINITY, f64::min)
        }
        Err(_) => f64::INFINITY,
    };
    let gpu_ms = gpu_fft.map(|f| {
        let mut frames = Vec::with_capacity(columns as usize * n);
        for c in 0..columns as usize {
            frames.extend_from_slice(&samples[c * settings.hop..c * settings.hop + n]);
        }
        let mut upload = OwnedFrame::new(gpu, crate::gpu::upload::Strategy::WriteBuffer);
        upload.frame().write_slice(f.input(), 0, &frames);
        upload.submit();
        let (wall, stamped) =
            crate::gpu::timing::time_compute_pass(gpu, "spectrogram:fft:choice", REPS, |pass| {
                f.encode(pass, columns)
            });
        stamped.unwrap_or(wall) * 1e3
    });
    let on = match gpu_ms {
        Some(g) if g <= cpu_ms => FftOn::Gpu,
        Some(_) => FftOn::Cpu,
        None if cpu_ms.is_finite() => FftOn::Cpu,
        None => FftOn::Gpu,
    };
    let reason = match gpu_ms {
        Some(g) => format!(
            "{} is faster here: {columns} column(s) of N = {n} take {cpu_ms:.3} ms on the CPU, \
             {g:.3} ms on the GPU ({}, a {} adapter)",
            if on == FftOn::Gpu { "GPU" } else { "CPU" },
            gpu.summary.name,
            gpu.summary.device_type
        ),
        None => "the GPU FFT could not be built for these settings".to_string(),
    };
    FftChoice {
        on,
        columns,
        cpu_ms,
        gpu_ms,
        reason,
    }
}

/// Deterministic noise in [−1, 1) (xorshift64*), for benchmarks and the FFT-path measurement
/// (`scene::spectrogram::fft_choice`).
pub fn noise(len: usize, seed: u64) -> Vec<f32> {
    let mut s = seed | 1;
    (0..len)
        .map(|_| {
            s ^= s >> 12;
            s ^= s << 25;
            s ^= s >> 27;
            let v = s.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 40; // 24 bits
            v as f32 / (1u64 << 23) as f32 - 1.0
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::columns_per_frame;

    #[test]
    fn columns_per_frame_rounds_up_and_clamps() {
        // 44.1 kHz / 256 / 60 = 2.87 → 3; 48 kHz / 800 / 60 = 1 exactly.
        assert_eq!(columns_per_frame(44_100, 256), 3);
        assert_eq!(columns_per_frame(48_000, 800), 1);
        assert_eq!(columns_per_frame(8_000, 32_768), 1);
        assert_eq!(columns_per_frame(192_000, 1), super::MAX_BATCH);
    }
}
