//! The spectrogram keeps analysing live input while its view is frozen and while another scene
//! is shown (issue 16): tones played into the PulseAudio null sink, captured from its monitor,
//! exported with `--export-spectrogram` (the CSV of every column the scene holds) and read back
//! here. What the exports must show is worked out from what the test played and when:
//!
//! - the tone played only while the view was frozen (Space), or only while another scene was
//!   shown, is in the export for as long as it played (3 s) at its level (−6.02 dBFS: amplitude
//!   0.5), between the tone played before and after, with no jump in stream time anywhere
//!   (consecutive columns one hop apart);
//! - a scene in the background longer than its capture ring holds analyses what the ring held
//!   and marks the rest as a gap (NaN columns, drawn hatched) lasting as long as the time that
//!   did not fit, at its true stream times.
//!
//! The window tests need Xvfb, xdotool and PulseAudio; the gap test PulseAudio only. Run them
//! through `cargo xtask services -- cargo test --release --test spectrogram_live --
//! --include-ignored` (or `cargo xtask test`).

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The tests share the sink and the display: one at a time.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn sink() -> String {
    std::env::var("VIZDECK_TEST_PULSE_SINK").unwrap_or_else(|_| "viz".into())
}

fn tmp_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("vizdeck-spec-live-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `seconds` of a sine of `hz` at amplitude 0.5, mono, 48 kHz, 16-bit, into `dir`.
fn tone_wav(dir: &Path, hz: f64, seconds: f64) -> PathBuf {
    let path = dir.join(format!("tone-{hz}.wav"));
    let spec = hound::WavSpec {
        channels: 1,
        sample_rate: 48_000,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    };
    let mut w = hound::WavWriter::create(&path, spec).unwrap();
    for i in 0..(seconds * 48_000.0) as usize {
        let v = 0.5 * (std::f64::consts::TAU * hz * i as f64 / 48_000.0).sin();
        w.write_sample((v * 32767.0).round() as i16).unwrap();
    }
    w.finalize().unwrap();
    path
}

/// Plays `wav` into the sink with a 20 ms buffer (the null sink then renders like a sound card).
struct Player(Child);

impl Player {
    fn start(wav: &Path) -> Player {
        Player(
            Command::new("paplay")
                .args(["-d", &sink(), "--latency-msec=20"])
                .arg(wav)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("paplay (pulseaudio-utils) is installed"),
        )
    }
}

impl Drop for Player {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// One exported column: its centre time and its dB values (NaN: no input).
struct Row {
    t: f64,
    db: Vec<f64>,
}

/// The export: bin frequencies (Hz) and the rows.
fn read_export(path: &Path) -> (Vec<f64>, Vec<Row>) {
    let mut r = csv::Reader::from_path(path).expect("the export exists");
    let freqs: Vec<f64> = r
        .headers()
        .unwrap()
        .iter()
        .skip(1)
        .map(|h| h.parse().unwrap())
        .collect();
    let rows = r
        .records()
        .map(|rec| {
            let rec = rec.unwrap();
            let mut it = rec.iter();
            let t: f64 = it.next().unwrap().parse().unwrap();
            Row {
                t,
                db: it.map(|v| v.parse().unwrap()).collect(),
            }
        })
        .collect();
    (freqs, rows)
}

/// What a column holds: a gap (every value NaN), a tone (its frequency, Hz, and level: the power
/// of the 7 bins around the peak over the Hann window's noise bandwidth, 1.5 bins, so a sine
/// reads its level wherever it falls between bins), or neither (silence, a tone starting).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Gap,
    Tone(f64, f64),
    Other,
}

fn kind(row: &Row, freqs: &[f64]) -> Kind {
    if row.db.iter().all(|v| v.is_nan()) {
        return Kind::Gap;
    }
    let (k, peak) =
        row.db.iter().enumerate().fold(
            (0, f64::MIN),
            |m, (k, v)| if *v > m.1 { (k, *v) } else { m },
        );
    if peak < -30.0 {
        return Kind::Other;
    }
    let lo = k.saturating_sub(3);
    let hi = (k + 3).min(row.db.len() - 1);
    let power: f64 = row.db[lo..=hi].iter().map(|v| 10f64.powf(v / 10.0)).sum();
    Kind::Tone(freqs[k], 10.0 * (power / 1.5).log10())
}

/// Whether `k` is a tone of `hz` (within two bins).
fn is_tone(k: Kind, hz: f64, bin: f64) -> bool {
    matches!(k, Kind::Tone(f, _) if (f - hz).abs() <= 2.0 * bin)
}

/// The export's timeline has no jump: consecutive columns are at most one hop apart (`step`
/// seconds), and in order.
fn assert_no_jump(rows: &[Row], step: f64, what: &str) {
    for w in rows.windows(2) {
        let dt = w[1].t - w[0].t;
        assert!(
            dt > 0.0 && dt <= step * 1.0001,
            "{what}: a jump in stream time from {} s to {} s (one hop is {step} s)",
            w[0].t,
            w[1].t
        );
    }
}

/// The longest run of consecutive rows for which `pred` holds: (first index, length).
fn longest_run(kinds: &[Kind], pred: impl Fn(Kind) -> bool) -> (usize, usize) {
    let mut best = (0, 0);
    let mut start = None;
    for (i, k) in kinds.iter().enumerate() {
        match (pred(*k), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                if i - s > best.1 {
                    best = (s, i - s);
                }
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start
        && kinds.len() - s > best.1
    {
        best = (s, kinds.len() - s);
    }
    best
}

// ---------------------------------------------------------------------------------------------
// The window: vizdeck under Xvfb, keys through xdotool.

fn display() -> String {
    std::env::var("VIZDECK_TEST_DISPLAY")
        .expect("VIZDECK_TEST_DISPLAY is not set: run through `cargo xtask services` (starts Xvfb)")
}

fn xdotool(args: &[&str]) -> String {
    let out = Command::new("xdotool")
        .args(args)
        .env("DISPLAY", display())
        .output()
        .expect("xdotool is installed");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// A vizdeck window on the sink's monitor, exporting the spectrogram, recording frame stats.
struct App {
    child: Option<Child>,
    window: String,
    dir: PathBuf,
}

impl App {
    fn start(dir: &Path) -> App {
        let mut child = Command::new(env!("CARGO_BIN_EXE_vizdeck"))
            .args([
                "--scene",
                "spectrogram",
                "--audio",
                &format!("{}.monitor", sink()),
            ])
            .args(["--size", "900x560", "--particles", "20000", "--no-overlay"])
            .arg("--export-spectrogram")
            .arg(dir.join("export.csv"))
            .arg("--record-stats")
            .arg(dir.join("stats.csv"))
            .arg("--report")
            .arg(dir.join("report.json"))
            .current_dir(dir)
            .env("DISPLAY", display())
            .env("RUST_LOG", "warn")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start vizdeck");
        let start = Instant::now();
        let window = loop {
            let id = xdotool(&["search", "--onlyvisible", "--pid", &child.id().to_string()]);
            if let Some(first) = id.lines().next().filter(|l| !l.is_empty()) {
                break first.to_string();
            }
            if let Ok(Some(status)) = child.try_wait() {
                panic!("vizdeck exited early: {status}");
            }
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "no window after 60 s"
            );
            std::thread::sleep(Duration::from_millis(200));
        };
        let app = App {
            child: Some(child),
            window,
            dir: dir.to_path_buf(),
        };
        // Frames are being drawn: a row a frame in the recording.
        let start = Instant::now();
        while std::fs::read_to_string(dir.join("stats.csv")).map_or(0, |t| t.lines().count()) < 30 {
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "no frames after 60 s"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        // Keys go to the focused window (no window manager here).
        xdotool(&["windowfocus", "--sync", &app.window]);
        xdotool(&["mousemove", "--window", &app.window, "600", "300"]);
        app
    }

    fn key(&self, key: &str) {
        xdotool(&["windowfocus", "--sync", &self.window]);
        xdotool(&["key", key]);
    }

    /// SIGTERM: the app ends its run as on Ctrl+Q (exports, report); its output.
    fn stop(mut self) -> (serde_json::Value, String) {
        let mut child = self.child.take().expect("running");
        let st = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status()
            .unwrap();
        assert!(st.success());
        let start = Instant::now();
        while child.try_wait().unwrap().is_none() {
            if start.elapsed() > Duration::from_secs(30) {
                let _ = child.kill();
                panic!("vizdeck did not end after SIGTERM");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).to_string();
        assert!(out.status.success(), "exit {:?}\n{stderr}", out.status);
        assert!(!stderr.contains("panicked"), "{stderr}");
        let report =
            serde_json::from_str(&std::fs::read_to_string(self.dir.join("report.json")).unwrap())
                .unwrap();
        (report, stderr)
    }

    /// The scenes of the recorded frames, in order, repeats left out.
    fn scenes(&self) -> Vec<String> {
        let mut r = csv::Reader::from_path(self.dir.join("stats.csv")).unwrap();
        let col = r
            .headers()
            .unwrap()
            .iter()
            .position(|h| h == "Scene")
            .unwrap();
        let mut order: Vec<String> = Vec::new();
        for rec in r.records() {
            let s = rec.unwrap()[col].to_string();
            if order.last() != Some(&s) {
                order.push(s);
            }
        }
        order
    }
}

impl Drop for App {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Plays 1.5 kHz, then 3 kHz for 3 s while `during` holds (its start and end are `begin` and
/// `end`, keys pressed by the test), then 1.5 kHz again; returns the export and the report.
fn tone_while(
    tag: &str,
    begin: &str,
    end: &str,
) -> (Vec<f64>, Vec<Row>, serde_json::Value, Vec<String>) {
    let dir = tmp_dir(tag);
    let a = tone_wav(&dir, 1500.0, 30.0);
    let b = tone_wav(&dir, 3000.0, 30.0);
    let app = App::start(&dir);
    let before = Player::start(&a);
    std::thread::sleep(Duration::from_secs(2));
    app.key(begin);
    drop(before);
    let during = Player::start(&b);
    std::thread::sleep(Duration::from_secs(3));
    drop(during);
    let after = Player::start(&a);
    app.key(end);
    std::thread::sleep(Duration::from_secs(2));
    let scenes = app.scenes();
    let (report, _) = app.stop();
    drop(after);
    let (freqs, rows) = read_export(&dir.join("export.csv"));
    (freqs, rows, report, scenes)
}

/// What both window tests check in the export: no jump in time; 3 s of 3 kHz (the stretch the
/// view was frozen or hidden) at −6.02 dBFS, between 1.5 kHz before and after.
fn assert_the_stretch_is_there(
    what: &str,
    freqs: &[f64],
    rows: &[Row],
    report: &serde_json::Value,
) {
    let m = &report["scenes"]["spectrogram"];
    let (sr, n, hop) = (
        m["sample_rate"].as_f64().unwrap(),
        m["fft_size"].as_f64().unwrap(),
        m["hop"].as_f64().unwrap(),
    );
    let bin = sr / n;
    assert!(
        rows.len() > 400,
        "{what}: only {} columns exported",
        rows.len()
    );
    assert_no_jump(rows, hop / sr, what);
    let kinds: Vec<Kind> = rows.iter().map(|r| kind(r, freqs)).collect();
    let (first, len) = longest_run(&kinds, |k| is_tone(k, 3000.0, bin));
    let seconds = len as f64 * hop / sr;
    eprintln!(
        "{what}: 3 kHz in {len} consecutive columns = {seconds:.3} s, from {:.3} s",
        rows[first].t
    );
    assert!(
        (2.6..=3.4).contains(&seconds),
        "{what}: the 3 s played are {seconds:.3} s of the export"
    );
    let mut levels: Vec<f64> = kinds[first..first + len]
        .iter()
        .filter_map(|k| match k {
            Kind::Tone(_, db) => Some(*db),
            _ => None,
        })
        .collect();
    levels.sort_by(f64::total_cmp);
    let median = levels[levels.len() / 2];
    let expected = 20.0 * 0.5f64.log10();
    assert!(
        (median - expected).abs() < 0.5,
        "{what}: the 3 kHz columns read {median:.2} dBFS, played at {expected:.2}"
    );
    let a_before = kinds[..first]
        .iter()
        .filter(|k| is_tone(**k, 1500.0, bin))
        .count();
    let a_after = kinds[first + len..]
        .iter()
        .filter(|k| is_tone(**k, 1500.0, bin))
        .count();
    assert!(
        a_before as f64 * hop / sr > 1.0 && a_after as f64 * hop / sr > 1.0,
        "{what}: 1.5 kHz before ({a_before} columns) and after ({a_after})"
    );
}

#[test]
#[ignore = "needs Xvfb, xdotool and PulseAudio: run through `cargo xtask services` or `cargo xtask test`"]
fn a_frozen_view_keeps_analysing() {
    let _live = crate::common::live();
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (freqs, rows, report, scenes) = tone_while("freeze", "space", "space");
    let view = &report["scenes"]["spectrogram"]["view"];
    assert_eq!(view["freezes"], 1, "Space froze the view once: {view}");
    assert_eq!(view["frozen"], false, "and resumed it: {view}");
    assert_eq!(scenes, ["spectrogram"]);
    assert_the_stretch_is_there("frozen", &freqs, &rows, &report);
}

#[test]
#[ignore = "needs Xvfb, xdotool and PulseAudio: run through `cargo xtask services` or `cargo xtask test`"]
fn a_scene_in_the_background_keeps_its_audio() {
    let _live = crate::common::live();
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (freqs, rows, report, scenes) = tone_while("switch", "2", "1");
    assert_eq!(scenes, ["spectrogram", "particles", "spectrogram"]);
    let m = &report["scenes"]["spectrogram"];
    assert_eq!(m["view"]["freezes"], 0, "{m}");
    assert_eq!(m["dropped_samples"], 0, "3 s fit in the capture ring: {m}");
    assert_the_stretch_is_there("hidden", &freqs, &rows, &report);
}

// ---------------------------------------------------------------------------------------------
// The deck in this process: a spectrogram whose capture ring holds 2 s, in the background 5 s.

/// A scene that draws nothing, to show while the spectrogram is in the background.
struct Other;

impl vizdeck::scene::Scene for Other {
    fn id(&self) -> &'static str {
        "other"
    }
    fn prepare(
        &mut self,
        _gpu: &mut vizdeck::gpu::frame::GpuFrame<'_>,
        _frame: &vizdeck::scene::FrameCtx,
    ) {
    }
    fn paint(&self, _pass: &mut wgpu::RenderPass<'_>, _frame: &vizdeck::scene::FrameCtx) {}
    fn ui(&mut self, ui: &mut egui::Ui) {
        ui.label("other");
    }
    fn metrics(&self) -> serde_json::Value {
        serde_json::Value::Null
    }
    fn recreate_gpu(&mut self, _gpu: &vizdeck::gpu::Gpu) -> Result<(), vizdeck::scene::SceneError> {
        Ok(())
    }
}

#[test]
#[ignore = "needs PulseAudio with a null sink: run through `cargo xtask services` or `cargo xtask test`"]
fn a_background_longer_than_the_ring_is_a_gap_at_its_true_times() {
    let _live = crate::common::live();
    use vizdeck::audio::{AudioOptions, AudioSelection, AudioSource};
    use vizdeck::scene::spectrogram::{FftOn, Settings, Spectrogram};
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tmp_dir("gap");
    let export = dir.join("export.csv");
    let gpu = common::gpu();
    let cli =
        <vizdeck::cli::Cli as clap::Parser>::try_parse_from(["vizdeck", "--headless"]).unwrap();
    let mut deck = vizdeck::deck::Deck::new(
        &gpu,
        vizdeck::headless::OUTPUT_FORMAT,
        0,
        cli.scene_config(),
    );
    deck.set_overlay(false);
    deck.insert_scene(1, Box::new(Other));
    let ring = 96_000usize;
    let source = AudioSource::open_with(
        &AudioSelection::Device(format!("{}.monitor", sink())),
        ring,
        &AudioOptions::default(),
    )
    .expect("open the sink's monitor");
    let sr = source.sample_rate();
    let ring_s = ring as f64 / f64::from(sr);
    let settings = Settings {
        fft_on: FftOn::Cpu,
        export_csv: Some(export.clone()),
        ..Settings::default()
    };
    let (n, hop) = (settings.fft_size as f64, settings.hop as f64);
    let spectrogram = Spectrogram::new(&gpu, source, settings).expect("the scene");
    deck.insert_scene(0, Box::new(spectrogram));
    let size = (320, 200);
    let (texture, view) = vizdeck::headless::offscreen_target(&gpu, "test:gap", size);
    let out = vizdeck::deck::Output {
        view: &view,
        texture: Some(&texture),
        size,
        pixels_per_point: 1.0,
    };
    let tone = tone_wav(&dir, 1500.0, 30.0);
    let _player = Player::start(&tone);
    let mut i = 0u64;
    let mut last = Instant::now();
    let mut run = |deck: &mut vizdeck::deck::Deck, seconds: f64| -> Instant {
        let until = Instant::now() + Duration::from_secs_f64(seconds);
        while Instant::now() < until {
            let now = Instant::now();
            let elapsed = (now - last).as_secs_f64();
            last = now;
            let (times, _) = deck.frame(&gpu, &out, vizdeck::headless::raw_input(size, i), elapsed);
            gpu.wait_idle();
            deck.end_frame(&gpu, &times, Instant::now());
            i += 1;
            std::thread::sleep(Duration::from_millis(10));
        }
        Instant::now()
    };
    let hidden_at = run(&mut deck, 2.5);
    deck.switch_to(1);
    run(&mut deck, 5.0);
    deck.switch_to(0);
    let shown_at = Instant::now();
    let t1 = run(&mut deck, 2.5);
    deck.finish_scenes(&gpu).expect("export");
    let hidden = (shown_at - hidden_at).as_secs_f64();
    let (freqs, rows) = read_export(&export);
    let step = hop / f64::from(sr);
    assert_no_jump(&rows, step, "hidden 5 s");
    let kinds: Vec<Kind> = rows.iter().map(|r| kind(r, &freqs)).collect();
    let (first, len) = longest_run(&kinds, |k| k == Kind::Gap);
    let gap_s = len as f64 * step;
    let expected = hidden - ring_s;
    eprintln!(
        "hidden {hidden:.3} s, ring {ring_s:.3} s: a gap of {len} columns = {gap_s:.3} s from \
         {:.3} s (expected {expected:.3} s)",
        rows[first].t,
    );
    assert!(
        (gap_s - expected).abs() < 0.3,
        "a gap of {gap_s:.3} s; {hidden:.3} s hidden less {ring_s:.3} s the ring held = {expected:.3} s"
    );
    // What the ring held is there, as the tone, right before the gap: at least its length less
    // a frame's worth of columns.
    let bin = f64::from(sr) / n;
    let held = kinds[..first]
        .iter()
        .rev()
        .take_while(|k| is_tone(**k, 1500.0, bin))
        .count() as f64
        * step;
    assert!(
        held >= ring_s - 0.2,
        "only {held:.3} s of tone before the gap"
    );
    // After it, the tone again, up to the end: as long as the scene ran after it was shown
    // again (less the capture's latency), so the gap ended where the input resumed.
    let after = (rows.len() - first - len) as f64 * step;
    let shown = (t1 - shown_at).as_secs_f64();
    assert!(
        after > shown - 0.4 && after < shown + 0.1,
        "{after:.3} s of columns after the gap; the scene ran {shown:.3} s after it was shown"
    );
    let tone_after = kinds[first + len..]
        .iter()
        .filter(|k| is_tone(**k, 1500.0, bin))
        .count() as f64
        * step;
    assert!(
        tone_after > shown - 0.5,
        "{tone_after:.3} s of tone after the gap"
    );
}
