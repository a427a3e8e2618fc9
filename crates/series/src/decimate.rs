//! CPU M4 decimation.
//!
//! M4 (Jugel, Jerzak, Hackenbroich, Markl: "M4: A Visualization-Oriented Time Series Data
//! Aggregation", PVLDB 7(10), 2014) keeps, for every pixel column of a line chart, the samples with
//! the minimum and maximum value and the first and last sample in time. Drawing a polyline through
//! those four points per column rasterises to the same pixels as drawing every sample, so a chart of
//! `columns` pixels never needs more than `4 · columns` vertices however many samples the range
//! holds.
//!
//! This module is the CPU reference (and fallback) for the GPU decimation pass.

use super::store::{Series, partition_near};

/// The M4 aggregate of one pixel column. An empty column (no sample, or only NaN samples) has
/// `count == 0` and every value field 0.0.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct Column {
    pub min: f32,
    pub max: f32,
    /// Value of the earliest sample in the column (the first stored one on equal times).
    pub first: f32,
    /// Value of the latest sample in the column (the last stored one on equal times).
    pub last: f32,
    /// Non-NaN samples in the column.
    pub count: u32,
}

impl Column {
    pub const EMPTY: Column = Column {
        min: 0.0,
        max: 0.0,
        first: 0.0,
        last: 0.0,
        count: 0,
    };

    /// Folds a run of values, in time order, into the column: NaN skipped, `first` set if the
    /// column was empty, `last` replaced by the run's last non-NaN value.
    #[inline]
    fn fold_run(&mut self, run: &[f32]) {
        let Some(f) = run.iter().position(|v| !v.is_nan()) else {
            return;
        };
        // A non-NaN value exists, so the reverse search finds one.
        let l = run.iter().rposition(|v| !v.is_nan()).unwrap_or(f);
        let (lo, hi, count) = min_max_count(&run[f..=l]);
        if self.count == 0 {
            *self = Column {
                min: lo,
                max: hi,
                first: run[f],
                last: run[l],
                count,
            };
        } else {
            self.min = self.min.min(lo);
            self.max = self.max.max(hi);
            self.last = run[l];
            self.count += count;
        }
    }
}

/// `(min, max, count)` of the non-NaN values of `v`, which must start and end with a non-NaN
/// value. Runs [`min_max_count_lanes`] compiled for AVX-512 (64 accumulator lanes) or AVX2 (32)
/// when the CPU has them (checked at run time, cached by std), else for the build's baseline
/// (SSE2 on x86-64, 16 lanes). Lane counts measured on a Xeon with AVX-512 over 50M values in
/// 25k-value runs: 16 lanes on SSE2 49 ms, 32 on AVX2 24 ms, 64 on AVX-512 22 ms (memory bound).
/// They earn their place in frame time: 10M values into 2,000 columns took 4.9–6.6 ms against
/// 9.2–12.5 ms for portable 32 lanes on the baseline (BENCHMARKS.md, "One kernel per job").
fn min_max_count(v: &[f32]) -> (f32, f32, u32) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU supports AVX-512F (checked just above), the call's only requirement.
            return unsafe { min_max_count_avx512(v) };
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2 (checked just above), the call's only requirement.
            return unsafe { min_max_count_avx2(v) };
        }
    }
    min_max_count_lanes::<16>(v)
}

/// [`min_max_count_lanes`] compiled with AVX-512F (16 f32 per register, 4 registers a bound).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn min_max_count_avx512(v: &[f32]) -> (f32, f32, u32) {
    min_max_count_lanes::<64>(v)
}

/// [`min_max_count_lanes`] compiled with AVX2 (8 f32 per register, 4 registers a bound).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn min_max_count_avx2(v: &[f32]) -> (f32, f32, u32) {
    min_max_count_lanes::<32>(v)
}

/// The portable loop of [`min_max_count`] with `L` independent accumulators (one would serialise
/// on the compare latency). Branch-free: `if x < lo { x } else { lo }` leaves `lo` alone for NaN
/// `x` (every comparison with NaN is false), which is the semantics of the SSE/AVX `min`
/// instruction, so the loop vectorises; the result equals folding `f32::min`/`f32::max` over the
/// non-NaN values.
#[inline(always)]
fn min_max_count_lanes<const L: usize>(v: &[f32]) -> (f32, f32, u32) {
    let mut lo = [v[0]; L];
    let mut hi = [v[0]; L];
    let mut n = [0u32; L];
    let mut it = v.chunks_exact(L);
    for (i, c) in (&mut it).enumerate() {
        prefetch_ahead::<L>(v, i * L);
        for j in 0..L {
            let x = c[j];
            lo[j] = if x < lo[j] { x } else { lo[j] };
            hi[j] = if x > hi[j] { x } else { hi[j] };
            n[j] += (!x.is_nan()) as u32;
        }
    }
    let mut mn = v[0];
    let mut mx = v[0];
    let mut count = 0u32;
    for j in 0..L {
        mn = if lo[j] < mn { lo[j] } else { mn };
        mx = if hi[j] > mx { hi[j] } else { mx };
        count += n[j];
    }
    for &x in it.remainder() {
        mn = if x < mn { x } else { mn };
        mx = if x > mx { x } else { mx };
        count += (!x.is_nan()) as u32;
    }
    (mn, mx, count)
}

