//! Column bounds of a view: the first sample of each pixel column of a series in view (by a
//! sweep or a search per column), or of samples at uniform times, and the previous column with
//! samples; written into the M4 pass's slots by [`Mirrors::upload`](super::Mirrors::upload).

use super::super::NONE;
use crate::series::decimate::column_of;
use crate::series::store::Series;

/// Column bounds found by one sweep over the samples in view when there are at most this many
/// per column (else by a search per column).
const SWEEP_PER_COLUMN: u64 = 8;

/// The column bounds of a view of `columns` columns over `[r0, r1)` (seconds relative to the
/// origin of the ordered `series`), relative to the mirror holding global indices
/// `base..base + len`: `out[0..=columns]` the first sample of each column (then the end), and
/// `out[columns + 1 + i]` the previous column with samples ([`NONE`]: none). Column `i` starts at
/// the first sample `t ≥ r0` whose [`column_of`] is at least `i`: found by one sweep over the
/// samples in view when they are few, else by a search per column starting where the column's
/// start time falls.
pub(super) fn column_bounds(
    series: &Series,
    base: u64,
    len: u64,
    r0: f64,
    r1: f64,
    columns: usize,
    out: &mut [u32],
) {
    let n = columns;
    let rel = |g: u64| (g.clamp(base, base + len) - base) as u32;
    if n > 0 && r1 > r0 && r0.is_finite() && r1.is_finite() {
        let w = (r1 - r0) / n as f64;
        let g0 = series.partition_index(|t| t < r0);
        let g1 = series.partition_index(|t| t < r1);
        out[0] = rel(g0);
        out[n] = rel(g1);
        let swept = g1 - g0 <= SWEEP_PER_COLUMN * n as u64 && {
            let mut next = 1;
            let mut g = g0;
            let mut sorted = true;
            for view in series.chunks_in_rel(r0, r1) {
                sorted &= view.sorted;
                for &t in view.times_rel {
                    let c = column_of(t, r0, w, n);
                    while next <= c {
                        out[next] = rel(g);
                        next += 1;
                    }
                    g += 1;
                }
            }
            out[next..n].fill(rel(g1));
            sorted && g == g1
        };
        if !swept {
            for (i, o) in out.iter_mut().enumerate().take(n).skip(1) {
                // Column i starts near r0 + i·w: search from there (exact either way).
                let g = series.partition_index_near(
                    |t| t < r0 || column_of(t, r0, w, n) < i,
                    r0 + i as f64 * w,
                );
                *o = rel(g);
            }
        }
    } else {
        out[..=n].fill(0);
    }
    previous_columns(out, n);
}

/// Fills `out[n + 1 + i]` with the last column before `i` holding samples ([`NONE`]: none),
/// from the column starts `out[0..=n]`.
fn previous_columns(out: &mut [u32], n: usize) {
    let mut prev = NONE;
    for i in 0..n {
        out[n + 1 + i] = prev;
        if out[i + 1] > out[i] {
            prev = i as u32;
        }
    }
}

/// The first of the samples `from..to` at times k·`dt` for which `before(t)` is false (`before`
/// true for a prefix of them), by binary search; `to` when there is none.
pub fn uniform_partition(from: u64, to: u64, dt: f64, before: impl Fn(f64) -> bool) -> u64 {
    let (mut lo, mut hi) = (from, to.max(from));
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if before(mid as f64 * dt) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

/// [`column_bounds`] for `len` samples at times k·`dt` (sample k at mirror position k): each
/// column's first sample found by a search over the index with the same predicate, [`column_of`]
/// of the sample's time, as the CPU M4 of a series of those times.
pub(super) fn uniform_bounds(len: u64, dt: f64, r0: f64, r1: f64, columns: usize, out: &mut [u32]) {
    let n = columns;
    if n > 0 && r1 > r0 && r0.is_finite() && r1.is_finite() && dt > 0.0 {
        let w = (r1 - r0) / n as f64;
        let g0 = uniform_partition(0, len, dt, |t| t < r0);
        let g1 = uniform_partition(g0, len, dt, |t| t < r1);
        out[0] = g0 as u32;
        out[n] = g1 as u32;
        let mut lo = g0;
        for (i, o) in out.iter_mut().enumerate().take(n).skip(1) {
            // Columns start in order: search from the last start.
            lo = uniform_partition(lo, g1, dt, |t| t < r0 || column_of(t, r0, w, n) < i);
            *o = lo as u32;
        }
    } else {
        out[..=n].fill(0);
    }
    previous_columns(out, n);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bounds from uniform times alone equal those from a series of the same times, at every
    /// zoom (views inside, across and outside the samples).
    #[test]
    fn uniform_bounds_equal_series_bounds() {
        for &(len, dt) in &[
            (5000u64, 1e-3),
            (65_536, 1.0),
            (4097, 1.0 / 48_000.0),
            (1, 0.5),
        ] {
            let mut s = Series::new("u", usize::MAX);
            for k in 0..len {
                s.push(k as f64 * dt, k as f32);
            }
            let end = len as f64 * dt;
            for &(r0, r1, n) in &[
                (0.0, end, 640usize),
                (0.0, end, 7),
                (end * 0.3, end * 0.31, 1280),
                (-end, end * 0.5, 300),
                (end * 0.9, end * 2.0, 97),
                (end * 2.0, end * 3.0, 50),
            ] {
                let mut want = vec![0u32; 2 * n + 1];
                column_bounds(&s, 0, len, r0, r1, n, &mut want);
                let mut got = vec![0u32; 2 * n + 1];
                uniform_bounds(len, dt, r0, r1, n, &mut got);
                assert_eq!(got, want, "{len} × {dt}: view [{r0}, {r1}) × {n}");
            }
        }
    }

    /// The sweep and the per-column search give the same bounds, at every density.
    #[test]
    fn swept_bounds_equal_searched_bounds() {
        let mut s = Series::new("s", usize::MAX);
        let mut x = 99u64;
        let mut t = 0.0;
        for _ in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            if !x.is_multiple_of(7) {
                t += (x % 1000) as f64 * 1e-6; // duplicates when x % 7 == 0
            }
            s.push(t, (x % 100) as f32);
        }
        let (a, b) = s.time_range_rel().unwrap_or((0.0, 1.0));
        let len = s.end_index();
        for &(r0, r1, n) in &[
            (a, b + 1e-9, 1000usize),
            (a + 1.0, a + 1.01, 640),
            (a + 3.0, a + 3.5, 97),
            (a - 1.0, a + 0.001, 300),
            (b - 0.2, b + 5.0, 1280),
            (b + 1.0, b + 2.0, 50),
        ] {
            let mut swept = vec![0u32; 2 * n + 1];
            column_bounds(&s, 0, len, r0, r1, n, &mut swept);
            let mut searched = vec![0u32; 2 * n + 1];
            let w = (r1 - r0) / n as f64;
            searched[0] = s.partition_index(|t| t < r0) as u32;
            searched[n] = s.partition_index(|t| t < r1) as u32;
            for (i, o) in searched.iter_mut().enumerate().take(n).skip(1) {
                *o = s.partition_index(|t| t < r0 || column_of(t, r0, w, n) < i) as u32;
            }
            let mut prev = NONE;
            for i in 0..n {
                searched[n + 1 + i] = prev;
                if searched[i + 1] > searched[i] {
                    prev = i as u32;
                }
            }
            assert_eq!(swept, searched, "view [{r0}, {r1}) × {n}");
        }
    }
}
