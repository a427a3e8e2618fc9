//! The point-cloud scene's egui side: the side panel (source, progress, budget, colours and the
//! class legend, point radius, eye-dome lighting, views), the pointer and keys over the image
//! (orbit, pan, zoom to the pointer, fly, presets, fit, pivot on a double-clicked point), and
//! the overlay (the hover readout, loading state).

use super::{Phase, PointCloud, Readout};
use crate::pointcloud::raster::{ColorMode, MAX_RADIUS};
use vizdeck_pointcloud::camera::ViewPreset;

/// The pointer's and keys' state over the image: the hovered pixel and its readout, a pivot
/// asked for by a double-click, the fly keys held.
pub(super) struct Pointer {
    /// Pixel under the pointer (scene pixels).
    pub(super) hover_pixel: Option<(u32, u32)>,
    pub(super) hover: Option<Readout>,
    /// A double-click asked to move the pivot to the next readout.
    pub(super) pivot_on_readout: bool,
    /// Keys held for fly mode this frame: (right, forward, up), −1 … 1.
    pub(super) fly: [f64; 3],
}

/// Digits after the decimal point that show a coordinate of resolution `scale` exactly.
pub(crate) fn decimals_for(scale: f64) -> usize {
    if !(scale.is_finite() && scale > 0.0) {
        return 3;
    }
    (-scale.log10() - 1e-9).ceil().clamp(0.0, 9.0) as usize
}

/// The readout as lines of text, coordinates printed to the file's resolution `scale`.
pub(crate) fn readout_lines(r: &Readout, scale: [f64; 3]) -> Vec<String> {
    let c = |k: usize| format!("{:.*}", decimals_for(scale[k]), r.xyz[k]);
    let class = super::legend::class_name(r.class);
    let mut lines = vec![
        format!("x {}  y {}  z {}", c(0), c(1), c(2)),
        format!(
            "class {} ({class})  intensity {}  return {}",
            r.class, r.intensity, r.return_number
        ),
    ];
    if let Some(t) = r.gps_time {
        lines.push(format!("GPS time {t:.6}"));
    }
    lines.push(format!("node {}", r.node));
    lines
}

