//! The deck's keyboard shortcuts as one table, [`SHORTCUTS`]: the key handling
//! (`Deck::keys`) reads it to turn key presses into [`UiCommand`]s, and *Help* ▸ Keys lists it,
//! so the list shown can never differ from what the keys do. Keys that belong to one scene
//! (Space, the point cloud's W A S D, Home, …) are that scene's own (its `interact`); the help
//! names them with the mouse, in [`SCENE_INPUT`].

use super::PngKind;
use super::UiCommand;

/// Which modifiers a shortcut needs, judged on those held when its key went down.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mods {
    /// Whatever is held.
    Any,
    /// None held (a digit typed with Ctrl is not a scene switch).
    None,
    /// Ctrl (⌘ on macOS).
    Command,
    /// Shift held.
    Shift,
    /// Shift not held (F12 without Shift; Shift+F12 is another shortcut).
    NoShift,
}

impl Mods {
    /// Whether `m` (the modifiers of a key event) satisfy this.
    pub fn accept(self, m: egui::Modifiers) -> bool {
        match self {
            Mods::Any => true,
            Mods::None => !m.any(),
            Mods::Command => m.command,
            Mods::Shift => m.shift,
            Mods::NoShift => !m.shift,
        }
    }
}

/// What a shortcut does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// Stats overlay on/off.
    ToggleOverlay,
    /// Frame-time recording start / stop.
    ToggleRecording,
    /// Video recording of the scene panel start / stop.
    ToggleVideo,
    /// The desktop's file dialog.
    OpenDialog,
    /// A PNG of the scene (or of the whole window).
    SavePng(PngKind),
    /// End the run.
    Quit,
    /// Show scene `i` of [`crate::scene::SCENES`].
    Scene(usize),
}

impl Action {
    /// The command this action asks for, given whether the overlay is shown now.
    pub fn command(self, overlay_shown: bool) -> UiCommand {
        match self {
            Action::ToggleOverlay => UiCommand::SetOverlay(!overlay_shown),
            Action::ToggleRecording => UiCommand::ToggleRecording,
            Action::ToggleVideo => UiCommand::ToggleVideo,
            Action::OpenDialog => UiCommand::OpenDialog,
            Action::SavePng(kind) => UiCommand::SavePng(kind),
            Action::Quit => UiCommand::Quit,
            Action::Scene(i) => UiCommand::SwitchScene(i),
        }
    }
}

/// One shortcut: a key, the modifiers it needs, what it does, and how the help shows it.
#[derive(Clone, Copy, Debug)]
pub struct Shortcut {
    /// The key.
    pub key: egui::Key,
    /// The modifiers it needs.
    pub mods: Mods,
    /// What it does.
    pub action: Action,
    /// How the help writes it: `"F1"`, `"Ctrl+O"`.
    pub label: &'static str,
    /// What it does, for the help (`"stats overlay on/off"`); for a scene key, empty (the help
    /// names the scene from [`crate::scene::SCENES`]).
    pub what: &'static str,
}

/// Every deck-wide shortcut, in the order the help lists them. The scene digits follow the order
/// of [`crate::scene::SCENES`] (a test checks each scene's `key` against them).
pub const SHORTCUTS: [Shortcut; 11] = [
    scene(egui::Key::Num1, 0, "1"),
    scene(egui::Key::Num2, 1, "2"),
    scene(egui::Key::Num3, 2, "3"),
    scene(egui::Key::Num4, 3, "4"),
    Shortcut {
        key: egui::Key::F1,
        mods: Mods::Any,
        action: Action::ToggleOverlay,
        label: "F1",
        what: "stats overlay on/off (View > Stats overlay)",
    },
    Shortcut {
        key: egui::Key::F9,
        mods: Mods::Any,
        action: Action::ToggleRecording,
        label: "F9",
        what: "start / stop frame-time recording (Record > Start / Stop)",
    },
    Shortcut {
        key: egui::Key::F10,
        mods: Mods::Any,
        action: Action::ToggleVideo,
        label: "F10",
        what: "start / stop recording the scene panel to video",
    },
    Shortcut {
        key: egui::Key::O,
        mods: Mods::Command,
        action: Action::OpenDialog,
        label: "Ctrl+O",
        what: "open a file in the desktop's file dialog (File > Open…)",
    },
    Shortcut {
        key: egui::Key::F12,
        mods: Mods::NoShift,
        action: Action::SavePng(PngKind::Scene),
        label: "F12",
        what: "save a PNG of the scene, without the stats overlay",
    },
    Shortcut {
        key: egui::Key::F12,
        mods: Mods::Shift,
        action: Action::SavePng(PngKind::Window),
        label: "Shift+F12",
        what: "save a PNG of the whole window as shown",
    },
    Shortcut {
        key: egui::Key::Q,
        mods: Mods::Command,
        action: Action::Quit,
        label: "Ctrl+Q",
        what: "quit",
    },
];

