//! The CSV source: header and layout (time column, value columns, delimiter), rows parsed on
//! the producer thread (or all at once from bytes), sorted into place per batch, tail mode.

use super::*;

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

/// A reader that remembers how many bytes it handed out, the last of them, and whether it
/// reached the end: the CSV reader reads through it so that a last row cut short (no line
/// break at the end of the file) can be told apart.
struct Ends<R> {
    inner: R,
    /// Bytes handed out.
    total: u64,
    /// The last byte handed out.
    last: Option<u8>,
    /// A read returned 0 bytes (the end of the input).
    eof: bool,
}

impl<R> Ends<R> {
    fn new(inner: R) -> Ends<R> {
        Ends {
            inner,
            total: 0,
            last: None,
            eof: false,
        }
    }

    /// The input ended, and not with a line break.
    fn ended_mid_line(&self) -> bool {
        self.eof && !matches!(self.last, None | Some(b'\n' | b'\r'))
    }
}

impl<R: Read> Read for Ends<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        if n > 0 {
            self.total += n as u64;
            self.last = Some(buf[n - 1]);
        } else if !buf.is_empty() {
            self.eof = true;
        }
        Ok(n)
    }
}

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
    /// The time column holds dates or date-times in this format ([`super::dates`]), read as
    /// integer nanoseconds since 1970-01-01 UTC.
    dates: Option<super::dates::DateFormat>,
    /// Column of the times (0, or 1 when the key is the first column).
    time_col: usize,
    /// Long format: the column whose value names each row's series (`--series-key`).
    key_col: Option<usize>,
    /// Zone of dates written without one.
    zone: super::dates::Zone,
}

/// Long format: the series each key value has started, on the thread that reads the rows.
#[derive(Debug, Default)]
struct Keys {
    /// Index of each key value's first series (its value columns follow in order).
    index: std::collections::HashMap<String, u32>,
    /// Series started so far.
    count: usize,
    /// Wide format: each column that could split the rows into series (see
    /// [`SeriesSource::key_candidates`]) and its distinct values in the rows read so far, up
    /// to [`KEY_MAX_VALUES`] + 1.
    candidates: Vec<(usize, std::collections::HashSet<String>)>,
}

impl Keys {
    /// Counts the cells of row `rec` in the candidate key columns.
    fn see(&mut self, rec: &csv::StringRecord) {
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
    fn candidate_counts(&self) -> Vec<usize> {
        self.candidates.iter().map(|(_, s)| s.len()).collect()
    }
}

impl CsvLayout {
    fn row_error(&self, line: u64, problem: String) -> SeriesError {
        SeriesError::Row {
            path: self.path.clone(),
            line,
            problem,
        }
    }

