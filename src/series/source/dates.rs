//! Date and date-time time columns: the formats people's CSVs use, recognised from the first
//! rows and parsed with `chrono` (strftime patterns, never hand-rolled parsing) into integer
//! nanoseconds since 1970-01-01T00:00:00 UTC. Times without a zone are read as UTC.
//!
//! Recognised, in this order (the first that reads every sample wins):
//! RFC 3339 / ISO 8601 with a zone (`2020-01-01T12:00:00Z`, `…+02:00`, fractions of a second);
//! ISO without a zone (`2020-01-01T12:00:00.5`, `2020-01-01 12:00:00`, `2020-01-01 12:00`,
//! `2012-01-01`); slashes year first (`2010/01/01 00:00`, with seconds, or a date alone);
//! month names (`Jan 1 2000`, `January 1 2000`, `1 Jan 2000`, `Jan 1, 2000`); numeric dates
//! with the year last (`01/02/2003 13:45:00.123`, `01/02/2003 13:45`, `01/02/2003`, also with
//! `-` or `.`), read month first unless a sample only reads day first (`13/02/2003`); when both
//! read every sample the file is ambiguous: it is read month first, and [`Detected::note`] says
//! so.

use chrono::DateTime;

/// How a pattern is applied.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// RFC 3339 (any zone offset).
    Rfc3339,
    /// A date and time with a zone offset in the pattern (`%z`, `%:z`).
    Zoned,
    /// A date and time without a zone (UTC).
    DateTime,
    /// A date alone (midnight UTC).
    Date,
}

/// A time-column format: a strftime pattern (parsed once into chrono's items) and how it reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DateFormat {
    /// The strftime pattern (`rfc3339` for RFC 3339).
    pub pattern: String,
    kind: Kind,
    items: Vec<chrono::format::Item<'static>>,
}

/// The candidates, in order (see the module docs).
const CANDIDATES: &[(&str, Kind)] = &[
    ("rfc3339", Kind::Rfc3339),
    ("%Y-%m-%dT%H:%M:%S%.f", Kind::DateTime),
    ("%Y-%m-%d %H:%M:%S%.f", Kind::DateTime),
    ("%Y-%m-%dT%H:%M", Kind::DateTime),
    ("%Y-%m-%d %H:%M", Kind::DateTime),
    ("%Y-%m-%d", Kind::Date),
    ("%Y/%m/%d %H:%M:%S%.f", Kind::DateTime),
    ("%Y/%m/%d %H:%M", Kind::DateTime),
    ("%Y/%m/%d", Kind::Date),
    ("%b %d %Y", Kind::Date),
    ("%b %d, %Y", Kind::Date),
    ("%B %d %Y", Kind::Date),
    ("%B %d, %Y", Kind::Date),
    ("%d %b %Y", Kind::Date),
    ("%d %B %Y", Kind::Date),
    ("%b %d %Y %H:%M:%S%.f", Kind::DateTime),
    ("%b %d %Y %H:%M", Kind::DateTime),
];

/// Numeric dates with the year last: (month-first, day-first) pattern pairs.
const YEAR_LAST: &[(&str, &str, Kind)] = &[
    (
        "%m/%d/%Y %H:%M:%S%.f",
        "%d/%m/%Y %H:%M:%S%.f",
        Kind::DateTime,
    ),
    ("%m/%d/%Y %H:%M", "%d/%m/%Y %H:%M", Kind::DateTime),
    ("%m/%d/%Y", "%d/%m/%Y", Kind::Date),
    (
        "%m-%d-%Y %H:%M:%S%.f",
        "%d-%m-%Y %H:%M:%S%.f",
        Kind::DateTime,
    ),
    ("%m-%d-%Y", "%d-%m-%Y", Kind::Date),
    (
        "%m.%d.%Y %H:%M:%S%.f",
        "%d.%m.%Y %H:%M:%S%.f",
        Kind::DateTime,
    ),
    ("%m.%d.%Y", "%d.%m.%Y", Kind::Date),
];