/// How far ahead of the loop [`min_max_count_lanes`] asks for its data, in values (8 KiB: two
/// pages). The hardware prefetchers stop at every 4 KiB page boundary and the store's 256 KiB
/// chunks are not on huge pages; asking two pages ahead took the bench of
/// `benches/tsdownsample_ref.sh` (50M values, 2,000 columns, 1 thread, AVX-512 Xeon) from
/// 22.6–24.8 ms to 17.4–19.6 ms. 1–4 Ki values ahead measured alike; 8 Ki and more gained
/// nothing.
const PREFETCH_AHEAD: usize = 2048;

/// Prefetches the cache lines of the `L` values at `v[at + PREFETCH_AHEAD..]` (x86-64; nothing
/// elsewhere). Addresses past the end of `v` are only prefetched, never read: a prefetch does
/// not fault.
#[inline(always)]
fn prefetch_ahead<const L: usize>(v: &[f32], at: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        let base = v.as_ptr().wrapping_add(at + PREFETCH_AHEAD);
        let mut k = 0;
        while k < L {
            // SAFETY: `_mm_prefetch` is a hint: it reads nothing into the program and does not
            // fault on any address; SSE (its requirement) is part of the x86-64 baseline.
            unsafe {
                core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(
                    base.wrapping_add(k) as *const i8,
                );
            }
            k += 16; // one 64-byte line
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (v, at);
}

/// Decimates the samples of `series` with time in `[t0, t1)` (absolute seconds) into `columns`
/// M4 columns written to `out` (cleared first; its allocation is reused).
///
/// Column `i` covers `[t0 + i·w, t0 + (i+1)·w)` with `w = (t1 − t0) / columns`; a sample at
/// time `t` goes to column `floor((t − t0) / w)`, computed on times relative to the series origin
/// and clamped to the last column against rounding. NaN values (gaps) are skipped. `columns == 0`, `t1 <= t0` or non-finite bounds give
/// an empty `out`.
///
/// Out-of-order samples are handled: `first`/`last` are chosen by time, not by storage order.
pub fn decimate_m4(series: &Series, t0: f64, t1: f64, columns: usize, out: &mut Vec<Column>) {
    let origin = series.origin().unwrap_or(0.0);
    decimate_m4_rel(series, t0 - origin, t1 - origin, columns, out);
}

/// The pixel column of a sample at relative time `t` in a view `[r0, r0 + w·columns)`:
/// `floor((t − r0) / w)` clamped to `columns − 1` (`t ≥ r0` assumed). Every decimation path (CPU,
/// GPU column bounds, the full-resolution reference drawing) uses this one function, so they
/// agree on every sample's column exactly.
#[inline]
pub fn column_of(t: f64, r0: f64, w: f64, columns: usize) -> usize {
    (((t - r0) / w) as usize).min(columns.saturating_sub(1))
}

/// [`decimate_m4`] for a view `[r0, r1)` given in seconds relative to the series origin (use this
/// when the view is narrower than an f64 can resolve in absolute time, e.g. nanoseconds at epoch
/// scale).
pub fn decimate_m4_rel(series: &Series, r0: f64, r1: f64, columns: usize, out: &mut Vec<Column>) {
    out.clear();
    if columns == 0 || !r0.is_finite() || !r1.is_finite() || r1 <= r0 {
        return;
    }
    out.resize(columns, Column::EMPTY);
    if series.origin().is_none() {
        return;
    }
    let w = (r1 - r0) / columns as f64;
    let col_of = |t: f64| column_of(t, r0, w, columns);

    if series.is_ordered() {
        // Samples arrive in time order: each column is a contiguous run of every view, found by
        // galloping search on the times; the values of the run are folded in one pass.
        for view in series.chunks_in_rel(r0, r1) {
            let (times, values) = (view.times_rel, view.values);
            let last = times.len().saturating_sub(1);
            let mut a = 0;
            while a < times.len() {
                let i = col_of(times[a]);
                let b = if col_of(times[last]) <= i {
                    times.len()
                } else {
                    // Interpolate where the column ends (exact for evenly spaced samples), then
                    // search outwards from there: a couple of probes instead of a cache miss per
                    // halving over the whole run.
                    let t_end = r0 + (i + 1) as f64 * w;
                    let frac = (t_end - times[a]) / (times[last] - times[a]);
                    let guess = (frac * (last - a) as f64) as usize;
                    a + partition_near(&times[a..], |t| col_of(t) <= i, guess)
                };
                out[i].fold_run(&values[a..b]);
                a = b;
            }
        }
    } else {
        // Track the times of first/last per column.
        let mut span = vec![(f64::INFINITY, f64::NEG_INFINITY); columns];
        for view in series.chunks_in_rel(r0, r1) {
            for (&t, &v) in view.times_rel.iter().zip(view.values) {
                if v.is_nan() || (!view.sorted && (t < r0 || t >= r1)) {
                    continue;
                }
                let i = col_of(t);
                let col = &mut out[i];
                let (first_t, last_t) = &mut span[i];
                if col.count == 0 {
                    *col = Column {
                        min: v,
                        max: v,
                        first: v,
                        last: v,
                        count: 1,
                    };
                    *first_t = t;
                    *last_t = t;
                    continue;
                }
                col.min = col.min.min(v);
                col.max = col.max.max(v);
                col.count += 1;
                if t < *first_t {
                    *first_t = t;
                    col.first = v;
                }
                if t >= *last_t {
                    *last_t = t;
                    col.last = v;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(samples: &[(f64, f32)]) -> Series {
        let mut s = Series::new("s", usize::MAX);
        for &(t, v) in samples {
            s.push(t, v);
        }
        s
    }

    #[test]
    fn small_hand_worked() {
        // Columns of width 1 over [0, 3).
        let s = series(&[
            (0.0, 5.0),
            (0.5, 1.0),
            (0.9, 3.0),
            (2.0, 7.0),
            (2.5, f32::NAN),
            (3.0, 9.0), // excluded: t1 is open
        ]);
        let mut out = Vec::new();
        decimate_m4(&s, 0.0, 3.0, 3, &mut out);
        assert_eq!(
            out,
            vec![
                Column {
                    min: 1.0,
                    max: 5.0,
                    first: 5.0,
                    last: 3.0,
                    count: 3
                },
                Column::EMPTY,
                Column {
                    min: 7.0,
                    max: 7.0,
                    first: 7.0,
                    last: 7.0,
                    count: 1
                },
            ]
        );
    }

    #[test]
    fn degenerate_inputs() {
        let s = series(&[(0.0, 1.0)]);
        let mut out = vec![Column::EMPTY; 3];
        decimate_m4(&s, 0.0, 1.0, 0, &mut out);
        assert!(out.is_empty());
        decimate_m4(&s, 1.0, 1.0, 4, &mut out);
        assert!(out.is_empty());
        decimate_m4(&s, 2.0, 1.0, 4, &mut out);
        assert!(out.is_empty());
        decimate_m4(&s, f64::NAN, 1.0, 4, &mut out);
        assert!(out.is_empty());
        let empty = Series::new("e", 10);
        decimate_m4(&empty, 0.0, 1.0, 4, &mut out);
        assert_eq!(out, vec![Column::EMPTY; 4]);
    }

    #[test]
    fn out_of_order_first_last_by_time() {
        let s = series(&[(0.5, 2.0), (0.1, 1.0), (0.9, 4.0), (0.7, 3.0)]);
        assert!(!s.is_ordered());
        let mut out = Vec::new();
        decimate_m4(&s, 0.0, 1.0, 1, &mut out);
        assert_eq!(
            out,
            vec![Column {
                min: 1.0,
                max: 4.0,
                first: 1.0,
                last: 4.0,
                count: 4
            }]
        );
    }
    #[test]
    fn min_max_count_skips_nan_in_every_lane() {
        // 40 values: lanes wrap twice plus a remainder; NaN in several lanes, ±inf kept.
        let mut v: Vec<f32> = (0..40).map(|i| ((i * 37) % 23) as f32 - 11.0).collect();
        for i in [3, 16, 17, 30, 38] {
            v[i] = f32::NAN;
        }
        v[20] = f32::INFINITY;
        let finite: Vec<f32> = v.iter().copied().filter(|x| !x.is_nan()).collect();
        let want_min = finite.iter().copied().fold(f32::INFINITY, f32::min);
        let want = (want_min, f32::INFINITY, finite.len() as u32);
        assert_eq!(min_max_count(&v), want);
        assert_eq!(min_max_count_lanes::<16>(&v), want);
        assert_eq!(min_max_count_lanes::<32>(&v), want);
        // 64 lanes: the 40 values are all remainder; 130 values wrap twice.
        assert_eq!(min_max_count_lanes::<64>(&v), want);
        let long: Vec<f32> = (0..130).map(|i| v[i % 40]).collect();
        let lf: Vec<f32> = long.iter().copied().filter(|x| !x.is_nan()).collect();
        let lmin = lf.iter().copied().fold(f32::INFINITY, f32::min);
        assert_eq!(
            min_max_count_lanes::<64>(&long),
            (lmin, f32::INFINITY, lf.len() as u32)
        );
        assert_eq!(min_max_count(&long), min_max_count_lanes::<64>(&long));
    }
}
