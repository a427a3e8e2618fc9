//! Synthetic signals, the clocked transport (pause, seek, loop, fast), channel choice parsing and
//! the analysis flags on the command line.

use clap::Parser;
use vizdeck::audio::stft::{Stft, WindowKind, dominant};
use vizdeck::audio::synth::{Synth, SynthSignal, signal_at};
use vizdeck::audio::{
    AudioOptions, AudioSelection, AudioSource, ChannelChoice, DEFAULT_RING_CAPACITY, SourceStatus,
};
use vizdeck::cli::Cli;

fn render(signal: SynthSignal, seed: u64, n: usize) -> Vec<f32> {
    let mut x = vec![0.0; n];
    Synth::with_signal(signal, seed).fill(&mut x);
    x
}

/// Mean power spectrum (linear, amplitude² per bin) over all columns.
fn mean_power(x: &[f32], n: usize, w: WindowKind) -> Vec<f64> {
    let mut s = Stft::with_window(n, n / 2, w).unwrap();
    s.push(x);
    let mut col = vec![0.0; s.bins()];
    let mut p = vec![0.0f64; s.bins()];
    let mut cols = 0;
    while s.pop_column(&mut col) {
        for (a, &d) in p.iter_mut().zip(&col) {
            *a += 10f64.powf(f64::from(d) / 10.0);
        }
        cols += 1;
    }
    p.iter().map(|v| v / f64::from(cols)).collect()
}

#[test]
fn sine_and_two_tone_levels() {
    // 1 kHz at 48 kHz with N = 4800 would be bin-centred, but N is a power of two: use the
    // ENBW-normalised level. Sine: 0.5 → −6.02 dBFS; two-tone: 0.25 each → −12.04 dBFS.
    let x = render(SynthSignal::Sine, 1, 48_000);
    let mut s = Stft::new(4096, 4096).unwrap();
    s.push(&x);
    let mut col = vec![0.0; s.bins()];
    assert!(s.pop_column(&mut col));
    let (k, _) = dominant(&col);
    assert!((s.bin_hz(48_000, k) - 1000.0).abs() < 11.8);
    assert!((s.tone_level_db(&col, k) + 6.0206).abs() < 0.05);

    let x = render(SynthSignal::TwoTone, 1, 48_000);
    let mut s = Stft::with_window(4096, 4096, WindowKind::FlatTop).unwrap();
    s.push(&x);
    assert!(s.pop_column(&mut col));
    for hz in [1000.0f32, 3000.0] {
        let k = (hz / s.bin_hz(48_000, 1)).round() as usize;
        let k = (k - 1..=k + 1)
            .max_by(|&a, &b| col[a].total_cmp(&col[b]))
            .unwrap();
        assert!((col[k] + 12.0412).abs() < 0.05, "{hz}: {}", col[k]);
    }
}

#[test]
fn chirp_alone_follows_its_instantaneous_frequency() {
    let x = render(SynthSignal::Chirp, 1, 48_000 * 5);
    let n = 1024;
    let mut s = Stft::new(n, n).unwrap();
    s.push(&x);
    let mut col = vec![0.0; s.bins()];
    let mut c = 0u64;
    while s.pop_column(&mut col) {
        let (k, db) = dominant(&col);
        let expect = Synth::chirp_hz_at(c * n as u64 + n as u64 / 2);
        let hz = f64::from(s.bin_hz(48_000, k));
        // The chirp sweeps 1580 Hz/s: ~34 Hz over a window, under 2 bins of 46.9 Hz.
        assert!(
            (hz - expect).abs() < 2.0 * 46.875,
            "column {c}: {hz} vs {expect}"
        );
        assert!(db > -8.0 && db < -6.0, "column {c}: {db}");
        c += 1;
    }
}

