//! The spectrogram scene end to end (headless, lavapipe): the GPU FFT path and the CPU (realfft)
//! path give the same levels and the same image; `--export-spectrogram` writes exactly the
//! documented CSV (bin frequencies k·fs/N in the header, column centre times (i·hop + N/2)/fs
//! when no column is skipped, true times when some are).

use std::path::{Path, PathBuf};
use std::process::Command;

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("vizdeck-spectrogram-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// Runs a headless spectrogram and returns (csv rows, png rgba, report).
fn run(tag: &str, extra: &[&str]) -> (Vec<Vec<String>>, Vec<u8>, serde_json::Value) {
    let csv = tmp(&format!("{tag}.csv"));
    let png = tmp(&format!("{tag}.png"));
    let json = tmp(&format!("{tag}.json"));
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_vizdeck"));
    cmd.args([
        "--headless",
        "--scene",
        "spectrogram",
        "--frames",
        "60",
        "--size",
        "400x260",
        "--no-overlay",
    ])
    .arg("--export-spectrogram")
    .arg(&csv)
    .arg("--screenshot")
    .arg(&png)
    .arg("--report")
    .arg(&json)
    .args(extra)
    .env("RUST_LOG", "warn");
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{tag}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let rows = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_path(&csv)
        .unwrap()
        .records()
        .map(|r| r.unwrap().iter().map(String::from).collect())
        .collect();
    let report = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    (rows, read_png(&png), report)
}

/// A mono 32-bit float WAV of `len` samples at `sr` Hz, sample i = `signal(i / sr)`.
fn write_wav(path: &Path, sr: u32, len: usize, signal: impl Fn(f64) -> f64) {
    let spec = hound::WavSpec {
        channels: 1,
        sample_rate: sr,
        bits_per_sample: 32,
        sample_format: hound::SampleFormat::Float,
    };
    let mut w = hound::WavWriter::create(path, spec).unwrap();
    for i in 0..len {
        w.write_sample(signal(i as f64 / f64::from(sr)) as f32)
            .unwrap();
    }
    w.finalize().unwrap();
}

fn read_png(path: &Path) -> Vec<u8> {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    buf.truncate(info.buffer_size());
    buf
}

#[test]
fn gpu_and_cpu_paths_agree_and_export_is_exact() {
    let (gpu_rows, gpu_png, gpu_report) = run("gpu", &["--audio", "synthetic", "--fft-on", "gpu"]);
    let (cpu_rows, cpu_png, cpu_report) = run("cpu", &["--audio", "synthetic", "--fft-on", "cpu"]);
    assert_eq!(gpu_report["scenes"]["spectrogram"]["fft_on"], "gpu");
    assert_eq!(cpu_report["scenes"]["spectrogram"]["fft_on"], "cpu");
    assert!(gpu_report["scenes"]["spectrogram"]["fft_choice"].is_null());
    // The default, auto: the path whose measured batch was faster runs, and its CSV is the
    // one that path gives.
    let (auto_rows, _, auto_report) = run("auto", &["--audio", "synthetic"]);
    let m = &auto_report["scenes"]["spectrogram"];
    assert_eq!(m["fft_requested"], "auto");
    let c = &m["fft_choice"];
    let (cpu_ms, gpu_ms) = (c["cpu_ms"].as_f64().unwrap(), c["gpu_ms"].as_f64().unwrap());
    assert!(cpu_ms > 0.0 && gpu_ms > 0.0, "{c}");
    let faster = if gpu_ms <= cpu_ms { "gpu" } else { "cpu" };
    assert_eq!(c["on"], faster, "{c}");
    assert_eq!(m["fft_on"], faster);
    // 48 kHz, hop 512: ⌈48000 / 512 / 60⌉ = 2 columns a frame.
    assert_eq!(c["columns"], 2);
    let same = if faster == "cpu" {
        &cpu_rows
    } else {
        &gpu_rows
    };
    assert!(auto_rows == *same, "auto's CSV is not the {faster} path's");

    // Header: time_s then k·fs/N for k = 0..=N/2.
    let (fs, n, hop) = (48_000.0, 2048.0, 512.0);
    let header = &cpu_rows[0];
    assert_eq!(header[0], "time_s");
    assert_eq!(header.len(), 1 + 1025);
    for (k, h) in header[1..].iter().enumerate() {
        assert_eq!(h.parse::<f64>().unwrap(), k as f64 * fs / n);
    }
    assert_eq!(gpu_rows[0], cpu_rows[0]);
    // 60 frames of 1/60 s = 48000 samples → (48000 − 2048)/512 + 1 = 90 columns.
    assert_eq!(cpu_rows.len() - 1, 90);
    assert_eq!(gpu_rows.len(), cpu_rows.len());
    let mut worst = 0f64;
    for (i, (g, c)) in gpu_rows[1..].iter().zip(&cpu_rows[1..]).enumerate() {
        let t: f64 = c[0].parse().unwrap();
        assert!(
            (t - (i as f64 * hop + n / 2.0) / fs).abs() < 1e-9,
            "row {i} time {t}"
        );
        assert_eq!(g[0], c[0]);
        for (gv, cv) in g[1..].iter().zip(&c[1..]) {
            let (gv, cv): (f64, f64) = (gv.parse().unwrap(), cv.parse().unwrap());
            assert!(gv.is_finite() && cv.is_finite());
            if gv.max(cv) > -100.0 {
                worst = worst.max((gv - cv).abs());
            }
        }
    }
    assert!(
        worst < 0.02,
        "GPU vs CPU differ by {worst} dB above −100 dBFS"
    );

    // Same image: the spectrogram area above the spectrum view (whose line follows the newest
    // column each path has on the CPU, 1–3 frames apart); the overlay is off.
    let w = 400usize;
    let mut same = 0;
    let mut total = 0;
    for y in 30..196 {
        for x in 300..w {
            let i = (y * w + x) * 4;
            total += 1;
            let d = (0..3)
                .map(|c| (gpu_png[i + c] as i32 - cpu_png[i + c] as i32).abs())
                .max()
                .unwrap();
            if d <= 2 {
                same += 1;
            }
        }
    }
    assert!(
        same as f64 >= 0.995 * total as f64,
        "only {same} of {total} pixels match"
    );
}

/// A file opened whole is analysed a batch of 512 columns a frame, every column at its true
/// centre time, none skipped, also when it makes more columns than the ring holds (hop 1: the
/// first 16384 columns, 0.36 s, are analysed, then the file waits): a tone starting at 0.3 s
/// after silence is exported with every column at its true centre time. The expected levels
/// follow from each row's time alone: a window wholly before the onset reads the floor, one
/// wholly after it reads the −6 dBFS tone; and the first row that hears the tone has its window
/// over the onset. Both FFT paths, hop 1 and hop 64.
#[test]
fn exported_times_stay_true_for_a_file_opened_whole() {
    let sr = 48_000u32;
    let onset = 0.3f64;
    let wav = tmp("step.wav");
    write_wav(&wav, sr, sr as usize / 2, |t| {
        if t < onset {
            0.0
        } else {
            0.5 * (std::f64::consts::TAU * 1000.0 * t).sin()
        }
    });
    let n = 1024usize;
    let half = n as f64 / 2.0 / f64::from(sr);
    for (hop, on) in [("1", "gpu"), ("1", "cpu"), ("64", "gpu")] {
        let tag = format!("step-{hop}-{on}");
        let (rows, _, report) = run(
            &tag,
            &[
                "--audio-file",
                wav.to_str().unwrap(),
                "--fft-size",
                "1024",
                "--hop",
                hop,
                "--fft-on",
                on,
            ],
        );
        let skipped = report["scenes"]["spectrogram"]["columns_skipped"]
            .as_u64()
            .unwrap();
        assert_eq!(skipped, 0, "{tag}: {skipped} columns skipped");
        let freqs: Vec<f64> = rows[0][1..].iter().map(|f| f.parse().unwrap()).collect();
        let k = (1000.0 * n as f64 / f64::from(sr)).round() as usize;
        assert!((freqs[k] - 1000.0).abs() < 25.0);
        let mut last_t = f64::NEG_INFINITY;
        let mut first_tone = None;
        let mut checked = (0, 0);
        for r in &rows[1..] {
            let t: f64 = r[0].parse().unwrap();
            assert!(t > last_t, "{tag}: times not increasing at {t}");
            last_t = t;
            // The loudest of the bins around 1 kHz (the tone falls between bins 21 and 22).
            let level = (k - 1..=k + 1)
                .map(|b| r[b + 1].parse::<f64>().unwrap())
                .fold(f64::NEG_INFINITY, f64::max);
            if t + half <= onset {
                assert!(
                    level < -100.0,
                    "{tag}: {level} dB at {t} s, before the onset"
                );
                checked.0 += 1;
            } else if t - half >= onset {
                assert!(
                    (level + 6.0).abs() < 1.0,
                    "{tag}: {level} dB at {t} s, after the onset"
                );
                checked.1 += 1;
            }
            if first_tone.is_none() && level > -20.0 {
                first_tone = Some(t);
            }
        }
        let first = first_tone.expect("the tone is exported");
        assert!(
            (first - onset).abs() < half,
            "{tag}: the tone first shows at {first} s"
        );
        assert!(checked.0 > 50 && checked.1 > 50, "{tag}: {checked:?}");
    }
}

/// A file damaged part-way plays what decodes, and the decoder's warning reaches the report
/// (not only the log): a WAV whose last quarter is cut off.
#[test]
fn truncated_file_warning_is_in_the_report() {
    let wav = tmp("cut.wav");
    write_wav(&wav, 48_000, 48_000, |t| {
        0.5 * (std::f64::consts::TAU * 1000.0 * t).sin()
    });
    let mut bytes = std::fs::read(&wav).unwrap();
    bytes.truncate(bytes.len() * 3 / 4);
    std::fs::write(&wav, &bytes).unwrap();
    let (_, _, report) = run("cut", &["--audio-file", wav.to_str().unwrap()]);
    let warning = report["scenes"]["spectrogram"]["warning"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(warning.contains("truncated"), "{warning:?}");
    let (_, _, report) = run("whole", &["--audio", "synthetic:sine"]);
    assert!(report["scenes"]["spectrogram"]["warning"].is_null());
}

/// Files shorter than the FFT (1 sample, and N − 1 for the default N = 2048 and for
/// `--fft-size 256`) make no column: the run still succeeds, and one notice saying how many
/// samples the file has and how many the FFT needs reaches the report and stderr.
#[test]
fn file_shorter_than_the_fft_gives_a_notice() {
    for (len, fft) in [(1usize, 2048usize), (2047, 2048), (255, 256)] {
        let tag = format!("short-{len}-{fft}");
        let wav = tmp(&format!("{tag}.wav"));
        write_wav(&wav, 48_000, len, |t| {
            (std::f64::consts::TAU * 1000.0 * t).sin()
        });
        let json = tmp(&format!("{tag}.json"));
        let out = Command::new(env!("CARGO_BIN_EXE_vizdeck"))
            .args([
                "--headless",
                "--scene",
                "spectrogram",
                "--frames",
                "30",
                "--size",
                "320x200",
                "--fft-size",
                &fft.to_string(),
                "--audio-file",
            ])
            .arg(&wav)
            .arg("--report")
            .arg(&json)
            .env("RUST_LOG", "warn")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).to_string();
        assert!(out.status.success(), "{tag}: {stderr}");
        let report: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        let s = &report["scenes"]["spectrogram"];
        assert_eq!(s["columns"].as_u64(), Some(0), "{tag}");
        let notice = s["notice"].as_str().unwrap_or_default().to_string();
        let samples = if len == 1 { "sample" } else { "samples" };
        let expected = format!("has {len} {samples}");
        assert!(notice.contains(&expected), "{tag}: {notice:?}");
        assert!(
            notice.contains(&format!("needs {fft}")),
            "{tag}: {notice:?}"
        );
        assert_eq!(
            stderr.matches(&expected).count(),
            1,
            "{tag}: logged once: {stderr}"
        );
    }
    // A file of exactly N samples makes its column and has no notice.
    let wav = tmp("exact-256.wav");
    write_wav(&wav, 48_000, 256, |_| 0.25);
    let (_, _, report) = run(
        "exact-256",
        &["--audio-file", wav.to_str().unwrap(), "--fft-size", "256"],
    );
    let s = &report["scenes"]["spectrogram"];
    assert!(s["notice"].is_null(), "{:?}", s["notice"]);
    assert_eq!(s["columns"].as_u64(), Some(1));
}

/// Samples dropped before the STFT (more than 512 columns' worth in one frame) count as skipped
/// columns: at N = 256, hop 1, each 1/60 s frame brings 800 samples of the 48 kHz synthetic
/// source, 767 of which are analysed (512 columns), so an uninterrupted STFT's
/// `floor((S − N) / hop) + 1` columns minus the 512 shown a frame were skipped.
#[test]
fn columns_skipped_counts_samples_skipped_before_the_stft() {
    for on in ["gpu", "cpu"] {
        let tag = format!("skip-samples-{on}");
        let (rows, _, report) = run(
            &tag,
            &[
                "--audio",
                "synthetic",
                "--fft-size",
                "256",
                "--hop",
                "1",
                "--fft-on",
                on,
            ],
        );
        let s = &report["scenes"]["spectrogram"];
        let samples = s["samples"].as_u64().unwrap();
        assert_eq!(samples, 60 * 800, "{tag}: {s}");
        assert!(s["samples_skipped"].as_u64().unwrap() > 0, "{tag}: {s}");
        let uninterrupted = (samples - 256) + 1;
        // Every analysed column is shown (512 a frame, none over the batch limit); the export
        // keeps the newest ring's worth of them.
        let shown = s["columns"].as_u64().unwrap();
        assert_eq!(shown, 60 * 512, "{tag}: {s}");
        assert_eq!((rows.len() - 1) as u64, s["ring_columns"].as_u64().unwrap());
        assert_eq!(
            s["columns_skipped"].as_u64().unwrap(),
            uninterrupted - shown,
            "{tag}: {s}"
        );
    }
}

/// A short sound file (1.4 s) is shown whole the moment it opens, as Spek, Audacity and Sonic
/// Visualiser show it: analysed within the first frames, and the view spans exactly its columns,
/// from the first (centred N/2 samples in) to the last. 1.4 s at 48 kHz = 67200 samples:
/// ⌊(67200 − 2048) / 512⌋ + 1 = 128 columns, centred at 1024 / 48000 s … (127·512 + 1024) / 48000 s.
#[test]
fn a_short_file_is_shown_whole_when_it_opens() {
    let wav = tmp("short-1.4s.wav");
    write_wav(&wav, 48_000, 67_200, |t| {
        0.5 * (std::f64::consts::TAU * (300.0 + 2000.0 * t) * t).sin()
    });
    // 10 frames: a sixth of a second, far less than the file lasts at real-time rate.
    let csv = tmp("short.csv");
    let json = tmp("short.json");
    let report = headless_file_report(
        &wav,
        &["--frames", "10", "--size", "1280x720"],
        Some(&csv),
        &json,
    );
    let s = &report["scenes"]["spectrogram"];
    assert_eq!(s["columns"], 128, "{s}");
    let view = &s["view"];
    assert_eq!(
        view["columns"], 128,
        "the view spans the file's columns: {view}"
    );
    assert_eq!(view["fitted_to_file"], true, "{view}");
    let first = view["first_s"].as_f64().unwrap();
    let last = view["last_s"].as_f64().unwrap();
    assert!((first - 1024.0 / 48_000.0).abs() < 1e-9, "{view}");
    assert!(
        (last - (127.0 * 512.0 + 1024.0) / 48_000.0).abs() < 1e-9,
        "{view}"
    );
    let rows = csv::Reader::from_path(&csv).unwrap().records().count();
    assert_eq!(rows, 128);
    assert!(s["notice"].is_null(), "{s}");
}

/// A file longer than the scrollback is analysed up to what the ring holds, then waits, with a
/// notice; the view spans what was analysed. 8 kHz, hop 512: a ring of ⌈70 · 8000 / 512⌉ = 1094
/// columns holds (1094 − 1)·512 + 2048 = 561,664 samples (70.2 s) of an 80 s file.
#[test]
fn a_long_file_is_shown_as_far_as_the_scrollback_holds() {
    let wav = tmp("long-80s.wav");
    write_wav(&wav, 8000, 640_000, |t| {
        0.5 * (std::f64::consts::TAU * 1000.0 * t).sin()
    });
    let json = tmp("long.json");
    let report = headless_file_report(&wav, &["--frames", "20", "--size", "640x360"], None, &json);
    let s = &report["scenes"]["spectrogram"];
    assert_eq!(s["ring_columns"], 1094, "{s}");
    assert_eq!(s["columns"], 1094, "{s}");
    assert_eq!(s["columns_skipped"], 0, "{s}");
    assert_eq!(s["view"]["columns"], 1094, "{s}");
    let notice = s["notice"].as_str().unwrap_or_default();
    assert!(
        notice.contains("showing 70.2 s of the file's 80.0 s"),
        "{notice:?}"
    );
}

/// A headless spectrogram run of sound file `wav` with `args`, exporting its columns to
/// `export` when given; the run must succeed; its report, read from `json`.
fn headless_file_report(
    wav: &Path,
    args: &[&str],
    export: Option<&Path>,
    json: &Path,
) -> serde_json::Value {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_vizdeck"));
    cmd.args(["--headless", "--scene", "spectrogram"])
        .args(args)
        .arg("--audio-file")
        .arg(wav)
        .arg("--report")
        .arg(json)
        .env("RUST_LOG", "warn");
    if let Some(csv) = export {
        cmd.arg("--export-spectrogram").arg(csv);
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap()
}

use crate::common;

/// `--fft-on auto` waits on the GPU only at start-up (`fft_choice::measure_at_startup`, which
/// the blocking-wait counter sees): a new FFT size asked for as the side panel asks is applied
/// by the next `prepare` with no blocking wait, on the path the start-up measurement chose.
#[test]
fn a_new_fft_size_is_applied_in_prepare_without_waiting_on_the_gpu() {
    use vizdeck::audio::{AudioOptions, AudioSelection, AudioSource};
    use vizdeck::gpu::blocking_waits;
    use vizdeck::scene::spectrogram::{FftOn, Settings, Spectrogram, fft_choice};
    let gpu = common::gpu();
    let settings = Settings::default();
    assert_eq!(settings.fft_on, FftOn::Auto);
    let w0 = blocking_waits();
    let measured = fft_choice::measure_at_startup(&gpu, &settings, 48_000);
    assert!(
        blocking_waits() > w0,
        "the start-up measurement waits, and is counted"
    );
    assert!(
        matches!(measured.on, FftOn::Cpu | FftOn::Gpu),
        "{measured:?}"
    );
    let source = AudioSource::open_with(
        &AudioSelection::Synthetic,
        1 << 16,
        &AudioOptions::default(),
    )
    .expect("the synthetic source");
    let mut s = Spectrogram::new(&gpu, source, settings.clone()).expect("the scene");
    assert_eq!(s.fft_on(), measured.on);
    s.request_settings(Settings {
        fft_size: 4096,
        hop: 1024,
        ..settings
    });
    let ctx = vizdeck::scene::FrameCtx {
        frame: 1,
        steps: 1,
        dt: 1.0 / 60.0,
        alpha: 0.0,
        advanced_s: 1.0 / 60.0,
        elapsed_s: 1.0 / 60.0,
        size: (400, 260),
    };
    let before = blocking_waits();
    vizdeck::scene::prepare_standalone(
        &gpu,
        &mut s,
        &ctx,
        vizdeck::gpu::upload::Strategy::WriteBuffer,
    );
    assert_eq!(blocking_waits(), before, "prepare waited on the GPU");
    assert_eq!((s.settings().fft_size, s.settings().hop), (4096, 1024));
    assert_eq!(s.fft_on(), measured.on);
}
