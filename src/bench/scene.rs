//! Scene runs of `vizdeck bench` ([`run_scene`]): each scene headless with a fixed workload and
//! simulated clock, optionally again with screenshots; the CSV's column means, the JSON report
//! ([`scene_report`]) and the markdown one ([`scene_markdown`]).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use super::FRAME_DT;
use crate::deck::{Deck, Output};
use crate::gpu::Gpu;
use crate::gpu::upload::Strategy;
use crate::stats::memory::{GpuMemory, ProcessMemory};
use crate::stats::record::CSV_HEADER;
use crate::stats::summary::Summary;

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
    /// Particle simulation rate (particles scene).
    pub particle_rate: crate::scene::particles::StepRate,
    /// Save a PNG of every frame through the readback ring into this folder.
    #[serde(skip)]
    pub screenshot_dir: Option<PathBuf>,
    /// Upload strategy of the scenes' ping-pong buffers.
    pub upload: Strategy,
    /// How the scene image reaches the output.
    pub composite: crate::deck::Composite,
}

/// What one scene run measured.
#[derive(Clone, Debug, serde::Serialize)]
pub struct SceneResult {
    /// Summary of the measured frames (frame time = `MsBetweenPresents`).
    pub summary: Summary,
    /// Mean of every numeric column of the run's CSV over the measured frames (`MsCPUBusy`,
    /// `MsGPURender`, `BytesUploaded`, ...); GPU columns over the frames that have them.
    pub means: serde_json::Map<String, serde_json::Value>,
    /// The scene's own metrics at the end of the run (`Scene::metrics`: the defaults it chose
    /// on this adapter among them, e.g. the particles' `drawn_as` and `auto_reason`).
    pub metrics: serde_json::Value,
    /// The CSV written.
    pub csv: PathBuf,
    /// Screenshots saved (when asked for) and dropped.
    pub screenshots: Option<(u64, u64)>,
    /// The process's RSS at the end of the run and its peak during the run (the peak is reset
    /// when the run starts, where the system allows it).
    pub memory: Option<ProcessMemory>,
    /// GPU memory held through wgpu's allocator at the end of the run (scene, deck and egui).
    pub gpu_memory: Option<GpuMemory>,
    /// How the scene image reached the output (the requested composite or its fallback).
    pub composite_used: crate::deck::Composite,
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
    run_scene_with(gpu, b, out_dir, &mut |_, _| {})
}

/// [`run_scene`], calling `on_frame(frames done, frames in all)` after every frame (warm-up
/// included), for a progress display.
///
/// # Errors
///
/// As [`run_scene`].
pub fn run_scene_with(
    gpu: &Gpu,
    b: &SceneBench,
    out_dir: &Path,
    on_frame: &mut dyn FnMut(u64, u64),
) -> Result<SceneResult, BenchError> {
    let scene_err = |reason: String| BenchError::Scene {
        scene: b.scene.clone(),
        reason,
    };
    let index = crate::scene::index_of(&b.scene)
        .ok_or_else(|| scene_err(format!("unknown scene '{}'", b.scene)))?;
    // The run's own peak RSS, not the process's so far.
    ProcessMemory::reset_peak();
    let (w, h) = b.size;
    crate::cli::check_size_for_adapter("--size", (w, h), &gpu.device.limits())
        .map_err(scene_err)?;
    let cli = <crate::cli::Cli as clap::Parser>::try_parse_from([
        "vizdeck".to_string(),
        "--headless".into(),
        "--audio".into(),
        "synthetic".into(),
        "--seed".into(),
        b.seed.to_string(),
        "--particles".into(),
        b.particles.to_string(),
        "--particle-rate".into(),
        clap::ValueEnum::to_possible_value(&b.particle_rate)
            .map_or_else(|| "auto".to_string(), |v| v.get_name().to_string()),
    ])
    .map_err(|e| scene_err(e.to_string()))?;
    let mut deck = Deck::new(
        gpu,
        crate::headless::OUTPUT_FORMAT,
        index,
        cli.scene_config(),
    );
    deck.set_upload_strategy(b.upload);
    deck.set_composite(b.composite);
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
        on_frame(i + 1, total);
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
    let metrics = deck
        .metrics()
        .remove(&b.scene)
        .unwrap_or(serde_json::Value::Null);
    Ok(SceneResult {
        composite_used: deck.composite_used(),
        summary,
        means,
        metrics,
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
        "composite": b.composite.name(),
        "composite_used": r.composite_used.name(),
        "scene_metrics": r.metrics,
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
pub(super) fn mb(bytes: Option<u64>) -> String {
    bytes.map_or_else(|| "–".into(), |b| format!("{:.1}", b as f64 / 1e6))
}

pub(super) fn ratio(a: f64, b: f64) -> f64 {
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
