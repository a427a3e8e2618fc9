//! `vizdeck bench`: benchmark mode.
//!
//! - **Scenes** ([`run_scene`]): each scene headless with a fixed seed and workload, a simulated
//!   clock (1/60 s a frame), `warmup` frames, then `frames` recorded frames at a set size; each
//!   frame waits for its GPU work (throughput, like a present would). One report per run:
//!   `bench-<scene>-<W>x<H>.json` and `.md` (adapter, backend, driver, sizes, workload, summary,
//!   mean CPU split and GPU pass times read back from the run's CSV, also written).
//!   With `--screenshots`, each scene runs a second time saving a PNG of every frame through the
//!   readback ring, and the report gives `p99 with / p99 without`.
//! - **Uploads** ([`upload_table`], [`readback_table`]): every [`Strategy`] × payload size, GB/s
//!   and the CPU time per frame it costs; readback GB/s through the [`ReadbackRing`].
//! - **Kernels** ([`kernel_tables`]): the GPU FFT and particle tables the other modules expose.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::deck::{Deck, Output};
use crate::gpu::Gpu;
use crate::gpu::readback::{Consumer, ReadbackRing};
use crate::gpu::upload::{Strategy, Uploader};
use crate::scene::SCENES;

use super::memory::{GpuMemory, ProcessMemory};
use super::record::CSV_HEADER;
use super::summary::Summary;

/// Simulated time per frame: the headless clock's.
pub use crate::headless::FRAME_DT;

/// Workload and sizes of one scene run.
#[derive(Clone, Debug, serde::Serialize)]
pub struct SceneBench {
    /// Scene id.
    pub scene: String,
    /// Output size, pixels.
    pub size: (u32, u32),
    /// Frames measured (after the warm-up).
    pub frames: u64,
    /// Frames run before measuring.
    pub warmup: u64,
    /// Seed of every random source.
    pub seed: u64,
    /// Particle count (particles scene).
    pub particles: u32,
    /// Save a PNG of every frame through the readback ring into this folder.
    #[serde(skip)]
    pub screenshot_dir: Option<PathBuf>,
    /// Upload strategy of the scenes' ping-pong buffers.
    pub upload: Strategy,
}

/// What one scene run measured.
#[derive(Clone, Debug, serde::Serialize)]
pub struct SceneResult {
    /// Summary of the measured frames (frame time = `MsBetweenPresents`).
    pub summary: Summary,
    /// Mean of every numeric column of the run's CSV over the measured frames (`MsCPUBusy`,
    /// `MsGPURender`, `BytesUploaded`, ...); GPU columns over the frames that have them.
    pub means: serde_json::Map<String, serde_json::Value>,
    /// The CSV written.
    pub csv: PathBuf,
    /// Screenshots saved (when asked for) and dropped.
    pub screenshots: Option<(u64, u64)>,
    /// The process's RSS at the end of the run and its peak during the run (the peak is reset
    /// when the run starts, where the system allows it).
    pub memory: Option<ProcessMemory>,
    /// GPU memory held through wgpu's allocator at the end of the run (scene, deck and egui).
    pub gpu_memory: Option<GpuMemory>,
}

/// Errors of `vizdeck bench`.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// The scene could not start.
    #[error("bench {scene}: {reason}")]
    Scene {
        /// Scene id.
        scene: String,
        /// Why.
        reason: String,
    },
    /// A report or CSV could not be written or read.
    #[error("bench: '{path}': {reason}")]
    File {
        /// The file.
        path: String,
        /// Why.
        reason: String,
    },
}

fn file_err(path: &Path, e: impl std::fmt::Display) -> BenchError {
    BenchError::File {
        path: path.display().to_string(),
        reason: e.to_string(),
    }
}

