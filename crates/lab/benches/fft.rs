//! Spectrogram FFT benchmarks (issue 3, "Numbers").
//!
//! - `cpu/stft/N` vs `cpu/realfft/N`: time per STFT column of `vizdeck::audio::stft::Stft`
//!   (push one hop of N/4 samples, pop one dB column: window, finite check, realfft, dB pass)
//!   against
//!   realfft's own `process_with_scratch` of the same size (input and scratch reused), and
//!   `cpu/realfft_copy/N`: the frame copied into realfft's input first (realfft overwrites its
//!   input, so any STFT on it copies), N = 1024…16384. The issue asks stft ≤ 1.05 × realfft.
//!   Before the criterion runs, a paired table (`cpu_ratio_table`) alternates blocks of the two
//!   on the same thread and reports the median of the per-pair ratios, which a drifting clock
//!   (turbo, a neighbour on the host) moves far less than two separate criterion runs.
//! - `gpu/N`: one `GpuFft::encode` of 256 columns (window + real FFT + split + dB), submitted and
//!   waited for, N = 1024…16384; throughput in bytes of f32 input. Before the criterion runs, the
//!   same sizes go through `vizdeck_lab::fft::bench_table` (wall clock and, when the adapter has
//!   TIMESTAMP_QUERY, GPU timestamps), printed as a markdown table.
//!
//! Run: `cargo bench -p vizdeck-lab --bench fft` (lavapipe here). Environment: `VIZDECK_FFT_BENCH_BATCH`
//! (columns per batch, default 256), `VIZDECK_FFT_BENCH_REPS` (encodes per timed submit in the
//! table, default 5), `VIZDECK_FFT_TABLE_ONLY=1` (print the GPU table and skip criterion).

#![allow(clippy::disallowed_methods)] // tests and benches drive the GPU with their own submits

#[path = "../../../tests/common/mod.rs"]
mod common;

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group};
use realfft::RealFftPlanner;
use vizdeck::audio::stft::Stft;
use vizdeck::gpu::Gpu;
use vizdeck::scene::spectrogram::fft::GpuFft;
use vizdeck_lab::fft::bench_table;

const SIZES: [usize; 5] = [1024, 2048, 4096, 8192, 16_384];

fn noise(len: usize) -> Vec<f32> {
    let mut s = 0x1234_5678_9abc_def1u64;
    (0..len)
        .map(|_| {
            s ^= s >> 12;
            s ^= s << 25;
            s ^= s >> 27;
            (s.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 40) as f32 / (1u64 << 23) as f32 - 1.0
        })
        .collect()
}

fn env_u32(name: &str, default: u32) -> u32 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&b| b > 0)
        .unwrap_or(default)
}

fn batch() -> u32 {
    env_u32("VIZDECK_FFT_BENCH_BATCH", 256)
}

fn table(gpu: &Gpu) {
    let reps = env_u32("VIZDECK_FFT_BENCH_REPS", 5);
    println!("\n{}", bench_table(gpu, &SIZES, batch(), reps));
}

fn gpu_device() -> Option<Gpu> {
    match common::try_gpu() {
        Ok(g) => Some(g),
        Err(e) => {
            eprintln!("no GPU adapter, skipping the GPU benches: {e}");
            None
        }
    }
}

/// One size of the CPU comparison: an STFT with hop N/4 primed with N − hop samples, and
/// realfft's forward plan with its buffers.
struct CpuCase {
    n: usize,
    signal: Vec<f32>,
    stft: Stft,
    col: Vec<f32>,
    fft: std::sync::Arc<dyn realfft::RealToComplex<f32>>,
    input: Vec<f32>,
    output: Vec<realfft::num_complex::Complex<f32>>,
    scratch: Vec<realfft::num_complex::Complex<f32>>,
}

impl CpuCase {
    fn new(n: usize) -> CpuCase {
        let hop = n / 4;
        let signal = noise(n + hop);
        let mut stft = Stft::new(n, hop).expect("stft");
        stft.push(&signal[..n - hop]);
        let col = vec![0.0f32; stft.bins()];
        let fft = RealFftPlanner::<f32>::new().plan_fft_forward(n);
        let input = signal[..n].to_vec();
        let output = fft.make_output_vec();
        let scratch = fft.make_scratch_vec();
        CpuCase {
            n,
            signal,
            stft,
            col,
            fft,
            input,
            output,
            scratch,
        }
    }

