//! `--publish` / `--follow` of the spectrogram (issue 17), end to end against a real mosquitto:
//! a headless publisher analyses a WAV file written here and publishes its dB columns; a
//! headless follower shows them. The follower's `--export-spectrogram` CSV must equal the
//! publisher's, string for string (the same dB values, the same column times, the same bin
//! frequencies): the columns travel as the publisher's own f32 levels with the stream position
//! of each column, so nothing is recomputed. A follower started once the publisher's stream is
//! 3 s in has the scrollback from the retained keyframe alone, at the publisher's analysis
//! settings and sample rate rather than its own (the file is analysed whole in the publisher's
//! first frames, so no delta after that carries a column).
//!
//! Also, without a broker: the spectrogram bodies' wire format round-trips, and odd input (bins
//! that do not match the FFT size, absurd sizes, levels of the wrong length, an unknown window)
//! is refused by `decode` with one line rather than misread.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::mosquitto::Broker;
use vizdeck::publish::protocol::{
    Body, Bytes, DecodeError, Envelope, SpectrogramAnalysis, SpectrogramColumns, SpectrogramDelta,
    SpectrogramKeyframe, SpectrogramView, decode, encode,
};

/// A mono 16-bit WAV of `secs` seconds at `rate` Hz: a chirp from 200 Hz to 6 kHz at −12 dBFS,
/// a 1 kHz tone at −20 dBFS and a little noise (a 32-bit LCG at −50 dBFS), so every column
/// differs.
fn write_wav(path: &Path, secs: f64, rate: u32) {
    let spec = hound::WavSpec {
        channels: 1,
        sample_rate: rate,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    };
    let mut w = hound::WavWriter::create(path, spec).expect("wav");
    let n = (secs * f64::from(rate)) as usize;
    let mut lcg: u32 = 12_345;
    let (f0, f1) = (200.0f64, 6000.0f64);
    for i in 0..n {
        let t = i as f64 / f64::from(rate);
        let phase = 2.0 * std::f64::consts::PI * (f0 * t + (f1 - f0) * t * t / (2.0 * secs));
        lcg = lcg.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        let noise = (f64::from(lcg >> 8) / f64::from(1u32 << 24)) * 2.0 - 1.0;
        let v = 0.25 * phase.sin()
            + 0.1 * (2.0 * std::f64::consts::PI * 1000.0 * t).sin()
            + 0.003 * noise;
        w.write_sample((v * 32767.0).round() as i16)
            .expect("sample");
    }
    w.finalize().expect("wav");
}