    /// The error of row `rec` when it is the file's last row, `ends` says the file ended inside
    /// it (no line break after it), and it is cut short: fewer fields than the header, or an
    /// empty last field (`999.5,` of a file still being written). `None` for a whole row.
    fn cut_short<R>(&self, rec: &csv::StringRecord, ends: &Ends<R>) -> Option<SeriesError> {
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
    fn parse_row(
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
    fn push_values(
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
    fn push_keyed(
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
    /// Long format: the series the first rows started.
    keys: Keys,
    /// The key column's name (long format).
    series_key: Option<String>,
    /// Columns that could split the rows into series (see [`SeriesSource::key_candidates`]).
    key_candidates: Vec<KeyCandidate>,
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
    opts: &CsvOptions,
) -> Result<CsvStart<Ends<BufReader<R>>>, SeriesError> {
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
        .from_reader(Ends::new(buffered));

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
        .map(|h| vizdeck_base::text::one_line(h))
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

    // The last prefix row may be half-written: columns are judged on the others when there are any.
    let judged = if eof && prefix.len() > 1 {
        &prefix[..prefix.len() - 1]
    } else {
        &prefix[..]
    };
    let stats: Vec<ColumnStats> = (0..header.len())
        .map(|c| ColumnStats::of(judged, c))
        .collect();
    let column_name = |c: usize| {
        if header[c].is_empty() {
            format!("column {}", c + 1)
        } else {
            header[c].clone()
        }
    };
    let key_col = match &opts.series_key {
        Some(key) => Some(
            header
                .iter()
                .position(|h| h == key)
                .or_else(|| header.iter().position(|h| h.eq_ignore_ascii_case(key)))
                .ok_or_else(|| SeriesError::NoKeyColumn {
                    path: shown.to_string(),
                    key: vizdeck_base::text::one_line(key),
                    header: header_line.clone(),
                })?,
        ),
        // A first column of a few repeated names followed by a time column: long format.
        None if header.len() >= 3
            && stats[0].is_key_like()
            && super::dates::detect(&stats[0].samples(judged, 0)).is_none()
            && (stats[1].numeric
                || super::dates::detect(&stats[1].samples(judged, 1)).is_some()) =>
        {
            Some(0)
        }
        None => None,
    };
    let time_col = usize::from(key_col == Some(0));
    let candidate_cols: Vec<usize> = if key_col.is_none() {
        stats
            .iter()
            .enumerate()
            .filter(|&(c, st)| c != time_col && st.is_key_like() && st.distinct.len() >= 2)
            .map(|(c, _)| c)
            .collect()
    } else {
        Vec::new()
    };
    let mut value_cols: Vec<(usize, String)> = Vec::new();
    for (c, st) in stats.iter().enumerate() {
        if c == time_col || Some(c) == key_col || !(st.any && st.numeric) {
            continue;
        }
        let name = unique_name(column_name(c), &value_cols);
        value_cols.push((c, name));
    }
    if value_cols.is_empty() {
        return Err(SeriesError::NoNumericColumn {
            path: shown.to_string(),
            header: header_line,
        });
    }

    // The unit: --time-unit, else the header's suffix, else Unix time by magnitude (s, ms, µs,
    // ns), else seconds.
    let first_time = prefix
        .iter()
        .filter_map(|r| r.get(time_col))
        .find_map(|c| c.trim().parse::<f64>().ok());
    let unit = opts
        .time_unit
        .or_else(|| {
            (!headerless)
                .then(|| TimeUnit::suffix_of(&header[time_col]))
                .flatten()
        })
        .or_else(|| first_time.and_then(TimeUnit::from_magnitude))
        .unwrap_or(TimeUnit::Seconds);
    // Exact integer nanoseconds unless a number in the first rows cannot be read that way.
    let exact_ns = prefix
        .iter()
        .filter_map(|r| r.get(time_col))
        .all(|cell| parse_time_ns(cell, unit).is_some() || cell.parse::<f64>().is_err());
    // Dates: when a time cell of the first rows is not a number, the format that reads them all
    // (the last row may be half-written: it is left out of the samples).
    let samples: Vec<&str> = prefix
        .iter()
        .take(
            prefix
                .len()
                .saturating_sub(usize::from(eof && prefix.len() > 1)),
        )
        .filter_map(|r| r.get(time_col))
        .filter(|c| !c.trim().is_empty())
        .collect();
    let detected = if let Some(f) = &opts.time_format {
        Some(super::dates::Detected {
            format: f.clone(),
            note: None,
        })
    } else if samples.iter().any(|c| c.trim().parse::<f64>().is_err()) {
        super::dates::detect(&samples)
    } else {
        None
    };
    let mut warning = detected
        .as_ref()
        .and_then(|d| d.note.as_ref())
        .map(|n| format!("series file '{shown}': {n}"));
    let layout = CsvLayout {
        path: shown.to_string(),
        fields: header.len(),
        value_cols,
        unit,
        exact_ns: exact_ns || detected.is_some(),
        dates: detected.map(|d| d.format),
        time_col,
        key_col,
        zone: opts.time_zone,
    };
    // The candidates' values are counted over every row read (the button says how many).
    let mut keys = Keys {
        candidates: candidate_cols
            .iter()
            .map(|&c| (c, std::collections::HashSet::new()))
            .collect(),
        ..Keys::default()
    };
    let mut batch0 = Batch::default();
    let mut rows_skipped = 0;
    let n_prefix = prefix.len();
    // A row of the first rows that does not read is skipped (said in the warning) when another
    // row reads; when none does, the file's rows are not what the layout says: refused.
    let mut first_error: Option<SeriesError> = None;
    let mut parsed_any = false;
    for (k, rec) in prefix.iter().enumerate() {
        let last = eof && k + 1 == n_prefix && !tail;
        let cut = if last {
            layout.cut_short(rec, reader.get_ref())
        } else {
            None
        };
        let parsed = match cut {
            Some(e) => Err(e),
            None => layout.parse_row(rec, &mut batch0, &mut keys),
        };
        match parsed {
            Ok(()) => {
                parsed_any = true;
                keys.see(rec);
            }
            Err(e) => {
                let how = if last {
                    "incomplete last row skipped"
                } else {
                    "row skipped"
                };
                if rows_skipped == 0 {
                    warning = Some(match warning {
                        Some(w) => format!("{w}; {e} ({how})"),
                        None => format!("{e} ({how})"),
                    });
                }
                rows_skipped += 1;
                first_error.get_or_insert(e);
            }
        }
    }
    if let (false, Some(e)) = (parsed_any, first_error) {
        if key_col.is_none() && !stats[0].numeric && header.len() >= 3 {
            // A first column of names, too few rows to tell: say how to split by it.
            return Err(match e {
                SeriesError::Row {
                    path,
                    line,
                    problem,
                } => SeriesError::Row {
                    path,
                    line,
                    problem: format!(
                        "{problem} (if the first column names the series, \
                         --series-key '{}' splits the rows by it)",
                        column_name(0)
                    ),
                },
                other => other,
            });
        }
        return Err(e);
    }
    batch0.sort_rows();
    let key_candidates = candidate_cols
        .iter()
        .zip(keys.candidate_counts())
        .map(|(&c, values)| KeyCandidate {
            column: column_name(c),
            values,
        })
        .filter(|k| k.values >= 2)
        .collect();
    let names = if key_col.is_some() {
        // Long format: the series are started by the rows (`batch0.new_names`).
        Vec::new()
    } else {
        layout.value_cols.iter().map(|(_, n)| n.clone()).collect()
    };
    if let (None, Some(k)) = (&opts.series_key, key_col) {
        let note = format!(
            "series file '{shown}': rows split into series by the first column '{}' \
             (long format; --series-key names another column)",
            column_name(k)
        );
        warning = Some(match warning {
            Some(w) => format!("{w}; {note}"),
            None => note,
        });
    }
    Ok(CsvStart {
        reader,
        series_key: key_col.map(column_name),
        layout,
        keys,
        names,
        batch0,
        warning,
        rows_skipped,
        eof,
        key_candidates,
    })
}

/// Most non-numeric cells a column of numbers may hold among the first rows, per
/// [`NUMBERS_PER_BAD_CELL`] numbers: a few bad cells (`ERR`, `n/a`) each cost their row (skipped,
/// counted and said), not the column.
const NUMBERS_PER_BAD_CELL: usize = 10;

/// What the first rows say about one column.
struct ColumnStats {
    /// Some cell is not empty.
    any: bool,
    /// A column of numbers: some non-empty cell is a number, and at most one in
    /// [`NUMBERS_PER_BAD_CELL`] + 1 is not (those rows are skipped when read).
    numeric: bool,
    /// Distinct non-empty cells, up to [`KEY_MAX_VALUES`] + 1.
    distinct: std::collections::HashSet<String>,
    /// Rows with a non-empty cell.
    filled: usize,
}

impl ColumnStats {
    fn of(rows: &[csv::StringRecord], c: usize) -> ColumnStats {
        let mut st = ColumnStats {
            any: false,
            numeric: true,
            distinct: std::collections::HashSet::new(),
            filled: 0,
        };
        let (mut numbers, mut bad) = (0usize, 0usize);
        for cell in rows
            .iter()
            .filter_map(|r| r.get(c))
            .filter(|c| !c.is_empty())
        {
            st.any = true;
            st.filled += 1;
            if cell.parse::<f64>().is_ok() {
                numbers += 1;
            } else {
                bad += 1;
            }
            if st.distinct.len() <= KEY_MAX_VALUES {
                st.distinct.insert(cell.to_string());
            }
        }
        st.numeric = bad == 0 || (numbers > 0 && bad * NUMBERS_PER_BAD_CELL <= numbers);
        st
    }

    /// A text column that repeats few values: at most [`KEY_MAX_VALUES`] distinct, each on four
    /// rows on average (a single value counts from four rows).
    fn is_key_like(&self) -> bool {
        self.any
            && !self.numeric
            && self.distinct.len() <= KEY_MAX_VALUES
            && self.distinct.len() * 4 <= self.filled
    }

    /// The column's non-empty cells.
    fn samples<'a>(&self, rows: &'a [csv::StringRecord], c: usize) -> Vec<&'a str> {
        rows.iter()
            .filter_map(|r| r.get(c))
            .filter(|c| !c.is_empty())
            .collect()
    }
}

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

/// The rows of a CSV after its first rows, as [`run_csv`] reads them: batches of rows (one row
/// in tail mode) taken from `fresh` and handed to `emit` (which returns `false` to stop), each
/// followed by a `Skipped` when rows of it did not read (a time or value cell that is not one,
/// a row of the wrong length: skipped, the rows around it kept), then `Done` or `Error` (the
/// file itself failed: I/O, not UTF-8).
fn read_csv_rows<R: Read>(
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
