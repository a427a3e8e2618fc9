//! Settings kept between runs (`src/settings.rs`): a run's scene and scene settings come back in
//! the next run; flags given on the command line win over saved values; a saved value that does
//! not pass its flag's parser is skipped with a note and the rest are kept; a corrupt settings
//! file is moved aside with one message, never overwritten silently. Runs the real binary
//! headless (`--settings PATH`) and the real deck in-process on the test GPU.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use vizdeck::cli::Cli;
use vizdeck::settings::{Settings, load};

fn dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("vizdeck-settings-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

/// A headless run of 3 small frames with `args`, settings in `settings`, report in `report`.
fn run(settings: &Path, report: &Path, args: &[&str]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_vizdeck"))
        .args(["--headless", "--frames", "3", "--size", "320x200"])
        .args([
            "--audio",
            "synthetic",
            "--fft-on",
            "cpu",
            "--series-count",
            "2",
        ])
        .arg("--settings")
        .arg(settings)
        .arg("--report")
        .arg(report)
        .args(args)
        .output()
        .expect("run vizdeck");
    assert!(out.status.success(), "{}", common::text(&out));
    out
}

fn report(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).expect("report")).expect("report JSON")
}

#[test]
#[ignore = "needs a GPU (lavapipe): run through `cargo xtask test`"]
fn scene_and_analysis_settings_come_back_and_flags_win() {
    let d = dir("binary");
    let (s, r) = (d.join("settings.json"), d.join("report.json"));
    // Run 1 sets them by flags; the file keeps what the run ended with.
    run(
        &s,
        &r,
        &[
            "--scene",
            "spectrogram",
            "--fft-size",
            "2048",
            "--window",
            "hamming",
        ],
    );
    let saved = load(&s);
    assert!(saved.message.is_none(), "{:?}", saved.message);
    assert_eq!(saved.settings.scene.as_deref(), Some("spectrogram"));
    assert_eq!(saved.settings.scenes["spectrogram"]["fft_size"], 2048);
    assert_eq!(saved.settings.scenes["spectrogram"]["window"], "hamming");

    // Run 2, no flags: they are back.
    run(&s, &r, &[]);
    let rep = report(&r);
    assert_eq!(rep["scene"], "spectrogram");
    assert_eq!(rep["scenes"]["spectrogram"]["fft_size"], 2048);
    assert_eq!(rep["scenes"]["spectrogram"]["window"], "hamming");

    // Run 3: a flag given wins over the saved value (and is what gets saved).
    run(&s, &r, &["--fft-size", "1024"]);
    let rep = report(&r);
    assert_eq!(rep["scenes"]["spectrogram"]["fft_size"], 1024);
    assert_eq!(rep["scenes"]["spectrogram"]["window"], "hamming");
    assert_eq!(load(&s).settings.scenes["spectrogram"]["fft_size"], 1024);

    // The scene: run 4 shows the time series; run 5, without --scene, starts on it, and the
    // spectrogram's settings (not opened in those runs) are still kept.
    run(&s, &r, &["--scene", "timeseries"]);
    run(&s, &r, &[]);
    let rep = report(&r);
    assert_eq!(rep["scene"], "timeseries");
    assert_eq!(load(&s).settings.scenes["spectrogram"]["fft_size"], 1024);
}

#[test]
#[ignore = "needs a GPU (lavapipe): run through `cargo xtask test`"]
fn corrupt_settings_file_is_kept_aside_with_one_message() {
    let d = dir("corrupt");
    let (s, r) = (d.join("settings.json"), d.join("report.json"));
    let garbage = b"{\"scene\": \"timeseries\", \"scenes\": {\"spectro";
    std::fs::write(&s, garbage).expect("write");
    let out = run(&s, &r, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("settings file"))
        .collect();
    assert_eq!(lines.len(), 1, "{stderr}");
    assert!(lines[0].contains(&s.display().to_string()), "{stderr}");
    // The defaults: the spectrogram, not the time series the broken file named.
    assert_eq!(report(&r)["scene"], "spectrogram");
    let aside: Vec<PathBuf> = std::fs::read_dir(&d)
        .expect("dir")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().contains(".corrupt-"))
        .collect();
    assert_eq!(aside.len(), 1, "{aside:?}");
    assert!(
        lines[0].contains(&aside[0].display().to_string()),
        "{stderr}"
    );
    assert_eq!(std::fs::read(&aside[0]).expect("kept"), garbage);
    // The run wrote a good file in its place.
    let now = load(&s);
    assert!(now.message.is_none(), "{:?}", now.message);
    assert_eq!(now.settings.scene.as_deref(), Some("spectrogram"));
}

