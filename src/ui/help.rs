//! *Help*: the keys (listed from [`super::keys::SHORTCUTS`], the table the key handling reads,
//! so the list cannot differ from what the keys do), the mouse and each scene's own keys
//! ([`super::keys::SCENE_INPUT`]), where the documentation is, and the version
//! (`CARGO_PKG_VERSION`).

use super::keys::{self, SHORTCUTS};

/// vizdeck's version, from Cargo.toml.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The rows of *Help* ▸ Keys: `(key as written, what it does)`, one per entry of
/// [`SHORTCUTS`], in its order.
pub fn key_rows() -> Vec<(&'static str, String)> {
    SHORTCUTS
        .iter()
        .map(|s| (s.label, keys::describe(s)))
        .collect()
}

/// The line of *Help* ▸ About: `"vizdeck 0.1.0"`.
pub fn about_line() -> String {
    format!("vizdeck {VERSION}")
}

/// The *Help* menu's contents.
pub fn menu(ui: &mut egui::Ui) {
    ui.menu_button("Keys", |ui| {
        ui.set_max_width(560.0);
        egui::Grid::new("vizdeck-help-keys")
            .num_columns(2)
            .striped(true)
            .show(ui, |ui| {
                for (key, what) in key_rows() {
                    ui.monospace(key);
                    ui.label(what);
                    ui.end_row();
                }
            });
        ui.small("Keys act when no text field has the keyboard.");
    });
    ui.menu_button("Mouse and scene keys", |ui| {
        ui.set_max_width(560.0);
        egui::Grid::new("vizdeck-help-mouse")
            .num_columns(2)
            .show(ui, |ui| {
                for (scene, what) in keys::SCENE_INPUT {
                    ui.strong(scene);
                    ui.add(egui::Label::new(what).wrap());
                    ui.end_row();
                }
            });
    });
    ui.separator();
    ui.label(format!("Documentation: {}", keys::DOCS));
    ui.separator();
    ui.label(about_line());
}
