//! Headless runs of the real binary on the software GPU: each scene writes a PNG of exactly the
//! requested size that is not blank, and a report with the scene's metrics; odd widths work;
//! every bad input exits non-zero with one clear message and no panic.

use crate::common;
use common::{non_background_fraction, read_png, text};

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_vizdeck"));
    c.env("RUST_LOG", "warn");
    c
}

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("vizdeck-headless-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir.join(name)
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("run vizdeck")
}

fn report(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("report written")).expect("json")
}

fn scene_run(scene: &str, extra: &[&str]) -> (serde_json::Value, (u32, u32, Vec<u8>)) {
    // Tests run in parallel: every run gets its own files.
    static RUN: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let run_id = RUN.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let png = tmp(&format!("{scene}-{run_id}.png"));
    let json = tmp(&format!("{scene}-{run_id}.json"));
    let mut args = vec![
        "--headless",
        "--scene",
        scene,
        "--frames",
        "40",
        "--size",
        "480x320",
        "--screenshot",
        png.to_str().unwrap(),
        "--report",
        json.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let o = run(&args);
    assert!(o.status.success(), "{}", text(&o));
    let image = read_png(&png);
    assert_eq!((image.0, image.1), (480, 320));
    assert!(
        non_background_fraction(&image.2) > 0.05,
        "{scene}: screenshot looks blank"
    );
    let r = report(&json);
    assert_eq!(r["scene"], scene);
    assert_eq!(r["summary"]["frames"], 40);
    assert!(r["summary"]["p50_ms"].as_f64().unwrap() > 0.0);
    assert_eq!(r["gpu_errors"].as_array().map(|a| a.len()), Some(0));
    (r["scenes"][scene].clone(), image)
}

#[test]
fn spectrogram_synthetic() {
    let (m, _) = scene_run("spectrogram", &["--audio", "synthetic"]);
    assert_eq!(m["source"], "synthetic");
    assert_eq!(m["sample_rate"], 48000);
    assert_eq!(m["fft_size"], 2048);
    assert_eq!(m["hop"], 512);
    // 40 frames of 1/60 s = 2/3 s = 32000 samples → (32000 − 2048) / 512 + 1 = 59 columns.
    assert_eq!(m["columns"], 59);
    assert_eq!(m["dropped_samples"], 0);
    assert!(m["dominant_hz"].as_f64().is_some());
    assert!(m["dominant_dbfs"].as_f64().is_some());
}

#[test]
fn spectrogram_wav_file_dominant_frequency_and_level() {
    // 2 s of a 1 kHz sine at amplitude 0.5, 16-bit, 44.1 kHz, stereo.
    let wav = tmp("tone.wav");
    let spec = hound::WavSpec {
        channels: 2,
        sample_rate: 44_100,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    };
    let mut w = hound::WavWriter::create(&wav, spec).expect("create wav");
    for n in 0..88_200 {
        let v = 0.5 * (std::f64::consts::TAU * 1000.0 * n as f64 / 44_100.0).sin();
        let s = (v * 32767.0).round() as i16;
        w.write_sample(s).unwrap();
        w.write_sample(s).unwrap();
    }
    w.finalize().unwrap();
    let json = tmp("tone.json");
    let o = run(&[
        "--headless",
        "--scene",
        "spectrogram",
        "--audio-file",
        wav.to_str().unwrap(),
        "--frames",
        "90",
        "--size",
        "320x240",
        "--report",
        json.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let m = &report(&json)["scenes"]["spectrogram"];
    assert_eq!(m["source"], "file");
    assert_eq!(m["sample_rate"], 44100);
    // 1 kHz lies 0.44 bin above bin 46 (46.44 × 21.53 Hz): interpolated between the bins, not
    // the bin centre's 990.5 or 1012.1 Hz (issue 34).
    let hz = m["dominant_hz"].as_f64().unwrap();
    assert!((hz - 1000.0).abs() < 1.0, "dominant {hz} Hz");
    let db = m["dominant_dbfs"].as_f64().unwrap();
    assert!((db - 20.0 * 0.5f64.log10()).abs() < 0.2, "level {db} dBFS");
    // A file is analysed whole when it opens: 88200 samples → ⌊(88200 − 2048) / 512⌋ + 1 = 169
    // columns, all within the 90 frames.
    assert_eq!(m["columns"], 169);
}

#[test]
fn particles_headless() {
    let args = [
        "--particles",
        "20000",
        "--seed",
        "5",
        "--particle-rate",
        "120",
    ];
    let (m, _) = scene_run("particles", &args);
    assert_eq!(m["count"], 20000);
    assert_eq!(m["seed"], 5);
    // 40 frames of 1/60 s × 2 steps of 1/120 s.
    assert_eq!(m["steps"], 80);
    assert_eq!(m["steps_per_second"], 120.0);
    assert!(m["kinetic_energy"].as_f64().unwrap() > 0.0);
    // The adapter's default: 60 Hz on a CPU adapter (one step a frame), 120 Hz elsewhere.
    let (m, _) = scene_run("particles", &["--particles", "20000", "--seed", "5"]);
    let hz = m["steps_per_second"].as_f64().unwrap();
    let cpu = m["rate_reason"]
        .as_str()
        .unwrap()
        .starts_with("CPU adapter");
    assert_eq!(hz, if cpu { 60.0 } else { 120.0 }, "{m}");
    assert_eq!(m["steps"].as_f64().unwrap(), 40.0 * hz / 60.0);
    // The statistics reduction: every 4th frame on a CPU adapter, and it did arrive.
    assert_eq!(m["stats_every"], if cpu { 4 } else { 1 }, "{m}");
    assert!(m["kinetic_energy"].as_f64().unwrap() > 0.0);
    assert!((m["sim_time_s"].as_f64().unwrap() - 40.0 / 60.0).abs() < 1e-4);
}

#[test]
fn particles_same_seed_same_image() {
    let args = ["--particles", "5000", "--seed", "9", "--no-overlay"];
    let a = scene_run("particles", &args).1;
    let png_a = a.2.clone();
    let b = scene_run("particles", &args).1;
    // The overlay (live timings) is off; compare the scene's lower-left region.
    let crop = |img: &[u8]| -> Vec<u8> {
        let mut out = Vec::new();
        for y in 200..320usize {
            for x in 290..380usize {
                let i = (y * 480 + x) * 4;
                out.extend_from_slice(&img[i..i + 4]);
            }
        }
        out
    };
    assert_eq!(crop(&png_a), crop(&b.2));
}

#[test]
fn timeseries_synthetic() {
    let (m, _) = scene_run("timeseries", &[]);
    assert_eq!(m["series_count"], 4);
    // 4 series × 50,000 samples/s × 2/3 s simulated.
    let ingested = m["points_ingested"].as_u64().unwrap();
    assert!(
        (ingested as i64 - 133_333).abs() <= 8,
        "ingested {ingested}"
    );
    assert!(m["points_drawn"].as_u64().unwrap() > 0);
}

#[test]
fn timeseries_csv_file() {
    let csv = tmp("series.csv");
    let mut s = String::from("time,temp,pressure,label\n");
    for i in 0..500 {
        let t = i as f64 * 0.01;
        s += &format!("{t},{},{},x\n", (t * 3.0).sin(), 1000.0 + t);
    }
    std::fs::write(&csv, s).unwrap();
    let (m, _) = scene_run("timeseries", &["--series-file", csv.to_str().unwrap()]);
    assert_eq!(m["series_count"], 2);
    let names: Vec<_> = m["series"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(names, ["temp", "pressure"]);
    assert_eq!(m["points_ingested"], 1000);
}

#[test]
fn odd_widths_give_exact_png_sizes() {
    for scene in ["spectrogram", "particles", "timeseries"] {
        odd_widths(scene);
    }
}

fn odd_widths(scene: &str) {
    for (w, h) in [(1u32, 1u32), (1, 64), (63, 47), (65, 33), (1366, 120)] {
        let png = tmp(&format!("odd-{scene}-{w}x{h}.png"));
        let o = run(&[
            "--headless",
            "--scene",
            scene,
            "--audio",
            "synthetic",
            "--particles",
            "4096",
            "--frames",
            "3",
            "--size",
            &format!("{w}x{h}"),
            "--screenshot",
            png.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{scene} {w}x{h}: {}", text(&o));
        let (pw, ph, rgba) = read_png(&png);
        assert_eq!((pw, ph), (w, h));
        assert_eq!(rgba.len(), (w * h * 4) as usize);
        if w * h > 1 {
            assert!(
                non_background_fraction(&rgba) > 0.0,
                "{scene} {w}x{h} blank"
            );
        }
    }
}

fn assert_bad(args: &[&str], needles: &[&str]) {
    let o = run(args);
    let all = text(&o);
    assert!(!o.status.success(), "expected failure: {all}");
    assert!(!all.contains("panicked"), "panic: {all}");
    let stderr = String::from_utf8_lossy(&o.stderr).to_lowercase();
    for n in needles {
        assert!(
            stderr.contains(&n.to_lowercase()),
            "'{n}' missing in: {all}"
        );
    }
}

/// A particle count beyond what the adapter holds is clamped, and a headless run says so.
#[test]
fn clamped_particle_count_is_reported() {
    let o = run(&[
        "--headless",
        "--scene",
        "particles",
        "--particles",
        "4000000000",
        "--frames",
        "1",
        "--size",
        "32x32",
    ]);
    let all = text(&o);
    assert!(o.status.success(), "{all}");
    assert!(
        all.contains("4000000000 particles") && all.contains("clamped to"),
        "{all}"
    );
}

#[test]
fn bad_inputs_exit_non_zero_with_a_message() {
    let missing = tmp("does-not-exist.wav");
    assert_bad(
        &[
            "--headless",
            "--frames",
            "2",
            "--audio-file",
            missing.to_str().unwrap(),
        ],
        &["does-not-exist.wav"],
    );
    let corrupt = tmp("corrupt.wav");
    std::fs::write(&corrupt, b"RIFF\x10\x00\x00\x00WAVEjunkjunkjunk").unwrap();
    assert_bad(
        &[
            "--headless",
            "--frames",
            "2",
            "--audio-file",
            corrupt.to_str().unwrap(),
        ],
        &["corrupt.wav"],
    );
    let no_numeric = tmp("words.csv");
    std::fs::write(&no_numeric, "time,name\nabc,def\nghi,jkl\n").unwrap();
    assert_bad(
        &[
            "--headless",
            "--scene",
            "timeseries",
            "--frames",
            "2",
            "--series-file",
            no_numeric.to_str().unwrap(),
        ],
        &["words.csv"],
    );
    assert_bad(&["--headless", "--size", "0x0"], &["--size", "width"]);
    // A size no frame should be drawn at is refused before any GPU work: 16384 × 16384 is
    // 268435456 pixels, four times the 8192 × 8192 most.
    assert_bad(
        &["--headless", "--frames", "3", "--size", "16384x16384"],
        &["--size", "16384x16384", "268435456 pixels"],
    );
    assert_bad(
        &["--headless", "--scene", "nope"],
        &["unknown scene 'nope'"],
    );
    assert_bad(
        &[
            "--headless",
            "--frames",
            "2",
            "--audio",
            "no-such-device-8c1f",
        ],
        &["no-such-device-8c1f"],
    );
    // Output paths are checked before rendering: a missing directory, a non-PNG screenshot.
    for flag in ["--record-stats", "--report", "--screenshot"] {
        assert_bad(
            &[
                "--headless",
                "--frames",
                "2",
                flag,
                "/no-such-dir-8c1f/out.png",
            ],
            &[flag, "/no-such-dir-8c1f", "does not exist"],
        );
    }
    let jpg = tmp("shot.jpg");
    assert_bad(
        &[
            "--headless",
            "--frames",
            "2",
            "--screenshot",
            jpg.to_str().unwrap(),
        ],
        &["--screenshot", "shot.jpg", ".png"],
    );
    assert!(!jpg.exists(), "nothing is written under a wrong name");
    assert_bad(
        &["--headless", "--scene", "particles", "--particles", "0"],
        &["--particles", "at least 1"],
    );
    // A negative number is read as the flag's value and refused by it, not as another flag.
    assert_bad(
        &["--headless", "--capture-delay", "-1"],
        &["--capture-delay", "between 0 and 86400"],
    );
}

/// The spectrum strip is drawn by the image's own pass beside the image, never over it: its
/// newest-column line (exactly (120, 220, 255)) crosses nearly every pixel row of the strip, one
/// span a row, and only inside the strip's rect: `layout::Frame` of the 1010 × 695 scene right of
/// the 270 px side panel and below the 25 px menu of a 1280 × 720 output.
#[test]
fn spectrum_strip_is_drawn_beside_the_image() {
    let png = tmp("strip.png");
    let o = run(&[
        "--headless",
        "--scene",
        "spectrogram",
        "--audio",
        "synthetic",
        "--no-overlay",
        "--frames",
        "40",
        "--size",
        "1280x720",
        "--screenshot",
        png.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let (w, h, rgba) = read_png(&png);
    let frame = vizdeck::scene::spectrogram::layout::Frame::for_pixels((1010, 695), 1.0, true);
    let px = |r: egui::Rect| {
        let [x0, y0, x1, y1] = vizdeck::scene::spectrogram::layout::Frame::px(r, 1.0);
        (x0 + 270, y0 + 25, x1 + 270, y1 + 25)
    };
    let strip = px(frame.strip.expect("a 1010 px wide scene has the strip"));
    let plot = px(frame.plot);
    let mut rows = std::collections::BTreeSet::new();
    for y in 0..h {
        for x in 0..w {
            let i = ((y * w + x) * 4) as usize;
            if rgba[i..i + 3] == [120, 220, 255] {
                rows.insert(y);
                assert!(
                    x >= strip.0 && x < strip.2 && y >= strip.1 && y < strip.3,
                    "a line pixel at ({x}, {y}) outside the strip {strip:?}"
                );
                assert!(x >= plot.2, "over the image {plot:?}");
            }
        }
    }
    let strip_rows = strip.3 - strip.1;
    assert!(
        rows.len() as u32 >= strip_rows * 9 / 10,
        "{} of {strip_rows} rows",
        rows.len()
    );
}

/// Issue 34: a CSV with a bad row among the first 100 and two later ones: the headless run's
/// last word on stderr counts the 3 rows the report counts (it said 1, the first rows' count,
/// at the start).
#[test]
fn csv_rows_not_read_agree_between_stderr_and_report() {
    let csv = tmp("three-bad-rows.csv");
    let mut s = String::from("t,v\n");
    for k in 0..5000 {
        if [10, 2000, 3000].contains(&k) {
            s += &format!("{k},oops\n");
        } else {
            s += &format!("{k},{}\n", k % 13);
        }
    }
    std::fs::write(&csv, s).unwrap();
    let json = tmp("three-bad-rows.json");
    let o = run(&[
        "--headless",
        "--scene",
        "timeseries",
        "--frames",
        "60",
        "--size",
        "160x120",
        "--series-file",
        csv.to_str().unwrap(),
        "--report",
        json.to_str().unwrap(),
    ]);
    let all = text(&o);
    assert!(o.status.success(), "{all}");
    let m = &report(&json)["scenes"]["timeseries"];
    assert_eq!(m["rows_skipped"], 3, "{m}");
    assert_eq!(m["points_ingested"], 4997);
    let last = all
        .lines()
        .rfind(|l| l.contains("row(s) not read"))
        .unwrap_or_else(|| panic!("no notice: {all}"));
    assert!(last.contains("3 row(s) not read"), "{all}");
}
