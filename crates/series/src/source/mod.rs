//! Series sources: a synthetic generator (random walks, ticks with bursts or sines, any number of
//! series, up to 1e8 samples/s per series), a CSV reader (wide or long format), a Parquet / Arrow
//! IPC reader and live network sources (MQTT, ZeroMQ, UDP; [`net`]), each feeding a [`Store`]
//! from its own producer thread.
//!
//! Threads: a source that streams owns one producer thread. Batches travel to the render thread
//! through an `rtrb` SPSC ring (wait-free on both sides); emptied batches travel back through a
//! second ring so that steady-state streaming does not allocate. A batch holds rows of all the
//! source's series (column-major), or points that each name their series (long-format rows,
//! network messages), and the names of the series it starts: the source's series grow as they
//! appear, up to [`MAX_SERIES`]. Late errors and the end of input travel through the same ring as
//! messages, so the render thread never takes a lock. [`SeriesSource::drain_into`] only pops
//! from the ring and never waits.
//!
//! Dropping a [`SeriesSource`] sets a stop flag and joins its thread (the thread checks the flag at
//! least every few milliseconds).
//!
//! Files: `mod.rs` the source and its accessors; `ring.rs` the batches and messages a producer
//! thread sends and the thread's start; `drain.rs` batches moved into the store; `pacing.rs`
//! how a synthetic source advances and catch-up pacing; `error.rs` the errors of opening a
//! source; `synth.rs` the synthetic generator; `csv_reader/` the CSV reader (layout, key
//! column, rows, tail mode, bytes); `columnar/` Parquet and Arrow IPC files; `net/` network
//! sources; `payload/` their message payloads; `time.rs` time units and the exact parse of time
//! cells; `dates.rs` date cells and the time zone.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rtrb::{Consumer, Producer, PushError, RingBuffer};

mod columnar;
mod csv_reader;
pub mod dates;
mod drain;
mod error;
pub mod net;
mod pacing;
pub mod payload;
mod ring;
mod synth;
mod time;

pub use columnar::{ColumnarFormat, open_columnar, open_columnar_bytes};
pub use csv_reader::{CsvOptions, open_csv_bytes, open_csv_opts, open_csv_with, sniff_delimiter};
pub use error::SeriesError;
pub use pacing::{CatchUp, Pacing};
use ring::{Batch, Msg, send, spawn_producer};
pub use synth::{SYNTH_SINE_BASE_HZ, SYNTH_TICK, SYNTH_TICK_START, SynthKind};
use synth::{Synth, open_synthetic};
pub use time::{TimeUnit, parse_time_ns};

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
    /// A CSV file whose time column reads as the options say (`--time-format`,
    /// `--time-unit`, `--series-key`).
    CsvWith(PathBuf, CsvOptions),
    /// A live network source (`--series-source URL`): MQTT, ZeroMQ or UDP; see [`net`].
    Net(net::NetOptions),
    /// A Parquet or Arrow IPC (Feather v2) file: a timestamp, date or numeric time column, numeric
    /// columns are series, read one row group or record batch at a time. See [`open_columnar`].
    Columnar(PathBuf),
}

impl SeriesSelection {
    /// The selection that reads file `path`: Parquet / Arrow IPC by its extension
    /// ([`ColumnarFormat::of_path`]), else a CSV read with `csv` (the defaults: plain
    /// [`Csv`](SeriesSelection::Csv)).
    pub fn of_file(path: PathBuf, csv: CsvOptions) -> SeriesSelection {
        if ColumnarFormat::of_path(&path).is_some() {
            SeriesSelection::Columnar(path)
        } else if csv == CsvOptions::default() {
            SeriesSelection::Csv(path)
        } else {
            SeriesSelection::CsvWith(path, csv)
        }
    }

    /// The file this selection reads, if it reads one.
    pub fn file(&self) -> Option<&Path> {
        match self {
            SeriesSelection::Csv(p)
            | SeriesSelection::CsvTail(p)
            | SeriesSelection::CsvWith(p, _)
            | SeriesSelection::Columnar(p) => Some(p),
            _ => None,
        }
    }
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

/// A text column of a CSV that could split its rows into series (long format).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyCandidate {
    /// The column's header name.
    pub column: String,
    /// Distinct values in the column: among the first rows while the file is read, in the whole
    /// file once it is (a column that turns out to hold more than [`KEY_MAX_VALUES`] is then no
    /// longer offered).
    pub values: usize,
}

