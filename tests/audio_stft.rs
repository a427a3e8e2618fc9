//! STFT levels and column bookkeeping, against values worked out independently of the code:
//! closed-form window responses, a naive f64 DFT, and counting formulas.

use std::f64::consts::{PI, TAU};

use vizdeck::audio::stft::{DB_FLOOR, Stft, dominant, tone_level_db};

const FS: f64 = 48_000.0;

fn sine(freq: f64, amp: f64, phase: f64, len: usize) -> Vec<f32> {
    (0..len)
        .map(|n| (amp * (TAU * freq * n as f64 / FS + phase).sin()) as f32)
        .collect()
}

fn all_columns(stft: &mut Stft) -> Vec<Vec<f32>> {
    let mut cols = Vec::new();
    let mut col = vec![0.0; stft.bins()];
    while stft.pop_column(&mut col) {
        cols.push(col.clone());
    }
    cols
}

/// Hann scalloping loss for a tone `delta` bins away from a bin centre (continuous-time
/// approximation of the window's transform, |W(δ)/W(0)| = |sinc(δ) / (1 − δ²)|), in dB.
fn hann_scallop_db(delta: f64) -> f64 {
    let sinc = (PI * delta).sin() / (PI * delta);
    20.0 * (sinc / (1.0 - delta * delta)).abs().log10()
}

#[test]
fn one_khz_half_scale_sine() {
    let mut stft = Stft::new(2048, 512).unwrap();
    stft.push(&sine(1000.0, 0.5, 0.3, 48_000));
    let cols = all_columns(&mut stft);
    assert_eq!(cols.len(), (48_000 - 2048) / 512 + 1);
    let bin_hz = FS / 2048.0; // 23.4375 Hz
    let expected_db = 20.0 * 0.5f64.log10(); // −6.0206
    // 1000 Hz = bin 42.667: the peak bin is 43, a third of a bin from the tone.
    let delta = 43.0 - 1000.0 / bin_hz;
    let scalloped = expected_db + hann_scallop_db(delta); // −6.0206 − 0.6268 = −6.6474
    for (c, col) in cols.iter().enumerate() {
        let (k, db) = dominant(col);
        assert!(
            (k as f64 * bin_hz - 1000.0).abs() <= bin_hz,
            "column {c}: peak bin {k} = {} Hz",
            k as f64 * bin_hz
        );
        assert_eq!(k, 43);
        assert!(
            (f64::from(db) - scalloped).abs() < 0.02,
            "column {c}: peak bin reads {db} dB, Hann scalloping predicts {scalloped}"
        );
        // The tone level itself (power around the peak / ENBW) is the amplitude 0.5.
        let level = tone_level_db(col, k);
        assert!(
            (f64::from(level) - expected_db).abs() < 0.2,
            "column {c}: tone level {level} dB, expected {expected_db}"
        );
        assert!((f64::from(level) - expected_db).abs() < 0.01, "{level}");
    }
}

#[test]
fn full_scale_bin_centred_sine_reads_zero_dbfs() {
    for (n, k) in [(2048usize, 64usize), (1024, 100), (4096, 7)] {
        let freq = k as f64 * FS / n as f64;
        for phase in [0.0, 1.0, PI / 2.0] {
            let mut stft = Stft::new(n, n / 4).unwrap();
            stft.push(&sine(freq, 1.0, phase, 3 * n));
            let cols = all_columns(&mut stft);
            assert_eq!(cols.len(), 9);
            for col in &cols {
                let (peak, db) = dominant(col);
                assert_eq!(peak, k);
                assert!(db.abs() <= 0.01, "N={n} k={k}: {db} dBFS");
                // Hann: the neighbours of a bin-centred tone are exactly half the amplitude.
                assert!((col[k - 1] - 20.0 * 0.5f32.log10()).abs() < 0.01);
                assert!((col[k + 1] - 20.0 * 0.5f32.log10()).abs() < 0.01);
            }
        }
    }
}

#[test]
fn silence_reads_the_floor_exactly() {
    let mut stft = Stft::new(2048, 512).unwrap();
    stft.push(&vec![0.0; 10_000]);
    let cols = all_columns(&mut stft);
    assert_eq!(cols.len(), (10_000 - 2048) / 512 + 1);
    for col in cols {
        assert_eq!(col.len(), 1025);
        assert!(col.iter().all(|&v| v == DB_FLOOR && !v.is_nan()));
    }
}

