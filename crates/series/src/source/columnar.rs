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

use super::*;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Date64Type, Decimal32Type, Decimal64Type, Decimal128Type, Decimal256Type,
    DurationMicrosecondType, DurationMillisecondType, DurationNanosecondType, DurationSecondType,
    Float16Type, Float32Type, Float64Type, Int8Type, Int16Type, Int32Type, Int64Type,
    Time32MillisecondType, Time32SecondType, Time64MicrosecondType, Time64NanosecondType,
    TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType,
    TimestampSecondType, UInt8Type, UInt16Type, UInt32Type, UInt64Type,
};
use arrow_array::{Array, ArrowPrimitiveType, RecordBatch};
use arrow_buffer::{ArrowNativeType, NullBuffer, i256};
use arrow_schema::{DataType, Schema, TimeUnit as ArrowUnit};
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReader,
    ParquetRecordBatchReaderBuilder,
};
use std::io::{Seek, SeekFrom};
use std::ops::Range;

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

/// How the time column's cells become integer nanoseconds.
#[derive(Clone, Copy, Debug)]
enum TimeKind {
    /// Integers (of any width) times this many nanoseconds each, exactly; a product beyond the
    /// i64 range is a row with no time.
    Int(i64),
    /// Floats times this many nanoseconds each, rounded to the nearest nanosecond.
    Float(f64),
}

/// What `open` decided about a file's columns.
struct Plan {
    /// Field index of the time column.
    time: usize,
    kind: TimeKind,
    unit: TimeUnit,
    /// What the time column holds, for [`SeriesSource::time_format`] (dates and timestamps).
    format: Option<String>,
    /// A numeric time column whose unit the first value's magnitude decides (no unit suffix).
    by_magnitude: bool,
    /// Field index and series name of each value column.
    values: Vec<(usize, String)>,
}

/// The unit of an Arrow time type in vizdeck's terms, and nanoseconds per tick.
fn arrow_unit(u: &ArrowUnit) -> (TimeUnit, i64, &'static str) {
    match u {
        ArrowUnit::Second => (TimeUnit::Seconds, 1_000_000_000, "s"),
        ArrowUnit::Millisecond => (TimeUnit::Millis, 1_000_000, "ms"),
        ArrowUnit::Microsecond => (TimeUnit::Micros, 1_000, "us"),
        ArrowUnit::Nanosecond => (TimeUnit::Nanos, 1, "ns"),
    }
}

/// Integer and floating-point types (the kinds a numeric time column may have).
fn is_int_or_float(t: &DataType) -> bool {
    t.is_integer() || t.is_floating()
}

/// Types read as values: integers, floats, decimals, booleans, and dictionaries of those.
fn is_value_type(t: &DataType) -> bool {
    match t {
        DataType::Boolean
        | DataType::Decimal32(..)
        | DataType::Decimal64(..)
        | DataType::Decimal128(..)
        | DataType::Decimal256(..) => true,
        DataType::Dictionary(_, v) => is_value_type(v),
        t => is_int_or_float(t),
    }
}

/// A column name that says "time": `time`, `timestamp`, `date`, `datetime` or `t`
/// (case-insensitive), optionally with a unit suffix (`_s`, `_ms`, `_us`, `_ns`).
fn is_time_name(name: &str) -> bool {
    let n = name.trim().to_lowercase();
    let stem = ["_ns", "_us", "_µs", "_ms", "_s"]
        .iter()
        .find_map(|s| n.strip_suffix(s))
        .unwrap_or(&n);
    matches!(stem, "time" | "timestamp" | "date" | "datetime" | "t")
}

