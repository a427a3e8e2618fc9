//! Headless mode: the same frame as the window, drawn into an offscreen texture with a simulated
//! clock (each frame advances exactly 1/60 s), so tests and benchmarks are deterministic.

use std::time::Instant;

use anyhow::bail;

use crate::cli::Cli;
use crate::deck::{Deck, Output};
use crate::gpu::Gpu;
use crate::stats::Summary;

/// Simulated time per frame.
pub const FRAME_DT: f64 = 1.0 / 60.0;
/// Frames when `--frames` is not given.
pub const DEFAULT_FRAMES: u64 = 300;
/// Format of the offscreen output (non-sRGB, as egui-wgpu expects).
pub const OUTPUT_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Rgba8Unorm;

/// The offscreen output of headless runs: a `size` texture in [`OUTPUT_FORMAT`] that can be
/// rendered to and copied from (screenshots), and its view. `label` names both.
pub fn offscreen_target(
    gpu: &Gpu,
    label: &str,
    size: (u32, u32),
) -> (wgpu::Texture, wgpu::TextureView) {
    let texture = gpu.device.create_texture(&wgpu::TextureDescriptor {
        label: Some(label),
        size: wgpu::Extent3d {
            width: size.0,
            height: size.1,
            depth_or_array_layers: 1,
        },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format: OUTPUT_FORMAT,
        usage: wgpu::TextureUsages::RENDER_ATTACHMENT
            | wgpu::TextureUsages::COPY_SRC
            | wgpu::TextureUsages::COPY_DST,
        view_formats: &[],
    });
    let view = texture.create_view(&wgpu::TextureViewDescriptor {
        label: Some(&format!("{label}:view")),
        ..Default::default()
    });
    (texture, view)
}

/// The egui input of headless frame `frame` at `size` pixels (1 point = 1 pixel): the simulated
/// clock at `frame · FRAME_DT` s, focused, no events. Shared by headless runs and `vizdeck bench`.
pub fn raw_input(size: (u32, u32), frame: u64) -> egui::RawInput {
    egui::RawInput {
        screen_rect: Some(egui::Rect::from_min_size(
            egui::Pos2::ZERO,
            egui::vec2(size.0 as f32, size.1 as f32),
        )),
        time: Some(frame as f64 * FRAME_DT),
        predicted_dt: FRAME_DT as f32,
        focused: true,
        ..Default::default()
    }
}

/// Output paths are checked before any frame is rendered: each one's directory must exist,
/// `--screenshot` must end in `.png` (only PNG is written), and `--record-video` in a video
/// extension, with `ffmpeg` on `PATH`.
fn check_outputs(cli: &Cli) -> anyhow::Result<()> {
    let outputs = [
        ("--screenshot", cli.screenshot.as_ref()),
        ("--report", cli.report.as_ref()),
        ("--record-stats", cli.record_stats.as_ref()),
        ("--export-spectrogram", cli.export_spectrogram.as_ref()),
        ("--export-series", cli.export_series.as_ref()),
        ("--record-video", cli.record_video.as_ref()),
    ];
    for (flag, path) in outputs {
        let Some(path) = path else { continue };
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => std::path::Path::new("."),
        };
        if !dir.is_dir() {
            bail!(
                "{flag} {}: the directory {} does not exist",
                path.display(),
                dir.display()
            );
        }
    }
    if let Some(path) = &cli.screenshot {
        let png = path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("png"));
        if !png {
            bail!(
                "--screenshot {}: screenshots are PNG files; use a name ending in .png",
                path.display()
            );
        }
    }
    if let Some(path) = &cli.record_video {
        crate::deck::check_video_path(path)
            .map_err(|e| anyhow::anyhow!(crate::deck::video_flag_message(path, &e)))?;
    }
    Ok(())
}

/// Replaces `lost` (its device lost for `reason`) by a new [`Gpu`] of the same backend and moves
/// `deck` onto it ([`Deck::replace_gpu`]).
///
/// # Errors
///
/// When no new device can be made (no adapter any more): one line with both reasons; the
/// recording is stopped first, so every row recorded so far is in its file.
pub fn replace_lost_gpu(deck: &mut Deck, lost: &Gpu, reason: &str) -> anyhow::Result<Gpu> {
    let noticed = Instant::now();
    log::error!("GPU device lost ({reason}); creating a new one");
    match lost.replacement(None, None) {
        Ok((gpu, _)) => {
            deck.replace_gpu(&gpu, reason, noticed);
            Ok(gpu)
        }
        Err(e) => {
            deck.abandon_gpu_work();
            deck.stop_recording(lost);
            bail!("the GPU device was lost ({reason}) and no new one could be created: {e}")
        }
    }
}

