//! Recording the scene panel to video (`--record-video`, View ▸ Record video, F10) through
//! ffmpeg. What a file holds is read back by ffmpeg's own tools, not by vizdeck: `ffprobe
//! -count_frames` for the frame count, size and codec, `ffmpeg` decoding to raw RGBA for the
//! pixels. Headless runs write one video frame per frame drawn, so a run of N frames gives a file
//! of N frames, as large as the scene panel (the report's `scene_rect_px`, checked against the
//! layout: the panel reaches the output's bottom-right corner) made even; its last frame is the
//! `--screenshot` of the same run, cropped there, up to yuv420p's loss. Without ffmpeg on PATH a
//! headless run fails before drawing, with one line; an ffmpeg that dies part-way stops the
//! recording with one notice while the run goes on, and what it wrote is kept. In the window (the
//! real deck, as the window drives it), F10 starts a recording and the menu's command stops it,
//! the toast giving the file's full path; a scene panel that changes size ends the recording
//! with a complete file. The tests that read files back need ffmpeg and are ignored without
//! `--include-ignored` (`cargo xtask test` installs ffmpeg and runs them).

use crate::common;
use common::{read_png, text};

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use vizdeck::deck::{Deck, Output as DeckOutput};
use vizdeck::ui::UiCommand;

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_vizdeck"));
    c.env("RUST_LOG", "warn");
    c
}

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("vizdeck-video-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir.join(name)
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("run vizdeck")
}

fn report(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("report written")).expect("json")
}

