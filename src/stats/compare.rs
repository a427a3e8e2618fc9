//! The comparison view: an egui window that loads two recorded CSVs and shows their summaries and
//! frame-time distributions (histogram and percentile curve) side by side.

use std::path::PathBuf;

use super::record::Capture;
use super::summary::Summary;

/// Colours of capture A and B.
pub const COLORS: [egui::Color32; 2] = [
    egui::Color32::from_rgb(120, 200, 255),
    egui::Color32::from_rgb(255, 170, 90),
];

/// State of the comparison window.
#[derive(Default)]
pub struct CompareView {
    /// Whether the window is shown.
    pub open: bool,
    /// Paths typed in.
    pub paths: [String; 2],
    loaded: [Option<(Capture, Summary, Vec<f64>)>; 2],
    error: Option<String>,
}

/// Counts of `times` in `bins` equal bins over `[lo, hi)` (values outside are clamped into the
/// first/last bin).
pub fn histogram(times: &[f64], lo: f64, hi: f64, bins: usize) -> Vec<u32> {
    let mut out = vec![0u32; bins.max(1)];
    let width = (hi - lo).max(1e-9) / out.len() as f64;
    for &t in times {
        let i = ((t - lo) / width).floor();
        let i = if i.is_finite() {
            i.max(0.0) as usize
        } else {
            0
        };
        let last = out.len() - 1;
        out[i.min(last)] += 1;
    }
    out
}

impl CompareView {
    /// Loads the capture in slot `i` (0 or 1) from its path field.
    pub fn load(&mut self, i: usize) {
        let path = PathBuf::from(self.paths[i].trim());
        match Capture::read(&path) {
            Ok(c) => {
                let mut sorted = c.frame_times_ms.clone();
                sorted.sort_unstable_by(f64::total_cmp);
                let s = Summary::from_sorted(&sorted);
                self.loaded[i] = Some((c, s, sorted));
                self.error = None;
            }
            Err(e) => {
                self.loaded[i] = None;
                self.error = Some(e.to_string());
            }
        }
    }

    /// Shows the window when open.
    pub fn show(&mut self, ctx: &egui::Context) {
        let mut open = self.open;
        egui::Window::new("Compare captures")
            .open(&mut open)
            .default_size([640.0, 520.0])
            .show(ctx, |ui| self.contents(ui));
        self.open = open;
    }

    fn contents(&mut self, ui: &mut egui::Ui) {
        for (i, color) in COLORS.iter().enumerate() {
            ui.horizontal(|ui| {
                ui.colored_label(*color, if i == 0 { "A" } else { "B" });
                ui.add(egui::TextEdit::singleline(&mut self.paths[i]).desired_width(420.0));
                if ui.button("Load").clicked() {
                    self.load(i);
                }
            });
        }
        if let Some(e) = &self.error {
            ui.colored_label(egui::Color32::LIGHT_RED, e.as_str());
        }
        let loaded: Vec<_> = self.loaded.iter().flatten().collect();
        if loaded.is_empty() {
            ui.label("Type the paths of two recorded CSVs (vizdeck or PresentMon) and press Load.");
            return;
        }
        egui::Grid::new("compare-table")
            .striped(true)
            .show(ui, |ui| {
                ui.label("");
                for (i, slot) in self.loaded.iter().enumerate() {
                    if slot.is_some() {
                        ui.colored_label(COLORS[i], if i == 0 { "A" } else { "B" });
                    }
                }
                ui.end_row();
                let tables: Vec<_> = self
                    .loaded
                    .iter()
                    .flatten()
                    .map(|(_, s, _)| s.table_rows())
                    .collect();
                if let Some(first) = tables.first() {
                    for (r, (label, _)) in first.iter().enumerate() {
                        ui.label(*label);
                        for t in &tables {
                            ui.monospace(t[r].1.as_str());
                        }
                        ui.end_row();
                    }
                }
            });
        // Distributions over a common range: up to the larger p99.9 (with a margin).
        let hi = loaded.iter().map(|(_, s, _)| s.p999_ms).fold(1.0, f64::max) * 1.1;
        let (rect, _) = ui.allocate_exact_size(
            egui::vec2(ui.available_width().max(200.0), 110.0),
            egui::Sense::hover(),
        );
        let painter = ui.painter_at(rect);
        painter.rect_filled(rect, 2.0, egui::Color32::from_black_alpha(120));
        let bins = 60;
        for (i, slot) in self.loaded.iter().enumerate() {
            let Some((_, _, sorted)) = slot else { continue };
            let h = histogram(sorted, 0.0, hi, bins);
            let total = sorted.len().max(1) as f32;
            let peak = h.iter().copied().max().unwrap_or(1).max(1) as f32 / total;
            let bw = rect.width() / bins as f32;
            for (b, &c) in h.iter().enumerate() {
                let frac = c as f32 / total / peak;
                let x = rect.left() + b as f32 * bw + if i == 1 { bw * 0.5 } else { 0.0 };
                painter.rect_filled(
                    egui::Rect::from_min_max(
                        egui::pos2(x, rect.bottom() - rect.height() * frac),
                        egui::pos2(x + bw * 0.5, rect.bottom()),
                    ),
                    0.0,
                    COLORS[i],
                );
            }
        }
        ui.label(format!("frame-time histogram, 0 … {hi:.1} ms"));
        // Percentile curves: x = percentile 0..100, y = frame time.
        let (rect, _) = ui.allocate_exact_size(
            egui::vec2(ui.available_width().max(200.0), 110.0),
            egui::Sense::hover(),
        );
        let painter = ui.painter_at(rect);
        painter.rect_filled(rect, 2.0, egui::Color32::from_black_alpha(120));
        for (i, slot) in self.loaded.iter().enumerate() {
            let Some((_, _, sorted)) = slot else { continue };
            if sorted.is_empty() {
                continue;
            }
            let n = sorted.len();
            let pts: Vec<egui::Pos2> = (0..=200)
                .map(|k| {
                    let p = k as f64 / 2.0;
                    let v = sorted[super::nearest_rank_permille(n, (p * 10.0) as u32) - 1];
                    egui::pos2(
                        rect.left() + rect.width() * (p / 100.0) as f32,
                        rect.bottom() - rect.height() * (v / hi).min(1.0) as f32,
                    )
                })
                .collect();
            painter.add(egui::Shape::line(pts, egui::Stroke::new(1.5, COLORS[i])));
        }
        ui.label("frame time by percentile (x: 0 … 100 %)");
    }
}
