//! Benchmark helpers of the time-series GPU path, callable from any binary on any adapter
//! (`benches/timeseries.rs`, or a bench subcommand on the H200).

use std::time::Instant;

use vizdeck::gpu::Gpu;
use vizdeck::gpu::frame::OwnedFrame;
use vizdeck::gpu::timing::time_compute_pass;
use vizdeck::gpu::upload::Strategy;
use vizdeck::scene::timeseries::gpu::{Mirrors, Pipelines, ViewUniform};
use vizdeck::series::decimate::decimate_m4_rel;
use vizdeck::series::store::Series;

/// Pixel columns of the benchmark view (a 1920-pixel-wide chart).
pub const BENCH_COLUMNS: u32 = 1920;

/// A deterministic random walk of `n` samples at 1 µs spacing (xorshift64*, uniform steps).
pub fn random_walk_series(n: u64, seed: u64) -> Series {
    let mut s = Series::new("bench", usize::MAX);
    let mut x = seed.max(1);
    let mut v = 0.0f32;
    for k in 0..n {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        let u = (x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 40) as f32 / (1u64 << 24) as f32;
        v += u - 0.5;
        s.push(k as f64 * 1e-6, v);
    }
    s
}

/// One row of [`bench_table`].
#[derive(Clone, Debug)]
pub struct BenchRow {
    /// Points in view.
    pub points: u64,
    /// Upload of the values and prefix plus the full pyramid build, ms (once).
    pub upload_ms: f64,
    /// CPU column bounds (binary searches) per frame, ms (median).
    pub bounds_ms: f64,
    /// M4 dispatch submitted and waited for, per frame, ms (median; includes submit latency).
    pub frame_ms: f64,
    /// Bytes the M4 pass reads per frame (upper bound from the pyramid walk).
    pub bytes_read: u64,
    /// The M4 pass alone from GPU timestamps, ms per frame (`None` without TIMESTAMP_QUERY).
    pub m4_gpu_ms: Option<f64>,
    /// A full pyramid build (every node of every level, from the values on the GPU) from GPU
    /// timestamps, ms.
    pub build_gpu_ms: Option<f64>,
    /// Bytes that full build reads and writes.
    pub build_bytes: u64,
    /// `Some(limit)` when the series exceeds the `limit` samples a GPU mirror holds whole
    /// ([`Pipelines::mirror_span`]: three quarters of the adapter's storage binding): the scene
    /// then decimates a view of all of them on the CPU ([`decimate_m4_rel`]) and `frame_ms` is
    /// that CPU M4 per frame (the GPU columns are empty).
    pub cpu_fallback: Option<u64>,
}

/// The frame of a series too large for the adapter: the scene's CPU M4 fallback over all `n`
/// points into [`BENCH_COLUMNS`] columns, median of `reps` frames.
fn cpu_fallback_row(n: u64, reps: u32, limit: u64) -> BenchRow {
    let series = random_walk_series(n, 7);
    let mut cols = Vec::new();
    let mut frames = Vec::new();
    for _ in 0..reps {
        let t = Instant::now();
        decimate_m4_rel(
            &series,
            0.0,
            n as f64 * 1e-6,
            BENCH_COLUMNS as usize,
            &mut cols,
        );
        frames.push(t.elapsed().as_secs_f64() * 1e3);
    }
    BenchRow {
        points: n,
        upload_ms: 0.0,
        bounds_ms: 0.0,
        frame_ms: median(&mut frames),
        bytes_read: n * 12,
        m4_gpu_ms: None,
        build_gpu_ms: None,
        build_bytes: 0,
        cpu_fallback: Some(limit),
    }
}

