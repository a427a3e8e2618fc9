//! The settings kept between runs: the following window of each live source, by its key.

use super::{TimeSeries, WINDOWS_KEPT};
use crate::series::SeriesSelection;

/// The side panel's settings kept between runs ([`crate::Scene::saved_settings`]):
/// `windows`, the following window (seconds) of each live source by its
/// [`live_key`](TimeSeries::live_key) (at most [`super::WINDOWS_KEPT`]). Nothing of a file's
/// view is kept: a file always opens fitted, and a window chosen for one source never applies
/// to another (the `window_s` of earlier versions, one width for every source, is ignored).
impl TimeSeries {
    pub(super) fn settings_json(&self) -> serde_json::Value {
        let mut windows = self.windows.clone();
        if let Some(key) = self.live_key() {
            windows.insert(key.clone(), self.window_s);
            while windows.len() > super::WINDOWS_KEPT {
                let Some(other) = windows.keys().find(|k| **k != key).cloned() else {
                    break;
                };
                windows.remove(&other);
            }
        }
        serde_json::json!({ "windows": windows })
    }

    pub(super) fn restore_json(&mut self, saved: &serde_json::Value) -> Vec<String> {
        let mut f = crate::saved::Fields::new("timeseries", saved);
        let windows: Option<std::collections::BTreeMap<String, serde_json::Value>> =
            f.get("windows");
        for (key, w) in windows.unwrap_or_default() {
            match w.as_f64() {
                Some(w) if (1e-6..=3.2e9).contains(&w) => {
                    self.windows.insert(key, w);
                }
                _ => f.notes.push(format!(
                    "timeseries.windows.{key}: {w} is not a window in 1e-6..=3.2e9 s"
                )),
            }
        }
        if self.follow
            && let Some(w) = self.saved_window()
        {
            self.window_s = w;
        }
        f.notes
    }
}

impl TimeSeries {
    /// The key under which the following window of the source shown is kept between runs:
    /// a network source's URL, `synthetic` for the synthetic signals; `None` for files (always
    /// shown fitted), followers and `--share` windows.
    pub fn live_key(&self) -> Option<String> {
        match &self.selection {
            Some((SeriesSelection::Net(o), _)) => Some(o.url.clone()),
            Some((SeriesSelection::Synthetic { .. }, _)) => Some("synthetic".to_string()),
            _ => None,
        }
    }

    /// The window kept for the source shown ([`live_key`](Self::live_key)), if any.
    pub(super) fn saved_window(&self) -> Option<f64> {
        self.windows.get(&self.live_key()?).copied()
    }

    /// Keeps the current following window for the live source shown (at most
    /// [`WINDOWS_KEPT`] sources: another one is forgotten to make room).
    pub(super) fn remember_window(&mut self) {
        let Some(key) = self.live_key() else {
            return;
        };
        self.windows.insert(key.clone(), self.window_s);
        while self.windows.len() > WINDOWS_KEPT {
            let Some(other) = self.windows.keys().find(|k| **k != key).cloned() else {
                break;
            };
            self.windows.remove(&other);
        }
    }
}
