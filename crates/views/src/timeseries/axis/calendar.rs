//! Wall-clock ticks and labels of the time axis: calendar steps (years down to nanoseconds),
//! ticks on calendar boundaries of a [`Zone`] (chrono's calendar and zone rules), their
//! concise labels, and the conversion between chart-relative seconds and absolute nanoseconds.

use super::{MAX_TICKS, decimals_for};
use crate::series::source::dates::Zone;

/// Nanoseconds in a second.
const NS: i128 = 1_000_000_000;
/// The mean Gregorian month and year, seconds (choosing a step, the label's level).
pub(super) const MONTH_S: f64 = 2_629_746.0;
pub(super) const YEAR_S: f64 = 31_556_952.0;
/// Candidate local times looked at by one wall-clock axis at most (guards against huge targets).
const MAX_CANDIDATES: usize = 100_000;

/// The calendar unit of a wall-clock tick step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CalendarUnit {
    /// Decimal fractions of a second (1, 2, 5 × 10ⁿ ns), aligned on the second.
    Nanosecond,
    /// Seconds of the minute, multiples of the count.
    Second,
    /// Minutes of the hour, multiples of the count.
    Minute,
    /// Hours of the day, multiples of the count (local midnight included).
    Hour,
    /// Local midnights of days of the month: 1, 1 + k, 1 + 2k, … restarting each month; for 7 and
    /// 14 days the 1st, 8th, 15th and 22nd, or the 1st and 15th.
    Day,
    /// Local midnights of the first day of months that are multiples of the count (from January).
    Month,
    /// Local midnights of January 1st of years that are multiples of the count.
    Year,
}

/// A wall-clock tick step: `count` [`CalendarUnit`]s.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CalendarStep {
    /// The unit.
    pub unit: CalendarUnit,
    /// How many units apart the ticks are.
    pub count: u32,
}

impl CalendarStep {
    /// The step's length in seconds; months and years at their Gregorian mean (30.436875 and
    /// 365.2425 days).
    pub fn approx_s(self) -> f64 {
        let c = f64::from(self.count);
        match self.unit {
            CalendarUnit::Nanosecond => c * 1e-9,
            CalendarUnit::Second => c,
            CalendarUnit::Minute => c * 60.0,
            CalendarUnit::Hour => c * 3600.0,
            CalendarUnit::Day => c * 86_400.0,
            CalendarUnit::Month => c * MONTH_S,
            CalendarUnit::Year => c * YEAR_S,
        }
    }
}

/// Every wall-clock step, shortest first: 1 ns … 0.5 s (1, 2, 5 × 10ⁿ), seconds and minutes
/// (1, 2, 5, 10, 15, 30), hours (1, 2, 3, 6, 12), days (1, 2, 3, 7, 14), months (1, 2, 3, 6),
/// years (1, 2, 5 × 10ⁿ up to 500,000; chrono's calendar ends at year 262,143).
fn calendar_steps() -> impl Iterator<Item = CalendarStep> {
    use CalendarUnit::*;
    let decades = |unit: CalendarUnit, exponents: u32| {
        (0..=exponents).flat_map(move |e| {
            [1, 2, 5].map(move |m| CalendarStep {
                unit,
                count: m * 10u32.pow(e),
            })
        })
    };
    let each = |unit: CalendarUnit, counts: &'static [u32]| {
        counts
            .iter()
            .map(move |&count| CalendarStep { unit, count })
    };
    decades(Nanosecond, 8)
        .chain(each(Second, &[1, 2, 5, 10, 15, 30]))
        .chain(each(Minute, &[1, 2, 5, 10, 15, 30]))
        .chain(each(Hour, &[1, 2, 3, 6, 12]))
        .chain(each(Day, &[1, 2, 3, 7, 14]))
        .chain(each(Month, &[1, 2, 3, 6]))
        .chain(decades(Year, 5))
}

/// The wall-clock step for `span` seconds and about `target` ticks: the shortest step at least
/// `span / target` long (the longest step when none is).
pub fn calendar_step(span: f64, target: f64) -> CalendarStep {
    let raw = span / target.max(1.0);
    let mut last = CalendarStep {
        unit: CalendarUnit::Nanosecond,
        count: 1,
    };
    for s in calendar_steps() {
        if s.approx_s() >= raw {
            return s;
        }
        last = s;
    }
    last
}

/// The step before `step` in [`calendar_steps`], if any.
fn shorter_step(step: CalendarStep) -> Option<CalendarStep> {
    let mut before = None;
    for s in calendar_steps() {
        if s == step {
            return before;
        }
        before = Some(s);
    }
    None
}