/// Most distinct values a column of the first rows may repeat to be offered as a series key.
pub(crate) const KEY_MAX_VALUES: usize = 64;

/// Most series one source starts from its data (long-format key values, network message
/// fields): rows or messages that would start more are counted
/// ([`series_refused`](SeriesSource::series_refused)) and not stored.
pub const MAX_SERIES: usize = 1024;

/// Payload times a network source keeps between two
/// [`take_message_times`](SeriesSource::take_message_times).
pub(crate) const MESSAGE_TIMES_KEPT: usize = 1 << 16;

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
    /// The time column's date format (strftime pattern), when it holds dates (CSV).
    time_format: Option<String>,
    /// CSV rows out of time order that were sorted into place within their batch.
    rows_sorted: u64,
    /// Rows or messages not stored because their series would pass [`MAX_SERIES`].
    series_refused: u64,
    /// Long-format CSV: text columns that repeat few distinct values (see
    /// [`key_candidates`](SeriesSource::key_candidates)).
    key_candidates: Vec<KeyCandidate>,
    /// Long-format CSV: the key column's name, when rows are split by it.
    series_key: Option<String>,
    /// Network sources: the connection's counters.
    link: Option<Arc<net::LinkStats>>,
    /// Network sources: messages and bytes per second, measured over about half a second.
    rates: Rates,
    /// Payload times of the messages stored since the last
    /// [`take_message_times`](SeriesSource::take_message_times) (at most [`MESSAGE_TIMES_KEPT`]).
    message_times: Vec<i64>,
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

/// Messages and bytes per second of a network source, from its counters sampled every half
/// second or more.
#[derive(Clone, Copy, Debug, Default)]
struct Rates {
    at: Option<Instant>,
    messages: u64,
    bytes: u64,
    per_s: (f64, f64),
}

/// What the side panel shows of a network source's connection.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkView {
    pub state: net::LinkState,
    /// Messages received, and per second.
    pub messages: u64,
    pub messages_per_s: f64,
    /// Payload bytes per second.
    pub bytes_per_s: f64,
    /// Series the source has started.
    pub series: usize,
    /// Messages that did not decode, and the first few errors.
    pub parse_errors: u64,
    pub errors: Vec<String>,
    /// Messages dropped by vizdeck (ring to the render thread full).
    pub dropped: u64,
    /// Messages the transport lost (`None`: it does not say).
    pub transport_lost: Option<u64>,
    /// Connections made (more than 1 after reconnects).
    pub connects: u64,
}

impl SeriesSource {
    /// A source around its producer `inner`, with no series yet and nothing pending, named
    /// `label` (constructors fill in the rest).
    fn empty(label: String, inner: Inner) -> SeriesSource {
        SeriesSource {
            names: Vec::new(),
            label,
            inner,
            pending: VecDeque::new(),
            error: None,
            warning: None,
            rows_skipped: 0,
            values_clamped: 0,
            clamp_note: None,
            time_unit: None,
            time_format: None,
            rows_sorted: 0,
            series_refused: 0,
            key_candidates: Vec::new(),
            series_key: None,
            link: None,
            rates: Rates::default(),
            message_times: Vec::new(),
            finished: false,
            clocked: false,
            map: Vec::new(),
            catch_up: None,
        }
    }

    /// A network source's connection (`None` for files and synthetic sources): state,
    /// counters and rates (the rates are updated by [`drain_into`](SeriesSource::drain_into)).
    pub fn link(&self) -> Option<LinkView> {
        let l = self.link.as_ref()?;
        let lost = l.transport_lost.load(Ordering::Relaxed);
        Some(LinkView {
            state: l.state(),
            messages: l.messages.load(Ordering::Relaxed),
            messages_per_s: self.rates.per_s.0,
            bytes_per_s: self.rates.per_s.1,
            series: self.names.len(),
            parse_errors: l.parse_errors.load(Ordering::Relaxed),
            errors: l.errors(),
            dropped: l.dropped.load(Ordering::Relaxed),
            transport_lost: (lost != u64::MAX).then_some(lost),
            connects: l.connects.load(Ordering::Relaxed),
        })
    }