pub(super) fn side_panel(s: &mut PointCloud, ui: &mut egui::Ui) {
    ui.heading("Point cloud");
    match &s.phase {
        Phase::Indexing {
            progress, started, ..
        } => {
            ui.label(
                "indexing the file (decoding every point, then the octree, cached for next time)…",
            );
            let (e, text) = progress.describe(started.elapsed().as_secs_f64());
            ui.add(egui::ProgressBar::new(e.fraction as f32).show_percentage());
            ui.label(text);
        }
        Phase::Waiting => {
            ui.label("following: waiting for the publisher's keyframe (its cloud and view)");
        }
        Phase::Failed(e) => {
            ui.colored_label(egui::Color32::LIGHT_RED, e);
        }
        Phase::Ready(st) => {
            let info = st.source.info();
            ui.label(format!("{} ({})", info.name, info.kind));
            let h = st.source.hierarchy();
            ui.label(format!(
                "{} points in {} nodes, depth {}",
                h.total_points(),
                h.nodes.len(),
                h.depth()
            ));
            if let Some(c) = &st.cache {
                ui.label(if c.hit {
                    "octree from the cache"
                } else {
                    "octree built and cached"
                })
                .on_hover_text(c.path.display().to_string());
                let path = c.path.clone();
                s.cache_panel.ui(ui, Some(&path));
            }
            if let Some(w) = &info.warning {
                ui.colored_label(egui::Color32::YELLOW, w);
            }
            if let Some(e) = &st.first_error {
                ui.colored_label(
                    egui::Color32::YELLOW,
                    format!("{} node(s) failed: {e}", st.load_errors),
                );
            }
            if s.share.following {
                ui.label("following: the publisher's cloud, camera and view");
            }
        }
    }
    ui.separator();
    ui.horizontal(|ui| {
        ui.label("point budget");
        let mut b = s.budgets.budget;
        if ui
            .add(
                egui::DragValue::new(&mut b)
                    .range(10_000..=1_000_000_000)
                    .speed(10_000),
            )
            .on_hover_text(
                "most points drawn a frame (default from the adapter: 500,000 on a CPU \
                 adapter, 10,000,000 on a GPU); the nearest, largest nodes first",
            )
            .changed()
        {
            s.budgets.budget = b.max(1);
        }
    });
    ui.label(format!(
        "drawn {} points in {} nodes (depth {}){}",
        s.selection.points,
        s.selection.draw.len(),
        s.selection.depth,
        if s.selection.budget_hit {
            ", budget reached"
        } else {
            ""
        }
    ));
    ui.label(format!("rasterizer: {}", s.renderer.raster.path().name()))
        .on_hover_text(
            "compute-64bit-atomic: one pass (64-bit atomics); compute-32bit-two-pass: depth, then \
             id (adapters without 64-bit atomics); the same image",
        );
    ui.label(format!(
        "resident {} points in {} nodes, {:.1} MiB on the GPU; evicted {}",
        s.renderer.pool.points_resident(),
        s.renderer.pool.len(),
        s.renderer.gpu_bytes() as f64 / (1 << 20) as f64,
        s.renderer.pool.evicted
    ));
    ui.label(format!(
        "drawn quantized {} points, exact {} ({} nodes)",
        s.renderer.pool.batched_points(),
        s.renderer.exact.batched_points(),
        s.renderer.exact.len()
    ))
    .on_hover_text(
        "quantized: 4 bytes a point, 10-bit cells of boxes of up to 1024 points; a node whose \
         cells would span more than 1/16 pixel on screen (close to the eye, or points far apart \
         on screen) is drawn from its exact f32 copy (16 bytes a point)",
    );
    if let Some(st) = s.stream() {
        let loading = s.selection.wanted.len() + st.loader.busy() + s.uploads_waiting;
        if loading > 0 {
            ui.label(format!("loading {loading} node(s)…"));
        }
        if st.decode_seconds > 0.0 {
            ui.label(format!(
                "decoded {:.2} M points/s per loader thread ({} threads)",
                st.decoded_points as f64 / st.decode_seconds / 1e6,
                st.loader.threads()
            ));
        }
    }
    ui.separator();
    egui::ComboBox::from_label("colour")
        .selected_text(s.style.color.name())
        .show_ui(ui, |ui| {
            for m in ColorMode::ALL {
                ui.selectable_value(&mut s.style.color, m, m.name());
            }
        });
    if let Some(n) = &s.style.color_notice {
        ui.colored_label(egui::Color32::YELLOW, n.as_str());
    }
    if s.style.color == ColorMode::Classification {
        super::legend::class_legend(s, ui);
    }
    ui.add(egui::Slider::new(&mut s.style.radius, 0..=MAX_RADIUS).text("point radius (px)"));
    let mut edl = s.style.edl > 0.0;
    if ui
        .checkbox(&mut edl, "eye-dome lighting")
        .on_hover_text("darkens points whose neighbours on screen are nearer: depth at a glance")
        .changed()
    {
        s.style.edl = if edl { 1.0 } else { 0.0 };
    }
    if edl {
        ui.add(egui::Slider::new(&mut s.style.edl, 0.05..=4.0).text("strength"));
    }
    ui.separator();
    ui.horizontal(|ui| {
        for (name, preset) in [
            ("top", ViewPreset::Top),
            ("front", ViewPreset::Front),
            ("side", ViewPreset::Side),
            ("iso", ViewPreset::Iso),
        ] {
            if ui.button(name).clicked() {
                set_preset(s, preset);
            }
        }
    });
    ui.horizontal(|ui| {
        if let Some(c) = &mut s.camera {
            ui.checkbox(&mut c.ortho, "orthographic");
        }
        if ui.button("fit (Home)").clicked() {
            fit(s);
        }
    });
    ui.small(
        "drag: orbit · right/middle or shift-drag: pan · wheel: zoom to pointer · \
         double-click: pivot on the point · WASD/QE: fly · T F S I: views",
    );
}

