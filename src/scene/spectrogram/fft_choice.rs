//! `--fft-on auto` (the default): which FFT path is faster on this adapter for these settings,
//! measured when the analysis is built (at start-up and whenever the FFT size, hop or window
//! changes). On a hardware GPU the WGSL FFT wins; on a software rasterizer (lavapipe) the GPU
//! "device" is the same CPU cores running compute shaders whose every storage access is a loop
//! over lanes, and rustfft wins by several times.

use std::time::Instant;

use super::{FftOn, MAX_BATCH, Settings};
use crate::audio::stft::Stft;
use crate::gpu::Gpu;
use crate::gpu::fft::GpuFft;
use crate::gpu::frame::OwnedFrame;

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
pub fn columns_per_frame(sample_rate: u32, hop: usize) -> u32 {
    let c = (f64::from(sample_rate) / hop.max(1) as f64 / 60.0).ceil();
    (c as u32).clamp(1, MAX_BATCH)
}

/// Measures both paths for `settings` at `sample_rate` (`gpu_fft`: the GPU FFT built for these
/// settings, or `None` when building it failed) and picks the faster; a tie goes to the GPU (it
/// leaves the CPU free). Blocks for a few milliseconds (a handful of batches each way, at most
/// 2·[`REPS`] + 2 GPU submits): call it when the analysis is built, not every frame.
pub fn measure(
    gpu: &Gpu,
    settings: &Settings,
    sample_rate: u32,
    gpu_fft: Option<&GpuFft>,
) -> FftChoice {
    let columns = columns_per_frame(sample_rate, settings.hop);
    let n = settings.fft_size;
    let samples = crate::gpu::fft::bench::noise((columns as usize - 1) * settings.hop + n, 0x5eed);
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
