//! Point markers of the time-series chart. A 1-pixel line leaves some samples invisible or
//! unreadable: a series with a single sample in view is one pixel, a sample between two gaps
//! has no line to either side, and a handful of samples across a wide view reads as a polyline
//! whose corners cannot be told from its samples. Those samples get a dot.
//!
//! The rule follows what interactive chart libraries do: uPlot shows a series' points
//! automatically when few enough of them are in view for the plot's width (its default
//! `series.points.show`), and PlotJuggler draws a sample that no line segment reaches as a dot.
//! Here:
//!
//! - fewer samples in view than the view is pixels wide: every finite sample in view is marked;
//! - otherwise only *isolated* samples are: a finite value whose neighbours in the series (the
//!   stored samples just before and after it, also outside the view) are gaps (NaN) or absent.
//!   This needs a scan of the view, done for ordered series with gaps when at most
//!   [`MARKER_SCAN_MAX`] samples are in view (an ordered series without gaps has no isolated
//!   sample once two or more are in view; on an out-of-order series storage neighbours are not
//!   time neighbours, so only the sparse rule applies).

use crate::series::store::Series;

/// Most samples in view scanned for isolated samples per series and frame.
pub const MARKER_SCAN_MAX: u64 = 1 << 20;

/// Radius of a marker dot, logical pixels.
pub(crate) const MARKER_RADIUS_PX: f32 = 2.5;

/// Appends to `out` the samples of `series` with relative time in `[r0, r1)` that get a marker
/// in a view `width_px` pixels wide (see the module docs for the rule), as `(time relative to
/// the series origin, value)`, in storage order. Non-finite values (gaps, ±inf) are never
/// marked. Nothing is appended for an empty or inverted view (`r1 <= r0`, non-finite bounds).
pub fn marker_samples(series: &Series, r0: f64, r1: f64, width_px: u32, out: &mut Vec<(f64, f32)>) {
    if !r0.is_finite() || !r1.is_finite() || r1 <= r0 || series.is_empty() {
        return;
    }
    let width = width_px as u64;
    let in_view = |t: f64| t >= r0 && t < r1;
    if series.is_ordered() {
        let a = series.partition_index(|t| t < r0);
        let b = series.partition_index(|t| t < r1);
        let n = b - a;
        if n == 0 {
            return;
        }
        if n < width {
            for view in series.chunks_in_rel(r0, r1) {
                out.extend(
                    view.times_rel
                        .iter()
                        .zip(view.values)
                        .filter(|(_, v)| v.is_finite())
                        .map(|(&t, &v)| (t, v)),
                );
            }
            return;
        }
        if series.gaps() == 0 || n > MARKER_SCAN_MAX {
            return;
        }
        // Slide over values a−1 ..= b (neighbours outside the view count too).
        let value_at = |i: u64| series.get_index(i).map_or(f32::NAN, |(_, v)| v);
        let mut prev = if a > series.first_index() {
            value_at(a - 1)
        } else {
            f32::NAN
        };
        let mut values = series
            .values_from(a)
            .flat_map(|(_, run)| run.iter().copied());
        let Some(mut cur) = values.next() else {
            return;
        };
        for i in a..b {
            let next = values.next().unwrap_or(f32::NAN);
            if cur.is_finite()
                && prev.is_nan()
                && next.is_nan()
                && let Some((t, v)) = series.get_index(i)
            {
                out.push((t, v));
            }
            prev = cur;
            cur = next;
        }
        return;
    }
    // Out of order: count what lies in view (stopping at the width), then mark it all if sparse.
    let mut n = 0u64;
    for view in series.chunks_in_rel(r0, r1) {
        n += if view.sorted {
            view.times_rel.len() as u64
        } else {
            view.times_rel.iter().filter(|&&t| in_view(t)).count() as u64
        };
        if n >= width {
            return;
        }
    }
    for view in series.chunks_in_rel(r0, r1) {
        out.extend(
            view.times_rel
                .iter()
                .zip(view.values)
                .filter(|(t, v)| v.is_finite() && (view.sorted || in_view(**t)))
                .map(|(&t, &v)| (t, v)),
        );
    }
}