fn set_preset(s: &mut PointCloud, preset: ViewPreset) {
    s.fit_view(Some(preset));
}

fn fit(s: &mut PointCloud) {
    s.fit_view(None);
}

pub(super) fn interact(s: &mut PointCloud, response: &egui::Response, rect: egui::Rect) {
    let (w, h) = s.size;
    let to_pixel = |p: egui::Pos2| -> Option<(f64, f64)> {
        (rect.width() > 0.0 && rect.height() > 0.0).then(|| {
            (
                f64::from((p.x - rect.min.x) / rect.width()) * f64::from(w),
                f64::from((p.y - rect.min.y) / rect.height()) * f64::from(h),
            )
        })
    };
    let pointer = response.hover_pos().and_then(to_pixel);
    s.pointer.hover_pixel = s.settings.probe.or_else(|| {
        pointer.and_then(|(x, y)| {
            (x >= 0.0 && y >= 0.0 && x < f64::from(w) && y < f64::from(h))
                .then_some((x as u32, y as u32))
        })
    });
    if pointer.is_none() && s.settings.probe.is_none() {
        s.pointer.hover = None;
    }
    let Some(camera) = &mut s.camera else {
        return;
    };
    let px_per_point = if rect.height() > 0.0 {
        f64::from(h) / f64::from(rect.height())
    } else {
        1.0
    };
    let (shift, scroll, keys, presses) = response.ctx.input(|i| {
        let k = |key| i.key_down(key);
        (
            i.modifiers.shift,
            i.smooth_scroll_delta.y,
            [
                f64::from(k(egui::Key::D)) - f64::from(k(egui::Key::A)),
                f64::from(k(egui::Key::W)) - f64::from(k(egui::Key::S)),
                f64::from(k(egui::Key::E)) - f64::from(k(egui::Key::Q)),
            ],
            [
                i.key_pressed(egui::Key::Home),
                i.key_pressed(egui::Key::T),
                i.key_pressed(egui::Key::F),
                i.key_pressed(egui::Key::S) && i.modifiers.shift,
                i.key_pressed(egui::Key::I),
            ],
        )
    });
    let typing = response.ctx.memory(|m| m.focused().is_some());
    let d = response.drag_delta();
    let (dx, dy) = (f64::from(d.x) * px_per_point, f64::from(d.y) * px_per_point);
    if response.dragged_by(egui::PointerButton::Primary) && !shift {
        camera.orbit(dx, dy);
    } else if response.dragged_by(egui::PointerButton::Secondary)
        || response.dragged_by(egui::PointerButton::Middle)
        || (response.dragged_by(egui::PointerButton::Primary) && shift)
    {
        camera.pan(dx, dy, h);
    }
    if response.hovered() && scroll != 0.0 {
        let factor = (-f64::from(scroll) * 0.002).exp();
        let toward = match (pointer, &s.view) {
            (Some((x, y)), Some(v)) => {
                // The point under the pointer at the pivot's depth.
                let (origin, dir) = v.ray(x, y);
                let forward = -camera.back();
                let t = (camera.pivot - origin).dot(forward) / dir.dot(forward).max(1e-9);
                origin + dir * t
            }
            _ => camera.pivot,
        };
        camera.zoom_to(factor, toward);
    }
    if response.double_clicked() {
        s.pointer.pivot_on_readout = true;
    }
    s.pointer.fly = if response.hovered() && !typing {
        keys
    } else {
        [0.0; 3]
    };
    if typing || !response.hovered() {
        return;
    }
    let [home, top, front, side, iso] = presses;
    if home {
        fit(s);
    }
    for (pressed, preset) in [
        (top, ViewPreset::Top),
        (front, ViewPreset::Front),
        (side, ViewPreset::Side),
        (iso, ViewPreset::Iso),
    ] {
        if pressed {
            set_preset(s, preset);
        }
    }
}

