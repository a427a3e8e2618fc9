//! Time columns: the unit from the header's suffix and the exact parse of a time cell into
//! integer nanoseconds.

/// Unit of a CSV time column, read from the suffix of its header name (case-insensitive):
/// `_ns` nanoseconds, `_us` or `_µs` microseconds, `_ms` milliseconds, `_s` or anything else
/// seconds (a headerless file's time column is in seconds).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TimeUnit {
    #[default]
    Seconds,
    Millis,
    Micros,
    Nanos,
}

impl TimeUnit {
    /// The unit named by the suffix of header `name` (see the type's docs).
    pub fn from_header(name: &str) -> TimeUnit {
        let name = name.trim().to_lowercase();
        if name.ends_with("_ns") {
            TimeUnit::Nanos
        } else if name.ends_with("_us") || name.ends_with("_µs") {
            TimeUnit::Micros
        } else if name.ends_with("_ms") {
            TimeUnit::Millis
        } else {
            TimeUnit::Seconds
        }
    }

    /// The unit the suffix of header `name` names (`_ns`, `_us`/`_µs`, `_ms`, `_s`), if any.
    pub fn suffix_of(name: &str) -> Option<TimeUnit> {
        let n = name.trim().to_lowercase();
        if n.ends_with("_ns") || n.ends_with("_us") || n.ends_with("_µs") || n.ends_with("_ms") {
            Some(TimeUnit::from_header(&n))
        } else if n.ends_with("_s") {
            Some(TimeUnit::Seconds)
        } else {
            None
        }
    }

    /// The unit of a Unix time `t` judged by its magnitude: seconds from 1e8 (1973) up to 1e11,
    /// milliseconds up to 1e14, microseconds up to 1e17, nanoseconds beyond (so any time from
    /// 1973 to 5138 reads right in every unit); `None` below 1e8 (not a Unix time).
    pub fn from_magnitude(t: f64) -> Option<TimeUnit> {
        let a = t.abs();
        if !a.is_finite() || a < 1e8 {
            None
        } else if a < 1e11 {
            Some(TimeUnit::Seconds)
        } else if a < 1e14 {
            Some(TimeUnit::Millis)
        } else if a < 1e17 {
            Some(TimeUnit::Micros)
        } else {
            Some(TimeUnit::Nanos)
        }
    }

    /// Parses `--time-unit`: `s`, `ms`, `us` (or `µs`), `ns`.
    ///
    /// # Errors
    ///
    /// A message naming the value.
    pub fn parse(s: &str) -> Result<TimeUnit, String> {
        match s.trim() {
            "s" => Ok(TimeUnit::Seconds),
            "ms" => Ok(TimeUnit::Millis),
            "us" | "µs" => Ok(TimeUnit::Micros),
            "ns" => Ok(TimeUnit::Nanos),
            _ => Err(format!("'{s}' is not a time unit (s, ms, us, ns)")),
        }
    }

    /// Nanoseconds per unit as a power of ten: 9 (s), 6 (ms), 3 (µs), 0 (ns).
    pub fn ns_exponent(self) -> u32 {
        match self {
            TimeUnit::Seconds => 9,
            TimeUnit::Millis => 6,
            TimeUnit::Micros => 3,
            TimeUnit::Nanos => 0,
        }
    }

    /// Symbol of the unit: `s`, `ms`, `µs`, `ns`.
    pub fn symbol(self) -> &'static str {
        match self {
            TimeUnit::Seconds => "s",
            TimeUnit::Millis => "ms",
            TimeUnit::Micros => "µs",
            TimeUnit::Nanos => "ns",
        }
    }
}

/// Reads a decimal time cell in `unit` exactly as integer nanoseconds: optional sign, digits
/// with an optional `.` fraction, optional exponent (`e`/`E`), e.g. `1700000000.000001` (s) →
/// `1_700_000_000_000_001_000`. The decimal digits are scaled by powers of ten in integer
/// arithmetic (i128), never through a binary float, so times one microsecond (or nanosecond)
/// apart at Unix-epoch scale stay exactly that far apart. Digits finer than a nanosecond are
/// rounded to the nearest nanosecond (ties away from zero); digits past the 36th significant
/// one are ignored (they lie far below a nanosecond for any time that fits).
///
/// Returns `None` for anything else (`inf`, `NaN`, hex, empty) and for times outside the i64
/// nanosecond range (about ±292 years around 1970 for epoch times).
pub fn parse_time_ns(cell: &str, unit: TimeUnit) -> Option<i64> {
    /// Significant digits kept in the i128 mantissa (10^36 < i128::MAX / 100).
    const MAX_DIGITS: u32 = 36;
    let b = cell.as_bytes();
    let mut i = 0;
    let negative = match b.first() {
        Some(b'-') => {
            i = 1;
            true
        }
        Some(b'+') => {
            i = 1;
            false
        }
        _ => false,
    };
    let mut mantissa: i128 = 0;
    let mut significant = 0u32;
    let mut exponent: i64 = 0;
    let mut any = false;
    while let Some(d) = b.get(i).filter(|c| c.is_ascii_digit()) {
        any = true;
        if significant < MAX_DIGITS {
            mantissa = mantissa * 10 + (d - b'0') as i128;
            significant += (mantissa != 0) as u32;
        } else {
            exponent += 1;
        }
        i += 1;
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        while let Some(d) = b.get(i).filter(|c| c.is_ascii_digit()) {
            any = true;
            if significant < MAX_DIGITS {
                mantissa = mantissa * 10 + (d - b'0') as i128;
                significant += (mantissa != 0) as u32;
                exponent -= 1;
            }
            i += 1;
        }
    }
    if !any {
        return None;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        let sign = match b.get(i) {
            Some(b'-') => {
                i += 1;
                -1
            }
            Some(b'+') => {
                i += 1;
                1
            }
            _ => 1,
        };
        let mut e: i64 = 0;
        let mut digits = false;
        while let Some(d) = b.get(i).filter(|c| c.is_ascii_digit()) {
            digits = true;
            e = (e * 10 + (d - b'0') as i64).min(100_000);
            i += 1;
        }
        if !digits {
            return None;
        }
        exponent += sign * e;
    }
    if i != b.len() {
        return None;
    }
    let e = exponent + unit.ns_exponent() as i64;
    let magnitude: i128 = if mantissa == 0 {
        0
    } else if e >= 0 {
        if e > 38 {
            return None;
        }
        mantissa.checked_mul(10i128.pow(e as u32))?
    } else if -e > MAX_DIGITS as i64 {
        // mantissa < 10^36 ≤ 10^-e / 10: less than a tenth of a nanosecond.
        0
    } else {
        let p = 10i128.pow((-e) as u32);
        let (q, r) = (mantissa / p, mantissa % p);
        q + (2 * r >= p) as i128
    };
    i64::try_from(if negative { -magnitude } else { magnitude }).ok()
}
