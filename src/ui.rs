//! The menu bar and the frame-time overlay.

use crate::deck::Deck;
use crate::scene::SCENES;

/// *Scene* ▸ scenes, *View* ▸ Stats overlay, *Record* ▸ Start / Stop.
pub fn menu_bar(deck: &mut Deck, ui: &mut egui::Ui, switch: &mut Option<usize>) {
    egui::Panel::top("menu").show(ui, |ui| {
        egui::MenuBar::new().ui(ui, |ui| {
            ui.menu_button("Scene", |ui| {
                for (i, s) in SCENES.iter().enumerate() {
                    let text = format!("{}  ({})", s.title, s.key);
                    if ui.radio(deck.active == i, text).clicked() {
                        *switch = Some(i);
                        ui.close();
                    }
                }
                ui.separator();
                if ui.button("Quit  (Ctrl+Q)").clicked() {
                    deck.quit = true;
                }
            });
            ui.menu_button("View", |ui| {
                if ui
                    .checkbox(&mut deck.overlay, "Stats overlay  (F1)")
                    .clicked()
                {
                    ui.close();
                }
                if ui.button("Save PNG of the scene  (F12)").clicked() {
                    deck.screenshot_request = true;
                    ui.close();
                }
            });
            ui.menu_button("Record", |ui| {
                let recording = deck.recording();
                if ui
                    .add_enabled(!recording, egui::Button::new("Start  (F9)"))
                    .clicked()
                {
                    deck.toggle_recording_request = true;
                    ui.close();
                }
                if ui
                    .add_enabled(recording, egui::Button::new("Stop  (F9)"))
                    .clicked()
                {
                    deck.toggle_recording_request = true;
                    ui.close();
                }
            });
            if deck.recording() {
                ui.colored_label(egui::Color32::from_rgb(255, 80, 80), "REC");
            }
        });
    });
}

/// FPS, p50/p99 frame time, GPU pass times and a frame-time graph in the scene's top-right corner.
pub fn stats_overlay(deck: &Deck, painter: &egui::Painter, rect: egui::Rect) {
    let size = egui::vec2(300.0, 130.0);
    let area = egui::Rect::from_min_size(
        egui::pos2(rect.right() - size.x - 8.0, rect.top() + 8.0),
        size,
    );
    painter.rect_filled(area, 4.0, egui::Color32::from_black_alpha(190));
    let font = egui::FontId::monospace(12.0);
    let color = egui::Color32::from_gray(230);
    let live = &deck.live;
    let mut lines = vec![format!(
        "{:6.1} FPS  p50 {:5.2} ms  p99 {:5.2} ms",
        live.fps(),
        live.percentile(50.0),
        live.percentile(99.0)
    )];
    match &deck.timer {
        Some(_) => lines.push(format!(
            "GPU compute {:5.2} ms  render {:5.2} ms",
            deck.gpu_live.0, deck.gpu_live.1
        )),
        None => lines.push("GPU times: no TIMESTAMP_QUERY".to_string()),
    }
    let (steps, dropped) = deck.clock_totals();
    lines.push(format!("steps {steps}  dropped {dropped}"));
    for (i, l) in lines.iter().enumerate() {
        painter.text(
            area.min + egui::vec2(6.0, 4.0 + 15.0 * i as f32),
            egui::Align2::LEFT_TOP,
            l,
            font.clone(),
            color,
        );
    }
    // Frame-time graph: last frames, 0..max(33 ms, max) ms tall.
    let graph = egui::Rect::from_min_max(
        egui::pos2(area.left() + 6.0, area.top() + 54.0),
        egui::pos2(area.right() - 6.0, area.bottom() - 6.0),
    );
    let hist: Vec<f64> = live.history().collect();
    if hist.len() >= 2 {
        let top = hist.iter().cloned().fold(33.4, f64::max);
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
        painter.add(egui::Shape::line(
            pts,
            egui::Stroke::new(1.0, egui::Color32::from_rgb(120, 200, 255)),
        ));
    }
}
