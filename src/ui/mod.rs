//! The menu bar and the frame-time overlay, and [`UiCommand`]: what the UI asks the frame to do.

pub mod column_line;

use crate::deck::Deck;
use crate::scene::SCENES;

/// An action the UI asks for (menu, keys). The UI only collects them while it is laid out; the
/// deck applies them once, in order, right after the UI ([`Deck::apply`]), so nothing the UI
/// does reaches into the middle of a frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum UiCommand {
    /// Show scene `i` of [`SCENES`] (its state and the others' are kept).
    SwitchScene(usize),
    /// Show or hide the stats overlay.
    SetOverlay(bool),
    /// Save a PNG of the next frame: the scene without vizdeck's overlay, or the whole window.
    SavePng(crate::deck::PngKind),
    /// Empty the overlay's statistics.
    ResetStats,
    /// Open the comparison window of two recorded CSVs.
    OpenCompare,
    /// How the scenes' uploads travel from the next frame on.
    SetUploadStrategy(crate::gpu::upload::Strategy),
    /// Start recording (after the capture delay) or stop it; cancel a delayed start.
    ToggleRecording,
    /// Arm a capture with the menu's delay and duration.
    ArmCapture,
    /// Open the file whose path is typed in *File* ▸ Open (`Deck::open_path`).
    OpenTypedPath,
    /// End the run.
    Quit,
}

