//! The rows of a CSV after its header: what the reading thread needs ([`CsvLayout`], the long
//! format's [`Keys`]), a row's time and value cells into a batch, and the row loop
//! ([`read_csv_rows`]) shared by the producer thread and the in-memory reader.

use super::*;

/// What the CSV thread needs to parse rows.
pub(super) struct CsvLayout {
    pub(super) path: String,
    /// Fields per row (header length).
    pub(super) fields: usize,
    /// Column index and name of each value series.
    pub(super) value_cols: Vec<(usize, String)>,
    /// Unit of the time column (from its header name).
    pub(super) unit: TimeUnit,
    /// `true`: time cells are read exactly into integer nanoseconds ([`parse_time_ns`]);
    /// `false`: as f64 in `unit` (the first rows held a time that is not an exact decimal in
    /// the i64 nanosecond range).
    pub(super) exact_ns: bool,
    /// The time column holds dates or date-times in this format ([`super::dates`]), read as
    /// integer nanoseconds since 1970-01-01 UTC.
    pub(super) dates: Option<super::dates::DateFormat>,
    /// Column of the times (0, or 1 when the key is the first column).
    pub(super) time_col: usize,
    /// Long format: the column whose value names each row's series (`--series-key`).
    pub(super) key_col: Option<usize>,
    /// Zone of dates written without one.
    pub(super) zone: super::dates::Zone,
}

/// Long format: the series each key value has started, on the thread that reads the rows.
#[derive(Debug, Default)]
pub(super) struct Keys {
    /// Index of each key value's first series (its value columns follow in order).
    pub(super) index: std::collections::HashMap<String, u32>,
    /// Series started so far.
    pub(super) count: usize,
    /// Wide format: each column that could split the rows into series (see
    /// [`SeriesSource::key_candidates`]) and its distinct values in the rows read so far, up
    /// to [`KEY_MAX_VALUES`] + 1.
    pub(super) candidates: Vec<(usize, std::collections::HashSet<String>)>,
}

impl Keys {
    /// Counts the cells of row `rec` in the candidate key columns.
    pub(super) fn see(&mut self, rec: &csv::StringRecord) {
        for (c, seen) in &mut self.candidates {
            if let Some(cell) = rec.get(*c)
                && !cell.is_empty()
                && seen.len() <= KEY_MAX_VALUES
                && !seen.contains(cell)
            {
                seen.insert(cell.to_string());
            }
        }
    }

    /// The distinct values of each candidate column so far.
    pub(super) fn candidate_counts(&self) -> Vec<usize> {
        self.candidates.iter().map(|(_, s)| s.len()).collect()
    }
}

impl CsvLayout {
    pub(super) fn row_error(&self, line: u64, problem: String) -> SeriesError {
        SeriesError::Row {
            path: self.path.clone(),
            line,
            problem,
        }
    }

    /// The error of row `rec` when it is the file's last row, `ends` says the file ended inside
    /// it (no line break after it), and it is cut short: fewer fields than the header, or an
    /// empty last field (`999.5,` of a file still being written). `None` for a whole row.
    pub(super) fn cut_short<R>(
        &self,
        rec: &csv::StringRecord,
        ends: &Ends<R>,
    ) -> Option<SeriesError> {
        let empty_last = rec.iter().next_back().is_some_and(str::is_empty);
        if !ends.ended_mid_line() || !(rec.len() < self.fields || empty_last) {
            return None;
        }
        let line = rec.position().map_or(0, |p| p.line());
        let shown: Vec<&str> = rec.iter().collect();
        Some(self.row_error(
            line,
            format!(
                "the file ends inside this row ('{}', {} of {} fields{}, no line break): \
                 cut short, perhaps still being written",
                vizdeck_base::text::one_line(&shown.join(",")),
                rec.len(),
                self.fields,
                if empty_last { ", the last empty" } else { "" }
            ),
        ))
    }

