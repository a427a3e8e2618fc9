//! A run that works prints vizdeck's lines only: the libraries' own noise of a first run —
//! libwayland's `XDG_RUNTIME_DIR is invalid` (through Mesa's device-select Vulkan layer), alsa-lib's
//! `ALSA lib … cannot find card '0'`, winit's `XRandR reported that the display's 0mm in size`
//! and `error setting XSETTINGS` — is routed into vizdeck's log at debug level: absent by
//! default, there under `RUST_LOG=…debug`. The environment is the one that produced it: no
//! `XDG_RUNTIME_DIR`, no PulseAudio server (cpal falls back to ALSA), an ALSA configuration
//! that fails to load (so ALSA complains on any machine), and under Xvfb for the window. Also:
//! the no-display error is one line without winit's source path, and `--audio NAME` lists no
//! ALSA plugin as an input device.

use crate::common;
use common::text;

use std::path::PathBuf;
use std::process::{Command, Output};

/// Lines of other libraries that must not reach stderr by default.
const NOISE: &[&str] = &[
    "XDG_RUNTIME_DIR is invalid",
    "ALSA lib",
    "0mm in size",
    "XSETTINGS",
];

/// An ALSA configuration with a syntax error: alsa-lib reports it through its error handler
/// whenever cpal's ALSA host looks for devices.
fn broken_alsa_conf() -> PathBuf {
    let path = std::env::temp_dir().join(format!("vizdeck-quiet-{}.conf", std::process::id()));
    std::fs::write(&path, "pcm.broken {\n    type hw\n").expect("write the conf");
    path
}

/// vizdeck with the noisy environment: no runtime directory, no sound server, ALSA's
/// configuration broken, `RUST_LOG` as given (unset: vizdeck's default filter).
fn noisy(args: &[&str], rust_log: Option<&str>) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_vizdeck"));
    c.args(args)
        .env_remove("XDG_RUNTIME_DIR")
        .env_remove("WAYLAND_DISPLAY")
        .env_remove("RUST_LOG")
        .env("PULSE_SERVER", "unix:/nonexistent/vizdeck-test/native")
        .env("ALSA_CONFIG_PATH", broken_alsa_conf());
    if let Some(filter) = rust_log {
        c.env("RUST_LOG", filter);
    }
    c.output().expect("run vizdeck")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Whether Mesa's device-select layer is installed: it is what asks libwayland for a compositor.
fn device_select_layer() -> bool {
    [
        "/usr/share/vulkan/implicit_layer.d",
        "/etc/vulkan/implicit_layer.d",
    ]
    .iter()
    .any(|d| {
        std::path::Path::new(d)
            .join("VkLayer_MESA_device_select.json")
            .exists()
    })
}

#[test]
fn headless_run_prints_no_library_noise_and_keeps_its_own_lines() {
    let _live = crate::common::live();
    let o = noisy(&["--headless", "--frames", "3", "--size", "320x200"], None);
    let err = stderr(&o);
    assert!(o.status.success(), "{}", text(&o));
    for n in NOISE {
        assert!(!err.contains(n), "'{n}' printed:\n{err}");
    }
    // vizdeck's own lines are still there: the adapter, the audio fallback, the summary.
    assert!(err.contains("vizdeck_gpu] adapter:"), "{err}");
    assert!(err.contains("No audio input could be opened"), "{err}");
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("spectrogram: frames 3"),
        "{}",
        text(&o)
    );
}

#[test]
fn library_noise_is_in_the_debug_log() {
    let _live = crate::common::live();
    let o = noisy(
        &["--headless", "--frames", "1", "--size", "320x200"],
        Some("warn,vizdeck=debug"),
    );
    let err = stderr(&o);
    assert!(o.status.success(), "{}", text(&o));
    // ALSA's lines, each at debug level in vizdeck's log, in ALSA's own layout.
    let alsa: Vec<&str> = err.lines().filter(|l| l.contains("ALSA lib")).collect();
    assert!(!alsa.is_empty(), "no ALSA line routed:\n{err}");
    for l in &alsa {
        assert!(l.contains("DEBUG vizdeck::alsa] ALSA lib "), "{l}");
    }
    if device_select_layer() {
        let wayland: Vec<&str> = err
            .lines()
            .filter(|l| l.contains("XDG_RUNTIME_DIR"))
            .collect();
        assert!(!wayland.is_empty(), "no libwayland line routed:\n{err}");
        for l in &wayland {
            assert!(
                l.contains("DEBUG vizdeck::wayland] libwayland-client: XDG_RUNTIME_DIR is invalid"),
                "{l}"
            );
        }
    }
}

#[test]
fn no_display_is_one_line_without_source_paths() {
    let _live = crate::common::live();
    let o = Command::new(env!("CARGO_BIN_EXE_vizdeck"))
        .arg("--no-settings")
        .args(["--frames", "1"])
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .env_remove("WAYLAND_SOCKET")
        .env("RUST_LOG", "warn")
        .output()
        .expect("run vizdeck");
    let err = stderr(&o);
    assert!(!o.status.success(), "{}", text(&o));
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "{err}");
    let line = lines[0];
    assert!(
        line.starts_with("vizdeck: error: cannot open a window"),
        "{line}"
    );
    assert!(
        line.contains("DISPLAY") && line.contains("--headless"),
        "{line}"
    );
    assert!(
        !line.contains(".rs:") && !line.contains("registry"),
        "{line}"
    );
}

