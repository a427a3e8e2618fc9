//! *File* ▸ Open…: the desktop's file dialog ([`crate::ui::file_dialog`]), never waited for by
//! the frame; the path picked is opened by the frame that finds it ([`Deck::poll_dialog`]).

use super::Deck;
use crate::gpu::Gpu;
use crate::ui::file_dialog::{FilePick, Picked};

/// The extensions [`Deck::open_file`] opens, by kind, as the dialog's filters.
const FILTERS: &[(&str, &[&str])] = &[
    (
        "All vizdeck files",
        &[
            "wav", "flac", "ogg", "oga", "mp3", "csv", "tsv", "txt", "parquet", "pq", "arrow",
            "feather", "ipc", "arrows", "las", "laz", "ply",
        ],
    ),
    ("Sound (spectrogram)", &["wav", "flac", "ogg", "oga", "mp3"]),
    (
        "Time series",
        &[
            "csv", "tsv", "txt", "parquet", "pq", "arrow", "feather", "ipc", "arrows",
        ],
    ),
    ("Point clouds", &["las", "laz", "ply"]),
];

impl Deck {
    /// Shows the file dialog (*File* ▸ Open…), starting in the folder of the most recent file.
    /// Where no dialog can be shown, a toast says to type the path or drop the file instead.
    pub fn show_open_dialog(&mut self) {
        if self.ui_state.dialog.is_some() {
            return;
        }
        let start = self
            .recent_files()
            .first()
            .and_then(|p| p.parent())
            .map(|p| p.to_path_buf());
        match FilePick::start("Open a file — vizdeck", FILTERS, start) {
            Ok(d) => self.ui_state.dialog = Some(d),
            Err(e) => self.toast(format!(
                "{e} in File > Open, or drop the file on the window"
            )),
        }
    }

    /// Whether a file dialog is open (the window then looks for its answer ten times a second).
    pub fn dialog_open(&self) -> bool {
        self.ui_state.dialog.is_some()
    }

    /// Opens the file picked in the dialog, once it answers.
    pub(super) fn poll_dialog(&mut self, gpu: &Gpu) {
        let Some(d) = &mut self.ui_state.dialog else {
            return;
        };
        match d.poll() {
            Picked::Waiting => {}
            Picked::File(path) => {
                self.ui_state.dialog = None;
                self.open_file(gpu, path);
            }
            Picked::Nothing => self.ui_state.dialog = None,
        }
    }
}