    /// One STFT column: push one hop, pop one dB column.
    fn stft_column(&mut self) {
        let n = self.n;
        self.stft.push(&self.signal[n - n / 4..n]);
        black_box(self.stft.pop_column(&mut self.col));
        black_box(&self.col);
    }

    /// realfft's own transform of the same size (input reused: realfft overwrites it).
    fn realfft(&mut self) {
        self.fft
            .process_with_scratch(&mut self.input, &mut self.output, &mut self.scratch)
            .expect("realfft");
        black_box(&self.output);
    }
}

/// Paired comparison: for each N, 201 rounds of (one block of `stft` columns, one block of
/// `realfft` calls, in alternating order), each block timed with `Instant`; prints a markdown
/// table of the per-column medians and of the median per-round ratio stft ÷ realfft.
fn cpu_ratio_table() {
    println!(
        "\n| N | stft µs/column (median) | realfft µs (median) | stft ÷ realfft (median of 201 paired rounds) |"
    );
    println!("|---:|---:|---:|---:|");
    for n in SIZES {
        let mut case = CpuCase::new(n);
        let reps = (2_000_000 / n).max(10);
        let time = |case: &mut CpuCase, f: fn(&mut CpuCase)| {
            let t = std::time::Instant::now();
            for _ in 0..reps {
                f(case);
            }
            t.elapsed().as_secs_f64() / reps as f64
        };
        // Warm-up, then paired rounds in alternating order.
        time(&mut case, CpuCase::stft_column);
        time(&mut case, CpuCase::realfft);
        let (mut a, mut b, mut ratio) = (Vec::new(), Vec::new(), Vec::new());
        for round in 0..201 {
            let (x, y) = if round % 2 == 0 {
                let x = time(&mut case, CpuCase::stft_column);
                (x, time(&mut case, CpuCase::realfft))
            } else {
                let y = time(&mut case, CpuCase::realfft);
                (time(&mut case, CpuCase::stft_column), y)
            };
            a.push(x);
            b.push(y);
            ratio.push(x / y);
        }
        let median = |v: &mut Vec<f64>| {
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        };
        println!(
            "| {n} | {:.3} | {:.3} | {:.3} |",
            median(&mut a) * 1e6,
            median(&mut b) * 1e6,
            median(&mut ratio)
        );
    }
}

fn cpu(c: &mut Criterion) {
    cpu_ratio_table();
    let mut g = c.benchmark_group("cpu");
    g.sample_size(20)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1));
    for n in SIZES {
        let mut case = CpuCase::new(n);
        g.bench_with_input(BenchmarkId::new("stft", n), &n, |b, _| {
            b.iter(|| case.stft_column())
        });
        g.bench_with_input(BenchmarkId::new("realfft", n), &n, |b, _| {
            b.iter(|| case.realfft())
        });
        // realfft overwrites its input, so an STFT built on it copies each frame in first.
        g.bench_with_input(BenchmarkId::new("realfft_copy", n), &n, |b, _| {
            b.iter(|| {
                case.input.copy_from_slice(&case.signal[..n]);
                case.realfft();
            })
        });
    }
    g.finish();
}

fn gpu(c: &mut Criterion) {
    let Some(gpu) = gpu_device() else {
        return;
    };
    let batch = batch();
    table(&gpu);
    let mut g = c.benchmark_group("gpu");
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    for n in SIZES {
        let fft = match GpuFft::new(&gpu.device, n, batch) {
            Ok(f) => f,
            Err(e) => {
                eprintln!("N = {n}: {e}");
                continue;
            }
        };
        gpu.queue.write_buffer(
            fft.input(),
            0,
            bytemuck::cast_slice(&noise(batch as usize * n)),
        );
        g.throughput(Throughput::Bytes(u64::from(batch) * n as u64 * 4));
        g.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
            b.iter(|| {
                let mut enc = gpu.device.create_command_encoder(&Default::default());
                {
                    let mut pass = enc.begin_compute_pass(&Default::default());
                    fft.encode(&mut pass, batch);
                }
                gpu.queue.submit([enc.finish()]);
                gpu.wait_idle();
            })
        });
    }
    g.finish();
}

criterion_group!(benches, cpu, gpu);

fn main() {
    if std::env::var_os("VIZDECK_FFT_TABLE_ONLY").is_some() {
        if let Some(gpu) = gpu_device() {
            table(&gpu);
        }
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
