//! The desktop's file dialog (rfd: the XDG desktop portal over D-Bus, else a `zenity` child) run
//! on its own thread, so no frame waits for it: [`FilePick::start`] shows it, [`FilePick::poll`]
//! gives the answer once there is one.

use std::path::PathBuf;
use std::sync::mpsc::{Receiver, TryRecvError};

/// A file dialog open on its thread.
pub struct FilePick {
    result: Receiver<Option<PathBuf>>,
}

/// What [`FilePick::poll`] found.
#[derive(Debug, PartialEq, Eq)]
pub enum Picked {
    /// The dialog is still open.
    Waiting,
    /// The file picked.
    File(PathBuf),
    /// Cancelled (or no dialog could be shown after all).
    Nothing,
}

/// Whether a dialog can be expected here: a D-Bus session (for the portal) or `zenity` on PATH.
pub fn available() -> bool {
    let bus = std::env::var_os("DBUS_SESSION_BUS_ADDRESS").is_some_and(|v| !v.is_empty());
    let zenity = std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join("zenity").is_file()));
    bus || zenity
}

/// The toast shown where [`available`] is false.
pub const UNAVAILABLE: &str = "no file dialog here (it needs an XDG desktop portal or zenity): \
                               type the path instead";

impl FilePick {
    /// Shows a dialog titled `title` offering `filters` (name, extensions without the dot),
    /// starting in `dir` where given.
    ///
    /// # Errors
    ///
    /// No dialog can be shown here ([`UNAVAILABLE`]), or its thread cannot start.
    pub fn start(
        title: &str,
        filters: &[(&str, &[&str])],
        dir: Option<PathBuf>,
    ) -> Result<FilePick, String> {
        if !available() {
            return Err(UNAVAILABLE.to_string());
        }
        let mut d = rfd::FileDialog::new().set_title(title);
        for (name, ext) in filters {
            d = d.add_filter(*name, ext);
        }
        if let Some(dir) = dir {
            d = d.set_directory(dir);
        }
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::Builder::new()
            .name("vizdeck-file-dialog".into())
            .spawn(move || {
                let _ = tx.send(d.pick_file());
            })
            .map_err(|e| format!("cannot show the file dialog: {e}"))?;
        Ok(FilePick { result: rx })
    }

    /// The answer, once the dialog has closed.
    pub fn poll(&mut self) -> Picked {
        match self.result.try_recv() {
            Err(TryRecvError::Empty) => Picked::Waiting,
            Ok(Some(p)) => Picked::File(p),
            Ok(None) | Err(TryRecvError::Disconnected) => Picked::Nothing,
        }
    }
}