/// `name: type, …` of every field, for messages.
fn header_of(schema: &Schema) -> String {
    schema
        .fields()
        .iter()
        .map(|f| {
            format!(
                "{}: {}",
                vizdeck_base::text::one_line(f.name()),
                f.data_type()
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Chooses the time column and the value columns of `schema` (see [`open_columnar`]).
fn plan(schema: &Schema, shown: &str, fmt: ColumnarFormat) -> Result<Plan, SeriesError> {
    let fields = schema.fields();
    let word = fmt.word();
    let temporal = fields.iter().position(|f| {
        matches!(
            f.data_type(),
            DataType::Timestamp(..)
                | DataType::Date32
                | DataType::Date64
                | DataType::Time32(_)
                | DataType::Time64(_)
                | DataType::Duration(_)
        )
    });
    let numeric = || {
        fields
            .iter()
            .position(|f| is_time_name(f.name()) && is_int_or_float(f.data_type()))
            .or_else(|| {
                fields
                    .first()
                    .filter(|f| is_int_or_float(f.data_type()))
                    .map(|_| 0)
            })
    };
    let (time, kind, unit, format, by_magnitude) = if let Some(c) = temporal {
        match fields[c].data_type() {
            DataType::Timestamp(u, tz) => {
                let (unit, mul, sym) = arrow_unit(u);
                let format = match tz {
                    Some(tz) => format!("{word} timestamp[{sym}, {tz}]"),
                    None => format!("{word} timestamp[{sym}] (no time zone: read as UTC)"),
                };
                (c, TimeKind::Int(mul), unit, Some(format), false)
            }
            DataType::Date32 => (
                c,
                TimeKind::Int(NS_PER_DAY),
                TimeUnit::Seconds,
                Some(format!("{word} date32 (days)")),
                false,
            ),
            DataType::Date64 => (
                c,
                TimeKind::Int(1_000_000),
                TimeUnit::Millis,
                Some(format!("{word} date64 (ms)")),
                false,
            ),
            // Time of day (ns since midnight) and durations: not dates, no format.
            DataType::Time32(u) | DataType::Time64(u) | DataType::Duration(u) => {
                let (unit, mul, _) = arrow_unit(u);
                (c, TimeKind::Int(mul), unit, None, false)
            }
            _ => unreachable!("matched as temporal above"),
        }
    } else if let Some(c) = numeric() {
        let suffix = TimeUnit::suffix_of(fields[c].name());
        let unit = suffix.unwrap_or(TimeUnit::Seconds);
        let mul = 10i64.pow(unit.ns_exponent());
        let kind = if fields[c].data_type().is_integer() {
            TimeKind::Int(mul)
        } else {
            TimeKind::Float(mul as f64)
        };
        (c, kind, unit, None, suffix.is_none())
    } else {
        return Err(invalid(
            shown,
            format!(
                "no time column (a timestamp, date, time or duration column, or a numeric \
                 column named time, timestamp, date, datetime or t; columns: {})",
                header_of(schema)
            ),
        ));
    };
    let mut values: Vec<(usize, String)> = Vec::new();
    for (c, f) in fields.iter().enumerate() {
        if c == time || !is_value_type(f.data_type()) {
            continue;
        }
        let base = if f.name().is_empty() {
            format!("column {}", c + 1)
        } else {
            f.name().clone()
        };
        values.push((c, unique_name(base, &values)));
    }
    if values.is_empty() {
        return Err(SeriesError::NoNumericColumn {
            path: shown.to_string(),
            header: header_of(schema),
        });
    }
    Ok(Plan {
        time,
        kind,
        unit,
        format,
        by_magnitude,
        values,
    })
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

/// Record batches of a file in order, each with the columns of the projection.
type Batches = Box<dyn Iterator<Item = Result<RecordBatch, String>> + Send>;

/// Runs `f`, a call into the parquet or arrow-ipc decoder, which assert on some inconsistencies
/// of corrupt files (e.g. "Decoder for dict should have been set" for dictionary-encoded pages
/// without a dictionary page): a panic there becomes an error (one line) instead of ending the
/// thread or the app.
fn guarded<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).map_err(|p| {
        let why = p
            .downcast_ref::<&str>()
            .map(|s| (*s).to_string())
            .or_else(|| p.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        format!(
            "the decoder failed ({})",
            vizdeck_base::text::one_line(&why)
        )
    })
}

/// [`Batches`] whose decoder calls are [`guarded`]: a panic is the last item, an error.
struct Guarded<I>(Option<I>);

impl<I: Iterator<Item = Result<RecordBatch, String>>> Iterator for Guarded<I> {
    type Item = Result<RecordBatch, String>;

    fn next(&mut self) -> Option<Self::Item> {
        let inner = self.0.as_mut()?;
        match guarded(|| inner.next()) {
            Ok(item) => item,
            Err(e) => {
                self.0 = None;
                Some(Err(e))
            }
        }
    }
}

/// A Parquet file's row groups, one after the other: a reader is built for one row group at a
/// time and yields its rows in record batches of [`READ_ROWS`].
struct RowGroups<R> {
    file: R,
    meta: ArrowReaderMetadata,
    mask: ProjectionMask,
    next_group: usize,
    current: Option<ParquetRecordBatchReader>,
}

/// Where a Parquet file's bytes come from: the file, or memory ([`open_columnar_bytes`]); each
/// row group's reader gets its own handle.
trait ParquetInput: parquet::file::reader::ChunkReader + Sized + Send + 'static {
    fn reopen(&self) -> Result<Self, String>;
}

impl ParquetInput for File {
    fn reopen(&self) -> Result<File, String> {
        self.try_clone().map_err(|e| e.to_string())
    }
}

impl ParquetInput for bytes::Bytes {
    fn reopen(&self) -> Result<bytes::Bytes, String> {
        Ok(self.clone())
    }
}

impl<R: ParquetInput> Iterator for RowGroups<R> {
    type Item = Result<RecordBatch, String>;

    fn next(&mut self) -> Option<Self::Item> {
        let groups = self.meta.metadata().num_row_groups();
        loop {
            if let Some(reader) = &mut self.current {
                match reader.next() {
                    Some(Ok(b)) => return Some(Ok(b)),
                    Some(Err(e)) => {
                        self.current = None;
                        let g = std::mem::replace(&mut self.next_group, groups);
                        return Some(Err(format!("row group {} of {groups}: {e}", g)));
                    }
                    None => self.current = None,
                }
            }
            if self.next_group >= groups {
                return None;
            }
            let g = self.next_group;
            self.next_group += 1;
            let built = self.file.reopen().and_then(|file| {
                ParquetRecordBatchReaderBuilder::new_with_metadata(file, self.meta.clone())
                    .with_row_groups(vec![g])
                    .with_projection(self.mask.clone())
                    .with_batch_size(READ_ROWS)
                    .build()
                    .map_err(|e| e.to_string())
            });
            match built {
                Ok(r) => self.current = Some(r),
                Err(e) => {
                    self.next_group = groups;
                    return Some(Err(format!("row group {} of {groups}: {e}", g + 1)));
                }
            }
        }
    }
}

/// Opens `file` (Parquet) for the columns [`plan`] chooses: the schema and the record batches.
fn open_parquet<R: ParquetInput>(
    file: R,
    shown: &str,
) -> Result<(Plan, Batches, Option<RecordBatch>), SeriesError> {
    let meta = guarded(|| ArrowReaderMetadata::load(&file, ArrowReaderOptions::new()))
        .and_then(|m| m.map_err(|e| e.to_string()))
        .map_err(|e| invalid(shown, format!("not a readable Parquet file: {e}")))?;
    check_chunks(meta.metadata(), file.len())
        .map_err(|e| invalid(shown, format!("not a readable Parquet file: {e}")))?;
    let plan = plan(meta.schema(), shown, ColumnarFormat::Parquet)?;
    let mut cols: Vec<usize> = plan.values.iter().map(|&(c, _)| c).collect();
    cols.push(plan.time);
    let mask = ProjectionMask::roots(meta.parquet_schema(), cols);
    let batches = RowGroups {
        file,
        meta,
        mask,
        next_group: 0,
        current: None,
    };
    let mut batches = Guarded(Some(batches));
    let first = first_batch(&mut batches, shown)?;
    Ok((plan, Box::new(batches), first))
}

/// Checks that every column chunk of the footer `meta` lies inside the file of `file_len` bytes
/// (the parquet crate panics on a negative offset or size, and a chunk past the end can only
/// fail later): the problem, naming the row group and column, otherwise.
fn check_chunks(
    meta: &parquet::file::metadata::ParquetMetaData,
    file_len: u64,
) -> Result<(), String> {
    for (g, group) in meta.row_groups().iter().enumerate() {
        for (c, col) in group.columns().iter().enumerate() {
            let start = col
                .dictionary_page_offset()
                .unwrap_or_else(|| col.data_page_offset());
            let len = col.compressed_size();
            let end = u64::try_from(start)
                .ok()
                .zip(u64::try_from(len).ok())
                .and_then(|(s, l)| s.checked_add(l));
            if end.is_none_or(|e| e > file_len) {
                return Err(format!(
                    "row group {} column {}: bytes {start} + {len} lie outside the file of \
                     {file_len} bytes",
                    g + 1,
                    c + 1
                ));
            }
        }
    }
    Ok(())
}

/// Checks that the blocks an Arrow IPC file's footer lists (dictionaries, record batches) lie
/// inside the file (arrow-ipc panics on a negative length); the problem, naming the block,
/// otherwise. A footer that does not read is left to arrow-ipc to report.
fn check_ipc_blocks<R: Read + Seek>(file: &mut R) -> Result<(), String> {
    let io = |e: std::io::Error| e.to_string();
    let len = file.seek(SeekFrom::End(0)).map_err(io)?;
    let footer = (|| {
        let mut tail = [0u8; 10];
        file.seek(SeekFrom::End(-10)).ok()?;
        file.read_exact(&mut tail).ok()?;
        let footer_len = arrow_ipc::reader::read_footer_length(tail).ok()?;
        if footer_len as u64 + 10 > len {
            return None;
        }
        file.seek(SeekFrom::End(-10 - footer_len as i64)).ok()?;
        let mut footer = vec![0u8; footer_len];
        file.read_exact(&mut footer).ok()?;
        Some(footer)
    })();
    file.seek(SeekFrom::Start(0)).map_err(io)?;
    let Some(footer) = footer else {
        return Ok(());
    };
    let Ok(footer) = arrow_ipc::root_as_footer(&footer) else {
        return Ok(());
    };
    for (what, blocks) in [
        ("dictionary", footer.dictionaries()),
        ("record batch", footer.recordBatches()),
    ] {
        for (i, b) in blocks.into_iter().flatten().enumerate() {
            let (at, meta, body) = (b.offset(), b.metaDataLength(), b.bodyLength());
            let end = u64::try_from(at)
                .ok()
                .zip(u64::try_from(meta).ok())
                .zip(u64::try_from(body).ok())
                .and_then(|((a, m), b)| a.checked_add(m)?.checked_add(b));
            if end.is_none_or(|e| e > len) {
                return Err(format!(
                    "{what} {}: block at {at} of {meta} + {body} bytes lies outside the file \
                     of {len} bytes",
                    i + 1
                ));
            }
        }
    }
    Ok(())
}

/// Opens `file` (Arrow IPC, file or stream format by its first bytes) for the columns [`plan`]
/// chooses: the schema and the record batches.
fn open_ipc<R: Read + Seek + Send + 'static>(
    mut file: R,
    shown: &str,
    stream: bool,
) -> Result<(Plan, Batches, Option<RecordBatch>), SeriesError> {
    use arrow_ipc::reader::{FileReader, StreamReader};
    let what = if stream {
        "not a readable Arrow IPC stream"
    } else {
        "not a readable Arrow IPC file"
    };
    let bad = |e: String| invalid(shown, format!("{what}: {e}"));
    // The reader's constructor, guarded (it reads the dictionaries of a file).
    fn flat<T>(r: Result<Result<T, arrow_schema::ArrowError>, String>) -> Result<T, String> {
        r.and_then(|r| r.map_err(|e| e.to_string()))
    }
    let io = |source| SeriesError::Io {
        path: shown.to_string(),
        source,
    };
    if !stream {
        check_ipc_blocks(&mut file).map_err(|e| invalid(shown, format!("{what}: {e}")))?;
    }
    // The schema first, then the reader again with the projection.
    let schema = if stream {
        flat(guarded(|| StreamReader::try_new_buffered(&mut file, None)))
            .map_err(bad)?
            .schema()
    } else {
        flat(guarded(|| FileReader::try_new_buffered(&mut file, None)))
            .map_err(bad)?
            .schema()
    };
    let plan = plan(&schema, shown, ColumnarFormat::ArrowIpc)?;
    let mut cols: Vec<usize> = plan.values.iter().map(|&(c, _)| c).collect();
    cols.push(plan.time);
    cols.sort_unstable();
    file.seek(SeekFrom::Start(0)).map_err(io)?;
    let name = |i: usize| format!("record batch {}: ", i + 1);
    let batches: Batches = if stream {
        let r = flat(guarded(|| StreamReader::try_new_buffered(file, Some(cols)))).map_err(bad)?;
        Box::new(
            r.enumerate()
                .map(move |(i, b)| b.map_err(|e| format!("{}{e}", name(i)))),
        )
    } else {
        let r = flat(guarded(|| FileReader::try_new_buffered(file, Some(cols)))).map_err(bad)?;
        Box::new(
            r.enumerate()
                .map(move |(i, b)| b.map_err(|e| format!("{}{e}", name(i)))),
        )
    };
    let mut batches: Batches = Box::new(Guarded(Some(batches)));
    let first = first_batch(&mut batches, shown)?;
    Ok((plan, batches, first))
}

/// The first record batch with rows (`None`: the file has none); an error names the file.
fn first_batch(
    batches: &mut impl Iterator<Item = Result<RecordBatch, String>>,
    shown: &str,
) -> Result<Option<RecordBatch>, SeriesError> {
    for b in batches {
        let b = b.map_err(|e| invalid(shown, e))?;
        if b.num_rows() > 0 {
            return Ok(Some(b));
        }
    }
    Ok(None)
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

/// Converts record batches into [`Batch`]es: the time column to integer nanoseconds, the value
/// columns to f32.
struct Converter {
    /// The file, as messages name it.
    path: String,
    /// Position of the time column in the (projected) record batches.
    time: usize,
    kind: TimeKind,
    /// Position and series name of each value column.
    values: Vec<(usize, String)>,
    /// Rows of the record batches before the current one.
    rows: u64,
    /// The current record batch's times, and the rows among them that have none.
    times: Vec<i64>,
    bad: Vec<usize>,
}

/// A value column of one record batch, ready to be read by ranges of rows.
enum Prepared<'a> {
    Plain(&'a dyn Array),
    /// A dictionary: each row's index into `values`, the values converted once (with whether
    /// each was clamped), and the rows' nulls.
    Dict {
        keys: Vec<usize>,
        values: Vec<f32>,
        clamped: Vec<bool>,
        nulls: Option<NullBuffer>,
    },
}

/// Clamped cells of one range: how many, and the first (row in the record batch, value); cells
/// of the rows in `skip` (sorted: rows with no time, which leave the batch) are not counted.
#[derive(Default)]
struct Clamps<'a> {
    count: u64,
    first: Option<(usize, f64)>,
    skip: &'a [usize],
}

impl Clamps<'_> {
    fn note(&mut self, row: usize, v: f64) {
        if self.skip.binary_search(&row).is_ok() {
            return;
        }
        self.count += 1;
        self.first.get_or_insert((row, v));
    }
}

impl Converter {
    /// Converts record batch `rb` into batches of at most [`BATCH_ROWS`] rows taken from
    /// `fresh` and handed to `emit` (with a `Skipped` after a batch that lost rows with no
    /// time); returns `false` when `emit` did (stopped).
    fn convert(
        &mut self,
        rb: &RecordBatch,
        fresh: &mut impl FnMut() -> Batch,
        emit: &mut impl FnMut(Msg) -> bool,
    ) -> bool {
        let n = rb.num_rows();
        self.times.clear();
        self.bad.clear();
        times_of(
            rb.column(self.time).as_ref(),
            self.kind,
            &mut self.times,
            &mut self.bad,
        );
        let prepared: Vec<Prepared> = self
            .values
            .iter()
            .map(|&(c, _)| prepare(rb.column(c).as_ref()))
            .collect();
        let mut bad_at = 0;
        let mut start = 0;
        while start < n {
            let end = (start + BATCH_ROWS).min(n);
            let mut batch = fresh();
            batch.ensure_columns(self.values.len());
            batch.times_ns.extend_from_slice(&self.times[start..end]);
            for (j, col) in prepared.iter().enumerate() {
                let mut clamps = Clamps {
                    skip: &self.bad,
                    ..Clamps::default()
                };
                push_range(col, start..end, &mut batch.columns[j], &mut clamps);
                if clamps.count > 0 {
                    batch.clamped += clamps.count;
                    if batch.clamp_note.is_none()
                        && let Some((row, v)) = clamps.first
                    {
                        batch.clamp_note = Some(format!(
                            "series file '{}' row {}: column '{}': {v:e} is beyond the f32 \
                             range (±3.4e38); drawn clamped to ±3.4e38",
                            self.path,
                            self.rows + row as u64 + 1,
                            vizdeck_base::text::one_line(&self.values[j].1),
                        ));
                    }
                }
            }
            // Rows with no time leave the batch.
            let first_bad = bad_at;
            while bad_at < self.bad.len() && self.bad[bad_at] < end {
                bad_at += 1;
            }
            let skipped = &self.bad[first_bad..bad_at];
            if !skipped.is_empty() {
                remove_rows(&mut batch.times_ns, skipped, start);
                for c in &mut batch.columns {
                    remove_rows(c, skipped, start);
                }
            }
            batch.sort_rows();
            if batch.rows() > 0 && !emit(Msg::Batch(batch)) {
                return false;
            }
            if !skipped.is_empty() {
                let w = format!(
                    "series file '{}' row {}: no time (null, or beyond ±292 years in ns); \
                     {} such row(s) of rows {}–{} skipped",
                    self.path,
                    self.rows + skipped[0] as u64 + 1,
                    skipped.len(),
                    self.rows + start as u64 + 1,
                    self.rows + end as u64,
                );
                let rows = skipped.len() as u64;
                if !emit(Msg::Skipped { first: w, rows }) {
                    return false;
                }
            }
            start = end;
        }
        self.rows += n as u64;
        true
    }
}

/// Removes from `v` (rows `offset..` of a record batch) the rows `rows` (sorted, record batch
/// numbering).
fn remove_rows<T: Copy>(v: &mut Vec<T>, rows: &[usize], offset: usize) {
    let mut k = 0;
    let mut i = 0;
    v.retain(|_| {
        let row = offset + i;
        i += 1;
        if k < rows.len() && rows[k] == row {
            k += 1;
            false
        } else {
            true
        }
    });
}

/// Appends the times of array `a` as integer nanoseconds to `out` (one per row), and the rows
/// with no time (null, not representable) to `bad`, in order.
fn times_of(a: &dyn Array, kind: TimeKind, out: &mut Vec<i64>, bad: &mut Vec<usize>) {
    fn ints<T: ArrowPrimitiveType>(
        a: &dyn Array,
        mul: i64,
        out: &mut Vec<i64>,
        bad: &mut Vec<usize>,
    ) {
        let p = a.as_primitive::<T>();
        let nulls = p.nulls().filter(|n| n.null_count() > 0);
        out.reserve(p.len());
        for (i, &v) in p.values().iter().enumerate() {
            let ns = v.to_i64().and_then(|v| v.checked_mul(mul));
            match ns {
                Some(ns) if nulls.is_none_or(|n| n.is_valid(i)) => out.push(ns),
                _ => {
                    bad.push(i);
                    out.push(0);
                }
            }
        }
    }
    fn floats<T: ArrowPrimitiveType>(
        a: &dyn Array,
        mul: f64,
        f: impl Fn(T::Native) -> f64,
        out: &mut Vec<i64>,
        bad: &mut Vec<usize>,
    ) {
        let p = a.as_primitive::<T>();
        let nulls = p.nulls().filter(|n| n.null_count() > 0);
        out.reserve(p.len());
        for (i, &v) in p.values().iter().enumerate() {
            let ns = (f(v) * mul).round();
            if ns.is_finite() && ns.abs() < 9.2e18 && nulls.is_none_or(|n| n.is_valid(i)) {
                out.push(ns as i64);
            } else {
                bad.push(i);
                out.push(0);
            }
        }
    }
    match (kind, a.data_type()) {
        (TimeKind::Float(mul), DataType::Float16) => {
            floats::<Float16Type>(a, mul, |v| v.to_f64(), out, bad)
        }
        (TimeKind::Float(mul), DataType::Float32) => {
            floats::<Float32Type>(a, mul, f64::from, out, bad)
        }
        (TimeKind::Float(mul), _) => floats::<Float64Type>(a, mul, |v| v, out, bad),
        (TimeKind::Int(mul), t) => match t {
            DataType::Int8 => ints::<Int8Type>(a, mul, out, bad),
            DataType::Int16 => ints::<Int16Type>(a, mul, out, bad),
            DataType::Int32 => ints::<Int32Type>(a, mul, out, bad),
            DataType::Int64 => ints::<Int64Type>(a, mul, out, bad),
            DataType::UInt8 => ints::<UInt8Type>(a, mul, out, bad),
            DataType::UInt16 => ints::<UInt16Type>(a, mul, out, bad),
            DataType::UInt32 => ints::<UInt32Type>(a, mul, out, bad),
            DataType::UInt64 => ints::<UInt64Type>(a, mul, out, bad),
            DataType::Date32 => ints::<Date32Type>(a, mul, out, bad),
            DataType::Date64 => ints::<Date64Type>(a, mul, out, bad),
            DataType::Time32(ArrowUnit::Second) => ints::<Time32SecondType>(a, mul, out, bad),
            DataType::Time32(_) => ints::<Time32MillisecondType>(a, mul, out, bad),
            DataType::Time64(ArrowUnit::Microsecond) => {
                ints::<Time64MicrosecondType>(a, mul, out, bad)
            }
            DataType::Time64(_) => ints::<Time64NanosecondType>(a, mul, out, bad),
            DataType::Timestamp(ArrowUnit::Second, _) => {
                ints::<TimestampSecondType>(a, mul, out, bad)
            }
            DataType::Timestamp(ArrowUnit::Millisecond, _) => {
                ints::<TimestampMillisecondType>(a, mul, out, bad)
            }
            DataType::Timestamp(ArrowUnit::Microsecond, _) => {
                ints::<TimestampMicrosecondType>(a, mul, out, bad)
            }
            DataType::Timestamp(ArrowUnit::Nanosecond, _) => {
                ints::<TimestampNanosecondType>(a, mul, out, bad)
            }
            DataType::Duration(ArrowUnit::Second) => ints::<DurationSecondType>(a, mul, out, bad),
            DataType::Duration(ArrowUnit::Millisecond) => {
                ints::<DurationMillisecondType>(a, mul, out, bad)
            }
            DataType::Duration(ArrowUnit::Microsecond) => {
                ints::<DurationMicrosecondType>(a, mul, out, bad)
            }
            DataType::Duration(ArrowUnit::Nanosecond) => {
                ints::<DurationNanosecondType>(a, mul, out, bad)
            }
            // Not a time type `plan` chooses: every row lacks a time.
            _ => {
                bad.extend(0..a.len());
                out.resize(out.len() + a.len(), 0);
            }
        },
    }
}

/// Readies value column `a` of a record batch: a dictionary's values are converted once.
fn prepare(a: &dyn Array) -> Prepared<'_> {
    let Some(d) = a.as_any_dictionary_opt() else {
        return Prepared::Plain(a);
    };
    let values = d.values().as_ref();
    let mut converted = Vec::with_capacity(values.len());
    let mut clamps = Clamps::default();
    push_range(
        &Prepared::Plain(values),
        0..values.len(),
        &mut converted,
        &mut clamps,
    );
    // Which values were clamped (rare: converted again one by one).
    let clamped = if clamps.count > 0 {
        (0..values.len())
            .map(|i| {
                let mut one = Vec::with_capacity(1);
                let mut c = Clamps::default();
                push_range(&Prepared::Plain(values), i..i + 1, &mut one, &mut c);
                c.count > 0
            })
            .collect()
    } else {
        Vec::new()
    };
    Prepared::Dict {
        keys: d.normalized_keys(),
        values: converted,
        clamped,
        nulls: d.keys().logical_nulls(),
    }
}

