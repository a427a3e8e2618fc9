//! Long sound files: the decoder reports its progress and stops when asked
//! (`audio/file/` `decode_file_with`), and in the window a file of 4 MiB or more is decoded on
//! its own thread (`scene/spectrogram/loading.rs`) behind a placeholder, then opens exactly as a
//! file decoded before the first frame does (headless). No timing is asserted: the window's deck
//! is driven frame by frame until the file is in, however long that takes.

use crate::common;

use std::path::{Path, PathBuf};

use vizdeck::audio::file::{DecodeStage, decode_file_with};
use vizdeck::deck::Deck;
use vizdeck::scene::spectrogram::loading;

const SIZE: (u32, u32) = (320, 200);

/// 60 s of a 440 Hz tone, mono, 16-bit, 48 kHz: 5.76 MB, over `BACKGROUND_FROM_BYTES`.
fn long_wav(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("vizdeck-loading-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("minute.wav");
    let spec = hound::WavSpec {
        channels: 1,
        sample_rate: 48_000,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    };
    let mut w = hound::WavWriter::create(&path, spec).unwrap();
    for i in 0..48_000 * 60 {
        let t = i as f64 / 48_000.0;
        w.write_sample(((0.3 * (std::f64::consts::TAU * 440.0 * t).sin()) * 32767.0) as i16)
            .unwrap();
    }
    w.finalize().unwrap();
    path
}

fn deck(gpu: &vizdeck::gpu::Gpu, wav: &Path, simulated_clock: bool) -> Deck {
    let cli = <vizdeck::cli::Cli as clap::Parser>::try_parse_from([
        "vizdeck",
        "--headless",
        "--scene",
        "spectrogram",
        "--fft-on",
        "cpu",
        "--audio-file",
        wav.to_str().unwrap(),
    ])
    .expect("flags");
    let mut cfg = cli.scene_config();
    // false: as in the window (the wall clock), where long files decode in the background.
    cfg.simulated_clock = simulated_clock;
    let mut d = Deck::new(
        gpu,
        vizdeck::headless::OUTPUT_FORMAT,
        cli.scene_index(),
        cfg,
    );
    d.set_overlay(false);
    d
}

fn report(d: &Deck) -> serde_json::Value {
    d.metrics()["spectrogram"].clone()
}

#[test]
fn the_decoder_reports_its_progress_and_stops_when_asked() {
    let wav = long_wav("progress");
    let size = std::fs::metadata(&wav).unwrap().len();
    let mut seen: Vec<(DecodeStage, u64, u64)> = Vec::new();
    let whole = decode_file_with(&wav, &mut |stage, done, total| {
        seen.push((stage, done, total));
        true
    })
    .unwrap();
    assert_eq!(whole.samples.len(), 48_000 * 60);
    assert!(whole.warning.is_none());
    // Reading: the file's bytes, to the last one.
    let reading: Vec<_> = seen
        .iter()
        .filter(|s| s.0 == DecodeStage::Reading)
        .collect();
    assert_eq!(reading.last().map(|s| (s.1, s.2)), Some((size, size)));
    // Decoding: many reports, each within the (repaired) file, never going back.
    let decoding: Vec<_> = seen
        .iter()
        .filter(|s| s.0 == DecodeStage::Decoding)
        .collect();
    assert!(decoding.len() > 10, "{} reports", decoding.len());
    assert!(
        decoding.windows(2).all(|w| w[0].1 <= w[1].1),
        "{decoding:?}"
    );
    assert!(
        decoding.iter().all(|s| s.1 <= s.2 && s.2 > 0),
        "{decoding:?}"
    );
    // Stopped at the tenth report: what was decoded so far, with a warning saying so.
    let mut reports = 0;
    let part = decode_file_with(&wav, &mut |stage, _, _| {
        if stage == DecodeStage::Decoding {
            reports += 1;
        }
        reports < 10
    })
    .unwrap();
    assert!(
        part.samples.len() < whole.samples.len() / 2,
        "{}",
        part.samples.len()
    );
    assert_eq!(part.samples[..], whole.samples[..part.samples.len()]);
    assert!(
        part.warning
            .as_deref()
            .is_some_and(|w| w.contains("decoding was stopped")),
        "{:?}",
        part.warning
    );
    let _ = std::fs::remove_dir_all(wav.parent().unwrap());
}

#[test]
fn a_long_file_decoded_in_the_background_opens_as_one_decoded_at_once() {
    let gpu = common::gpu();
    let wav = long_wav("window");
    assert!(loading::in_background(&wav, false));
    assert!(
        !loading::in_background(&wav, true),
        "headless decodes up front"
    );
    let f = vizdeck::headless::OUTPUT_FORMAT;

    // Headless: decoded before the scene opens, analysed whole in the first frames.
    let mut at_once = deck(&gpu, &wav, true);
    common::render_frames(&gpu, &mut at_once, f, SIZE, 30);
    let want = report(&at_once);
    assert_eq!(want["view"]["fitted_to_file"], true, "{want}");

    // Window: the scene opens at once on a placeholder while the file decodes.
    let mut d = deck(&gpu, &wav, false);
    d.ensure_active(&gpu);
    let first = report(&d);
    assert!(
        first["source_label"]
            .as_str()
            .is_some_and(|l| l.ends_with("(decoding)")),
        "{first}"
    );
    assert_eq!(first["columns"], 0, "{first}");
    assert!(d.active_failure().is_none());
    // Frames until the decoded file replaces the placeholder (each frame polls the thread).
    let mut opened = false;
    for _ in 0..3000 {
        common::render_frames(&gpu, &mut d, f, SIZE, 1);
        if report(&d)["source_label"] == want["source_label"] {
            opened = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert!(opened, "{}", report(&d));
    common::render_frames(&gpu, &mut d, f, SIZE, 30);
    let got = report(&d);
    for key in [
        "columns",
        "sample_rate",
        "samples",
        "dominant_hz",
        "notice",
        "warning",
    ] {
        assert_eq!(got[key], want[key], "{key}: {got} vs {want}");
    }
    assert_eq!(got["view"], want["view"], "{got} vs {want}");
    let _ = std::fs::remove_dir_all(wav.parent().unwrap());
}
