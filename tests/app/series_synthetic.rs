//! Synthetic series source: exact sample counts under a driven clock, determinism by seed, and a
//! wall-clock thread that produces the same stream.

use std::time::{Duration, Instant};

use vizdeck::series::{
    CatchUp, Pacing, SeriesError, SeriesSelection, SeriesSource, Store, SynthKind,
};

fn synthetic(series: usize, rate_hz: f64, seed: u64) -> SeriesSelection {
    kind_of(SynthKind::Walk, series, rate_hz, seed)
}

fn kind_of(kind: SynthKind, series: usize, rate_hz: f64, seed: u64) -> SeriesSelection {
    SeriesSelection::Synthetic {
        series,
        rate_hz,
        seed,
        kind,
    }
}

fn values(store: &Store) -> Vec<Vec<(f64, f32)>> {
    store.series().iter().map(|s| s.iter().collect()).collect()
}

#[test]
fn driven_one_second_gives_exactly_rate_times_series() {
    let mut src = SeriesSource::open(&synthetic(3, 1000.0, 7), Pacing::Driven).unwrap();
    assert_eq!(src.names().len(), 3);
    assert_eq!(src.label(), "synthetic: 3 random walks, 3000 samples/s");
    let mut store = Store::default();
    src.advance_to(1.0);
    src.drain_into(&mut store);
    assert_eq!(store.points_ingested(), 3000);
    assert_eq!(store.series().len(), 3);
    for s in store.series() {
        assert_eq!(s.len(), 1000);
        // Times k / rate for k = 0..1000: all < 1.0.
        assert_eq!(s.time_range(), Some((0.0, 999.0 / 1000.0)));
        for (k, (t, v)) in s.iter().enumerate() {
            assert_eq!(t, k as f64 / 1000.0);
            assert!(v.is_finite());
        }
    }
    // Same time again, or earlier: nothing new.
    src.advance_to(1.0);
    src.advance_to(0.5);
    src.drain_into(&mut store);
    assert_eq!(store.points_ingested(), 3000);
    // A little later: exactly the samples in [1.0, 1.0105) → k = 1000..=1010.
    src.advance_to(1.0105);
    src.drain_into(&mut store);
    assert_eq!(store.points_ingested(), 3 * 1011);
    assert_eq!(src.error(), None);
    assert!(!src.is_finished());
}

#[test]
fn driven_nothing_before_time_zero() {
    let mut src = SeriesSource::open(&synthetic(2, 100.0, 1), Pacing::Driven).unwrap();
    let mut store = Store::default();
    src.advance_to(0.0);
    src.advance_to(-1.0);
    src.advance_to(f64::NAN);
    src.drain_into(&mut store);
    assert_eq!(store.points_ingested(), 0);
    // The series exist (named) even before data arrives.
    assert_eq!(store.series().len(), 2);
    src.advance_to(1e-9); // sample 0 at t = 0 only
    src.drain_into(&mut store);
    assert_eq!(store.points_ingested(), 2);
}

#[test]
fn same_seed_same_values_whatever_the_steps() {
    let run = |seed: u64, steps: &[f64]| {
        let mut src = SeriesSource::open(&synthetic(4, 2000.0, seed), Pacing::Driven).unwrap();
        let mut store = Store::default();
        for &t in steps {
            src.advance_to(t);
            src.drain_into(&mut store);
        }
        values(&store)
    };
    let a = run(42, &[1.0]);
    let b = run(42, &[1.0]);
    let c = run(42, &[0.1, 0.37, 0.999, 1.0]);
    let d = run(43, &[1.0]);
    assert_eq!(a.len(), 4);
    assert_eq!(a[0].len(), 2000);
    assert_eq!(a, b);
    assert_eq!(a, c);
    assert_ne!(a, d);
    // The series differ from each other.
    assert_ne!(a[0], a[1]);
    // Walks stay in a sane range (unit standard deviation).
    assert!(a.iter().flatten().all(|(_, v)| v.abs() < 10.0));
}