    /// Moves into `out` the payload times (integer ns since the Unix epoch) of the messages
    /// stored since the last call, for messages whose time came from their time field
    /// (`--time-field`); at most [`MESSAGE_TIMES_KEPT`] between calls, the rest not kept.
    pub fn take_message_times(&mut self, out: &mut Vec<i64>) {
        out.append(&mut self.message_times);
    }

    /// Samples the link's counters for the rates, at most every half second.
    fn update_rates(&mut self) {
        let Some(l) = &self.link else {
            return;
        };
        let now = Instant::now();
        let (m, b) = (
            l.messages.load(Ordering::Relaxed),
            l.bytes.load(Ordering::Relaxed),
        );
        match self.rates.at {
            Some(at) if now - at < Duration::from_millis(500) => {}
            Some(at) => {
                let dt = (now - at).as_secs_f64();
                self.rates.per_s = (
                    (m - self.rates.messages) as f64 / dt,
                    (b - self.rates.bytes) as f64 / dt,
                );
                self.rates = Rates {
                    at: Some(now),
                    messages: m,
                    bytes: b,
                    ..self.rates
                };
            }
            None => {
                self.rates = Rates {
                    at: Some(now),
                    messages: m,
                    bytes: b,
                    per_s: (0.0, 0.0),
                };
            }
        }
    }

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
            SeriesSelection::CsvWith(path, opts) => open_csv_opts(path, false, opts),
            SeriesSelection::Net(opts) => net::open_net(opts),
            SeriesSelection::Columnar(path) => open_columnar(path),
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

    /// The first non-fatal problem (e.g. `series file 'x.csv' line 9: incomplete last row
    /// skipped`), one line.
    pub fn warning(&self) -> Option<String> {
        self.warning.clone()
    }

    /// Rows read but not loaded: rows whose time or a value cell could not be read (a
    /// half-written last row, a stray line), Parquet/Arrow rows with no time.
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

    /// Rows (long-format CSV) or messages not stored because the series they would start pass
    /// [`MAX_SERIES`]; the series started before the cap keep streaming.
    pub fn series_refused(&self) -> u64 {
        self.series_refused
    }

    /// Long-format CSV opened without a key: the text columns of the first rows that repeat
    /// between 2 and [`KEY_MAX_VALUES`] distinct values (each on four rows on average), each a
    /// column `--series-key` could split the rows by. Empty for other sources.
    pub fn key_candidates(&self) -> &[KeyCandidate] {
        &self.key_candidates
    }

    /// The column whose values name the series (long-format CSV), if rows are split by one.
    pub fn series_key(&self) -> Option<&str> {
        self.series_key.as_deref()
    }

    /// The time column's date format (a strftime pattern, or `rfc3339`) when it holds dates
    /// (CSV); `None` otherwise.
    pub fn time_format(&self) -> Option<&str> {
        self.time_format.as_deref()
    }

    /// Unit of the time column (CSV files; `None` for synthetic sources). For a column of dates
    /// the times are seconds since 1970-01-01 UTC.
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
}

/// Opens the series file `path` (`shown` in messages): missing, unreadable and a directory
/// each an error naming it.
fn open_input(path: &Path, shown: &str) -> Result<File, SeriesError> {
    let file = File::open(path).map_err(|source| match source.kind() {
        std::io::ErrorKind::NotFound => SeriesError::NotFound {
            path: shown.to_string(),
        },
        _ => SeriesError::Io {
            path: shown.to_string(),
            source,
        },
    })?;
    if file.metadata().is_ok_and(|m| m.is_dir()) {
        return Err(SeriesError::Io {
            path: shown.to_string(),
            source: std::io::Error::other("is a directory"),
        });
    }
    Ok(file)
}

/// `base`, or `base #2`, `base #3`… : the first not in `taken` (series names of one source are
/// unique).
fn unique_name(base: String, taken: &[(usize, String)]) -> String {
    let mut name = base.clone();
    let mut k = 2;
    while taken.iter().any(|(_, n)| *n == name) {
        name = format!("{base} #{k}");
        k += 1;
    }
    name
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
