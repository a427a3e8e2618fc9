//! The particle scene's settings kept between runs ([`crate::Scene::saved_settings`]):
//! `particles` (count), `particle_mode`, `particle_rate` (the flags' ids), `controls` (forces,
//! emitter, flocking: [`super::Controls`]' fields), `color_by`, `sprite_size`, `draw` and
//! `auto_rotate`.

use super::Particles;
use super::sim::Mode;
use crate::saved::{Fields, enum_name};

impl Particles {
    pub(super) fn settings_json(&self) -> serde_json::Value {
        serde_json::json!({
            "particles": self.count(),
            "particle_mode": enum_name(&self.mode),
            "particle_rate": enum_name(&self.clock.step_rate),
            "controls": self.controls,
            "color_by": self.color_by,
            "sprite_size": self.sprite_size,
            "draw": self.renderer.style,
            "auto_rotate": self.auto_rotate,
        })
    }

    /// Applies saved settings; a count or mode other than the running one rebuilds the
    /// simulation at the next `prepare`, as the panel's *apply* does.
    pub(super) fn restore_json(&mut self, saved: &serde_json::Value) -> Vec<String> {
        let mut f = Fields::new("particles", saved);
        let count = f
            .get_if::<u32>("particles", "at least 1", |n| *n >= 1)
            .unwrap_or(self.count());
        let mode = f.value_enum::<Mode>("particle_mode").unwrap_or(self.mode);
        if count != self.count() || mode != self.mode {
            self.panel.count_input = count;
            self.panel.mode_input = mode;
            self.request_reconfigure(count, mode);
        }
        if let Some(r) = f.value_enum("particle_rate")
            && r != self.clock.step_rate
        {
            self.set_step_rate(r);
        }
        if let Some(c) = f.merge("controls", &self.controls) {
            self.controls = c;
        }
        if let Some(c) = f.get("color_by") {
            self.color_by = c;
        }
        if let Some(s) = f.get_if::<f32>("sprite_size", "in 0.0005..=0.05", |s| {
            (0.0005..=0.05).contains(s)
        }) {
            self.sprite_size = s;
        }
        if let Some(s) = f.get("draw") {
            self.renderer.style = s;
        }
        if let Some(a) = f.get("auto_rotate") {
            self.auto_rotate = a;
        }
        f.notes
    }
}
