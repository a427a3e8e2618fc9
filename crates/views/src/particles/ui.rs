//! The side panel (simulation, forces, emitter, flocking, statistics, view) and the pointer
//! and keyboard input on the scene (orbit, zoom, mouse force, pause).

use glam::Vec2;

use super::render::{self, Camera, ColorBy};
use super::sim::{Mode, max_count};
use super::{Particles, StepRate};

/// Counts offered in the side panel.
pub const PRESET_COUNTS: [u32; 6] = [16_384, 65_536, 262_144, 1_048_576, 4_194_304, 16_777_216];

/// The side panel's inputs: the count and mode being edited, and the rebuild asked for (by the
/// panel's *apply* or restored settings).
pub(super) struct PanelInputs {
    /// Requested (count, mode) to rebuild with at the next prepare.
    pub(super) rebuild: Option<(u32, Mode)>,
    /// The count field.
    pub(super) count_input: u32,
    /// The mode field.
    pub(super) mode_input: Mode,
}

impl Particles {
    /// Input on the scene ([`Scene::interact`](crate::Scene::interact)): Space pauses,
    /// a left drag orbits, the wheel zooms, a right drag pulls (shift: pushes).
    pub(super) fn pointer_input(&mut self, response: &egui::Response, rect: egui::Rect) {
        let space = response.ctx.input(|i| i.key_pressed(egui::Key::Space));
        if space && response.ctx.memory(|m| m.focused().is_none()) {
            self.paused = !self.paused;
        }
        if response.dragged_by(egui::PointerButton::Primary) {
            let d = response.drag_delta();
            self.camera.orbit(Vec2::new(d.x, d.y));
            self.auto_rotate = false;
        }
        let (scroll, secondary, shift) = response.ctx.input(|i| {
            (
                i.smooth_scroll_delta.y,
                i.pointer.secondary_down(),
                i.modifiers.shift,
            )
        });
        if response.hovered() && scroll != 0.0 {
            self.camera.zoom(scroll);
        }
        self.mouse = None;
        if secondary
            && let Some(pos) = response.hover_pos()
            && rect.width() > 0.0
            && rect.height() > 0.0
        {
            let ndc = Vec2::new(
                (pos.x - rect.min.x) / rect.width() * 2.0 - 1.0,
                1.0 - (pos.y - rect.min.y) / rect.height() * 2.0,
            );
            if let Some(p) = self.camera.unproject(ndc, rect.width() / rect.height()) {
                let s = self.controls.mouse_strength;
                self.mouse = Some((p, if shift { -s } else { s }));
            }
        }
    }

