//! The desktop app in a real window under Xvfb, driven by xdotool clicks on the egui menu:
//! opens, starts recording, switches scenes, stops recording, quits; the CSV has one complete
//! row per recorded frame, and its scene column shows the switches in order.
//!
//! Needs an X display in `VIZDECK_TEST_DISPLAY` and xdotool; `cargo xtask test` provides both
//! (and runs ignored tests). Menu coordinates are those of egui 0.37's default style at
//! 1 pixel per point (Xvfb reports no DPI).

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The two tests share one display: run them one at a time.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn display() -> String {
    std::env::var("VIZDECK_TEST_DISPLAY")
        .expect("VIZDECK_TEST_DISPLAY is not set: run through `cargo xtask test` (starts Xvfb)")
}

fn xdotool(display: &str, args: &[&str]) -> String {
    let out = Command::new("xdotool")
        .args(args)
        .env("DISPLAY", display)
        .output()
        .expect("xdotool is installed (cargo xtask test installs it)");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn click(display: &str, window: &str, x: u32, y: u32) {
    xdotool(
        display,
        &[
            "mousemove",
            "--window",
            window,
            &x.to_string(),
            &y.to_string(),
        ],
    );
    std::thread::sleep(Duration::from_millis(300));
    xdotool(display, &["click", "1"]);
    std::thread::sleep(Duration::from_millis(700));
}

/// Clicks menu `menu_x` then the item at `item_y` (window coordinates).
fn menu(display: &str, window: &str, menu_x: u32, item: (u32, u32)) {
    click(display, window, menu_x, 12);
    click(display, window, item.0, item.1);
}

/// Kills the app if the test panics before it quits.
struct KillOnDrop(u32);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let _ = Command::new("kill")
                .args(["-KILL", &self.0.to_string()])
                .status();
        }
    }
}

const SCENE_MENU: u32 = 58;
const RECORD_MENU: u32 = 149;
const SPECTROGRAM: (u32, u32) = (91, 39);
const TIME_SERIES: (u32, u32) = (96, 85);
const QUIT: (u32, u32) = (81, 140);
const START: (u32, u32) = (161, 39);
const STOP: (u32, u32) = (161, 62);

fn wait_for_csv(dir: &Path) -> Option<std::path::PathBuf> {
    std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.extension().is_some_and(|e| e == "csv")
                && p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("vizdeck-stats-"))
        })
}

#[test]
#[ignore = "needs Xvfb and xdotool: run through `cargo xtask test`"]
fn menu_switches_scenes_and_records() {
    let _one_at_a_time = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let display = display();
    let dir = std::env::temp_dir().join(format!("vizdeck-window-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_vizdeck"))
        .args([
            "--scene",
            "particles",
            "--particles",
            "20000",
            "--audio",
            "synthetic",
            "--size",
            "1000x700",
        ])
        .current_dir(&dir)
        .env("DISPLAY", &display)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start vizdeck");
    let _kill = KillOnDrop(child.id());

    // Wait for the window to be mapped.
    let start = Instant::now();
    let window = loop {
        let pid = child.id().to_string();
        let id = xdotool(&display, &["search", "--onlyvisible", "--pid", &pid]);
        if let Some(first) = id.lines().next().filter(|l| !l.is_empty()) {
            break first.to_string();
        }
        if let Ok(Some(status)) = child.try_wait() {
            let out = child.wait_with_output().unwrap();
            panic!(
                "vizdeck exited early ({status}): {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "no window after 60 s"
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    std::thread::sleep(Duration::from_secs(3));

    menu(&display, &window, RECORD_MENU, START);
    let csv_wait = Instant::now();
    while wait_for_csv(&dir).is_none() && csv_wait.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(wait_for_csv(&dir).is_some(), "Record ▸ Start made no CSV");
    std::thread::sleep(Duration::from_secs(2));
    menu(&display, &window, SCENE_MENU, SPECTROGRAM);
    std::thread::sleep(Duration::from_secs(2));
    menu(&display, &window, SCENE_MENU, TIME_SERIES);
    std::thread::sleep(Duration::from_secs(2));
    menu(&display, &window, RECORD_MENU, STOP);
    std::thread::sleep(Duration::from_secs(1));
    menu(&display, &window, SCENE_MENU, QUIT);

    let deadline = Instant::now() + Duration::from_secs(30);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("vizdeck did not quit from Scene ▸ Quit");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "exit {:?}\n{stdout}\n{stderr}",
        out.status
    );
    assert!(!stderr.contains("panicked"), "{stderr}");

    // The summary printed at Stop names the file and its frame count.
    let csv = wait_for_csv(&dir).expect("csv");
    let line = stdout
        .lines()
        .find(|l| l.starts_with("recorded "))
        .unwrap_or_else(|| panic!("no 'recorded' summary in stdout:\n{stdout}"));
    assert!(line.contains(&csv.file_name().unwrap().to_string_lossy().to_string()));
    let frames: usize = line
        .split("frames ")
        .nth(1)
        .and_then(|s| s.split(',').next())
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or_else(|| panic!("no frame count in '{line}'"));

    let mut reader = csv::Reader::from_path(&csv).unwrap();
    let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    assert_eq!(header, vizdeck::stats::CSV_HEADER);
    let rows: Vec<csv::StringRecord> = reader.records().map(|r| r.expect("complete row")).collect();
    assert_eq!(rows.len(), frames, "one row per recorded frame");
    assert!(frames > 3, "only {frames} frames recorded");
    let text = std::fs::read_to_string(&csv).unwrap();
    assert!(text.ends_with('\n'), "last row is complete");
    let scene_col = header.iter().position(|h| h == "Scene").unwrap();
    let frame_col = header.iter().position(|h| h == "FrameId").unwrap();
    let mut order: Vec<String> = Vec::new();
    let mut last_frame: Option<u64> = None;
    for r in &rows {
        assert_eq!(r.len(), header.len());
        let f: u64 = r[frame_col].parse().unwrap();
        if let Some(l) = last_frame {
            assert_eq!(f, l + 1, "frames are consecutive");
        }
        last_frame = Some(f);
        if order.last().map(String::as_str) != Some(&r[scene_col]) {
            order.push(r[scene_col].to_string());
        }
    }
    assert_eq!(order, ["particles", "spectrogram", "timeseries"]);
}

#[test]
#[ignore = "needs Xvfb: run through `cargo xtask test`"]
fn sigterm_leaves_a_complete_recording() {
    let _one_at_a_time = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let display = display();
    let dir = std::env::temp_dir().join(format!("vizdeck-sigterm-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let csv = dir.join("run.csv");
    let child = Command::new(env!("CARGO_BIN_EXE_vizdeck"))
        .args(["--scene", "timeseries", "--record-stats"])
        .arg(&csv)
        .env("DISPLAY", &display)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start vizdeck");
    let start = Instant::now();
    // Let it record some frames, then SIGTERM.
    loop {
        let rows = std::fs::read_to_string(&csv)
            .map(|t| t.lines().count())
            .unwrap_or(0);
        if rows > 10 {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "no rows after 60 s"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = stdout
        .lines()
        .find(|l| l.starts_with("recorded "))
        .expect("summary printed");
    let frames: usize = line
        .split("frames ")
        .nth(1)
        .and_then(|s| s.split(',').next())
        .and_then(|s| s.trim().parse().ok())
        .unwrap();
    let mut reader = csv::Reader::from_path(&csv).unwrap();
    let mut rows = 0;
    for r in reader.records() {
        r.expect("complete row");
        rows += 1;
    }
    assert_eq!(rows, frames);
}
