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
//!
//! Bulk ingest: [`Series::push_slice`] appends a run of samples with exactly the result of pushing
//! them one by one, but copies whole runs into the chunks and computes the chunk bounds, gap count
//! and inversions in lane-parallel passes (the producer threads hand over batches through it).
//!
//! Files: this one holds the types ([`Series`], its chunks, [`ChunkView`], [`Store`]);
//! `ingest.rs` appending samples (one by one and in bulk), the cap and the counters; `query.rs`
//! reading them back (ranges, chunk views, index searches).

mod ingest;
mod query;

pub use ingest::LengthMismatch;
pub(crate) use query::partition_near;

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
    /// Reused buffer of relative times for [`Series::push_slice_ns`].
    scratch: Vec<f64>,
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
            scratch: Vec::new(),
        }
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

    /// Appends samples to series `index` in bulk (see [`Series::push_slice`]). Panics if `index`
    /// is out of range.
    ///
    /// # Errors
    ///
    /// [`LengthMismatch`] when `times` and `values` differ in length.
    pub fn push_slice(
        &mut self,
        index: usize,
        times: &[f64],
        values: &[f32],
    ) -> Result<(), LengthMismatch> {
        self.series[index].push_slice(times, values)
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

    pub(super) fn collect(s: &Series, t0: f64, t1: f64) -> Vec<(f64, f32)> {
        s.range(t0, t1).collect()
    }

    /// xorshift64* stream in [0, 1).
    pub(super) fn unit(state: &mut u64) -> f64 {
        *state ^= *state >> 12;
        *state ^= *state << 25;
        *state ^= *state >> 27;
        (state.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
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
}
