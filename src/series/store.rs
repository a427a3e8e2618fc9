//! Chunked, append-only storage of `(time seconds f64, value f32)` samples.
//!
//! Each [`Series`] keeps its samples in chunks of at most [`CHUNK_SAMPLES`] samples. Times are stored
//! as `f64` offsets from the series' [`origin`](Series::origin) (the time of its first sample), so a
//! consumer that converts them to `f32` for the GPU keeps sub-millisecond precision even when the
//! absolute times are Unix epoch seconds.
//!
//! Ordering: samples are expected in non-decreasing time order. A sample whose time is earlier than
//! the previous sample's is *kept* and counted ([`Series::out_of_order`]); the chunk holding it is
//! marked unsorted, and range queries then fall back from binary search to a linear filter where
//! needed, so no sample is ever lost from a query. Range iteration yields samples in storage order.
//!
//! Memory: every series holds at most `cap` samples ([`Store::new`]); when a push would exceed it the
//! oldest sample is dropped and counted ([`Series::dropped`]).
//!
//! Gaps: a NaN value is a gap. It is stored like any other value (a line renderer breaks the line
//! there) and counted ([`Series::gaps`]). A sample whose *time* is not finite cannot be placed; it is
//! rejected and counted ([`Series::rejected`]).

use std::collections::VecDeque;

/// Samples per chunk (64 Ki: 512 KiB of times + 256 KiB of values when full).
pub const CHUNK_SAMPLES: usize = 64 * 1024;

/// Default cap on the samples kept per series: 4 Mi samples (48 MiB), about 84 s at 50 kHz.
pub const DEFAULT_CAP_SAMPLES: usize = 4 * 1024 * 1024;

/// One chunk: parallel arrays of relative times and values, plus bounds on its times.
#[derive(Debug, Default)]
struct Chunk {
    /// Times relative to the series origin.
    times: Vec<f64>,
    values: Vec<f32>,
    /// First live index (samples before it were dropped by the cap).
    start: usize,
    /// Global index (see [`Series::first_index`]) of `times[0]`.
    base: u64,
    /// Bounds of the finite values ever pushed into the chunk (a superset of the live ones).
    v_min: f32,
    v_max: f32,
    /// Bounds of the live relative times (exact).
    t_min: f64,
    t_max: f64,
    /// `times[sorted_from..]` is non-decreasing (index just after the last inversion), so the live
    /// part is sorted exactly when `start >= sorted_from`.
    sorted_from: usize,
}

impl Chunk {
    fn live_len(&self) -> usize {
        self.times.len() - self.start
    }

    fn sorted(&self) -> bool {
        self.start >= self.sorted_from
    }

    fn reset(&mut self) {
        self.times.clear();
        self.values.clear();
        self.start = 0;
        self.t_min = f64::INFINITY;
        self.t_max = f64::NEG_INFINITY;
        self.sorted_from = 0;
        self.v_min = f32::INFINITY;
        self.v_max = f32::NEG_INFINITY;
    }

    fn recompute_bounds(&mut self) {
        let live = &self.times[self.start..];
        if self.sorted() {
            self.t_min = live[0];
            self.t_max = live[live.len() - 1];
        } else {
            self.t_min = live.iter().copied().fold(f64::INFINITY, f64::min);
            self.t_max = live.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        }
    }
}

/// A borrowed run of samples from one chunk, as returned by [`Series::chunks_in`].
#[derive(Clone, Copy, Debug)]
pub struct ChunkView<'a> {
    /// Times relative to [`Series::origin`].
    pub times_rel: &'a [f64],
    pub values: &'a [f32],
    /// `true`: times are non-decreasing and every sample lies in the queried range.
    /// `false`: the chunk holds out-of-order samples; it is returned whole and the caller filters.
    pub sorted: bool,
}

