//! Frame-time summaries: [`Summary`] for a whole run, [`Live`] for the overlay.
//!
//! Definitions (also in docs/recording.md, "Frame-time statistics"), for `n` frame times sorted ascending
//! `t[1] ≤ … ≤ t[n]` (ms):
//!
//! - **duration** = `Σ t` (s); **average FPS** = `n / duration`: n/a (`None`) when the duration
//!   is 0 (no frames, or every frame 0 ms: a rate over no time is undefined, not 0).
//! - **percentile p** by **nearest rank**: `t[r]` with `r = ceil(p/100 · n)` (at least 1); always one
//!   of the observed times, never an interpolation. Computed in integer per-mille, so the rank is
//!   exact (p99.9 of 1000 frames is rank 999).
//! - **1 % low** / **0.1 % low**: the mean of the slowest `k = ceil(n · q/100)` frames (`q` = 1 or
//!   0.1), as ms and as FPS (`1000 / ms`; n/a when the mean is 0 ms).
//! - **stutters**: frames longer than 2 × the median (p50).
//! - A statistic is listed in [`Summary::needs_more_frames`] when the capture is too short for it to
//!   differ from the maximum: percentile `p` needs `n ≥ 100/(100 − p)` frames (p50: 2, p90: 10,
//!   p95: 20, p99: 100, p99.9: 1000), the `q` % low needs `n ≥ 100/q` (1 %: 100, 0.1 %: 1000).
//!   Its value is still given (the slowest frame), but marked.
//!
//! Every value is finite for every input, including 0, 1 and 2 frames. With 0 frames there is no
//! statistic to give: the fields hold 0, but every report reads them as **n/a** (JSON `null`,
//! `n/a` in tables and text; see [`Summary::is_empty`]).

use std::fmt;

/// Statistics over the frame times of a run (see the module docs for the definitions). Every field
/// is 0 when there were no frames; it serializes as JSON `null` then (n/a), and [`table_rows`]
/// and `Display` say `n/a`.
///
/// [`table_rows`]: Summary::table_rows
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    /// Frames counted (finite, non-negative frame times).
    pub frames: u64,
    /// Sum of the frame times, seconds.
    pub duration_s: f64,
    /// Average FPS: `frames / duration_s`; `None` (n/a) when the duration is 0 (no frames, or
    /// every frame 0 ms).
    pub mean_fps: Option<f64>,
    /// Mean frame time, ms.
    pub mean_ms: f64,
    /// Shortest frame time, ms.
    pub min_ms: f64,
    /// Median (nearest rank), ms.
    pub p50_ms: f64,
    /// 90th percentile (nearest rank), ms.
    pub p90_ms: f64,
    /// 95th percentile (nearest rank), ms.
    pub p95_ms: f64,
    /// 99th percentile (nearest rank), ms.
    pub p99_ms: f64,
    /// 99.9th percentile (nearest rank), ms.
    pub p999_ms: f64,
    /// 1 % low: mean frame time of the slowest `ceil(n/100)` frames, ms.
    pub low_1_ms: f64,
    /// 1 % low as FPS: `1000 / low_1_ms`; `None` (n/a) when that is 0 ms.
    pub low_1_fps: Option<f64>,
    /// 0.1 % low: mean frame time of the slowest `ceil(n/1000)` frames, ms.
    pub low_01_ms: f64,
    /// 0.1 % low as FPS: `1000 / low_01_ms`; `None` (n/a) when that is 0 ms.
    pub low_01_fps: Option<f64>,
    /// Frames longer than `stutter_threshold_ms`.
    pub stutters: u64,
    /// 2 × the median, ms.
    pub stutter_threshold_ms: f64,
    /// Slowest frame, ms.
    pub max_ms: f64,
    /// Statistics the capture is too short for (their value is the slowest frame): any of
    /// `p50`, `p90`, `p95`, `p99`, `p99.9`, `low_1`, `low_0.1`.
    pub needs_more_frames: Vec<&'static str>,
}

pub use vizdeck_base::percentile::percentile_nearest_rank;

/// 1-based nearest rank of the `permille`/10 percentile among `n` frames: `ceil(n · permille /
/// 1000)`, at least 1 (`n > 0`). Integer arithmetic, exact.
pub fn nearest_rank_permille(n: usize, permille: u32) -> usize {
    let r = (n as u128 * permille as u128).div_ceil(1000) as usize;
    r.clamp(1, n.max(1))
}

