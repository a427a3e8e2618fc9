//! Series sources: a synthetic generator (random walks, ticks with bursts or sines, any number of
//! series, up to 1e8 samples/s per series) and a CSV reader, each feeding a [`Store`] from its own
//! producer thread.
//!
//! Threads: a source that streams owns one producer thread. Batches of rows travel to the render
//! thread through an `rtrb` SPSC ring (wait-free on both sides); emptied batches travel back through a
//! second ring so that steady-state streaming does not allocate. Late errors and the end of input
//! travel through the same ring as messages, so the render thread never takes a lock.
//! [`SeriesSource::drain_into`] only pops from the ring and never waits.
//!
//! Dropping a [`SeriesSource`] sets a stop flag and joins its thread (the thread checks the flag at
//! least every few milliseconds).

use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rtrb::{Consumer, Producer, PushError, RingBuffer};

use super::store::Store;

/// Which data a [`SeriesSource`] produces.
#[derive(Clone, Debug, PartialEq)]
pub enum SeriesSelection {
    /// `series` synthetic series of one [`SynthKind`], `rate_hz` samples per second *per series*
    /// (so `series · rate_hz` in all), random draws seeded by `seed`.
    Synthetic {
        series: usize,
        rate_hz: f64,
        seed: u64,
        kind: SynthKind,
    },
    /// A CSV file (`-`: standard input): optional header row, first column time (in seconds,
    /// or in the unit its header's suffix names: `_ns`, `_us`, `_ms`, `_s`; see [`TimeUnit`]),
    /// numeric columns are series. See [`open_csv_with`] for the accepted variants.
    Csv(PathBuf),
    /// A CSV file that another program is still writing: read to its end, then keep reading what
    /// is appended until the source is dropped.
    CsvTail(PathBuf),
}

impl Default for SeriesSelection {
    /// 4 series × 50 000 samples/s = 200 000 samples/s.
    fn default() -> SeriesSelection {
        SeriesSelection::Synthetic {
            series: 4,
            rate_hz: 50_000.0,
            seed: 1,
            kind: SynthKind::Walk,
        }
    }
}

/// How a synthetic source advances time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Pacing {
    /// A producer thread follows the wall clock (interactive use).
    #[default]
    WallClock,
    /// No thread: the caller's clock decides through [`SeriesSource::advance_to`] (headless runs,
    /// tests). A CSV source streams its file the same way under either pacing.
    Driven,
}

/// Paces the release of a producer's backlog after a stall. A producer that was held up (its
/// thread not scheduled, a frame that took seconds) would otherwise hand over everything it owes
/// at once, and the chart would jump by the whole stall in one frame. Instead, each step of the
/// clock releases at most `factor` times the step's length of source time, and a step is counted
/// as at most `max_step_s` long: while no backlog is owed (steps up to `max_step_s`, `factor ≥ 1`)
/// the release follows the clock exactly; after a stall the backlog is released over the next
/// steps at up to `factor` times the real rate, `factor − 1` times the step caught up per step,
/// until the release meets the clock again. Samples keep their own times; only when they are
/// handed over changes. Deterministic: a function of the clock values passed in.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CatchUp {
    /// Longest clock step counted in full, seconds (longer ones are stalls).
    pub max_step_s: f64,
    /// Source time released per step, at most, as a multiple of the (capped) step.
    pub factor: f64,
    /// Source time released so far, seconds.
    released: f64,
    /// Clock at the previous step (`None`: the clock starts at 0).
    last_now: Option<f64>,
}

impl Default for CatchUp {
    /// Steps up to 0.1 s count in full; a backlog is released at up to 4× the real rate (3 s of
    /// backlog caught up per 1 s of clock, so a 5 s stall is made up in under 2 s).
    fn default() -> CatchUp {
        CatchUp::new(0.1, 4.0)
    }
}

impl CatchUp {
    /// A pacer for steps counted up to `max_step_s` seconds and release at up to `factor` times
    /// the real rate (non-finite or smaller values are raised to 1e-3 s and 1).
    pub fn new(max_step_s: f64, factor: f64) -> CatchUp {
        let sane = |x: f64, min: f64| if x.is_finite() { x.max(min) } else { min };
        CatchUp {
            max_step_s: sane(max_step_s, 1e-3),
            factor: sane(factor, 1.0),
            released: 0.0,
            last_now: None,
        }
    }

    /// The clock reads `now` seconds: returns the source time up to which samples may be
    /// released, `min(now, released + factor · min(step, max_step_s))` with `step` the clock's
    /// advance since the previous call (from 0 on the first). Never decreases; a clock that
    /// goes back or is not finite releases nothing more.
    pub fn release_until(&mut self, now: f64) -> f64 {
        if !now.is_finite() {
            return self.released;
        }
        let prev = self.last_now.unwrap_or(0.0);
        let step = (now - prev).max(0.0);
        self.last_now = Some(now.max(prev));
        let budget = self.factor * step.min(self.max_step_s);
        self.released = (self.released + budget).min(now).max(self.released);
        self.released
    }

    /// Source time owed but not yet released at the last clock reading, seconds.
    pub fn backlog_s(&self) -> f64 {
        (self.last_now.unwrap_or(0.0) - self.released).max(0.0)
    }
}

/// Errors opening a series source. Each displays as one line naming the input and the problem.
#[derive(Debug, thiserror::Error)]
pub enum SeriesError {
    #[error("series file '{path}': no such file")]
    NotFound { path: String },
    #[error("series file '{path}': {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("series file '{path}': empty (no header)")]
    Empty { path: String },
    #[error("series file '{path}': no numeric value column (header: {header})")]
    NoNumericColumn { path: String, header: String },
    #[error("series file '{path}': no data rows (header: {header})")]
    NoRows { path: String, header: String },
    #[error("series file '{path}' line {line}: {problem}")]
    Row {
        path: String,
        line: u64,
        problem: String,
    },
    #[error("synthetic series: {0}")]
    Synthetic(String),
    #[error("{label}: cannot start the producer thread: {source}")]
    Spawn {
        label: String,
        #[source]
        source: std::io::Error,
    },
}

/// Rows of samples for all series of a source, column-major so that each series' values are one
/// slice for [`Series::push_slice`](super::store::Series::push_slice): `columns[series][row]`,
/// `times[row]`; NaN is a gap.
#[derive(Debug, Default)]
struct Batch {
    /// Row times in seconds (synthetic sources, CSV times that are not exact decimals).
    times: Vec<f64>,
    /// Row times in integer nanoseconds (CSV times read exactly, see [`parse_time_ns`]); a batch
    /// fills either this or `times`.
    times_ns: Vec<i64>,
    columns: Vec<Vec<f32>>,
    /// Value cells beyond the f32 range that were clamped to ±`f32::MAX`.
    clamped: u64,
    /// Where the batch's first clamped cell is (one line), if any.
    clamp_note: Option<String>,
    /// Rows that were earlier than the row before them and were sorted into place.
    rows_sorted: u64,
}