/// One named stream of samples.
#[derive(Debug)]
pub struct Series {
    pub name: String,
    chunks: VecDeque<Chunk>,
    /// A drained chunk kept for reuse, so steady-state capping does not allocate.
    spare: Option<Chunk>,
    origin: Option<f64>,
    /// Integer origin when the series was started by [`Series::push_ns`].
    origin_ns: Option<i64>,
    len: usize,
    cap: usize,
    /// Number of chunks that break global order (unsorted inside, or starting before the previous
    /// chunk's maximum). Zero means binary search over chunks is valid.
    disorder: usize,
    last_rel: f64,
    ingested: u64,
    out_of_order: u64,
    dropped: u64,
    gaps: u64,
    rejected: u64,
}

impl Series {
    /// An empty series keeping at most `cap` samples (at least 1).
    pub fn new(name: impl Into<String>, cap: usize) -> Series {
        Series {
            name: name.into(),
            chunks: VecDeque::new(),
            spare: None,
            origin: None,
            origin_ns: None,
            len: 0,
            cap: cap.max(1),
            disorder: 0,
            last_rel: f64::NEG_INFINITY,
            ingested: 0,
            out_of_order: 0,
            dropped: 0,
            gaps: 0,
            rejected: 0,
        }
    }

    /// Appends one sample. Non-finite times are rejected (counted); NaN values are gaps (stored).
    pub fn push(&mut self, t: f64, v: f32) {
        if !t.is_finite() {
            self.rejected += 1;
            return;
        }
        let origin = *self.origin.get_or_insert(t);
        self.push_rel(t - origin, v);
    }

    /// Appends one sample whose time is an integer count of nanoseconds (e.g. Unix epoch ns,
    /// about 1.7e18). The first such sample fixes an integer origin; later times are stored as
    /// `(t_ns − origin_ns) · 1e-9` seconds computed from the exact integer difference, so samples
    /// one nanosecond apart stay distinct and evenly spaced however large the epoch.
    /// If the series was started by [`push`](Series::push), `t_ns` is converted to f64 seconds
    /// first (nanoseconds are then lost at epoch scale).
    pub fn push_ns(&mut self, t_ns: i64, v: f32) {
        match (self.origin, self.origin_ns) {
            (None, _) => {
                self.origin_ns = Some(t_ns);
                self.origin = Some(t_ns as f64 * 1e-9);
                self.push_rel(0.0, v);
            }
            (Some(_), Some(o)) => {
                let d = t_ns as i128 - o as i128;
                self.push_rel(d as f64 * 1e-9, v);
            }
            (Some(o), None) => self.push_rel(t_ns as f64 * 1e-9 - o, v),
        }
    }

    /// Appends one sample at time `rel` seconds after the origin (which must already be set).
    fn push_rel(&mut self, rel: f64, v: f32) {
        let index = self.ingested;
        self.ingested += 1;
        if v.is_nan() {
            self.gaps += 1;
        }
        if rel < self.last_rel {
            self.out_of_order += 1;
        }
        self.last_rel = rel;

        if self.len >= self.cap {
            self.drop_oldest();
        }

        let need_new = self
            .chunks
            .back()
            .is_none_or(|c| c.times.len() >= CHUNK_SAMPLES);
        if need_new {
            let mut chunk = self.spare.take().unwrap_or_default();
            chunk.reset();
            chunk.base = index;
            let bad = self.chunks.back().is_some_and(|prev| rel < prev.t_max);
            chunk.times.push(rel);
            chunk.values.push(v);
            if v.is_finite() {
                chunk.v_min = v;
                chunk.v_max = v;
            }
            chunk.t_min = rel;
            chunk.t_max = rel;
            if bad {
                self.disorder += 1;
            }
            self.chunks.push_back(chunk);
        } else {
            let n = self.chunks.len();
            let prev_max = if n >= 2 {
                self.chunks[n - 2].t_max
            } else {
                f64::NEG_INFINITY
            };
            let chunk = self.chunks.back_mut().expect("checked above");
            let was_bad = !chunk.sorted() || chunk.t_min < prev_max;
            if chunk.times.last().is_some_and(|&last| rel < last) {
                chunk.sorted_from = chunk.times.len();
            }
            chunk.times.push(rel);
            chunk.values.push(v);
            if v.is_finite() {
                chunk.v_min = chunk.v_min.min(v);
                chunk.v_max = chunk.v_max.max(v);
            }
            chunk.t_min = chunk.t_min.min(rel);
            chunk.t_max = chunk.t_max.max(rel);
            let is_bad = !chunk.sorted() || chunk.t_min < prev_max;
            if is_bad && !was_bad {
                self.disorder += 1;
            }
        }
        self.len += 1;
    }