/// Mean of the slowest `ceil(n · permille / 1000)` values of `sorted` (ascending); 0 when empty.
pub fn low_mean(sorted: &[f64], permille: u32) -> f64 {
    let n = sorted.len();
    if n == 0 {
        return 0.0;
    }
    let k = (n as u128 * permille as u128).div_ceil(1000).max(1) as usize;
    let k = k.min(n);
    sorted[n - k..].iter().sum::<f64>() / k as f64
}

/// Statistics [`Summary`] computes, with their per-mille and the name used in
/// [`Summary::needs_more_frames`].
const PERCENTILES: [(u32, &str); 5] = [
    (500, "p50"),
    (900, "p90"),
    (950, "p95"),
    (990, "p99"),
    (999, "p99.9"),
];

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
        Summary::from_sorted(&sorted)
    }

    /// Summary of frame times already filtered (finite, ≥ 0) and sorted ascending.
    pub fn from_sorted(sorted: &[f64]) -> Summary {
        let n = sorted.len();
        let frames = n as u64;
        // fold from +0.0: an empty f64 sum is −0.0, which would print as "-0.0 s".
        let total_ms: f64 = sorted.iter().fold(0.0, |a, &b| a + b);
        let duration_s = total_ms / 1000.0;
        // Finite only: frames of a few subnormal ms would give +inf.
        let mean_fps =
            Some(frames as f64 * 1000.0 / total_ms).filter(|v| total_ms > 0.0 && v.is_finite());
        let pick = |permille: u32| {
            if n == 0 {
                0.0
            } else {
                sorted[nearest_rank_permille(n, permille) - 1]
            }
        };
        let mut needs_more_frames = Vec::new();
        // With no frames nothing is marked: every statistic is n/a instead.
        for (permille, name) in PERCENTILES.into_iter().filter(|_| n > 0) {
            // Resolved when some frame lies above the rank: n · (1000 − permille) ≥ 1000.
            if (n as u64) * u64::from(1000 - permille) < 1000 {
                needs_more_frames.push(name);
            }
        }
        if n > 0 && n < 100 {
            needs_more_frames.push("low_1");
        }
        if n > 0 && n < 1000 {
            needs_more_frames.push("low_0.1");
        }
        let fps = |ms: f64| Some(1000.0 / ms).filter(|v| ms > 0.0 && v.is_finite());
        let p50_ms = pick(500);
        let low_1_ms = low_mean(sorted, 10);
        let low_01_ms = low_mean(sorted, 1);
        let stutter_threshold_ms = 2.0 * p50_ms;
        let stutters = sorted.iter().filter(|&&t| t > stutter_threshold_ms).count() as u64;
        Summary {
            frames,
            duration_s,
            mean_fps,
            mean_ms: if n > 0 { total_ms / n as f64 } else { 0.0 },
            min_ms: sorted.first().copied().unwrap_or(0.0),
            p50_ms,
            p90_ms: pick(900),
            p95_ms: pick(950),
            p99_ms: pick(990),
            p999_ms: pick(999),
            low_1_ms,
            low_1_fps: fps(low_1_ms),
            low_01_ms,
            low_01_fps: fps(low_01_ms),
            stutters,
            stutter_threshold_ms,
            max_ms: sorted.last().copied().unwrap_or(0.0),
            needs_more_frames,
        }
    }

    /// No frames were counted: every statistic is n/a.
    pub fn is_empty(&self) -> bool {
        self.frames == 0
    }

    /// Whether the statistic `name` (as in [`Summary::needs_more_frames`]) is marked.
    pub fn is_marked(&self, name: &str) -> bool {
        self.needs_more_frames.contains(&name)
    }

    /// `"*"` when `name` is marked, else `""`.
    pub fn mark(&self, name: &str) -> &'static str {
        if self.is_marked(name) { "*" } else { "" }
    }

    /// Rows `(label, value text)` for tables: every statistic formatted, marked ones with `*`;
    /// with no frames, `n/a` for every statistic (the frame count and duration stay numbers); an
    /// FPS that is undefined (0 ms) reads `n/a` too.
    pub fn table_rows(&self) -> Vec<(&'static str, String)> {
        let ms = |v: f64, name: &str| format!("{v:.3}{}", self.mark(name));
        let fps = |v: Option<f64>, name: &str| match v {
            Some(v) => format!("{v:.2}{}", self.mark(name)),
            None => NA.to_string(),
        };
        let mut rows = vec![
            ("frames", self.frames.to_string()),
            ("duration (s)", format!("{:.3}", self.duration_s)),
            ("average FPS", fps(self.mean_fps, "")),
            ("mean (ms)", format!("{:.3}", self.mean_ms)),
            ("min (ms)", format!("{:.3}", self.min_ms)),
            ("p50 (ms)", ms(self.p50_ms, "p50")),
            ("p90 (ms)", ms(self.p90_ms, "p90")),
            ("p95 (ms)", ms(self.p95_ms, "p95")),
            ("p99 (ms)", ms(self.p99_ms, "p99")),
            ("p99.9 (ms)", ms(self.p999_ms, "p99.9")),
            ("1% low (ms)", ms(self.low_1_ms, "low_1")),
            ("1% low (FPS)", fps(self.low_1_fps, "low_1")),
            ("0.1% low (ms)", ms(self.low_01_ms, "low_0.1")),
            ("0.1% low (FPS)", fps(self.low_01_fps, "low_0.1")),
            ("stutters (>2x median)", format!("{}", self.stutters)),
            ("max (ms)", format!("{:.3}", self.max_ms)),
        ];
        if self.is_empty() {
            for (_, value) in rows.iter_mut().skip(2) {
                *value = NA.to_string();
            }
        }
        rows
    }

    /// `value` formatted with `precision` decimals and this statistic's mark, or `n/a` with no
    /// frames: for tables that pick single statistics.
    pub fn cell(&self, value: f64, precision: usize, name: &str) -> String {
        if self.is_empty() {
            NA.to_string()
        } else {
            format!("{value:.precision$}{}", self.mark(name))
        }
    }
}

