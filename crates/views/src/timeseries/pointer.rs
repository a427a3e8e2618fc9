//! The interaction over the chart (`interact`): wheel zooms time around the pointer, drag pans
//! and pauses, right- or shift-drag box-zooms, double-click returns to live, Home fits all.

use super::TimeSeries;

/// The pointer over the chart.
#[derive(Default)]
pub(super) struct Pointer {
    pub(super) hover: Option<egui::Pos2>,
    /// Where the zoom box's drag started, and where it is now.
    pub(super) box_start: Option<egui::Pos2>,
    pub(super) box_end: Option<egui::Pos2>,
}

impl TimeSeries {
    /// `interact`: wheel, drags and double-click over the chart.
    pub(super) fn handle_pointer(&mut self, response: &egui::Response, rect: egui::Rect) {
        // Home fits all, unless a text field has the keyboard.
        let home = response.ctx.input(|i| i.key_pressed(egui::Key::Home));
        if home && response.ctx.memory(|m| m.focused().is_none()) {
            self.fit_all();
            return;
        }
        let Some(v) = self.drawn.view else {
            return;
        };
        let w = rect.width().max(1.0) as f64;
        let h = rect.height().max(1.0) as f64;
        let t_at = |x: f32| v.t0 + (x - rect.left()) as f64 / w * (v.t1 - v.t0);
        let y_at = |y: f32| v.hi - (y - rect.top()) as f64 / h * (v.hi - v.lo);
        self.pointer.hover = response.hover_pos();
        if response.double_clicked() {
            self.follow = true;
            self.fixed_y = None;
            self.pointer.box_start = None;
            return;
        }
        let (scroll, shift, secondary) = response.ctx.input(|i| {
            (
                i.smooth_scroll_delta,
                i.modifiers.shift,
                i.pointer.secondary_down(),
            )
        });
        let boxing = shift || secondary;
        if response.drag_started() && boxing {
            self.pointer.box_start = response.interact_pointer_pos();
        }
        if self.pointer.box_start.is_some() {
            if response.dragged() {
                self.pointer.box_end = response.interact_pointer_pos();
            }
            if response.drag_stopped() {
                if let (Some(a), Some(b)) = (self.pointer.box_start, self.pointer.box_end)
                    && (a.x - b.x).abs() > 3.0
                {
                    let (x0, x1) = (a.x.min(b.x), a.x.max(b.x));
                    self.pause_at(t_at(x0), t_at(x1));
                    if (a.y - b.y).abs() > 3.0 {
                        let (y0, y1) = (y_at(a.y.max(b.y)), y_at(a.y.min(b.y)));
                        self.fixed_y = Some((y0, y1));
                    }
                }
                self.pointer.box_start = None;
                self.pointer.box_end = None;
            }
            return;
        }
        if response.dragged() {
            let dx = response.drag_delta().x as f64;
            if dx != 0.0 {
                let dt = -dx / w * (v.t1 - v.t0);
                self.pause_at(v.t0 + dt, v.t1 + dt);
            }
        }
        if response.hovered() && scroll.y != 0.0 {
            let f = (-scroll.y as f64 * 0.003).exp().clamp(0.2, 5.0);
            let px = self.pointer.hover.map_or(rect.center().x, |p| p.x);
            let tc = t_at(px);
            let (a, b) = (tc - (tc - v.t0) * f, tc + (v.t1 - tc) * f);
            if self.follow && self.shared.is_none() {
                self.window_s = (b - a).max(1e-12);
            } else {
                self.pause_at(a, b);
            }
        }
    }

    /// Stops following and shows `[t0, t1]`; the *window (s)* field then reads its width.
    fn pause_at(&mut self, t0: f64, t1: f64) {
        if t1 > t0 && (t1 - t0) > 1e-15 * t0.abs().max(1.0) {
            self.follow = false;
            self.paused_range = (t0, t1);
            self.window_s = t1 - t0;
        }
    }
}
