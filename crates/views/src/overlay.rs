//! The corner of a view the deck's stats overlay covers (F1), so that a view keeps its own
//! labels out of it, and whether the overlay is shown this frame (noted by the deck in egui's
//! context, read by the views).

/// Notes in `ctx` whether the deck draws the stats overlay over the scene this frame (its
/// corner, [`overlay_area`], is then kept clear by scenes that lay out parts of their own there:
/// the spectrogram's colour bar).
pub fn set_overlay_shown(ctx: &egui::Context, shown: bool) {
    ctx.data_mut(|d| d.insert_temp(overlay_shown_id(), shown));
}

/// Whether the deck draws the stats overlay over the scene ([`set_overlay_shown`]; until it has
/// said, no: the overlay is hidden by default).
pub fn overlay_shown(ctx: &egui::Context) -> bool {
    ctx.data(|d| d.get_temp(overlay_shown_id()))
        .unwrap_or(false)
}

fn overlay_shown_id() -> egui::Id {
    egui::Id::unique("vizdeck-stats-overlay-shown")
}

/// Where the stats overlay goes in the scene rectangle `rect` (points): 330 × 150 at the top
/// right with an 8-point margin; in a scene narrower than 346 points it is as wide as the scene
/// allows and starts 8 points from its left edge (labels first), never under the side panel.
pub fn overlay_area(rect: egui::Rect) -> egui::Rect {
    let size = egui::vec2(330.0f32.min(rect.width() - 16.0).max(0.0), 150.0);
    egui::Rect::from_min_size(
        egui::pos2(rect.right() - size.x - 8.0, rect.top() + 8.0),
        size,
    )
}

#[cfg(test)]
mod tests {
    use super::overlay_area;

    #[test]
    fn overlay_stays_inside_narrow_and_wide_scenes() {
        let wide = egui::Rect::from_min_size(egui::pos2(280.0, 20.0), egui::vec2(1000.0, 600.0));
        let a = overlay_area(wide);
        assert_eq!((a.left(), a.right(), a.top()), (942.0, 1272.0, 28.0));
        let narrow = egui::Rect::from_min_size(egui::pos2(280.0, 20.0), egui::vec2(200.0, 600.0));
        let a = overlay_area(narrow);
        assert_eq!((a.left(), a.right(), a.width()), (288.0, 472.0, 184.0));
        let tiny = egui::Rect::from_min_size(egui::pos2(280.0, 20.0), egui::vec2(10.0, 600.0));
        assert_eq!(overlay_area(tiny).width(), 0.0);
    }
}
