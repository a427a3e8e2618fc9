//! Frame-time summaries: [`Summary`] for a whole run, [`Live`] for the last few hundred frames.
//!
//! Percentiles use the **nearest-rank** method: for `n` sorted frame times and `0 < p <= 100`, the
//! p-th percentile is the value of 1-based rank `ceil(p/100 · n)` (`p = 0` gives the minimum). It is
//! always one of the observed times, never an interpolation.

use std::fmt;

/// Statistics over the frame times of a run. Every field is 0 when there were no frames.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Summary {
    pub frames: u64,
    /// Total of the frame times, seconds.
    pub duration_s: f64,
    /// `frames / duration_s` (0 when the duration is 0).
    pub mean_fps: f64,
    pub p50_ms: f64,
    pub p95_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
}

/// The `p`-th percentile (0..=100, clamped; NaN is 0) of `sorted` (ascending) by nearest rank;
/// 0.0 for an empty slice.
pub fn percentile_nearest_rank(sorted: &[f64], p: f64) -> f64 {
    let n = sorted.len();
    if n == 0 {
        return 0.0;
    }
    let p = if p.is_nan() { 0.0 } else { p.clamp(0.0, 100.0) };
    // p·n first: exact for integer p and n, so 95·100/100 is exactly 95. The tiny tolerance keeps a
    // rounding error just above an integer from bumping the rank.
    let x = p * n as f64 / 100.0;
    let rank = (x - 1e-9 * x.max(1.0)).ceil();
    let rank = (rank.max(1.0) as usize).min(n);
    sorted[rank - 1]
}

impl Summary {
    /// Summary of frame times in milliseconds. Non-finite and negative entries are ignored (not
    /// counted as frames).
    pub fn from_frame_times(ms: &[f64]) -> Summary {
        let mut sorted: Vec<f64> = ms
            .iter()
            .copied()
            .filter(|x| x.is_finite() && *x >= 0.0)
            .collect();
        sorted.sort_unstable_by(f64::total_cmp);
        let frames = sorted.len() as u64;
        let total_ms: f64 = sorted.iter().sum();
        let duration_s = total_ms / 1000.0;
        let mean_fps = if total_ms > 0.0 {
            frames as f64 / duration_s
        } else {
            0.0
        };
        Summary {
            frames,
            duration_s,
            mean_fps,
            p50_ms: percentile_nearest_rank(&sorted, 50.0),
            p95_ms: percentile_nearest_rank(&sorted, 95.0),
            p99_ms: percentile_nearest_rank(&sorted, 99.0),
            max_ms: sorted.last().copied().unwrap_or(0.0),
        }
    }
}

impl fmt::Display for Summary {
    /// `frames 600, 12.3 s, mean 48.7 FPS, p50 20.12 ms, p95 25.00 ms, p99 30.20 ms, max 41.00 ms`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "frames {}, {:.1} s, mean {:.1} FPS, p50 {:.2} ms, p95 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
            self.frames,
            self.duration_s,
            self.mean_fps,
            self.p50_ms,
            self.p95_ms,
            self.p99_ms,
            self.max_ms
        )
    }
}

/// Largest window a [`Live`] keeps (its percentile works on a stack copy of this size).
pub const LIVE_MAX_WINDOW: usize = 1024;

/// The last `window` frame times (ms) for the overlay. Nothing here allocates after
/// [`Live::new`].
#[derive(Clone, Debug)]
pub struct Live {
    buf: Vec<f64>,
    /// Next slot to write.
    head: usize,
    len: usize,
}

impl Default for Live {
    /// A window of 240 frames (4 s at 60 FPS).
    fn default() -> Live {
        Live::new(240)
    }
}

impl Live {
    /// A window of `window` frames, clamped to `1..=LIVE_MAX_WINDOW`.
    pub fn new(window: usize) -> Live {
        Live {
            buf: vec![0.0; window.clamp(1, LIVE_MAX_WINDOW)],
            head: 0,
            len: 0,
        }
    }