#[test]
fn wall_clock_thread_produces_the_same_stream() {
    let sel = synthetic(2, 10_000.0, 5);
    let start = Instant::now();
    let mut src = SeriesSource::open(&sel, Pacing::WallClock).unwrap();
    src.advance_to(100.0); // no-op for wall-clock pacing
    let mut store = Store::default();
    let deadline = Instant::now() + Duration::from_secs(5);
    while store.points_ingested() < 2 * 1000 {
        assert!(
            Instant::now() < deadline,
            "no data from the wall-clock thread"
        );
        std::thread::sleep(Duration::from_millis(10));
        src.drain_into(&mut store);
    }
    let elapsed = start.elapsed().as_secs_f64();
    let live = values(&store);
    assert_eq!(src.samples_lost(), 0);
    // Never ahead of the wall clock.
    let (_, t_max) = store.time_range().unwrap();
    assert!(t_max < elapsed, "{t_max} >= {elapsed}");

    // The driven source with the same seed gives the same samples.
    let mut driven = SeriesSource::open(&sel, Pacing::Driven).unwrap();
    let mut reference = Store::default();
    driven.advance_to(t_max + 0.5 / 10_000.0);
    driven.drain_into(&mut reference);
    assert_eq!(live, values(&reference));

    let t = Instant::now();
    drop(src);
    assert!(t.elapsed() < Duration::from_secs(1));
}

#[test]
fn default_selection_and_label() {
    let sel = SeriesSelection::default();
    let src = SeriesSource::open(&sel, Pacing::Driven).unwrap();
    assert_eq!(src.names().len(), 4);
    assert_eq!(src.label(), "synthetic: 4 random walks, 200000 samples/s");
}

#[test]
fn invalid_parameters_are_errors() {
    for sel in [
        synthetic(0, 1000.0, 1),
        synthetic(2, 0.0, 1),
        synthetic(2, -5.0, 1),
        synthetic(2, f64::NAN, 1),
        synthetic(1025, 1000.0, 1),
        kind_of(SynthKind::Sines, 2, 2.0e8, 1),
    ] {
        let err = SeriesSource::open(&sel, Pacing::Driven)
            .err()
            .expect("must fail");
        assert!(matches!(err, SeriesError::Synthetic(_)), "{err}");
        assert!(err.to_string().starts_with("synthetic series: "));
    }
}

#[test]
fn rate_times_duration_for_every_kind_at_10m_per_s() {
    // 4 series sharing 10M samples/s, 0.2 s simulated: 2M samples, whatever the kind or steps.
    for kind in [SynthKind::Walk, SynthKind::Ticks, SynthKind::Sines] {
        let total_rate = 10.0e6;
        let sel = kind_of(kind, 4, total_rate / 4.0, 9);
        let mut src = SeriesSource::open(&sel, Pacing::Driven).unwrap();
        let mut store = Store::default();
        for step in 1..=20 {
            src.advance_to(step as f64 * 0.01);
            src.drain_into(&mut store);
        }
        assert_eq!(store.points_ingested() as f64, total_rate * 0.2, "{kind:?}");
        for s in store.series() {
            assert_eq!(s.len(), 500_000);
            assert_eq!(s.gaps(), 0);
            assert!(s.is_ordered());
        }
    }
}

#[test]
fn sines_follow_the_closed_form() {
    let rate = 1000.0;
    let mut src =
        SeriesSource::open(&kind_of(SynthKind::Sines, 3, rate, 1), Pacing::Driven).unwrap();
    assert_eq!(src.names(), ["sine 0", "sine 1", "sine 2"]);
    assert_eq!(src.label(), "synthetic: 3 sines, 3000 samples/s");
    let mut store = Store::default();
    src.advance_to(2.0);
    src.drain_into(&mut store);
    for (i, s) in store.series().iter().enumerate() {
        let f = 0.5 * (i + 1) as f64;
        assert_eq!(s.len(), 2000);
        for (k, (t, v)) in s.iter().enumerate() {
            assert_eq!(t, k as f64 / rate);
            let want = (2.0 * std::f64::consts::PI * f * t).sin();
            assert!(
                (v as f64 - want).abs() < 1e-6,
                "series {i} t {t}: {v} vs {want}"
            );
        }
    }
    // Hand-worked points: 0.5 Hz at t = 0.5 s is sin(π/2) = 1; at 0.25 s sin(π/4) = √2/2;
    // 1 Hz at 0.25 s is sin(π/2) = 1.
    let at = |i: usize, k: usize| store.series()[i].iter().nth(k).unwrap().1;
    assert_eq!(at(0, 500), 1.0);
    assert!((at(0, 250) - std::f32::consts::FRAC_1_SQRT_2).abs() < 1e-6);
    assert_eq!(at(1, 250), 1.0);
}