    /// The side panel ([`Scene::ui`](crate::Scene::ui)).
    pub(super) fn panel_ui(&mut self, ui: &mut egui::Ui) {
        ui.heading("Particles");
        ui.label(format!(
            "{} particles, {} mode, seed {}",
            self.count(),
            self.mode.name(),
            self.seed
        ));
        ui.label(format!(
            "steps: {}   sim time: {:.2} s",
            self.sim.steps_total(),
            self.sim_time
        ));
        if let Some(input) = &self.shared {
            ui.label("drawing a producer's particles (--share): no simulation");
            let s = input.status();
            ui.label(format!(
                "producers: {}   frames complete: {}",
                s.producers, s.frames_complete
            ));
            if let Some(n) = input.notice() {
                ui.colored_label(egui::Color32::YELLOW, n);
            }
        } else if self.share.following {
            ui.label("following a publisher: its count, mode, forces and steps");
            if let Some(n) = &self.share.notice {
                ui.colored_label(egui::Color32::YELLOW, n);
            }
        }
        if self.shared.is_some() || self.share.following {
            // The particles come from elsewhere: no simulation controls.
            ui.separator();
            ui.strong("statistics (GPU)");
            self.stats_ui(ui);
            self.view_ui(ui);
            return;
        }
        ui.checkbox(&mut self.paused, "paused (Space)")
            .on_hover_text("no steps while paused; the window then draws only on input");
        if let Some(m) = &self.message {
            ui.colored_label(egui::Color32::YELLOW, m);
        }
        ui.separator();
        egui::ComboBox::from_label("mode")
            .selected_text(self.panel.mode_input.name())
            .show_ui(ui, |ui| {
                for m in Mode::ALL {
                    ui.selectable_value(&mut self.panel.mode_input, m, m.name());
                }
            });
        ui.horizontal(|ui| {
            ui.label("count");
            ui.add(egui::DragValue::new(&mut self.panel.count_input).speed(1000.0));
        });
        ui.horizontal_wrapped(|ui| {
            for c in PRESET_COUNTS {
                let label = if c >= 1 << 20 {
                    format!("{}M", c >> 20)
                } else {
                    format!("{}k", c >> 10)
                };
                if ui.small_button(label).clicked() {
                    self.panel.count_input = c;
                }
            }
        });
        let max = max_count(&self.limits, self.panel.mode_input);
        if self.panel.count_input > max {
            ui.colored_label(
                egui::Color32::YELLOW,
                format!("adapter limit in this mode: {max} (will clamp)"),
            );
        }
        if self.panel.mode_input == Mode::Brute && self.panel.count_input > 65_536 {
            ui.colored_label(egui::Color32::YELLOW, "brute force is O(N²): slow");
        }
        if ui.button("apply (restarts)").clicked() {
            self.request_reconfigure(self.panel.count_input, self.panel.mode_input);
        }
        ui.separator();
        ui.strong("statistics (GPU)");
        self.stats_ui(ui);
        ui.separator();
        ui.strong("forces");
        let c = &mut self.controls;
        ui.checkbox(&mut c.attractors, "attractors");
        ui.add(egui::Slider::new(&mut c.gravity, -2.0..=2.0).text("gravity"));
        ui.add(egui::Slider::new(&mut c.drag, 0.0..=2.0).text("drag (1/s)"));
        ui.add(egui::Slider::new(&mut c.curl_strength, 0.0..=2.0).text("curl noise"));
        ui.add(egui::Slider::new(&mut c.curl_frequency, 0.1..=10.0).text("curl frequency"));
        ui.add(
            egui::Slider::new(&mut c.mouse_strength, 0.0..=1.0)
                .text("mouse (right drag; shift repels)"),
        );
        ui.strong("emitter");
        ui.add(
            egui::Slider::new(&mut c.emit_rate, 0.0..=1.0e6)
                .logarithmic(true)
                .text("rate (/s)"),
        );
        ui.add(egui::Slider::new(&mut c.lifetime, 0.0..=60.0).text("lifetime (s)"));
        ui.add(egui::Slider::new(&mut c.emit_speed, 0.0..=3.0).text("speed"));
        ui.add(egui::Slider::new(&mut c.emit_spread, 0.0..=2.0).text("spread"));
        ui.horizontal(|ui| {
            ui.add(egui::DragValue::new(&mut c.burst).speed(100.0));
            if ui.button("burst").clicked() {
                self.inputs.burst_pending = self.inputs.burst_pending.saturating_add(c.burst);
            }
        });
        if self.mode != Mode::Free {
            ui.strong("flocking");
            ui.add(egui::Slider::new(&mut c.cohesion, 0.0..=10.0).text("cohesion"));
            ui.add(egui::Slider::new(&mut c.alignment, 0.0..=10.0).text("alignment"));
            ui.add(egui::Slider::new(&mut c.separation, 0.0..=10.0).text("separation"));
            let cell = self.sim.consts().origin[3];
            ui.add(egui::Slider::new(&mut c.radius, 0.001..=cell).text("radius"));
        }
        ui.add(egui::Slider::new(&mut c.max_speed, 0.1..=10.0).text("speed cap"));
        self.view_ui(ui);
    }