impl Batch {
    fn clear(&mut self) {
        self.times.clear();
        self.times_ns.clear();
        for c in &mut self.columns {
            c.clear();
        }
        self.clamped = 0;
        self.clamp_note = None;
        self.rows_sorted = 0;
    }

    /// Sorts the rows by time, stably (rows with equal times keep their order), so that rows
    /// written out of order inside one batch reach the store in place. Counts in `rows_sorted`
    /// the rows earlier than the row before them (the store's definition of out of order).
    /// Costs one pass when the rows are already in order.
    fn sort_rows(&mut self) {
        let late = if self.times_ns.is_empty() {
            self.times.windows(2).filter(|w| w[1] < w[0]).count()
        } else {
            self.times_ns.windows(2).filter(|w| w[1] < w[0]).count()
        };
        if late == 0 {
            return;
        }
        let mut order: Vec<usize> = (0..self.rows()).collect();
        if self.times_ns.is_empty() {
            let t = &self.times;
            order.sort_by(|&a, &b| t[a].total_cmp(&t[b]));
            self.times = order.iter().map(|&i| t[i]).collect();
        } else {
            let t = &self.times_ns;
            order.sort_by_key(|&i| t[i]);
            self.times_ns = order.iter().map(|&i| t[i]).collect();
        }
        for column in &mut self.columns {
            *column = order.iter().map(|&i| column[i]).collect();
        }
        self.rows_sorted += late as u64;
    }

    /// Rows in the batch.
    fn rows(&self) -> usize {
        self.times.len().max(self.times_ns.len())
    }

    /// Makes sure there are `n` columns.
    fn ensure_columns(&mut self, n: usize) {
        self.columns.resize_with(n, Vec::new);
    }
}

enum Msg {
    Batch(Batch),
    /// A late error; the thread has stopped.
    Error(String),
    /// All input delivered; the thread has stopped.
    Done,
    /// A row was skipped (the message says where and why); the thread goes on.
    Skipped(String),
}

/// Batches in flight for the synthetic wall-clock source (about 1 ms of data each).
const SYNTH_RING: usize = 1024;
/// Batches in flight for the CSV source; bounds the rows one `drain_into` moves.
const CSV_RING: usize = 16;
/// Rows in flight for a tailed CSV (one row per batch).
const CSV_TAIL_RING: usize = 4096;
/// Rows per CSV batch.
const CSV_BATCH_ROWS: usize = 4096;
/// Data rows read and validated synchronously in `open`.
const CSV_PREFIX_ROWS: usize = 100;
/// Rows per batch generated by `advance_to` / while catching up.
const SYNTH_MAX_BATCH_ROWS: u64 = 16 * 1024;
/// Time constant of the synthetic walks' mean reversion, seconds.
const SYNTH_TAU_S: f64 = 2.0;

/// A stream of samples for several named series. See the module docs for the threading.
pub struct SeriesSource {
    names: Vec<String>,
    label: String,
    inner: Inner,
    /// Batches produced on the caller's thread (driven synthetic, CSV rows validated in `open`).
    pending: VecDeque<Batch>,
    error: Option<String>,
    /// First non-fatal problem (e.g. a half-written last row that was skipped).
    warning: Option<String>,
    /// Rows read but not loaded (half-written last row).
    rows_skipped: u64,
    /// Value cells beyond the f32 range, clamped to ±`f32::MAX` (CSV).
    values_clamped: u64,
    /// Where the first clamped value cell was, one line.
    clamp_note: Option<String>,
    /// Unit of the time column (CSV; `None` for synthetic sources).
    time_unit: Option<TimeUnit>,
    /// CSV rows out of time order that were sorted into place within their batch.
    rows_sorted: u64,
    finished: bool,
    /// Synthetic: sample times are seconds of the source's own clock from 0 (see
    /// [`is_clocked`](SeriesSource::is_clocked)).
    clocked: bool,
    /// Store index of each of our series, rebuilt when the store does not match.
    map: Vec<usize>,
    /// Driven synthetic: paces the release after a jump of the caller's clock (off unless set).
    catch_up: Option<CatchUp>,
}

enum Inner {
    Driven(Synth),
    Thread {
        rx: Consumer<Msg>,
        recycle: Producer<Batch>,
        stop: Arc<AtomicBool>,
        lost: Arc<AtomicU64>,
        handle: Option<JoinHandle<()>>,
    },
}

impl SeriesSource {
    /// Opens a source. Synthetic: a thread follows the wall clock ([`Pacing::WallClock`]) or the
    /// caller drives time ([`Pacing::Driven`]). CSV: the header and the first rows are read and
    /// checked here (errors return here); then a thread streams the rest in batches.
    pub fn open(sel: &SeriesSelection, pacing: Pacing) -> Result<SeriesSource, SeriesError> {
        match sel {
            SeriesSelection::Synthetic {
                series,
                rate_hz,
                seed,
                kind,
            } => open_synthetic(*kind, *series, *rate_hz, *seed, pacing),
            SeriesSelection::Csv(path) => open_csv_with(path, false),
            SeriesSelection::CsvTail(path) => open_csv_with(path, true),
        }
    }

    /// Series names, in source order (CSV: header order).
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// One line describing the source, e.g. `synthetic: 4 random walks, 200000 samples/s`.
    pub fn label(&self) -> String {
        self.label.clone()
    }

    /// Driven pacing: generates every sample with time `< t_seconds` not generated yet (times are
    /// `k / rate_hz`, k = 0, 1, …). Cheap; the samples are stored by the next
    /// [`drain_into`](SeriesSource::drain_into). No-op for other sources and pacings.
    pub fn advance_to(&mut self, t_seconds: f64) {
        let Inner::Driven(synth) = &mut self.inner else {
            return;
        };
        let t = match &mut self.catch_up {
            Some(pace) => pace.release_until(t_seconds),
            None => t_seconds,
        };
        let target = synth.count_before(t);
        while synth.next_k < target {
            let end = target.min(synth.next_k + SYNTH_MAX_BATCH_ROWS);
            let mut batch = Batch::default();
            synth.fill(end, &mut batch);
            self.pending.push_back(batch);
        }
    }

    /// Driven synthetic pacing: releases a backlog after a jump of the caller's clock through
    /// `pace` ([`CatchUp`]), so [`advance_to`](SeriesSource::advance_to) hands over at most
    /// `pace.factor` times the real rate per call; `None` (the default) releases everything up to
    /// the time asked. The wall-clock producer always paces with [`CatchUp::default`]; other
    /// sources ignore this.
    pub fn set_catch_up(&mut self, pace: Option<CatchUp>) {
        self.catch_up = pace;
    }

    /// Source time owed but not yet released by the driven pacer, seconds (0 without one).
    pub fn backlog_s(&self) -> f64 {
        self.catch_up.map_or(0.0, |c| c.backlog_s())
    }

