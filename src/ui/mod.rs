//! What the deck's UI is made of, below the deck: [`UiCommand`] (what the UI asks the frame to
//! do), [`PngKind`], the key table ([`keys`]), the *Help* menu ([`help`]), the file dialog
//! thread ([`file_dialog`]), the clock text. The menu bar and the stats overlay, which read the
//! deck, are the deck's (`deck/menu.rs`, `deck/stats_overlay.rs`).

pub use vizdeck_views::column_line;
pub mod file_dialog;
pub mod help;
pub mod keys;

/// What a PNG asked for from the View menu or a key shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PngKind {
    /// The scene panel as drawn, with the scene's own axes, labels and notices, but without
    /// vizdeck's stats overlay, toasts or floating windows (F12; `vizdeck-<scene>-<time>.png`).
    Scene,
    /// The whole window as shown, panels and overlay included (Shift+F12;
    /// `vizdeck-window-<time>.png`).
    Window,
}

/// An action the UI asks for (menu, keys). The UI only collects them while it is laid out; the
/// deck applies them once, in order, right after the UI (the deck's `Deck::apply`), so nothing the UI
/// does reaches into the middle of a frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum UiCommand {
    /// Show scene `i` of [`SCENES`](crate::scene::SCENES) (its state and the others' are kept).
    SwitchScene(usize),
    /// Show or hide the stats overlay.
    SetOverlay(bool),
    /// Save a PNG of the next frame: the scene without vizdeck's overlay, or the whole window.
    SavePng(PngKind),
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

/// `secs` as `mm:ss`, or `h:mm:ss` from an hour on (the video indicator).
pub fn clock_text(secs: f64) -> String {
    let s = secs.max(0.0) as u64;
    match s / 3600 {
        0 => format!("{:02}:{:02}", s / 60, s % 60),
        h => format!("{h}:{:02}:{:02}", s / 60 % 60, s % 60),
    }
}

pub use vizdeck_views::overlay::{overlay_area, overlay_shown, set_overlay_shown};

#[cfg(test)]
mod tests {

    #[test]
    fn clock_text_is_minutes_and_seconds() {
        assert_eq!(super::clock_text(0.0), "00:00");
        assert_eq!(super::clock_text(12.9), "00:12");
        assert_eq!(super::clock_text(754.0), "12:34");
        assert_eq!(super::clock_text(3723.0), "1:02:03");
    }
}
