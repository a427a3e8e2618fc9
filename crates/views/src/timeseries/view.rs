//! The view's time and value window: the chart origin and each series' offset from it, the
//! range of the stored data, fitting it all, and the time window of a frame.

use super::TimeSeries;
use crate::series::store::Series;

/// The time range *fit all* shows for data spanning `[a, b]` (chart-relative seconds): the
/// data with 1 % of its span on each side; a single instant (`a == b`) gets ±0.5 s. Inputs are
/// finite with `a <= b` ([`TimeSeries`] takes them from the store).
pub fn fitted_range(a: f64, b: f64) -> (f64, f64) {
    let pad = if b > a { (b - a) * 0.01 } else { 0.5 };
    (a - pad, b + pad)
}

/// The visible window: times in seconds relative to the chart origin, values.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct View {
    pub t0: f64,
    pub t1: f64,
    pub lo: f64,
    pub hi: f64,
}

impl TimeSeries {
    /// The chart origin: the origin of the first series (absolute seconds, and nanoseconds when
    /// that series was fed integer nanoseconds).
    pub(super) fn chart_origin(&self) -> Option<(f64, Option<i64>)> {
        let s = self.store.series().first()?;
        Some((s.origin()?, s.origin_ns()))
    }

    /// Seconds from the chart origin to the origin of `s`.
    pub(super) fn offset_of(&self, s: &Series) -> f64 {
        match (self.chart_origin(), s.origin(), s.origin_ns()) {
            (Some((_, Some(c))), _, Some(o)) => (o as i128 - c as i128) as f64 * 1e-9,
            (Some((c, _)), Some(o), _) => o - c,
            _ => 0.0,
        }
    }

    /// Time range of the stored data, chart-relative.
    pub(super) fn data_range(&self) -> Option<(f64, f64)> {
        self.store
            .series()
            .iter()
            .filter_map(|s| {
                let off = self.offset_of(s);
                s.time_range_rel().map(|(a, b)| (a + off, b + off))
            })
            .reduce(|(a0, a1), (b0, b1)| (a0.min(b0), a1.max(b1)))
    }

    /// Once a file has been read to its end, shows it whole ([`fit_all`](Self::fit_all)); once,
    /// so a later zoom or pan stays the user's.
    pub(super) fn fit_whole_file(&mut self) {
        if self.fitted_whole || self.source.is_clocked() || !self.source.is_finished() {
            return;
        }
        self.fitted_whole = true;
        if self.live_key().is_none() {
            self.fit_all();
        }
    }

    /// *Fit all* (Home): the time axis over every stored sample and the value axis automatic.
    /// A source that has delivered everything (a file read to its end) is shown whole, paused,
    /// over [`fitted_range`]; a source still delivering follows its newest data with a window
    /// as wide as everything received ([`fitted_range`]'s width); a `--share` window is shown
    /// whole. Nothing stored yet: following at the current width.
    pub fn fit_all(&mut self) {
        self.fixed_y = None;
        self.pointer.box_start = None;
        self.pointer.box_end = None;
        let range = self.data_range();
        match range {
            Some((a, b)) if self.shared.is_none() => {
                let (t0, t1) = fitted_range(a, b);
                self.window_s = (t1 - t0).clamp(1e-6, 3.2e9);
                if self.source.is_finished() || self.share.following {
                    self.follow = false;
                    self.paused_range = (t0, t1);
                } else {
                    self.follow = true;
                }
            }
            _ => self.follow = true,
        }
    }

    /// The time window of this frame (chart-relative seconds).
    pub(super) fn time_window(&self) -> Option<(f64, f64)> {
        if !self.follow {
            return Some(self.paused_range);
        }
        let (start, end) = self.data_range()?;
        let w = self.window_s.max(1e-12);
        // Roll mode: the data fills the window from the left, then scrolls.
        let t1 = (end + w * 1e-9).max(start + w);
        Some((t1 - w, t1))
    }
}