/// How a statistic of no frames reads in text.
pub const NA: &str = "n/a";

/// The JSON shape of a [`Summary`]: its fields, each statistic `null` when there were no frames,
/// and each FPS `null` when it is undefined (0 ms).
#[derive(serde::Serialize)]
struct SummaryJson<'a> {
    frames: u64,
    duration_s: f64,
    mean_fps: Option<f64>,
    mean_ms: Option<f64>,
    min_ms: Option<f64>,
    p50_ms: Option<f64>,
    p90_ms: Option<f64>,
    p95_ms: Option<f64>,
    p99_ms: Option<f64>,
    p999_ms: Option<f64>,
    low_1_ms: Option<f64>,
    low_1_fps: Option<f64>,
    low_01_ms: Option<f64>,
    low_01_fps: Option<f64>,
    stutters: Option<u64>,
    stutter_threshold_ms: Option<f64>,
    max_ms: Option<f64>,
    needs_more_frames: &'a [&'static str],
}

impl serde::Serialize for Summary {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let some = !self.is_empty();
        let v = |x: f64| some.then_some(x);
        SummaryJson {
            frames: self.frames,
            duration_s: self.duration_s,
            mean_fps: self.mean_fps.filter(|_| some),
            mean_ms: v(self.mean_ms),
            min_ms: v(self.min_ms),
            p50_ms: v(self.p50_ms),
            p90_ms: v(self.p90_ms),
            p95_ms: v(self.p95_ms),
            p99_ms: v(self.p99_ms),
            p999_ms: v(self.p999_ms),
            low_1_ms: v(self.low_1_ms),
            low_1_fps: self.low_1_fps.filter(|_| some),
            low_01_ms: v(self.low_01_ms),
            low_01_fps: self.low_01_fps.filter(|_| some),
            stutters: some.then_some(self.stutters),
            stutter_threshold_ms: v(self.stutter_threshold_ms),
            max_ms: v(self.max_ms),
            needs_more_frames: &self.needs_more_frames,
        }
        .serialize(serializer)
    }
}

impl fmt::Display for Summary {
    /// `frames 600, 12.3 s, mean 48.7 FPS, p50 20.12 ms, p90 …, p99.9 41.00* ms, 1% low 40.1 ms
    /// (24.9 FPS), 0.1% low …, stutters 2, max 41.00 ms` (`*`: needs more frames).
    /// With no frames: `frames 0, statistics n/a`; an undefined FPS (0 ms) reads `n/a FPS`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            return write!(f, "frames 0, statistics {NA}");
        }
        let fps = |v: Option<f64>| v.map_or_else(|| NA.to_string(), |v| format!("{v:.1}"));
        write!(
            f,
            "frames {}, {:.1} s, mean {} FPS, p50 {:.2}{} ms, p90 {:.2}{} ms, p95 {:.2}{} ms, \
             p99 {:.2}{} ms, p99.9 {:.2}{} ms, 1% low {:.2}{} ms ({} FPS), 0.1% low {:.2}{} ms \
             ({} FPS), stutters {}, max {:.2} ms",
            self.frames,
            self.duration_s,
            fps(self.mean_fps),
            self.p50_ms,
            self.mark("p50"),
            self.p90_ms,
            self.mark("p90"),
            self.p95_ms,
            self.mark("p95"),
            self.p99_ms,
            self.mark("p99"),
            self.p999_ms,
            self.mark("p99.9"),
            self.low_1_ms,
            self.mark("low_1"),
            fps(self.low_1_fps),
            self.low_01_ms,
            self.mark("low_0.1"),
            fps(self.low_01_fps),
            self.stutters,
            self.max_ms
        )
    }
}