/// The UTC instant `ns` (nanoseconds since the Unix epoch) as a chrono date-time; `None` beyond
/// chrono's range.
pub(super) fn utc_at(ns: i128) -> Option<chrono::DateTime<chrono::Utc>> {
    let secs = i64::try_from(ns.div_euclid(NS)).ok()?;
    let nanos = u32::try_from(ns.rem_euclid(NS)).ok()?;
    chrono::DateTime::from_timestamp(secs, nanos)
}

/// Nanoseconds since the Unix epoch of `d`.
fn ns_of<Tz: chrono::TimeZone>(d: &chrono::DateTime<Tz>) -> i128 {
    i128::from(d.timestamp()) * NS + i128::from(d.timestamp_subsec_nanos())
}

/// Runs `$body` with `$tz` bound to `&` the chrono time zone of [`Zone`] `$zone` (an offset
/// chrono refuses, beyond ±24 h, reads as UTC).
macro_rules! with_tz {
    ($zone:expr, |$tz:ident| $body:expr) => {
        match $zone {
            Zone::Utc => {
                let $tz = &chrono::Utc;
                $body
            }
            Zone::Local => {
                let $tz = &chrono::Local;
                $body
            }
            Zone::Fixed(o) => match chrono::FixedOffset::east_opt(o) {
                Some(f) => {
                    let $tz = &f;
                    $body
                }
                None => {
                    let $tz = &chrono::Utc;
                    $body
                }
            },
        }
    };
}

/// The UTC instant of local midnight starting `date` in `tz`; where a daylight-saving change
/// skips midnight, the first local time after it (a quarter hour at a time, up to a day).
fn midnight_in<Tz: chrono::TimeZone>(tz: &Tz, date: chrono::NaiveDate) -> Option<i128> {
    let midnight = date.and_hms_opt(0, 0, 0)?;
    (0..=96).find_map(|q| {
        let local = midnight.checked_add_signed(chrono::TimeDelta::minutes(15 * q))?;
        tz.from_local_datetime(&local).earliest().map(|d| ns_of(&d))
    })
}

/// The local date-times of `tz` that instants in `[start, end]` (UTC ns) can have: from the
/// start at the smallest offset to the end at the largest, the offsets sampled every hour (or
/// every 1/2000 of a longer span): a daylight-saving change moves the local clock back or forth
/// within the span.
fn local_bounds<Tz: chrono::TimeZone>(
    tz: &Tz,
    start: i128,
    end: i128,
) -> Option<(chrono::NaiveDateTime, chrono::NaiveDateTime)> {
    let offset_ns = |ns: i128| -> Option<i128> {
        let d = utc_at(ns)?.with_timezone(tz);
        let local = d.naive_local().and_utc();
        Some(ns_of(&local) - ns)
    };
    let every = (3600 * NS).max((end - start) / 2000).max(1);
    let (mut lo, mut hi) = (offset_ns(start)?, offset_ns(start)?);
    let mut at = start;
    loop {
        at = (at + every).min(end);
        let o = offset_ns(at)?;
        lo = lo.min(o);
        hi = hi.max(o);
        if at >= end {
            break;
        }
    }
    Some((
        utc_at(start + lo)?.naive_utc(),
        utc_at(end + hi)?.naive_utc(),
    ))
}