impl DateFormat {
    /// The format of strftime `pattern` (`--time-format`; chrono's syntax, e.g. `%d/%m/%Y %H:%M`),
    /// or `rfc3339`: a pattern with a zone offset (`%z`, `%:z`, `%#z`) reads zoned times, one
    /// with a time of day (`%H`, `%I`, `%M`, `%S`, `%T`, `%R`, `%r`, `%X`, `%s`) date-times in
    /// UTC, else dates (midnight UTC).
    ///
    /// # Errors
    ///
    /// A message naming the pattern when chrono does not accept it.
    pub fn from_pattern(pattern: &str) -> Result<DateFormat, String> {
        if pattern.eq_ignore_ascii_case("rfc3339") {
            return Ok(DateFormat::new("rfc3339", Kind::Rfc3339));
        }
        let items: Vec<_> = chrono::format::StrftimeItems::new(pattern).collect();
        if pattern.trim().is_empty()
            || items
                .iter()
                .any(|i| matches!(i, chrono::format::Item::Error))
        {
            return Err(format!(
                "'{pattern}' is not a strftime date format (e.g. '%d/%m/%Y %H:%M')"
            ));
        }
        let has = |specs: &[&str]| specs.iter().any(|sp| pattern.contains(sp));
        let kind = if has(&["%z", "%:z", "%#z", "%::z"]) {
            Kind::Zoned
        } else if has(&[
            "%H", "%I", "%M", "%S", "%T", "%R", "%r", "%X", "%s", "%k", "%l",
        ]) {
            Kind::DateTime
        } else {
            Kind::Date
        };
        Ok(DateFormat::new(pattern, kind))
    }

    fn new(pattern: &str, kind: Kind) -> DateFormat {
        let items = if kind == Kind::Rfc3339 {
            Vec::new()
        } else {
            chrono::format::StrftimeItems::new(pattern)
                .parse_to_owned()
                .unwrap_or_default()
        };
        DateFormat {
            pattern: pattern.to_string(),
            kind,
            items,
        }
    }

    /// `cell` as nanoseconds since 1970-01-01T00:00:00 UTC, `None` when it does not read in
    /// this format or lies outside the i64 nanosecond range (years 1677–2262).
    pub fn parse_ns(&self, cell: &str) -> Option<i64> {
        let cell = cell.trim();
        if self.kind == Kind::Rfc3339 {
            return DateTime::parse_from_rfc3339(cell)
                .ok()?
                .timestamp_nanos_opt();
        }
        // What `NaiveDateTime::parse_from_str` does, with the pattern parsed once.
        let mut parsed = chrono::format::Parsed::new();
        chrono::format::parse(&mut parsed, cell, self.items.iter()).ok()?;
        match self.kind {
            Kind::Zoned => parsed.to_datetime().ok()?.timestamp_nanos_opt(),
            Kind::DateTime => parsed
                .to_naive_datetime_with_offset(0)
                .ok()?
                .and_utc()
                .timestamp_nanos_opt(),
            Kind::Date | Kind::Rfc3339 => parsed
                .to_naive_date()
                .ok()?
                .and_hms_opt(0, 0, 0)?
                .and_utc()
                .timestamp_nanos_opt(),
        }
    }

    fn reads_all(&self, samples: &[&str]) -> bool {
        !samples.is_empty() && samples.iter().all(|s| self.parse_ns(s).is_some())
    }
}

/// A recognised format, and a note when the choice was a guess.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Detected {
    /// The format.
    pub format: DateFormat,
    /// Why the reading may be wrong (day and month both 12 or less in every sample), if so.
    pub note: Option<String>,
}

