//! Parquet and Arrow IPC files as series sources.
//!
//! `open` reads the footer and the schema (Parquet) or the schema message (IPC), chooses the
//! time column and the value columns, and decodes the first record batch, all on the calling
//! thread, so that a missing, foreign, truncated or unusable file fails there with one line
//! naming it. A producer thread (`vizdeck-series-columnar`) then reads the rest one row group
//! (Parquet, in record batches of at most [`READ_ROWS`] rows) or one record batch (IPC) at a
//! time, converts times to integer nanoseconds and values to f32, and sends batches of at most
//! [`BATCH_ROWS`] rows through the same ring as the CSV reader. Only the chosen columns are
//! decoded (a projection): text columns cost nothing.
//!
//! Files: `mod.rs` the formats, `open` and the producer thread; `plan.rs` the choice of time and
//! value columns from the schema; `read.rs` the Parquet and IPC readers (row groups, record
//! batches, footer checks, decoder panics caught); `convert.rs` record batches to time and f32
//! value columns.

mod convert;
mod plan;
mod read;

use super::*;

use convert::Converter;
use plan::{Plan, TimeKind, plan};
use read::{Batches, open_ipc, open_parquet};

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Float16Type, Float32Type, Float64Type, Int8Type, Int16Type, Int32Type, Int64Type, UInt8Type,
    UInt16Type, UInt32Type, UInt64Type,
};
use arrow_array::{Array, ArrowPrimitiveType, RecordBatch};
use arrow_schema::DataType;
use std::io::{Seek, SeekFrom};

/// Rows per Arrow record batch decoded from a Parquet row group; each is split into batches of
/// [`BATCH_ROWS`] rows for the ring.
const READ_ROWS: usize = 64 * 1024;

/// Rows per batch handed to the frame thread: four times a CSV batch, so the ring
/// ([`CSV_RING`] batches) holds 256 Ki rows and a 60 Hz frame loop can take up to about 15 M
/// rows/s (the drain into the store costs about 6 ns a value).
const BATCH_ROWS: usize = 16 * 1024;

/// Nanoseconds per day (`Date32` counts days).
const NS_PER_DAY: i64 = 86_400_000_000_000;

/// The container format of a columnar series file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColumnarFormat {
    /// Apache Parquet (`.parquet`, `.pq`).
    Parquet,
    /// Arrow IPC, file format (`.arrow`, `.feather` v2, `.ipc`) or stream format (`.arrows`).
    ArrowIpc,
}

impl ColumnarFormat {
    /// The format a path's extension names (case-insensitive): `parquet`/`pq` → Parquet,
    /// `arrow`/`feather`/`ipc`/`arrows` → Arrow IPC; `None` for anything else. What is read is
    /// decided by the file's first bytes, not by the name.
    pub fn of_path(path: &Path) -> Option<ColumnarFormat> {
        let ext = path.extension()?.to_string_lossy().to_lowercase();
        match ext.as_str() {
            "parquet" | "pq" => Some(ColumnarFormat::Parquet),
            "arrow" | "feather" | "ipc" | "arrows" => Some(ColumnarFormat::ArrowIpc),
            _ => None,
        }
    }

    /// The word labels and time formats use: `parquet` or `arrow`.
    fn word(self) -> &'static str {
        match self {
            ColumnarFormat::Parquet => "parquet",
            ColumnarFormat::ArrowIpc => "arrow",
        }
    }
}

/// A one-line error about file `shown` (`series file '…': problem`).
fn invalid(shown: &str, problem: String) -> SeriesError {
    // The decoders quote names from the file (field names), which may hold line breaks.
    let problem = vizdeck_base::text::one_line(&problem);
    SeriesError::Io {
        path: shown.to_string(),
        source: std::io::Error::new(std::io::ErrorKind::InvalidData, problem),
    }
}