/// The instants (UTC ns, ascending, at most [`MAX_TICKS`]) in `[start, end)` that `step`
/// marks on `tz`'s calendar (see [`CalendarUnit`]).
fn ticks_in<Tz: chrono::TimeZone>(
    tz: &Tz,
    start: i128,
    end: i128,
    step: CalendarStep,
) -> Vec<i128> {
    use chrono::{Datelike, Timelike};
    let mut out = Vec::new();
    let count = step.count.max(1);
    let keep = |ns: i128, out: &mut Vec<i128>| {
        if (start..end).contains(&ns) {
            out.push(ns);
        }
    };
    match step.unit {
        CalendarUnit::Nanosecond => {
            // Offsets are whole seconds: fractions of a second are the same in every zone.
            let s = i128::from(count);
            let mut k = start.div_euclid(s) * s;
            if k < start {
                k += s;
            }
            while k < end && out.len() < MAX_TICKS {
                out.push(k);
                let Some(next) = k.checked_add(s) else {
                    break;
                };
                k = next;
            }
            return out;
        }
        CalendarUnit::Second | CalendarUnit::Minute | CalendarUnit::Hour => {
            let Some((lo, hi)) = local_bounds(tz, start, end) else {
                return out;
            };
            let (h, m, s) = (lo.hour(), lo.minute(), lo.second());
            let (first, unit_s) = match step.unit {
                CalendarUnit::Second => ((h, m, s - s % count), 1),
                CalendarUnit::Minute => ((h, m - m % count, 0), 60),
                _ => ((h - h % count, 0, 0), 3600),
            };
            let Some(mut local) = lo.date().and_hms_opt(first.0, first.1, first.2) else {
                return out;
            };
            let by = chrono::TimeDelta::seconds(i64::from(count) * unit_s);
            for _ in 0..MAX_CANDIDATES {
                if local > hi || out.len() >= MAX_TICKS {
                    break;
                }
                match tz.from_local_datetime(&local) {
                    chrono::LocalResult::Single(d) => keep(ns_of(&d), &mut out),
                    chrono::LocalResult::Ambiguous(a, b) => {
                        keep(ns_of(&a), &mut out);
                        keep(ns_of(&b), &mut out);
                    }
                    chrono::LocalResult::None => {}
                }
                let Some(next) = local.checked_add_signed(by) else {
                    break;
                };
                local = next;
            }
        }
        CalendarUnit::Day | CalendarUnit::Month | CalendarUnit::Year => {
            // A day each side: no zone's offset changes by more within the span.
            let local = |ns: i128| utc_at(ns).map(|d| d.with_timezone(tz).date_naive());
            let (Some(lo), Some(hi)) = (local(start), local(end)) else {
                return out;
            };
            let lo = lo.pred_opt().unwrap_or(lo);
            let hi = hi.succ_opt().unwrap_or(hi);
            let mut date = match step.unit {
                CalendarUnit::Day => Some(lo),
                CalendarUnit::Month => {
                    let m0 = lo.month0() - lo.month0() % count;
                    chrono::NaiveDate::from_ymd_opt(lo.year(), m0 + 1, 1)
                }
                _ => {
                    let c = i32::try_from(count).unwrap_or(i32::MAX);
                    chrono::NaiveDate::from_ymd_opt(lo.year().div_euclid(c) * c, 1, 1)
                }
            };
            for _ in 0..MAX_CANDIDATES {
                let Some(d) = date.filter(|d| *d <= hi) else {
                    break;
                };
                if out.len() >= MAX_TICKS {
                    break;
                }
                let marked = match step.unit {
                    CalendarUnit::Day => day_marked(d.day(), count),
                    _ => true,
                };
                if marked && let Some(ns) = midnight_in(tz, d) {
                    keep(ns, &mut out);
                }
                date = match step.unit {
                    CalendarUnit::Day => d.succ_opt(),
                    CalendarUnit::Month => d.checked_add_months(chrono::Months::new(count)),
                    _ => i32::try_from(count)
                        .ok()
                        .and_then(|c| d.year().checked_add(c))
                        .and_then(|y| chrono::NaiveDate::from_ymd_opt(y, 1, 1)),
                };
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// Whether day of the month `day` carries a tick `count` days apart: 1, 1 + count, … (restarting
/// each month); 7 and 14 days stop before the month's last week (1, 8, 15, 22; 1, 15), as
/// matplotlib's `AutoDateLocator` does.
fn day_marked(day: u32, count: u32) -> bool {
    let k = day.saturating_sub(1);
    k.is_multiple_of(count) && (count < 7 || k + count <= 28)
}

/// Ticks of a wall-clock axis over the UTC instants `[start_ns, end_ns)` (nanoseconds since the
/// Unix epoch), about `target` of them, on calendar boundaries of `zone` (see
/// [`CalendarUnit`]): the step [`calendar_step`] chooses, or up to three shorter ones while it
/// marks fewer than two instants. Returns the step and the instants, ascending.
pub fn wall_ticks(
    start_ns: i128,
    end_ns: i128,
    target: f64,
    zone: Zone,
) -> (CalendarStep, Vec<i128>) {
    let mut step = calendar_step(end_ns.saturating_sub(start_ns) as f64 * 1e-9, target);
    if end_ns <= start_ns {
        return (step, Vec::new());
    }
    // A few shorter steps at most: each is at most 3.5 times shorter than the one before.
    for _ in 0..3 {
        let ticks = with_tz!(zone, |tz| ticks_in(tz, start_ns, end_ns, step));
        match shorter_step(step) {
            Some(shorter) if ticks.len() < 2 => step = shorter,
            _ => return (step, ticks),
        }
    }
    let ticks = with_tz!(zone, |tz| ticks_in(tz, start_ns, end_ns, step));
    (step, ticks)
}

/// What a wall-clock label is written after ([`wall_label`]): nothing (a label on its own, as
/// [`format_time`] writes), nothing on the axis (its first tick), or the tick before it (its
/// local date: year and day of the year).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Context {
    Alone,
    First,
    After { year: i32, day: u32 },
}

/// The label of date-time `d` (in its zone) on a wall-clock axis of ticks `step_s` seconds
/// apart, after `ctx`: `2012` (steps of a year or more); `Mar 2012` (months; on an axis `Mar`
/// within the year of the tick before); `Mar 05` (days; `Mar 05 2012` first on an axis and
/// where the year changes); sub-day ticks `13:45` (minutes, hours), `13:45:30` (seconds),
/// `13:45:30.25` (fractions: as many digits as the step needs), the date written before the
/// time where it is new: `2012-03-05 13:45` first on an axis and where the year changes,
/// `Mar 06 01:00` where the day changes, `Mar 06` alone at local midnight (steps of a second
/// or more). A label alone (`Context::Alone`) never shows the year below month steps.
fn wall_label<Tz: chrono::TimeZone>(d: &chrono::DateTime<Tz>, step_s: f64, ctx: Context) -> String
where
    Tz::Offset: std::fmt::Display,
{
    use chrono::{Datelike, Timelike};
    let midnight = d.hour() == 0 && d.minute() == 0 && d.second() == 0 && d.nanosecond() == 0;
    let alone = ctx == Context::Alone;
    let (new_year, new_day) = match ctx {
        Context::Alone => (false, false),
        Context::First => (true, true),
        Context::After { year, day } => (d.year() != year, d.year() != year || d.ordinal() != day),
    };
    let (pattern, with_time) = if step_s >= YEAR_S * 0.999 {
        ("%Y", false)
    } else if step_s >= 28.0 * 86_400.0 {
        (if alone || new_year { "%b %Y" } else { "%b" }, false)
    } else if step_s >= 86_400.0 {
        (if new_year { "%b %d %Y" } else { "%b %d" }, false)
    } else if new_year {
        ("%Y-%m-%d ", true)
    } else if midnight && step_s >= 1.0 {
        ("%b %d", false)
    } else if new_day {
        ("%b %d ", true)
    } else {
        ("", true)
    };
    let mut s = d.format(pattern).to_string();
    if with_time {
        let time = if step_s >= 60.0 { "%H:%M" } else { "%H:%M:%S" };
        s.push_str(&d.format(time).to_string());
        let decimals = decimals_for(step_s);
        if step_s < 1.0 && decimals > 0 {
            let digits = format!("{:09}", d.nanosecond().min(999_999_999));
            s.push('.');
            s.push_str(&digits[..decimals]);
        }
    }
    s
}

/// The label of UTC instant `ns` on a wall-clock axis of ticks `step_s` seconds apart, in
/// `zone` (see [`wall_label`]); seconds since the epoch beyond chrono's calendar.
pub(super) fn wall_label_ns(ns: i128, step_s: f64, zone: Zone) -> String {
    let Some(utc) = utc_at(ns) else {
        return format!("{} s", ns.div_euclid(NS));
    };
    with_tz!(zone, |tz| wall_label(
        &utc.with_timezone(tz),
        step_s,
        Context::Alone
    ))
}

/// The labels of the wall-clock ticks `ticks` (UTC ns, ascending) `step_s` seconds apart, in
/// `zone`: the first with its date (and year), each later one with what changed since the tick
/// before ([`wall_label`]).
pub(super) fn wall_labels(ticks: &[i128], step_s: f64, zone: Zone) -> Vec<String> {
    use chrono::Datelike;
    let mut ctx = Context::First;
    ticks
        .iter()
        .map(|&ns| {
            let Some(utc) = utc_at(ns) else {
                ctx = Context::First;
                return format!("{} s", ns.div_euclid(NS));
            };
            with_tz!(zone, |tz| {
                let d = utc.with_timezone(tz);
                let label = wall_label(&d, step_s, ctx);
                ctx = Context::After {
                    year: d.year(),
                    day: d.ordinal(),
                };
                label
            })
        })
        .collect()
}

/// The absolute instant (ns since the Unix epoch) of chart-relative time `t` for an origin of
/// `o` seconds, or `ons` integer nanoseconds when known (exact then).
pub(super) fn absolute_ns(o: f64, ons: Option<i64>, t: f64) -> i128 {
    match ons {
        Some(n) => i128::from(n).saturating_add((t * 1e9).round() as i128),
        None => {
            let base = o.floor();
            (base as i128)
                .saturating_mul(NS)
                .saturating_add(((o - base + t) * 1e9).round() as i128)
        }
    }
}

/// Chart-relative seconds of absolute instant `ns` (the inverse of [`absolute_ns`]).
pub(super) fn relative_s(o: f64, ons: Option<i64>, ns: i128) -> f64 {
    match ons {
        Some(n) => ns.saturating_sub(i128::from(n)) as f64 * 1e-9,
        None => {
            let base = o.floor();
            ns.saturating_sub((base as i128).saturating_mul(NS)) as f64 * 1e-9 - (o - base)
        }
    }
}