/// Runs one scene headless (see the module docs) and writes its CSV into `out_dir`.
///
/// # Errors
///
/// [`BenchError::Scene`] when the scene does not start or the size exceeds the adapter's limit;
/// [`BenchError::File`] when the CSV cannot be written.
pub fn run_scene(gpu: &Gpu, b: &SceneBench, out_dir: &Path) -> Result<SceneResult, BenchError> {
    let scene_err = |reason: String| BenchError::Scene {
        scene: b.scene.clone(),
        reason,
    };
    let index = crate::scene::index_of(&b.scene)
        .ok_or_else(|| scene_err(format!("unknown scene '{}'", b.scene)))?;
    // The run's own peak RSS, not the process's so far.
    ProcessMemory::reset_peak();
    let (w, h) = b.size;
    let max = gpu.device.limits().max_texture_dimension_2d;
    if w > max || h > max {
        return Err(scene_err(format!(
            "size {w}x{h} is larger than this adapter's limit of {max}"
        )));
    }
    let cli = <crate::cli::Cli as clap::Parser>::try_parse_from([
        "vizdeck".to_string(),
        "--headless".into(),
        "--audio".into(),
        "synthetic".into(),
        "--seed".into(),
        b.seed.to_string(),
        "--particles".into(),
        b.particles.to_string(),
    ])
    .map_err(|e| scene_err(e.to_string()))?;
    let mut deck = Deck::new(
        gpu,
        crate::headless::OUTPUT_FORMAT,
        index,
        cli.scene_config(),
    );
    deck.set_upload_strategy(b.upload);
    deck.ensure_active(gpu);
    if let Some(msg) = deck.active_failure() {
        return Err(scene_err(msg.to_string()));
    }
    let (target, view) = crate::headless::offscreen_target(gpu, "bench:output", (w, h));
    let out = Output {
        view: &view,
        texture: Some(&target),
        size: (w, h),
        pixels_per_point: 1.0,
    };
    let tag = if b.screenshot_dir.is_some() {
        "-screenshots"
    } else {
        ""
    };
    let csv = out_dir.join(format!("bench-{}-{w}x{h}{tag}.csv", b.scene));
    if let Some(dir) = &b.screenshot_dir {
        std::fs::create_dir_all(dir).map_err(|e| file_err(dir, e))?;
    }
    let total = b.warmup + b.frames;
    for i in 0..total {
        if i == b.warmup {
            deck.set_record_path(Some(csv.clone()));
            deck.start_recording();
            if !deck.recording() {
                return Err(file_err(&csv, "cannot create the CSV"));
            }
            deck.set_screenshot_dir(b.screenshot_dir.clone());
            deck.reset_stats();
        }
        let raw = crate::headless::raw_input((w, h), i);
        let (times, _) = deck.frame(gpu, &out, raw, FRAME_DT);
        gpu.wait_idle();
        deck.end_frame(gpu, &times, Instant::now());
    }
    gpu.wait_idle();
    let memory = ProcessMemory::read();
    let gpu_memory = GpuMemory::read(&gpu.device);
    let summary = deck
        .stop_recording(gpu)
        .ok_or_else(|| file_err(&csv, "the recording failed"))?;
    let screenshots = if b.screenshot_dir.is_some() {
        let dropped = deck.screenshots_dropped();
        let (written, errors) = deck.finish_screenshots(gpu);
        if let Some(e) = errors.first() {
            log::warn!("screenshots: {e}");
        }
        Some((written, dropped))
    } else {
        None
    };
    if let Err(e) = deck.finish_scenes(gpu) {
        log::error!("{e}");
    }
    let means = column_means(&csv)?;
    Ok(SceneResult {
        summary,
        means,
        csv,
        screenshots,
        memory,
        gpu_memory,
    })
}

/// Means of the numeric columns of a vizdeck CSV (empty cells skipped).
fn column_means(csv: &Path) -> Result<serde_json::Map<String, serde_json::Value>, BenchError> {
    let mut reader = csv::Reader::from_path(csv).map_err(|e| file_err(csv, e))?;
    let n = CSV_HEADER.len();
    let mut sum = vec![0.0f64; n];
    let mut count = vec![0u64; n];
    for row in reader.records() {
        let row = row.map_err(|e| file_err(csv, e))?;
        for (i, cell) in row.iter().enumerate().take(n) {
            if let Ok(v) = cell.parse::<f64>() {
                sum[i] += v;
                count[i] += 1;
            }
        }
    }
    let mut m = serde_json::Map::new();
    for i in 3..n {
        if count[i] > 0 {
            m.insert(
                CSV_HEADER[i].to_string(),
                serde_json::json!(sum[i] / count[i] as f64),
            );
        }
    }
    Ok(m)
}

