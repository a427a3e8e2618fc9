//! The frame-time overlay over the scene (F1, `--overlay`): frame time, FPS, steps, the GPU
//! passes, the frame-time graph and histogram, with tooltips; drawn in the corner
//! [`crate::ui::overlay_area`] gives, which the views keep clear.

use super::Deck;
use crate::scene::SCENES;
use crate::ui::{column_line, overlay_area};

/// Tooltip of the overlay's first two rows.
const TIP_FRAME_TIME: &str = "Frame time: the time from one present to the next (the CSV's \
MsBetweenPresents), the figure every summary uses; FPS and the mean over the frames in the graph, \
percentiles over every frame since View > Reset statistics.";

/// Tooltip of the simulation-steps row.
const TIP_STEPS: &str = "Fixed-timestep simulation (1/120 s a step) since the start. A frame \
runs at most 8 steps (66.7 ms of simulation); when a frame takes longer, the time beyond that is \
skipped, not caught up: the simulation falls behind the clock (slow motion) rather than making the \
next frames slower still. Skipped steps mean frames slower than 66.7 ms (start-up, a slow scene, \
a window being moved). Per frame in the CSV: SimSteps, DroppedSteps. A scene may step at its \
own rate within these (the particles: their panel counts their steps).";

/// Tooltip of the GPU bars.
const TIP_GPU: &str = "GPU time of each timed pass of the last frame whose times came back \
(they arrive 1–3 frames late): the scene's compute pass, its render pass, and the UI (the \
scene image composited, egui drawn), from timestamp queries at each pass's begin and end. They \
need not add up to the frame time: frames are pipelined (the GPU works on one frame while the CPU \
prepares the next), and on a CPU adapter such as lavapipe the \"GPU\" is the CPU: its timestamps \
are clock readings taken by lavapipe's threads (after waiting for the work queued before them), \
which share the cores with vizdeck's own threads, so a pass's time includes waiting for a core. \
On lavapipe they can add up to more than the frame time; on a GPU, read them as the passes' \
own cost.";

/// Tooltip of the graph and histogram.
const TIP_GRAPH: &str = "Frame times of the last frames (the green line: 16.7 ms, 60 FPS) and \
their histogram.";

/// The overlay in the scene's top-right corner ([`overlay_area`]): FPS and live percentiles (HDR
/// histogram of every frame since the last reset), the simulation steps run and skipped, per-pass
/// GPU bars, a frame-time graph of the last frames and a histogram of them. Each row explains
/// itself in a tooltip when hovered.
pub(super) fn stats_overlay(deck: &Deck, painter: &egui::Painter, rect: egui::Rect) {
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
    // The fixed-timestep counts mean something only where a simulation steps (the row stays,
    // empty, elsewhere, so the overlay's rows do not move when the scene changes).
    let simulating = SCENES[deck.active].id == "particles";
    let (steps, dropped) = deck.clock_totals();
    lines.push(if simulating {
        format!("sim steps {steps} · skipped {dropped}")
    } else {
        String::new()
    });
    let row = |y: f32, h: f32| {
        egui::Rect::from_min_size(egui::pos2(area.left(), y), egui::vec2(area.width(), h))
    };
    let mut tips: Vec<(egui::Rect, &str)> = vec![(row(area.top(), 32.0), TIP_FRAME_TIME)];
    if simulating {
        tips.push((row(area.top() + 32.0, 14.0), TIP_STEPS));
    }
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
            tips.push((row(y, 36.0), TIP_GPU));
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
    tips.push((
        egui::Rect::from_min_max(egui::pos2(area.left(), y), area.max),
        TIP_GRAPH,
    ));
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
    // What each row means, where the pointer rests on it.
    let ctx = painter.ctx();
    if let Some(p) = ctx.input(|i| i.pointer.hover_pos())
        && let Some((i, (_, tip))) = tips.iter().enumerate().find(|(_, (r, _))| r.contains(p))
    {
        egui::Tooltip::always_open(
            ctx.clone(),
            painter.layer_id(),
            egui::Id::unique(("vizdeck-stats-overlay-tip", i)),
            egui::PopupAnchor::Pointer,
        )
        .show(|ui| ui.label(*tip));
    }
}
