//! How times are written: the zone and date format of the source, the crosshair's exact time of
//! a sample and the axis labels' time ([`axis`](super::axis) does the formatting).

use super::{TimeSeries, axis};
use crate::series::source::SeriesSource;
use crate::series::source::dates::{DateFormat, Zone};

/// The zone and date format times are written in.
pub(super) struct TimeFormat {
    /// Zone of the time axis and the readout (`--time-zone`).
    pub(super) zone: Zone,
    /// The source's date format, when its times were dates (the readout writes them in it).
    pub(super) date_format: Option<DateFormat>,
}

/// The format the crosshair writes a sample's time in, for a source whose times are dates: a
/// CSV's own pattern (parsed again); for Parquet / Arrow, whose [`SeriesSource::time_format`]
/// names the column's type (`parquet timestamp[ms, UTC]`, `arrow date32 (days)`), ISO 8601
/// date-times to the column's unit ([`readout_pattern`]).
pub(super) fn date_format_of(source: &SeriesSource) -> Option<DateFormat> {
    let p = source.time_format()?;
    let pattern = readout_pattern(p, source.time_unit());
    DateFormat::from_pattern(pattern.as_deref().unwrap_or(p)).ok()
}

/// The readout's strftime pattern for a time column described as `format` (a columnar file's
/// type: `… timestamp[unit…]`, `… date32 …`, `… date64 …`) in `unit`: `%Y-%m-%d` for dates,
/// `%Y-%m-%d %H:%M:%S` with as many fraction digits as the unit has (3 for ms, 6 for µs, 9
/// for ns) for timestamps. `None` when `format` is a strftime pattern (or `rfc3339`) itself.
pub fn readout_pattern(
    format: &str,
    unit: Option<crate::series::source::TimeUnit>,
) -> Option<String> {
    use crate::series::source::TimeUnit;
    if format.contains('%') || format.eq_ignore_ascii_case("rfc3339") {
        return None;
    }
    if format.contains("date32") || format.contains("date64") {
        return Some("%Y-%m-%d".to_string());
    }
    let fraction = match unit {
        Some(TimeUnit::Millis) => "%.3f",
        Some(TimeUnit::Micros) => "%.6f",
        Some(TimeUnit::Nanos) => "%.9f",
        Some(TimeUnit::Seconds) | None => "",
    };
    Some(format!("%Y-%m-%d %H:%M:%S{fraction}"))
}

impl TimeSeries {
    /// What the crosshair writes for the time of a sample of series `i` at time `tr` relative to
    /// that series' origin ([`axis::exact_time`]: in the file's date format, ISO 8601 to the
    /// column's unit for Parquet / Arrow dates and timestamps, else the wall clock or seconds);
    /// empty for a series not stored.
    pub fn readout_time(&self, i: usize, tr: f64) -> String {
        self.store.series().get(i).map_or_else(String::new, |s| {
            axis::exact_time(
                s,
                tr,
                self.time_format.zone,
                self.time_format.date_format.as_ref(),
            )
        })
    }

    /// Formats chart-relative time `t` for labels (see [`axis::format_time`]).
    pub fn format_time(&self, t: f64, step: f64) -> String {
        axis::format_time(self.chart_origin(), t, step, self.time_format.zone)
    }
}