    fn drop_oldest(&mut self) {
        let Some(front) = self.chunks.front_mut() else {
            return;
        };
        let t = front.times[front.start];
        let was_sorted = front.sorted();
        front.start += 1;
        self.len -= 1;
        self.dropped += 1;
        if front.live_len() == 0 {
            let chunk = self.chunks.pop_front().expect("front exists");
            self.spare = Some(chunk);
            self.recount_disorder();
        } else if front.sorted() {
            // Cheap: bounds are the ends. Order may just have been restored.
            front.recompute_bounds();
            if !was_sorted {
                self.recount_disorder();
            }
        } else if t <= front.t_min || t >= front.t_max {
            // The dropped sample may have been an extremum; rare outside pathological input.
            front.recompute_bounds();
            self.recount_disorder();
        }
    }

    fn recount_disorder(&mut self) {
        let mut prev_max = f64::NEG_INFINITY;
        let mut bad = 0;
        for c in &self.chunks {
            if !c.sorted() || c.t_min < prev_max {
                bad += 1;
            }
            prev_max = c.t_max;
        }
        self.disorder = bad;
    }

    /// Samples currently stored.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The cap on stored samples.
    pub fn cap(&self) -> usize {
        self.cap
    }

    /// Absolute time of the first sample ever pushed; stored times are relative to it.
    pub fn origin(&self) -> Option<f64> {
        self.origin
    }

    /// Integer nanosecond origin, when the series was started by [`push_ns`](Series::push_ns).
    pub fn origin_ns(&self) -> Option<i64> {
        self.origin_ns
    }

    /// `(earliest, latest)` time of the stored samples relative to [`origin`](Series::origin).
    pub fn time_range_rel(&self) -> Option<(f64, f64)> {
        self.origin?;
        let mut lo = f64::INFINITY;
        let mut hi = f64::NEG_INFINITY;
        for c in self.chunks.iter().filter(|c| c.live_len() > 0) {
            lo = lo.min(c.t_min);
            hi = hi.max(c.t_max);
        }
        (lo <= hi).then_some((lo, hi))
    }

    /// Min and max of the finite values (NaN and ±inf excluded) with relative time in `[r0, r1)`;
    /// `None` if there is none. Chunks wholly inside the range answer from their bounds (which
    /// may still include values dropped by the cap from the oldest chunk); only the partly covered
    /// chunks are scanned, so the cost is O(chunks + 2 · CHUNK_SAMPLES).
    pub fn value_range_rel(&self, r0: f64, r1: f64) -> Option<(f32, f32)> {
        let mut lo = f32::INFINITY;
        let mut hi = f32::NEG_INFINITY;
        for c in self.chunks.iter().filter(|c| c.live_len() > 0) {
            if c.t_max < r0 || c.t_min >= r1 {
                continue;
            }
            if c.t_min >= r0 && c.t_max < r1 {
                lo = lo.min(c.v_min);
                hi = hi.max(c.v_max);
                continue;
            }
            for (&t, &v) in c.times[c.start..].iter().zip(&c.values[c.start..]) {
                if t >= r0 && t < r1 && v.is_finite() {
                    lo = lo.min(v);
                    hi = hi.max(v);
                }
            }
        }
        (lo <= hi).then_some((lo, hi))
    }

    /// Global index of the oldest stored sample. Every sample ever stored has a global index
    /// (0 for the first, counting dropped ones), so stored samples are
    /// `first_index()..end_index()`.
    pub fn first_index(&self) -> u64 {
        self.ingested - self.len as u64
    }

    /// One past the global index of the newest stored sample (= samples ever stored).
    pub fn end_index(&self) -> u64 {
        self.ingested
    }

