//! Axis helpers of the time-series chart: value ranges, nice ticks, time ticks and labels
//! (seconds, milliseconds, wall clock down to nanoseconds), the placement of axis labels and the
//! nearest-sample lookup of the crosshair.
//!
//! Times are chart-relative seconds plus a chart origin `(absolute seconds, optional integer
//! nanoseconds)`: an origin of at least 1e8 s (after 1973) is taken as Unix time and labelled as
//! wall-clock time in the chosen [`Zone`]; otherwise times are labelled in s or ms.
//!
//! Wall-clock ticks sit on calendar boundaries of the zone, computed with chrono (its calendar,
//! its zone rules): years (1, 2, 5, 10, … years), months (1, 2, 3, 6), days (1, 2, 3, 7, 14;
//! days of the month, restarting each month), hours (1, 2, 3, 6, 12), minutes and seconds (1, 2,
//! 5, 10, 15, 30) and decimal fractions of a second down to a nanosecond — matplotlib's
//! `AutoDateLocator` with `interval_multiples`. Labels show the unit that changes: `2012`,
//! `Mar`, `Mar 05`, `13:45` (`Mar 06` at midnight), `13:45:30`, `13:45:30.25`; the first tick
//! and a tick where the year changes carry the year (`Mar 2012`, `Mar 05 2012`,
//! `2012-03-05 13:45`), a sub-day tick where the day changes its date (`Mar 06 01:00`), as
//! matplotlib's `ConciseDateFormatter` puts that context in its offset text.

//!
//! This file holds the value ranges and ticks, the time ticks and labels, and the crosshair's
//! nearest sample and exact time; `calendar.rs` the wall-clock ticks and labels, `labels.rs`
//! the placement and text of the labels, the value axis' title and the legend.

#[macro_use]
mod calendar;
mod labels;

pub use calendar::{CalendarStep, CalendarUnit, calendar_step, wall_ticks};
pub use labels::{
    LABEL_GAP_PX, LEGEND_MAX_LINES, label_font, label_galley, legend_lines, place_box,
    place_labels, unit_of, value_title,
};

use crate::series::source::dates::{DateFormat, Zone};
use crate::series::store::Series;
use crate::spectrogram::axis::nice_step;
use calendar::{absolute_ns, relative_s, utc_at, wall_label_ns, wall_labels};

/// Origins at or beyond this many seconds are labelled as wall-clock time.
pub(crate) const WALL_CLOCK_FROM_S: f64 = 1e8;
/// Most ticks one axis draws (guards against degenerate ranges).
const MAX_TICKS: usize = 200;

