//! The menu bar (File, Scene, View, Record, Help): it reads the deck's state and only collects
//! [`UiCommand`]s, applied after the UI ([`Deck::apply`]).

use super::Deck;
use crate::scene::SCENES;
use crate::ui::{PngKind, UiCommand, clock_text, help};

/// *Scene* ▸ scenes, *View* ▸ Stats overlay, *Record* ▸ Start / Stop: pushes what is chosen onto
/// `commands` (the capture delay and duration fields edit `deck.capture` directly).
pub(super) fn menu_bar(deck: &mut Deck, ui: &mut egui::Ui, commands: &mut Vec<UiCommand>) {
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
                    commands.push(UiCommand::SavePng(PngKind::Scene));
                    ui.close();
                }
                if ui
                    .button("Save PNG of the window  (Shift+F12)")
                    .on_hover_text("everything as shown: panels, scene and stats overlay")
                    .clicked()
                {
                    commands.push(UiCommand::SavePng(PngKind::Window));
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
                    // The offered ones, and the lab's one the command line chose, if it did.
                    let offered = crate::gpu::upload::Strategy::OFFERED;
                    let chosen = (!offered.contains(&current)).then_some(current);
                    for s in offered.into_iter().chain(chosen) {
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