/// The JSON report of one scene run.
pub fn scene_report(
    gpu: &Gpu,
    b: &SceneBench,
    r: &SceneResult,
    without_screenshots: Option<&SceneResult>,
) -> serde_json::Value {
    let mut v = serde_json::json!({
        "vizdeck": env!("CARGO_PKG_VERSION"),
        "kind": "scene",
        "adapter": gpu.summary,
        "bench": b,
        "summary": r.summary,
        "means": r.means,
        "memory": { "process": r.memory, "gpu": r.gpu_memory },
        "csv": r.csv.display().to_string(),
    });
    if let (Some((written, dropped)), Some(base)) = (r.screenshots, without_screenshots) {
        v["screenshots"] = serde_json::json!({
            "written": written,
            "dropped": dropped,
            "p99_ms_without": base.summary.p99_ms,
            "p99_ms_with": r.summary.p99_ms,
            "p99_ratio": ratio(r.summary.p99_ms, base.summary.p99_ms),
        });
    }
    v
}

/// Bytes as MB (10^6) with one decimal, or `–` where there is no reading.
fn mb(bytes: Option<u64>) -> String {
    bytes.map_or_else(|| "–".into(), |b| format!("{:.1}", b as f64 / 1e6))
}

fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 { a / b } else { 0.0 }
}

/// The markdown report of one scene run (one table).
pub fn scene_markdown(gpu: &Gpu, b: &SceneBench, r: &SceneResult) -> String {
    let mut s = format!(
        "# vizdeck bench: {} at {}x{}\n\nadapter: {} ({}, {}), driver: {}\n\nworkload: seed {}, \
         {} warm-up + {} measured frames, simulated clock 1/60 s, particles {}, upload {}\n\n\
         | statistic | value |\n|---|---:|\n",
        b.scene,
        b.size.0,
        b.size.1,
        gpu.summary.name,
        gpu.summary.backend,
        gpu.summary.device_type,
        gpu.summary.driver,
        b.seed,
        b.warmup,
        b.frames,
        b.particles,
        b.upload.name()
    );
    for (label, value) in r.summary.table_rows() {
        let _ = writeln!(s, "| {label} | {value} |");
    }
    let _ = writeln!(
        s,
        "| RSS at the end (MB) | {} |",
        mb(r.memory.map(|m| m.rss_bytes))
    );
    let _ = writeln!(
        s,
        "| peak RSS (MB) | {} |",
        mb(r.memory.map(|m| m.peak_rss_bytes))
    );
    let _ = writeln!(
        s,
        "| GPU memory allocated (MB) | {} |",
        mb(r.gpu_memory.map(|m| m.allocated_bytes))
    );
    for key in [
        "MsCPUBusy",
        "MsIngest",
        "MsUpdate",
        "MsUI",
        "MsUpload",
        "MsEncode",
        "MsSubmit",
        "MsGPUCompute",
        "MsGPURender",
        "MsGPUUI",
        "BytesUploaded",
        "BytesReadBack",
    ] {
        if let Some(v) = r.means.get(key).and_then(|v| v.as_f64()) {
            let _ = writeln!(s, "| mean {key} | {v:.3} |");
        }
    }
    if let Some((written, dropped)) = r.screenshots {
        let _ = writeln!(
            s,
            "| screenshots written / dropped | {written} / {dropped} |"
        );
    }
    s
}

/// Writes `value` as pretty JSON to `path`.
pub fn write_json(path: &Path, value: &serde_json::Value) -> Result<(), BenchError> {
    let text = serde_json::to_string_pretty(value).map_err(|e| file_err(path, e))?;
    std::fs::write(path, text + "\n").map_err(|e| file_err(path, e))
}

/// One row of the upload table.
#[derive(Clone, Debug, serde::Serialize)]
pub struct UploadRow {
    /// Strategy name.
    pub strategy: &'static str,
    /// Payload per frame, bytes.
    pub bytes: u64,
    /// Frames measured.
    pub frames: u32,
    /// CPU time per frame of the upload: write (+ copy recording) + submit, ms.
    pub cpu_ms: f64,
    /// Time per frame until the GPU holds the data (submit + wait), ms.
    pub total_ms: f64,
    /// `bytes / total` in GB/s (1e9 bytes).
    pub gb_per_s: f64,
    /// `bytes / cpu` in GB/s: what the frame loop sees.
    pub cpu_gb_per_s: f64,
    /// Map-ring fallbacks to `write_buffer`.
    pub fallbacks: u64,
    /// Whether the last frame's bytes read back equal the payload.
    pub verified: bool,
}