    /// Parses one data row into `batch` (all or nothing); `keys` holds the series of a
    /// long-format file's key values.
    pub(super) fn parse_row(
        &self,
        rec: &csv::StringRecord,
        batch: &mut Batch,
        keys: &mut Keys,
    ) -> Result<(), SeriesError> {
        let line = rec.position().map_or(0, |p| p.line());
        if rec.len() != self.fields {
            return Err(self.row_error(
                line,
                format!("{} fields, the header has {}", rec.len(), self.fields),
            ));
        }
        let cell = &rec[self.time_col];
        if cell.is_empty() {
            return Err(self.row_error(line, "time cell is empty".into()));
        }
        if let Some(f) = &self.dates {
            let parsed = f.parse_ns(cell).and_then(|ns| {
                if f.is_zoned() {
                    Some(ns)
                } else {
                    self.zone.to_utc_ns(ns)
                }
            });
            let Some(ns) = parsed else {
                return Err(self.row_error(
                    line,
                    format!(
                        "time '{}' does not read as a date in the format '{}'",
                        vizdeck_base::text::one_line(cell),
                        f.pattern
                    ),
                ));
            };
            return self.push_values(rec, line, batch, keys, Some(ns), 0.0);
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
                        format!(
                            "time '{}' is not a number",
                            vizdeck_base::text::one_line(cell)
                        ),
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
                    format!(
                        "time '{}' is not a number",
                        vizdeck_base::text::one_line(cell)
                    ),
                ));
            }
        };
        self.push_values(rec, line, batch, keys, t_ns, t)
    }

    /// Pushes the value cells of row `rec` (at `line`) at time `t_ns` (exact) or `t`.
    pub(super) fn push_values(
        &self,
        rec: &csv::StringRecord,
        line: u64,
        batch: &mut Batch,
        keys: &mut Keys,
        t_ns: Option<i64>,
        t: f64,
    ) -> Result<(), SeriesError> {
        if let Some(k) = self.key_col {
            return self.push_keyed(rec, line, batch, keys, &rec[k], t_ns, t);
        }
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
                                vizdeck_base::text::one_line(name),
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
                            vizdeck_base::text::one_line(name),
                            vizdeck_base::text::one_line(&rec[*c])
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

    /// Long format: pushes the value cells of row `rec` as points of the series of `key`
    /// (started, with its names in `batch.new_names`, on its first row; refused past
    /// [`MAX_SERIES`]).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn push_keyed(
        &self,
        rec: &csv::StringRecord,
        line: u64,
        batch: &mut Batch,
        keys: &mut Keys,
        key: &str,
        t_ns: Option<i64>,
        t: f64,
    ) -> Result<(), SeriesError> {
        let t_ns = match t_ns {
            Some(ns) => ns,
            None => {
                let ns = (t * 1e9).round();
                if ns.is_nan() || ns.abs() >= 9.2e18 {
                    return Err(self.row_error(
                        line,
                        format!("time {t} s is beyond ±292 years in nanoseconds"),
                    ));
                }
                ns as i64
            }
        };
        let n = self.value_cols.len();
        let started = !keys.index.contains_key(key);
        let base = match keys.index.get(key) {
            Some(&b) => b,
            None => {
                if keys.count + n > MAX_SERIES {
                    batch.refused += 1;
                    return Ok(());
                }
                let b = keys.count as u32;
                let shown = if key.is_empty() { "(empty)" } else { key };
                for (_, col) in &self.value_cols {
                    batch.new_names.push(if n == 1 {
                        shown.to_string()
                    } else {
                        format!("{shown}/{col}")
                    });
                }
                keys.count += n;
                keys.index.insert(key.to_string(), b);
                b
            }
        };
        let mark = batch.points.len();
        for (j, (c, name)) in self.value_cols.iter().enumerate() {
            let Some((v, was_clamped)) = parse_value(&rec[*c]) else {
                batch.points.truncate(mark);
                if started {
                    // The row is not stored: neither is the series it would have started.
                    keys.index.remove(key);
                    keys.count -= n;
                    batch.new_names.truncate(batch.new_names.len() - n);
                }
                return Err(self.row_error(
                    line,
                    format!(
                        "column '{}': '{}' is not a number",
                        vizdeck_base::text::one_line(name),
                        vizdeck_base::text::one_line(&rec[*c])
                    ),
                ));
            };
            batch.points.push((base + j as u32, t_ns, v));
            if was_clamped {
                batch.clamped += 1;
                if batch.clamp_note.is_none() {
                    batch.clamp_note = Some(format!(
                        "series file '{}' line {line}: column '{}': '{}' is beyond the f32 \
                         range (±3.4e38); drawn clamped to ±3.4e38",
                        self.path,
                        vizdeck_base::text::one_line(name),
                        &rec[*c]
                    ));
                }
            }
        }
        batch.point_rows += 1;
        Ok(())
    }
}