/// *Scene* ▸ scenes, *View* ▸ Stats overlay, *Record* ▸ Start / Stop: pushes what is chosen onto
/// `commands` (the capture delay and duration fields edit `deck.capture` directly).
pub fn menu_bar(deck: &mut Deck, ui: &mut egui::Ui, commands: &mut Vec<UiCommand>) {
    egui::Panel::top("menu").show(ui, |ui| {
        egui::MenuBar::new().ui(ui, |ui| {
            ui.menu_button("File", |ui| {
                ui.label("Open a file (or drop it on the window):");
                ui.small(
                    "sound (WAV, FLAC, Ogg, MP3) → spectrogram · CSV → time series · \
                     LAS, LAZ, COPC (also an http(s) URL), PLY → point cloud",
                );
                let edit = ui.add(
                    egui::TextEdit::singleline(&mut deck.open_path)
                        .hint_text("path")
                        .desired_width(320.0),
                );
                let enter = edit.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
                if (ui.button("Open").clicked() || enter) && !deck.open_path.trim().is_empty() {
                    commands.push(UiCommand::OpenTypedPath);
                    ui.close();
                }
            });
            ui.menu_button("Scene", |ui| {
                for (i, s) in SCENES.iter().enumerate() {
                    let text = format!("{}  ({})", s.title, s.key);
                    if ui.radio(deck.active == i, text).clicked() {
                        commands.push(UiCommand::SwitchScene(i));
                        ui.close();
                    }
                }
                ui.separator();
                if ui.button("Quit  (Ctrl+Q)").clicked() {
                    commands.push(UiCommand::Quit);
                }
            });
            ui.menu_button("View", |ui| {
                let mut overlay = deck.overlay;
                if ui.checkbox(&mut overlay, "Stats overlay  (F1)").clicked() {
                    commands.push(UiCommand::SetOverlay(overlay));
                    ui.close();
                }
                if ui
                    .button("Save PNG of the scene  (F12)")
                    .on_hover_text("the scene with its axes and labels, without the stats overlay")
                    .clicked()
                {
                    commands.push(UiCommand::SavePng(crate::deck::PngKind::Scene));
                    ui.close();
                }
                if ui
                    .button("Save PNG of the window  (Shift+F12)")
                    .on_hover_text("everything as shown: panels, scene and stats overlay")
                    .clicked()
                {
                    commands.push(UiCommand::SavePng(crate::deck::PngKind::Window));
                    ui.close();
                }
                if ui.button("Reset statistics").clicked() {
                    commands.push(UiCommand::ResetStats);
                    ui.close();
                }
                if ui.button("Compare captures…").clicked() {
                    commands.push(UiCommand::OpenCompare);
                    ui.close();
                }
                ui.menu_button("Upload strategy", |ui| {
                    let current = deck.upload_strategy();
                    for s in crate::gpu::upload::Strategy::ALL {
                        if ui.radio(current == s, s.name()).clicked() {
                            commands.push(UiCommand::SetUploadStrategy(s));
                            ui.close();
                        }
                    }
                });
            });
            ui.menu_button("Record", |ui| {
                let recording = deck.recording();
                if ui
                    .add_enabled(!recording, egui::Button::new("Start  (F9)"))
                    .clicked()
                {
                    commands.push(UiCommand::ToggleRecording);
                    ui.close();
                }
                if ui
                    .add_enabled(recording, egui::Button::new("Stop  (F9)"))
                    .clicked()
                {
                    commands.push(UiCommand::ToggleRecording);
                    ui.close();
                }
                ui.separator();
                ui.horizontal(|ui| {
                    ui.label("delay (s)");
                    ui.add(
                        egui::DragValue::new(&mut deck.capture.delay_s)
                            .range(0.0..=3600.0)
                            .speed(0.1),
                    );
                });
                ui.horizontal(|ui| {
                    ui.label("duration (s, 0 = until stopped)");
                    ui.add(
                        egui::DragValue::new(&mut deck.capture.duration_s)
                            .range(0.0..=86_400.0)
                            .speed(0.1),
                    );
                });
                if ui
                    .add_enabled(
                        !recording,
                        egui::Button::new("Start capture (delay, duration)"),
                    )
                    .clicked()
                {
                    commands.push(UiCommand::ArmCapture);
                    ui.close();
                }
            });
            if deck.recording() {
                ui.colored_label(egui::Color32::from_rgb(255, 80, 80), "REC");
            } else if let Some(t) = deck.capture_countdown() {
                ui.colored_label(
                    egui::Color32::from_rgb(255, 200, 80),
                    format!("REC in {t:.1} s"),
                );
            }
        });
    });
    // Floating windows are left out of a frame drawn for a PNG of the scene.
    if !deck.drawing_scene_png() {
        let _ = deck.compare.show(ui.ctx());
    }
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

/// The overlay in the scene's top-right corner ([`overlay_area`]): FPS and live percentiles (HDR
/// histogram of every frame since the last reset), per-pass GPU bars, a frame-time graph of the
/// last frames and a histogram of them.
pub fn stats_overlay(deck: &Deck, painter: &egui::Painter, rect: egui::Rect) {
    // Kept to the top 160 px so the scene below stays visible (tests compare it).
    let area = overlay_area(rect);
    painter.rect_filled(area, 4.0, egui::Color32::from_black_alpha(190));
    let font = egui::FontId::monospace(12.0);
    let color = egui::Color32::from_gray(230);
    let live = &deck.live;
    let mut lines = vec![
        format!(
            "{:6.1} FPS  {:5.2} ms  ({} frames)",
            live.fps(),
            live.mean_ms(),
            live.hdr_len()
        ),
        format!(
            "p50 {:.1}  p90 {:.1}  p99 {:.1}  p99.9 {:.1} ms",
            live.hdr_percentile(50.0),
            live.hdr_percentile(90.0),
            live.hdr_percentile(99.0),
            live.hdr_percentile(99.9)
        ),
    ];
    let (steps, dropped) = deck.clock_totals();
    lines.push(format!("steps {steps}  dropped {dropped}"));
    let mut y = area.top() + 4.0;
    for l in &lines {
        painter.text(
            egui::pos2(area.left() + 6.0, y),
            egui::Align2::LEFT_TOP,
            l,
            font.clone(),
            color,
        );
        y += 14.0;
    }
    y += 1.0;
    // GPU pass bars: compute, scene render, egui; full width = max(16.7 ms, largest).
    match &deck.timer {
        Some(_) => {
            let names = ["compute", "render", "ui"];
            let colors = [
                egui::Color32::from_rgb(240, 160, 80),
                egui::Color32::from_rgb(120, 200, 120),
                egui::Color32::from_rgb(170, 140, 230),
            ];
            let full = deck.gpu_live.iter().copied().fold(16.7, f64::max);
            let bar_left = area.left() + 82.0;
            let bar_w = (area.right() - 6.0 - bar_left - 60.0).max(0.0);
            for i in 0..3 {
                let ms = deck.gpu_live[i];
                painter.text(
                    egui::pos2(area.left() + 6.0, y),
                    egui::Align2::LEFT_TOP,
                    format!("GPU {}", names[i]),
                    egui::FontId::monospace(10.0),
                    color,
                );
                let w = (bar_w * (ms / full) as f32).max(1.0);
                painter.rect_filled(
                    egui::Rect::from_min_size(egui::pos2(bar_left, y + 2.0), egui::vec2(w, 8.0)),
                    1.0,
                    colors[i],
                );
                painter.text(
                    egui::pos2(bar_left + bar_w + 4.0, y),
                    egui::Align2::LEFT_TOP,
                    format!("{ms:6.2} ms"),
                    egui::FontId::monospace(10.0),
                    color,
                );
                y += 12.0;
            }
        }
        None => {
            painter.text(
                egui::pos2(area.left() + 6.0, y),
                egui::Align2::LEFT_TOP,
                "GPU times: no TIMESTAMP_QUERY",
                font.clone(),
                color,
            );
            y += 15.0;
        }
    }
    let hist: Vec<f64> = live.history().collect();
    let top = hist.iter().cloned().fold(33.4, f64::max);
    // Frame-time graph (left 60 %): last frames, 0..max(33 ms, max) ms tall; histogram of the
    // same frames on the right.
    let row_bottom = area.bottom() - 16.0;
    let split = area.left() + 6.0 + (area.width() - 12.0) * 0.6;
    let graph = egui::Rect::from_min_max(
        egui::pos2(area.left() + 6.0, y + 4.0),
        egui::pos2(split - 4.0, row_bottom),
    );
    if hist.len() >= 2 {
        let n = hist.len() as f32;
        let pts: Vec<egui::Pos2> = hist
            .iter()
            .enumerate()
            .map(|(i, ms)| {
                egui::pos2(
                    graph.left() + graph.width() * i as f32 / (n - 1.0),
                    graph.bottom() - graph.height() * (*ms / top) as f32,
                )
            })
            .collect();
        let y16 = graph.bottom() - graph.height() * (16.7 / top) as f32;
        painter.line_segment(
            [
                egui::pos2(graph.left(), y16),
                egui::pos2(graph.right(), y16),
            ],
            egui::Stroke::new(1.0, egui::Color32::from_rgb(80, 120, 80)),
        );
        let ppp = painter.pixels_per_point();
        painter.add(column_line::column_line(
            &pts,
            ppp,
            ppp,
            egui::Color32::from_rgb(120, 200, 255),
        ));
    }
    // Histogram of the same frames: 40 bins over 0..top ms.
    let hrect = egui::Rect::from_min_max(
        egui::pos2(split + 4.0, y + 4.0),
        egui::pos2(area.right() - 6.0, row_bottom),
    );
    if !hist.is_empty() {
        let bins = crate::stats::compare::histogram(&hist, 0.0, top, 40);
        let peak = bins.iter().copied().max().unwrap_or(1).max(1) as f32;
        let bw = hrect.width() / bins.len() as f32;
        for (i, &c) in bins.iter().enumerate() {
            let h = hrect.height() * c as f32 / peak;
            painter.rect_filled(
                egui::Rect::from_min_max(
                    egui::pos2(hrect.left() + i as f32 * bw, hrect.bottom() - h),
                    egui::pos2(hrect.left() + (i as f32 + 0.8) * bw, hrect.bottom()),
                ),
                0.0,
                egui::Color32::from_rgb(120, 200, 255),
            );
        }
    }
    painter.text(
        egui::pos2(area.left() + 6.0, area.bottom() - 14.0),
        egui::Align2::LEFT_TOP,
        format!(
            "graph / histogram: last {} frames, 0–{top:.0} ms",
            hist.len()
        ),
        egui::FontId::monospace(10.0),
        color,
    );
}

#[cfg(test)]
mod overlay_tests {
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