    /// Moves every available batch into `store` (series found or created by name). Never blocks.
    pub fn drain_into(&mut self, store: &mut Store) {
        self.sync_map(store);
        let mut counts = Counts {
            clamped: &mut self.values_clamped,
            note: &mut self.clamp_note,
            sorted: &mut self.rows_sorted,
        };
        while let Some(batch) = self.pending.pop_front() {
            apply(&self.map, &batch, store);
            note_batch(&mut counts, &batch);
        }
        if let Inner::Thread { rx, recycle, .. } = &mut self.inner {
            while let Ok(msg) = rx.pop() {
                match msg {
                    Msg::Batch(mut batch) => {
                        apply(&self.map, &batch, store);
                        note_batch(&mut counts, &batch);
                        batch.clear();
                        // A full recycle ring just frees the batch.
                        let _ = recycle.push(batch);
                    }
                    Msg::Error(e) => {
                        self.error = Some(e);
                        self.finished = true;
                    }
                    Msg::Done => self.finished = true,
                    Msg::Skipped(w) => {
                        self.rows_skipped += 1;
                        self.warning.get_or_insert(w);
                    }
                }
            }
        }
    }

    /// The first non-fatal problem (e.g. `series file 'x.csv' line 9: incomplete last row
    /// skipped`), one line.
    pub fn warning(&self) -> Option<String> {
        self.warning.clone()
    }

    /// Rows read but not loaded (a half-written last row).
    pub fn rows_skipped(&self) -> u64 {
        self.rows_skipped
    }

    /// Value cells (CSV) whose number lies beyond the f32 range the store and the GPU hold
    /// (|v| > 3.4028235e38, e.g. `1e308`): each was stored as ±`f32::MAX` instead of ±inf, so it
    /// draws at the edge of an axis that spans it. Counted over all series, taken so far.
    pub fn values_clamped(&self) -> u64 {
        self.values_clamped
    }

    /// The first clamped value cell (file, line, column, cell), one line; see
    /// [`values_clamped`](SeriesSource::values_clamped).
    pub fn clamp_note(&self) -> Option<String> {
        self.clamp_note.clone()
    }

    /// CSV rows that came earlier in time than the row before them and were sorted into place
    /// before reaching the store: rows are read in batches (4096 rows, the first up to 100) and
    /// each batch is sorted by time, stably. A row earlier than rows of an *earlier* batch (or
    /// any late row in tail mode, where a row is sent as soon as it is read) stays out of order
    /// in the store ([`Series::out_of_order`](super::store::Series::out_of_order)).
    pub fn rows_sorted(&self) -> u64 {
        self.rows_sorted
    }

    /// Unit the time column is read in (CSV, from the header name, see [`TimeUnit`]); `None`
    /// for synthetic sources.
    pub fn time_unit(&self) -> Option<TimeUnit> {
        self.time_unit
    }

    /// A late error from the producer thread (e.g. a bad row far into a CSV file), one line.
    pub fn error(&self) -> Option<String> {
        self.error.clone()
    }

    /// `true` once a finite source (CSV) has delivered everything, or stopped on an error, and
    /// `drain_into` has taken it all. Always `false` for synthetic sources.
    pub fn is_finished(&self) -> bool {
        self.finished && self.pending.is_empty()
    }

    /// `true` for synthetic sources, whose sample times are seconds since the source started
    /// (the scene clock in driven pacing, the wall clock otherwise); `false` for files, whose
    /// times are whatever the file says.
    pub fn is_clocked(&self) -> bool {
        self.clocked
    }

    /// Samples (rows × series) the wall-clock generator threw away because the ring was full
    /// (nobody drained for about a second).
    pub fn samples_lost(&self) -> u64 {
        match &self.inner {
            Inner::Thread { lost, .. } => lost.load(Ordering::Relaxed),
            Inner::Driven(_) => 0,
        }
    }

    fn sync_map(&mut self, store: &mut Store) {
        let valid = self.map.len() == self.names.len()
            && self
                .map
                .iter()
                .zip(&self.names)
                .all(|(&i, name)| store.series().get(i).is_some_and(|s| &s.name == name));
        if !valid {
            self.map = self.names.iter().map(|name| store.ensure(name)).collect();
        }
    }
}

impl Drop for SeriesSource {
    fn drop(&mut self) {
        if let Inner::Thread { stop, handle, .. } = &mut self.inner {
            stop.store(true, Ordering::Relaxed);
            if let Some(h) = handle.take() {
                let _ = h.join();
            }
        }
    }
}

/// Adds what `batch` counted (clamped values, with the first note; rows sorted) to the source.
fn note_batch(source: &mut Counts<'_>, batch: &Batch) {
    *source.clamped += batch.clamped;
    *source.sorted += batch.rows_sorted;
    if source.note.is_none() {
        source.note.clone_from(&batch.clamp_note);
    }
}

/// The counters of a [`SeriesSource`] that batches add to.
struct Counts<'a> {
    clamped: &'a mut u64,
    note: &'a mut Option<String>,
    sorted: &'a mut u64,
}

fn apply(map: &[usize], batch: &Batch, store: &mut Store) {
    for (column, &index) in batch.columns.iter().zip(map) {
        // Producers fill every column to the row count, so the lengths always pair up.
        let series = &mut store.series_mut()[index];
        let _ = if batch.times_ns.is_empty() {
            series.push_slice(&batch.times, column)
        } else {
            series.push_slice_ns(&batch.times_ns, column)
        };
    }
}

