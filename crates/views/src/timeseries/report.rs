//! What the scene reports: the notices about how the data is drawn, and the metrics.

use super::{TimeSeries, latency, shared};
use crate::series::store::Series;

impl TimeSeries {
    /// Notices about how the data is drawn, one line each (empty when there is nothing to say):
    /// value cells beyond the f32 range that were clamped, rows out of time order that the
    /// source sorted into place, and series still holding samples out of time order (late by
    /// more than a batch of rows; drawn in time order: the CPU M4 path picks each column's first
    /// and last sample by time), and rows or messages refused by the series cap. Shown over the chart (through [`Scene::problem`](crate::Scene::problem)) and listed in the report.
    pub fn notices(&self) -> Vec<String> {
        let mut out = Vec::new();
        let skipped = self.source.rows_skipped();
        if skipped > 0 {
            let first = self.source.warning().unwrap_or_default();
            out.push(format!(
                "{skipped} row(s) not read, the others charted; first: {first}"
            ));
        }
        let clamped = self.source.values_clamped();
        if clamped > 0 {
            let first = self.source.clamp_note().unwrap_or_default();
            out.push(format!(
                "{clamped} value(s) beyond the f32 range (±3.4e38) clamped to ±3.4e38; first: {first}"
            ));
        }
        let sorted = self.source.rows_sorted();
        if sorted > 0 {
            out.push(format!(
                "{sorted} row(s) earlier than the row before them: sorted into place by time"
            ));
        }
        let refused = self.source.series_refused();
        if refused > 0 {
            out.push(format!(
                "{refused} row(s) or message(s) of further series not shown: a source starts at \
                 most {} series",
                crate::series::source::MAX_SERIES
            ));
        }
        let late: Vec<&Series> = self
            .store
            .series()
            .iter()
            .filter(|s| s.out_of_order() > 0)
            .collect();
        if !late.is_empty() {
            let total: u64 = late.iter().map(|s| s.out_of_order()).sum();
            let names: Vec<String> = late
                .iter()
                .take(3)
                .map(|s| format!("'{}'", s.name))
                .collect();
            let more = if late.len() > 3 { ", …" } else { "" };
            out.push(format!(
                "{total} sample(s) earlier than the sample before them in {}{more}: drawn in time order",
                names.join(", ")
            ));
        }
        out
    }

    /// [`Scene::metrics`](crate::Scene::metrics): the source, every series, what was
    /// drawn and how.
    pub(super) fn metrics_json(&self) -> serde_json::Value {
        let skipped = self.source.rows_skipped();
        let series: Vec<_> = self
            .store
            .series()
            .iter()
            .map(|s| {
                serde_json::json!({
                    "name": s.name,
                    "points": s.points_ingested(),
                    "gaps": s.gaps(),
                    "rows_skipped": skipped,
                    "out_of_order": s.out_of_order(),
                    "dropped": s.dropped(),
                    "stored": s.len(),
                    "time_range_s": s.time_range(),
                    // Finite values stored: [min, max].
                    "value_range": s
                        .time_range_rel()
                        .and_then(|(lo, _)| s.value_range_rel(lo, f64::INFINITY)),
                })
            })
            .collect();
        let gpu_bytes = self.gpu.mirrors.gpu_bytes();
        serde_json::json!({
            "source": self.source.label(),
            "warning": self.source.warning(),
            "series_count": self.store.series().len(),
            "series": series,
            "points_ingested": self.store.points_ingested(),
            "points_drawn": self.drawn.points_in_view,
            "rows_skipped": skipped,
            "values_clamped": self.source.values_clamped(),
            "rows_sorted": self.source.rows_sorted(),
            "time_unit": self.source.time_unit().map(|u| u.symbol()),
            "time_format": self.source.time_format(),
            "series_key": self.source.series_key(),
            "time_zone": self.time_format.zone.name(),
            "publish_to_present_ms": self.presents.latency.as_ref().map(latency::Latency::to_json),
            "link": self.source.link().map(|l| serde_json::json!({
                "state": l.state.to_string(),
                "messages": l.messages,
                "parse_errors": l.parse_errors,
                "first_errors": l.errors,
                "dropped_by_vizdeck": l.dropped,
                "lost_by_transport": l.transport_lost,
                "connects": l.connects,
                "time_base": self.source.link_time_base().map(|b| b.name()),
            })),
            "series_refused": self.source.series_refused(),
            "notices": self.notices(),
            "markers": self.drawn.markers.len(),
            "decimation": "gpu-m4-pyramid",
            "gpu_mirror_bytes": gpu_bytes,
            "gpu_mirror_pages": self.gpu.mirrors.pages(),
            "gpu_series_batched": self.gpu.mirrors.views(),
            "raster": self.gpu.pipes.raster.name(),
            "window_s": self.window_s,
            "follow": self.follow,
            "view": self.drawn.view.map(|v| serde_json::json!({
                "t0": v.t0, "t1": v.t1, "lo": v.lo, "hi": v.hi,
            })),
            "shared": self.shared.as_ref().map(shared::SharedSeries::metrics),
        })
    }
}
