//! M4 decimation against a brute-force reference over every sample.

use vizdeck::series::{CHUNK_SAMPLES, Column, Series, decimate_m4};

/// xorshift64 for test data (independent of the crate's generator).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Per column: min, max, value at the earliest time (first stored on ties), value at the latest
/// time (last stored on ties), count of non-NaN samples; empty columns all zero.
fn reference(samples: &[(f64, f32)], t0: f64, t1: f64, columns: usize) -> Vec<Column> {
    if columns == 0 || t1 <= t0 {
        return Vec::new();
    }
    let w = (t1 - t0) / columns as f64;
    let mut out = vec![
        Column {
            min: 0.0,
            max: 0.0,
            first: 0.0,
            last: 0.0,
            count: 0
        };
        columns
    ];
    let mut first_t = vec![f64::INFINITY; columns];
    let mut last_t = vec![f64::NEG_INFINITY; columns];
    for &(t, v) in samples {
        if v.is_nan() || t < t0 || t >= t1 {
            continue;
        }
        let i = (((t - t0) / w).floor() as usize).min(columns - 1);
        let c = &mut out[i];
        if c.count == 0 {
            c.min = v;
            c.max = v;
        } else {
            c.min = c.min.min(v);
            c.max = c.max.max(v);
        }
        c.count += 1;
        if t < first_t[i] {
            first_t[i] = t;
            c.first = v;
        }
        if t >= last_t[i] {
            last_t[i] = t;
            c.last = v;
        }
    }
    out
}

fn series_of(samples: &[(f64, f32)], cap: usize) -> Series {
    let mut s = Series::new("s", cap);
    for &(t, v) in samples {
        s.push(t, v);
    }
    s
}

/// Sorted random times starting at exactly 0 (so the series origin is 0) with random gaps, random
/// values, ~2% NaN.
fn random_samples(rng: &mut Rng, n: usize) -> Vec<(f64, f32)> {
    let mut next_t = 0.0;
    (0..n)
        .map(|_| {
            let t = next_t;
            next_t += rng.unit() * 2e-3;
            let v = if rng.unit() < 0.02 {
                f32::NAN
            } else {
                (rng.unit() * 200.0 - 100.0) as f32
            };
            (t, v)
        })
        .collect()
}

fn check(samples: &[(f64, f32)], s: &Series, rng: &mut Rng) {
    let t_end = samples.iter().map(|x| x.0).fold(0.0, f64::max);
    let mut out = Vec::new();
    for &columns in &[1usize, 7, 640, 1920, 5000] {
        for _ in 0..4 {
            let a = (rng.unit() * 1.2 - 0.1) * t_end;
            let b = (rng.unit() * 1.2 - 0.1) * t_end;
            let (t0, t1) = (a.min(b), a.max(b));
            decimate_m4(s, t0, t1, columns, &mut out);
            let want = reference(samples, t0, t1, columns);
            assert_eq!(out.len(), want.len());
            for (i, (got, want)) in out.iter().zip(&want).enumerate() {
                assert_eq!(got, want, "column {i} of {columns} over [{t0}, {t1})");
            }
        }
        // The whole range.
        decimate_m4(s, 0.0, t_end + 1.0, columns, &mut out);
        assert_eq!(out, reference(samples, 0.0, t_end + 1.0, columns));
    }
}

#[test]
fn random_ordered_data_matches_reference() {
    let mut rng = Rng(0x1234_5678_9abc_def1);
    // Spans several chunks.
    let samples = random_samples(&mut rng, 2 * CHUNK_SAMPLES + 12_345);
    let s = series_of(&samples, usize::MAX);
    assert!(s.is_ordered());
    check(&samples, &s, &mut rng);
    let total: u32 = {
        let mut out = Vec::new();
        decimate_m4(&s, 0.0, 1e9, 100, &mut out);
        out.iter().map(|c| c.count).sum()
    };
    assert_eq!(
        total as usize,
        samples.iter().filter(|(_, v)| !v.is_nan()).count()
    );
}