/// What ffprobe reads in the first video stream of `path`, decoding every frame:
/// (frames, width, height, codec name).
fn probe(path: &Path) -> (u64, u32, u32, String) {
    let o = Command::new("ffprobe")
        .args([
            "-v",
            "error",
            "-count_frames",
            "-select_streams",
            "v:0",
            "-show_entries",
            "stream=nb_read_frames,width,height,codec_name",
            "-of",
            "json",
        ])
        .arg(path)
        .output()
        .expect("ffprobe (apt-get install ffmpeg)");
    assert!(
        o.status.success(),
        "ffprobe {}: {}",
        path.display(),
        text(&o)
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("ffprobe json");
    let s = &v["streams"][0];
    let frames = s["nb_read_frames"]
        .as_str()
        .and_then(|n| n.parse().ok())
        .expect("nb_read_frames");
    (
        frames,
        s["width"].as_u64().expect("width") as u32,
        s["height"].as_u64().expect("height") as u32,
        s["codec_name"].as_str().unwrap_or("").to_string(),
    )
}

/// Every frame of `path` decoded by ffmpeg to RGBA8, `w × h × 4` bytes each.
fn decode(path: &Path, w: u32, h: u32) -> Vec<Vec<u8>> {
    let o = Command::new("ffmpeg")
        .args(["-v", "error", "-i"])
        .arg(path)
        .args(["-f", "rawvideo", "-pix_fmt", "rgba", "-"])
        .output()
        .expect("ffmpeg");
    assert!(o.status.success(), "ffmpeg decode: {}", text(&o));
    let frame = (w * h * 4) as usize;
    assert_eq!(o.stdout.len() % frame, 0, "whole frames");
    o.stdout.chunks_exact(frame).map(<[u8]>::to_vec).collect()
}

/// `rect` (x, y, w, h) of an RGBA8 image `width` pixels wide.
fn crop(rgba: &[u8], width: u32, rect: (u32, u32, u32, u32)) -> Vec<u8> {
    let (x, y, w, h) = rect;
    let mut out = Vec::with_capacity((w * h * 4) as usize);
    for row in y..y + h {
        let start = ((row * width + x) * 4) as usize;
        out.extend_from_slice(&rgba[start..start + (w * 4) as usize]);
    }
    out
}

/// Mean absolute difference of the colour channels (alpha left out) of two `w`-pixel-wide RGBA8
/// images, in 8-bit steps, over the means of 4×4 blocks: what yuv420p and H.264 lose (chroma at
/// half resolution, quantised detail) averages out, a different image does not.
fn block_diff(a: &[u8], b: &[u8], w: u32) -> f64 {
    assert_eq!(a.len(), b.len());
    let (w, h) = (w as usize, a.len() / 4 / w as usize);
    let (mut sum, mut n) = (0.0f64, 0u64);
    for by in 0..h / 4 {
        for bx in 0..w / 4 {
            for c in 0..3 {
                let (mut sa, mut sb) = (0u32, 0u32);
                for y in by * 4..by * 4 + 4 {
                    for x in bx * 4..bx * 4 + 4 {
                        let i = (y * w + x) * 4 + c;
                        sa += u32::from(a[i]);
                        sb += u32::from(b[i]);
                    }
                }
                sum += (f64::from(sa) - f64::from(sb)).abs() / 16.0;
                n += 1;
            }
        }
    }
    sum / n.max(1) as f64
}

const FRAMES: u64 = 30;
const SIZE: (u32, u32) = (640, 360);

/// A headless run of N frames gives N video frames of the scene panel's size (even), and its last
/// frame is the run's last frame as `--screenshot` saves it, cropped to the panel.
#[test]
#[ignore = "needs ffmpeg: run through `cargo xtask test`"]
fn headless_video_has_every_frame_at_the_panel_size() {
    let _live = crate::common::live();
    let video = tmp("particles.mp4");
    let json = tmp("particles.json");
    let png = tmp("particles.png");
    let o = run(&[
        "--headless",
        "--scene",
        "particles",
        "--seed",
        "7",
        "--frames",
        &FRAMES.to_string(),
        "--size",
        &format!("{}x{}", SIZE.0, SIZE.1),
        "--record-video",
        video.to_str().unwrap(),
        "--report",
        json.to_str().unwrap(),
        "--screenshot",
        png.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(!text(&o).contains("panicked"));
    let r = report(&json);
    let rect: Vec<u32> = r["scene_rect_px"]
        .as_array()
        .expect("scene_rect_px")
        .iter()
        .map(|v| v.as_u64().expect("pixels") as u32)
        .collect();
    let (x, y, w, h) = (rect[0], rect[1], rect[2], rect[3]);
    // The layout: the side panel on the left and the menu bar on top, the scene panel filling the
    // rest of the output down to its bottom-right corner.
    assert!(x > 0 && y > 0, "{rect:?}");
    assert_eq!((x + w, y + h), SIZE, "{rect:?}");
    let expected = (w & !1, h & !1);

    let (frames, vw, vh, codec) = probe(&video);
    assert_eq!(frames, FRAMES, "video frames");
    assert_eq!((vw, vh), expected, "video size");
    assert_eq!(codec, "h264");

    let v = &r["videos"][0];
    assert_eq!(v["frames_written"], FRAMES);
    assert_eq!(v["frames_dropped"], 0);
    assert_eq!(v["frames_repeated"], 0);
    assert_eq!(v["fps"], 60);
    assert!(v["error"].is_null(), "{v}");
    let reported = PathBuf::from(v["path"].as_str().expect("path"));
    assert!(reported.is_absolute(), "{}", reported.display());
    assert_eq!(reported, std::path::absolute(&video).expect("absolute"));

    // Content: the last video frame is the last frame drawn, the scene panel's crop.
    let (pw, ph, shot) = read_png(&png);
    assert_eq!((pw, ph), SIZE);
    let decoded = decode(&video, vw, vh);
    assert_eq!(decoded.len() as u64, FRAMES);
    let want = crop(&shot, pw, (x, y, vw, vh));
    let last = decoded.last().expect("a frame");
    let same = block_diff(last, &want, vw);
    // …and not another crop of it (8 pixels off), nor the first frame drawn.
    let shifted = block_diff(last, &crop(&shot, pw, (x - 8, y, vw, vh)), vw);
    let first = block_diff(&decoded[0], &want, vw);
    eprintln!("block diff: same {same:.3}, shifted {shifted:.3}, first frame {first:.3}");
    // yuv420p halves the chroma of one-pixel particles: about 2 steps here (1.6 for this image
    // as one H.264 intra frame at the same CRF, 1.0 at CRF 12).
    assert!(same < 3.0, "last video frame vs screenshot: {same:.2}");
    assert!(shifted > 3.0 * same, "a shifted crop matches: {shifted:.2}");
    assert!(first > 3.0 * same, "the first frame matches: {first:.2}");
}

/// `.webm` is VP9; every frame is there.
#[test]
#[ignore = "needs ffmpeg: run through `cargo xtask test`"]
fn webm_is_vp9() {
    let _live = crate::common::live();
    let video = tmp("timeseries.webm");
    let o = run(&[
        "--headless",
        "--scene",
        "timeseries",
        "--frames",
        "12",
        "--size",
        "320x240",
        "--record-video",
        video.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let (frames, w, h, codec) = probe(&video);
    assert_eq!((frames, codec.as_str()), (12, "vp9"));
    assert!(w % 2 == 0 && h % 2 == 0 && w > 0 && h > 0, "{w}x{h}");
}

/// An empty directory, to be the whole PATH: no ffmpeg on it.
fn path_without_ffmpeg() -> PathBuf {
    let dir = tmp("no-ffmpeg-bin");
    std::fs::create_dir_all(&dir).expect("dir");
    dir
}

/// Without ffmpeg a headless `--record-video` run fails before it draws, with the one line.
#[test]
fn without_ffmpeg_the_run_fails_before_drawing() {
    let _live = crate::common::live();
    let video = tmp("never.mp4");
    let json = tmp("never.json");
    let o = bin()
        .env("PATH", path_without_ffmpeg())
        .args([
            "--headless",
            "--frames",
            "5",
            "--size",
            "320x240",
            "--record-video",
            video.to_str().unwrap(),
            "--report",
            json.to_str().unwrap(),
        ])
        .output()
        .expect("run vizdeck");
    let all = text(&o);
    assert!(!o.status.success(), "{all}");
    assert!(!all.contains("panicked"), "{all}");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("video recording needs ffmpeg on PATH: apt-get install ffmpeg"),
        "{all}"
    );
    assert!(stderr.contains("never.mp4"), "{all}");
    assert_eq!(stderr.trim().lines().count(), 1, "one line: {all}");
    // Before running: no frame drawn, no report, no file.
    assert!(!json.exists() && !video.exists(), "{all}");
}

/// A name vizdeck cannot choose an encoder for is refused before drawing.
#[test]
fn unknown_extension_is_refused() {
    let _live = crate::common::live();
    let video = tmp("clip.avi");
    let o = run(&[
        "--headless",
        "--frames",
        "2",
        "--record-video",
        video.to_str().unwrap(),
    ]);
    let all = text(&o);
    assert!(!o.status.success(), "{all}");
    assert!(all.contains("clip.avi") && all.contains(".webm"), "{all}");
    assert!(!all.contains("panicked"), "{all}");
}

/// An ffmpeg that dies part-way (a stand-in that takes some input, writes a little of the file
/// and exits 1): one notice, the recording stops, the run draws all its frames, the file stays,
/// and the headless run exits non-zero naming the incomplete video.
#[test]
fn ffmpeg_dying_part_way_stops_the_recording_only() {
    let _live = crate::common::live();
    let bin_dir = tmp("dying-ffmpeg-bin");
    std::fs::create_dir_all(&bin_dir).expect("dir");
    let fake = bin_dir.join("ffmpeg");
    std::fs::write(
        &fake,
        "#!/bin/sh\n\
         for a; do out=$a; done\n\
         head -c 300000 > /dev/null\n\
         printf 'partial' > \"$out\"\n\
         echo 'stand-in ffmpeg gives up' >&2\n\
         exit 1\n",
    )
    .expect("script");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let video = tmp("dies.mp4");
    let json = tmp("dies.json");
    let o = bin()
        .env("PATH", path)
        .args([
            "--headless",
            "--scene",
            "particles",
            "--frames",
            "40",
            "--size",
            "480x320",
            "--record-video",
            video.to_str().unwrap(),
            "--report",
            json.to_str().unwrap(),
        ])
        .output()
        .expect("run vizdeck");
    let all = text(&o);
    assert!(!o.status.success(), "{all}");
    assert!(!all.contains("panicked"), "{all}");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(
        stderr.matches("stand-in ffmpeg gives up").count(),
        1,
        "one notice: {all}"
    );
    assert!(stderr.contains("what was written is kept in"), "{all}");
    // The run went on to its last frame; what ffmpeg wrote is kept.
    let r = report(&json);
    assert_eq!(r["summary"]["frames"], 40, "{all}");
    let v = &r["videos"][0];
    assert!(
        v["error"].as_str().is_some_and(|e| e.contains("ffmpeg")),
        "{v}"
    );
    assert!(v["frames_written"].as_u64().unwrap_or(40) < 40, "{v}");
    assert_eq!(std::fs::read(&video).expect("file kept"), b"partial");
}

// --- The window's controls, on the real deck (offscreen, frames as the window draws them) ---

struct Target {
    texture: wgpu::Texture,
    view: wgpu::TextureView,
    size: (u32, u32),
}

fn target(gpu: &vizdeck::gpu::Gpu, size: (u32, u32)) -> Target {
    let (texture, view) = vizdeck::headless::offscreen_target(gpu, "test:video", size);
    Target {
        texture,
        view,
        size,
    }
}

/// One frame of `deck` into `t` with `events`, waiting for the GPU as the headless loop does.
fn frame(gpu: &vizdeck::gpu::Gpu, deck: &mut Deck, t: &Target, i: u64, events: Vec<egui::Event>) {
    let out = DeckOutput {
        view: &t.view,
        texture: Some(&t.texture),
        size: t.size,
        pixels_per_point: 1.0,
    };
    let mut raw = vizdeck::headless::raw_input(t.size, i);
    raw.events = events;
    let (times, _) = deck.frame(gpu, &out, raw, 1.0 / 60.0);
    gpu.wait_idle();
    deck.end_frame(gpu, &times, std::time::Instant::now());
}

fn key(k: egui::Key) -> egui::Event {
    egui::Event::Key {
        key: k,
        physical_key: None,
        pressed: true,
        repeat: false,
        modifiers: egui::Modifiers::NONE,
    }
}

fn window_deck(gpu: &vizdeck::gpu::Gpu, dir: &Path) -> Deck {
    let cli = <vizdeck::cli::Cli as clap::Parser>::try_parse_from([
        "vizdeck",
        "--scene",
        "particles",
        "--particles",
        "4096",
    ])
    .expect("flags");
    let mut deck = Deck::new(
        gpu,
        vizdeck::headless::OUTPUT_FORMAT,
        cli.scene_index(),
        cli.scene_config(),
    );
    deck.set_png_dir(Some(dir.to_path_buf()));
    deck
}

/// Draws frames until the last toast contains `needle` (the writer thread finishing the file);
/// at most 600 frames.
fn frames_until_toast(
    gpu: &vizdeck::gpu::Gpu,
    deck: &mut Deck,
    t: &Target,
    from: u64,
    needle: &str,
) -> String {
    for i in from..from + 600 {
        frame(gpu, deck, t, i, Vec::new());
        if let Some(toast) = deck.last_toast()
            && toast.contains(needle)
        {
            return toast.to_string();
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    panic!("no toast with '{needle}': {:?}", deck.last_toast());
}

/// F10 starts recording (the indicator's status says so), View ▸ Stop recording stops it, and
/// the toast names the file by its full path once ffmpeg has finished it: a playable file of the
/// scene panel's size, following real time.
#[test]
#[ignore = "needs ffmpeg: run through `cargo xtask test`"]
fn f10_records_and_the_toast_names_the_file() {
    let _live = crate::common::live();
    let gpu = common::gpu();
    let dir = tmp("window-f10");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("dir");
    let mut deck = window_deck(&gpu, &dir);
    let t = target(&gpu, (480, 320));
    for i in 0..3 {
        frame(&gpu, &mut deck, &t, i, Vec::new());
    }
    assert!(!deck.video_recording());
    frame(&gpu, &mut deck, &t, 3, vec![key(egui::Key::F10)]);
    assert!(deck.video_recording(), "F10 starts a recording");
    for i in 4..20 {
        frame(&gpu, &mut deck, &t, i, Vec::new());
    }
    let (path, secs) = deck.video_status().expect("recording");
    let path = path.to_path_buf();
    assert!(secs > 0.0, "the video's clock runs");
    deck.apply(&gpu, UiCommand::ToggleVideo);
    assert!(!deck.video_recording());
    let toast = frames_until_toast(&gpu, &mut deck, &t, 20, "saved video");
    assert!(
        path.is_absolute() && path.starts_with(&dir),
        "{}",
        path.display()
    );
    assert!(toast.contains(&path.display().to_string()), "{toast}");
    let (_, _, w, h) = deck.scene_rect_px();
    let (frames, vw, vh, _) = probe(&path);
    assert_eq!((vw, vh), (w & !1, h & !1));
    let v = &deck.videos()[0];
    assert_eq!(v.frames_written, frames, "{v:?}");
    assert!(frames >= 1, "{v:?}");
}

/// A scene panel that changes size (the window resized) ends the recording: the file is
/// finished, of the first size, and the toast says why and where it is.
#[test]
#[ignore = "needs ffmpeg: run through `cargo xtask test`"]
fn resizing_ends_the_recording_with_a_complete_file() {
    let _live = crate::common::live();
    let gpu = common::gpu();
    let dir = tmp("window-resize");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("dir");
    let mut deck = window_deck(&gpu, &dir);
    let small = target(&gpu, (480, 320));
    let large = target(&gpu, (560, 360));
    frame(&gpu, &mut deck, &small, 0, Vec::new());
    deck.apply(&gpu, UiCommand::ToggleVideo);
    for i in 1..10 {
        frame(&gpu, &mut deck, &small, i, Vec::new());
    }
    let (_, _, w, h) = deck.scene_rect_px();
    let path = deck.video_status().expect("recording").0.to_path_buf();
    frame(&gpu, &mut deck, &large, 10, Vec::new());
    assert!(!deck.video_recording(), "a new size ends the recording");
    let toast = frames_until_toast(&gpu, &mut deck, &large, 11, "changed size");
    assert!(toast.contains(&path.display().to_string()), "{toast}");
    let (frames, vw, vh, _) = probe(&path);
    assert_eq!((vw, vh), (w & !1, h & !1));
    assert!(frames >= 1);
    assert!(deck.videos()[0].stopped_because.is_some());
}

/// A window whose surface is BGRA (as X11 surfaces are) records the same colours: the frames are
/// handed to ffmpeg as `bgra`. The last video frame (every frame one video frame here) is the
/// output as read back, cropped to the scene panel, and its mean of red minus blue (far from zero
/// for the particles) is the output's, not its negative.
#[test]
#[ignore = "needs ffmpeg: run through `cargo xtask test`"]
fn bgra_output_keeps_its_colours() {
    let _live = crate::common::live();
    let gpu = common::gpu();
    let format = wgpu::TextureFormat::Bgra8Unorm;
    let cli = <vizdeck::cli::Cli as clap::Parser>::try_parse_from([
        "vizdeck",
        "--scene",
        "particles",
        "--seed",
        "3",
    ])
    .expect("flags");
    let mut deck = Deck::new(&gpu, format, cli.scene_index(), cli.scene_config());
    deck.set_overlay(false);
    let video = tmp("bgra.mkv");
    deck.start_video(Some(video.clone()), vizdeck::deck::VideoClock::PerFrame)
        .expect("start");
    let size = (480, 320);
    let rgba = common::render_frames(&gpu, &mut deck, format, size, 20);
    deck.finish_video(&gpu).expect("finished");
    let (x, y, w, h) = deck.scene_rect_px();
    let (frames, vw, vh, _) = probe(&video);
    assert_eq!((frames, vw, vh), (20, w & !1, h & !1));
    let decoded = decode(&video, vw, vh);
    let want = crop(&rgba, size.0, (x, y, vw, vh));
    // The mean of red minus blue: the particles' warm colours make it far from zero, and a swap
    // would flip its sign.
    let red_minus_blue = |rgba: &[u8]| {
        let n = (rgba.len() / 4) as f64;
        rgba.chunks_exact(4)
            .map(|p| f64::from(p[0]) - f64::from(p[2]))
            .sum::<f64>()
            / n
    };
    let last = decoded.last().expect("a frame");
    let same = block_diff(last, &want, vw);
    let (got, expected) = (red_minus_blue(last), red_minus_blue(&want));
    eprintln!("bgra: block diff {same:.3}; red - blue: video {got:.2}, output {expected:.2}");
    assert!(same < 3.0, "{same:.2}");
    assert!(
        expected.abs() > 2.0,
        "a test image with colour: {expected:.2}"
    );
    assert!(
        (got - expected).abs() < 0.25 * expected.abs(),
        "{got:.2} vs {expected:.2}"
    );
}

/// The window without ffmpeg on PATH: `--record-video` is one message (a toast, and the log) and
/// the window runs on to its last frame, exiting 0; no file.
#[test]
#[ignore = "needs Xvfb: run through `cargo xtask test` or `cargo xtask services`"]
fn window_without_ffmpeg_runs_on() {
    let _live = crate::common::live();
    let display = std::env::var("VIZDECK_TEST_DISPLAY")
        .expect("VIZDECK_TEST_DISPLAY is not set: run through `cargo xtask services`");
    let video = tmp("window-never.mp4");
    let o = bin()
        .env("PATH", path_without_ffmpeg())
        .env("DISPLAY", &display)
        .env_remove("WAYLAND_DISPLAY")
        .args([
            "--scene",
            "timeseries",
            "--frames",
            "20",
            "--size",
            "480x320",
            "--record-video",
            video.to_str().unwrap(),
        ])
        .output()
        .expect("run vizdeck");
    let all = text(&o);
    assert!(o.status.success(), "{all}");
    assert!(!all.contains("panicked"), "{all}");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(
        stderr
            .matches("video recording needs ffmpeg on PATH: apt-get install ffmpeg")
            .count(),
        1,
        "{all}"
    );
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("vizdeck: frames 20"),
        "{all}"
    );
    assert!(!video.exists());
}