/// The digit that shows scene `index`.
const fn scene(key: egui::Key, index: usize, label: &'static str) -> Shortcut {
    Shortcut {
        key,
        mods: Mods::None,
        action: Action::Scene(index),
        label,
        what: "",
    }
}

/// The egui key of a scene's digit (`SceneInfo::key`), if it is one.
pub fn digit_key(c: char) -> Option<egui::Key> {
    egui::Key::from_name(&c.to_string()).filter(|_| c.is_ascii_digit())
}

/// What the help says a shortcut does: its `what`, or for a scene key `"show the Spectrogram
/// scene"`.
pub fn describe(s: &Shortcut) -> String {
    match s.action {
        Action::Scene(i) => crate::scene::SCENES.get(i).map_or_else(
            || "show a scene".to_string(),
            |info| format!("show the {} scene", info.title),
        ),
        _ => s.what.to_string(),
    }
}

/// The commands the key events of one frame ask for, in [`SHORTCUTS`] order: each shortcut whose
/// key went down (not a repeat) with modifiers its [`Mods`] accept. The modifiers are the
/// event's own, so a quick Ctrl+Q whose Ctrl is up again by the time the frame reads the input
/// still counts.
pub fn commands(events: &[egui::Event], overlay_shown: bool, out: &mut Vec<UiCommand>) {
    for s in &SHORTCUTS {
        let down = events.iter().any(|e| {
            matches!(e, egui::Event::Key { key, pressed: true, repeat: false, modifiers, .. }
                if *key == s.key && s.mods.accept(*modifiers))
        });
        if down {
            out.push(s.action.command(overlay_shown));
        }
    }
}

/// What the mouse and each scene's own keys do, per scene (title, text), for *Help* ▸ Mouse.
pub const SCENE_INPUT: [(&str, &str); 4] = [
    (
        "Spectrogram",
        "hover: time, frequency, nearest note and level; drag or wheel: scroll back; \
         ctrl+wheel: zoom time around the pointer; Space: freeze / resume the view",
    ),
    (
        "Particles",
        "left-drag: orbit; wheel: zoom; right-drag: attract particles to the cursor, \
         shift+right-drag: repel; Space: pause / resume",
    ),
    (
        "Time series",
        "wheel: zoom the time axis around the pointer; drag: pan; right- or shift-drag: box \
         zoom; double-click: back to follow-newest; hover: the nearest sample's time and value",
    ),
    (
        "Point cloud",
        "left-drag: orbit; right-, middle- or shift-drag: pan; wheel: zoom towards the pointer; \
         double-click: pivot on the point; hover: the point's coordinates; W A S D Q E: fly; \
         T F Shift+S I: top, front, side, iso views; Home: fit the cloud",
    ),
];

/// Where the documentation is, for *Help* ▸ About.
pub const DOCS: &str = "`vizdeck --help` lists every flag, grouped by scene; docs/ in the source \
repository has a page per scene (keys, inputs, formats) and README.md a tour; ARCHITECTURE.md maps \
the code";

#[cfg(test)]
mod tests {
    use super::*;

    /// The scene digits in the table are the scenes' own keys, in order.
    #[test]
    fn scene_digits_match_the_scenes() {
        let scenes: Vec<_> = SHORTCUTS
            .iter()
            .filter_map(|s| match s.action {
                Action::Scene(i) => Some((i, s.key)),
                _ => None,
            })
            .collect();
        assert_eq!(scenes.len(), crate::scene::SCENES.len());
        for (i, key) in scenes {
            let info = &crate::scene::SCENES[i];
            assert_eq!(digit_key(info.key), Some(key), "{}", info.id);
        }
    }

    /// No two shortcuts fire on the same key event.
    #[test]
    fn no_key_event_fires_two_shortcuts() {
        let all_mods = [
            egui::Modifiers::NONE,
            egui::Modifiers::SHIFT,
            egui::Modifiers::COMMAND,
            egui::Modifiers::CTRL | egui::Modifiers::SHIFT,
        ];
        for s in &SHORTCUTS {
            for m in all_mods {
                let n = SHORTCUTS
                    .iter()
                    .filter(|t| t.key == s.key && t.mods.accept(m))
                    .count();
                assert!(n <= 1, "{} with {m:?}: {n} shortcuts", s.label);
            }
        }
    }
}