#[test]
fn unknown_audio_device_lists_no_alsa_plugins() {
    let _live = crate::common::live();
    // cpal on its ALSA host (no sound server), with the machine's own ALSA configuration.
    let o = Command::new(env!("CARGO_BIN_EXE_vizdeck"))
        .args([
            "--headless",
            "--frames",
            "1",
            "--size",
            "64x64",
            "--audio",
            "no-such-device-3f9a",
        ])
        .env("PULSE_SERVER", "unix:/nonexistent/vizdeck-test/native")
        .env("RUST_LOG", "warn")
        .output()
        .expect("run vizdeck");
    let err = stderr(&o);
    assert!(!o.status.success(), "{}", text(&o));
    let line = err
        .lines()
        .find(|l| l.contains("no-such-device-3f9a"))
        .unwrap_or_else(|| panic!("{err}"));
    // ALSA's plugin definitions (their descriptions, as cpal names them) are not devices.
    for plugin in [
        "Discard all samples",
        "Rate Converter Plugin",
        "Plugin for channel",
        "Plugin using Speex",
        "Open Sound System",
        "JACK Audio Connection Kit",
    ] {
        assert!(!line.contains(plugin), "'{plugin}' listed: {line}");
    }
}

#[test]
#[ignore = "needs Xvfb: run through `cargo xtask test` or `cargo xtask services`"]
fn window_run_prints_no_library_noise() {
    let _live = crate::common::live();
    let display = std::env::var("VIZDECK_TEST_DISPLAY")
        .expect("VIZDECK_TEST_DISPLAY is not set: run through `cargo xtask services`");
    let run = |rust_log: Option<&str>| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_vizdeck"));
        // Never the user's settings file (a saved window size or scene would move the clicks).
        c.arg("--no-settings");
        c.args(["--frames", "10", "--size", "480x320"])
            .env("DISPLAY", &display)
            .env_remove("XDG_RUNTIME_DIR")
            .env_remove("WAYLAND_DISPLAY")
            .env_remove("RUST_LOG")
            .env("PULSE_SERVER", "unix:/nonexistent/vizdeck-test/native")
            .env("ALSA_CONFIG_PATH", broken_alsa_conf());
        if let Some(f) = rust_log {
            c.env("RUST_LOG", f);
        }
        c.output().expect("run vizdeck")
    };
    let o = run(None);
    let err = stderr(&o);
    assert!(o.status.success(), "{}", text(&o));
    for n in NOISE {
        assert!(!err.contains(n), "'{n}' printed:\n{err}");
    }
    assert!(err.contains("vizdeck_gpu] adapter:"), "{err}");
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("vizdeck: frames 10"),
        "{}",
        text(&o)
    );
    // Xvfb reports a screen of 0 mm and runs no XSETTINGS manager: winit says so, at debug.
    let o = run(Some("warn,vizdeck=debug,winit=debug"));
    let err = stderr(&o);
    assert!(o.status.success(), "{}", text(&o));
    let winit: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("0mm in size") || l.contains("XSETTINGS"))
        .collect();
    assert!(
        !winit.is_empty(),
        "winit said nothing of the screen:\n{err}"
    );
    for l in winit {
        assert!(l.contains(" DEBUG winit::"), "{l}");
    }
}

/// What a terminal progress bar writes (indicatif's bar, its line rewrites and cursor moves).
fn progress_marks(err: &str) -> Vec<&str> {
    let mut found = Vec::new();
    for mark in ["\r", "\x1b[", "[=", "=>", " left"] {
        if err.contains(mark) {
            found.push(mark);
        }
    }
    found
}

#[test]
fn long_work_with_stderr_piped_prints_no_progress_bar() {
    let _live = crate::common::live();
    let dir = std::env::temp_dir().join(format!("vizdeck-quiet-progress-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    // `vizdeck bench`: seconds of scene runs, a bar on a terminal (src/progress.rs).
    let out = dir.join("bench");
    let o = Command::new(env!("CARGO_BIN_EXE_vizdeck"))
        .args([
            "bench",
            "--scenes",
            "particles,spectrogram",
            "--frames",
            "120",
            "--warmup",
            "5",
            "--size",
            "320x200",
            "--particles",
            "4096",
            "--out",
        ])
        .arg(&out)
        .env("RUST_LOG", "warn")
        .output()
        .expect("run vizdeck bench");
    let err = stderr(&o);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        progress_marks(&err).is_empty(),
        "{:?} in:\n{err}",
        progress_marks(&err)
    );
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("| particles | 320x200 | 120 |"),
        "{}",
        text(&o)
    );
    // A headless run decoding a 12-minute file up front (a bar on a terminal while it decodes,
    // half a second on the 2-core machine).
    let wav = dir.join("twelve-minutes.wav");
    let spec = hound::WavSpec {
        channels: 1,
        sample_rate: 48_000,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    };
    let mut w = hound::WavWriter::create(&wav, spec).expect("create the WAV");
    for i in 0..48_000 * 720 {
        let v = ((i as f64 * 2.0 * std::f64::consts::PI * 440.0 / 48_000.0).sin() * 8000.0) as i16;
        w.write_sample(v).expect("write");
    }
    w.finalize().expect("finish the WAV");
    let o = Command::new(env!("CARGO_BIN_EXE_vizdeck"))
        .args([
            "--headless",
            "--frames",
            "2",
            "--size",
            "160x120",
            "--audio-file",
        ])
        .arg(&wav)
        .env("RUST_LOG", "warn")
        .output()
        .expect("run vizdeck");
    let err = stderr(&o);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        progress_marks(&err).is_empty(),
        "{:?} in:\n{err}",
        progress_marks(&err)
    );
    assert!(err.is_empty(), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