/// Payload sizes of the upload table: 64 KiB, 1 MiB, 16 MiB, 256 MiB.
pub const UPLOAD_SIZES: [u64; 4] = [64 << 10, 1 << 20, 16 << 20, 256 << 20];

/// Payload of `len` bytes for frame `frame` (distinct per frame, so stale data is detected).
pub fn payload(len: usize, frame: u32) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u32).wrapping_mul(2_654_435_761).wrapping_add(frame) as u8 ^ (i >> 12) as u8)
        .collect()
}

/// Measures every strategy × size: per frame one upload of the payload into a device-local
/// buffer, submit, wait until done. Sizes above the adapter's `max_buffer_size` are skipped.
#[allow(clippy::disallowed_methods)] // a benchmark of the upload strategies themselves, outside any frame
pub fn upload_table(
    gpu: &Gpu,
    strategies: &[Strategy],
    sizes: &[u64],
    frames: u32,
) -> Vec<UploadRow> {
    let frames = frames.max(1);
    let max = gpu.device.limits().max_buffer_size;
    let mut rows = Vec::new();
    for &size in sizes {
        if size > max || size == 0 {
            continue;
        }
        let size = size.next_multiple_of(4);
        let payloads = [payload(size as usize, 1), payload(size as usize, 2)];
        let dst = gpu.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("bench:upload:dst"),
            size,
            usage: wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::COPY_DST
                | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        for &strategy in strategies {
            let mut up = Uploader::new(&gpu.device, strategy);
            let mut cpu = 0.0;
            let mut total = 0.0;
            let warm = 2;
            for f in 0..warm + frames {
                let data = &payloads[(f % 2) as usize];
                let t0 = Instant::now();
                let mut enc = gpu
                    .device
                    .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                        label: Some("bench:upload"),
                    });
                if let Err(e) = up.write(&gpu.device, &gpu.queue, &mut enc, &dst, 0, data) {
                    log::error!("upload {}: {e}", strategy.name());
                }
                up.finish();
                gpu.queue.submit([enc.finish()]);
                up.after_submit();
                let t1 = Instant::now();
                gpu.wait_idle();
                let t2 = Instant::now();
                if f >= warm {
                    cpu += (t1 - t0).as_secs_f64();
                    total += (t2 - t0).as_secs_f64();
                }
            }
            let last = &payloads[((warm + frames - 1) % 2) as usize];
            let verified = gpu
                .read_buffer_blocking(&dst, 0, size)
                .is_ok_and(|b| b == *last);
            let n = frames as f64;
            rows.push(UploadRow {
                strategy: strategy.name(),
                bytes: size,
                frames,
                cpu_ms: cpu / n * 1e3,
                total_ms: total / n * 1e3,
                gb_per_s: size as f64 * n / total.max(1e-12) / 1e9,
                cpu_gb_per_s: size as f64 * n / cpu.max(1e-12) / 1e9,
                fallbacks: up.counters.fallbacks,
                verified,
            });
        }
    }
    rows
}

/// One row of the readback table.
#[derive(Clone, Debug, serde::Serialize)]
pub struct ReadbackRow {
    /// Bytes per frame.
    pub bytes: u64,
    /// Frames measured.
    pub frames: u32,
    /// Copy + map + copy-out per frame, ms.
    pub total_ms: f64,
    /// `bytes / total`, GB/s.
    pub gb_per_s: f64,
}

