//! `--capture-delay` and `--capture-duration`: a headless run records exactly the frames inside
//! the planned capture (headless, the run clock is simulated: 1/60 s per frame), and bad values
//! are refused with a message naming the flag.

use std::path::PathBuf;
use std::process::Command;

fn temp(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("vizdeck-capture-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs 120 headless frames of the particle scene (the run clock advances 1/60 s per frame, so
/// it ends at 2 s) and returns the frame ids recorded.
fn run(dir: &std::path::Path, extra: &[&str]) -> Vec<u64> {
    let csv = dir.join("frames.csv");
    let _ = std::fs::remove_file(&csv);
    let out = Command::new(env!("CARGO_BIN_EXE_vizdeck"))
        .args([
            "--headless",
            "--scene",
            "particles",
            "--particles",
            "4096",
            "--frames",
            "120",
            "--size",
            "64x64",
            "--record-stats",
        ])
        .arg(&csv)
        .args(extra)
        .output()
        .expect("run vizdeck");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut r = csv::Reader::from_path(&csv).expect("the CSV exists");
    r.records()
        .map(|row| row.expect("a CSV row")[1].parse::<u64>().expect("FrameId"))
        .collect()
}

#[test]
fn delay_and_duration_bound_the_recorded_frames() {
    let dir = temp("ok");
    let all = run(&dir, &[]);
    assert_eq!(all.len(), 120, "without a plan every frame is recorded");
    assert!(all.iter().enumerate().all(|(i, &f)| f == i as u64));
    // Delay 0.5 s = 30 frames of 1/60 s: recording starts with frame 29 or 30 (the clock sums
    // 1/60 in f64) and keeps every later frame.
    let late = run(&dir, &["--capture-delay", "0.5"]);
    assert!(
        (29..=30).contains(&late[0]),
        "first recorded frame {}",
        late[0]
    );
    assert!(late.windows(2).all(|w| w[1] == w[0] + 1));
    assert_eq!(*late.last().expect("rows"), 119);
    // Duration 0.5 s from the start: frames 0 to 28 or 29.
    let short = run(&dir, &["--capture-duration", "0.5"]);
    assert_eq!(short[0], 0);
    assert!((29..=30).contains(&short.len()), "{} rows", short.len());
    // Both: 0.25 s of delay (frame 14 or 15), then 0.5 s (30 frames ± 1).
    let both = run(&dir, &["--capture-delay=0.25", "--capture-duration=0.5"]);
    assert!((14..=15).contains(&both[0]), "first {}", both[0]);
    assert!((29..=31).contains(&both.len()), "{} rows", both.len());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_capture_values_name_the_flag() {
    for (flag, value) in [
        ("--capture-delay", "-1"),
        ("--capture-duration", "abc"),
        ("--capture-delay", "inf"),
        ("--capture-duration", "100000"),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_vizdeck"))
            .args(["--headless", "--frames", "1", &format!("{flag}={value}")])
            .output()
            .expect("run vizdeck");
        assert!(!out.status.success(), "{flag} {value} was accepted");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(flag), "{flag} {value}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}
