//! The side panel's settings kept between runs ([`crate::Scene::saved_settings`]) and
//! their restoring, checked field by field.

use super::axis::FreqScale;
use super::{COLORMAPS, FftOn, Spectrogram};
use crate::audio::stft::{self, WindowKind};

/// The side panel's settings kept between runs ([`crate::Scene::saved_settings`]):
/// `fft_size`, `hop`, `window`, `fft_on` (the flags' ids), `scale`, `db_floor`, `db_ceil`,
/// `colormap` (by name) and `spectrum_strip`.
impl Spectrogram {
    pub(super) fn settings_json(&self) -> serde_json::Value {
        let s = &self.panel.settings_ui;
        serde_json::json!({
            "fft_size": s.fft_size,
            "hop": s.hop,
            "window": s.window.name(),
            "fft_on": s.fft_on,
            "scale": self.view.scale.name(),
            "db_floor": self.view.db_floor,
            "db_ceil": self.view.db_ceil,
            "colormap": COLORMAPS[self.view.colormap].0,
            "spectrum_strip": self.view.show_spectrum,
        })
    }

    /// Applies saved settings; the analysis ones are rebuilt by the next `prepare`, as when the
    /// panel changes them.
    pub(super) fn restore_json(&mut self, saved: &serde_json::Value) -> Vec<String> {
        let mut f = crate::saved::Fields::new("spectrogram", saved);
        let power_of_two = format!(
            "a power of two in {}..={}",
            stft::MIN_ANALYSIS_FFT_SIZE,
            stft::MAX_ANALYSIS_FFT_SIZE
        );
        if let Some(n) = f.get_if::<usize>("fft_size", &power_of_two, |n| {
            n.is_power_of_two()
                && (stft::MIN_ANALYSIS_FFT_SIZE..=stft::MAX_ANALYSIS_FFT_SIZE).contains(n)
        }) {
            self.panel.settings_ui.fft_size = n;
        }
        if let Some(h) = f.get_if::<usize>("hop", "at least 1", |h| *h >= 1) {
            self.panel.settings_ui.hop = h;
        }
        self.panel.settings_ui.hop = self
            .panel
            .settings_ui
            .hop
            .clamp(1, self.panel.settings_ui.fft_size);
        if let Some(w) = f.get_if::<String>("window", "a window name", |w| {
            WindowKind::from_name(w).is_some()
        }) && let Some(w) = WindowKind::from_name(&w)
        {
            self.panel.settings_ui.window = w;
        }
        if let Some(on) = f.get_if::<String>("fft_on", "auto, gpu or cpu", |s| {
            matches!(s.as_str(), "auto" | "gpu" | "cpu")
        }) {
            self.panel.settings_ui.fft_on = match on.as_str() {
                "gpu" => FftOn::Gpu,
                "cpu" => FftOn::Cpu,
                _ => FftOn::Auto,
            };
        }
        let scales = [FreqScale::Linear, FreqScale::Log, FreqScale::Mel];
        if let Some(name) = f.get_if::<String>("scale", "linear, log or mel", |s| {
            scales.iter().any(|sc| sc.name() == s)
        }) && let Some(sc) = scales.iter().find(|sc| sc.name() == name)
        {
            self.view.scale = *sc;
        }
        if let Some(v) = f.get_if::<f32>("db_floor", "in -160..=-20 dB", |v| {
            (-160.0..=-20.0).contains(v)
        }) {
            self.view.db_floor = v;
        }
        if let Some(v) =
            f.get_if::<f32>("db_ceil", "in -60..=20 dB", |v| (-60.0..=20.0).contains(v))
        {
            self.view.db_ceil = v;
        }
        self.view.db_ceil = self.view.db_ceil.max(self.view.db_floor + 1.0);
        if let Some(name) = f.get_if::<String>("colormap", "a colormap name", |n| {
            COLORMAPS.iter().any(|(c, _)| c == n)
        }) && let Some(i) = COLORMAPS.iter().position(|(c, _)| *c == name)
            && i != self.view.colormap
        {
            self.view.colormap = i;
            self.view.lut_dirty = true;
        }
        if let Some(b) = f.get::<bool>("spectrum_strip") {
            self.view.show_spectrum = b;
        }
        f.notes
    }
}
