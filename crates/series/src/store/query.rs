//! Reading a [`Series`] back: sizes, origin, time and value ranges, index searches
//! ([`Series::partition_index`], [`Series::partition_index_near`] with [`gallop`] and
//! [`partition_near`]), chunk views and sample ranges in storage order.

use super::{Chunk, ChunkView, Series};

impl Series {
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

    /// [`partition_index`](Series::partition_index) for a predicate whose partition point is
    /// expected near relative time `t_guess` (e.g. `|t| t < x` with `t_guess = x`): the chunk is
    /// found from the chunk bounds as before, but inside it the search starts where `t_guess`
    /// falls by linear interpolation (as in interpolation search: Peterson, "Addressing for
    /// random-access storage", IBM J. R&D 1(2), 1957) and widens outwards in doubling steps, so
    /// evenly spaced samples cost a couple of probes instead of a cache miss per halving of a
    /// 64 Ki-sample chunk. Same result as
    /// `partition_index` whatever `t_guess` is (a poor guess only costs O(log error) probes).
    pub fn partition_index_near(&self, pred: impl Fn(f64) -> bool, t_guess: f64) -> u64 {
        let live = |c: &Chunk| c.live_len() > 0;
        let k = self.chunks.partition_point(|c| !live(c) || pred(c.t_max));
        match self.chunks.get(k) {
            None => self.end_index(),
            Some(c) => {
                let times = &c.times[c.start..];
                if !pred(times[0]) {
                    return c.base + c.start as u64;
                }
                let (a, b) = (times[0], times[times.len() - 1]);
                let frac = (t_guess - a) / (b - a);
                let guess = if frac.is_finite() {
                    (frac * (times.len() - 1) as f64) as usize
                } else {
                    0
                };
                c.base + (c.start + partition_near(times, &pred, guess)) as u64
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
        self.runs_from(from)
            .map(|(c, a)| (c.base + a as u64, &c.values[a..]))
    }

    /// Stored samples from global index `from` on (clamped to the stored range), as runs
    /// `(times relative to the origin, values)` in index order.
    pub fn samples_from(&self, from: u64) -> impl Iterator<Item = (&[f64], &[f32])> + '_ {
        self.runs_from(from)
            .map(|(c, a)| (&c.times[a..], &c.values[a..]))
    }

    /// The chunks holding samples from global index `from` on, each with the offset in it of
    /// the first such stored sample.
    fn runs_from(&self, from: u64) -> impl Iterator<Item = (&Chunk, usize)> + '_ {
        let from = from.max(self.first_index());
        self.chunks.iter().filter_map(move |c| {
            let end = c.base + c.times.len() as u64;
            (end > from).then(|| (c, (from.max(c.base + c.start as u64) - c.base) as usize))
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
}

/// Length of the prefix of `x` on which `pred` holds, for a `pred` that holds on a prefix and
/// `pred(x[0])` true: exponential (galloping) search, then binary search in the last step
/// (Bentley & Yao, "An almost optimal algorithm for unbounded searching", 1976). Costs
/// O(log k) for a prefix of length k, so short runs (zoomed in) are as cheap as long ones.
#[inline]
pub(crate) fn gallop(x: &[f64], pred: impl Fn(f64) -> bool) -> usize {
    let mut lo = 1; // pred(x[lo - 1]) holds
    let mut step = 1;
    loop {
        let probe = lo + step - 1;
        if probe >= x.len() {
            break;
        }
        if !pred(x[probe]) {
            return lo + x[lo..probe].partition_point(|&t| pred(t));
        }
        lo = probe + 1;
        step *= 2;
    }
    lo + x[lo..].partition_point(|&t| pred(t))
}

/// [`gallop`] started from a guessed partition point `guess` instead of the start: searches
/// outwards from it in doubling steps, so a good guess costs a couple of probes and a bad one
/// O(log error). Same contract and result as `x.partition_point(pred)` with `pred(x[0])` true.
#[inline]
pub(crate) fn partition_near(x: &[f64], pred: impl Fn(f64) -> bool, guess: usize) -> usize {
    let g = guess.clamp(1, x.len());
    if g < x.len() && pred(x[g]) {
        return g + gallop(&x[g..], pred);
    }
    // x[hi] is past the partition point (or hi == len): step back until pred holds.
    let mut hi = g;
    let mut step = 1;
    loop {
        let lo = hi.saturating_sub(step);
        if lo == 0 || pred(x[lo]) {
            return lo + 1 + x[lo + 1..hi].partition_point(|&t| pred(t));
        }
        hi = lo;
        step *= 2;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::CHUNK_SAMPLES;
    use crate::store::tests::{collect, unit};

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
    fn partition_index_near_matches_partition_index() {
        // Uneven spacing across several chunks, with the oldest samples dropped by the cap.
        let n = 3 * CHUNK_SAMPLES + 500;
        let times: Vec<f64> = (0..n).map(|i| (i as f64).powf(1.3) * 1e-3).collect();
        let values = vec![0.0f32; n];
        let mut s = Series::new("a", 2 * CHUNK_SAMPLES + 77);
        s.push_slice(&times, &values).unwrap();
        let (lo, hi) = s.time_range_rel().unwrap();
        let mut rng = 11u64;
        for _ in 0..2000 {
            let x = lo - 1.0 + unit(&mut rng) * (hi - lo + 2.0);
            let want = s.partition_index(|t| t < x);
            for guess in [x, lo, hi, x * 0.5, f64::NAN, f64::INFINITY, -1e300] {
                assert_eq!(
                    s.partition_index_near(|t| t < x, guess),
                    want,
                    "x {x} guess {guess}"
                );
            }
        }
        assert_eq!(s.partition_index_near(|t| t < hi + 1.0, hi), s.end_index());
        assert_eq!(s.partition_index_near(|t| t < lo, lo), s.first_index());
    }

    #[test]
    fn gallop_matches_partition_point() {
        let x: Vec<f64> = (0..1000).map(|i| (i / 7) as f64).collect();
        for start in [0, 1, 6, 7, 500, 993, 999] {
            for limit in [0.0, 1.0, 70.0, 141.0, 142.0, 1e9] {
                let pred = |t: f64| t <= x[start].max(limit);
                let want = x[start..].partition_point(|&t| pred(t));
                assert_eq!(
                    gallop(&x[start..], pred),
                    want,
                    "start {start} limit {limit}"
                );
            }
        }
    }

    #[test]
    fn partition_near_matches_partition_point_for_any_guess() {
        let x: Vec<f64> = (0..300).map(|i| ((i * i) / 50) as f64).collect();
        for limit in [0.0, 3.0, 100.0, 1000.0, 1e9] {
            let pred = |t: f64| t <= limit;
            let want = x.partition_point(|&t| pred(t));
            for guess in [0, 1, 2, 5, 37, 150, 299, 300, 10_000] {
                assert_eq!(
                    partition_near(&x, pred, guess),
                    want,
                    "limit {limit} guess {guess}"
                );
            }
        }
    }
}