#[test]
fn saved_values_pass_the_flags_parsers_and_given_flags_win() {
    let mut saved = Settings {
        scene: Some("particles".into()),
        ..Default::default()
    };
    saved.scenes.insert(
        "spectrogram".into(),
        serde_json::json!({"fft_size": 1000, "hop": 256, "window": "blackman-harris",
                           "colormap": "magma"}),
    );
    saved.scenes.insert(
        "particles".into(),
        serde_json::json!({"particles": 5000, "particle_mode": "no-such-mode"}),
    );
    let mut cli =
        Cli::parse_from_checked(["vizdeck", "--headless", "--window", "hann"]).expect("flags");
    let notes = cli.apply_saved(&saved);
    assert_eq!(cli.scene, "particles");
    assert_eq!(cli.particles, 5000);
    assert_eq!(cli.hop, Some(256));
    // The flag given wins; the bad values are skipped, each with a note naming it.
    assert_eq!(cli.window, vizdeck::audio::stft::WindowKind::Hann);
    assert_eq!(cli.fft_size, vizdeck::audio::stft::DEFAULT_FFT_SIZE);
    assert_eq!(notes.len(), 2, "{notes:?}");
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("spectrogram.fft_size = 1000: ") && n.contains("--fft-size")),
        "{notes:?}"
    );
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("particles.particle_mode = no-such-mode: ")),
        "{notes:?}"
    );
    // A saved hop above an FFT size given on the command line fails `check` and is skipped.
    let mut cli = Cli::parse_from_checked(["vizdeck", "--fft-size", "256"]).expect("flags");
    let mut hop = Settings::default();
    hop.scenes
        .insert("spectrogram".into(), serde_json::json!({"hop": 512}));
    let notes = cli.apply_saved(&hop);
    assert_eq!(cli.fft_size, 256);
    assert_eq!(cli.hop, None);
    assert_eq!(notes.len(), 1, "{notes:?}");
}

/// The stats overlay starts hidden (issue 34: it covered data in every scene); `--overlay` or a
/// saved "shown" brings it back, and `--no-overlay` given on the command line wins over the file.
#[test]
fn overlay_is_hidden_unless_asked_for() {
    let plain = Cli::parse_from_checked(["vizdeck", "--headless"]).expect("flags");
    assert!(!plain.overlay_on());
    let on = Cli::parse_from_checked(["vizdeck", "--overlay"]).expect("flags");
    assert!(on.overlay_on());
    // Both at once is a usage error, not a silent pick.
    assert!(Cli::parse_from_checked(["vizdeck", "--overlay", "--no-overlay"]).is_err());
    let shown = Settings {
        overlay: Some(true),
        ..Default::default()
    };
    let mut cli = Cli::parse_from_checked(["vizdeck"]).expect("flags");
    assert!(cli.apply_saved(&shown).is_empty());
    assert!(cli.overlay_on());
    let mut cli = Cli::parse_from_checked(["vizdeck", "--no-overlay"]).expect("flags");
    cli.apply_saved(&shown);
    assert!(!cli.overlay_on());
    let hidden = Settings {
        overlay: Some(false),
        ..Default::default()
    };
    let mut cli = Cli::parse_from_checked(["vizdeck"]).expect("flags");
    cli.apply_saved(&hidden);
    assert!(!cli.overlay_on());
}