/// A value cell: empty, `NaN` or ±`inf` → NaN (a gap); a number with a dot decimal (whatever the
/// locale) → its value rounded to f32, `true` when it lies beyond the f32 range (|v| rounds
/// past 3.4028235e38, including numbers beyond the f64 range such as `1e400`) and was clamped
/// to ±`f32::MAX`; otherwise `None`.
pub(super) fn parse_value(cell: &str) -> Option<(f32, bool)> {
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

pub(super) fn csv_error(path: &str, e: csv::Error) -> SeriesError {
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

/// The rows of a CSV after its first rows, as [`run_csv`] reads them: batches of rows (one row
/// in tail mode) taken from `fresh` and handed to `emit` (which returns `false` to stop), each
/// followed by a `Skipped` when rows of it did not read (a time or value cell that is not one,
/// a row of the wrong length: skipped, the rows around it kept), then `Done` or `Error` (the
/// file itself failed: I/O, not UTF-8).
pub(super) fn read_csv_rows<R: Read>(
    reader: &mut csv::Reader<Ends<R>>,
    layout: &CsvLayout,
    keys: &mut Keys,
    tail: bool,
    mut fresh: impl FnMut() -> Batch,
    mut emit: impl FnMut(Msg) -> bool,
    stop: &AtomicBool,
) {
    let mut rec = csv::StringRecord::new();
    // The last row that did not read: skipped, and said how once the next row (or the end)
    // tells whether it was a stray line or a half-written last row.
    let mut failed: Option<SeriesError> = None;
    // Tail mode: a row is sent as soon as it is read (the reader may then wait a long time).
    let batch_rows = if tail { 1 } else { CSV_BATCH_ROWS };
    loop {
        let mut batch = fresh();
        let mut end: Option<Msg> = None;
        let mut end_counts: Option<Msg> = None;
        // Rows of this batch skipped as unreadable, and the first one's message.
        let mut skipped: (u64, Option<String>) = (0, None);
        while batch.rows() < batch_rows {
            match reader.read_record(&mut rec) {
                Ok(true) => {
                    if let Some(e) = failed.take() {
                        // Not the last row: a stray line; the rows around it still count.
                        skipped.0 += 1;
                        skipped
                            .1
                            .get_or_insert_with(|| format!("{e} (row skipped)"));
                    }
                    // The row that reaches the end of a file ending mid-line may be cut short.
                    let at_end = reader.position().byte() >= reader.get_ref().total;
                    let cut = if at_end && !tail {
                        layout.cut_short(&rec, reader.get_ref())
                    } else {
                        None
                    };
                    if let Some(e) = cut {
                        failed = Some(e);
                    } else if let Err(e) = layout.parse_row(&rec, &mut batch, keys) {
                        failed = Some(e);
                    } else {
                        keys.see(&rec);
                    }
                }
                Ok(false) => {
                    if let Some(e) = failed.take() {
                        skipped.0 += 1;
                        skipped
                            .1
                            .get_or_insert_with(|| format!("{e} (incomplete last row skipped)"));
                    }
                    if !keys.candidates.is_empty() {
                        end_counts = Some(Msg::KeyValues(keys.candidate_counts()));
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
        if let (rows @ 1.., Some(first)) = skipped
            && !emit(Msg::Skipped { first, rows })
        {
            return;
        }
        if let Some(msg) = end_counts
            && !emit(msg)
        {
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
