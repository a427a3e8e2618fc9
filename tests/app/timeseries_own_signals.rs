//! vizdeck's own signals charted as series by the time-series scene: frame times and the audio
//! input's level.

use crate::common;
use common::gpu;

use std::time::{Duration, Instant};

use vizdeck::audio::{AudioOptions, AudioSelection, SynthSignal};

use vizdeck::scene::timeseries::{OWN_AUDIO_SERIES, OWN_FRAME_SERIES, TimeSeries};
use vizdeck::scene::{FrameCtx, Scene};
use vizdeck::series::{Pacing, SeriesSelection, SeriesSource};

fn frame(k: u64) -> FrameCtx {
    FrameCtx {
        frame: k,
        steps: 1,
        dt: 1.0 / 60.0,
        alpha: 0.0,
        advanced_s: 1.0 / 60.0,
        elapsed_s: 1.0 / 60.0,
        size: (64, 32),
    }
}

/// Presents frame k at 16·k + k² ms: intervals 16 + 2k − 1 ms.
fn present_at(t0: Instant, k: u64) -> Instant {
    t0 + Duration::from_millis(16 * k + k * k)
}

#[test]
fn frame_intervals_become_a_series_on_the_scene_clock() {
    let gpu = gpu();
    let src = SeriesSource::open(&SeriesSelection::default(), Pacing::Driven).unwrap();
    let mut scene = TimeSeries::new(&gpu, src);
    scene.own_signals = true;
    let t0 = Instant::now();
    let mut clock = 0.0f64;
    let mut want = Vec::new();
    for k in 0..10 {
        scene.ingest(&frame(k));
        clock += 1.0 / 60.0;
        scene.presented(present_at(t0, k));
        if k > 0 {
            want.push((clock, (16 + 2 * k - 1) as f32));
        }
    }
    let s = scene
        .store()
        .get(OWN_FRAME_SERIES)
        .expect("frame-time series");
    let got: Vec<(f64, f32)> = s.iter().collect();
    assert_eq!(got.len(), want.len());
    for ((t, v), (wt, wv)) in got.iter().zip(&want) {
        assert!((t - wt).abs() < 1e-12, "{t} vs {wt}");
        assert_eq!(v, wv);
    }
    // The synthetic series are still there beside it.
    assert_eq!(scene.store().series().len(), 5);
}

#[test]
fn off_by_default_and_never_for_files() {
    let gpu = gpu();
    let src = SeriesSource::open(&SeriesSelection::default(), Pacing::Driven).unwrap();
    let mut scene = TimeSeries::new(&gpu, src);
    let t0 = Instant::now();
    for k in 0..3 {
        scene.ingest(&frame(k));
        scene.presented(present_at(t0, k));
    }
    assert!(scene.store().get(OWN_FRAME_SERIES).is_none());

    let path = std::env::temp_dir().join(format!("vizdeck-own-{}.csv", std::process::id()));
    std::fs::write(&path, "time,a\n0,1\n1,2\n").unwrap();
    let src = SeriesSource::open(&SeriesSelection::Csv(path.clone()), Pacing::Driven).unwrap();
    assert!(!src.is_clocked());
    let mut scene = TimeSeries::new(&gpu, src);
    scene.own_signals = true;
    for k in 0..3 {
        scene.ingest(&frame(k));
        scene.presented(present_at(t0, k));
    }
    assert!(scene.store().get(OWN_FRAME_SERIES).is_none());
    std::fs::remove_file(&path).ok();
}

#[test]
fn audio_level_of_the_synthetic_sine_in_10_ms_blocks() {
    let gpu = gpu();
    let src = SeriesSource::open(&SeriesSelection::default(), Pacing::Driven).unwrap();
    let mut scene = TimeSeries::new(&gpu, src);
    scene.set_audio_input(
        AudioSelection::Signal(SynthSignal::Sine),
        AudioOptions::default(),
    );
    scene.own_audio = true;
    let mut clock = 0.0f64;
    let mut start = None;
    for k in 0..30 {
        scene.ingest(&frame(k));
        clock += 1.0 / 60.0;
        start.get_or_insert(clock);
    }
    let start = start.unwrap();
    // The synthetic source makes floor(t · 48 000) samples in t seconds; 480-sample blocks.
    let samples = ((clock - start) * 48_000.0).floor() as usize;
    let s = scene
        .store()
        .get(OWN_AUDIO_SERIES)
        .expect("audio level series");
    let got: Vec<(f64, f32)> = s.iter().collect();
    assert_eq!(got.len(), samples / 480);
    // A sine of amplitude 0.5 has mean square 0.5²/2 = 0.125: 10·log10(0.125) = −9.031 dB; a
    // 10 ms block holds exactly 10 periods of 1 kHz.
    let want = 10.0 * 0.125f64.log10();
    for (k, &(t, v)) in got.iter().enumerate() {
        assert!(
            (t - (start + k as f64 * 0.01)).abs() < 1e-9,
            "block {k} at {t}"
        );
        assert!(
            (v as f64 - want).abs() < 0.01,
            "block {k}: {v} dB vs {want}"
        );
    }
    // Switched off: no more points.
    scene.own_audio = false;
    for k in 30..40 {
        scene.ingest(&frame(k));
    }
    assert_eq!(
        scene.store().get(OWN_AUDIO_SERIES).unwrap().len(),
        got.len()
    );
}
