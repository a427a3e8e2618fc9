//! Date and date-time time columns: the formats people's CSVs use, recognised from the first
//! rows and parsed with `chrono` (strftime patterns, never hand-rolled parsing) into integer
//! nanoseconds since 1970-01-01T00:00:00 UTC. Times without a zone are read as UTC, or in the
//! [`Zone`] given (`--time-zone`).
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

/// The zone of times written without one (`--time-zone`), and of the time axis and readout:
/// UTC (the default), the machine's local zone (its offset at each instant, daylight saving
/// included, from chrono's `Local`), or a fixed offset from UTC.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Zone {
    #[default]
    Utc,
    Local,
    /// Seconds east of UTC.
    Fixed(i32),
}

impl Zone {
    /// `utc` (or `z`), `local`, or an offset `±HH:MM`, `±HHMM`, `±HH`.
    ///
    /// # Errors
    ///
    /// A message naming the text and the accepted forms.
    pub fn parse(s: &str) -> Result<Zone, String> {
        let t = s.trim();
        let bad = || format!("'{t}' is not a zone: utc, local, or an offset such as +05:30 or -08");
        match t.to_ascii_lowercase().as_str() {
            "utc" | "z" | "gmt" => return Ok(Zone::Utc),
            "local" => return Ok(Zone::Local),
            _ => {}
        }
        let sign = match t.as_bytes().first() {
            Some(b'+') => 1,
            Some(b'-') => -1,
            _ => return Err(bad()),
        };
        let digits: String = t[1..].chars().filter(|c| *c != ':').collect();
        if !(digits.len() == 2 || digits.len() == 4) || !digits.bytes().all(|b| b.is_ascii_digit())
        {
            return Err(bad());
        }
        let h: i32 = digits[..2].parse().map_err(|_| bad())?;
        let m: i32 = if digits.len() == 4 {
            digits[2..].parse().map_err(|_| bad())?
        } else {
            0
        };
        if h > 18 || m > 59 {
            return Err(bad());
        }
        Ok(Zone::Fixed(sign * (h * 3600 + m * 60)))
    }

    /// Seconds east of UTC at the instant `utc_s` (seconds since the Unix epoch).
    pub fn offset_s(self, utc_s: i64) -> i32 {
        use chrono::Offset;
        match self {
            Zone::Utc => 0,
            Zone::Fixed(o) => o,
            Zone::Local => chrono::DateTime::from_timestamp(utc_s, 0).map_or(0, |t| {
                t.with_timezone(&chrono::Local)
                    .offset()
                    .fix()
                    .local_minus_utc()
            }),
        }
    }

    /// The UTC instant (ns) of wall-clock time `naive_ns` in this zone (ns since 1970-01-01 on
    /// this zone's clock); a local time skipped by a daylight-saving change is `None`, one that
    /// occurs twice is its earlier instant.
    pub fn to_utc_ns(self, naive_ns: i64) -> Option<i64> {
        match self {
            Zone::Utc => Some(naive_ns),
            Zone::Fixed(o) => naive_ns.checked_sub(i64::from(o) * 1_000_000_000),
            Zone::Local => {
                use chrono::TimeZone;
                let naive = chrono::DateTime::from_timestamp_nanos(naive_ns).naive_utc();
                chrono::Local
                    .from_local_datetime(&naive)
                    .earliest()?
                    .timestamp_nanos_opt()
            }
        }
    }

    /// `UTC`, `UTC+05:30`, or `local (UTC+01:00 now)`.
    pub fn name(self) -> String {
        let fmt = |o: i32| {
            let sign = if o < 0 { '-' } else { '+' };
            let a = o.abs();
            format!("UTC{sign}{:02}:{:02}", a / 3600, a / 60 % 60)
        };
        match self {
            Zone::Utc => "UTC".into(),
            Zone::Fixed(o) => fmt(o),
            Zone::Local => {
                let now = chrono::Utc::now().timestamp();
                format!("local ({} now)", fmt(Zone::Local.offset_s(now)))
            }
        }
    }
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

    /// `cell` as nanoseconds since 1970-01-01T00:00:00 UTC (a time without a zone read as UTC;
    /// see [`Zone::to_utc_ns`] for another zone), `None` when it does not read in
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

    /// Whether the format's times carry their own zone (RFC 3339, `%z`): times without one are
    /// wall-clock times of the `--time-zone`.
    pub fn is_zoned(&self) -> bool {
        matches!(self.kind, Kind::Zoned | Kind::Rfc3339)
    }

    /// The instant `ns` (ns since the Unix epoch) written in this format on `zone`'s clock
    /// (RFC 3339 with the zone's offset for `rfc3339`); what a cell of the file would say.
    pub fn format_ns(&self, ns: i64, zone: Zone) -> String {
        let off = zone.offset_s(ns.div_euclid(1_000_000_000));
        let Some(fixed) = chrono::FixedOffset::east_opt(off) else {
            return String::new();
        };
        let t = chrono::DateTime::from_timestamp_nanos(ns).with_timezone(&fixed);
        if self.kind == Kind::Rfc3339 {
            t.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true)
        } else {
            t.format_with_items(self.items.iter()).to_string()
        }
    }

    fn reads_all(&self, samples: &[&str]) -> bool {
        !samples.is_empty() && samples.iter().all(|s| self.parse_ns(s).is_some())
    }
}

/// A recognised format, and a note when the choice was a guess.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Detected {
    /// The format.
    pub format: DateFormat,
    /// Why the reading may be wrong (day and month both 12 or less in every sample), if so.
    pub note: Option<String>,
}

/// The format that reads every one of `samples` (time cells from the first rows), if any (see
/// the module docs for the order and the day/month rule).
pub(crate) fn detect(samples: &[&str]) -> Option<Detected> {
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

    #[test]
    fn zones() {
        assert_eq!(Zone::parse("UTC"), Ok(Zone::Utc));
        assert_eq!(Zone::parse("local"), Ok(Zone::Local));
        assert_eq!(Zone::parse("+05:30"), Ok(Zone::Fixed(5 * 3600 + 1800)));
        assert_eq!(Zone::parse("-0800"), Ok(Zone::Fixed(-8 * 3600)));
        assert_eq!(Zone::parse("+01"), Ok(Zone::Fixed(3600)));
        for bad in ["+5", "Europe/Paris", "+25:00", "+01:60", ""] {
            assert!(Zone::parse(bad).is_err(), "{bad}");
        }
        // 2010-01-01 00:00 at UTC+05:30 is 2009-12-31 18:30 UTC: 1262304000 − 19800 s.
        let naive = 1_262_304_000i64 * 1_000_000_000;
        assert_eq!(
            Zone::Fixed(19_800).to_utc_ns(naive),
            Some((1_262_304_000 - 19_800) * 1_000_000_000)
        );
        assert_eq!(Zone::Fixed(19_800).name(), "UTC+05:30");
        assert_eq!(Zone::Fixed(-28_800).name(), "UTC-08:00");
        // The file's own pattern, on the zone's clock.
        let f = DateFormat::from_pattern("%d/%m/%Y %H:%M").unwrap();
        assert_eq!(f.format_ns(naive, Zone::Utc), "01/01/2010 00:00");
        assert_eq!(f.format_ns(naive, Zone::Fixed(-3600)), "31/12/2009 23:00");
        let r = DateFormat::from_pattern("rfc3339").unwrap();
        assert_eq!(
            r.format_ns(naive + 500_000_000, Zone::Fixed(3600)),
            "2010-01-01T01:00:00.500+01:00"
        );
    }

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