    fn stats_ui(&self, ui: &mut egui::Ui) {
        match self.sim.latest_stats() {
            Some(s) => {
                ui.label(format!("kinetic energy: {:.4}", s.kinetic_energy));
                ui.label(format!("mean speed: {:.4}", s.mean_speed));
                ui.label(format!("live: {}", s.live));
                if self.mode != Mode::Free {
                    ui.label(format!(
                        "neighbours: mean {:.2}, max {}",
                        s.mean_neighbours, s.max_neighbours
                    ));
                    let max = s.histogram.iter().copied().max().unwrap_or(1).max(1);
                    for (b, &h) in s.histogram.iter().enumerate() {
                        if h == 0 {
                            continue;
                        }
                        let range = match b {
                            0 => "0".to_string(),
                            15 => "≥16384".to_string(),
                            _ => format!("{}–{}", 1u32 << (b - 1), (1u32 << b) - 1),
                        };
                        let bar = "█".repeat((h as f64 / max as f64 * 20.0).ceil() as usize);
                        ui.monospace(format!("{range:>11} {bar} {h}"));
                    }
                }
                ui.label(format!("(step {})", s.step));
                if self.sim.stats_every() > 1 {
                    ui.small(format!(
                        "every {}th frame here: a CPU adapter runs the reduction on the CPU",
                        self.sim.stats_every()
                    ));
                }
            }
            None => {
                ui.label("statistics: …");
            }
        }
    }

    /// The side panel's view section (colours, sprites, draw style, rate, camera).
    fn view_ui(&mut self, ui: &mut egui::Ui) {
        ui.separator();
        ui.strong("view");
        egui::ComboBox::from_label("colour by")
            .selected_text(format!("{:?}", self.color_by))
            .show_ui(ui, |ui| {
                ui.selectable_value(&mut self.color_by, ColorBy::Speed, "Speed");
                ui.selectable_value(&mut self.color_by, ColorBy::Density, "Density");
                ui.selectable_value(&mut self.color_by, ColorBy::Age, "Age");
            });
        ui.add(
            egui::Slider::new(&mut self.sprite_size, 0.0005..=0.05)
                .logarithmic(true)
                .text("sprite size"),
        );
        ui.horizontal(|ui| {
            ui.label("draw");
            use render::Style;
            let s = &mut self.renderer.style;
            ui.selectable_value(s, Style::Auto, "auto");
            ui.selectable_value(s, Style::Sprites, "sprites");
            ui.selectable_value(s, Style::Splat, "points");
            ui.selectable_value(s, Style::Opaque, "opaque");
        })
        .response
        .on_hover_text(if self.renderer.splat_from == 0 {
            "auto: one-pixel points accumulated by a compute pass (this is a CPU adapter: sprites cost fill rate)"
        } else {
            "auto: sprites below 1,048,576 particles, one-pixel points accumulated by a compute pass from there on"
        });
        if self.renderer.style == render::Style::Auto && self.renderer.splat_from == 0 {
            ui.small("auto draws points here: a CPU adapter (software rasterizer)");
        }
        ui.horizontal(|ui| {
            ui.label("rate");
            let mut r = self.clock.step_rate;
            ui.selectable_value(&mut r, StepRate::Auto, "auto");
            ui.selectable_value(&mut r, StepRate::Hz120, "120 Hz");
            ui.selectable_value(&mut r, StepRate::Hz60, "60 Hz");
            if r != self.clock.step_rate {
                self.set_step_rate(r);
            }
        })
        .response
        .on_hover_text(
            "simulation steps per second; the picture is interpolated between the last two steps",
        );
        if self.clock.step_rate == StepRate::Auto && self.clock.cpu_adapter {
            ui.small(
                "auto steps at 60 Hz here (a CPU adapter runs each step on the CPU), one a frame \
                 while frames take over 33 ms: slow motion rather than slower frames",
            );
        }
        ui.checkbox(&mut self.auto_rotate, "auto-rotate");
        if ui.button("reset camera").clicked() {
            self.camera = Camera::default();
        }
        ui.label("left drag: orbit · wheel: zoom");
    }
}