/// The format that reads every one of `samples` (time cells from the first rows), if any (see
/// the module docs for the order and the day/month rule).
pub fn detect(samples: &[&str]) -> Option<Detected> {
    for &(pattern, kind) in CANDIDATES {
        let f = DateFormat::new(pattern, kind);
        if f.reads_all(samples) {
            return Some(Detected {
                format: f,
                note: None,
            });
        }
    }
    for &(month_first, day_first, kind) in YEAR_LAST {
        let m = DateFormat::new(month_first, kind);
        let d = DateFormat::new(day_first, kind);
        match (m.reads_all(samples), d.reads_all(samples)) {
            (true, true) => {
                return Some(Detected {
                    note: Some(format!(
                        "dates such as '{}' read month first ({month_first}); every date in \
                         the first rows also reads day first ({day_first})",
                        samples[0].trim()
                    )),
                    format: m,
                });
            }
            (true, false) => {
                return Some(Detected {
                    format: m,
                    note: None,
                });
            }
            (false, true) => {
                return Some(Detected {
                    format: d,
                    note: None,
                });
            }
            (false, false) => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Seconds since the epoch of a UTC civil date and time, by Howard Hinnant's
    /// days-from-civil algorithm (independent of chrono).
    fn epoch_s(y: i64, m: i64, d: i64, hh: i64, mm: i64, ss: i64) -> i64 {
        let y = if m <= 2 { y - 1 } else { y };
        let era = y.div_euclid(400);
        let yoe = y - era * 400;
        let mp = (m + 9) % 12;
        let doy = (153 * mp + 2) / 5 + d - 1;
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        let days = era * 146_097 + doe - 719_468;
        days * 86_400 + hh * 3600 + mm * 60 + ss
    }

    fn ns(cells: &[&str]) -> (Detected, Vec<i64>) {
        let d = detect(cells).expect("a format");
        let v = cells
            .iter()
            .map(|c| d.format.parse_ns(c).unwrap())
            .collect();
        (d, v)
    }

    #[test]
    fn the_formats_people_have_read_to_the_nanosecond() {
        let s = |y, m, d, hh, mm, ss| epoch_s(y, m, d, hh, mm, ss) * 1_000_000_000;
        let (d, v) = ns(&["2010/01/01 00:00", "2010/01/01 01:00"]);
        assert_eq!(d.format.pattern, "%Y/%m/%d %H:%M");
        assert_eq!(v, vec![s(2010, 1, 1, 0, 0, 0), s(2010, 1, 1, 1, 0, 0)]);
        let (_, v) = ns(&["2012-01-01", "2012-01-02"]);
        assert_eq!(v, vec![s(2012, 1, 1, 0, 0, 0), s(2012, 1, 2, 0, 0, 0)]);
        let (_, v) = ns(&["Jan 1 2000", "Feb 1 2000"]);
        assert_eq!(v, vec![s(2000, 1, 1, 0, 0, 0), s(2000, 2, 1, 0, 0, 0)]);
        let (d, v) = ns(&["01/02/2003 13:45:00.123", "01/03/2003 13:45:00.124"]);
        assert!(d.note.is_some(), "ambiguous: said so");
        assert_eq!(v[0], s(2003, 1, 2, 13, 45, 0) + 123_000_000);
        assert_eq!(v[1], s(2003, 1, 3, 13, 45, 0) + 124_000_000);
        let (d, v) = ns(&["13/02/2003", "14/02/2003"]);
        assert_eq!(
            (d.note.clone(), d.format.pattern.as_str()),
            (None, "%d/%m/%Y")
        );
        assert_eq!(v[0], s(2003, 2, 13, 0, 0, 0));
        let (_, v) = ns(&[
            "2020-01-01T12:00:00.000000001+02:00",
            "2020-01-01T10:00:00Z",
        ]);
        assert_eq!(v[0], s(2020, 1, 1, 10, 0, 0) + 1);
        assert_eq!(v[1], s(2020, 1, 1, 10, 0, 0));
        let (_, v) = ns(&["2020-06-30T23:59:59.5"]);
        assert_eq!(v[0], s(2020, 6, 30, 23, 59, 59) + 500_000_000);
    }

    #[test]
    fn user_patterns_read_as_given() {
        let s = |y, m, d, hh, mm, ss| epoch_s(y, m, d, hh, mm, ss) * 1_000_000_000;
        let f = DateFormat::from_pattern("%d/%m/%Y %H:%M").unwrap();
        assert_eq!(
            f.parse_ns("01/02/2003 13:45"),
            Some(s(2003, 2, 1, 13, 45, 0))
        );
        let f = DateFormat::from_pattern("%d.%m.%Y").unwrap();
        assert_eq!(f.parse_ns("31.12.1999"), Some(s(1999, 12, 31, 0, 0, 0)));
        let f = DateFormat::from_pattern("%Y-%m-%d %H:%M:%S %z").unwrap();
        assert_eq!(
            f.parse_ns("2020-01-01 12:00:00 +0200"),
            Some(s(2020, 1, 1, 10, 0, 0))
        );
        assert!(DateFormat::from_pattern("%Q").unwrap_err().contains("%Q"));
        assert!(DateFormat::from_pattern("").is_err());
    }

    #[test]
    fn numbers_and_words_are_not_dates() {
        assert!(detect(&["1.5", "2.5"]).is_none());
        assert!(detect(&["hello"]).is_none());
        assert!(detect(&[]).is_none());
        // One sample that no format reads: no format.
        assert!(detect(&["2012-01-01", "2012-13-45"]).is_none());
    }
}
