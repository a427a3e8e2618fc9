//! The CSV source: header and layout (time column, value columns, delimiter), rows parsed on
//! the producer thread (or all at once from bytes), sorted into place per batch, tail mode.
//!
//! Files: `mod.rs` the `open_csv_*` entry points and the producer thread; `input.rs` the byte
//! readers under the CSV parser (tail mode, the end of the input); `start.rs` the header and the
//! first rows (delimiter, layout, key column); `rows.rs` the rows after them (time and value
//! cells, long format, the row loop).

mod input;
mod rows;
mod start;

use super::*;

use input::{CsvInput, Ends, Tail};
use rows::{CsvLayout, Keys, csv_error, read_csv_rows};
pub use start::sniff_delimiter;
use start::{CsvStart, start_csv};

/// Opens a CSV series source.
///
/// Accepted: a UTF-8 byte-order mark; LF or CRLF line ends; fields quoted with `"`; delimiter `,`
/// `;` or tab (detected from the first line); an optional header row (there is none when every
/// cell of the first row is a number, and the series are then called `column 2`, …); numbers with
/// a dot decimal in any locale; empty, `NaN` and ±`inf` cells as gaps. A half-written last row
/// (wrong field count or an unparsable cell in the final row; in a file that ends without a line
/// break, fewer fields than the header or an empty last field, such as `999.5,`) is skipped with
/// a [`warning`](SeriesSource::warning) and counted in [`rows_skipped`](SeriesSource::rows_skipped);
/// so is any row with a cell that does not read (its line, column and cell said). A value column
/// is one whose cells among the first rows are numbers, up to one bad cell per 10 numbers.
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
    open_csv_opts(path, tail, &CsvOptions::default())
}

/// How the time column of a CSV reads, where the file itself does not say it right.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CsvOptions {
    /// `--time-format`: dates in this format, instead of the format recognised from the first
    /// rows.
    pub time_format: Option<super::dates::DateFormat>,
    /// `--time-unit`: numbers in this unit, instead of the header's suffix or the magnitude.
    pub time_unit: Option<TimeUnit>,
    /// `--time-zone`: the zone of dates and date-times written without one (default UTC).
    pub time_zone: super::dates::Zone,
    /// `--series-key`: long format, the rows split into one series per value of this column
    /// (the time column is then the first other column). Without it, a first column of a few
    /// repeated text values followed by a time column is taken as the key.
    pub series_key: Option<String>,
}

/// [`open_csv_with`] with the time column read as `opts` say.
///
/// # Errors
///
/// As [`open_csv_with`]; a time in the first rows that does not read in `opts.time_format` names
/// its line and the format.
pub fn open_csv_opts(
    path: &Path,
    tail: bool,
    opts: &CsvOptions,
) -> Result<SeriesSource, SeriesError> {
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
        let file = open_input(path, &shown)?;
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
        keys,
        series_key,
        key_candidates,
        names,
        batch0,
        warning,
        rows_skipped,
        eof,
    } = start_csv(input, &shown, want, tail, opts)?;
    let unit = layout.unit;
    let time_format = layout.dates.as_ref().map(|f| f.pattern.clone());
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
                .spawn(move || run_csv(reader, layout, keys, tx, recycled, &stop2, tail))
                .map_err(|source| SeriesError::Spawn {
                    label: label.clone(),
                    source,
                })?,
        )
    };
    // A thread blocked reading stdin cannot be woken: it is detached, not joined.
    let handle = if stdin { None } else { handle };
    let inner = Inner::Thread {
        rx,
        recycle,
        stop,
        lost,
        handle,
    };
    let mut source = csv_source(
        names,
        label,
        inner,
        pending,
        warning,
        rows_skipped,
        (unit, time_format),
    );
    source.series_key = series_key;
    source.key_candidates = key_candidates;
    Ok(source)
}

/// A CSV source around its producer side (`inner`), the rows read so far (`pending`) and what the
/// first rows said (a warning, rows skipped, the time unit and the date format, if dates).
fn csv_source(
    names: Vec<String>,
    label: String,
    inner: Inner,
    pending: VecDeque<Batch>,
    warning: Option<String>,
    rows_skipped: u64,
    (unit, time_format): (TimeUnit, Option<String>),
) -> SeriesSource {
    let mut source = SeriesSource::empty(label, inner);
    source.names = names;
    source.pending = pending;
    source.warning = warning;
    source.rows_skipped = rows_skipped;
    source.time_unit = Some(unit);
    source.time_format = time_format;
    source
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
        mut keys,
        series_key,
        key_candidates,
        names,
        batch0,
        warning,
        rows_skipped,
        eof,
    } = start_csv(bytes, name, CSV_PREFIX_ROWS, false, &CsvOptions::default())?;
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
            &mut keys,
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
    let inner = Inner::Thread {
        rx,
        recycle,
        stop,
        lost: Arc::new(AtomicU64::new(0)),
        handle: None,
    };
    let label = format!("csv: {name}");
    let mut source = csv_source(
        names,
        label,
        inner,
        pending,
        warning,
        rows_skipped,
        (
            layout.unit,
            layout.dates.as_ref().map(|f| f.pattern.clone()),
        ),
    );
    source.series_key = series_key;
    source.key_candidates = key_candidates;
    Ok(source)
}

/// CSV producer: reads the remaining rows in batches; waits while the ring is full; ends with
/// `Done` or with the first error. A bad row that turns out to be the last one is skipped with a
/// warning (a half-written last line) instead. In tail mode batches are sent as soon as the
/// reader has to wait for more data.
fn run_csv(
    mut reader: csv::Reader<Ends<BufReader<CsvInput>>>,
    layout: CsvLayout,
    mut keys: Keys,
    mut tx: Producer<Msg>,
    mut recycled: Consumer<Batch>,
    stop: &AtomicBool,
    tail: bool,
) {
    read_csv_rows(
        &mut reader,
        &layout,
        &mut keys,
        tail,
        || recycled.pop().unwrap_or_default(),
        |msg| send(&mut tx, msg, stop),
        stop,
    );
}
