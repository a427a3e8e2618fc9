//! Settings kept between runs: the window's size and position, the last scene, each scene's
//! settings (what its side panel changes), the overlay switch and the recent files, in one JSON
//! file (`$XDG_CONFIG_HOME/vizdeck/settings.json`, else `~/.config/vizdeck/settings.json`;
//! `--settings PATH` names another, `--no-settings` neither reads nor writes one).
//!
//! The window reads the file at start and writes it when a file is opened, on *View* ▸ Reset
//! settings, and at the end of the run; headless runs only with `--settings`. What the command
//! line gives explicitly wins over what was saved. A file that does not read (not JSON, wrong
//! shape) is never overwritten silently: it is renamed aside (`settings.json.corrupt-<unix s>`),
//! one message names both paths, and the run starts from the defaults. The file is written whole
//! into a temporary file next to it and renamed over it, so a crash leaves the old one or the
//! new one, never half of one.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The settings file's format version (`version` in the file). A file of a newer version is read
/// as far as its fields are known.
pub const VERSION: u32 = 1;

/// How many recent files the *File* menu keeps.
pub const MAX_RECENT: usize = 10;

/// Everything kept between runs. Every field has a default, so a file missing some (an older
/// vizdeck, a hand edit) reads.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Settings {
    /// [`VERSION`] of the vizdeck that wrote the file.
    pub version: u32,
    /// The window's inner size and outer position when it was last closed.
    pub window: Option<WindowPlacement>,
    /// The id of the scene shown last ([`crate::scene::SCENES`]).
    pub scene: Option<String>,
    /// Whether the stats overlay was shown.
    pub overlay: Option<bool>,
    /// Each scene's settings, by scene id: the object its [`crate::scene::Scene::saved_settings`]
    /// returned.
    pub scenes: BTreeMap<String, serde_json::Value>,
    /// Files opened, most recent first, at most [`MAX_RECENT`].
    pub recent: Vec<PathBuf>,
}

/// A window's inner size (physical pixels) and outer position (physical pixels from the top-left
/// of the desktop; `None` where the platform does not tell, e.g. Wayland).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WindowPlacement {
    /// Inner width, px.
    pub width: u32,
    /// Inner height, px.
    pub height: u32,
    /// Outer position, px.
    pub x: Option<i32>,
    /// Outer position, px.
    pub y: Option<i32>,
}

impl Settings {
    /// Puts `path` first in the recent files (once; at most [`MAX_RECENT`] kept).
    pub fn push_recent(&mut self, path: &Path) {
        self.recent.retain(|p| p != path);
        self.recent.insert(0, path.to_path_buf());
        self.recent.truncate(MAX_RECENT);
    }
}