/// The value range to show for data in `[lo, hi]`: 5 % padding; a flat line gets ±1 % of its
/// value (±1 at 0); no finite data gives `(-1, 1)`. Stays finite for data near ±f32::MAX and
/// for any finite f64 input.
pub(crate) fn padded_range(lo: f64, hi: f64) -> (f64, f64) {
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
pub(crate) fn decimals_for(step: f64) -> usize {
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

/// Label of chart-relative time `t` for ticks `step` seconds apart: for Unix-time origins the
/// wall clock of `zone` (nanoseconds exact when the origin is integer nanoseconds): `2012` for
/// steps of a year or more, `Mar 2012` for months, `Mar 05` for days (and at local midnight on
/// finer axes), `13:45` for minutes and hours, `13:45:30` for seconds, else `13:45:30.25` with
/// the digits the step needs; for other origins `… s`, or `… ms` when ticks are closer than a
/// second.
pub(crate) fn format_time(
    origin: Option<(f64, Option<i64>)>,
    t: f64,
    step: f64,
    zone: Zone,
) -> String {
    let (o, ons) = origin.unwrap_or((0.0, None));
    if o.abs() >= WALL_CLOCK_FROM_S {
        return wall_label_ns(absolute_ns(o, ons, t), step, zone);
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

/// Ticks of the time axis over chart-relative `[t0, t1)` (about `target`), with labels: for
/// Unix-time origins on calendar boundaries of `zone` ([`wall_ticks`], labelled by
/// [`format_time`]'s wall-clock forms); else at multiples of a decimal nice step in *absolute*
/// time (integer nanoseconds when the origin has them).
pub fn time_ticks(
    origin: Option<(f64, Option<i64>)>,
    t0: f64,
    t1: f64,
    target: f64,
    zone: Zone,
) -> Vec<(f64, String)> {
    let mut out = Vec::new();
    if !t0.is_finite() || !t1.is_finite() || t1 <= t0 {
        return out;
    }
    let (o, ons) = origin.unwrap_or((0.0, None));
    if o.abs() >= WALL_CLOCK_FROM_S {
        let (step, ticks) = wall_ticks(
            absolute_ns(o, ons, t0),
            absolute_ns(o, ons, t1),
            target,
            zone,
        );
        let labels = wall_labels(&ticks, step.approx_s(), zone);
        return ticks
            .into_iter()
            .zip(labels)
            .map(|(ns, label)| (relative_s(o, ons, ns), label))
            .collect();
    }
    let step = nice_step(t1 - t0, target);
    if !step.is_finite() {
        return out;
    }
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
            let base = if step < 1.0 { o.floor() } else { 0.0 };
            let frac = o - base;
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

/// About how many time ticks a chart `width_px` wide shows: one per 130 px, at least 2.
pub(crate) fn time_target(width_px: f32) -> f64 {
    f64::from((width_px / 130.0).max(2.0))
}

/// About how many value ticks a plot `height_px` tall shows: one per 50 px, at least 2.
pub(crate) fn value_target(height_px: f32) -> f64 {
    f64::from((height_px / 50.0).max(2.0))
}

/// The stored sample nearest in time to relative time `r` (ties: the earlier), as
/// `(global index, relative time, value)`. Binary search on ordered series; a linear scan
/// otherwise.
pub(crate) fn nearest_sample(s: &Series, r: f64) -> Option<(u64, f64, f32)> {
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
/// in the file's own date format `file` when it has one, else as `zone`'s wall clock with its
/// date (`2023-11-14 22:13:20.000000003`; Unix times only, see [`WALL_CLOCK_FROM_S`]), with the
/// integer nanoseconds; else the shortest decimal that round-trips the f64.
pub(crate) fn exact_time(s: &Series, tr: f64, zone: Zone, file: Option<&DateFormat>) -> String {
    match (s.origin_ns(), s.origin()) {
        (Some(n), _) => {
            let ns = absolute_ns(0.0, Some(n), tr);
            let wall = (n as f64 * 1e-9).abs() >= WALL_CLOCK_FROM_S;
            let shown = match (file, i64::try_from(ns), utc_at(ns)) {
                (Some(f), Ok(ns), _) => f.format_ns(ns, zone),
                (None, _, Some(utc)) if wall => with_tz!(zone, |tz| utc
                    .with_timezone(tz)
                    .format("%Y-%m-%d %H:%M:%S%.9f")
                    .to_string()),
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
    use super::calendar::{MONTH_S, YEAR_S};
    use super::*;

    #[test]
    fn units_from_headers() {
        assert_eq!(unit_of("temp (°C)"), Some("°C"));
        assert_eq!(unit_of("pressure [hPa] "), Some("hPa"));
        assert_eq!(unit_of("lab/a/speed (m/s)"), Some("m/s"));
        assert_eq!(unit_of("temp"), None);
        assert_eq!(unit_of("(°C)"), None, "a name that is only a unit");
        assert_eq!(unit_of("x ()"), None);
        assert_eq!(unit_of("f(x"), None);
        assert_eq!(
            value_title(["a (°C)", "b", "c [hPa]", "d (°C)"]),
            Some("°C, hPa".to_string())
        );
        assert_eq!(value_title(["a", "b"]), None);
    }

    #[test]
    fn legend_lines_sum_up_the_rest() {
        let names: Vec<String> = (0..30).map(|i| format!("s{i}")).collect();
        let shown: Vec<(usize, &str)> = names.iter().map(String::as_str).enumerate().collect();
        let few = legend_lines(&shown[..LEGEND_MAX_LINES]);
        assert_eq!(few.len(), LEGEND_MAX_LINES);
        assert_eq!(few[3], (Some(3), "s3".to_string()));
        let many = legend_lines(&shown);
        assert_eq!(many.len(), LEGEND_MAX_LINES);
        assert_eq!(many[LEGEND_MAX_LINES - 2], (Some(10), "s10".to_string()));
        assert_eq!(
            many[LEGEND_MAX_LINES - 1],
            (None, "… and 19 more".to_string())
        );
    }

    #[test]
    fn boxes_stay_inside_and_off_the_overlay() {
        let rect = egui::Rect::from_min_size(egui::pos2(0.0, 0.0), egui::vec2(1000.0, 600.0));
        let avoid = crate::overlay::overlay_area(rect);
        let size = egui::vec2(200.0, 60.0);
        for x in [0.0, 100.0, 500.0, 700.0, 900.0, 999.0] {
            for y in [0.0, 6.0, 100.0, 300.0, 590.0] {
                let at = egui::pos2(x, y);
                let p = place_box(at, size, rect, avoid, 8.0);
                let b = egui::Rect::from_min_size(p, size);
                assert!(rect.contains_rect(b), "{at:?} → {b:?}");
                assert!(!b.intersects(avoid), "{at:?} → {b:?} covers {avoid:?}");
                // Beside the pointer, not over it.
                assert!(
                    b.left() >= x + 8.0 || b.right() <= x - 8.0,
                    "{at:?} → {b:?}"
                );
            }
        }
        // Room on the right: right of the pointer, at its height.
        let p = place_box(egui::pos2(100.0, 300.0), size, rect, avoid, 8.0);
        assert_eq!(p, egui::pos2(108.0, 300.0));
    }

    /// The "2021-03-04 12:00, then 12:30" scheme: the first tick and a change of year carry
    /// the year, a change of day the date, a range of years the years; each date worked out
    /// by hand from the Unix time.
    #[test]
    fn the_axis_shows_the_year_first_and_where_it_changes() {
        // 2021-03-04 12:00:00 UTC = 1_614_859_200 s; a 2-hour view, 30-minute ticks.
        let o = Some((1_614_859_200.0, Some(1_614_859_200_000_000_000)));
        let ticks = time_ticks(o, 0.0, 2.0 * 3600.0, 4.0, Zone::Utc);
        let labels: Vec<&str> = ticks.iter().map(|t| t.1.as_str()).collect();
        assert_eq!(labels, ["2021-03-04 12:00", "12:30", "13:00", "13:30"]);
        // Across New Year 2020 → 2021 (2020-12-31 18:00 UTC = 1_609_437_600 s), 6-hour ticks.
        let o = Some((1_609_437_600.0, None));
        let ticks = time_ticks(o, 0.0, 24.0 * 3600.0, 4.0, Zone::Utc);
        let labels: Vec<&str> = ticks.iter().map(|t| t.1.as_str()).collect();
        assert_eq!(
            labels,
            ["2020-12-31 18:00", "2021-01-01 00:00", "06:00", "12:00"]
        );
        // Across a day within the year (from 2021-03-04 18:00): midnight shows the date alone.
        let o = Some((1_614_880_800.0, None));
        let ticks = time_ticks(o, 0.0, 24.0 * 3600.0, 4.0, Zone::Utc);
        let labels: Vec<&str> = ticks.iter().map(|t| t.1.as_str()).collect();
        assert_eq!(labels, ["2021-03-04 18:00", "Mar 05", "06:00", "12:00"]);
        // Nine and a half years from 2010-01-01: 2-year ticks, the years alone.
        let o = Some((1_262_304_000.0, None));
        let ticks = time_ticks(o, 0.0, 9.5 * YEAR_S, 5.0, Zone::Utc);
        let labels: Vec<&str> = ticks.iter().map(|t| t.1.as_str()).collect();
        assert_eq!(labels, ["2010", "2012", "2014", "2016", "2018"]);
    }

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
        // 2010-01-01T00:00:00Z = 1,262,304,000 s.
        let o = Some((1_262_304_000.0, Some(1_262_304_000_000_000_000)));
        assert_eq!(
            format_time(o, 3.0 * 86_400.0, 86_400.0, Zone::Utc),
            "Jan 04"
        );
        assert_eq!(
            format_time(o, 86_400.0 + 7200.0, 3600.0, Zone::Utc),
            "02:00"
        );
        assert_eq!(format_time(o, 86_400.0, 3600.0, Zone::Utc), "Jan 02");
        assert_eq!(
            format_time(o, 40.0 * 86_400.0, 30.0 * 86_400.0, Zone::Utc),
            "Feb 2010"
        );
        assert_eq!(format_time(o, 400.0 * 86_400.0, YEAR_S, Zone::Utc), "2011");
        // A month: 7-day ticks on the 1st, 8th, 15th and 22nd, each at midnight UTC.
        let ticks = time_ticks(o, 0.0, 30.0 * 86_400.0, 6.0, Zone::Utc);
        let days: Vec<f64> = ticks.iter().map(|t| t.0 / 86_400.0).collect();
        assert_eq!(days, [0.0, 7.0, 14.0, 21.0], "{ticks:?}");
        let labels: Vec<&str> = ticks.iter().map(|t| t.1.as_str()).collect();
        // The first with its year; the others the day alone.
        assert_eq!(labels, ["Jan 01 2010", "Jan 08", "Jan 15", "Jan 22"]);
        // At UTC−08:00 the same ticks fall on the zone's midnight: 08:00 UTC.
        let ticks = time_ticks(o, 0.0, 30.0 * 86_400.0, 6.0, Zone::Fixed(-28_800));
        let hours: Vec<f64> = ticks.iter().map(|t| t.0 / 3600.0).collect();
        assert_eq!(hours, [8.0, 176.0, 344.0, 512.0], "{ticks:?}");
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
        // Relative origins keep their decimal steps in s.
        let ticks = time_ticks(Some((0.0, None)), 0.0, 10.0, 5.0, Zone::Utc);
        let labels: Vec<&str> = ticks.iter().map(|t| t.1.as_str()).collect();
        assert_eq!(labels, ["0 s", "2 s", "4 s", "6 s", "8 s"]);
    }

    /// English month abbreviations, as chrono's `%b` writes them.
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];

    /// The local date-time of UTC instant `ns` in `zone`, by chrono (not through the axis code).
    fn zoned(ns: i128, zone: Zone) -> chrono::NaiveDateTime {
        let secs = i64::try_from(ns.div_euclid(1_000_000_000)).unwrap();
        let nanos = u32::try_from(ns.rem_euclid(1_000_000_000)).unwrap();
        let utc = chrono::DateTime::from_timestamp(secs, nanos).unwrap();
        match zone {
            Zone::Utc => utc.naive_utc(),
            Zone::Fixed(o) => utc
                .with_timezone(&chrono::FixedOffset::east_opt(o).unwrap())
                .naive_local(),
            Zone::Local => utc.with_timezone(&chrono::Local).naive_local(),
        }
    }

    /// The days of the month a day step of `count` marks, written out.
    fn marked_days(count: u32) -> &'static [u32] {
        match count {
            1 => &[
                1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23,
                24, 25, 26, 27, 28, 29, 30, 31,
            ],
            2 => &[1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31],
            3 => &[1, 4, 7, 10, 13, 16, 19, 22, 25, 28, 31],
            7 => &[1, 8, 15, 22],
            14 => &[1, 15],
            _ => &[],
        }
    }

    /// The boundary `dir` (+1 after, −1 before) local time `t` for a step of `count` `unit`s,
    /// by chrono's calendar arithmetic.
    fn boundary_from(
        t: chrono::NaiveDateTime,
        unit: CalendarUnit,
        count: u32,
        dir: i32,
    ) -> chrono::NaiveDateTime {
        use chrono::{Datelike, TimeDelta};
        let c = i64::from(count) * i64::from(dir);
        match unit {
            CalendarUnit::Nanosecond => t + TimeDelta::nanoseconds(c),
            CalendarUnit::Second => t + TimeDelta::seconds(c),
            CalendarUnit::Minute => t + TimeDelta::minutes(c),
            CalendarUnit::Hour => t + TimeDelta::hours(c),
            CalendarUnit::Day => {
                let day = TimeDelta::days(i64::from(dir));
                let mut d = t + day;
                while !marked_days(count).contains(&d.day()) {
                    d += day;
                }
                d
            }
            CalendarUnit::Month if dir > 0 => {
                t.checked_add_months(chrono::Months::new(count)).unwrap()
            }
            CalendarUnit::Month => t.checked_sub_months(chrono::Months::new(count)).unwrap(),
            CalendarUnit::Year => t.with_year(t.year() + count as i32 * dir).unwrap(),
        }
    }

    /// The label a tick at local time `t` should have on an axis of `count` `unit`s, written out
    /// field by field.
    /// The label of local time `t` on an axis of `count` `unit`s after the tick at `prev`
    /// (`None`: the first tick): the year where it is new (the first tick, a new year), the
    /// date where the day is new, then the unit that changes.
    fn expected_label(
        t: chrono::NaiveDateTime,
        prev: Option<chrono::NaiveDateTime>,
        unit: CalendarUnit,
        count: u32,
    ) -> String {
        use chrono::{Datelike, Timelike};
        let (mon, d, y) = (MONTHS[t.month0() as usize], t.day(), t.year());
        let new_year = prev.is_none_or(|p| p.year() != y);
        let new_day = prev.is_none_or(|p| p.date() != t.date());
        let midnight = t.time() == chrono::NaiveTime::MIN;
        let hms = format!("{:02}:{:02}:{:02}", t.hour(), t.minute(), t.second());
        let time = match unit {
            CalendarUnit::Hour | CalendarUnit::Minute => hms[..5].to_string(),
            CalendarUnit::Nanosecond => {
                // 1, 2, 5 × 10ⁿ ns: 9 − n digits.
                let digits = 9 - count.ilog10() as usize;
                format!("{hms}.{}", &format!("{:09}", t.nanosecond())[..digits])
            }
            _ => hms,
        };
        match unit {
            CalendarUnit::Year => format!("{y}"),
            CalendarUnit::Month if new_year => format!("{mon} {y}"),
            CalendarUnit::Month => mon.to_string(),
            CalendarUnit::Day if new_year => format!("{mon} {d:02} {y}"),
            CalendarUnit::Day => format!("{mon} {d:02}"),
            _ if new_year => format!("{y}-{:02}-{d:02} {time}", t.month()),
            _ if midnight && unit != CalendarUnit::Nanosecond => format!("{mon} {d:02}"),
            _ if new_day => format!("{mon} {d:02} {time}"),
            _ => time,
        }
    }

    /// Whether local time `t` sits on a boundary of `count` `unit`s.
    fn on_boundary(t: chrono::NaiveDateTime, unit: CalendarUnit, count: u32) -> bool {
        use chrono::{Datelike, Timelike};
        let (h, m, s, n) = (t.hour(), t.minute(), t.second(), t.nanosecond());
        match unit {
            CalendarUnit::Nanosecond => n % count == 0,
            CalendarUnit::Second => n == 0 && s % count == 0,
            CalendarUnit::Minute => n == 0 && s == 0 && m % count == 0,
            CalendarUnit::Hour => n == 0 && s == 0 && m == 0 && h % count == 0,
            CalendarUnit::Day => {
                t.time() == chrono::NaiveTime::MIN && marked_days(count).contains(&t.day())
            }
            CalendarUnit::Month => {
                t.time() == chrono::NaiveTime::MIN
                    && t.day() == 1
                    && t.month0().is_multiple_of(count)
            }
            CalendarUnit::Year => {
                t.time() == chrono::NaiveTime::MIN
                    && t.day() == 1
                    && t.month() == 1
                    && t.year().rem_euclid(count as i32) == 0
            }
        }
    }

    const SPAN_S: [f64; 6] = [
        2.0,
        90.0 * 60.0,
        3.0 * 86_400.0,
        5.0 * MONTH_S,
        7.0 * YEAR_S,
        60.0 * YEAR_S,
    ];
    const ZONES: [Zone; 3] = [Zone::Utc, Zone::Fixed(19_800), Zone::Local];
    /// Starts: 2012-03-05T13:47:12.345678901Z; 1999-12-31T23:59:58.5Z (2000 begins within every
    /// span in UTC); 1973-03-03T09:46:40Z (just after the wall-clock threshold); 2021-03-28 and
    /// 2021-10-31 at 00:30Z, half an hour before Europe's clocks change (exercised where the
    /// test runs with such a local zone, e.g. `TZ=Europe/Berlin`).
    const STARTS_NS: [i128; 5] = [
        1_330_955_232_345_678_901,
        946_684_798_500_000_000,
        100_000_000_000_000_000,
        1_616_891_400_000_000_000,
        1_635_640_200_000_000_000,
    ];

    /// The step each span of [`SPAN_S`] gets on a chart 1000 px wide (7.7 ticks) and 600 px
    /// wide (4.6 ticks), worked out by hand: the shortest step at least span / ticks long.
    fn expected_step(width: f32, span: usize) -> (CalendarUnit, u32) {
        use CalendarUnit::*;
        let (wide, narrow) = [
            // 2 s / 7.7 = 0.26 s, / 4.6 = 0.43 s: half a second.
            ((Nanosecond, 500_000_000), (Nanosecond, 500_000_000)),
            // 90 min / 7.7 = 11.7 min: 15 min; / 4.6 = 19.5 min: 30 min.
            ((Minute, 15), (Minute, 30)),
            // 3 days / 7.7 = 9.4 h: 12 h; / 4.6 = 15.6 h: a day.
            ((Hour, 12), (Day, 1)),
            // 5 months / 7.7 = 0.65 month: 1; / 4.6 = 1.08 months: 2.
            ((Month, 1), (Month, 2)),
            // 7 years / 7.7 = 0.91 year: 1; / 4.6 = 1.52 years: 2.
            ((Year, 1), (Year, 2)),
            // 60 years / 7.7 = 7.8 years: 10; / 4.6 = 13 years: 20.
            ((Year, 10), (Year, 20)),
        ][span];
        if width >= 1000.0 { wide } else { narrow }
    }

    #[test]
    fn wall_clock_ticks_sit_on_calendar_boundaries_of_the_zone() {
        for width in [1000.0f32, 600.0] {
            let target = time_target(width);
            for (k, span) in SPAN_S.into_iter().enumerate() {
                let (unit, count) = expected_step(width, k);
                for zone in ZONES {
                    for start in STARTS_NS {
                        let end = start + (span * 1e9) as i128;
                        let case = format!("{width} px, {span} s, {zone:?}, from {start} ns");
                        let (step, ticks) = wall_ticks(start, end, target, zone);
                        assert_eq!((step.unit, step.count), (unit, count), "{case}");
                        assert!((2..=12).contains(&ticks.len()), "{case}: {ticks:?}");
                        assert!(ticks.windows(2).all(|w| w[0] < w[1]), "{case}: {ticks:?}");
                        assert!(ticks[0] >= start && *ticks.last().unwrap() < end, "{case}");
                        let local: Vec<_> = ticks.iter().map(|&ns| zoned(ns, zone)).collect();
                        for t in &local {
                            assert!(on_boundary(*t, unit, count), "{case}: {t}");
                        }
                        // None missing: each tick is the boundary after the one before, and
                        // the boundaries either side of the ticks fall outside the span.
                        let fixed_offset = |a: i128, b: i128| {
                            zone != Zone::Local
                                || (zoned(a, zone) - zoned(a, Zone::Utc))
                                    == (zoned(b, zone) - zoned(b, Zone::Utc))
                        };
                        for (w, l) in ticks.windows(2).zip(local.windows(2)) {
                            if fixed_offset(w[0], w[1]) {
                                assert_eq!(boundary_from(l[0], unit, count, 1), l[1], "{case}");
                            }
                        }
                        if fixed_offset(start, end) {
                            let (first, last) = (local[0], local[local.len() - 1]);
                            assert!(boundary_from(first, unit, count, -1) < zoned(start, zone));
                            assert!(boundary_from(last, unit, count, 1) >= zoned(end, zone));
                        }
                        // The same ticks, chart-relative, with their labels.
                        let o = (start as f64 * 1e-9, Some(i64::try_from(start).unwrap()));
                        let labelled = time_ticks(Some(o), 0.0, span, target, zone);
                        assert_eq!(labelled.len(), ticks.len(), "{case}");
                        let mut prev = None;
                        for ((rel, label), (&ns, t)) in
                            labelled.iter().zip(ticks.iter().zip(&local))
                        {
                            assert_eq!(*rel, (ns - start) as f64 * 1e-9, "{case}");
                            assert_eq!(*label, expected_label(*t, prev, unit, count), "{case}");
                            prev = Some(*t);
                        }
                    }
                }
            }
        }
    }

    /// An egui context with its fonts loaded (after one pass), as the overlay's is.
    fn egui_ctx() -> egui::Context {
        let ctx = egui::Context::default();
        // The font atlas' delta is not applied here (epaint checks that none is dropped so).
        let mut out = ctx.run_ui(egui::RawInput::default(), |_| {});
        out.textures_delta.clear();
        ctx
    }

    #[test]
    fn labels_are_moved_inside_and_dropped_rather_than_overlap() {
        // Wants -20 (leaves the start), 50, 55 (would overlap 50..80), 190 (leaves the end).
        let placed = place_labels(
            &[-20.0, 50.0, 55.0, 190.0],
            &[40.0, 30.0, 30.0, 40.0],
            200.0,
            8.0,
        );
        assert_eq!(placed, [Some(0.0), Some(50.0), None, Some(160.0)]);
        // Taken in order of position whatever the order given; too long for the axis: dropped.
        let placed = place_labels(&[100.0, 0.0, 10.0], &[10.0, 10.0, 300.0], 200.0, 8.0);
        assert_eq!(placed, [Some(100.0), Some(0.0), None]);
        assert_eq!(place_labels(&[f32::NAN], &[10.0], 200.0, 8.0), [None]);
    }

    #[test]
    fn time_labels_stay_inside_the_chart_and_apart() {
        let ctx = egui_ctx();
        let mut at_edge = 0;
        for width in [1000.0f32, 600.0, 300.0] {
            let target = time_target(width);
            for span in SPAN_S {
                for zone in ZONES {
                    for start in STARTS_NS {
                        // Also from a tick: its label would be centred on the left edge.
                        let end = start + (span * 1e9) as i128;
                        let edge = wall_ticks(start, end, target, zone).1[0];
                        for s0 in [start, edge] {
                            let case = format!("{width} px, {span} s, {zone:?}, from {s0} ns");
                            let o = (s0 as f64 * 1e-9, Some(i64::try_from(s0).unwrap()));
                            let ticks = time_ticks(Some(o), 0.0, span, target, zone);
                            let sizes: Vec<f32> = ticks
                                .iter()
                                .map(|(_, l)| label_galley(&ctx, l).size().x)
                                .collect();
                            let want: Vec<f32> = ticks
                                .iter()
                                .zip(&sizes)
                                .map(|((t, _), w)| (t / span) as f32 * width - w / 2.0)
                                .collect();
                            let placed = place_labels(&want, &sizes, width, LABEL_GAP_PX);
                            let rects: Vec<(f32, f32)> = placed
                                .iter()
                                .zip(&sizes)
                                .filter_map(|(p, w)| p.map(|x| (x, x + w)))
                                .collect();
                            let least = if width >= 600.0 { 2 } else { 1 };
                            assert!(rects.len() >= least, "{case}: {ticks:?} {rects:?}");
                            for (a, b) in &rects {
                                assert!(*a >= 0.0 && *b <= width && b > a, "{case}: {rects:?}");
                            }
                            for w in rects.windows(2) {
                                assert!(w[1].0 >= w[0].1 + LABEL_GAP_PX, "{case}: {rects:?}");
                            }
                            if ticks[0].0 == 0.0 {
                                assert_eq!(placed[0], Some(0.0), "{case}: {ticks:?}");
                                at_edge += 1;
                            }
                        }
                    }
                }
            }
        }
        // Most starts from a tick keep it (a shorter step can move the first tick on).
        assert!(
            at_edge >= 3 * SPAN_S.len() * ZONES.len() * STARTS_NS.len() / 2,
            "{at_edge}"
        );
    }

    #[test]
    fn value_labels_stay_inside_the_chart() {
        let ctx = egui_ctx();
        // 0 … 1 on 300 px: ticks every 0.2 (60 px), the top one on the chart's top edge.
        let ticks = value_ticks(0.0, 1.0, 6.0);
        assert_eq!(ticks.len(), 6);
        let heights: Vec<f32> = ticks
            .iter()
            .map(|(_, l)| label_galley(&ctx, l).size().y)
            .collect();
        // A label sits on its line (its bottom at the line), 300 px tall chart.
        let want: Vec<f32> = ticks
            .iter()
            .zip(&heights)
            .map(|((v, _), h)| (1.0 - *v as f32) * 300.0 - h)
            .collect();
        let placed = place_labels(&want, &heights, 300.0, 2.0);
        assert_eq!(
            placed[5],
            Some(0.0),
            "the top label moves inside, below its line"
        );
        for ((p, h), w) in placed.iter().zip(&heights).zip(&want) {
            let p = p.expect("every label fits");
            assert!(p >= 0.0 && p + h <= 300.0);
            assert!((p - w).abs() <= *h, "moved by at most its height");
        }
        for w in placed.windows(2) {
            let (a, b) = (w[0].unwrap(), w[1].unwrap());
            assert!(a >= b + heights[0] + 2.0, "apart: {placed:?}");
        }
    }

    #[test]
    fn exact_times_show_the_date_in_the_zone() {
        let mut s = Series::new("a", 16);
        // 2023-11-14T22:13:20Z, then 3 ns later.
        s.push_ns(1_700_000_000_000_000_000, 1.0);
        s.push_ns(1_700_000_000_000_000_003, 2.0);
        assert_eq!(
            exact_time(&s, 3e-9, Zone::Utc, None),
            "2023-11-14 22:13:20.000000003 (1700000000000000003 ns)"
        );
        assert_eq!(
            exact_time(&s, 0.0, Zone::Fixed(19_800), None),
            "2023-11-15 03:43:20.000000000 (1700000000000000000 ns)"
        );
        // Nanoseconds that are not Unix time (since boot, say): milliseconds.
        let mut s = Series::new("b", 16);
        s.push_ns(2_000_000, 1.0);
        assert_eq!(
            exact_time(&s, 0.0, Zone::Utc, None),
            "2.000000 ms (2000000 ns)"
        );
    }
}