/// Appends rows `r` of value column `col` to `out` as f32: nulls, NaN and ±inf as NaN, numbers
/// beyond the f32 range as ±`f32::MAX`, counted in `clamps` (with rows numbered in the record
/// batch).
fn push_range(col: &Prepared<'_>, r: Range<usize>, out: &mut Vec<f32>, clamps: &mut Clamps) {
    let a = match col {
        Prepared::Plain(a) => *a,
        Prepared::Dict {
            keys,
            values,
            clamped,
            nulls,
        } => {
            out.reserve(r.len());
            for i in r {
                let k = keys[i];
                if nulls.as_ref().is_some_and(|n| n.is_null(i)) || k >= values.len() {
                    out.push(f32::NAN);
                } else {
                    out.push(values[k]);
                    if clamped.get(k) == Some(&true) {
                        clamps.note(i, f64::from(values[k]));
                    }
                }
            }
            return;
        }
    };
    let base = out.len();
    match a.data_type() {
        DataType::Int8 => narrow::<Int8Type>(a, r.clone(), out, f32::from),
        DataType::Int16 => narrow::<Int16Type>(a, r.clone(), out, f32::from),
        DataType::Int32 => narrow::<Int32Type>(a, r.clone(), out, |v| v as f32),
        DataType::Int64 => narrow::<Int64Type>(a, r.clone(), out, |v| v as f32),
        DataType::UInt8 => narrow::<UInt8Type>(a, r.clone(), out, f32::from),
        DataType::UInt16 => narrow::<UInt16Type>(a, r.clone(), out, f32::from),
        DataType::UInt32 => narrow::<UInt32Type>(a, r.clone(), out, |v| v as f32),
        DataType::UInt64 => narrow::<UInt64Type>(a, r.clone(), out, |v| v as f32),
        DataType::Float16 => narrow::<Float16Type>(a, r.clone(), out, |v| finite(v.to_f32())),
        DataType::Float32 => narrow::<Float32Type>(a, r.clone(), out, finite),
        DataType::Float64 => wide::<Float64Type>(a, r.clone(), out, clamps, |v| v),
        DataType::Decimal32(_, s) => {
            let div = 10f64.powi(i32::from(*s));
            wide::<Decimal32Type>(a, r.clone(), out, clamps, |v| f64::from(v) / div)
        }
        DataType::Decimal64(_, s) => {
            let div = 10f64.powi(i32::from(*s));
            wide::<Decimal64Type>(a, r.clone(), out, clamps, |v| v as f64 / div)
        }
        DataType::Decimal128(_, s) => {
            let div = 10f64.powi(i32::from(*s));
            wide::<Decimal128Type>(a, r.clone(), out, clamps, |v| v as f64 / div)
        }
        DataType::Decimal256(_, s) => {
            let div = 10f64.powi(i32::from(*s));
            wide::<Decimal256Type>(a, r.clone(), out, clamps, |v| i256_f64(v) / div)
        }
        DataType::Boolean => {
            let b = a.as_boolean();
            out.extend(r.clone().map(|i| f32::from(u8::from(b.value(i)))));
        }
        // Not a value type `plan` chooses: gaps.
        _ => out.resize(base + r.len(), f32::NAN),
    }
    if let Some(n) = a.nulls().filter(|n| n.null_count() > 0) {
        for (k, i) in r.enumerate() {
            if n.is_null(i) {
                out[base + k] = f32::NAN;
            }
        }
    }
}

