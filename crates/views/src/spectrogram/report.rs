//! The scene's report ([`crate::Scene::metrics`]): the analysis, the totals, the view, the
//! capture-to-present latencies and the live source's reconnections.

use super::{COLORMAPS, Spectrogram};

impl Spectrogram {
    /// The scene's metrics for the report ([`crate::Scene::metrics`]).
    pub(super) fn report(&self) -> serde_json::Value {
        let dom = self.dominant();
        serde_json::json!({
            "source": if self.share.following { "follow" } else { self.source.kind() },
            "source_label": self.source_label(),
            "notice": self.notice(),
            "warning": self.source.warning(),
            "sample_rate": self.source.sample_rate(),
            "fft_size": self.a.settings.fft_size,
            "hop": self.a.settings.hop,
            "window": self.a.settings.window.name(),
            // Asked for, where it runs, and (auto) what the measurement found.
            "fft_requested": self.a.settings.fft_on,
            "fft_on": self.a.fft_on,
            "fft_choice": self.a.fft_choice,
            "columns": self.tl.columns_total,
            "columns_skipped": self.tl.columns_skipped,
            "samples": self.tl.samples_total,
            "samples_skipped": self.tl.samples_skipped,
            "dominant_hz": dom.map(|d| d.0),
            "dominant_dbfs": dom.map(|d| d.1),
            "dropped_samples": self.source.dropped(),
            "db_floor": self.view.db_floor,
            "db_ceil": self.view.db_ceil,
            "frequency_axis": self.view.scale.name(),
            "colormap": COLORMAPS[self.view.colormap].0,
            "ring_columns": self.a.ring_width,
            "latency_ms": (!self.levels.latencies.is_empty()).then(|| {
                let (last, p50, p99) = self.latency_summary();
                serde_json::json!({ "last": last, "p50": p50, "p99": p99, "n": self.levels.latencies.len() })
            }),
            "ring_rows": self.a.rows,
            "reconnect": self.reconnect_metrics(),
            "view": self.view_metrics(),
            "share": self.share_metrics(),
        })
    }

    /// (last, p50, p99) of the recent capture-to-present latencies, ms (nearest rank).
    pub fn latency_summary(&self) -> (f64, f64, f64) {
        use vizdeck_base::percentile::percentile_nearest_rank;
        let mut v: Vec<f64> = self.levels.latencies.iter().copied().collect();
        let last = v.last().copied().unwrap_or(0.0);
        v.sort_by(f64::total_cmp);
        (
            last,
            percentile_nearest_rank(&v, 50.0),
            percentile_nearest_rank(&v, 99.0),
        )
    }

    /// The live source's automatic reconnection, for the report: `losses`, `reopens`,
    /// `reconnecting` (now), `last_reopen_unix_ms` and `first_data_after_reopen_unix_ms`
    /// (wall clock, ms since the Unix epoch), `samples_since_reopen`, `last_outage_s` (from the
    /// loss being noticed to the reopen) and `last_loss` (why). `null` for clocked sources.
    fn reconnect_metrics(&self) -> serde_json::Value {
        if self.source.kind() != "live" {
            return serde_json::Value::Null;
        }
        let st = self.source.reopen_stats();
        let ms = |t: Option<std::time::SystemTime>| {
            t.and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map(|d| d.as_secs_f64() * 1e3)
        };
        serde_json::json!({
            "losses": st.losses,
            "reopens": st.reopens,
            "reconnecting": self.source.reconnecting(),
            "last_reopen_unix_ms": ms(st.last_reopen),
            "first_data_after_reopen_unix_ms": ms(st.first_data_after_reopen),
            "samples_since_reopen": st.samples_since_reopen,
            "last_outage_s": st.last_outage_s,
            "last_loss": st.last_loss,
        })
    }

    /// The view as the report gives it: columns across, the centre times of the oldest and the
    /// newest column shown (s), frozen or not, and how many times it was frozen.
    fn view_metrics(&self) -> serde_json::Value {
        let newest = self.tl.written.saturating_sub(self.view.view_back);
        let visible = u64::from(self.visible());
        let span = (newest > 0).then(|| {
            let hi = newest - 1;
            let lo = hi.saturating_sub(visible - 1);
            (self.column_time(lo), self.column_time(hi))
        });
        serde_json::json!({
            "columns": visible,
            "first_s": span.map(|s| s.0),
            "last_s": span.map(|s| s.1),
            "frozen": self.view.frozen,
            "freezes": self.view.freezes,
            "fitted_to_file": self.view.fit_cols.is_some(),
        })
    }
}
