//! The start of a CSV, read on the calling thread: the delimiter ([`sniff_delimiter`]), the
//! header and the first rows ([`start_csv`]), and what they say about each column
//! ([`ColumnStats`]): which is the time, which are values, whether one is a series key.

use super::*;

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
pub(super) struct CsvStart<R> {
    pub(super) reader: csv::Reader<R>,
    pub(super) layout: CsvLayout,
    /// Long format: the series the first rows started.
    pub(super) keys: Keys,
    /// The key column's name (long format).
    pub(super) series_key: Option<String>,
    /// Columns that could split the rows into series (see [`SeriesSource::key_candidates`]).
    pub(super) key_candidates: Vec<KeyCandidate>,
    /// Series names, in column order.
    pub(super) names: Vec<String>,
    /// The first rows, sorted.
    pub(super) batch0: Batch,
    /// The incomplete last row that was skipped, if the first rows reached the end.
    pub(super) warning: Option<String>,
    pub(super) rows_skipped: u64,
    /// Whether the first rows reached the end of the input.
    pub(super) eof: bool,
}

/// Reads the header of the CSV `input` and up to `want` data rows (see [`open_csv_with`] for
/// the format); `shown` names the input in messages.
pub(super) fn start_csv<R: Read>(
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
pub(super) const NUMBERS_PER_BAD_CELL: usize = 10;

/// What the first rows say about one column.
pub(super) struct ColumnStats {
    /// Some cell is not empty.
    pub(super) any: bool,
    /// A column of numbers: some non-empty cell is a number, and at most one in
    /// [`NUMBERS_PER_BAD_CELL`] + 1 is not (those rows are skipped when read).
    pub(super) numeric: bool,
    /// Distinct non-empty cells, up to [`KEY_MAX_VALUES`] + 1.
    pub(super) distinct: std::collections::HashSet<String>,
    /// Rows with a non-empty cell.
    pub(super) filled: usize,
}

impl ColumnStats {
    pub(super) fn of(rows: &[csv::StringRecord], c: usize) -> ColumnStats {
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
    pub(super) fn is_key_like(&self) -> bool {
        self.any
            && !self.numeric
            && self.distinct.len() <= KEY_MAX_VALUES
            && self.distinct.len() * 4 <= self.filled
    }

    /// The column's non-empty cells.
    pub(super) fn samples<'a>(&self, rows: &'a [csv::StringRecord], c: usize) -> Vec<&'a str> {
        rows.iter()
            .filter_map(|r| r.get(c))
            .filter(|c| !c.is_empty())
            .collect()
    }
}
