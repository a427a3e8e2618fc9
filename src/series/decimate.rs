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

use super::store::Series;

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

    #[inline]
    fn add(&mut self, v: f32) {
        if self.count == 0 {
            *self = Column {
                min: v,
                max: v,
                first: v,
                last: v,
                count: 1,
            };
        } else {
            self.min = self.min.min(v);
            self.max = self.max.max(v);
            self.last = v;
            self.count += 1;
        }
    }
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
        // Samples arrive in time order: first/last are the first/last seen.
        for view in series.chunks_in_rel(r0, r1) {
            for (&t, &v) in view.times_rel.iter().zip(view.values) {
                if !v.is_nan() {
                    out[col_of(t)].add(v);
                }
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
}