#[test]
fn nan_sample_only_affects_the_columns_whose_window_holds_it() {
    let (n, h) = (2048usize, 512usize);
    let len = n + 10 * h;
    for bad in [0usize, 3000, 4095, len - 1] {
        let mut x = sine(1000.0, 0.5, 0.0, len);
        x[bad] = f32::NAN;
        let mut stft = Stft::new(n, h).unwrap();
        stft.push(&x);
        let cols = all_columns(&mut stft);
        assert_eq!(cols.len(), 11);
        for (c, col) in cols.iter().enumerate() {
            let holds = c * h <= bad && bad < c * h + n;
            assert!(col.iter().all(|v| !v.is_nan()), "NaN out in column {c}");
            if holds {
                assert!(
                    col.iter().all(|&v| v == DB_FLOOR),
                    "bad sample {bad}: column {c} should be the floor"
                );
            } else {
                let (k, db) = dominant(col);
                assert_eq!(k, 43, "bad sample {bad}: column {c}");
                assert!(db > -7.0 && db < -6.0, "bad sample {bad}: column {c}: {db}");
            }
        }
        // Expected count of floor columns for sample 3000: c ∈ [ceil(953/512), floor(3000/512)]
        // = [2, 5], i.e. 4 columns.
        if bad == 3000 {
            let floors = cols.iter().filter(|c| c[43] == DB_FLOOR).count();
            assert_eq!(floors, 4);
        }
    }
    // Infinity too.
    let mut x = sine(1000.0, 0.5, 0.0, n);
    x[7] = f32::INFINITY;
    let mut stft = Stft::new(n, h).unwrap();
    stft.push(&x);
    let cols = all_columns(&mut stft);
    assert!(cols[0].iter().all(|&v| v == DB_FLOOR));
}

#[test]
fn column_count_is_floor_m_minus_n_over_h_plus_one() {
    for (n, h) in [
        (2048usize, 512usize),
        (16, 16),
        (16, 1),
        (1024, 1000),
        (256, 3),
    ] {
        for m in [
            0usize,
            1,
            n - 1,
            n,
            n + 1,
            n + h - 1,
            n + h,
            5 * n + 7,
            20_000,
        ] {
            let expected = if m >= n { (m - n) / h + 1 } else { 0 };
            // Pushed in uneven chunks.
            let mut stft = Stft::new(n, h).unwrap();
            let x = vec![0.25f32; m];
            let mut off = 0;
            let mut step = 1;
            while off < m {
                let end = (off + step).min(m);
                stft.push(&x[off..end]);
                off = end;
                step = step * 3 + 1;
            }
            assert_eq!(stft.columns_ready(), expected, "N={n} H={h} M={m}");
            assert_eq!(all_columns(&mut stft).len(), expected, "N={n} H={h} M={m}");
            assert_eq!(stft.pending(), m - expected * h);
        }
    }
}

#[test]
fn streaming_matches_one_shot_and_naive_dft() {
    // A deterministic broadband signal (three tones + a pseudo-random sequence).
    let n = 256usize;
    let h = 96usize;
    let len = 5000usize;
    let mut state = 0x1234_5678u32;
    let x: Vec<f32> = (0..len)
        .map(|i| {
            state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            let noise = (state >> 8) as f32 / (1u32 << 24) as f32 - 0.5;
            let t = i as f32 / 48_000.0;
            0.3 * (TAU as f32 * 700.0 * t).sin()
                + 0.2 * (TAU as f32 * 9_100.0 * t).cos()
                + 0.1 * noise
                + 0.05
        })
        .collect();

    let mut one = Stft::new(n, h).unwrap();
    one.push(&x);
    let reference = all_columns(&mut one);

    // Interleaved pushes and pops give the same columns, bit for bit.
    let mut s = Stft::new(n, h).unwrap();
    let mut got = Vec::new();
    let mut col = vec![0.0; s.bins()];
    for chunk in x.chunks(37) {
        s.push(chunk);
        while s.pop_column(&mut col) {
            got.push(col.clone());
        }
    }
    assert_eq!(got, reference);

    // Column 3 against a naive f64 DFT with the documented scaling.
    let c = 3usize;
    let frame = &x[c * h..c * h + n];
    let w: Vec<f64> = (0..n)
        .map(|i| 0.5 - 0.5 * (TAU * i as f64 / n as f64).cos())
        .collect();
    let sum_w: f64 = w.iter().sum();
    assert_eq!(reference[c].len(), n / 2 + 1);
    for (k, &got) in reference[c].iter().enumerate() {
        let (mut re, mut im) = (0.0f64, 0.0f64);
        for (i, (&xi, &wi)) in frame.iter().zip(&w).enumerate() {
            let a = -TAU * (k * i) as f64 / n as f64;
            re += f64::from(xi) * wi * a.cos();
            im += f64::from(xi) * wi * a.sin();
        }
        let ck = if k == 0 || k == n / 2 { 1.0 } else { 2.0 };
        let amp = ck * (re * re + im * im).sqrt() / sum_w;
        let db = (20.0 * amp.log10()).max(f64::from(DB_FLOOR));
        let got = f64::from(got);
        // f32 FFT vs f64 DFT: tight for loud bins, looser for bins far below full scale.
        let tol = if db > -60.0 { 0.01 } else { 0.5 };
        assert!((got - db).abs() < tol, "bin {k}: {got} vs {db}");
    }
}