/// Opens a Parquet or Arrow IPC file as a series source.
///
/// The format is the file's: `PAR1` (Parquet), `ARROW1` (Arrow IPC file format, Feather v2) or
/// an IPC stream; codecs snappy, gzip, zstd, lz4 (Parquet) and lz4/zstd (IPC).
///
/// Time: the first column of type `Timestamp` (any unit; with a time zone the stored instants,
/// without one taken as UTC), `Date32`, `Date64`, `Time32`/`Time64` (nanoseconds since
/// midnight) or `Duration`, as integer nanoseconds; else the first integer or float column
/// named `time`, `timestamp`, `date`, `datetime` or `t` (case-insensitive, optionally with a
/// unit suffix `_s`/`_ms`/`_us`/`_ns`), else the first column if it is an integer or float
/// column: numbers in the unit of the name's suffix, else judged by the first value's magnitude
/// as Unix time ([`TimeUnit::from_magnitude`]), else seconds. Rows with a null time, or one
/// beyond the i64 nanosecond range (±292 years around 1970), are skipped and counted in
/// [`rows_skipped`](SeriesSource::rows_skipped) (one message per batch of up to 16,384 rows,
/// so that a column of null times cannot flood the ring); the first such batch's line, with
/// its count of rows, is the [`warning`](SeriesSource::warning).
///
/// Values: every other column of an integer, float (16, 32, 64 bits), decimal (to f64, then
/// f32) or boolean (0/1) type, or a dictionary of those, is a series named by the column;
/// nulls, NaN and ±inf are gaps (NaN); numbers beyond the f32 range are clamped to
/// ±`f32::MAX` and counted ([`values_clamped`](SeriesSource::values_clamped)). Text, binary,
/// nested and other temporal columns are skipped (and not decoded). Rows out of time order are
/// sorted within each batch, as for CSV files ([`rows_sorted`](SeriesSource::rows_sorted)).
///
/// Blocking: the metadata and the first record batch (up to 65 536 rows) are read here; a
/// thread reads the rest, one row group or record batch at a time. A row group that fails to
/// decode later stops the source with [`error`](SeriesSource::error) naming the file and the
/// row group.
///
/// # Errors
///
/// One line naming the file: not found, a directory, not Parquet or Arrow IPC (or Feather v1),
/// a truncated or corrupt footer or schema, no time column, no numeric value column
/// ([`SeriesError::NoNumericColumn`]), no rows ([`SeriesError::NoRows`]), or a first record
/// batch that does not decode.
pub fn open_columnar(path: &Path) -> Result<SeriesSource, SeriesError> {
    let shown = path.display().to_string();
    let mut file = open_input(path, &shown)?;
    let mut head = [0u8; 8];
    let mut got = 0;
    while got < head.len() {
        match file.read(&mut head[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(source) => {
                return Err(SeriesError::Io {
                    path: shown,
                    source,
                });
            }
        }
    }
    let head = &head[..got];
    file.seek(SeekFrom::Start(0))
        .map_err(|source| SeriesError::Io {
            path: shown.clone(),
            source,
        })?;
    let (fmt, stream) = sniff(head, &shown)?;
    let opened = match fmt {
        ColumnarFormat::Parquet => open_parquet(file, &shown),
        ColumnarFormat::ArrowIpc => open_ipc(file, &shown, stream),
    };
    source_of(fmt, opened, shown, true)
}

/// Reads a whole Parquet or Arrow IPC file held in memory on the calling thread, as
/// [`open_columnar`] reads a file (same formats, batches, errors and warnings; no thread):
/// `bytes` is the file's content and `name` what messages call it. The returned source holds
/// every row; one [`drain_into`](SeriesSource::drain_into) moves them into a store, after which
/// [`is_finished`](SeriesSource::is_finished) is `true` and a record batch that failed to
/// decode is in [`error`](SeriesSource::error).
///
/// # Errors
///
/// Those of [`open_columnar`] that concern the content, each one line naming `name`.
pub fn open_columnar_bytes(bytes: &[u8], name: &str) -> Result<SeriesSource, SeriesError> {
    let shown = name.to_string();
    let (fmt, stream) = sniff(&bytes[..bytes.len().min(8)], &shown)?;
    let data = bytes::Bytes::copy_from_slice(bytes);
    let opened = match fmt {
        ColumnarFormat::Parquet => open_parquet(data, &shown),
        ColumnarFormat::ArrowIpc => open_ipc(std::io::Cursor::new(data), &shown, stream),
    };
    source_of(fmt, opened, shown, false)
}

/// The format a file's first bytes `head` (up to 8) name, and for Arrow IPC whether it is the
/// stream format.
fn sniff(head: &[u8], shown: &str) -> Result<(ColumnarFormat, bool), SeriesError> {
    if head.starts_with(b"PAR1") {
        Ok((ColumnarFormat::Parquet, false))
    } else if head.starts_with(b"ARROW1") {
        Ok((ColumnarFormat::ArrowIpc, false))
    } else if head.starts_with(&[0xFF, 0xFF, 0xFF, 0xFF]) {
        Ok((ColumnarFormat::ArrowIpc, true))
    } else if head.starts_with(b"FEA1") {
        Err(invalid(
            shown,
            "a Feather v1 file, which is not read (Feather v2 is: re-save it with \
             pyarrow.feather.write_feather)"
                .into(),
        ))
    } else if head.is_empty() {
        Err(SeriesError::Empty {
            path: shown.to_string(),
        })
    } else {
        Err(invalid(
            shown,
            "not a Parquet or Arrow IPC file (it starts with neither 'PAR1' nor 'ARROW1')".into(),
        ))
    }
}

/// The source of an opened columnar file: the first record batch converted here, the rest on
/// a producer thread (`threaded`) or here too.
fn source_of(
    fmt: ColumnarFormat,
    opened: Result<(Plan, Batches, Option<RecordBatch>), SeriesError>,
    shown: String,
    threaded: bool,
) -> Result<SeriesSource, SeriesError> {
    let (plan, batches, first) = opened?;
    let Some(first) = first else {
        let header = plan
            .values
            .iter()
            .map(|(_, n)| vizdeck_base::text::one_line(n))
            .collect::<Vec<_>>()
            .join(", ");
        return Err(SeriesError::NoRows {
            path: shown,
            header,
        });
    };
    // Positions in the projected batches: the chosen columns in file order.
    let mut cols: Vec<usize> = plan.values.iter().map(|&(c, _)| c).collect();
    cols.push(plan.time);
    cols.sort_unstable();
    let pos = |c: usize| cols.binary_search(&c).unwrap_or(0);
    let mut unit = plan.unit;
    let mut kind = plan.kind;
    if plan.by_magnitude
        && let Some(m) =
            first_value(first.column(pos(plan.time)).as_ref()).and_then(TimeUnit::from_magnitude)
    {
        unit = m;
        let mul = 10i64.pow(unit.ns_exponent());
        kind = match kind {
            TimeKind::Int(_) => TimeKind::Int(mul),
            TimeKind::Float(_) => TimeKind::Float(mul as f64),
        };
    }
    let mut conv = Converter {
        path: shown.clone(),
        time: pos(plan.time),
        kind,
        values: plan
            .values
            .iter()
            .map(|(c, n)| (pos(*c), n.clone()))
            .collect(),
        rows: 0,
        times: Vec::new(),
        bad: Vec::new(),
    };
    let names: Vec<String> = plan.values.iter().map(|(_, n)| n.clone()).collect();
    let label = format!("{}: {shown}", fmt.word());

    // The first record batch, converted here.
    let mut pending = VecDeque::new();
    let mut warning: Option<String> = None;
    let mut rows_skipped = 0;
    // What a batch converted on this thread sends: its rows, and its skipped rows counted.
    let mut take = |msg| {
        match msg {
            Msg::Batch(b) => pending.push_back(b),
            Msg::Skipped { first, rows } => {
                rows_skipped += rows;
                warning.get_or_insert(first);
            }
            Msg::Error(_) | Msg::Done | Msg::KeyValues(_) => {}
        }
        true
    };
    conv.convert(&first, &mut Batch::default, &mut take);

    let inner = if threaded {
        spawn_producer(
            "vizdeck-series-columnar",
            &label,
            CSV_RING,
            move |tx, recycled, stop| run_columnar(batches, conv, tx, recycled, stop),
        )?
    } else {
        // Only the closing messages travel through the ring (at most `Error` or `Done`).
        let (mut tx, rx) = RingBuffer::new(CSV_RING);
        let (recycle, _) = RingBuffer::new(1);
        let mut end = Msg::Done;
        for b in batches {
            let b = match b {
                Ok(b) => b,
                Err(e) => {
                    end = Msg::Error(invalid(&conv.path, e).to_string());
                    break;
                }
            };
            conv.convert(&b, &mut Batch::default, &mut take);
        }
        let _ = tx.push(end);
        Inner::Thread {
            rx,
            recycle,
            stop: Arc::new(AtomicBool::new(false)),
            lost: Arc::new(AtomicU64::new(0)),
            handle: None,
        }
    };
    let mut source = SeriesSource::empty(label, inner);
    source.names = names;
    source.pending = pending;
    source.warning = warning;
    source.rows_skipped = rows_skipped;
    source.time_unit = Some(unit);
    source.time_format = plan.format;
    Ok(source)
}

/// The first valid value of a numeric (integer or float) array, as f64.
fn first_value(a: &dyn Array) -> Option<f64> {
    fn first<T: ArrowPrimitiveType>(a: &dyn Array, f: impl Fn(T::Native) -> f64) -> Option<f64> {
        let p = a.as_primitive::<T>();
        (0..p.len())
            .find(|&i| p.is_valid(i) && f(p.value(i)).is_finite())
            .map(|i| f(p.value(i)))
    }
    match a.data_type() {
        DataType::Int8 => first::<Int8Type>(a, f64::from),
        DataType::Int16 => first::<Int16Type>(a, f64::from),
        DataType::Int32 => first::<Int32Type>(a, f64::from),
        DataType::Int64 => first::<Int64Type>(a, |v| v as f64),
        DataType::UInt8 => first::<UInt8Type>(a, f64::from),
        DataType::UInt16 => first::<UInt16Type>(a, f64::from),
        DataType::UInt32 => first::<UInt32Type>(a, f64::from),
        DataType::UInt64 => first::<UInt64Type>(a, |v| v as f64),
        DataType::Float16 => first::<Float16Type>(a, |v| v.to_f64()),
        DataType::Float32 => first::<Float32Type>(a, f64::from),
        DataType::Float64 => first::<Float64Type>(a, |v| v),
        _ => None,
    }
}

/// Producer: converts the remaining record batches, waits while the ring is full, ends with
/// `Done` or with the first error.
fn run_columnar(
    batches: Batches,
    mut conv: Converter,
    mut tx: Producer<Msg>,
    mut recycled: Consumer<Batch>,
    stop: &AtomicBool,
) {
    let mut fresh = || recycled.pop().unwrap_or_default();
    for b in batches {
        if stop.load(Ordering::Relaxed) {
            return;
        }
        let msg_ok = match b {
            Ok(b) => conv.convert(&b, &mut fresh, &mut |msg| send(&mut tx, msg, stop)),
            Err(e) => {
                let e = invalid(&conv.path, e).to_string();
                send(&mut tx, Msg::Error(e), stop);
                return;
            }
        };
        if !msg_ok {
            return;
        }
    }
    send(&mut tx, Msg::Done, stop);
}