/// The default settings file: `$XDG_CONFIG_HOME/vizdeck/settings.json`, else
/// `$HOME/.config/vizdeck/settings.json` (the XDG Base Directory specification); `None` when
/// neither variable is set.
pub fn default_path() -> Option<PathBuf> {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    let base = var("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| var("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    Some(base.join("vizdeck").join("settings.json"))
}

/// What [`load`] found.
#[derive(Debug)]
pub struct Loaded {
    /// The settings read (the defaults when the file is missing or does not read).
    pub settings: Settings,
    /// One line for the user when the file could not be used (it does not read, or it could not
    /// be kept aside): names the file and the problem.
    pub message: Option<String>,
}

/// Reads the settings file at `path`. A missing file gives the defaults silently. A file that
/// is not a JSON object is renamed to `<path>.corrupt-<unix seconds>` (kept aside, not
/// overwritten later) and the defaults are returned with a message naming both paths; in an
/// object, a field of the wrong shape is skipped (named in the message) and the others are used.
pub fn load(path: &Path) -> Loaded {
    let text = match std::fs::read(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Loaded {
                settings: Settings::default(),
                message: None,
            };
        }
        Err(e) => {
            return Loaded {
                settings: Settings::default(),
                message: Some(format!(
                    "settings file {}: cannot read it ({e}); using the defaults",
                    path.display()
                )),
            };
        }
    };
    match serde_json::from_slice::<serde_json::Value>(&text) {
        Ok(serde_json::Value::Object(fields)) => {
            // Field by field: one of the wrong shape is skipped, the others kept.
            let mut settings = Settings::default();
            let mut skipped = Vec::new();
            for (key, value) in fields {
                let mut one = serde_json::Map::new();
                one.insert(key.clone(), value);
                match serde_json::from_value::<Settings>(serde_json::Value::Object(one)) {
                    Ok(s) => match key.as_str() {
                        "version" => settings.version = s.version,
                        "window" => settings.window = s.window,
                        "scene" => settings.scene = s.scene,
                        "overlay" => settings.overlay = s.overlay,
                        "scenes" => settings.scenes = s.scenes,
                        "recent" => settings.recent = s.recent,
                        _ => {}
                    },
                    Err(e) => skipped.push(format!("{key}: {e}")),
                }
            }
            Loaded {
                settings,
                message: (!skipped.is_empty()).then(|| {
                    format!(
                        "settings file {}: skipped {} (the rest is used)",
                        path.display(),
                        skipped.join("; ")
                    )
                }),
            }
        }
        Ok(_) => corrupt(path, "not a JSON object"),
        Err(e) => corrupt(path, &e.to_string()),
    }
}

/// The defaults, with the message for a settings file at `path` that does not read (`why`),
/// renamed aside first.
fn corrupt(path: &Path, why: &str) -> Loaded {
    let aside = aside_path(path);
    let kept = match std::fs::rename(path, &aside) {
        Ok(()) => format!("kept as {}", aside.display()),
        Err(re) => format!("and it could not be renamed aside ({re})"),
    };
    Loaded {
        settings: Settings::default(),
        message: Some(format!(
            "settings file {} does not read ({why}): using the defaults; the file was {kept}",
            path.display()
        )),
    }
}

/// Where a corrupt settings file is moved: `<path>.corrupt-<unix seconds>` (with `-N` added if
/// that exists already).
fn aside_path(path: &Path) -> PathBuf {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let base = format!("{}.corrupt-{secs}", path.display());
    let mut candidate = PathBuf::from(&base);
    let mut n = 1;
    while candidate.exists() {
        candidate = PathBuf::from(format!("{base}-{n}"));
        n += 1;
    }
    candidate
}