/// NaN for ±inf (a gap, as in CSV files), else `v`.
fn finite(v: f32) -> f32 {
    if v.is_finite() { v } else { f32::NAN }
}

/// A 256-bit decimal's integer as f64 (to about 16 significant digits).
fn i256_f64(v: i256) -> f64 {
    let (low, high) = v.to_parts();
    high as f64 * 2f64.powi(128) + low as f64
}

/// Appends rows `r` of primitive array `a` through `f`, a conversion that cannot leave the f32
/// range (nulls are set afterwards).
fn narrow<T: ArrowPrimitiveType>(
    a: &dyn Array,
    r: Range<usize>,
    out: &mut Vec<f32>,
    f: impl Fn(T::Native) -> f32,
) {
    let p = a.as_primitive::<T>();
    out.extend(p.values()[r].iter().map(|&v| f(v)));
}

/// Appends rows `r` of primitive array `a` through `f` to f64, then to f32: non-finite as NaN,
/// beyond the f32 range clamped to ±`f32::MAX` and counted in `clamps` (valid rows only).
/// One pass that vectorises, then a fix-up pass over the rare cells that came out infinite.
fn wide<T: ArrowPrimitiveType>(
    a: &dyn Array,
    r: Range<usize>,
    out: &mut Vec<f32>,
    clamps: &mut Clamps,
    f: impl Fn(T::Native) -> f64,
) {
    let p = a.as_primitive::<T>();
    let vals = &p.values()[r.clone()];
    let base = out.len();
    out.extend(vals.iter().map(|&v| f(v) as f32));
    if out[base..].iter().all(|y| y.is_finite()) {
        return;
    }
    for (k, y) in out[base..].iter_mut().enumerate() {
        if y.is_finite() {
            continue;
        }
        let x = f(vals[k]);
        if x.is_finite() {
            *y = f32::MAX.copysign(*y);
            if p.is_valid(r.start + k) {
                clamps.note(r.start + k, x);
            }
        } else {
            *y = f32::NAN;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extensions_and_time_names() {
        let of = |p: &str| ColumnarFormat::of_path(Path::new(p));
        assert_eq!(of("a/b.PARQUET"), Some(ColumnarFormat::Parquet));
        assert_eq!(of("x.pq"), Some(ColumnarFormat::Parquet));
        for p in ["x.arrow", "x.feather", "x.ipc", "x.arrows"] {
            assert_eq!(of(p), Some(ColumnarFormat::ArrowIpc), "{p}");
        }
        assert_eq!(of("x.csv"), None);
        assert_eq!(of("parquet"), None);
        for n in [
            "time",
            "Timestamp",
            "DATE",
            "datetime",
            "t",
            "t_ns",
            "time_ms",
            " time ",
        ] {
            assert!(is_time_name(n), "{n}");
        }
        for n in ["times", "tt", "value", "timestamp_x", "_ms", ""] {
            assert!(!is_time_name(n), "{n}");
        }
    }

    #[test]
    fn rows_are_removed_by_record_batch_index() {
        let mut v: Vec<u32> = (10..20).collect();
        // The batch holds rows 10..20 of its record batch; rows 10, 13 and 19 go.
        remove_rows(&mut v, &[10, 13, 19], 10);
        assert_eq!(v, [11, 12, 14, 15, 16, 17, 18]);
    }
}
