//! `vizdeck stats` (text and JSON output, comparison, exit codes) and `vizdeck bench` (writes one
//! JSON + markdown report per run, and a CSV the stats command reads back).

use std::path::PathBuf;
use std::process::Command;

fn tmp(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("vizdeck_stats_cli_{}_{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn vizdeck(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_vizdeck"))
        .args(args)
        .env("RUST_LOG", "warn")
        .output()
        .expect("run vizdeck")
}

/// A vizdeck CSV with frame times 1..=n ms.
fn vizdeck_csv(path: &std::path::Path, n: u32) {
    let mut text = vizdeck::stats::CSV_HEADER.join(",") + "\n";
    for i in 1..=n {
        let mut row = vec![String::new(); vizdeck::stats::CSV_HEADER.len()];
        row[0] = "vizdeck".into();
        row[1] = i.to_string();
        row[2] = "particles".into();
        row[4] = i.to_string();
        text += &(row.join(",") + "\n");
    }
    std::fs::write(path, text).unwrap();
}

#[test]
fn stats_prints_and_compares() {
    let d = tmp("print");
    let a = d.join("a.csv");
    let b = d.join("b.csv");
    vizdeck_csv(&a, 100);
    std::fs::write(
        &b,
        "Application,MsBetweenPresents\nx,20\nx,20\nx,NA\nx,80\n",
    )
    .unwrap();
    let out = vizdeck(&["stats", a.to_str().unwrap(), b.to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("(Vizdeck, 100 frames)"), "{stdout}");
    assert!(stdout.contains("(PresentMon, 3 frames, 1 rows without a frame time skipped)"));
    let p99 = stdout.lines().find(|l| l.starts_with("p99 (ms)")).unwrap();
    // [1]: 1..=100 → p99 = 99 (not marked); [2]: 20, 20, 80 → 80, marked.
    assert!(p99.contains("99.000 ") && p99.contains("80.000*"), "{p99}");
    let fps = stdout
        .lines()
        .find(|l| l.starts_with("average FPS"))
        .unwrap();
    // 100 frames in 5.05 s = 19.80; 3 frames in 0.12 s = 25.
    assert!(fps.contains("19.80") && fps.contains("25.00"), "{fps}");
    // 25 / 19.80 = 1.2625: +26.2 % or +26.3 % depending on rounding of the last digit.
    assert!(stdout.contains("[2] vs [1]: average FPS +26."), "{stdout}");

    let out = vizdeck(&["stats", "--json", a.to_str().unwrap()]);
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let s = &v["captures"][0]["summary"];
    assert_eq!(s["frames"], 100);
    assert_eq!(s["p90_ms"], 90.0);
    assert_eq!(s["low_1_ms"], 100.0);
    assert_eq!(
        s["needs_more_frames"],
        serde_json::json!(["p99.9", "low_0.1"])
    );
    assert_eq!(v["captures"][0]["format"], "vizdeck");
    let _ = std::fs::remove_dir_all(&d);
}

/// A PresentMon capture whose frames are all 0 ms (issue 34): the average FPS and the lows as FPS
/// are n/a in the text (never "0.00") and `null` in the JSON; the times themselves are 0 ms.
#[test]
fn stats_zero_ms_capture_fps_na() {
    let d = tmp("zero");
    let z = d.join("zero.csv");
    std::fs::write(&z, "Application,MsBetweenPresents\nx,0\nx,0.000\nx,0\n").unwrap();
    let a = d.join("a.csv");
    vizdeck_csv(&a, 100);
    let out = vizdeck(&["stats", a.to_str().unwrap(), z.to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    let row = |label: &str| {
        stdout
            .lines()
            .find(|l| l.starts_with(label))
            .unwrap_or_else(|| panic!("{label}: {stdout}"))
            .split_whitespace()
            .rev()
            .take(2)
            .collect::<Vec<_>>()
    };
    // Columns [1] (1..=100 ms: 100 frames in 5.05 s = 19.80 FPS; the 1 % and 0.1 % lows are the
    // slowest ceil(100/100) = ceil(100/1000) = 1 frame, 100 ms = 10 FPS, the 0.1 % one marked:
    // it needs 1000 frames) and [2] (all 0 ms).
    assert_eq!(row("average FPS"), ["n/a", "19.80"], "{stdout}");
    assert_eq!(row("1% low (FPS)"), ["n/a", "10.00"], "{stdout}");
    assert_eq!(row("0.1% low (FPS)"), ["n/a", "10.00*"], "{stdout}");
    assert_eq!(row("max (ms)"), ["0.000", "100.000"], "{stdout}");
    assert!(stdout.contains("[2] vs [1]: average FPS n/a"), "{stdout}");
    assert!(stdout.contains("1% low FPS n/a"), "{stdout}");
    assert!(
        stdout.contains("every frame of the capture is 0 ms"),
        "{stdout}"
    );

    let out = vizdeck(&["stats", "--json", z.to_str().unwrap()]);
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let s = &v["captures"][0]["summary"];
    assert_eq!(s["frames"], 3);
    assert_eq!(s["duration_s"], 0.0);
    assert_eq!(s["max_ms"], 0.0);
    for key in ["mean_fps", "low_1_fps", "low_01_fps"] {
        assert!(s[key].is_null(), "{key}: {}", s[key]);
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn stats_bad_file_exits_non_zero_naming_it() {
    let d = tmp("bad");
    let good = d.join("good.csv");
    vizdeck_csv(&good, 3);
    let missing = d.join("missing.csv");
    let out = vizdeck(&["stats", good.to_str().unwrap(), missing.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<_> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{stderr}");
    assert!(
        lines[0].contains(&format!("'{}'", missing.display())),
        "{stderr}"
    );
    let junk = d.join("junk.csv");
    std::fs::write(&junk, "MsBetweenPresents\n16\nslow\n").unwrap();
    let out = vizdeck(&["stats", junk.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("junk.csv") && stderr.contains("line 3"),
        "{stderr}"
    );
    // No file at all: clap's usage error (exit 2).
    assert_eq!(vizdeck(&["stats"]).status.code(), Some(2));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn bench_writes_its_reports() {
    let d = tmp("bench");
    let out = vizdeck(&[
        "bench",
        "--backend",
        "vulkan",
        "--scenes",
        "particles",
        "--particles",
        "2048",
        "--frames",
        "6",
        "--warmup",
        "2",
        "--size",
        "96x64",
        "--out",
        d.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(d.join("bench-particles-96x64.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(json["summary"]["frames"], 6);
    assert_eq!(json["bench"]["size"], serde_json::json!([96, 64]));
    assert_eq!(json["bench"]["seed"], 1);
    assert!(
        json["adapter"]["name"]
            .as_str()
            .is_some_and(|s| !s.is_empty())
    );
    assert!(json["means"]["MsCPUBusy"].as_f64().unwrap() > 0.0);
    let md = std::fs::read_to_string(d.join("bench-particles-96x64.md")).unwrap();
    assert!(md.contains("| p99 (ms) |"), "{md}");
    // The run's CSV reads back with the same frame count.
    let csv = d.join("bench-particles-96x64.csv");
    let out = vizdeck(&["stats", "--json", csv.to_str().unwrap()]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["captures"][0]["summary"]["frames"], 6);
    let _ = std::fs::remove_dir_all(&d);
}

/// The upload and kernel tables are the lab's now: `vizdeck bench` given their flags fails
/// with one line naming the flag and the lab's command, before any GPU work.
#[test]
fn bench_names_the_lab_for_the_flags_that_moved() {
    for flag in ["--upload", "--kernels"] {
        let out = vizdeck(&["bench", "--scenes", "none", flag, "fft"]);
        assert_eq!(out.status.code(), Some(1), "{flag}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains(flag) && stderr.contains("vizdeck-lab"),
            "{stderr}"
        );
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
    }
}
