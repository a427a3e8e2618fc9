//! Axis helpers of the time-series chart: value ranges, nice ticks, time labels (seconds,
//! milliseconds, wall clock down to nanoseconds) and the nearest-sample lookup of the crosshair.
//!
//! Times are chart-relative seconds plus a chart origin `(absolute seconds, optional integer
//! nanoseconds)`: an origin of at least 1e8 s (after 1973) is taken as Unix time and labelled as
//! UTC wall-clock time; otherwise times are labelled in s or ms.

use crate::scene::spectrogram::axis::nice_step;
use crate::series::source::dates::{DateFormat, Zone};
use crate::series::store::Series;

/// Origins at or beyond this many seconds are labelled as UTC wall-clock time.
pub const WALL_CLOCK_FROM_S: f64 = 1e8;
/// Most ticks one axis draws (guards against degenerate ranges).
const MAX_TICKS: usize = 200;

/// The value range to show for data in `[lo, hi]`: 5 % padding; a flat line gets ±1 % of its
/// value (±1 at 0); no finite data gives `(-1, 1)`. Stays finite for data near ±f32::MAX and
/// for any finite f64 input.
pub fn padded_range(lo: f64, hi: f64) -> (f64, f64) {
    if !lo.is_finite() || !hi.is_finite() || lo > hi {
        return (-1.0, 1.0);
    }
    if lo == hi {
        let pad = if lo == 0.0 { 1.0 } else { lo.abs() * 0.01 };
        return (lo - pad, hi + pad);
    }
    let pad = (hi / 2.0 - lo / 2.0) * 0.1;
    let (a, b) = (lo - pad, hi + pad);
    (a.max(-f64::MAX), b.min(f64::MAX))
}

/// Decimal places needed to tell ticks `step` apart (0 for steps ≥ 1), at most 9.
pub fn decimals_for(step: f64) -> usize {
    if !step.is_finite() || step >= 1.0 || step <= 0.0 {
        0
    } else {
        ((-step.log10()).ceil().max(0.0) as usize).min(9)
    }
}

/// Ticks of the value axis `[lo, hi]` (about `target` of them) with their labels.
pub fn value_ticks(lo: f64, hi: f64, target: f64) -> Vec<(f64, String)> {
    let span = hi - lo;
    let step = nice_step(span, target);
    if !span.is_finite() || !step.is_finite() || step <= 0.0 || span <= 0.0 {
        return vec![(lo, format!("{lo:.3e}")), (hi, format!("{hi:.3e}"))];
    }
    let sci = hi.abs().max(lo.abs()) >= 1e7 || step < 1e-4;
    let d = decimals_for(step);
    let mut out = Vec::new();
    let mut k = (lo / step).ceil();
    while out.len() < MAX_TICKS {
        let v = k * step;
        if v > hi {
            break;
        }
        let v0 = if v.abs() < step * 1e-6 { 0.0 } else { v };
        let label = if sci {
            format!("{v0:.3e}")
        } else {
            format!("{v0:.d$}")
        };
        out.push((v, label));
        k += 1.0;
    }
    out
}

/// Steps of a wall-clock axis from a minute up, seconds: minutes, hours, days, a week, 30 and
/// 365 days (multiples of a day fall on midnight UTC).
const CALENDAR_STEPS: &[f64] = &[
    60.0,
    120.0,
    300.0,
    600.0,
    900.0,
    1800.0,
    3600.0,
    7200.0,
    10800.0,
    21600.0,
    43200.0,
    86400.0,
    172_800.0,
    604_800.0,
    2_592_000.0,
    31_536_000.0,
];

/// The tick step of a time axis over `span` seconds (about `target` ticks): on a wall-clock
/// axis, from a minute up, the first [`CALENDAR_STEPS`] entry at least the decimal nice step;
/// else the decimal nice step.
pub fn time_step(wall_clock: bool, span: f64, target: f64) -> f64 {
    let step = nice_step(span, target);
    if !wall_clock || step.is_nan() || step < 60.0 {
        return step;
    }
    CALENDAR_STEPS
        .iter()
        .copied()
        .find(|&c| c >= step)
        .unwrap_or_else(|| (step / 31_536_000.0).ceil() * 31_536_000.0)
}

/// The UTC civil date (year, month, day) of `days` since 1970-01-01 (Howard Hinnant's
/// civil-from-days algorithm).
fn civil_from_days(days: i128) -> (i128, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i128::from(m <= 2), m, d)
}

