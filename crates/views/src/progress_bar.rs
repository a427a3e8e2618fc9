//! The progress bar a scene paints over its image while its own work runs (a file decoded or
//! indexed); the figures it shows come from [`crate::progress::Estimate`].

/// A progress bar painted over a scene image (the scene's own work, e.g. a file being decoded
/// or indexed): a box across the middle third of `rect`, 60 points below its top, the bar filled
/// to `fraction`, `text` on it.
pub(crate) fn paint_bar(painter: &egui::Painter, rect: egui::Rect, fraction: f32, text: &str) {
    let w = (rect.width() / 2.0).clamp(rect.width().min(200.0), 520.0);
    let outer = egui::Rect::from_center_size(
        egui::pos2(rect.center().x, rect.top() + 60.0 + 14.0),
        egui::vec2(w, 28.0),
    );
    painter.rect_filled(outer, 4.0, egui::Color32::from_black_alpha(200));
    painter.rect_stroke(
        outer,
        4.0,
        egui::Stroke::new(1.0, egui::Color32::from_gray(120)),
        egui::StrokeKind::Inside,
    );
    let inner = outer.shrink(3.0);
    let f = if fraction.is_finite() {
        fraction.clamp(0.0, 1.0)
    } else {
        0.0
    };
    painter.rect_filled(
        egui::Rect::from_min_size(inner.min, egui::vec2(inner.width() * f, inner.height())),
        3.0,
        egui::Color32::from_rgb(60, 110, 190),
    );
    painter.text(
        inner.center(),
        egui::Align2::CENTER_CENTER,
        text,
        egui::FontId::proportional(13.0),
        egui::Color32::WHITE,
    );
}