#[test]
fn white_noise_is_flat_and_pink_falls_3_db_per_octave() {
    let n = 4096;
    let len = 48_000 * 20;
    for seed in [1u64, 7] {
        let white = render(SynthSignal::WhiteNoise, seed, len);
        // Uniform in [−0.5, 0.5): mean 0, variance 1/12.
        let mean = white.iter().map(|&v| f64::from(v)).sum::<f64>() / len as f64;
        let var = white.iter().map(|&v| f64::from(v).powi(2)).sum::<f64>() / len as f64;
        assert!(mean.abs() < 2e-3, "{mean}");
        assert!((var - 1.0 / 12.0).abs() < 1e-3, "{var}");
        assert!(white.iter().all(|v| (-0.5..0.5).contains(v)));
        let p = mean_power(&white, n, WindowKind::Hann);
        // Octave bands' mean power within ±1 dB of each other.
        let band = |lo: usize| p[lo..2 * lo].iter().sum::<f64>() / lo as f64;
        let ref_db = 10.0 * band(64).log10();
        for lo in [32usize, 128, 256, 512, 1024] {
            let d = 10.0 * band(lo).log10() - ref_db;
            assert!(d.abs() < 1.0, "white seed {seed}: band {lo}: {d:.2} dB");
        }
        let pink = render(SynthSignal::PinkNoise, seed, len);
        assert!(pink.iter().all(|v| v.abs() < 1.0));
        let p = mean_power(&pink, n, WindowKind::Hann);
        // Per-bin power density of pink noise ∝ 1/f: each octave up, −3.01 dB per bin.
        // Voss-McCartney ripples by about ±1 dB around that line.
        let band = |lo: usize| p[lo..2 * lo].iter().sum::<f64>() / lo as f64;
        let mut prev = 10.0 * band(8).log10();
        for lo in [16usize, 32, 64, 128, 256, 512] {
            let now = 10.0 * band(lo).log10();
            let slope = now - prev;
            assert!(
                (slope + 3.01).abs() < 1.5,
                "pink seed {seed}: octave at bin {lo}: {slope:.2} dB"
            );
            prev = now;
        }
    }
    // Seeds differ, a seed repeats.
    assert_ne!(
        render(SynthSignal::WhiteNoise, 1, 64),
        render(SynthSignal::WhiteNoise, 2, 64)
    );
    assert_eq!(
        render(SynthSignal::PinkNoise, 3, 64),
        render(SynthSignal::PinkNoise, 3, 64)
    );
    // Closed form: chunking and seeking do not matter.
    let mut s = Synth::with_signal(SynthSignal::PinkNoise, 5);
    s.seek(123_457);
    let mut a = vec![0.0; 10];
    s.fill(&mut a);
    assert_eq!(a[0], signal_at(SynthSignal::PinkNoise, 5, 123_457));
}

#[test]
fn selection_parsing() {
    for (v, sel) in [
        ("synthetic", AudioSelection::Synthetic),
        ("synthetic:chirp-tones", AudioSelection::Synthetic),
        ("synthetic:sine", AudioSelection::Signal(SynthSignal::Sine)),
        (
            "Synthetic:Two-Tone",
            AudioSelection::Signal(SynthSignal::TwoTone),
        ),
        ("synth:pink", AudioSelection::Signal(SynthSignal::PinkNoise)),
        (
            "synthetic:white",
            AudioSelection::Signal(SynthSignal::WhiteNoise),
        ),
        (
            "synthetic:chirp",
            AudioSelection::Signal(SynthSignal::Chirp),
        ),
    ] {
        assert_eq!(AudioSelection::parse(v), Ok(sel), "{v}");
    }
    let err = AudioSelection::parse("synthetic:brown").unwrap_err();
    assert!(err.contains("'brown'") && err.contains("pink"), "{err}");
    for (v, c) in [
        ("mix", ChannelChoice::Mix),
        ("left", ChannelChoice::Channel(0)),
        ("RIGHT", ChannelChoice::Channel(1)),
        ("1", ChannelChoice::Channel(0)),
        ("8", ChannelChoice::Channel(7)),
    ] {
        assert_eq!(ChannelChoice::from_cli(v), Ok(c), "{v}");
    }
    for bad in ["0", "-1", "centre", ""] {
        assert!(ChannelChoice::from_cli(bad).is_err(), "{bad}");
    }
    assert_eq!(ChannelChoice::Channel(1).to_string(), "2");
    assert_eq!(ChannelChoice::Mix.to_string(), "mix");
}

#[test]
fn cli_analysis_flags() {
    let cli = Cli::try_parse_from(["vizdeck"]).unwrap();
    assert_eq!(
        (cli.fft_size, cli.hop(), cli.window),
        (2048, 512, WindowKind::Hann)
    );
    assert_eq!(cli.audio_channel, ChannelChoice::Mix);
    assert!(cli.check().is_ok());
    let cli = Cli::try_parse_from([
        "vizdeck",
        "--fft-size",
        "32768",
        "--hop",
        "1",
        "--window",
        "flat-top",
        "--audio-channel",
        "2",
        "--audio",
        "synthetic:pink",
    ])
    .unwrap();
    let cfg = cli.scene_config();
    assert_eq!(cfg.spectrogram.fft_size, 32768);
    assert_eq!(cfg.spectrogram.hop, 1);
    assert_eq!(cfg.spectrogram.window, WindowKind::FlatTop);
    assert_eq!(cfg.audio_channel, ChannelChoice::Channel(1));
    assert_eq!(cfg.audio, AudioSelection::Signal(SynthSignal::PinkNoise));
    // One clear error naming the flag, for each bad value.
    for (flag, value) in [
        ("--fft-size", "1000"),
        ("--fft-size", "128"),
        ("--fft-size", "65536"),
        ("--fft-size", "abc"),
        ("--hop", "0"),
        // A negative value reaches the flag's own message (not clap's "unexpected argument").
        ("--fft-size", "-1"),
        ("--hop", "-5"),
        ("--audio-channel", "-1"),
        ("--window", "kaiser"),
        ("--audio-channel", "0"),
        ("--audio", "synthetic:brown"),
    ] {
        let err = Cli::try_parse_from(["vizdeck", flag, value])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(&format!("invalid value '{value}' for '{flag}")),
            "{flag} {value}: {err}"
        );
        assert_eq!(err.matches("error:").count(), 1, "{err}");
    }
    // Without --hop the hop is a quarter of the FFT size, so every size works on its own.
    for (n, hop) in [("256", 64), ("1024", 256), ("32768", 8192)] {
        let cli = Cli::try_parse_from(["vizdeck", "--fft-size", n]).unwrap();
        assert!(cli.check().is_ok(), "--fft-size {n}");
        assert_eq!(cli.scene_config().spectrogram.hop, hop, "--fft-size {n}");
    }
    let cli = Cli::try_parse_from(["vizdeck", "--fft-size", "256", "--hop", "512"]).unwrap();
    let err = cli.check().unwrap_err().to_string();
    assert!(
        err.contains("--hop") && err.contains("512") && err.contains("256"),
        "{err}"
    );
}