/// Readback through the [`ReadbackRing`]: per frame a buffer copy into the ring, submit, wait
/// for the map, copy the bytes out.
#[allow(clippy::disallowed_methods)] // a benchmark of the readback ring, outside any frame
pub fn readback_table(gpu: &Gpu, sizes: &[u64], frames: u32) -> Vec<ReadbackRow> {
    let frames = frames.max(1);
    let max = gpu.device.limits().max_buffer_size;
    let mut rows = Vec::new();
    for &size in sizes {
        if size > max || size == 0 {
            continue;
        }
        let size = size.next_multiple_of(4);
        let src = gpu.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("bench:readback:src"),
            size,
            usage: wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut ring = ReadbackRing::new("bench:readback:ring", 2);
        let mut sink = Vec::with_capacity(size as usize);
        let mut total = 0.0;
        for f in 0..2 + frames {
            let t0 = Instant::now();
            let mut enc = gpu
                .device
                .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                    label: Some("bench:readback"),
                });
            ring.copy_buffer(&gpu.device, &mut enc, &src, 0, size, Consumer::Scene(0), f);
            gpu.queue.submit([enc.finish()]);
            ring.after_submit();
            ring.wait(&gpu.device, |a| {
                sink.clear();
                sink.extend_from_slice(a.data);
            });
            if f >= 2 {
                total += t0.elapsed().as_secs_f64();
            }
        }
        let n = frames as f64;
        rows.push(ReadbackRow {
            bytes: size,
            frames,
            total_ms: total / n * 1e3,
            gb_per_s: size as f64 * n / total.max(1e-12) / 1e9,
        });
    }
    rows
}

/// `65536` → `64 KiB`, `1048576` → `1 MiB`.
pub fn human_bytes(b: u64) -> String {
    if b >= 1 << 20 && b.is_multiple_of(1 << 20) {
        format!("{} MiB", b >> 20)
    } else if b >= 1 << 10 && b.is_multiple_of(1 << 10) {
        format!("{} KiB", b >> 10)
    } else {
        format!("{b} B")
    }
}

/// Markdown tables of [`upload_table`] and [`readback_table`] rows.
pub fn transfer_markdown(gpu: &Gpu, up: &[UploadRow], rb: &[ReadbackRow]) -> String {
    let mut s = format!(
        "adapter: {} ({}, {}), driver: {}\n\n| strategy | payload | frames | CPU ms/frame | total \
         ms/frame | GB/s (total) | GB/s (CPU) | fallbacks | bytes verified |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---|\n",
        gpu.summary.name, gpu.summary.backend, gpu.summary.device_type, gpu.summary.driver
    );
    for r in up {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {:.3} | {:.3} | {:.2} | {:.2} | {} | {} |",
            r.strategy,
            human_bytes(r.bytes),
            r.frames,
            r.cpu_ms,
            r.total_ms,
            r.gb_per_s,
            r.cpu_gb_per_s,
            r.fallbacks,
            if r.verified { "yes" } else { "NO" }
        );
    }
    if !rb.is_empty() {
        s.push_str("\n| readback (ring) | frames | ms/frame | GB/s |\n|---:|---:|---:|---:|\n");
        for r in rb {
            let _ = writeln!(
                s,
                "| {} | {} | {:.3} | {:.2} |",
                human_bytes(r.bytes),
                r.frames,
                r.total_ms,
                r.gb_per_s
            );
        }
    }
    s
}

/// Which kernel tables to print.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Kernel {
    /// `gpu::fft::bench_table`.
    Fft,
    /// `scene::particles::bench::bench_table`.
    Particles,
    /// `scene::timeseries::bench::bench_table` (GPU M4 decimation).
    Timeseries,
}

/// Options of the kernel tables.
#[derive(Clone, Debug)]
pub struct KernelOptions {
    /// FFT sizes.
    pub fft_sizes: Vec<usize>,
    /// FFT batch.
    pub fft_batch: u32,
    /// FFT repetitions per submit.
    pub fft_reps: u32,
    /// Particle counts (`None`: 16384 … 16777216 on a GPU, 4096 … 65536 on a CPU adapter).
    pub particle_counts: Option<Vec<u32>>,
    /// Particle steps per row.
    pub particle_steps: u32,
    /// Points in view of the time-series table (`None`: 1e5 … 1e8 on a GPU, 1e5 … 1e7 on a CPU
    /// adapter).
    pub series_points: Option<Vec<u64>>,
    /// Repetitions per time-series row.
    pub series_reps: u32,
}

/// Default particle counts: ×4 steps from 16384 to 16777216 on a GPU, 4096 to 65536 on a CPU
/// adapter (lavapipe).
pub fn default_particle_counts(gpu: &Gpu) -> Vec<u32> {
    if gpu.summary.device_type == "Cpu" {
        vec![4096, 16384, 65536]
    } else {
        vec![16384, 65536, 262_144, 1_048_576, 4_194_304, 16_777_216]
    }
}