/// Writes `settings` to `path` (creating its directory): into `<path>.tmp` first, then renamed
/// over `path`.
///
/// # Errors
///
/// The directory or file cannot be created or written; the message names the path.
pub fn save(path: &Path, settings: &Settings) -> Result<(), String> {
    let mut s = settings.clone();
    s.version = VERSION;
    let text = serde_json::to_vec_pretty(&s).map_err(|e| format!("settings: {e}"))?;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("settings directory {}: {e}", dir.display()))?;
    }
    let tmp = PathBuf::from(format!("{}.tmp", path.display()));
    std::fs::write(&tmp, &text).map_err(|e| format!("settings file {}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, path).map_err(|e| format!("settings file {}: {e}", path.display()))
}

/// The settings a run starts from (`Cli::start_settings` reads them), for the deck
/// ([`crate::deck::Deck::use_settings`]).
#[derive(Debug)]
pub struct Start {
    /// The file kept (`None`: none is read or written).
    pub path: Option<PathBuf>,
    /// What it held.
    pub settings: Settings,
    /// The scene config of the flags and defaults alone, before the saved settings were applied.
    pub defaults: crate::scene::SceneConfig,
    /// One line each for the user: the file did not read, a saved value was skipped.
    pub messages: Vec<String>,
}

pub use vizdeck_views::saved::{Fields, enum_name};

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("vizdeck-settings-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).expect("temp dir");
        d
    }

    #[test]
    fn round_trip_and_missing_file() {
        let d = dir("rt");
        let path = d.join("sub").join("settings.json");
        let l = load(&path);
        assert_eq!(l.settings, Settings::default());
        assert!(l.message.is_none());
        let mut s = Settings {
            scene: Some("timeseries".into()),
            overlay: Some(false),
            window: Some(WindowPlacement {
                width: 900,
                height: 600,
                x: Some(10),
                y: None,
            }),
            ..Default::default()
        };
        s.scenes.insert(
            "spectrogram".into(),
            serde_json::json!({"fft_size": 2048, "colormap": "magma"}),
        );
        for i in 0..12 {
            s.push_recent(Path::new(&format!("/data/{i}.csv")));
        }
        s.push_recent(Path::new("/data/5.csv"));
        assert_eq!(s.recent.len(), MAX_RECENT);
        assert_eq!(s.recent[0], Path::new("/data/5.csv"));
        assert_eq!(s.recent[1], Path::new("/data/11.csv"));
        save(&path, &s).expect("save");
        let back = load(&path);
        assert!(back.message.is_none());
        s.version = VERSION;
        assert_eq!(back.settings, s);
        assert!(!PathBuf::from(format!("{}.tmp", path.display())).exists());
    }

    #[test]
    fn corrupt_file_is_kept_aside_with_a_message() {
        let d = dir("corrupt");
        let path = d.join("settings.json");
        std::fs::write(&path, b"{\"scene\": \"spectro").expect("write");
        let l = load(&path);
        assert_eq!(l.settings, Settings::default());
        let m = l.message.expect("a message");
        assert!(m.contains(&path.display().to_string()), "{m}");
        assert!(!path.exists(), "the corrupt file was moved aside");
        let aside: Vec<_> = std::fs::read_dir(&d)
            .expect("dir")
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .collect();
        assert_eq!(aside.len(), 1);
        assert!(m.contains(&aside[0].display().to_string()), "{m}");
        assert_eq!(
            std::fs::read(&aside[0]).expect("kept"),
            b"{\"scene\": \"spectro"
        );
        // Valid JSON that is not an object is treated the same.
        std::fs::write(&path, b"[1, 2]").expect("write");
        assert!(load(&path).message.is_some());
        assert_eq!(std::fs::read_dir(&d).expect("dir").count(), 2);
        // In an object, a field of the wrong shape is skipped and named; the others are kept,
        // and the file stays where it is.
        std::fs::write(
            &path,
            b"{\"recent\": 5, \"scene\": \"particles\", \"window\": {\"width\": -5}}",
        )
        .expect("write");
        let l = load(&path);
        let m = l.message.expect("a message");
        assert!(m.contains("recent:") && m.contains("window:"), "{m}");
        assert!(!m.contains("scene:"), "{m}");
        assert_eq!(l.settings.scene.as_deref(), Some("particles"));
        assert!(path.exists());
    }

    #[test]
    fn fields_skip_bad_values_with_a_note() {
        let v = serde_json::json!({"n": 1000, "w": "hann", "x": "text", "ok": 2048});
        let mut f = Fields::new("spectrogram", &v);
        assert_eq!(
            f.get_if::<usize>("n", "a power of two", |n| n.is_power_of_two()),
            None
        );
        assert_eq!(
            f.get_if::<usize>("ok", "a power of two", |n| n.is_power_of_two()),
            Some(2048)
        );
        assert_eq!(f.get::<f64>("x"), None);
        assert_eq!(f.get::<f64>("missing"), None);
        assert_eq!(f.get::<String>("w").as_deref(), Some("hann"));
        assert_eq!(f.notes.len(), 2, "{:?}", f.notes);
        assert!(
            f.notes[0].starts_with("spectrogram.n: 1000"),
            "{:?}",
            f.notes
        );
        assert!(f.notes[1].starts_with("spectrogram.x:"), "{:?}", f.notes);
    }
}