    /// For an ordered series ([`is_ordered`](Series::is_ordered)) and a predicate on relative
    /// times that is true for a prefix of the samples (e.g. `|t| t < x`): the global index of the
    /// first stored sample for which it is false (`end_index()` if none). On an unordered series
    /// the result is only a bound for the sorted chunks; callers fall back to a scan.
    pub fn partition_index(&self, pred: impl Fn(f64) -> bool) -> u64 {
        let live = |c: &Chunk| c.live_len() > 0;
        let k = self.chunks.partition_point(|c| !live(c) || pred(c.t_max));
        match self.chunks.get(k) {
            None => self.end_index(),
            Some(c) => {
                let times = &c.times[c.start..];
                c.base + (c.start + times.partition_point(|&t| pred(t))) as u64
            }
        }
    }

    /// `(relative time, value)` of the stored sample with global index `index`, if stored.
    pub fn get_index(&self, index: u64) -> Option<(f64, f32)> {
        if index < self.first_index() || index >= self.end_index() {
            return None;
        }
        let k = self
            .chunks
            .partition_point(|c| c.base + c.times.len() as u64 <= index);
        let c = self.chunks.get(k)?;
        let i = (index - c.base) as usize;
        Some((c.times[i], c.values[i]))
    }

    /// Stored values from global index `from` on (clamped to the stored range), as runs
    /// `(global index of the run's first value, values)` in index order.
    pub fn values_from(&self, from: u64) -> impl Iterator<Item = (u64, &[f32])> + '_ {
        let from = from.max(self.first_index());
        self.chunks.iter().filter_map(move |c| {
            let end = c.base + c.times.len() as u64;
            if end <= from {
                return None;
            }
            let a = (from.max(c.base + c.start as u64) - c.base) as usize;
            Some((c.base + a as u64, &c.values[a..]))
        })
    }

    /// `(earliest, latest)` absolute time of the stored samples; `None` when empty.
    pub fn time_range(&self) -> Option<(f64, f64)> {
        let origin = self.origin?;
        let mut lo = f64::INFINITY;
        let mut hi = f64::NEG_INFINITY;
        for c in self.chunks.iter().filter(|c| c.live_len() > 0) {
            lo = lo.min(c.t_min);
            hi = hi.max(c.t_max);
        }
        (lo <= hi).then_some((origin + lo, origin + hi))
    }

    /// Samples accepted by [`push`](Series::push) since creation (including gaps, including samples
    /// later dropped by the cap; excluding rejected ones).
    pub fn points_ingested(&self) -> u64 {
        self.ingested
    }

    /// Samples that arrived earlier in time than the sample before them (kept, not dropped).
    pub fn out_of_order(&self) -> u64 {
        self.out_of_order
    }

    /// Samples dropped to respect the cap (oldest first).
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// NaN values ingested (gaps).
    pub fn gaps(&self) -> u64 {
        self.gaps
    }

    /// Samples rejected because their time was not finite.
    pub fn rejected(&self) -> u64 {
        self.rejected
    }

    /// `true` when every stored sample is in non-decreasing time order (range queries then use
    /// binary search only).
    pub fn is_ordered(&self) -> bool {
        self.disorder == 0
    }

    /// Runs of stored samples that may lie in `[t0, t1)` (absolute seconds), in storage order.
    ///
    /// Sorted chunks are clipped exactly by binary search; a chunk holding out-of-order samples is
    /// returned whole with `sorted == false` and the caller must filter it. When the whole series is
    /// ordered, the first and last chunks are found by binary search too.
    pub fn chunks_in(&self, t0: f64, t1: f64) -> impl Iterator<Item = ChunkView<'_>> + '_ {
        let (r0, r1) = self.origin.map_or((0.0, 0.0), |o| (t0 - o, t1 - o));
        self.chunks_in_rel(r0, r1)
    }

    /// [`chunks_in`](Series::chunks_in) for times `[r0, r1)` relative to the origin.
    pub fn chunks_in_rel(&self, r0: f64, r1: f64) -> impl Iterator<Item = ChunkView<'_>> + '_ {
        let origin = self.origin.filter(|_| r1 > r0);
        let (lo, hi) = if origin.is_none() {
            (0, 0)
        } else if self.disorder == 0 {
            // Chunks are globally ordered: t_max and t_min are non-decreasing across chunks.
            let lo = self.chunks.partition_point(|c| c.t_max < r0);
            let hi = self.chunks.partition_point(|c| c.t_min < r1);
            (lo, hi.max(lo))
        } else {
            (0, self.chunks.len())
        };
        self.chunks
            .range(lo..hi)
            .filter(move |c| c.live_len() > 0 && c.t_max >= r0 && c.t_min < r1)
            .filter_map(move |c| {
                let times = &c.times[c.start..];
                let values = &c.values[c.start..];
                if c.sorted() {
                    let a = times.partition_point(|&t| t < r0);
                    let b = times.partition_point(|&t| t < r1);
                    (b > a).then(|| ChunkView {
                        times_rel: &times[a..b],
                        values: &values[a..b],
                        sorted: true,
                    })
                } else {
                    Some(ChunkView {
                        times_rel: times,
                        values,
                        sorted: false,
                    })
                }
            })
    }

    /// Stored samples with absolute time in `[t0, t1)`, as `(absolute time, value)`, in storage
    /// order (time order unless out-of-order samples were pushed).
    pub fn range(&self, t0: f64, t1: f64) -> impl Iterator<Item = (f64, f32)> + '_ {
        let origin = self.origin.unwrap_or(0.0);
        let (r0, r1) = (t0 - origin, t1 - origin);
        self.chunks_in(t0, t1).flat_map(move |view| {
            view.times_rel
                .iter()
                .zip(view.values)
                .filter(move |(t, _)| view.sorted || (**t >= r0 && **t < r1))
                .map(move |(&t, &v)| (origin + t, v))
        })
    }

    /// Every stored sample as `(absolute time, value)`, in storage order.
    pub fn iter(&self) -> impl Iterator<Item = (f64, f32)> + '_ {
        let origin = self.origin.unwrap_or(0.0);
        self.chunks.iter().flat_map(move |c| {
            c.times[c.start..]
                .iter()
                .zip(&c.values[c.start..])
                .map(move |(&t, &v)| (origin + t, v))
        })
    }

    /// Removes every stored sample; counters and origin are kept.
    pub fn clear(&mut self) {
        if let Some(c) = self.chunks.pop_back() {
            self.spare = Some(c);
        }
        self.chunks.clear();
        self.len = 0;
        self.disorder = 0;
        self.last_rel = f64::NEG_INFINITY;
    }
}

