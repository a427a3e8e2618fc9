//! The choice of a columnar file's time column and value columns from its schema ([`plan`]):
//! which types and names count as time, which columns are values, and the messages that name
//! them. Kept apart from the readers so the rules are read in one place.

use super::*;

use arrow_schema::{DataType, Schema, TimeUnit as ArrowUnit};

/// How the time column's cells become integer nanoseconds.
#[derive(Clone, Copy, Debug)]
pub(super) enum TimeKind {
    /// Integers (of any width) times this many nanoseconds each, exactly; a product beyond the
    /// i64 range is a row with no time.
    Int(i64),
    /// Floats times this many nanoseconds each, rounded to the nearest nanosecond.
    Float(f64),
}

/// What `open` decided about a file's columns.
pub(super) struct Plan {
    /// Field index of the time column.
    pub(super) time: usize,
    pub(super) kind: TimeKind,
    pub(super) unit: TimeUnit,
    /// What the time column holds, for [`SeriesSource::time_format`] (dates and timestamps).
    pub(super) format: Option<String>,
    /// A numeric time column whose unit the first value's magnitude decides (no unit suffix).
    pub(super) by_magnitude: bool,
    /// Field index and series name of each value column.
    pub(super) values: Vec<(usize, String)>,
}

/// The unit of an Arrow time type in vizdeck's terms, and nanoseconds per tick.
pub(super) fn arrow_unit(u: &ArrowUnit) -> (TimeUnit, i64, &'static str) {
    match u {
        ArrowUnit::Second => (TimeUnit::Seconds, 1_000_000_000, "s"),
        ArrowUnit::Millisecond => (TimeUnit::Millis, 1_000_000, "ms"),
        ArrowUnit::Microsecond => (TimeUnit::Micros, 1_000, "us"),
        ArrowUnit::Nanosecond => (TimeUnit::Nanos, 1, "ns"),
    }
}

/// Integer and floating-point types (the kinds a numeric time column may have).
pub(super) fn is_int_or_float(t: &DataType) -> bool {
    t.is_integer() || t.is_floating()
}

/// Types read as values: integers, floats, decimals, booleans, and dictionaries of those.
pub(super) fn is_value_type(t: &DataType) -> bool {
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
pub(super) fn is_time_name(name: &str) -> bool {
    let n = name.trim().to_lowercase();
    let stem = ["_ns", "_us", "_µs", "_ms", "_s"]
        .iter()
        .find_map(|s| n.strip_suffix(s))
        .unwrap_or(&n);
    matches!(stem, "time" | "timestamp" | "date" | "datetime" | "t")
}

/// `name: type, …` of every field, for messages.
pub(super) fn header_of(schema: &Schema) -> String {
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
pub(super) fn plan(schema: &Schema, shown: &str, fmt: ColumnarFormat) -> Result<Plan, SeriesError> {
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
}