fn drain(src: &mut AudioSource) -> Vec<f32> {
    let mut v = Vec::new();
    src.drain_into(&mut v);
    v
}

#[test]
fn synthetic_transport_pause_seek_fast() {
    let opts = AudioOptions {
        seed: 9,
        ..AudioOptions::default()
    };
    let sel = AudioSelection::Signal(SynthSignal::WhiteNoise);
    let mut src = AudioSource::open_with(&sel, 1 << 16, &opts).unwrap();
    assert_eq!(src.label(), "synthetic: white (48000 Hz)");
    let reference = |from: u64, n: usize| -> Vec<f32> {
        (0..n as u64)
            .map(|i| signal_at(SynthSignal::WhiteNoise, 9, from + i))
            .collect()
    };
    src.advance_to(0.01); // 480
    assert_eq!(drain(&mut src), reference(0, 480));
    src.set_paused(true);
    assert_eq!(src.status(), SourceStatus::Paused);
    src.advance_to(0.5);
    assert!(drain(&mut src).is_empty(), "paused");
    src.set_paused(false);
    src.advance_to(0.51); // 10 ms after the last paused call: 480 more, continuing at 480
    assert_eq!(drain(&mut src), reference(480, 480));
    assert_eq!(src.position_s(), Some(960.0 / 48_000.0));
    src.seek(2.0);
    src.advance_to(0.52);
    assert_eq!(drain(&mut src), reference(96_000, 480));
    // Fast: fills the ring, drops nothing.
    src.set_fast(true);
    src.advance_to(0.52);
    assert_eq!(drain(&mut src).len(), 1 << 16);
    assert_eq!(src.dropped(), 0);
    assert_eq!(src.duration_s(), None);
}

#[test]
fn file_transport_loop_seek_fast_and_duration() {
    let path = std::env::temp_dir().join(format!("vizdeck-transport-{}.wav", std::process::id()));
    let spec = hound::WavSpec {
        channels: 1,
        sample_rate: 8000,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    };
    let mut w = hound::WavWriter::create(&path, spec).unwrap();
    for i in 0..8000i16 {
        w.write_sample(i).unwrap();
    }
    w.finalize().unwrap();
    let v = |i: u64| i as f32 / 32768.0;
    let mut src = AudioSource::open(&AudioSelection::File(path.clone()), 4000).unwrap();
    assert_eq!(src.duration_s(), Some(1.0));
    assert!(!src.looping());
    src.seek(0.5);
    assert_eq!(src.position_s(), Some(0.5));
    src.advance_to(0.1); // 800 samples from 4000
    let got = drain(&mut src);
    assert_eq!(got.len(), 800);
    assert_eq!(got[0], v(4000));
    // Fast: bounded by the ring (4000), nothing dropped, stops at the end.
    src.set_fast(true);
    src.advance_to(0.1);
    assert_eq!(drain(&mut src).len(), 3200);
    assert!(src.finished());
    assert_eq!(src.status(), SourceStatus::Finished);
    assert_eq!(src.dropped(), 0);
    // Seek back after the end and loop: plays on, wrapping.
    src.set_fast(false);
    src.set_looping(true);
    src.seek(0.75); // sample 6000
    src.advance_to(0.2); // 0.1 s later: 800 samples
    let got = drain(&mut src);
    assert_eq!(got.len(), 800);
    assert_eq!(got[0], v(6000));
    src.advance_to(0.5); // 2400 more: 6800..8000 then 0..1200
    let got = drain(&mut src);
    assert_eq!(got.len(), 2400);
    assert_eq!(got[1199], v(7999));
    assert_eq!(got[1200], v(0));
    assert!(!src.finished());
    // Seeking discards what is in the ring; NaN is ignored; beyond the end clamps.
    src.advance_to(0.6);
    src.seek(f64::NAN);
    src.seek(100.0);
    assert!(drain(&mut src).is_empty());
    assert_eq!(src.position_s(), Some(1.0));
    let _ = std::fs::remove_file(&path);
}

#[test]
fn live_only_methods_on_clocked_sources() {
    let mut src = AudioSource::open(&AudioSelection::Synthetic, DEFAULT_RING_CAPACITY).unwrap();
    assert_eq!(src.gap_samples(), 0);
    assert!(src.live().is_none());
    assert_eq!(src.status(), SourceStatus::Running);
    assert!(src.reopen().is_ok());
    assert_eq!(src.selection(), &AudioSelection::Synthetic);
}