/// Several named series sharing one per-series cap.
#[derive(Debug)]
pub struct Store {
    series: Vec<Series>,
    cap: usize,
}

impl Default for Store {
    fn default() -> Store {
        Store::new(DEFAULT_CAP_SAMPLES)
    }
}

impl Store {
    /// An empty store whose series keep at most `cap_samples` samples each.
    pub fn new(cap_samples: usize) -> Store {
        Store {
            series: Vec::new(),
            cap: cap_samples.max(1),
        }
    }

    pub fn cap(&self) -> usize {
        self.cap
    }

    pub fn series(&self) -> &[Series] {
        &self.series
    }

    pub fn series_mut(&mut self) -> &mut [Series] {
        &mut self.series
    }

    pub fn get(&self, name: &str) -> Option<&Series> {
        self.series.iter().find(|s| s.name == name)
    }

    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.series.iter().position(|s| s.name == name)
    }

    /// Index of the series called `name`, created empty if absent.
    pub fn ensure(&mut self, name: &str) -> usize {
        match self.index_of(name) {
            Some(i) => i,
            None => {
                self.series.push(Series::new(name, self.cap));
                self.series.len() - 1
            }
        }
    }

    /// Appends one sample to series `index` (see [`Series::push`]). Panics if `index` is out of range.
    pub fn push(&mut self, index: usize, t: f64, v: f32) {
        self.series[index].push(t, v);
    }

    /// Samples ingested by all series.
    pub fn points_ingested(&self) -> u64 {
        self.series.iter().map(Series::points_ingested).sum()
    }

    /// Samples stored by all series.
    pub fn len(&self) -> usize {
        self.series.iter().map(Series::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Union of the series' time ranges.
    pub fn time_range(&self) -> Option<(f64, f64)> {
        self.series
            .iter()
            .filter_map(Series::time_range)
            .reduce(|(a0, a1), (b0, b1)| (a0.min(b0), a1.max(b1)))
    }

    /// Removes every series.
    pub fn clear(&mut self) {
        self.series.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(s: &Series, t0: f64, t1: f64) -> Vec<(f64, f32)> {
        s.range(t0, t1).collect()
    }

    #[test]
    fn push_and_range_across_chunks() {
        let mut s = Series::new("a", usize::MAX);
        let n = CHUNK_SAMPLES * 2 + 100;
        for i in 0..n {
            s.push(i as f64, i as f32);
        }
        assert_eq!(s.len(), n);
        assert_eq!(s.points_ingested(), n as u64);
        assert_eq!(s.time_range(), Some((0.0, (n - 1) as f64)));
        assert!(s.is_ordered());
        let lo = CHUNK_SAMPLES as f64 - 5.0;
        let got = collect(&s, lo, lo + 10.0);
        let want: Vec<_> = (0..10)
            .map(|k| (lo + k as f64, (lo + k as f64) as f32))
            .collect();
        assert_eq!(got, want);
        // Half-open: t1 excluded, t0 included.
        assert_eq!(collect(&s, 3.0, 4.0), vec![(3.0, 3.0)]);
        assert!(collect(&s, 4.0, 4.0).is_empty());
        assert!(collect(&s, 5.0, 4.0).is_empty());
        assert!(collect(&s, -10.0, 0.0).is_empty());
        assert_eq!(collect(&s, -10.0, 0.5), vec![(0.0, 0.0)]);
        assert_eq!(s.range(f64::NEG_INFINITY, f64::INFINITY).count(), n);
    }

    #[test]
    fn large_origin_keeps_precision() {
        // Epoch seconds plus microsecond-scale dyadic steps (exact in f64).
        let mut s = Series::new("epoch", 1000);
        let base = 1.7e9;
        let step = 1.0 / (1u64 << 20) as f64;
        for i in 0..10 {
            s.push(base + i as f64 * step, 1.0);
        }
        assert_eq!(s.origin(), Some(base));
        let views: Vec<_> = s.chunks_in(base, base + 1.0).collect();
        assert_eq!(views.len(), 1);
        for (i, &t) in views[0].times_rel.iter().enumerate() {
            assert_eq!(t, i as f64 * step);
            // Relative times survive the conversion to f32 for the GPU; absolute ones would not.
            assert_eq!((t as f32) as f64, i as f64 * step);
        }
        assert_eq!((base + step) as f32, base as f32);
        let back: Vec<f64> = s.iter().map(|(t, _)| t).collect();
        assert_eq!(back[3], base + 3.0 * step);
    }

    #[test]
    fn out_of_order_kept_and_counted() {
        let mut s = Series::new("a", usize::MAX);
        for t in [0.0, 1.0, 2.0, 1.5, 3.0, 0.5] {
            s.push(t, t as f32);
        }
        assert_eq!(s.out_of_order(), 2);
        assert_eq!(s.len(), 6);
        assert!(!s.is_ordered());
        let mut got: Vec<f64> = s.range(0.4, 1.6).map(|(t, _)| t).collect();
        got.sort_by(f64::total_cmp);
        assert_eq!(got, vec![0.5, 1.0, 1.5]);
        assert_eq!(s.time_range(), Some((0.0, 3.0)));
    }

    #[test]
    fn out_of_order_across_chunk_boundary() {
        let mut s = Series::new("a", usize::MAX);
        for i in 0..CHUNK_SAMPLES {
            s.push(i as f64, 0.0);
        }
        // New chunk starts before the previous chunk's end.
        s.push(10.5, 1.0);
        s.push(CHUNK_SAMPLES as f64, 2.0);
        assert_eq!(s.out_of_order(), 1);
        assert!(!s.is_ordered());
        let got: Vec<_> = collect(&s, 10.0, 11.0);
        assert_eq!(got.len(), 2);
        assert!(got.contains(&(10.0, 0.0)) && got.contains(&(10.5, 1.0)));
    }

    #[test]
    fn cap_drops_oldest() {
        let mut s = Series::new("a", 5);
        for i in 0..12 {
            s.push(i as f64, i as f32);
        }
        assert_eq!(s.len(), 5);
        assert_eq!(s.dropped(), 7);
        assert_eq!(s.points_ingested(), 12);
        assert_eq!(s.time_range(), Some((7.0, 11.0)));
        let got: Vec<f32> = s.iter().map(|(_, v)| v).collect();
        assert_eq!(got, vec![7.0, 8.0, 9.0, 10.0, 11.0]);
    }

    #[test]
    fn cap_across_chunks_reuses_spare() {
        let cap = CHUNK_SAMPLES + 10;
        let mut s = Series::new("a", cap);
        let n = 3 * CHUNK_SAMPLES + 7;
        for i in 0..n {
            s.push(i as f64, i as f32);
        }
        assert_eq!(s.len(), cap);
        assert_eq!(s.dropped() as usize, n - cap);
        let first = (n - cap) as f64;
        assert_eq!(s.time_range(), Some((first, (n - 1) as f64)));
        assert_eq!(s.range(0.0, first + 3.0).count(), 3);
        assert!(s.is_ordered());
    }

    #[test]
    fn cap_with_disorder_recomputes_bounds() {
        let mut s = Series::new("a", 3);
        for t in [5.0, 1.0, 2.0, 3.0, 4.0] {
            s.push(t, 0.0);
        }
        // 5.0 and 1.0 were dropped; 2, 3, 4 are left in order in the chunk that held the inversion.
        assert_eq!(s.time_range(), Some((2.0, 4.0)));
        assert!(s.is_ordered());
        assert_eq!(s.dropped(), 2);

        let mut s = Series::new("b", 3);
        for t in [1.0, 5.0, 3.0, 6.0] {
            s.push(t, 0.0);
        }
        assert!(!s.is_ordered());
        assert_eq!(s.time_range(), Some((3.0, 6.0)));
        s.push(7.0, 0.0); // drops 5.0: the inversion leaves the live part
        assert!(s.is_ordered());
        assert_eq!(s.time_range(), Some((3.0, 7.0)));
        assert_eq!(
            s.range(0.0, 10.0).map(|(t, _)| t).collect::<Vec<_>>(),
            vec![3.0, 6.0, 7.0]
        );
    }

    #[test]
    fn nan_values_are_gaps_and_bad_times_rejected() {
        let mut s = Series::new("a", 100);
        s.push(0.0, 1.0);
        s.push(1.0, f32::NAN);
        s.push(f64::NAN, 3.0);
        s.push(f64::INFINITY, 3.0);
        s.push(2.0, 2.0);
        assert_eq!(s.len(), 3);
        assert_eq!(s.gaps(), 1);
        assert_eq!(s.rejected(), 2);
        assert_eq!(s.points_ingested(), 3);
        let got: Vec<_> = s.iter().collect();
        assert!(got[1].1.is_nan());
    }

    #[test]
    fn store_ensure_and_totals() {
        let mut st = Store::new(10);
        let a = st.ensure("a");
        let b = st.ensure("b");
        assert_eq!(st.ensure("a"), a);
        st.push(a, 1.0, 1.0);
        st.push(b, 3.0, 1.0);
        st.push(b, 4.0, 1.0);
        assert_eq!(st.points_ingested(), 3);
        assert_eq!(st.len(), 3);
        assert_eq!(st.time_range(), Some((1.0, 4.0)));
        assert_eq!(st.get("b").map(Series::len), Some(2));
        assert!(st.get("c").is_none());
    }

    #[test]
    fn clear_keeps_counters() {
        let mut s = Series::new("a", 100);
        s.push(0.0, 1.0);
        s.push(1.0, 1.0);
        s.clear();
        assert!(s.is_empty());
        assert_eq!(s.time_range(), None);
        s.push(2.0, 1.0);
        assert_eq!(s.time_range(), Some((2.0, 2.0)));
        assert_eq!(s.points_ingested(), 3);
    }
}