#[test]
fn random_out_of_order_data_matches_reference() {
    let mut rng = Rng(0xdead_beef_cafe_f00d);
    let mut samples = random_samples(&mut rng, CHUNK_SAMPLES + 5000);
    // Swap ~1% of samples with a random neighbour up to 50 positions away, plus a few far jumps.
    // Sample 0 (t = 0) stays first so the series origin is 0.
    let n = samples.len();
    let pick = |rng: &mut Rng| 1 + (rng.next() as usize) % (n - 1);
    for _ in 0..n / 100 {
        let i = pick(&mut rng);
        let j = (i + 1 + (rng.next() as usize) % 50).min(n - 1);
        samples.swap(i, j);
    }
    for _ in 0..5 {
        let i = pick(&mut rng);
        let j = pick(&mut rng);
        samples.swap(i, j);
    }
    let s = series_of(&samples, usize::MAX);
    assert!(!s.is_ordered());
    assert!(s.out_of_order() > 0);
    check(&samples, &s, &mut rng);
}

#[test]
fn capped_series_decimates_only_retained_samples() {
    let mut rng = Rng(99);
    let samples = random_samples(&mut rng, 100_000);
    let cap = 30_000;
    let s = series_of(&samples, cap);
    assert_eq!(s.len(), cap);
    let kept = &samples[samples.len() - cap..];
    check(kept, &s, &mut rng);
}

#[test]
fn epoch_times_fall_in_exact_columns() {
    // t = 1.7e9 + k/1024 is exact in f64; columns of 1 s: sample k goes to column k / 1024.
    let base = 1.7e9;
    let samples: Vec<(f64, f32)> = (0..64 * 1024)
        .map(|k| (base + k as f64 / 1024.0, k as f32))
        .collect();
    let s = series_of(&samples, usize::MAX);
    let mut out = Vec::new();
    decimate_m4(&s, base, base + 64.0, 64, &mut out);
    assert_eq!(out.len(), 64);
    for (i, c) in out.iter().enumerate() {
        let lo = (i * 1024) as f32;
        let hi = (i * 1024 + 1023) as f32;
        assert_eq!(
            *c,
            Column {
                min: lo,
                max: hi,
                first: lo,
                last: hi,
                count: 1024
            }
        );
    }
}

#[test]
fn boundaries_are_half_open() {
    // Columns [0,1), [1,2), [2,3), [3,4).
    let s = series_of(&[(0.0, 1.0), (1.0, 2.0), (2.5, 3.0), (4.0, 9.0)], 100);
    let mut out = Vec::new();
    decimate_m4(&s, 0.0, 4.0, 4, &mut out);
    let counts: Vec<u32> = out.iter().map(|c| c.count).collect();
    assert_eq!(counts, vec![1, 1, 1, 0]);
    assert_eq!(out[1].first, 2.0);
    assert_eq!(out[3], Column::EMPTY);
}

#[test]
fn nan_only_column_is_empty() {
    let s = series_of(
        &[
            (0.1, f32::NAN),
            (0.2, f32::NAN),
            (1.1, 5.0),
            (1.2, f32::NAN),
            (1.3, 3.0),
        ],
        100,
    );
    let mut out = Vec::new();
    decimate_m4(&s, 0.0, 2.0, 2, &mut out);
    assert_eq!(out[0].count, 0);
    assert_eq!(
        out[1],
        Column {
            min: 3.0,
            max: 5.0,
            first: 5.0,
            last: 3.0,
            count: 2
        }
    );
}

#[test]
fn zero_columns_or_empty_range_give_empty_output() {
    let s = series_of(&[(0.0, 1.0), (1.0, 2.0)], 100);
    let mut out = vec![Column::EMPTY; 5];
    decimate_m4(&s, 0.0, 1.0, 0, &mut out);
    assert!(out.is_empty());
    decimate_m4(&s, 1.0, 1.0, 10, &mut out);
    assert!(out.is_empty());
    decimate_m4(&s, 1.0, 0.0, 10, &mut out);
    assert!(out.is_empty());
    // A range with no samples: all columns empty.
    decimate_m4(&s, 10.0, 20.0, 3, &mut out);
    assert_eq!(out, vec![Column::EMPTY; 3]);
}