#[test]
fn ticks_move_on_the_grid_in_bursts() {
    let rate = 10_000.0;
    let secs = 60.0;
    let mut src =
        SeriesSource::open(&kind_of(SynthKind::Ticks, 2, rate, 3), Pacing::Driven).unwrap();
    assert_eq!(src.names(), ["ticks 0", "ticks 1"]);
    let mut store = Store::default();
    src.advance_to(secs);
    src.drain_into(&mut store);
    for s in store.series() {
        let v: Vec<f64> = s.iter().map(|(_, v)| v as f64).collect();
        assert_eq!(v.len(), (rate * secs) as usize);
        // Every value is 100.00 plus a whole number of 0.01 ticks (to f32 precision).
        let ticks: Vec<i64> = v
            .iter()
            .map(|&x| {
                let k = (x - 100.0) / 0.01;
                assert!((k - k.round()).abs() < 0.01, "{x} is off the tick grid");
                k.round() as i64
            })
            .collect();
        assert!(ticks[0].abs() <= 3);
        // Moves are 1 to 3 ticks.
        assert!(ticks.windows(2).all(|w| (w[1] - w[0]).abs() <= 3));
        // Moves per 0.1 s window: quiet windows expect 0.5 moves, burst windows about 50.
        let per_window = (rate * 0.1) as usize;
        let moves: Vec<usize> = ticks
            .chunks(per_window)
            .map(|c| c.windows(2).filter(|w| w[1] != w[0]).count())
            .collect();
        let quiet = moves.iter().filter(|&&m| m <= 3).count();
        let bursty = moves.iter().filter(|&&m| m >= 20).count();
        assert!(
            quiet > moves.len() / 2,
            "quiet windows {quiet} of {}",
            moves.len()
        );
        assert!(bursty >= 5, "burst windows {bursty} of {}", moves.len());
    }
}

/// Samples per series in store `st` (all series have the same count).
fn count(st: &Store) -> u64 {
    st.series()[0].len() as u64
}

#[test]
fn backlog_after_a_stall_is_released_over_several_frames() {
    // 1024 samples/s and frames of 1/64 s: 16 samples per frame, all times dyadic (exact).
    let rate = 1024.0;
    let frame = 1.0 / 64.0;
    let mut src = SeriesSource::open(&synthetic(2, rate, 9), Pacing::Driven).unwrap();
    // Steps up to 1/8 s count in full; release at most 4× the real rate.
    src.set_catch_up(Some(CatchUp::new(0.125, 4.0)));
    let mut store = Store::default();
    let mut clock = 0.0;
    for k in 1..=64u64 {
        clock += frame;
        src.advance_to(clock);
        src.drain_into(&mut store);
        // No backlog: exactly the samples before the clock, 16 per frame.
        assert_eq!(count(&store), 16 * k);
    }
    assert_eq!(src.backlog_s(), 0.0);
    // A 5 s stall: the clock reads 6 s. Released: 1 s + 4 · 1/8 s = 1.5 s → 1536 samples, not
    // the 6144 owed.
    clock = 6.0;
    src.advance_to(clock);
    src.drain_into(&mut store);
    assert_eq!(count(&store), 1536);
    assert_eq!(src.backlog_s(), 4.5);
    // Each later frame releases 4/64 s (64 samples) while the clock moves 1/64 s: the 4.5 s
    // backlog shrinks by 3/64 s a frame and is gone after 4.5 / (3/64) = 96 frames.
    let mut prev = count(&store);
    for k in 1..=96u64 {
        clock += frame;
        src.advance_to(clock);
        src.drain_into(&mut store);
        let now = count(&store);
        assert_eq!(now - prev, 64, "frame {k} after the stall");
        assert_eq!(now, 1536 + 64 * k);
        prev = now;
    }
    assert_eq!(src.backlog_s(), 0.0);
    assert_eq!(count(&store), (7.5 * rate) as u64);
    // Caught up: back to 16 per frame.
    clock += frame;
    src.advance_to(clock);
    src.drain_into(&mut store);
    assert_eq!(count(&store) - prev, 16);
    // Paced or not, the same samples.
    let mut plain = SeriesSource::open(&synthetic(2, rate, 9), Pacing::Driven).unwrap();
    let mut reference = Store::default();
    plain.advance_to(clock);
    plain.drain_into(&mut reference);
    assert_eq!(values(&store), values(&reference));
}

#[test]
fn catch_up_follows_the_clock_when_nothing_is_owed() {
    let mut pace = CatchUp::new(0.125, 4.0);
    assert_eq!(pace.release_until(0.05), 0.05);
    assert_eq!(pace.release_until(0.125), 0.125);
    // Backwards or not finite: nothing more, nothing less.
    assert_eq!(pace.release_until(0.0625), 0.125);
    assert_eq!(pace.release_until(f64::NAN), 0.125);
    // A 10 s jump releases 4 × 0.125 s.
    assert_eq!(pace.release_until(10.125), 0.625);
    assert_eq!(pace.backlog_s(), 9.5);
    // Factors below 1 would never catch up: raised to 1.
    assert_eq!(CatchUp::new(0.1, 0.5).factor, 1.0);
}