/// The kernel tables, one after the other.
pub fn kernel_tables(gpu: &Gpu, kernels: &[Kernel], o: &KernelOptions) -> String {
    let mut s = String::new();
    for k in kernels {
        match k {
            Kernel::Fft => {
                s.push_str(&crate::gpu::fft::bench_table(
                    gpu,
                    &o.fft_sizes,
                    o.fft_batch,
                    o.fft_reps,
                ));
            }
            Kernel::Particles => {
                use crate::scene::particles::Mode;
                let counts = o
                    .particle_counts
                    .clone()
                    .unwrap_or_else(|| default_particle_counts(gpu));
                s.push_str(&crate::scene::particles::bench::bench_table(
                    gpu,
                    &counts,
                    &[Mode::Free, Mode::Grid, Mode::Brute],
                    o.particle_steps,
                ));
            }
            Kernel::Timeseries => {
                let points = o.series_points.clone().unwrap_or_else(|| {
                    if gpu.summary.device_type == "Cpu" {
                        vec![100_000, 1_000_000, 10_000_000]
                    } else {
                        vec![100_000, 1_000_000, 10_000_000, 100_000_000]
                    }
                });
                s.push_str(&crate::scene::timeseries::bench::bench_table(
                    gpu,
                    &points,
                    o.series_reps,
                ));
            }
        }
        s.push('\n');
    }
    s
}

/// The scene ids [`SCENES`] lists.
pub fn all_scenes() -> Vec<String> {
    SCENES.iter().map(|s| s.id.to_string()).collect()
}