/// A scratch directory for one test.
fn scratch(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("vizdeck_pubspec_{}_{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("dir");
    dir
}

/// The headless follower: `--follow url`, exporting to `dir/f.csv`, reporting to `dir/f.json`;
/// it runs until SIGTERM.
fn spawn_follower(url: &str, dir: &Path) -> Child {
    Command::new(env!("CARGO_BIN_EXE_vizdeck"))
        .args(["--headless", "--scene", "spectrogram", "--follow", url])
        .args(["--frames", "100000", "--size", "320x200", "--no-settings"])
        .arg("--export-spectrogram")
        .arg(dir.join("f.csv"))
        .arg("--report")
        .arg(dir.join("f.json"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("vizdeck follower")
}

/// The headless publisher of `wav` for `frames` frames (1/60 s of stream time each), exporting
/// to `dir/p.csv`, reporting to `dir/p.json`; `extra`: more flags.
fn spawn_publisher(url: &str, wav: &Path, dir: &Path, frames: u32, extra: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_vizdeck"))
        .args(["--headless", "--scene", "spectrogram", "--publish", url])
        .arg("--audio-file")
        .arg(wav)
        .args(["--frames", &frames.to_string(), "--size", "320x200"])
        .arg("--no-settings")
        .arg("--export-spectrogram")
        .arg(dir.join("p.csv"))
        .arg("--report")
        .arg(dir.join("p.json"))
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("vizdeck publisher")
}

/// Waits for `child` (at most `limit`; killed after), returning its output.
fn finish(mut child: Child, limit: Duration, what: &str) -> Output {
    let deadline = Instant::now() + limit;
    while child.try_wait().expect("wait").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let out = child.wait_with_output().expect("output");
            panic!(
                "{what} did not end within {limit:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().expect("output");
    assert!(
        out.status.success(),
        "{what} failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// SIGTERM to the follower (headless writes its exports and report on it), then its output.
fn stop_follower(child: Child) -> Output {
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
    finish(child, Duration::from_secs(60), "the follower")
}

/// Waits until the broker's log shows a follower subscribed (at most 30 s).
fn wait_for_subscriber(broker: &Broker) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let log = std::fs::read_to_string(broker.dir().join("log")).unwrap_or_default();
        if log
            .lines()
            .any(|l| l.contains("Received SUBSCRIBE from vizdeck-follow"))
        {
            return;
        }
        assert!(Instant::now() < deadline, "the follower never subscribed");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("report")).expect("json")
}

fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .expect("csv")
        .lines()
        .map(str::to_string)
        .collect()
}

/// The follower's CSV against the publisher's: the same header, and over the rows of the
/// columns both hold (the follower's are a tail of the publisher's when it holds fewer), the
/// same strings. Returns the rows compared.
fn compare(dir: &Path) -> usize {
    let p = lines(&dir.join("p.csv"));
    let f = lines(&dir.join("f.csv"));
    assert!(p.len() > 100, "the publisher exported {} lines", p.len());
    assert_eq!(p[0], f[0], "header (bin frequencies)");
    let first = f.get(1).expect("the follower exported no column");
    let at = p
        .iter()
        .position(|l| l == first)
        .unwrap_or_else(|| panic!("the follower's first row is not the publisher's: {first:.80}"));
    let overlap = (p.len() - at).min(f.len() - 1);
    for i in 0..overlap {
        assert_eq!(p[at + i], f[1 + i], "row {} of the overlap", i + 1);
    }
    overlap
}

/// Prints what the publisher's report says it sent, for the record.
fn print_sizes(report: &serde_json::Value, frames: u32) {
    let p = &report["publish"];
    let s = &report["scenes"]["spectrogram"]["share"];
    let secs = f64::from(frames) / 60.0;
    let bytes = p["bytes_sent"].as_f64().unwrap_or(0.0);
    eprintln!(
        "publisher: {} messages, {bytes} bytes in {secs:.1} s of stream ({:.0} B/s), last \
         keyframe {} bytes ({} columns, {} values); scene: {s}",
        p["messages_sent"],
        bytes / secs,
        p["last_keyframe_bytes"],
        s["last_keyframe_columns"],
        s["last_keyframe_values"],
    );
}

#[test]
#[ignore = "needs mosquitto: run through `cargo xtask test`"]
fn a_follower_exports_the_publishers_columns() {
    let mut broker = Broker::new("pubspec");
    broker.start();
    let dir = scratch("ontime");
    let wav = dir.join("tones.wav");
    write_wav(&wav, 6.0, 48_000);
    let url = format!("mqtt://127.0.0.1:{}/vz/s", broker.port);
    let follower = spawn_follower(&url, &dir);
    wait_for_subscriber(&broker);
    // The GPU FFT: its levels come back 1–3 frames late and are published when they arrive.
    let frames = 240;
    let publisher = spawn_publisher(&url, &wav, &dir, frames, &["--fft-on", "gpu"]);
    finish(publisher, Duration::from_secs(300), "the publisher");
    // The follower draws what arrived within a frame of it; give it time to take the rest.
    std::thread::sleep(Duration::from_secs(3));
    stop_follower(follower);
    let p = json(&dir.join("p.json"));
    let f = json(&dir.join("f.json"));
    print_sizes(&p, frames);
    let rows = lines(&dir.join("p.csv")).len() - 1;
    // 6 s at 48 kHz, N = 2048, hop 512: ⌊(288,000 − 2048) / 512⌋ + 1 = 559 columns.
    assert_eq!(rows, 559);
    assert_eq!(compare(&dir), rows, "the follower holds every column");
    assert_eq!(lines(&dir.join("p.csv")), lines(&dir.join("f.csv")));
    let share = &f["scenes"]["spectrogram"]["share"];
    assert_eq!(share["refused"], 0, "{share}");
    assert!(
        share["columns_from_deltas"].as_u64().unwrap_or(0) > 0,
        "an on-time follower gets columns from deltas: {share}"
    );
    assert_eq!(f["scenes"]["spectrogram"]["source"], "follow");
    assert_eq!(p["scenes"]["spectrogram"]["fft_on"], "gpu");
    // Attached: the publisher's view, the file's 559 columns across (not the follower's own
    // width), the same levels and colours.
    for key in ["view", "db_floor", "db_ceil", "colormap", "frequency_axis"] {
        let (pv, fv) = (
            &p["scenes"]["spectrogram"][key],
            &f["scenes"]["spectrogram"][key],
        );
        let (pv, fv) = if key == "view" {
            (&pv["columns"], &fv["columns"])
        } else {
            (pv, fv)
        };
        assert_eq!(pv, fv, "{key}");
    }
    assert_eq!(p["publish"]["dropped"], 0);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
#[ignore = "needs mosquitto: run through `cargo xtask test`"]
fn a_follower_three_seconds_late_has_the_scrollback_from_the_keyframe() {
    let mut broker = Broker::new("pubspeclate");
    broker.start();
    let dir = scratch("late");
    let wav = dir.join("tones.wav");
    write_wav(&wav, 8.0, 44_100);
    let url = format!("mqtt://127.0.0.1:{}/vz/late", broker.port);
    // 8 s at 60 frames a second (paced, so its stream time is the wall clock's).
    let frames = 480;
    // Other analysis settings and rate than the follower's defaults: it adopts the publisher's.
    let settings = [
        "--fft-size",
        "4096",
        "--hop",
        "1024",
        "--window",
        "hamming",
        "--realtime",
    ];
    let publisher = spawn_publisher(&url, &wav, &dir, frames, &settings);
    // The follower joins 3 s into the publisher's run: from the retained keyframe, or one it
    // asks for.
    std::thread::sleep(Duration::from_secs(3));
    let joined_at = 3.0;
    let follower = spawn_follower(&url, &dir);
    finish(publisher, Duration::from_secs(300), "the publisher");
    wait_for_subscriber(&broker);
    std::thread::sleep(Duration::from_secs(3));
    stop_follower(follower);
    let p = json(&dir.join("p.json"));
    let f = json(&dir.join("f.json"));
    print_sizes(&p, frames);
    eprintln!("the follower joined after the keyframe of {joined_at:.2} s");
    let rows = lines(&dir.join("p.csv")).len() - 1;
    // 8 s at 44.1 kHz, N = 4096, hop 1024: ⌊(352,800 − 4096) / 1024⌋ + 1 = 341 columns, all
    // analysed in the publisher's first frame.
    assert_eq!(rows, 341);
    assert_eq!(
        compare(&dir),
        rows,
        "the whole scrollback, from the keyframe"
    );
    assert_eq!(lines(&dir.join("p.csv")), lines(&dir.join("f.csv")));
    let share = &f["scenes"]["spectrogram"]["share"];
    assert_eq!(
        share["columns_from_keyframes"].as_u64(),
        Some(rows as u64),
        "{share}"
    );
    assert_eq!(share["columns_from_deltas"], 0, "{share}");
    assert_eq!(share["refused"], 0, "{share}");
    let scene = &f["scenes"]["spectrogram"];
    assert_eq!(
        (&scene["fft_size"], &scene["hop"], &scene["window"]),
        (&4096.into(), &1024.into(), &"hamming".into())
    );
    assert_eq!(scene["sample_rate"], 44_100);
    let _ = std::fs::remove_dir_all(&dir);
}

fn analysis() -> SpectrogramAnalysis {
    SpectrogramAnalysis {
        sample_rate: 48_000,
        fft_size: 256,
        hop: 64,
        window: "hann".into(),
        bins: 129,
    }
}

fn view() -> SpectrogramView {
    SpectrogramView {
        db_floor: -120.0,
        db_ceil: 0.0,
        colormap: "magma".into(),
        frequency_axis: "log".into(),
        spectrum_strip: true,
        columns: 300,
        frozen_at: Some(41),
    }
}

/// `n` columns of `bins` bins from written index 40, levels `−(j + k/1000)` dB, column 1
/// without levels (NaN).
fn columns(n: usize, bins: u32) -> SpectrogramColumns {
    let mut levels = Vec::new();
    for j in 0..n {
        for k in 0..bins {
            let v = if j == 1 {
                f32::NAN
            } else {
                -(j as f32 + k as f32 / 1000.0)
            };
            levels.extend_from_slice(&v.to_le_bytes());
        }
    }
    SpectrogramColumns {
        first: 40,
        bins,
        starts: (0..n as u64).map(|j| 10_000 + 64 * j).collect(),
        levels: Bytes(levels),
    }
}

fn envelope(body: Body) -> Envelope {
    Envelope {
        publisher: 5,
        seq: 9,
        frame: 100,
        stream_s: 1.5,
        sent_unix_ns: 1_780_000_000_000_000_000,
        scene: "spectrogram".into(),
        body,
    }
}

fn key(n: usize) -> Envelope {
    envelope(Body::SpectrogramKey(SpectrogramKeyframe {
        epoch: 2,
        analysis: analysis(),
        view: view(),
        columns: columns(n, 129),
    }))
}

/// A message's bytes decode to what was encoded (NaN compared by bits), keyframes as keyframes.
#[test]
fn spectrogram_bodies_round_trip() {
    for n in [0, 3, 400] {
        let e = key(n);
        let bytes = encode(&e).expect("encode");
        let d = decode(&bytes).expect("decode");
        assert!(d.body.is_keyframe());
        assert_eq!(d.body.topic(), "key");
        let (Body::SpectrogramKey(a), Body::SpectrogramKey(b)) = (&e.body, &d.body) else {
            panic!("not a spectrogram keyframe");
        };
        assert_eq!(
            (&a.analysis, &a.view, a.epoch),
            (&b.analysis, &b.view, b.epoch)
        );
        assert_eq!(a.columns.levels.0, b.columns.levels.0, "levels bit for bit");
        assert_eq!(a.columns.starts, b.columns.starts);
        if n > 1 {
            assert!(
                b.columns
                    .column(1)
                    .expect("column")
                    .iter()
                    .all(|v| v.is_nan())
            );
            assert_eq!(
                b.columns.column(2).expect("column")[3],
                -(2.0f32 + 3.0 / 1000.0)
            );
        }
    }
    let delta = envelope(Body::SpectrogramDelta(SpectrogramDelta {
        epoch: 2,
        columns: columns(2, 129),
        view: None,
    }));
    let d = decode(&encode(&delta).expect("encode")).expect("decode");
    assert!(!d.body.is_keyframe());
    assert_eq!(d.body.topic(), "delta");
    // Levels go as one MessagePack bin (4 bytes a value), not an array of floats (5).
    let raw = encode(&key(3)).expect("encode");
    assert!(raw.len() < 7 + 3 * 129 * 4 + 400, "{} bytes", raw.len());
}

fn refused(e: &Envelope) -> String {
    match decode(&encode(e).expect("encode")) {
        Err(DecodeError::Corrupt(m)) => m,
        other => panic!("{other:?} for {:?}", e.body.topic()),
    }
}

/// Odd input is refused with one line naming what is wrong, never misread.
#[test]
fn odd_spectrogram_messages_are_refused() {
    let with = |f: &dyn Fn(&mut SpectrogramKeyframe)| {
        let mut e = key(3);
        if let Body::SpectrogramKey(k) = &mut e.body {
            f(k);
        }
        refused(&e)
    };
    let m = with(&|k| k.analysis.bins = 128);
    assert!(m.contains("bins"), "{m}");
    let m = with(&|k| {
        k.analysis.bins = 100;
        k.columns = columns(3, 100);
    });
    assert!(m.contains("bins"), "{m}");
    assert!(with(&|k| k.analysis.fft_size = 1000).contains("FFT size"));
    assert!(with(&|k| k.analysis.fft_size = 1 << 30).contains("FFT size"));
    assert!(with(&|k| k.analysis.hop = 0).contains("hop"));
    assert!(with(&|k| k.analysis.hop = 257).contains("hop"));
    assert!(with(&|k| k.analysis.sample_rate = 0).contains("sample rate"));
    assert!(with(&|k| k.analysis.window = "kaiser".into()).contains("window"));
    assert!(with(&|k| k.view.db_floor = f32::NAN).contains("dB"));
    assert!(with(&|k| k.view.db_ceil = -130.0).contains("dB"));
    let m = with(&|k| {
        k.columns.levels.0.pop();
    });
    assert!(m.contains("bytes of levels"), "{m}");
    let m = with(&|k| k.columns.starts.push(0));
    assert!(m.contains("bytes of levels"), "{m}");
    assert!(with(&|k| k.columns.first = u64::MAX).contains("out of range"));
    assert!(with(&|k| k.columns.starts[0] = u64::MAX).contains("out of range"));
    assert!(with(&|k| k.view.frozen_at = Some(u64::MAX)).contains("out of range"));
    // A delta of absurd size: more columns than any message may carry.
    let huge = envelope(Body::SpectrogramDelta(SpectrogramDelta {
        epoch: 0,
        columns: SpectrogramColumns {
            first: 0,
            bins: 9,
            starts: vec![0; 70_000],
            levels: Bytes(vec![0; 70_000 * 9 * 4]),
        },
        view: None,
    }));
    assert!(refused(&huge).contains("columns"));
    let zero = envelope(Body::SpectrogramDelta(SpectrogramDelta {
        epoch: 0,
        columns: SpectrogramColumns {
            first: 0,
            bins: 0,
            starts: vec![],
            levels: Bytes(vec![]),
        },
        view: None,
    }));
    assert!(refused(&zero).contains("0 bins"));
}