/// Measures the GPU M4 frame for each size in `points` (all points in view, 1920 columns),
/// `reps` frames each (at least 1). Sizes beyond the adapter's storage-binding limit are reported
/// as skipped.
pub fn bench_rows(gpu: &Gpu, points: &[u64], reps: u32) -> Vec<Result<BenchRow, String>> {
    let pipes = Pipelines::new(&gpu.device, vizdeck::scene::SCENE_FORMAT);
    let reps = reps.max(1);
    points
        .iter()
        .map(|&n| {
            if n == 0 {
                return Err("0 points".to_string());
            }
            if n > pipes.mirror_span() {
                return Ok(cpu_fallback_row(n, reps, pipes.mirror_span()));
            }
            let series = random_walk_series(n, 7);
            let all = std::slice::from_ref(&series);
            let mut m = Mirrors::new();
            let r1 = n as f64 * 1e-6;
            let view = ViewUniform::new(-1.0, 1.0, BENCH_COLUMNS, 512, u32::MAX);
            let t = Instant::now();
            let mut f = OwnedFrame::new(gpu, Strategy::WriteBuffer);
            // The view: column bounds on the CPU (in `upload`) and the frame's few writes.
            let set_view = |m: &mut Mirrors, f: &mut OwnedFrame<'_>| {
                m.begin_views(BENCH_COLUMNS, &view);
                m.add_view(&pipes, 0, &series, (0.0, r1), u32::MAX, 0)?;
                m.upload(&mut f.frame(), &pipes, all);
                Ok::<(), vizdeck::scene::timeseries::gpu::GpuM4Error>(())
            };
            m.sync(&mut f.frame(), &pipes, 0, &series)
                .map_err(|e| e.to_string())?;
            set_view(&mut m, &mut f).map_err(|e| e.to_string())?;
            m.run(&mut f, &pipes);
            gpu.wait_idle();
            let upload_ms = t.elapsed().as_secs_f64() * 1e3;
            let mut bounds = Vec::new();
            let mut frames = Vec::new();
            for _ in 0..reps {
                let t = Instant::now();
                set_view(&mut m, &mut f).map_err(|e| e.to_string())?;
                bounds.push(t.elapsed().as_secs_f64() * 1e3);
                let t = Instant::now();
                let enc = f.encoder();
                {
                    let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                        label: Some("timeseries:bench:m4"),
                        timestamp_writes: None,
                    });
                    m.encode(&pipes, &mut pass);
                }
                f.submit();
                gpu.wait_idle();
                frames.push(t.elapsed().as_secs_f64() * 1e3);
            }
            let (_, m4_gpu) = time_compute_pass(gpu, "timeseries:bench:m4", reps, |pass| {
                m.encode_m4(&pipes, pass)
            });
            let build_bytes = m.queue_full_build(0);
            set_view(&mut m, &mut f).map_err(|e| e.to_string())?;
            f.submit();
            let (_, build_gpu) = time_compute_pass(gpu, "timeseries:bench:build", 3, |pass| {
                m.encode_builds(&pipes, pass)
            });
            m.builds_submitted();
            Ok(BenchRow {
                points: n,
                upload_ms,
                bounds_ms: median(&mut bounds),
                frame_ms: median(&mut frames),
                bytes_read: m.m4_bytes_read(),
                m4_gpu_ms: m4_gpu.map(|s| s * 1e3),
                build_gpu_ms: build_gpu.map(|s| s * 1e3),
                build_bytes,
                cpu_fallback: None,
            })
        })
        .collect()
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

/// The GPU M4 timing table (markdown): per size, ms per frame at 1920 columns (GPU pass,
/// submitted and waited for; CPU column bounds listed apart), bytes read by the pass, the
/// achieved GB/s on those bytes, and the equivalent GB/s of a full scan of the points in view
/// (4 bytes each) in the same time; then the M4 pass alone and a full pyramid build (the pass
/// that scans every value) from GPU timestamps, with the build's GB/s (bytes read + written).
pub fn bench_table(gpu: &Gpu, points: &[u64], reps: u32) -> String {
    let mut out = format!(
        "adapter: {} ({}, {})\n\n| points in view | GPU M4 ms/frame | CPU bounds ms/frame | bytes read | GB/s read | full-scan equiv. GB/s | upload+build ms | M4 GPU ms (timestamps) | full build GPU ms | build GB/s |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
        gpu.summary.name, gpu.summary.backend, gpu.summary.device_type
    );
    let opt = |v: Option<f64>, digits: usize| {
        v.map_or_else(|| "–".to_string(), |v| format!("{v:.digits$}"))
    };
    for row in bench_rows(gpu, points, reps) {
        match row {
            Ok(BenchRow {
                points,
                frame_ms,
                cpu_fallback: Some(limit),
                ..
            }) => {
                out += &format!(
                    "| {points} | CPU M4 fallback (over the {limit} samples a GPU mirror holds, 3/4 of a storage binding): {frame_ms:.1} ms/frame, {:.2} G values/s | | | | | | | | |\n",
                    points as f64 / (frame_ms * 1e-3) / 1e9
                );
            }
            Ok(r) => {
                let s = r.frame_ms * 1e-3;
                let build_gbs = r
                    .build_gpu_ms
                    .map(|ms| r.build_bytes as f64 / (ms * 1e-3) / 1e9);
                out += &format!(
                    "| {} | {:.3} | {:.3} | {} | {:.2} | {:.1} | {:.0} | {} | {} | {} |\n",
                    r.points,
                    r.frame_ms,
                    r.bounds_ms,
                    r.bytes_read,
                    r.bytes_read as f64 / s / 1e9,
                    r.points as f64 * 4.0 / s / 1e9,
                    r.upload_ms,
                    opt(r.m4_gpu_ms, 4),
                    opt(r.build_gpu_ms, 3),
                    opt(build_gbs, 1),
                );
            }
            Err(e) => out += &format!("| skipped: {e} | | | | | | | | | |\n"),
        }
    }
    out
}