/// Runs `vizdeck bench` (see the module docs): scene runs, then `--upload` tables, then
/// `--kernels` tables; prints every table and writes the reports into `--out`.
///
/// # Errors
///
/// No adapter, an unknown scene or strategy, a scene that does not start, a file that cannot be
/// written: one line each.
pub fn run(args: &crate::cli::BenchArgs) -> anyhow::Result<()> {
    let (gpu, _) = Gpu::new(args.backend, None, None)?;
    std::fs::create_dir_all(&args.out)
        .map_err(|e| anyhow::anyhow!("bench: '{}': {e}", args.out.display()))?;
    println!(
        "adapter: {} ({}, {}), driver: {}",
        gpu.summary.name, gpu.summary.backend, gpu.summary.device_type, gpu.summary.driver
    );
    // Scenes: all unless named; none when only --upload/--kernels were asked for.
    let scenes: Vec<String> = if args.scenes.iter().any(|s| s == "none") {
        Vec::new()
    } else if args.scenes.is_empty() {
        if args.upload.is_empty() && args.kernels.is_empty() {
            all_scenes()
        } else {
            Vec::new()
        }
    } else {
        args.scenes.clone()
    };
    for id in &scenes {
        if crate::scene::index_of(id).is_none() {
            anyhow::bail!(
                "bench: unknown scene '{id}'; scenes: {}",
                all_scenes().join(", ")
            );
        }
    }
    let mut overview = String::new();
    if !scenes.is_empty() {
        overview.push_str(
            "| scene | size | frames | avg FPS | p50 ms | p99 ms | 1% low ms | max ms | CPU busy \
             ms | GPU ms | peak RSS MB | GPU MB | p99 with screenshots / without |\n\
             |---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
        );
    }
    for id in &scenes {
        let b = SceneBench {
            scene: id.clone(),
            size: args.size,
            frames: args.frames,
            warmup: args.warmup,
            seed: args.seed,
            particles: args.particles,
            screenshot_dir: None,
            upload: args.scene_upload,
        };
        let r = run_scene(&gpu, &b, &args.out)?;
        let shots = if args.screenshots {
            let dir = args.out.join(format!("screens-{id}"));
            let bs = SceneBench {
                screenshot_dir: Some(dir.clone()),
                ..b.clone()
            };
            let rs = run_scene(&gpu, &bs, &args.out)?;
            if !args.keep_screenshots {
                let _ = std::fs::remove_dir_all(&dir);
            }
            let stem = format!("bench-{id}-{}x{}-screenshots", b.size.0, b.size.1);
            write_json(
                &args.out.join(format!("{stem}.json")),
                &scene_report(&gpu, &bs, &rs, Some(&r)),
            )?;
            let md = scene_markdown(&gpu, &bs, &rs);
            std::fs::write(args.out.join(format!("{stem}.md")), &md)?;
            Some(rs)
        } else {
            None
        };
        let stem = format!("bench-{id}-{}x{}", b.size.0, b.size.1);
        write_json(
            &args.out.join(format!("{stem}.json")),
            &scene_report(&gpu, &b, &r, None),
        )?;
        let md = scene_markdown(&gpu, &b, &r);
        std::fs::write(args.out.join(format!("{stem}.md")), &md)
            .map_err(|e| anyhow::anyhow!("bench: '{stem}.md': {e}"))?;
        let gpu_ms: f64 = ["MsGPUCompute", "MsGPURender", "MsGPUUI"]
            .iter()
            .filter_map(|k| r.means.get(*k).and_then(|v| v.as_f64()))
            .sum();
        let s = &r.summary;
        let _ = writeln!(
            overview,
            "| {id} | {}x{} | {} | {:.1} | {:.2} | {:.2}{} | {:.2}{} | {:.2} | {:.2} | {:.2} | {} | {} | {} |",
            b.size.0,
            b.size.1,
            s.frames,
            s.mean_fps,
            s.p50_ms,
            s.p99_ms,
            s.mark("p99"),
            s.low_1_ms,
            s.mark("low_1"),
            s.max_ms,
            r.means
                .get("MsCPUBusy")
                .and_then(|v| v.as_f64())
                .unwrap_or(0.0),
            gpu_ms,
            mb(r.memory.map(|m| m.peak_rss_bytes)),
            mb(r.gpu_memory.map(|m| m.allocated_bytes)),
            shots
                .as_ref()
                .map(|rs| format!(
                    "{:.2} / {:.2} = {:.3}",
                    rs.summary.p99_ms,
                    s.p99_ms,
                    ratio(rs.summary.p99_ms, s.p99_ms)
                ))
                .unwrap_or_else(|| "–".into())
        );
    }
    if !overview.is_empty() {
        println!("\n{overview}");
        println!("reports: {}", args.out.display());
    }
    if !args.upload.is_empty() {
        let strategies: Vec<Strategy> = if args.upload.iter().any(|s| s == "all") {
            Strategy::ALL.to_vec()
        } else {
            args.upload
                .iter()
                .map(|name| {
                    Strategy::ALL
                        .iter()
                        .copied()
                        .find(|s| s.name() == name.as_str())
                        .ok_or_else(|| {
                            anyhow::anyhow!(
                                "bench: unknown upload strategy '{name}'; strategies: {}, all",
                                Strategy::ALL.map(|s| s.name()).join(", ")
                            )
                        })
                })
                .collect::<anyhow::Result<_>>()?
        };
        let up = upload_table(&gpu, &strategies, &args.upload_sizes, args.upload_frames);
        let rb = readback_table(&gpu, &args.upload_sizes, args.upload_frames);
        let md = transfer_markdown(&gpu, &up, &rb);
        println!("\n{md}");
        write_json(
            &args.out.join("bench-transfers.json"),
            &serde_json::json!({
                "vizdeck": env!("CARGO_PKG_VERSION"),
                "kind": "transfers",
                "adapter": gpu.summary,
                "upload": up,
                "readback": rb,
            }),
        )?;
        std::fs::write(args.out.join("bench-transfers.md"), &md)?;
        if up.iter().any(|r| !r.verified) {
            anyhow::bail!("bench: an upload strategy delivered wrong bytes (see the table)");
        }
    }
    if !args.kernels.is_empty() {
        let o = KernelOptions {
            fft_sizes: args.fft_sizes.clone(),
            fft_batch: args.fft_batch,
            fft_reps: args.fft_reps,
            particle_counts: (!args.particle_counts.is_empty())
                .then(|| args.particle_counts.clone()),
            particle_steps: args.particle_steps,
            series_points: (!args.series_points.is_empty()).then(|| args.series_points.clone()),
            series_reps: args.series_reps,
        };
        let text = kernel_tables(&gpu, &args.kernels, &o);
        println!("\n{text}");
        std::fs::write(args.out.join("bench-kernels.md"), &text)?;
    }
    let errors = gpu.error_messages();
    if let Some(first) = errors.first() {
        anyhow::bail!(
            "{} GPU validation error(s); first: {}",
            errors.len(),
            first.lines().next().unwrap_or("")
        );
    }
    Ok(())
}