/// Largest window a [`Live`] keeps (its percentile works on a stack copy of this size).
pub const LIVE_MAX_WINDOW: usize = 1024;

/// Range of the live HDR histogram: 1 µs to 60 s, 3 significant digits (values are recorded in
/// µs; longer frames are clamped to 60 s).
pub const HDR_MAX_US: u64 = 60_000_000;

/// The last `window` frame times (ms) for the overlay graph, and an HDR histogram (hdrhistogram
/// crate, 3 significant digits: any percentile within 0.1 %) of every frame since the last
/// [`Live::reset`] for the overlay's live percentiles. Nothing here allocates after [`Live::new`].
#[derive(Clone, Debug)]
pub struct Live {
    buf: Vec<f64>,
    /// Next slot to write.
    head: usize,
    len: usize,
    hdr: Option<hdrhistogram::Histogram<u64>>,
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
            hdr: hdrhistogram::Histogram::new_with_bounds(1, HDR_MAX_US, 3).ok(),
        }
    }

    /// Empties the window and the histogram.
    pub fn reset(&mut self) {
        self.clear();
        if let Some(h) = &mut self.hdr {
            h.reset();
        }
    }

    /// Frames in the histogram (since the last [`Live::reset`]).
    pub fn hdr_len(&self) -> u64 {
        self.hdr.as_ref().map_or(0, |h| h.len())
    }

    /// Percentile `p` (0..=100) of every frame since the last reset, from the HDR histogram, ms
    /// (within 0.1 %; 0 when empty). The histogram's percentile is the smallest recorded value
    /// equivalence class covering `p` % of the frames, i.e. nearest rank.
    pub fn hdr_percentile(&self, p: f64) -> f64 {
        match &self.hdr {
            Some(h) if !h.is_empty() => {
                let p = if p.is_nan() { 0.0 } else { p.clamp(0.0, 100.0) };
                h.value_at_percentile(p) as f64 / 1000.0
            }
            _ => 0.0,
        }
    }

    /// Largest frame since the last reset (from the histogram), ms.
    pub fn hdr_max(&self) -> f64 {
        self.hdr.as_ref().map_or(0.0, |h| {
            if !h.is_empty() {
                h.max() as f64 / 1000.0
            } else {
                0.0
            }
        })
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
        if let Some(h) = &mut self.hdr {
            let us = (ms * 1000.0).round().clamp(1.0, HDR_MAX_US as f64) as u64;
            h.saturating_record(us);
        }
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

    /// Empties the window (the histogram keeps its frames; see [`Live::reset`]).
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
    fn no_frames_reads_na() {
        let s = Summary::from_frame_times(&[f64::NAN, -1.0]);
        assert!(s.is_empty());
        assert!(s.needs_more_frames.is_empty());
        assert_eq!(s.to_string(), "frames 0, statistics n/a");
        let rows = s.table_rows();
        assert_eq!(rows[0].1, "0");
        assert!(rows[2..].iter().all(|(_, v)| v == NA), "{rows:?}");
        let json = serde_json::to_value(&s).unwrap();
        assert_eq!(json["frames"], 0);
        for key in [
            "mean_fps",
            "p50_ms",
            "p99_ms",
            "p999_ms",
            "low_1_fps",
            "max_ms",
            "stutters",
        ] {
            assert!(json[key].is_null(), "{key}: {}", json[key]);
        }
        // One frame: numbers again, marked where too short.
        let one = serde_json::to_value(Summary::from_frame_times(&[16.0])).unwrap();
        assert_eq!(one["p99_ms"], 16.0);
        assert_eq!(one["needs_more_frames"].as_array().unwrap().len(), 7);
    }

    #[test]
    fn live_window_clamped() {
        assert_eq!(Live::new(0).window(), 1);
        assert_eq!(Live::new(100_000).window(), LIVE_MAX_WINDOW);
        assert_eq!(Live::default().window(), 240);
    }
}