/// The panel-only settings (colormap, dB range, frequency axis, the chart's window, particle
/// forces) go through the file and come back in a new deck, the way a restart brings them.
#[test]
#[ignore = "needs a GPU (lavapipe): run through `cargo xtask test`"]
fn panel_settings_round_trip_through_the_file() {
    let gpu = common::gpu();
    let d = dir("panel");
    let path = d.join("settings.json");
    let cli = Cli::parse_from_checked([
        "vizdeck",
        "--headless",
        "--audio",
        "synthetic",
        "--fft-on",
        "cpu",
        "--particles",
        "4096",
        "--series-count",
        "2",
    ])
    .expect("flags");
    let changed = serde_json::json!({
        "spectrogram": {"colormap": "magma", "db_floor": -90.0, "scale": "mel",
                        "spectrum_strip": false},
        "timeseries": {"windows": {"synthetic": 30.0}},
        "particles": {"controls": {"gravity": 0.5, "drag": 0.25}, "color_by": "Age"},
    });
    let deck_with = |saved: Settings| {
        let mut deck = vizdeck::deck::Deck::new(
            &gpu,
            vizdeck::headless::OUTPUT_FORMAT,
            0,
            cli.scene_config(),
        );
        deck.use_settings(vizdeck::settings::Start {
            path: Some(path.clone()),
            settings: saved,
            defaults: cli.scene_config(),
            messages: Vec::new(),
        });
        deck
    };
    // Deck 1 starts from these settings (as if a user had chosen them), opens every scene,
    // and saves.
    let mut first = Settings::default();
    for (k, v) in changed.as_object().expect("object") {
        first.scenes.insert(k.clone(), v.clone());
    }
    let mut deck = deck_with(first);
    for i in 0..3 {
        deck.switch_to(i);
        common::render_frames(
            &gpu,
            &mut deck,
            vizdeck::headless::OUTPUT_FORMAT,
            (320, 200),
            2,
        );
    }
    deck.save_settings(None);
    let saved = load(&path);
    assert!(saved.message.is_none());
    // Deck 2 starts from the file alone.
    let mut deck = deck_with(saved.settings);
    for i in 0..3 {
        deck.switch_to(i);
        common::render_frames(
            &gpu,
            &mut deck,
            vizdeck::headless::OUTPUT_FORMAT,
            (320, 200),
            2,
        );
    }
    let now = deck.current_settings(None);
    for (scene, fields) in changed.as_object().expect("object") {
        for (k, v) in fields.as_object().expect("fields") {
            if let Some(inner) = v.as_object() {
                for (ik, iv) in inner {
                    assert_eq!(&now.scenes[scene][k][ik], iv, "{scene}.{k}.{ik}");
                }
            } else {
                assert_eq!(&now.scenes[scene][k], v, "{scene}.{k}");
            }
        }
    }
    let m = deck.metrics();
    assert_eq!(m["spectrogram"]["colormap"], "magma");
    assert_eq!(m["spectrogram"]["frequency_axis"], "mel");
    assert_eq!(m["timeseries"]["window_s"], 30.0);
}

/// A file given on the command line joins the recent files (absolute, most recent first).
#[test]
#[ignore = "needs a GPU (lavapipe): run through `cargo xtask test`"]
fn files_from_the_command_line_join_the_recent_files() {
    let d = dir("recent");
    let (s, r) = (d.join("settings.json"), d.join("report.json"));
    let (a, b) = (d.join("a.csv"), d.join("b.csv"));
    std::fs::write(&a, "t,x\n0,1\n1,2\n").expect("write");
    std::fs::write(&b, "t,y\n0,3\n1,4\n").expect("write");
    for f in [&a, &b, &a] {
        run(
            &s,
            &r,
            &[
                "--scene",
                "timeseries",
                "--series-file",
                &f.display().to_string(),
            ],
        );
    }
    let canon = |p: &Path| std::fs::canonicalize(p).expect("canonical");
    assert_eq!(load(&s).settings.recent, vec![canon(&a), canon(&b)]);
}
