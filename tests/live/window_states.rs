//! The window in states a desktop puts it in: minimized under a window manager (it must wait for
//! events, not spin: at most 1 % of a core, by the process's CPU time over 5 s), restored (it
//! draws again), and wider than the adapter's texture limit (the surface is clamped: no GPU
//! validation errors, frames go on, one notice).
//!
//! Each test starts its own Xvfb (a free display from :150) with openbox on it, so the shared test
//! display keeps no window manager. `cargo xtask test` installs both and runs these ignored tests.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The tests measure CPU time: they run one at a time.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// An Xvfb and an openbox on it, stopped on drop.
struct Desktop {
    display: String,
    xvfb: Child,
    wm: Child,
}

impl Desktop {
    fn start(screen: &str) -> Desktop {
        let n = (150..250)
            .find(|n| {
                !std::path::Path::new(&format!("/tmp/.X{n}-lock")).exists()
                    && !std::path::Path::new(&format!("/tmp/.X11-unix/X{n}")).exists()
            })
            .expect("a free X display");
        let display = format!(":{n}");
        let xvfb = Command::new("Xvfb")
            .args([&display, "-screen", "0", screen, "-nolisten", "tcp"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("Xvfb is installed (cargo xtask test installs it)");
        let start = Instant::now();
        while !std::path::Path::new(&format!("/tmp/.X11-unix/X{n}")).exists() {
            assert!(start.elapsed() < Duration::from_secs(20), "Xvfb {display}");
            std::thread::sleep(Duration::from_millis(100));
        }
        let wm = Command::new("openbox")
            .env("DISPLAY", &display)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("openbox is installed (cargo xtask test installs it)");
        std::thread::sleep(Duration::from_millis(800));
        Desktop { display, xvfb, wm }
    }

    fn xdotool(&self, args: &[&str]) -> String {
        let out = Command::new("xdotool")
            .args(args)
            .env("DISPLAY", &self.display)
            .output()
            .expect("xdotool is installed");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// Starts vizdeck in a window on this desktop; returns it and its X window id.
    fn launch(&self, report: &PathBuf) -> (Child, String) {
        let child = Command::new(env!("CARGO_BIN_EXE_vizdeck"))
            .arg("--no-settings")
            .args([
                "--scene",
                "particles",
                "--particles",
                "1000",
                "--audio",
                "synthetic",
            ])
            .arg("--report")
            .arg(report)
            .env("DISPLAY", &self.display)
            .env("RUST_LOG", "warn")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start vizdeck");
        let mut child = child;
        let start = Instant::now();
        let pid = child.id().to_string();
        loop {
            let id = self.xdotool(&["search", "--onlyvisible", "--pid", &pid]);
            if let Some(w) = id.lines().last().filter(|w| !w.is_empty()) {
                // Let it draw a few frames first.
                std::thread::sleep(Duration::from_secs(3));
                return (child, w.to_string());
            }
            if start.elapsed() > Duration::from_secs(60) {
                let _ = child.kill();
                let _ = child.wait();
                panic!("no window after 60 s");
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

impl Drop for Desktop {
    fn drop(&mut self) {
        let _ = self.wm.kill();
        let _ = self.xvfb.kill();
        let _ = self.wm.wait();
        let _ = self.xvfb.wait();
    }
}

/// CPU time (user + system) of process `pid` so far, in clock ticks (`/proc/PID/stat`, fields
/// 14 and 15, `proc(5)`).
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("process alive");
    // The command name (field 2) is in parentheses and may hold spaces: count after it.
    let rest = &stat[stat.rfind(')').expect("stat format") + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

fn ticks_per_second() -> f64 {
    let out = Command::new("getconf").arg("CLK_TCK").output();
    out.ok()
        .and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse().ok())
        .unwrap_or(100.0)
}

/// Fraction of one core `pid` used over `secs` seconds.
fn core_share(pid: u32, secs: u64) -> f64 {
    let a = cpu_ticks(pid);
    std::thread::sleep(Duration::from_secs(secs));
    let b = cpu_ticks(pid);
    (b - a) as f64 / ticks_per_second() / secs as f64
}

/// SIGTERM, then the report the app writes on the way out.
fn stop(child: Child, report: &PathBuf) -> (serde_json::Value, String) {
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let out = child.wait_with_output().unwrap();
    let log = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{log}");
    let text = std::fs::read_to_string(report).expect("report written");
    (serde_json::from_str(&text).expect("JSON"), log)
}

fn report_path(tag: &str) -> PathBuf {
    std::env::temp_dir().join(format!("vizdeck-{tag}-{}.json", std::process::id()))
}

#[test]
#[ignore = "needs Xvfb, openbox and xdotool: run through `cargo xtask test`"]
fn minimized_window_waits_and_draws_again_when_restored() {
    let _live = crate::common::live();
    let _one_at_a_time = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let desk = Desktop::start("1280x800x24");
    let report = report_path("minimized");
    let (child, window) = desk.launch(&report);
    let pid = child.id();
    let drawing = core_share(pid, 2);
    desk.xdotool(&["windowminimize", &window]);
    std::thread::sleep(Duration::from_millis(1500));
    let minimized = core_share(pid, 5);
    eprintln!(
        "CPU: drawing {:.1} %, minimized {:.2} % of a core",
        drawing * 100.0,
        minimized * 100.0
    );
    assert!(
        minimized <= 0.01,
        "minimized window used {:.1} % of a core",
        minimized * 100.0
    );
    desk.xdotool(&["windowactivate", &window]);
    std::thread::sleep(Duration::from_millis(1500));
    // Drawing again: the particle scene on lavapipe keeps a core busy.
    let restored = core_share(pid, 2);
    assert!(
        restored > 0.2,
        "restored window used only {:.1} % of a core",
        restored * 100.0
    );
    let (v, log) = stop(child, &report);
    assert_eq!(v["gpu_errors"].as_array().map(Vec::len), Some(0), "{log}");
}

#[test]
#[ignore = "needs Xvfb, openbox and xdotool: run through `cargo xtask test`"]
fn window_wider_than_the_texture_limit_is_clamped() {
    let _live = crate::common::live();
    let _one_at_a_time = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let desk = Desktop::start("17000x400x24");
    let report = report_path("wide");
    let (child, window) = desk.launch(&report);
    desk.xdotool(&["windowsize", &window, "16900", "300"]);
    std::thread::sleep(Duration::from_secs(2));
    let geometry = desk.xdotool(&["getwindowgeometry", &window]);
    let frames_share = core_share(child.id(), 3);
    let (v, log) = stop(child, &report);
    assert!(
        geometry.contains("16900x300"),
        "the window was not resized: {geometry}"
    );
    assert_eq!(
        v["gpu_errors"].as_array().map(Vec::len),
        Some(0),
        "{}\n{log}",
        v["gpu_errors"]
    );
    assert!(log.contains("texture limit"), "no notice:\n{log}");
    assert!(
        frames_share > 0.2,
        "no frames drawn at the clamped size ({:.1} % of a core)",
        frames_share * 100.0
    );
}