/// Pushes `msg`, waiting while the ring is full. Returns `false` if stopped meanwhile.
fn send(tx: &mut Producer<Msg>, mut msg: Msg, stop: &AtomicBool) -> bool {
    loop {
        match tx.push(msg) {
            Ok(()) => return true,
            Err(PushError::Full(m)) => {
                if stop.load(Ordering::Relaxed) || tx.is_abandoned() {
                    return false;
                }
                msg = m;
                std::thread::sleep(Duration::from_millis(1));
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Synthetic

/// splitmix64 (Steele, Lea, Flood 2014): seeds the per-series generators.
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// xorshift64* (Vigna 2016): one uniform draw in [0, 1).
fn next_unit(state: &mut u64) -> f64 {
    let mut x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    let r = x.wrapping_mul(0x2545_F491_4F6C_DD1D);
    (r >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// What the synthetic generator draws (`--series-kind`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum SynthKind {
    /// Mean-reverting random walks: a discretised Ornstein–Uhlenbeck process with time constant
    /// 2 s and unit stationary standard deviation (uniform steps), whatever the rate.
    #[default]
    Walk,
    /// Prices on a tick grid that move in bursts: each series starts at 100.00 and moves by whole
    /// ticks of 0.01; a two-state Markov chain alternates quiet stretches (about 5 one-tick moves/s)
    /// with bursts (about 500 moves/s of 1 to 3 ticks); bursts start about every 2 s and last about
    /// 0.2 s on average.
    Ticks,
    /// Sines: series `i` is `sin(2π · 0.5 Hz · (i + 1) · t)` exactly (t in seconds).
    Sines,
}

impl SynthKind {
    /// Series name stem and label noun (singular, plural).
    fn words(self) -> (&'static str, &'static str, &'static str) {
        match self {
            SynthKind::Walk => ("walk", "random walk", "random walks"),
            SynthKind::Ticks => ("ticks", "tick series (bursts)", "tick series (bursts)"),
            SynthKind::Sines => ("sine", "sine", "sines"),
        }
    }
}

/// Base frequency of [`SynthKind::Sines`]: series `i` runs at `(i + 1)` times it, Hz.
pub const SYNTH_SINE_BASE_HZ: f64 = 0.5;
/// Tick size of [`SynthKind::Ticks`].
pub const SYNTH_TICK: f64 = 0.01;
/// Starting price of [`SynthKind::Ticks`].
pub const SYNTH_TICK_START: f64 = 100.0;
/// [`SynthKind::Ticks`]: moves per second while quiet and during a burst.
const TICK_QUIET_MOVES_PER_S: f64 = 5.0;
const TICK_BURST_MOVES_PER_S: f64 = 500.0;
/// [`SynthKind::Ticks`]: bursts started per second of quiet, and mean burst length in seconds.
const TICK_BURSTS_PER_S: f64 = 0.5;
const TICK_BURST_MEAN_S: f64 = 0.2;
/// [`SynthKind::Ticks`]: largest move during a burst, in ticks.
const TICK_BURST_MAX_TICKS: f64 = 3.0;

/// Deterministic generator of `n` series of one [`SynthKind`] sampled at `k / rate` seconds.
struct Synth {
    kind: SynthKind,
    rate: f64,
    next_k: u64,
    rng: Vec<u64>,
    /// Walk: the walk's value. Ticks: the price in whole ticks above the start.
    state: Vec<f64>,
    /// Ticks: inside a burst.
    burst: Vec<bool>,
    decay: f64,
    step: f64,
}

impl Synth {
    fn new(kind: SynthKind, n: usize, rate: f64, seed: u64) -> Synth {
        let mut sm = seed;
        let rng = (0..n)
            .map(|_| splitmix64(&mut sm).max(1)) // xorshift state must be non-zero
            .collect();
        let decay = (-1.0 / (rate * SYNTH_TAU_S)).exp();
        // Uniform in [-1, 1) has variance 1/3; scale so the stationary variance is 1.
        let step = (3.0 * (1.0 - decay * decay)).sqrt();
        Synth {
            kind,
            rate,
            next_k: 0,
            rng,
            state: vec![0.0; n],
            burst: vec![false; n],
            decay,
            step,
        }
    }

    fn time_of(&self, k: u64) -> f64 {
        k as f64 / self.rate
    }

    /// Number of samples (per series) with time `< t`.
    fn count_before(&self, t: f64) -> u64 {
        if t.is_nan() || t <= 0.0 {
            return 0;
        }
        let mut k = (t * self.rate).ceil().min(9.0e15) as u64;
        while k > 0 && self.time_of(k - 1) >= t {
            k -= 1;
        }
        while self.time_of(k) < t {
            k += 1;
        }
        k
    }

    /// Appends rows `next_k..end` to `batch` (one column per series).
    fn fill(&mut self, end: u64, batch: &mut Batch) {
        let n = self.state.len();
        let (k0, k1) = (self.next_k, end.max(self.next_k));
        let rows = (k1 - k0) as usize;
        batch.ensure_columns(n);
        let at = batch.times.len();
        batch.times.extend((k0..k1).map(|k| self.time_of(k)));
        let times = &batch.times[at..];
        let per_sample = |per_s: f64| (per_s / self.rate).min(1.0);
        let (p_quiet, p_busy) = (
            per_sample(TICK_QUIET_MOVES_PER_S),
            per_sample(TICK_BURST_MOVES_PER_S),
        );
        let (p_start, p_end) = (
            per_sample(TICK_BURSTS_PER_S),
            per_sample(1.0 / TICK_BURST_MEAN_S),
        );
        for (s, column) in batch.columns.iter_mut().enumerate() {
            column.reserve(rows);
            let rng = &mut self.rng[s];
            let x = &mut self.state[s];
            match self.kind {
                SynthKind::Walk => column.extend((0..rows).map(|_| {
                    let u = next_unit(rng) * 2.0 - 1.0;
                    *x = *x * self.decay + u * self.step;
                    *x as f32
                })),
                SynthKind::Sines => {
                    let w = std::f64::consts::TAU * SYNTH_SINE_BASE_HZ * (s + 1) as f64;
                    column.extend(times.iter().map(|&t| (w * t).sin() as f32));
                }
                SynthKind::Ticks => {
                    let burst = &mut self.burst[s];
                    column.extend((0..rows).map(|_| {
                        let u = next_unit(rng);
                        if *burst {
                            if u < p_busy {
                                // Reuse the draw: u / p_busy is uniform in [0, 1).
                                let r = u / p_busy;
                                let size = (r * 2.0 * TICK_BURST_MAX_TICKS).floor();
                                // 0..2·max → −max..−1 and 1..max.
                                *x += if size < TICK_BURST_MAX_TICKS {
                                    size - TICK_BURST_MAX_TICKS
                                } else {
                                    size - TICK_BURST_MAX_TICKS + 1.0
                                };
                            }
                            if next_unit(rng) < p_end {
                                *burst = false;
                            }
                        } else {
                            if u < p_quiet {
                                *x += if u < 0.5 * p_quiet { -1.0 } else { 1.0 };
                            }
                            if next_unit(rng) < p_start {
                                *burst = true;
                            }
                        }
                        (SYNTH_TICK_START + *x * SYNTH_TICK) as f32
                    }));
                }
            }
        }
        self.next_k = k1;
    }
}

fn open_synthetic(
    kind: SynthKind,
    series: usize,
    rate_hz: f64,
    seed: u64,
    pacing: Pacing,
) -> Result<SeriesSource, SeriesError> {
    if series == 0 || series > 1024 {
        return Err(SeriesError::Synthetic(format!(
            "series count must be 1..=1024 (got {series})"
        )));
    }
    if !rate_hz.is_finite() || rate_hz <= 0.0 || rate_hz > 1.0e8 {
        return Err(SeriesError::Synthetic(format!(
            "rate must be a number of samples/s in (0, 1e8] (got {rate_hz})"
        )));
    }
    let (stem, one, many) = kind.words();
    let names = (0..series).map(|i| format!("{stem} {i}")).collect();
    let total = series as f64 * rate_hz;
    let label = format!(
        "synthetic: {series} {}, {total} samples/s",
        if series == 1 { one } else { many }
    );
    let synth = Synth::new(kind, series, rate_hz, seed);
    let inner = match pacing {
        Pacing::Driven => Inner::Driven(synth),
        Pacing::WallClock => {
            let (tx, rx) = RingBuffer::new(SYNTH_RING);
            let (recycle, recycled) = RingBuffer::new(SYNTH_RING);
            let stop = Arc::new(AtomicBool::new(false));
            let lost = Arc::new(AtomicU64::new(0));
            let (stop2, lost2) = (stop.clone(), lost.clone());
            let handle = std::thread::Builder::new()
                .name("vizdeck-series-synth".into())
                .spawn(move || run_synthetic(synth, tx, recycled, &stop2, &lost2))
                .map_err(|source| SeriesError::Spawn {
                    label: label.clone(),
                    source,
                })?;
            Inner::Thread {
                rx,
                recycle,
                stop,
                lost,
                handle: Some(handle),
            }
        }
    };
    Ok(SeriesSource {
        names,
        label,
        inner,
        pending: VecDeque::new(),
        error: None,
        warning: None,
        rows_skipped: 0,
        values_clamped: 0,
        clamp_note: None,
        time_unit: None,
        rows_sorted: 0,
        finished: false,
        clocked: true,
        map: Vec::new(),
        catch_up: None,
    })
}

/// Wall-clock producer: every ~1 ms, generates the samples whose time has passed (paced by
/// [`CatchUp::default`] after a stall) and pushes them.
/// When the ring is full (nobody drains) the samples are counted in `lost` and discarded.
fn run_synthetic(
    mut synth: Synth,
    mut tx: Producer<Msg>,
    mut recycled: Consumer<Batch>,
    stop: &AtomicBool,
    lost: &AtomicU64,
) {
    let start = Instant::now();
    let n = synth.state.len() as u64;
    let mut pace = CatchUp::default();
    while !stop.load(Ordering::Relaxed) && !tx.is_abandoned() {
        // After a stall of this thread the backlog is released over several passes.
        let target = synth.count_before(pace.release_until(start.elapsed().as_secs_f64()));
        while synth.next_k < target {
            let end = target.min(synth.next_k + SYNTH_MAX_BATCH_ROWS);
            let mut batch = recycled.pop().unwrap_or_default();
            synth.fill(end, &mut batch);
            if let Err(PushError::Full(Msg::Batch(b))) = tx.push(Msg::Batch(batch)) {
                lost.fetch_add(b.times.len() as u64 * n, Ordering::Relaxed);
            }
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

// ---------------------------------------------------------------------------------------------
// CSV

/// A reader that, at the end of the file, waits for more data instead of ending (tail mode),
/// until `stop` is set.
struct Tail<R> {
    inner: R,
    stop: Arc<AtomicBool>,
}

impl<R: Read> Read for Tail<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        loop {
            let n = self.inner.read(buf)?;
            if n > 0 || buf.is_empty() || self.stop.load(Ordering::Relaxed) {
                return Ok(n);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

type CsvInput = Box<dyn Read + Send>;

/// What the CSV thread needs to parse rows.
struct CsvLayout {
    path: String,
    /// Fields per row (header length).
    fields: usize,
    /// Column index and name of each value series.
    value_cols: Vec<(usize, String)>,
    /// Unit of the time column (from its header name).
    unit: TimeUnit,
    /// `true`: time cells are read exactly into integer nanoseconds ([`parse_time_ns`]);
    /// `false`: as f64 in `unit` (the first rows held a time that is not an exact decimal in
    /// the i64 nanosecond range).
    exact_ns: bool,
}

/// Unit of a CSV time column, read from the suffix of its header name (case-insensitive):
/// `_ns` nanoseconds, `_us` or `_µs` microseconds, `_ms` milliseconds, `_s` or anything else
/// seconds (a headerless file's time column is in seconds).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TimeUnit {
    #[default]
    Seconds,
    Millis,
    Micros,
    Nanos,
}

impl TimeUnit {
    /// The unit named by the suffix of header `name` (see the type's docs).
    pub fn from_header(name: &str) -> TimeUnit {
        let name = name.trim().to_lowercase();
        if name.ends_with("_ns") {
            TimeUnit::Nanos
        } else if name.ends_with("_us") || name.ends_with("_µs") {
            TimeUnit::Micros
        } else if name.ends_with("_ms") {
            TimeUnit::Millis
        } else {
            TimeUnit::Seconds
        }
    }

    /// Nanoseconds per unit as a power of ten: 9 (s), 6 (ms), 3 (µs), 0 (ns).
    pub fn ns_exponent(self) -> u32 {
        match self {
            TimeUnit::Seconds => 9,
            TimeUnit::Millis => 6,
            TimeUnit::Micros => 3,
            TimeUnit::Nanos => 0,
        }
    }

    /// Symbol of the unit: `s`, `ms`, `µs`, `ns`.
    pub fn symbol(self) -> &'static str {
        match self {
            TimeUnit::Seconds => "s",
            TimeUnit::Millis => "ms",
            TimeUnit::Micros => "µs",
            TimeUnit::Nanos => "ns",
        }
    }
}

/// Reads a decimal time cell in `unit` exactly as integer nanoseconds: optional sign, digits
/// with an optional `.` fraction, optional exponent (`e`/`E`), e.g. `1700000000.000001` (s) →
/// `1_700_000_000_000_001_000`. The decimal digits are scaled by powers of ten in integer
/// arithmetic (i128), never through a binary float, so times one microsecond (or nanosecond)
/// apart at Unix-epoch scale stay exactly that far apart. Digits finer than a nanosecond are
/// rounded to the nearest nanosecond (ties away from zero); digits past the 36th significant
/// one are ignored (they lie far below a nanosecond for any time that fits).
///
/// Returns `None` for anything else (`inf`, `NaN`, hex, empty) and for times outside the i64
/// nanosecond range (about ±292 years around 1970 for epoch times).
pub fn parse_time_ns(cell: &str, unit: TimeUnit) -> Option<i64> {
    /// Significant digits kept in the i128 mantissa (10^36 < i128::MAX / 100).
    const MAX_DIGITS: u32 = 36;
    let b = cell.as_bytes();
    let mut i = 0;
    let negative = match b.first() {
        Some(b'-') => {
            i = 1;
            true
        }
        Some(b'+') => {
            i = 1;
            false
        }
        _ => false,
    };
    let mut mantissa: i128 = 0;
    let mut significant = 0u32;
    let mut exponent: i64 = 0;
    let mut any = false;
    while let Some(d) = b.get(i).filter(|c| c.is_ascii_digit()) {
        any = true;
        if significant < MAX_DIGITS {
            mantissa = mantissa * 10 + (d - b'0') as i128;
            significant += (mantissa != 0) as u32;
        } else {
            exponent += 1;
        }
        i += 1;
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        while let Some(d) = b.get(i).filter(|c| c.is_ascii_digit()) {
            any = true;
            if significant < MAX_DIGITS {
                mantissa = mantissa * 10 + (d - b'0') as i128;
                significant += (mantissa != 0) as u32;
                exponent -= 1;
            }
            i += 1;
        }
    }
    if !any {
        return None;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        let sign = match b.get(i) {
            Some(b'-') => {
                i += 1;
                -1
            }
            Some(b'+') => {
                i += 1;
                1
            }
            _ => 1,
        };
        let mut e: i64 = 0;
        let mut digits = false;
        while let Some(d) = b.get(i).filter(|c| c.is_ascii_digit()) {
            digits = true;
            e = (e * 10 + (d - b'0') as i64).min(100_000);
            i += 1;
        }
        if !digits {
            return None;
        }
        exponent += sign * e;
    }
    if i != b.len() {
        return None;
    }
    let e = exponent + unit.ns_exponent() as i64;
    let magnitude: i128 = if mantissa == 0 {
        0
    } else if e >= 0 {
        if e > 38 {
            return None;
        }
        mantissa.checked_mul(10i128.pow(e as u32))?
    } else if -e > MAX_DIGITS as i64 {
        // mantissa < 10^36 ≤ 10^-e / 10: less than a tenth of a nanosecond.
        0
    } else {
        let p = 10i128.pow((-e) as u32);
        let (q, r) = (mantissa / p, mantissa % p);
        q + (2 * r >= p) as i128
    };
    i64::try_from(if negative { -magnitude } else { magnitude }).ok()
}

impl CsvLayout {
    fn row_error(&self, line: u64, problem: String) -> SeriesError {
        SeriesError::Row {
            path: self.path.clone(),
            line,
            problem,
        }
    }

    /// Parses one data row into `batch` (all or nothing).
    fn parse_row(&self, rec: &csv::StringRecord, batch: &mut Batch) -> Result<(), SeriesError> {
        let line = rec.position().map_or(0, |p| p.line());
        if rec.len() != self.fields {
            return Err(self.row_error(
                line,
                format!("{} fields, the header has {}", rec.len(), self.fields),
            ));
        }
        let cell = &rec[0];
        if cell.is_empty() {
            return Err(self.row_error(line, "time cell is empty".into()));
        }
        let as_f64 = cell.parse::<f64>();
        let t_ns = if self.exact_ns {
            match (parse_time_ns(cell, self.unit), &as_f64) {
                (Some(ns), _) => Some(ns),
                (None, Ok(t)) if t.is_finite() => {
                    return Err(self.row_error(
                        line,
                        format!(
                            "time '{cell}' ({}) is outside the nanosecond range of the earlier \
                             rows (about ±292 years around 0)",
                            self.unit.symbol()
                        ),
                    ));
                }
                (None, Ok(_)) => {
                    return Err(self.row_error(line, format!("time '{cell}' is not finite")));
                }
                (None, Err(_)) => {
                    return Err(self.row_error(
                        line,
                        format!("time '{}' is not a number", crate::text::one_line(cell)),
                    ));
                }
            }
        } else {
            None
        };
        let t = match as_f64 {
            Ok(t) if t.is_finite() => t / 10f64.powi(9 - self.unit.ns_exponent() as i32),
            Ok(_) => return Err(self.row_error(line, format!("time '{cell}' is not finite"))),
            Err(_) => {
                return Err(self.row_error(
                    line,
                    format!("time '{}' is not a number", crate::text::one_line(cell)),
                ));
            }
        };
        let mark = batch.rows();
        let mut clamped = 0u64;
        let mut first_clamp = None;
        batch.ensure_columns(self.value_cols.len());
        for ((c, name), column) in self.value_cols.iter().zip(&mut batch.columns) {
            match parse_value(&rec[*c]) {
                Some((v, was_clamped)) => {
                    column.push(v);
                    if was_clamped {
                        clamped += 1;
                        first_clamp.get_or_insert_with(|| {
                            format!(
                                "series file '{}' line {line}: column '{}': '{}' is beyond \
                                 the f32 range (±3.4e38); drawn clamped to ±3.4e38",
                                self.path,
                                crate::text::one_line(name),
                                &rec[*c]
                            )
                        });
                    }
                }
                None => {
                    for column in &mut batch.columns {
                        column.truncate(mark);
                    }
                    return Err(self.row_error(
                        line,
                        format!(
                            "column '{}': '{}' is not a number",
                            crate::text::one_line(name),
                            crate::text::one_line(&rec[*c])
                        ),
                    ));
                }
            }
        }
        match t_ns {
            Some(ns) => batch.times_ns.push(ns),
            None => batch.times.push(t),
        }
        batch.clamped += clamped;
        if batch.clamp_note.is_none() {
            batch.clamp_note = first_clamp;
        }
        Ok(())
    }
}

/// A value cell: empty, `NaN` or ±`inf` → NaN (a gap); a number with a dot decimal (whatever the
/// locale) → its value rounded to f32, `true` when it lies beyond the f32 range (|v| rounds
/// past 3.4028235e38, including numbers beyond the f64 range such as `1e400`) and was clamped
/// to ±`f32::MAX`; otherwise `None`.
fn parse_value(cell: &str) -> Option<(f32, bool)> {
    if cell.is_empty() {
        return Some((f32::NAN, false));
    }
    cell.parse::<f64>().ok().map(|v| {
        // Written as digits but beyond f64 (`1e400` parses as inf): a huge number, not `inf`.
        let huge = v.is_infinite() && cell.bytes().any(|b| b.is_ascii_digit());
        if !v.is_finite() && !huge {
            return (f32::NAN, false);
        }
        let f = v as f32;
        if f.is_infinite() {
            (f32::MAX.copysign(f), true)
        } else {
            (f, false)
        }
    })
}

fn csv_error(path: &str, e: csv::Error) -> SeriesError {
    let line = e.position().map_or(0, |p| p.line());
    match e.into_kind() {
        csv::ErrorKind::Io(source) => SeriesError::Io {
            path: path.to_string(),
            source,
        },
        csv::ErrorKind::Utf8 { .. } => SeriesError::Row {
            path: path.to_string(),
            line,
            problem: "invalid UTF-8".into(),
        },
        other => SeriesError::Row {
            path: path.to_string(),
            line,
            problem: format!("{other:?}"),
        },
    }
}

/// The delimiter of a CSV whose first line is `line`: the most frequent of `,` `;` and tab
/// outside double quotes (`,` on ties or when none occurs).
pub fn sniff_delimiter(line: &[u8]) -> u8 {
    let mut counts = [0usize; 3];
    let mut quoted = false;
    for &b in line {
        match b {
            b'"' => quoted = !quoted,
            b',' if !quoted => counts[0] += 1,
            b';' if !quoted => counts[1] += 1,
            b'\t' if !quoted => counts[2] += 1,
            b'\n' if !quoted => break,
            _ => {}
        }
    }
    let delims = [b',', b';', b'\t'];
    let mut best = 0;
    for i in 1..3 {
        if counts[i] > counts[best] {
            best = i;
        }
    }
    delims[best]
}

/// The header and the first rows of a CSV, read and checked on the calling thread; the reader
/// is left at the first row not read yet.
struct CsvStart<R> {
    reader: csv::Reader<R>,
    layout: CsvLayout,
    /// Series names, in column order.
    names: Vec<String>,
    /// The first rows, sorted.
    batch0: Batch,
    /// The incomplete last row that was skipped, if the first rows reached the end.
    warning: Option<String>,
    rows_skipped: u64,
    /// Whether the first rows reached the end of the input.
    eof: bool,
}

/// Reads the header of the CSV `input` and up to `want` data rows (see [`open_csv_with`] for
/// the format); `shown` names the input in messages.
fn start_csv<R: Read>(
    input: R,
    shown: &str,
    want: usize,
    tail: bool,
) -> Result<CsvStart<BufReader<R>>, SeriesError> {
    let mut buffered = BufReader::with_capacity(1 << 16, input);
    let io = |source| SeriesError::Io {
        path: shown.to_string(),
        source,
    };
    // UTF-8 byte-order mark.
    let head = buffered.fill_buf().map_err(io)?;
    if head.starts_with(&[0xEF, 0xBB, 0xBF]) {
        buffered.consume(3);
    }
    let head = buffered.fill_buf().map_err(io)?;
    let delimiter = sniff_delimiter(head);
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .delimiter(delimiter)
        .trim(csv::Trim::All)
        .from_reader(buffered);

    let mut first = csv::StringRecord::new();
    if !reader
        .read_record(&mut first)
        .map_err(|e| csv_error(shown, e))?
        || first.is_empty()
        || (first.len() == 1 && first[0].is_empty())
    {
        return Err(SeriesError::Empty {
            path: shown.to_string(),
        });
    }
    let headerless = first
        .iter()
        .all(|c| !c.is_empty() && c.parse::<f64>().is_ok());
    let header: Vec<String> = if headerless {
        (0..first.len())
            .map(|c| if c == 0 { "time".into() } else { String::new() })
            .collect()
    } else {
        first.iter().map(str::to_string).collect()
    };
    // Cells are quoted in messages, which are one line: a quoted cell may hold a line break.
    let header_line = header
        .iter()
        .map(|h| crate::text::one_line(h))
        .collect::<Vec<_>>()
        .join(", ");

    // Read the first rows; they decide which columns are numeric.
    let mut prefix = Vec::new();
    if headerless {
        prefix.push(first.clone());
    }
    let mut eof = false;
    while prefix.len() < want {
        let mut rec = csv::StringRecord::new();
        if !reader
            .read_record(&mut rec)
            .map_err(|e| csv_error(shown, e))?
        {
            eof = true;
            break;
        }
        prefix.push(rec);
    }
    if prefix.is_empty() {
        return Err(SeriesError::NoRows {
            path: shown.to_string(),
            header: header_line,
        });
    }

    let mut value_cols: Vec<(usize, String)> = Vec::new();
    for (c, head) in header.iter().enumerate().skip(1) {
        // The last prefix row may be half-written: judge on the others when there are any.
        let judged = if eof && prefix.len() > 1 {
            &prefix[..prefix.len() - 1]
        } else {
            &prefix[..]
        };
        let cells = judged.iter().filter_map(|r| r.get(c));
        let mut any = false;
        let mut numeric = true;
        for cell in cells.filter(|cell| !cell.is_empty()) {
            any = true;
            numeric &= cell.parse::<f64>().is_ok();
        }
        if any && numeric {
            let base = if head.is_empty() {
                format!("column {}", c + 1)
            } else {
                head.to_string()
            };
            let mut name = base.clone();
            let mut k = 2;
            while value_cols.iter().any(|(_, n)| *n == name) {
                name = format!("{base} #{k}");
                k += 1;
            }
            value_cols.push((c, name));
        }
    }
    if value_cols.is_empty() {
        return Err(SeriesError::NoNumericColumn {
            path: shown.to_string(),
            header: header_line,
        });
    }

    let unit = if headerless {
        TimeUnit::Seconds
    } else {
        TimeUnit::from_header(&header[0])
    };
    // Exact integer nanoseconds unless a number in the first rows cannot be read that way.
    let exact_ns = prefix
        .iter()
        .filter_map(|r| r.get(0))
        .all(|cell| parse_time_ns(cell, unit).is_some() || cell.parse::<f64>().is_err());
    let layout = CsvLayout {
        path: shown.to_string(),
        fields: header.len(),
        value_cols,
        unit,
        exact_ns,
    };
    let mut batch0 = Batch::default();
    let mut warning = None;
    let mut rows_skipped = 0;
    let n_prefix = prefix.len();
    for (k, rec) in prefix.iter().enumerate() {
        if let Err(e) = layout.parse_row(rec, &mut batch0) {
            if eof && k + 1 == n_prefix && !tail {
                warning = Some(format!("{e} (incomplete last row skipped)"));
                rows_skipped = 1;
            } else {
                return Err(e);
            }
        }
    }
    batch0.sort_rows();
    let names = layout.value_cols.iter().map(|(_, n)| n.clone()).collect();
    Ok(CsvStart {
        reader,
        layout,
        names,
        batch0,
        warning,
        rows_skipped,
        eof,
    })
}

/// Opens a CSV series source.
///
/// Accepted: a UTF-8 byte-order mark; LF or CRLF line ends; fields quoted with `"`; delimiter `,`
/// `;` or tab (detected from the first line); an optional header row (there is none when every
/// cell of the first row is a number, and the series are then called `column 2`, …); numbers with
/// a dot decimal in any locale; empty, `NaN` and ±`inf` cells as gaps. A half-written last row
/// (wrong field count or an unparsable cell in the final row) is skipped with a
/// [`warning`](SeriesSource::warning) and counted in [`rows_skipped`](SeriesSource::rows_skipped).
/// Times: the first column, in the [`TimeUnit`] its header name's suffix gives (`t_ns`:
/// nanoseconds, `t_us`, `t_ms`, else seconds). They are read exactly as integer nanoseconds
/// ([`parse_time_ns`]), so µs or ns steps at Unix-epoch scale keep their spacing; when a time in
/// the first rows is not such a decimal (beyond ±292 years in ns), the file is read as f64 in
/// its unit instead. Values beyond the f32 range are clamped to ±`f32::MAX` and counted
/// ([`values_clamped`](SeriesSource::values_clamped)). Rows out of time order are sorted into
/// place within each batch of rows ([`rows_sorted`](SeriesSource::rows_sorted)).
/// `path` `-` reads standard input. `tail`: after the end of the file, keep reading what is
/// appended (another program is writing it) until the source is dropped.
///
/// Blocking: the header and the first rows (the first row only for stdin and tail mode) are read
/// here; then a thread streams the rest.
pub fn open_csv_with(path: &Path, tail: bool) -> Result<SeriesSource, SeriesError> {
    let stdin = path.as_os_str() == "-";
    let shown = if stdin {
        "<stdin>".to_string()
    } else {
        path.display().to_string()
    };
    let stop = Arc::new(AtomicBool::new(false));
    let input: CsvInput = if stdin {
        Box::new(std::io::stdin())
    } else {
        let file = File::open(path).map_err(|source| match source.kind() {
            std::io::ErrorKind::NotFound => SeriesError::NotFound {
                path: shown.clone(),
            },
            _ => SeriesError::Io {
                path: shown.clone(),
                source,
            },
        })?;
        if file.metadata().is_ok_and(|m| m.is_dir()) {
            return Err(SeriesError::Io {
                path: shown,
                source: std::io::Error::other("is a directory"),
            });
        }
        if tail {
            Box::new(Tail {
                inner: file,
                stop: stop.clone(),
            })
        } else {
            Box::new(file)
        }
    };
    let want = if stdin || tail { 1 } else { CSV_PREFIX_ROWS };
    let CsvStart {
        reader,
        layout,
        names,
        batch0,
        warning,
        rows_skipped,
        eof,
    } = start_csv(input, &shown, want, tail)?;
    let unit = layout.unit;
    let label = if tail {
        format!("csv (tail): {shown}")
    } else {
        format!("csv: {shown}")
    };
    let mut pending = VecDeque::new();
    pending.push_back(batch0);

    let ring = if tail { CSV_TAIL_RING } else { CSV_RING };
    let (tx, rx) = RingBuffer::new(ring);
    let (recycle, recycled) = RingBuffer::new(ring);
    let lost = Arc::new(AtomicU64::new(0));
    let handle = if eof {
        // Everything is in `pending` already; the thread only reports the end.
        let mut tx = tx;
        let _ = tx.push(Msg::Done);
        None
    } else {
        let stop2 = stop.clone();
        Some(
            std::thread::Builder::new()
                .name("vizdeck-series-csv".into())
                .spawn(move || run_csv(reader, layout, tx, recycled, &stop2, tail))
                .map_err(|source| SeriesError::Spawn {
                    label: label.clone(),
                    source,
                })?,
        )
    };
    // A thread blocked reading stdin cannot be woken: it is detached, not joined.
    let handle = if stdin { None } else { handle };
    Ok(SeriesSource {
        names,
        label,
        inner: Inner::Thread {
            rx,
            recycle,
            stop,
            lost,
            handle,
        },
        pending,
        error: None,
        warning,
        rows_skipped,
        values_clamped: 0,
        clamp_note: None,
        time_unit: Some(unit),
        rows_sorted: 0,
        finished: false,
        clocked: false,
        map: Vec::new(),
        catch_up: None,
    })
}

/// Reads a whole CSV held in memory on the calling thread, as [`open_csv_with`] reads a file
/// (same format, same batches, same errors and warnings; no thread, no tail): `bytes` is the
/// file's content and `name` what messages call it. The returned source already holds every
/// row: one [`drain_into`](SeriesSource::drain_into) moves them all into a store, after which
/// [`is_finished`](SeriesSource::is_finished) is `true` and a bad row past the first 100 is in
/// [`error`](SeriesSource::error).
///
/// # Errors
///
/// Those of [`open_csv_with`] that concern the content (empty, no numeric column, no rows, a
/// bad row among the first 100), each one line naming `name`.
pub fn open_csv_bytes(bytes: &[u8], name: &str) -> Result<SeriesSource, SeriesError> {
    let CsvStart {
        mut reader,
        layout,
        names,
        batch0,
        warning,
        rows_skipped,
        eof,
    } = start_csv(bytes, name, CSV_PREFIX_ROWS, false)?;
    let mut pending = VecDeque::new();
    pending.push_back(batch0);
    // Only the closing messages travel through the ring (at most `Skipped` and `Done`).
    let (mut tx, rx) = RingBuffer::new(CSV_RING);
    let (recycle, _) = RingBuffer::new(1);
    let stop = Arc::new(AtomicBool::new(false));
    if eof {
        let _ = tx.push(Msg::Done);
    } else {
        read_csv_rows(
            &mut reader,
            &layout,
            false,
            Batch::default,
            |msg| {
                match msg {
                    Msg::Batch(batch) => pending.push_back(batch),
                    other => {
                        let _ = tx.push(other);
                    }
                }
                true
            },
            &stop,
        );
    }
    Ok(SeriesSource {
        names,
        label: format!("csv: {name}"),
        inner: Inner::Thread {
            rx,
            recycle,
            stop,
            lost: Arc::new(AtomicU64::new(0)),
            handle: None,
        },
        pending,
        error: None,
        warning,
        rows_skipped,
        values_clamped: 0,
        clamp_note: None,
        time_unit: Some(layout.unit),
        rows_sorted: 0,
        finished: false,
        clocked: false,
        map: Vec::new(),
        catch_up: None,
    })
}

/// CSV producer: reads the remaining rows in batches; waits while the ring is full; ends with
/// `Done` or with the first error. A bad row that turns out to be the last one is skipped with a
/// warning (a half-written last line) instead. In tail mode batches are sent as soon as the
/// reader has to wait for more data.
fn run_csv(
    mut reader: csv::Reader<BufReader<CsvInput>>,
    layout: CsvLayout,
    mut tx: Producer<Msg>,
    mut recycled: Consumer<Batch>,
    stop: &AtomicBool,
    tail: bool,
) {
    read_csv_rows(
        &mut reader,
        &layout,
        tail,
        || recycled.pop().unwrap_or_default(),
        |msg| send(&mut tx, msg, stop),
        stop,
    );
}

/// The rows of a CSV after its first rows, as [`run_csv`] reads them: batches of rows (one row
/// in tail mode) taken from `fresh` and handed to `emit` (which returns `false` to stop), then
/// `Skipped` for a bad last row, then `Done` or `Error`.
fn read_csv_rows<R: Read>(
    reader: &mut csv::Reader<R>,
    layout: &CsvLayout,
    tail: bool,
    mut fresh: impl FnMut() -> Batch,
    mut emit: impl FnMut(Msg) -> bool,
    stop: &AtomicBool,
) {
    let mut rec = csv::StringRecord::new();
    let mut failed: Option<SeriesError> = None;
    // Tail mode: a row is sent as soon as it is read (the reader may then wait a long time).
    let batch_rows = if tail { 1 } else { CSV_BATCH_ROWS };
    loop {
        let mut batch = fresh();
        let mut end: Option<Msg> = None;
        while batch.rows() < batch_rows {
            match reader.read_record(&mut rec) {
                Ok(true) => {
                    if let Some(e) = failed.take() {
                        // The failed row was not the last one: a real error.
                        end = Some(Msg::Error(e.to_string()));
                        break;
                    }
                    if let Err(e) = layout.parse_row(&rec, &mut batch) {
                        failed = Some(e);
                    }
                }
                Ok(false) => {
                    if let Some(e) = failed.take() {
                        let _ = emit(Msg::Skipped(format!("{e} (incomplete last row skipped)")));
                    }
                    end = Some(Msg::Done);
                    break;
                }
                Err(e) => {
                    end = Some(Msg::Error(csv_error(&layout.path, e).to_string()));
                    break;
                }
            }
        }
        batch.sort_rows();
        if batch.rows() > 0 && !emit(Msg::Batch(batch)) {
            return;
        }
        if let Some(msg) = end {
            emit(msg);
            return;
        }
        if stop.load(Ordering::Relaxed) {
            return;
        }
    }
}
