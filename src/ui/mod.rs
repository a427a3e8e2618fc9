//! The menu bar and the frame-time overlay, and [`UiCommand`]: what the UI asks the frame to do.

pub mod column_line;
pub mod file_dialog;
pub mod help;
pub mod keys;

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
    /// Start recording the scene panel to a video file, or stop the recording (View ▸ Record
    /// video / Stop recording, F10).
    ToggleVideo,
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
    /// Show the desktop's file dialog (*File* ▸ Open…).
    OpenDialog,
    /// Open recent file `i` (*File* ▸ Open recent, most recent first).
    OpenRecent(usize),
    /// Every scene's settings back to the defaults (*View* ▸ Reset settings).
    ResetSettings,
    /// End the run.
    Quit,
}

/// *Scene* ▸ scenes, *View* ▸ Stats overlay, *Record* ▸ Start / Stop: pushes what is chosen onto
/// `commands` (the capture delay and duration fields edit `deck.capture` directly).
pub fn menu_bar(deck: &mut Deck, ui: &mut egui::Ui, commands: &mut Vec<UiCommand>) {
    egui::Panel::top("menu").show(ui, |ui| {
        egui::MenuBar::new().ui(ui, |ui| {
            // A field of this menu (the path) takes a click without the menu closing.
            menu_with_fields(ui, "File", |ui| {
                if ui
                    .add_enabled(!deck.dialog_open(), egui::Button::new("Open…  (Ctrl+O)"))
                    .clicked()
                {
                    commands.push(UiCommand::OpenDialog);
                    ui.close();
                }
                ui.menu_button("Open recent", |ui| {
                    if deck.recent_files().is_empty() {
                        ui.label("(no files opened yet)");
                    }
                    for (i, p) in deck.recent_files().iter().enumerate() {
                        let name = p.file_name().map_or_else(
                            || p.display().to_string(),
                            |n| n.to_string_lossy().into_owned(),
                        );
                        if ui
                            .button(name)
                            .on_hover_text(p.display().to_string())
                            .clicked()
                        {
                            commands.push(UiCommand::OpenRecent(i));
                            ui.close();
                        }
                    }
                });
                ui.separator();
                ui.label("Open a path (or drop a file on the window):");
                ui.small(
                    "sound (WAV, FLAC, Ogg, MP3): spectrogram · CSV: time series · \
                     LAS, LAZ, COPC (also an http(s) URL), PLY: point cloud",
                );
                let edit = ui.add(
                    egui::TextEdit::singleline(&mut deck.ui_state.open_path)
                        .hint_text("path")
                        .desired_width(320.0),
                );
                let enter = edit.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
                if (ui.button("Open").clicked() || enter)
                    && !deck.ui_state.open_path.trim().is_empty()
                {
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
                let video = if deck.video_recording() {
                    "Stop recording  (F10)"
                } else {
                    "Record video  (F10)"
                };
                if ui
                    .button(video)
                    .on_hover_text(
                        "the scene panel as shown, to vizdeck-<scene>-<time>.mp4 (H.264, 60 fps \
                         following real time) through ffmpeg",
                    )
                    .clicked()
                {
                    commands.push(UiCommand::ToggleVideo);
                    ui.close();
                }
                if ui.button("Reset statistics").clicked() {
                    commands.push(UiCommand::ResetStats);
                    ui.close();
                }
                if ui
                    .button("Reset settings")
                    .on_hover_text(
                        "every scene's settings back to the defaults (and the flags given); the \
                         scenes reopen on the inputs open now",
                    )
                    .clicked()
                {
                    commands.push(UiCommand::ResetSettings);
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
            // The delay and duration fields take clicks and drags without closing the menu.
            menu_with_fields(ui, "Record", |ui| {
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
            ui.menu_button("Help", help::menu);
            if let Some((path, secs)) = deck.video_status() {
                ui.colored_label(
                    egui::Color32::from_rgb(255, 80, 80),
                    format!("• video {}", clock_text(secs)),
                )
                .on_hover_text(format!(
                    "recording video to {}  (F10 stops)",
                    path.display()
                ));
            }
            if deck.recording() {
                ui.colored_label(egui::Color32::from_rgb(255, 80, 80), "REC stats")
                    .on_hover_text("recording frame times (F9 stops)");
            } else if let Some(t) = deck.capture_countdown() {
                ui.colored_label(
                    egui::Color32::from_rgb(255, 200, 80),
                    format!("REC stats in {t:.1} s"),
                );
            }
        });
    });
    // Floating windows are left out of a frame drawn for a PNG of the scene.
    if !deck.drawing_scene_png() {
        let _ = deck.ui_state.compare.show(ui.ctx());
    }
}

/// A menu of the bar that a click inside leaves open (egui 0.37's menus close on any click,
/// [`egui::PopupCloseBehavior::CloseOnClick`], so a text field or a drag value in one could not
/// be used): it closes on a click outside, on Escape, and where its own buttons call
/// `ui.close()`.
fn menu_with_fields<R>(
    ui: &mut egui::Ui,
    title: &str,
    add_contents: impl FnOnce(&mut egui::Ui) -> R,
) -> Option<R> {
    let config = egui::containers::menu::MenuConfig::new()
        .close_behavior(egui::PopupCloseBehavior::CloseOnClickOutside);
    egui::containers::menu::MenuButton::new(title)
        .config(config)
        .ui(ui, add_contents)
        .1
        .map(|r| r.inner)
}

/// `secs` as `mm:ss`, or `h:mm:ss` from an hour on (the video indicator).
pub fn clock_text(secs: f64) -> String {
    let s = secs.max(0.0) as u64;
    match s / 3600 {
        0 => format!("{:02}:{:02}", s / 60, s % 60),
        h => format!("{h}:{:02}:{:02}", s / 60 % 60, s % 60),
    }
}

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

#[cfg(test)]
mod overlay_tests {
    use super::overlay_area;

    #[test]
    fn clock_text_is_minutes_and_seconds() {
        assert_eq!(super::clock_text(0.0), "00:00");
        assert_eq!(super::clock_text(12.9), "00:12");
        assert_eq!(super::clock_text(754.0), "12:34");
        assert_eq!(super::clock_text(3723.0), "1:02:03");
    }

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
