//! The deck's egui layout: keys, the menu bar (`menu.rs`), the scene's side panel,
//! the scene image with its overlays, notices and toasts; and [`Deck::apply`], which carries out
//! the [`UiCommand`]s the UI collected, once, right after it.

use super::{Deck, SceneSlot};
use crate::gpu::Gpu;
use crate::scene::SCENES;
use crate::ui::UiCommand;

impl Deck {
    /// Carries out one thing the UI asked for (see [`UiCommand`]); called once per command,
    /// in order, right after the UI of the frame.
    pub fn apply(&mut self, gpu: &Gpu, command: UiCommand) {
        match command {
            UiCommand::SwitchScene(i) => {
                self.user_switched(i);
                self.switch_to(i);
            }
            UiCommand::SetOverlay(on) => self.overlay = on,
            UiCommand::SavePng(kind) => self.request_png(kind),
            UiCommand::ToggleVideo => self.toggle_video(),
            UiCommand::ResetStats => self.reset_stats(),
            UiCommand::OpenCompare => self.open_compare(),
            UiCommand::SetUploadStrategy(s) => self.set_upload_strategy(s),
            UiCommand::ToggleRecording => {
                if self.files.recording.is_some() {
                    self.stop_recording(gpu);
                } else if self.capture.start_at.take().is_some() {
                    self.toast("delayed capture cancelled".into());
                } else {
                    self.arm_capture();
                }
            }
            UiCommand::ArmCapture => self.arm_capture(),
            UiCommand::OpenTypedPath => {
                let path = std::path::PathBuf::from(self.ui_state.open_path.trim());
                self.open_file(gpu, path);
            }
            UiCommand::OpenDialog => self.show_open_dialog(),
            UiCommand::OpenRecent(i) => {
                if let Some(path) = self.recent_files().get(i).cloned() {
                    self.open_file(gpu, path);
                }
            }
            UiCommand::ResetSettings => self.reset_settings(),
            UiCommand::Quit => self.quit = true,
        }
    }

    /// The whole UI; returns the rect (points) the scene image occupies. What the menus and keys
    /// ask for is pushed onto `commands`.
    pub(super) fn ui(
        &mut self,
        ui: &mut egui::Ui,
        tex_id: Option<egui::TextureId>,
        commands: &mut Vec<UiCommand>,
    ) -> egui::Rect {
        // Before the scene's panel and overlay, which keep the overlay's corner clear.
        crate::ui::set_overlay_shown(ui.ctx(), self.overlay && !self.drawing_scene_png());
        self.keys(ui, commands);
        super::menu::menu_bar(self, ui, commands);
        let active = self.active;
        let scroll = egui::Panel::left("scene-controls")
            .resizable(true)
            .default_size(270.0)
            .show(ui, |ui| {
                // A panel taller than the window scrolls (wheel, drag on the bar): its bar is
                // drawn beside the controls whenever there is more below (egui's default bar
                // stays hidden until hovered, so nothing told that the last rows exist). Each
                // scene keeps its own scroll position.
                ui.spacing_mut().scroll = egui::style::ScrollStyle::solid();
                egui::ScrollArea::vertical()
                    .id_salt(("scene-controls", active))
                    .auto_shrink([false, false])
                    // Always laid out: a bar that came and went would change the panel's width,
                    // and the scene's, from one frame to the next.
                    .scroll_bar_visibility(egui::scroll_area::ScrollBarVisibility::AlwaysVisible)
                    .show(ui, |ui| {
                        self.share_ui(ui);
                        match &mut self.slots[active] {
                            SceneSlot::Ready(scene) => scene.ui(ui),
                            SceneSlot::Failed(msg) => {
                                ui.heading(SCENES[active].title);
                                ui.colored_label(
                                    egui::Color32::LIGHT_RED,
                                    "This scene could not start:",
                                );
                                ui.colored_label(egui::Color32::LIGHT_RED, msg.as_str());
                            }
                            SceneSlot::NotCreated => {
                                ui.label("starting…");
                            }
                        }
                    })
            })
            .inner;
        self.ui_state.panel_scroll = Some(super::PanelScroll {
            content_height: scroll.content_size.y,
            viewport_height: scroll.inner_rect.height(),
            offset: scroll.state.clamped_offset().y,
        });
        let mut rect = egui::Rect::NOTHING;
        egui::CentralPanel::default()
            .frame(egui::Frame::NONE)
            .show(ui, |ui| {
                // The scene's area; the image fills the scene's plot rect inside it (margins
                // for a chart's axis labels), which is the scene texture's size.
                let area = ui.available_rect_before_wrap();
                self.ui_state.scene_area = area;
                rect = match &self.slots[active] {
                    SceneSlot::Ready(scene) => {
                        let plot = scene.plot_rect(ui.ctx(), area).intersect(area);
                        if plot.width() >= 1.0 && plot.height() >= 1.0 {
                            plot
                        } else {
                            area
                        }
                    }
                    _ => area,
                };
                let response = ui.interact(
                    area,
                    ui.scope_id().with(("scene-image", active)),
                    egui::Sense::click_and_drag(),
                );
                if let SceneSlot::Ready(scene) = &mut self.slots[active] {
                    scene.interact(&response, rect);
                }
                let painter = ui.painter_at(area);
                match &self.slots[active] {
                    SceneSlot::Ready(scene) => {
                        if let Some(id) = tex_id {
                            painter.image(
                                id,
                                rect,
                                egui::Rect::from_min_max(
                                    egui::pos2(0.0, 0.0),
                                    egui::pos2(1.0, 1.0),
                                ),
                                egui::Color32::WHITE,
                            );
                        }
                        scene.overlay(&painter, rect);
                        if let Some(p) = scene.problem().or_else(|| self.share_notice()) {
                            let overlay = (self.overlay && !self.drawing_scene_png())
                                .then(|| crate::ui::overlay_area(area));
                            problem_text(&painter, area, overlay, p);
                        }
                    }
                    SceneSlot::Failed(msg) => {
                        painter.text(
                            area.center(),
                            egui::Align2::CENTER_CENTER,
                            format!("{} could not start:\n{msg}", SCENES[active].title),
                            egui::FontId::proportional(16.0),
                            egui::Color32::LIGHT_RED,
                        );
                    }
                    SceneSlot::NotCreated => {}
                }
                // A frame drawn for a PNG of the scene leaves out vizdeck's own overlay and toast.
                let chrome = !self.drawing_scene_png();
                if self.overlay && chrome {
                    super::stats_overlay::stats_overlay(self, &painter, area);
                }
                if let Some((msg, at)) = &self.ui_state.toast
                    && chrome
                    && at.elapsed().as_secs_f32() < super::TOAST_S
                {
                    // Wrapped to the scene's width, on its own dark box: a long path stays
                    // whole and readable over whatever the scene draws there.
                    let galley = painter.layout(
                        msg.clone(),
                        egui::FontId::proportional(14.0),
                        egui::Color32::LIGHT_GREEN,
                        toast_wrap_width(area),
                    );
                    let at = toast_rect(area, galley.size());
                    painter.rect_filled(at.expand(6.0), 4.0, egui::Color32::from_black_alpha(210));
                    painter.galley(at.min, galley, egui::Color32::LIGHT_GREEN);
                }
            });
        rect
    }