/// Runs `--headless`. Errors (bad input, no adapter, GPU validation errors) come back as one line.
pub fn run(cli: &Cli, settings: crate::settings::Start) -> anyhow::Result<()> {
    check_outputs(cli)?;
    // From the start: a signal while the GPU and the connections open still ends the run
    // cleanly (report and exports written).
    let stop = crate::app::install_stop_flag();
    let (mut gpu, _) = Gpu::new(cli.backend, None, None)?;
    let (w, h) = cli.size;
    crate::cli::check_size_for_adapter("--size", (w, h), &gpu.device.limits())
        .map_err(anyhow::Error::msg)?;
    let mut deck = Deck::new(&gpu, OUTPUT_FORMAT, cli.scene_index(), cli.scene_config());
    deck.use_settings(settings);
    deck.plan_capture(
        cli.record_stats.clone(),
        cli.capture_delay,
        cli.capture_duration,
    );
    if let Some(path) = &cli.record_stats
        && cli.capture_delay <= 0.0
        && !deck.recording()
    {
        bail!(
            "--record-stats {}: the file cannot be created",
            path.display()
        );
    }
    deck.set_overlay(cli.overlay_on());
    deck.set_upload_strategy(cli.upload_strategy);
    deck.set_composite(cli.composite);
    deck.memory = crate::stats::memory::MemoryTrack::new(cli.memory_warmup_frames);
    if let Some(path) = &cli.record_video {
        // Every frame one video frame: the simulated clock is 1/60 s a frame, the video 60 fps.
        deck.start_video(Some(path.clone()), crate::deck::VideoClock::PerFrame)
            .map_err(|e| anyhow::anyhow!(crate::deck::video_flag_message(path, &e)))?;
    }
    deck.start_sharing(cli.publish.as_deref(), cli.follow.as_deref())
        .map_err(anyhow::Error::msg)?;
    deck.ensure_active(&gpu);
    if let Some(msg) = deck.active_failure() {
        bail!("{msg}");
    }
    // A notice the window would show on the scene (e.g. a particle count clamped to what the
    // adapter holds) is printed once, so a headless run does not change its input silently.
    let noticed = deck.active_problem();
    if let Some(notice) = &noticed {
        log::warn!("{notice}");
    }
    let (mut target, mut view) = offscreen_target(&gpu, "headless:output", (w, h));
    let frames = cli.frames.unwrap_or(DEFAULT_FRAMES);
    let paced_from = Instant::now();
    for i in 0..frames {
        if cli.realtime {
            let due = paced_from + std::time::Duration::from_secs_f64(i as f64 * FRAME_DT);
            if let Some(wait) = due.checked_duration_since(Instant::now()) {
                std::thread::sleep(wait);
            }
        }
        if stop.load(std::sync::atomic::Ordering::Relaxed) {
            log::warn!("stopped by signal after {i} frames");
            break;
        }
        deck.inject_device_loss(&gpu);
        if let Some(reason) = gpu.lost() {
            // A lost device: a new one, the deck and its scenes moved onto it, a new output.
            gpu = replace_lost_gpu(&mut deck, &gpu, &reason)?;
            (target, view) = offscreen_target(&gpu, "headless:output", (w, h));
        }
        // A follower draws when the publisher's data arrives (at most a frame's time apart).
        deck.wait_for_publisher(std::time::Duration::from_secs_f64(FRAME_DT));
        let out = Output {
            view: &view,
            texture: Some(&target),
            size: (w, h),
            pixels_per_point: 1.0,
        };
        let (times, _) = deck.frame(&gpu, &out, raw_input((w, h), i), FRAME_DT);
        // Headless frames are throughput: each waits for its GPU work, like a present would.
        gpu.wait_idle();
        deck.end_frame(&gpu, &times, Instant::now());
    }
    gpu.wait_idle();
    deck.stop_recording(&gpu);
    deck.save_settings(None);
    // Counts in the notice printed at the start may have grown since (rows skipped later in a
    // file): the last word agrees with the report. A notice that arose during the run was said
    // by its source when it arose, and is not said twice.
    if let Some(notice) = deck
        .active_problem()
        .filter(|n| noticed.as_ref().is_some_and(|first| first != n))
    {
        log::warn!("at the end of the run: {notice}");
    }
    let finished = deck.finish_scenes(&gpu);
    let video = deck.finish_video(&gpu);
    let summary = Summary::from_frame_times(&deck.run_frame_ms);
    println!("{}: {summary}", crate::scene::SCENES[deck.active].id);
    if let Some(path) = &cli.screenshot {
        let rgba = crate::gpu::readback::read_texture_rgba(&gpu.device, &gpu.queue, &target)?;
        crate::gpu::readback::write_png(path, w, h, &rgba)?;
    }
    if let Some(path) = &cli.report {
        let report = crate::report::build(&gpu, &deck, "headless", (w, h));
        crate::report::write(path, &report)?;
    }
    if let Err(e) = finished {
        bail!("{e}");
    }
    if let Err(e) = video {
        bail!("{e}");
    }
    let errors = gpu.error_messages();
    if let Some(first) = errors.first() {
        bail!(
            "{} GPU validation error(s); first: {}",
            errors.len(),
            first.lines().next().unwrap_or("")
        );
    }
    if let Some(p) = deck.active_failure() {
        bail!("{p}");
    }
    if let Some(why) = deck.follow_failure() {
        bail!("{why}");
    }
    Ok(())
}
