//! `vizdeck bench`: benchmark mode.
//!
//! - **Scenes** ([`run_scene`]): each scene headless with a fixed seed and workload, a simulated
//!   clock (1/60 s a frame), `warmup` frames, then `frames` recorded frames at a set size; each
//!   frame waits for its GPU work (throughput, like a present would). One report per run:
//!   `bench-<scene>-<W>x<H>.json` and `.md` (adapter, backend, driver, sizes, workload, summary,
//!   mean CPU split and GPU pass times read back from the run's CSV, also written).
//!   With `--screenshots`, each scene runs a second time saving a PNG of every frame through the
//!   readback ring, and the report gives `p99 with / p99 without`.
//!
//! The upload and kernel tables (`--upload`, `--kernels`) are the lab's: `vizdeck-lab`
//! (`crates/lab`), not linked into the app. Given here, those flags get one line saying so.
//!
//! Files: this one holds [`run`] (the command); `scene.rs` the scene runs and their reports.

mod scene;

pub use scene::{
    BenchError, SceneBench, SceneResult, run_scene, run_scene_with, scene_markdown, scene_report,
    write_json,
};

use std::fmt::Write as _;

use crate::gpu::Gpu;
use crate::progress::Progress;
use crate::scene::SCENES;

use scene::{mb, ratio};

/// Simulated time per frame: the headless clock's.
pub use crate::headless::FRAME_DT;

/// The scene ids [`SCENES`] lists.
pub fn all_scenes() -> Vec<String> {
    SCENES.iter().map(|s| s.id.to_string()).collect()
}

/// Runs `vizdeck bench` (see the module docs): the scene runs; prints the overview table and
/// writes the reports into `--out`. A terminal progress bar on stderr ([`Progress`]) counts the
/// runs (each scene run and its run with screenshots) and names the one going on.
///
/// # Errors
///
/// `--upload` or `--kernels` (the lab's now), no adapter, an unknown scene, a scene that does
/// not start, a file that cannot be written: one line each.
pub fn run(args: &crate::cli::BenchArgs) -> anyhow::Result<()> {
    for (flag, given) in [("--upload", &args.upload), ("--kernels", &args.kernels)] {
        if given.is_some() {
            anyhow::bail!(
                "bench: {flag} moved to the lab: `cargo run --release -p vizdeck-lab -- {flag} ...` \
                 (see docs/development.md)"
            );
        }
    }
    let (gpu, _) = Gpu::new(args.backend, None, None)?;
    std::fs::create_dir_all(&args.out)
        .map_err(|e| anyhow::anyhow!("bench: '{}': {e}", args.out.display()))?;
    println!(
        "adapter: {} ({}, {}), driver: {}",
        gpu.summary.name, gpu.summary.backend, gpu.summary.device_type, gpu.summary.driver
    );
    // Scenes: all unless named.
    let scenes: Vec<String> = if args.scenes.iter().any(|s| s == "none") {
        Vec::new()
    } else if args.scenes.is_empty() {
        all_scenes()
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
    let runs = scenes.len() * (1 + usize::from(args.screenshots));
    let mut progress = Progress::new("bench", runs as u64, "runs");
    let mut overview = String::new();
    if !scenes.is_empty() {
        overview.push_str(
            "| scene | size | frames | avg FPS | p50 ms | p99 ms | 1% low ms | max ms | CPU busy \
             ms | GPU ms | peak RSS MB | GPU MB | p99 with screenshots / without |\n\
             |---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
        );
    }
    let mut defaults_note: Option<String> = None;
    let mut fft_note: Option<String> = None;
    let mut composite_used = args.composite;
    for id in &scenes {
        let b = SceneBench {
            scene: id.clone(),
            size: args.size,
            frames: args.frames,
            warmup: args.warmup,
            seed: args.seed,
            particles: args.particles,
            particle_rate: args.particle_rate,
            screenshot_dir: None,
            upload: args.scene_upload,
            composite: args.composite,
        };
        let r = run_scene_with(
            &gpu,
            &b,
            &args.out,
            &mut scene_frames(&mut progress, &b, ""),
        )?;
        progress.inc(1);
        composite_used = r.composite_used;
        if let Some(reason) = r.metrics.get("auto_reason").and_then(|v| v.as_str()) {
            let drawn = r
                .metrics
                .get("drawn_as")
                .and_then(|v| v.as_str())
                .unwrap_or("?");
            let hz = r
                .metrics
                .get("steps_per_second")
                .and_then(|v| v.as_f64())
                .unwrap_or(0.0);
            let rate = r
                .metrics
                .get("rate_reason")
                .and_then(|v| v.as_str())
                .unwrap_or("?");
            let every = r
                .metrics
                .get("stats_every")
                .and_then(|v| v.as_u64())
                .unwrap_or(1);
            defaults_note = Some(format!(
                "; particles drawn as {drawn} ({reason}), stepped at {hz:.0} Hz ({rate}), \
                 statistics every {every} frame(s)"
            ));
        }
        if let Some(reason) = r
            .metrics
            .get("fft_choice")
            .and_then(|c| c.get("reason"))
            .and_then(|v| v.as_str())
        {
            fft_note = Some(format!("; spectrogram FFT: {reason}"));
        }
        let shots = if args.screenshots {
            let dir = args.out.join(format!("screens-{id}"));
            let bs = SceneBench {
                screenshot_dir: Some(dir.clone()),
                ..b.clone()
            };
            let rs = run_scene_with(
                &gpu,
                &bs,
                &args.out,
                &mut scene_frames(&mut progress, &bs, " with screenshots"),
            )?;
            progress.inc(1);
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
            "| {id} | {}x{} | {} | {} | {:.2} | {:.2}{} | {:.2}{} | {:.2} | {:.2} | {:.2} | {} | {} | {} |",
            b.size.0,
            b.size.1,
            s.frames,
            s.mean_fps.map_or_else(
                || crate::stats::summary::NA.to_string(),
                |v| format!("{v:.1}")
            ),
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
        let _ = writeln!(
            overview,
            "\ndefaults on this adapter: composite {}{}",
            if composite_used == args.composite {
                args.composite.name().to_string()
            } else {
                format!(
                    "{} (asked for {}: the output cannot take a copy)",
                    composite_used.name(),
                    args.composite.name()
                )
            },
            defaults_note.unwrap_or_default() + &fft_note.unwrap_or_default()
        );
        // Above the bar, not through it: a terminal shows stdout and stderr on one screen.
        crate::progress::suspend(|| {
            println!("\n{overview}");
            println!("reports: {}", args.out.display());
        });
    }
    progress.finish();
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

/// The `on_frame` of a scene run: the bar's item is the run and its frame count.
fn scene_frames<'a>(
    progress: &'a mut Progress,
    b: &'a SceneBench,
    tag: &'a str,
) -> impl FnMut(u64, u64) + 'a {
    move |done, total| {
        progress.set_item(format!(
            "{} {}x{}{tag}, frame {done}/{total}",
            b.scene, b.size.0, b.size.1
        ));
    }
}