    /// Adds one frame time, evicting the oldest when full. Non-finite or negative values are
    /// ignored. Never allocates.
    pub fn push(&mut self, ms: f64) {
        if !ms.is_finite() || ms < 0.0 {
            return;
        }
        self.buf[self.head] = ms;
        self.head = (self.head + 1) % self.buf.len();
        self.len = (self.len + 1).min(self.buf.len());
    }

    /// Frames currently in the window.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Capacity of the window.
    pub fn window(&self) -> usize {
        self.buf.len()
    }

    pub fn clear(&mut self) {
        self.head = 0;
        self.len = 0;
    }

    /// Frame times oldest → newest.
    pub fn history(&self) -> impl Iterator<Item = f64> + '_ {
        let cap = self.buf.len();
        let start = (self.head + cap - self.len) % cap;
        (0..self.len).map(move |i| self.buf[(start + i) % cap])
    }

    /// The newest frame time.
    pub fn last(&self) -> Option<f64> {
        (self.len > 0).then(|| self.buf[(self.head + self.buf.len() - 1) % self.buf.len()])
    }

    /// Frames per second over the window: `len / (sum of times in s)`; 0 when empty or all zero.
    pub fn fps(&self) -> f64 {
        let total: f64 = self.history().sum();
        if total > 0.0 {
            self.len as f64 * 1000.0 / total
        } else {
            0.0
        }
    }

    /// Mean frame time over the window, ms (0 when empty).
    pub fn mean_ms(&self) -> f64 {
        if self.len == 0 {
            0.0
        } else {
            self.history().sum::<f64>() / self.len as f64
        }
    }

    /// Largest frame time in the window, ms (0 when empty).
    pub fn max_ms(&self) -> f64 {
        self.history().fold(0.0, f64::max)
    }

    /// Nearest-rank percentile over the window (see the module docs); 0 when empty.
    /// Does not allocate.
    pub fn percentile(&self, p: f64) -> f64 {
        if self.len == 0 {
            return 0.0;
        }
        let mut scratch = [0.0f64; LIVE_MAX_WINDOW];
        let values = &mut scratch[..self.len];
        for (slot, v) in values.iter_mut().zip(self.history()) {
            *slot = v;
        }
        values.sort_unstable_by(f64::total_cmp);
        percentile_nearest_rank(values, p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_edges() {
        let v = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(percentile_nearest_rank(&v, 0.0), 1.0);
        assert_eq!(percentile_nearest_rank(&v, 25.0), 1.0); // ceil(1.0) = 1
        assert_eq!(percentile_nearest_rank(&v, 25.1), 2.0); // ceil(1.004) = 2
        assert_eq!(percentile_nearest_rank(&v, 100.0), 4.0);
        assert_eq!(percentile_nearest_rank(&v, 250.0), 4.0);
        assert_eq!(percentile_nearest_rank(&v, f64::NAN), 1.0);
        assert_eq!(percentile_nearest_rank(&[], 50.0), 0.0);
    }

    #[test]
    fn live_ring_wraps_in_order() {
        let mut live = Live::new(3);
        assert_eq!(live.fps(), 0.0);
        assert_eq!(live.percentile(50.0), 0.0);
        assert_eq!(live.last(), None);
        for ms in [10.0, 20.0, 30.0, 40.0, f64::NAN, -1.0] {
            live.push(ms);
        }
        assert_eq!(live.history().collect::<Vec<_>>(), vec![20.0, 30.0, 40.0]);
        assert_eq!(live.len(), 3);
        assert_eq!(live.last(), Some(40.0));
        // 3 frames in 90 ms.
        assert!((live.fps() - 3000.0 / 90.0).abs() < 1e-9);
        assert_eq!(live.percentile(50.0), 30.0); // rank ceil(1.5) = 2
        assert_eq!(live.percentile(99.0), 40.0);
        assert_eq!(live.max_ms(), 40.0);
        assert!((live.mean_ms() - 30.0).abs() < 1e-12);
        live.clear();
        assert!(live.is_empty());
        assert_eq!(live.history().count(), 0);
    }

    #[test]
    fn live_window_clamped() {
        assert_eq!(Live::new(0).window(), 1);
        assert_eq!(Live::new(100_000).window(), LIVE_MAX_WINDOW);
        assert_eq!(Live::default().window(), 240);
    }
}
