//! The deck's side of the settings kept between runs ([`crate::settings`]): each scene's saved
//! settings restored when the scene opens, its current ones carried into the scene a file opens,
//! the recent files, *View* ▸ Reset settings, and the file written back.

use std::path::{Path, PathBuf};

use super::{Deck, SceneSlot};
use crate::scene::{SCENES, Scene, SceneConfig};
use crate::settings::{Settings, WindowPlacement};

/// What the deck keeps of the settings.
pub(super) struct Kept {
    /// The settings file (`None`: nothing is read or written).
    pub(super) path: Option<PathBuf>,
    /// The settings as read at start, brought up to date when saved.
    pub(super) settings: Settings,
    /// The scenes' inputs and settings from the flags and defaults alone (what *Reset settings*
    /// goes back to; the inputs opened since are kept).
    pub(super) defaults: Option<SceneConfig>,
}

impl Kept {
    pub(super) fn none() -> Kept {
        Kept {
            path: None,
            settings: Settings::default(),
            defaults: None,
        }
    }
}

impl Deck {
    /// Keeps settings as [`crate::cli::Cli::start_settings`] found them: the file (`None`: not kept),
    /// what it held (each scene's part is restored when the scene opens), and the scene config
    /// of the flags and defaults alone.
    pub fn use_settings(&mut self, start: crate::settings::Start) {
        self.ui_state.kept = Kept {
            path: start.path,
            settings: start.settings,
            defaults: Some(start.defaults),
        };
    }

    /// The files opened, most recent first (*File* ▸ Open recent).
    pub fn recent_files(&self) -> &[PathBuf] {
        &self.ui_state.kept.settings.recent
    }

    /// The settings as they are now: the active scene, the overlay, every opened scene's
    /// [`Scene::saved_settings`] (the saved ones of scenes not opened in this run are kept),
    /// the recent files, and `window` where given (else the one read at start).
    pub fn current_settings(&self, window: Option<WindowPlacement>) -> Settings {
        let mut s = self.ui_state.kept.settings.clone();
        s.scene = Some(SCENES[self.active].id.to_string());
        s.overlay = Some(self.overlay);
        if window.is_some() {
            s.window = window;
        }
        for (i, slot) in self.slots.iter().enumerate() {
            if let SceneSlot::Ready(scene) = slot {
                let v = scene.saved_settings();
                if !v.is_null() {
                    s.scenes.insert(SCENES[i].id.to_string(), v);
                }
            }
        }
        s
    }

    /// Writes the settings file ([`current_settings`](Deck::current_settings)), if settings are
    /// kept. A failure is logged and shown as a toast; the run goes on.
    pub fn save_settings(&mut self, window: Option<WindowPlacement>) {
        let Some(path) = self.ui_state.kept.path.clone() else {
            return;
        };
        let s = self.current_settings(window);
        match crate::settings::save(&path, &s) {
            Ok(()) => self.ui_state.kept.settings = s,
            Err(e) => {
                log::error!("{e}");
                self.toast(e);
            }
        }
    }

    /// Restores scene `index`'s saved settings into `scene`, just made, but for the fields named
    /// like a flag: those went through the flag's parser already ([`crate::cli::Cli::apply_saved`],
    /// which said what it skipped). Notes on fields skipped are logged.
    pub(super) fn restore_saved(&self, index: usize, scene: &mut dyn Scene) {
        if let Some(v) = self.ui_state.kept.settings.scenes.get(SCENES[index].id) {
            let mut v = v.clone();
            if let Some(fields) = v.as_object_mut() {
                fields.retain(|k, _| !crate::cli::Cli::is_flag_id(k));
            }
            for note in scene.restore_settings(&v) {
                log::warn!("settings: {note} (skipped)");
            }
        }
    }

    /// Before `fresh` replaces scene `index` (a file opened): the settings of the scene it
    /// replaces carry over (the colormap, the FFT size, … chosen in this run stay), else the
    /// saved ones.
    pub(super) fn carry_settings(&self, index: usize, fresh: &mut dyn Scene) {
        match &self.slots[index] {
            SceneSlot::Ready(old) => {
                let v = old.saved_settings();
                for note in fresh.restore_settings(&v) {
                    log::debug!("settings carried over: {note}");
                }
            }
            _ => self.restore_saved(index, fresh),
        }
    }

    /// The file scene `index` opened from the command line, if any: put first in the recent
    /// files (written with the settings at the end of the run).
    pub(super) fn note_input(&mut self, index: usize) {
        let file = match SCENES[index].id {
            "spectrogram" => match &self.cfg.audio {
                crate::audio::AudioSelection::File(p) => Some(p.clone()),
                _ => None,
            },
            "timeseries" => self.cfg.series_file.clone(),
            "pointcloud" => match &self.cfg.pointcloud.source {
                crate::scene::pointcloud::CloudSource::File(p) => Some(p.clone()),
                _ => None,
            },
            _ => None,
        };
        if let Some(p) = file {
            let p = std::fs::canonicalize(&p).unwrap_or(p);
            self.ui_state.kept.settings.push_recent(&p);
        }
    }

    /// Puts `path` first in the recent files and writes the settings file.
    pub(super) fn note_opened(&mut self, path: &Path) {
        // Absolute, so the entry opens from any working directory (a URL stays as it is).
        let path = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        self.ui_state.kept.settings.push_recent(&path);
        self.save_settings(None);
    }

    /// *View* ▸ Reset settings: every scene reopens with the settings of the flags and defaults
    /// (on the inputs open now), the stats overlay is shown, the saved scene settings are
    /// forgotten and the file is written. The recent files and the window's size stay.
    pub fn reset_settings(&mut self) {
        if let Some(defaults) = &self.ui_state.kept.defaults {
            let mut cfg = defaults.clone();
            // The inputs open now stay; only settings go back.
            cfg.audio = self.cfg.audio.clone();
            cfg.series_file = self.cfg.series_file.clone();
            cfg.series_net = self.cfg.series_net.clone();
            cfg.pointcloud.source = self.cfg.pointcloud.source.clone();
            self.cfg = cfg;
        }
        for slot in &mut self.slots {
            *slot = SceneSlot::NotCreated;
        }
        self.ui_state.kept.settings.scenes.clear();
        self.overlay = true;
        self.save_settings(None);
        self.toast("settings reset to the defaults".into());
    }
}