    /// The deck-wide shortcuts of this frame's key events, from the one table the help lists
    /// ([`crate::ui::keys::SHORTCUTS`]); none while a widget has the keyboard.
    pub(super) fn keys(&self, ui: &mut egui::Ui, commands: &mut Vec<UiCommand>) {
        if ui.memory(|m| m.focused().is_some()) {
            return; // typing into a widget
        }
        ui.input(|i| crate::ui::keys::commands(&i.events, self.overlay, commands));
    }
}

/// The width a toast's text wraps at in a scene rect (points): the scene's width less margins.
pub fn toast_wrap_width(scene: egui::Rect) -> f32 {
    (scene.width() - 40.0).max(40.0)
}

/// Where a toast of `size` (points, wrapped at [`toast_wrap_width`]) goes in the scene rect:
/// centred, its bottom 30 points above the scene's bottom, kept inside the scene.
pub fn toast_rect(scene: egui::Rect, size: egui::Vec2) -> egui::Rect {
    let r = egui::Rect::from_center_size(
        egui::pos2(scene.center().x, scene.bottom() - 30.0 - size.y / 2.0),
        size,
    );
    let dx = (scene.left() + 8.0 - r.left()).max(0.0) - (r.right() - scene.right() + 8.0).max(0.0);
    let dy = (scene.top() + 8.0 - r.top()).max(0.0);
    r.translate(egui::vec2(dx, dy))
}

/// A scene's problem (one or more lines, light red) over its image `rect`: wrapped to the width
/// left of the stats overlay (`overlay`, when shown) and centred there, 30 points from the top;
/// below the overlay, across the scene, when less than 240 points are left beside it.
fn problem_text(
    painter: &egui::Painter,
    rect: egui::Rect,
    overlay: Option<egui::Rect>,
    text: String,
) {
    let margin = 12.0;
    let (left, right, top) = match overlay {
        Some(o) if o.left() - rect.left() >= 240.0 + 2.0 * margin => {
            (rect.left(), o.left(), rect.top() + 30.0)
        }
        Some(o) => (rect.left(), rect.right(), o.bottom() + 8.0),
        None => (rect.left(), rect.right(), rect.top() + 30.0),
    };
    let width = (right - left - 2.0 * margin).max(1.0);
    let galley = painter.layout(
        text,
        egui::FontId::proportional(15.0),
        egui::Color32::LIGHT_RED,
        width,
    );
    let x = (left + right) / 2.0 - galley.size().x / 2.0;
    painter.galley(egui::pos2(x, top), galley, egui::Color32::LIGHT_RED);
}

#[cfg(test)]
mod toast_tests {
    use super::{toast_rect, toast_wrap_width};

    /// A toast wrapped at the scene's width stays inside the scene, wide or narrow.
    #[test]
    fn toasts_stay_inside_the_scene() {
        for (w, h) in [(1000.0, 600.0), (300.0, 200.0), (90.0, 120.0)] {
            let scene = egui::Rect::from_min_size(egui::pos2(280.0, 20.0), egui::vec2(w, h));
            let wrap = toast_wrap_width(scene);
            // A long message wraps to `wrap` wide and a few lines tall.
            let size = egui::vec2(wrap.min(w - 16.0), 54.0);
            let r = toast_rect(scene, size);
            assert!(scene.contains_rect(r), "{scene:?} {r:?}");
            assert!((r.center().x - scene.center().x).abs() < 1e-3 || w < 120.0);
        }
    }
}
