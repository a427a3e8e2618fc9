//! Live audio end to end: a 1 kHz tone played into the PulseAudio null sink (whose monitor is the
//! default source) is captured by `vizdeck --headless --audio default`, and the report's dominant
//! frequency is 1 kHz (within one FFT bin).
//!
//! Needs the sink named in `VIZDECK_TEST_PULSE_SINK`; `cargo xtask test` starts PulseAudio with it
//! and runs ignored tests.

use std::process::{Command, Stdio};

#[test]
#[ignore = "needs PulseAudio with a null sink: run through `cargo xtask test`"]
fn live_tone_is_the_reports_dominant_frequency() {
    let _live = crate::common::live();
    let sink = std::env::var("VIZDECK_TEST_PULSE_SINK").expect(
        "VIZDECK_TEST_PULSE_SINK is not set: run through `cargo xtask test` (starts PulseAudio)",
    );
    let dir = std::env::temp_dir().join(format!("vizdeck-live-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // 20 s of a 1 kHz sine at amplitude 0.5, 48 kHz mono, 16-bit (hound).
    let wav = dir.join("tone.wav");
    let spec = hound::WavSpec {
        channels: 1,
        sample_rate: 48_000,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    };
    let mut w = hound::WavWriter::create(&wav, spec).unwrap();
    for n in 0..48_000 * 20 {
        let v = 0.5 * (std::f64::consts::TAU * 1000.0 * n as f64 / 48_000.0).sin();
        w.write_sample((v * 32767.0).round() as i16).unwrap();
    }
    w.finalize().unwrap();
    let mut player = Command::new("paplay")
        .args(["-d", &sink])
        .arg(&wav)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("paplay (pulseaudio-utils) is installed");
    std::thread::sleep(std::time::Duration::from_millis(500));

    let report = dir.join("live.json");
    let out = Command::new(env!("CARGO_BIN_EXE_vizdeck"))
        .args([
            "--headless",
            "--scene",
            "spectrogram",
            "--audio",
            "default",
            "--frames",
            "400",
            "--size",
            "320x200",
            "--report",
        ])
        .arg(&report)
        .env("RUST_LOG", "warn")
        .output()
        .expect("run vizdeck");
    let _ = player.kill();
    let _ = player.wait();
    let log = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{log}");
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let m = &r["scenes"]["spectrogram"];
    assert_eq!(m["source"], "live", "no live input opened: {m}");
    let sr = m["sample_rate"].as_f64().unwrap();
    let hz = m["dominant_hz"].as_f64().expect("columns were analysed");
    assert!(
        (hz - 1000.0).abs() <= sr / 2048.0,
        "dominant {hz} Hz, expected 1000 Hz ± one bin ({} Hz): {m}",
        sr / 2048.0
    );
    // Amplitude 0.5 → −6.02 dBFS, give or take the server's resampling and the mix to mono.
    let db = m["dominant_dbfs"].as_f64().unwrap();
    assert!(db > -12.0 && db < 0.5, "level {db} dBFS: {m}");
}
