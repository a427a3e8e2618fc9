//! The [`Deck`](super::Deck)'s state grouped by concern: each group is a field of the deck.

use std::path::PathBuf;
use std::time::Instant;

use super::*;

/// How the scene image reaches the output: composite mode, blit, background copy, the scene's target and depth, the output format (`composite.rs`, `targets.rs`).
pub struct OutputParts {
    /// How the scene texture reaches the output (`--composite`).
    pub(super) composite: Composite,
    /// How it reached the output in the last frame (`Copy` falls back to `Blit` for an output
    /// that cannot take a copy).
    pub(super) composite_used: Composite,
    pub(super) blit: SceneBlit,
    /// The egui pass's clear colour: the panels' fill. The panels themselves are transparent,
    /// so their background costs no blended fill (a third of a 1280×720 window; 1–2 ms a frame
    /// on lavapipe).
    pub(super) clear_color: wgpu::Color,
    /// The background copied around the scene rect ([`Composite::Copy`]).
    pub(super) background: Background,
    pub(super) target: Option<SceneTarget>,
    pub(super) target_px: (u32, u32),
    pub(super) depth: Option<SceneDepth>,
    pub(super) output_format: wgpu::TextureFormat,
}

/// egui and what the last frame's UI laid out: context, painter, panel scroll, the scene's rects, the toast, the file dialog, the open path, the comparison window, settings kept between runs.
pub struct UiState {
    pub(super) egui_ctx: egui::Context,
    /// Paints egui's shapes and holds its textures ([`EguiPainter`]).
    pub(super) painter: EguiPainter,
    /// The comparison window (two recorded CSVs).
    pub(crate) compare: crate::stats::compare::CompareView,
    /// The path typed in *File* ▸ Open.
    pub(crate) open_path: String,
    /// The side panel's scroll area in the last frame.
    pub(super) panel_scroll: Option<PanelScroll>,
    /// The scene image's rect in output pixels (x, y, w, h) of the last frame.
    pub(super) scene_rect_px: (u32, u32, u32, u32),
    /// The scene's whole area in the window (the plot rect and a chart's label margins), pixels
    /// (x, y, w, h): what a video records, so its size holds while the margins change.
    pub(super) scene_area_px: (u32, u32, u32, u32),
    /// The same area in points, as the last frame's UI laid it out.
    pub(super) scene_area: egui::Rect,
    pub(super) toast: Option<(String, Instant)>,
    /// Settings kept between runs (`saved.rs`).
    pub(super) kept: saved::Kept,
    /// *File* ▸ Open…'s dialog, while it is open (`dialog.rs`).
    pub(super) dialog: Option<crate::ui::file_dialog::FilePick>,
}

/// When frames are drawn: the last present, egui's repaint delay, the display interval, whether the window waited, the run clock.
pub struct Pacing {
    pub(super) last_present: Option<Instant>,
    /// The run clock: the sum of every frame's `elapsed_s` (wall clock in a window, 1/60 s per
    /// frame headless), s. Capture delays and durations are measured on it.
    pub(super) run_s: f64,
    /// How soon egui asked to be run again after the last frame (`Duration::MAX`: not at all).
    pub(super) egui_repaint_delay: std::time::Duration,
    /// When the last frame's UI ran: egui's repaint delay counts from here.
    pub(super) repaint_from: Instant,
    /// One refresh of the display ([`Deck::set_display_rate`]).
    pub(super) display_interval: std::time::Duration,
    /// The window waited (idle) after the last frame ([`Deck::note_wait`]).
    pub(super) after_wait: bool,
}

/// What a run writes: screenshots and PNGs, the video, frame-time recordings (`capture.rs`, `screenshots.rs`, `video.rs`).
pub struct Artifacts {
    pub(super) screenshots: Screenshots,
    /// The video recording of the scene panel and the files of the run (`video.rs`).
    pub(super) video: video::Video,
    pub(super) readback_mark: u64,
    pub(super) recording: Option<Recording>,
    pub(super) record_path: Option<PathBuf>,
    pub(super) recordings_made: u32,
    /// A PNG asked for ([`UiCommand::SavePng`]), taken from the next frame.
    pub(super) png_next: Option<PngKind>,
    /// The PNG this frame is drawn for and copied into (moved from `png_next` before the UI).
    pub(super) png_now: Option<PngKind>,
}

/// Device-loss recovery (`recovery.rs`): losses so far, their times, the one under way, the frame of a loss on purpose (`VIZDECK_LOSE_DEVICE_AT_FRAME`).
pub struct Recovery {
    /// GPU devices lost and replaced so far (report `device_resets`).
    pub device_resets: u32,
    /// Time from each loss being noticed to the first frame presented on the new device, ms.
    pub device_reset_ms: Vec<f64>,
    /// When the last loss was noticed, until the next frame is presented.
    pub reset_started: Option<Instant>,
    /// `VIZDECK_LOSE_DEVICE_AT_FRAME`: the frame before which the device is destroyed on purpose.
    pub lose_at_frame: Option<u64>,
}
