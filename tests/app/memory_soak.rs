//! Memory soak: each scene headless for thousands of frames at a small size; the resident set at
//! the end of the run may exceed the one read after the warm-up (`--memory-warmup-frames`, once
//! everything the scene fills by design is full) by at most 1 %. A memory assertion, not a timed
//! one: a leak of even 1 kB a frame fails it.
//!
//! The particle scene leaked ~0.3 MB a frame on lavapipe before its view parameters moved from a
//! uniform to a storage buffer (see `scene/particles/render.rs`): +600 MB over these 2,000 frames.

use std::process::Command;

/// Allowed RSS growth after the warm-up, as a fraction of the warm-up reading.
const MAX_GROWTH: f64 = 0.01;

/// Runs `vizdeck --headless` with `args`, `frames` frames, the warm-up reading at `warmup`, and
/// returns the report's `memory` object.
fn soak(name: &str, frames: u64, warmup: u64, args: &[&str]) -> serde_json::Value {
    let report =
        std::env::temp_dir().join(format!("vizdeck-soak-{name}-{}.json", std::process::id()));
    let out = Command::new(env!("CARGO_BIN_EXE_vizdeck"))
        .env("RUST_LOG", "warn")
        .args(["--headless", "--size", "64x64", "--no-overlay"])
        .args(["--frames", &frames.to_string()])
        .args(["--memory-warmup-frames", &warmup.to_string()])
        .arg("--report")
        .arg(&report)
        .args(args)
        .output()
        .expect("run vizdeck");
    assert!(
        out.status.success(),
        "{name}: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&report).expect("report written");
    let _ = std::fs::remove_file(&report);
    let v: serde_json::Value = serde_json::from_str(&text).expect("report is JSON");
    v["memory"].clone()
}

fn assert_flat(name: &str, m: &serde_json::Value) {
    let warm = m["rss_after_warmup_bytes"].as_f64().expect("warm-up RSS");
    let end = m["rss_bytes"].as_f64().expect("end RSS");
    let growth = (end - warm) / warm;
    // The report's own figure is the same quotient.
    let reported = m["growth_after_warmup"].as_f64().expect("growth");
    assert!((reported - growth).abs() < 1e-9, "{name}: {m}");
    assert!(
        growth <= MAX_GROWTH,
        "{name}: RSS grew {:.2} % after the warm-up ({:.1} MB -> {:.1} MB)",
        growth * 100.0,
        warm / 1e6,
        end / 1e6
    );
    assert!(m["peak_rss_bytes"].as_f64().unwrap() >= end, "{name}: {m}");
}

#[test]
fn particles_memory_is_flat() {
    let m = soak(
        "particles",
        3000,
        1000,
        &["--scene", "particles", "--particles", "1"],
    );
    assert_flat("particles", &m);
    // lavapipe's allocator reports what the scene holds on the GPU.
    let gpu = &m["gpu"];
    if !gpu.is_null() {
        assert!(gpu["allocated_bytes"].as_u64().unwrap() > 0, "{m}");
        assert!(gpu["reserved_bytes"].as_u64() >= gpu["allocated_bytes"].as_u64());
    }
}

#[test]
fn particles_splat_memory_is_flat() {
    // From 1,048,576 particles the compute splat draws them (its own view binding).
    let m = soak(
        "splat",
        400,
        150,
        &["--scene", "particles", "--particles", "1048576"],
    );
    assert_flat("particles splat", &m);
}

#[test]
fn spectrogram_memory_is_flat() {
    // Hop 32: 1,500 columns a second fill the scrollback and its history by frame 3,000.
    let m = soak(
        "spectrogram",
        5000,
        3000,
        &[
            "--scene",
            "spectrogram",
            "--audio",
            "synthetic",
            "--fft-size",
            "256",
            "--hop",
            "32",
        ],
    );
    assert_flat("spectrogram", &m);
}

#[test]
fn spectrogram_memory_is_flat_while_the_scrollback_fills() {
    // The default analysis (hop 512: 94 columns a second) fills the 70 s scrollback and its
    // history over 4,200 frames: with the history's memory made resident when the analysis is
    // built, the reading after 60 frames already holds it (before, RSS grew by ~18 MB, 10 %, over
    // these 80 s).
    let m = soak(
        "spectrogram-fill",
        4800,
        60,
        &["--scene", "spectrogram", "--audio", "synthetic"],
    );
    assert_flat("spectrogram-fill", &m);
}

#[test]
fn timeseries_memory_is_flat() {
    // 100 samples a second: the store grows by ~3 kB over the run, far under 1 %.
    let m = soak(
        "timeseries",
        3000,
        1000,
        &["--scene", "timeseries", "--series-rate", "100"],
    );
    assert_flat("timeseries", &m);
}