/// Label of chart-relative time `t` for ticks `step` apart: for Unix-time origins the wall
/// clock of `zone` (UTC by default) (nanoseconds exact when the origin is integer nanoseconds): `YYYY-MM-DD` for steps of a
/// day or more, `MM-DD HH:MM` for steps of an hour or more, else `HH:MM:SS.fff…`; for other
/// origins `… s`, or `… ms` when ticks are closer than a second.
pub fn format_time(origin: Option<(f64, Option<i64>)>, t: f64, step: f64, zone: Zone) -> String {
    let (o, ons) = origin.unwrap_or((0.0, None));
    let d = decimals_for(step);
    if o.abs() >= WALL_CLOCK_FROM_S {
        let total_ns: i128 = match ons {
            Some(n) => n as i128 + (t * 1e9).round() as i128,
            None => {
                let base = o.floor();
                base as i128 * 1_000_000_000 + ((o - base + t) * 1e9).round() as i128
            }
        };
        let utc_secs = total_ns.div_euclid(1_000_000_000);
        let secs = utc_secs + i128::from(zone.offset_s(utc_secs as i64));
        let nanos = total_ns.rem_euclid(1_000_000_000);
        let day = secs.rem_euclid(86_400);
        let (y, m, dd) = civil_from_days(secs.div_euclid(86_400));
        if step >= 86_400.0 {
            return format!("{y:04}-{m:02}-{dd:02}");
        }
        if step >= 3600.0 {
            return format!("{m:02}-{dd:02} {:02}:{:02}", day / 3600, day / 60 % 60);
        }
        let mut s = format!("{:02}:{:02}:{:02}", day / 3600, day / 60 % 60, day % 60);
        if d > 0 {
            let digits = format!("{nanos:09}");
            s.push('.');
            s.push_str(&digits[..d]);
        }
        return s;
    }
    let a = o + t;
    if step < 0.999 {
        let ms = a * 1e3;
        let dm = decimals_for(step * 1e3);
        let ms = if ms.abs() < step * 1e-3 { 0.0 } else { ms };
        format!("{ms:.dm$} ms")
    } else {
        let a = if a.abs() < step * 1e-6 { 0.0 } else { a };
        format!("{a:.0} s")
    }
}

/// Ticks of the time axis over chart-relative `[t0, t1)` (about `target`), placed at multiples
/// of a nice step in *absolute* time (integer nanoseconds when the origin has them), with labels.
pub fn time_ticks(
    origin: Option<(f64, Option<i64>)>,
    t0: f64,
    t1: f64,
    target: f64,
    zone: Zone,
) -> Vec<(f64, String)> {
    let wall_clock = origin.is_some_and(|(o, _)| o.abs() >= WALL_CLOCK_FROM_S);
    let step = time_step(wall_clock, t1 - t0, target);
    let mut out = Vec::new();
    if t1.partial_cmp(&t0) != Some(std::cmp::Ordering::Greater) || !step.is_finite() {
        return out;
    }
    let (o, ons) = origin.unwrap_or((0.0, None));
    match ons {
        Some(n) if (1e-9..1.0).contains(&step) => {
            let step_ns = (step * 1e9).round().max(1.0) as i128;
            let start_ns = n as i128 + (t0 * 1e9).floor() as i128;
            let mut k = start_ns.div_euclid(step_ns) * step_ns;
            while out.len() < MAX_TICKS {
                let rel = (k - n as i128) as f64 * 1e-9;
                if rel >= t1 {
                    break;
                }
                if rel >= t0 {
                    out.push((rel, format_time(origin, rel, step, zone)));
                }
                k += step_ns;
            }
        }
        _ => {
            // Align on multiples of `step` from floor(origin); nice steps below 1 divide 1.
            // Wall-clock steps align on the zone's clock (days at its midnight).
            let base = if step < 1.0 { o.floor() } else { 0.0 };
            let off = if wall_clock && step >= 1.0 {
                f64::from(zone.offset_s((o + t0) as i64))
            } else {
                0.0
            };
            let frac = o + off - base;
            let mut k = ((frac + t0) / step).ceil();
            while out.len() < MAX_TICKS {
                let rel = k * step - frac;
                if rel >= t1 {
                    break;
                }
                out.push((rel, format_time(origin, rel, step, zone)));
                k += 1.0;
            }
        }
    }
    out
}

/// The stored sample nearest in time to relative time `r` (ties: the earlier), as
/// `(global index, relative time, value)`. Binary search on ordered series; a linear scan
/// otherwise.
pub fn nearest_sample(s: &Series, r: f64) -> Option<(u64, f64, f32)> {
    if s.is_empty() || !r.is_finite() {
        return None;
    }
    if s.is_ordered() {
        let k = s.partition_index(|t| t < r);
        let after = s.get_index(k).map(|(t, v)| (k, t, v));
        let before = k
            .checked_sub(1)
            .and_then(|j| s.get_index(j).map(|(t, v)| (j, t, v)));
        return match (before, after) {
            (Some(b), Some(a)) => Some(if (r - b.1) <= (a.1 - r) { b } else { a }),
            (b, a) => b.or(a),
        };
    }
    let mut best: Option<(u64, f64, f32)> = None;
    for k in s.first_index()..s.end_index() {
        if let Some((t, v)) = s.get_index(k)
            && best.is_none_or(|b| (t - r).abs() < (b.1 - r).abs())
        {
            best = Some((k, t, v));
        }
    }
    best
}