pub(super) fn overlay(s: &PointCloud, painter: &egui::Painter, rect: egui::Rect) {
    if matches!(s.phase, Phase::Ready(_)) {
        super::legend::paint_scale_bar(s, painter, rect);
        super::legend::paint_elevation_legend(s, painter, rect);
    }
    let font = egui::FontId::monospace(12.0);
    if let (Some(r), Some(st)) = (&s.pointer.hover, s.stream()) {
        let lines = readout_lines(r, st.source.info().scale);
        let text = lines.join("\n");
        let pos = rect.left_bottom() + egui::vec2(8.0, -8.0);
        let galley = painter.layout_no_wrap(text, font.clone(), egui::Color32::WHITE);
        let bg = egui::Rect::from_min_size(
            pos - egui::vec2(4.0, galley.size().y + 4.0),
            galley.size() + egui::vec2(8.0, 8.0),
        );
        painter.rect_filled(bg, 3.0, egui::Color32::from_black_alpha(180));
        painter.galley(bg.min + egui::vec2(4.0, 4.0), galley, egui::Color32::WHITE);
    }
    if let Phase::Indexing {
        progress, started, ..
    } = &s.phase
    {
        let (e, text) = progress.describe(started.elapsed().as_secs_f64());
        crate::progress_bar::paint_bar(
            painter,
            rect,
            e.fraction as f32,
            &format!("opening: {text}"),
        );
    }
    let status = match &s.phase {
        Phase::Ready(_) if s.loading() => Some("loading nodes…".to_string()),
        _ => None,
    };
    if let Some(t) = status {
        painter.text(
            rect.center_top() + egui::vec2(0.0, 8.0),
            egui::Align2::CENTER_TOP,
            t,
            font,
            egui::Color32::LIGHT_YELLOW,
        );
    }
}

/// The side panel's settings kept between runs ([`crate::Scene::saved_settings`]):
/// `pointcloud_budget` (only when it is not the adapter's default, so a budget chosen on one
/// machine is not forced onto another by default), `point_radius` and `edl` (the flags' ids).
/// The colour mode is not kept: its default depends on the cloud (RGB where it has colour).
impl PointCloud {
    pub(super) fn settings_json(&self) -> serde_json::Value {
        serde_json::json!({
            "pointcloud_budget": (self.budgets.budget != self.budgets.default_budget).then_some(self.budgets.budget),
            "point_radius": self.style.radius,
            "edl": self.style.edl,
        })
    }

    pub(super) fn restore_json(&mut self, saved: &serde_json::Value) -> Vec<String> {
        let mut f = crate::saved::Fields::new("pointcloud", saved);
        if let Some(b) = f.get_if::<u64>("pointcloud_budget", "in 10000..=1000000000", |b| {
            (10_000..=1_000_000_000).contains(b)
        }) {
            self.budgets.budget = b;
        }
        if let Some(r) = f.get_if::<u32>("point_radius", "in 0..=3", |r| *r <= MAX_RADIUS) {
            self.style.radius = r;
        }
        if let Some(e) = f.get_if::<f32>("edl", "in 0..=4", |e| (0.0..=4.0).contains(e)) {
            self.style.edl = e;
        }
        f.notes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_follow_the_scale() {
        assert_eq!(decimals_for(0.001), 3);
        assert_eq!(decimals_for(0.01), 2);
        assert_eq!(decimals_for(1.0), 0);
        assert_eq!(decimals_for(0.0025), 3);
        assert_eq!(decimals_for(1e-7), 7);
    }
}