/// The exact time of a sample at relative time `tr` of series `s`: for series fed nanoseconds,
/// in the file's own date format `file` when it has one, else as `zone`'s wall clock, with the
/// integer nanoseconds; else the shortest decimal that round-trips the f64.
pub fn exact_time(s: &Series, tr: f64, zone: Zone, file: Option<&DateFormat>) -> String {
    match (s.origin_ns(), s.origin()) {
        (Some(n), _) => {
            let ns = n as i128 + (tr * 1e9).round() as i128;
            let shown = match (file, i64::try_from(ns)) {
                (Some(f), Ok(ns)) => f.format_ns(ns, zone),
                _ => format_time(Some((n as f64 * 1e-9, Some(n))), tr, 1e-9, zone),
            };
            format!("{shown} ({ns} ns)")
        }
        (None, Some(o)) => format!("{} s", o + tr),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_are_sane() {
        assert_eq!(padded_range(f64::INFINITY, f64::NEG_INFINITY), (-1.0, 1.0));
        assert_eq!(padded_range(0.0, 0.0), (-1.0, 1.0));
        assert_eq!(padded_range(5.0, 5.0), (4.95, 5.05));
        let (a, b) = padded_range(-3.4e38, 3.4e38);
        assert!(a.is_finite() && b.is_finite() && a < -3.4e38 && b > 3.4e38);
        let (a, b) = padded_range(-1e308, 1e308);
        assert!(a.is_finite() && b.is_finite());
        assert!(value_ticks(a, b, 5.0).len() >= 2);
        assert_eq!(value_ticks(0.0, 1.0, 5.0).len(), 6);
    }

    #[test]
    fn wall_clock_axes_over_days_label_dates_at_midnight() {
        // 2010-01-01T00:00:00Z = 1,262,304,000 s; 2000-02-29 = 11,016 days; 1969-12-31 = -1.
        assert_eq!(civil_from_days(14_610), (2010, 1, 1));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
        let o = Some((1_262_304_000.0, Some(1_262_304_000_000_000_000)));
        assert_eq!(
            format_time(o, 3.0 * 86_400.0, 86_400.0, Zone::Utc),
            "2010-01-04"
        );
        assert_eq!(
            format_time(o, 86_400.0 + 7200.0, 3600.0, Zone::Utc),
            "01-02 02:00"
        );
        // A month of hourly samples: weekly ticks, each at midnight UTC.
        let ticks = time_ticks(o, 0.0, 30.0 * 86_400.0, 6.0, Zone::Utc);
        assert!(ticks.len() >= 4, "{ticks:?}");
        for (t, label) in &ticks {
            assert_eq!((1_262_304_000.0 + t).rem_euclid(86_400.0), 0.0, "{label}");
            assert_eq!(label.len(), 10, "{label}");
        }
        // At UTC−08:00 the same ticks fall on the zone's midnight: 08:00 UTC.
        let ticks = time_ticks(o, 0.0, 30.0 * 86_400.0, 6.0, Zone::Fixed(-28_800));
        assert!(ticks.len() >= 4, "{ticks:?}");
        for (t, label) in &ticks {
            assert_eq!(
                (1_262_304_000.0 + t).rem_euclid(86_400.0),
                28_800.0,
                "{label}"
            );
        }
        assert_eq!(
            time_step(false, 30.0 * 86_400.0, 6.0),
            nice_step(30.0 * 86_400.0, 6.0)
        );
    }

    #[test]
    fn time_labels() {
        assert_eq!(format_time(None, 1.5, 0.5, Zone::Utc), "1500 ms");
        assert_eq!(format_time(None, 12.0, 2.0, Zone::Utc), "12 s");
        // 2023-11-14 22:13:20 UTC = 1_700_000_000 s.
        let o = Some((1.7e9, Some(1_700_000_000_000_000_000)));
        assert_eq!(format_time(o, 3e-9, 1e-9, Zone::Utc), "22:13:20.000000003");
        assert_eq!(
            format_time(Some((1.7e9, None)), 0.25, 0.05, Zone::Utc),
            "22:13:20.25"
        );
        // 1.7e9 s is 2023-11-14T22:13:20Z: 03:43:20 the next day at UTC+05:30.
        assert_eq!(
            format_time(Some((1.7e9, None)), 0.0, 1.0, Zone::Fixed(19_800)),
            "03:43:20"
        );
        let ticks = time_ticks(o, 0.0, 10e-9, 10.0, Zone::Utc);
        let rel: Vec<f64> = ticks.iter().map(|t| t.0).collect();
        assert_eq!(rel.len(), 10);
        for (k, r) in rel.iter().enumerate() {
            assert_eq!(*r, k as f64 * 1e-9);
        }
    }
}
