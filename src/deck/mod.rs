//! The deck: everything one frame does, shared by the window ([`crate::app`]) and headless mode
//! ([`crate::headless`]): clock → ingest → fixed updates → egui UI → uploads → compute pass →
//! scene render pass (into the scene texture) → egui pass (the scene texture blitted into its
//! viewport of the output, then egui) → submit → stats.

mod capture;
mod composite;
mod dialog;
mod frame;
mod menu;
mod panel;
mod parts;
mod recovery;
mod saved;
mod screenshots;
mod share;
mod stats_overlay;
mod targets;
mod video;

use std::path::PathBuf;
use std::time::Instant;

pub use crate::ui::PngKind;
pub use capture::CapturePlan;
pub use composite::{Composite, SCENE_BLIT};
pub use recovery::LOSE_DEVICE_ENV;
pub use screenshots::png_path;
pub use video::{
    MAX_GAP_S, VIDEO_FPS, VideoClock, VideoSummary, check_video_path, video_flag_message,
};

use capture::Recording;
use composite::{Background, SceneBlit};
use screenshots::{Screenshots, screenshot_writer};
use targets::{SceneDepth, SceneTarget};

use crate::clock::{FixedClock, Tick};
use crate::gpu::Gpu;
use crate::gpu::egui_painter::EguiPainter;
use crate::gpu::readback::{Consumer, ReadbackRing};
use crate::gpu::timing::GpuTimer;
use crate::gpu::upload::{Strategy, Uploader};
use crate::scene::{SCENES, Scene, SceneConfig};
use crate::stats::memory::MemoryTrack;
use crate::stats::{Live, Summary};

/// A scene slot: created on first use, kept (with its state) when the user switches away.
pub enum SceneSlot {
    /// Not opened yet.
    NotCreated,
    /// Running.
    Ready(Box<dyn Scene>),
    /// Could not start: the one-line reason, shown in place of the scene.
    Failed(String),
}

/// Where a frame is drawn: the window's surface texture or the headless target.
pub struct Output<'a> {
    /// View of the output texture.
    pub view: &'a wgpu::TextureView,
    /// The output texture itself, for screenshots (read back when it has `COPY_SRC`).
    pub texture: Option<&'a wgpu::Texture>,
    /// Its size in pixels.
    pub size: (u32, u32),
    /// Pixels per egui point.
    pub pixels_per_point: f32,
}

/// CPU-side timings of one frame (ms) and its clock tick. [`Deck::frame`] fills the split of its
/// own work; the caller sets `acquire_wait_ms` and `present_ms` (window: around
/// `get_current_texture` and `queue.present`; headless: 0) before [`Deck::end_frame`].
#[derive(Clone, Copy, Debug)]
pub struct FrameTimes {
    /// Frame index.
    pub frame: u64,
    /// When the frame started (entry of [`Deck::frame`]).
    pub start: Instant,
    /// Draining input rings (`Scene::ingest`).
    pub ingest_ms: f64,
    /// Fixed steps (`Scene::fixed_update` × steps).
    pub update_ms: f64,
    /// egui layout (`run_ui`).
    pub ui_ms: f64,
    /// The scene's uploads (`Scene::prepare`).
    pub upload_ms: f64,
    /// Command encoding: compute, scene and egui passes, egui buffers.
    pub encode_ms: f64,
    /// `queue.submit`.
    pub submit_ms: f64,
    /// Waiting in `surface.get_current_texture` (set by the caller).
    pub acquire_wait_ms: f64,
    /// Inside `queue.present` (set by the caller).
    pub present_ms: f64,
    /// Bytes the scene uploaded during the frame (through the deck's [`Uploader`]).
    pub bytes_uploaded: u64,
    /// Clock result.
    pub tick: Tick,
}

impl FrameTimes {
    /// CPU busy time up to submit: ingest + update + UI + upload + encode + submit.
    pub fn cpu_busy_ms(&self) -> f64 {
        self.ingest_ms
            + self.update_ms
            + self.ui_ms
            + self.upload_ms
            + self.encode_ms
            + self.submit_ms
    }
}

/// The frame driver.
pub struct Deck {
    /// One slot per entry of [`SCENES`].
    pub slots: Vec<SceneSlot>,
    /// Index of the active scene in [`SCENES`].
    pub active: usize,
    cfg: SceneConfig,
    clock: FixedClock,
    frame: u64,
    pub(crate) timer: Option<GpuTimer>,
    /// The one uploader every scene's uploads go through (its strategy and byte counters).
    uploader: Uploader,
    /// The uploader of egui's textures and buffers (same strategy; counted apart, so a frame's
    /// `BytesUploaded` is the scene's own).
    ui_uploader: Uploader,
    /// The asynchronous readback ring (GPU timings, screenshots, video frames, scenes' copies).
    pub readback: ReadbackRing,
    pub(crate) live: Live,
    /// Last GPU pass times: compute, scene render, egui (ms).
    pub(crate) gpu_live: [f64; 3],
    /// Capture delay / duration.
    pub capture: CapturePlan,
    /// Summaries of finished recordings: (path, summary).
    pub finished: Vec<(PathBuf, Summary)>,
    /// Whole-run frame times (ms) for the report summary.
    pub run_frame_ms: Vec<f64>,
    /// The RSS reading after the warm-up frames, for the report's memory figures.
    pub memory: MemoryTrack,
    pub(crate) overlay: bool,
    quit: bool,
    /// Present intervals left out of the statistics because they began with a wait.
    pub idle_intervals: u64,
    /// `--publish` / `--follow` (`share.rs`).
    sharing: share::Sharing,
    /// How the scene image reaches the output: composite mode, blit, background copy, the scene's target and depth, the output format (`composite.rs`, `targets.rs`).
    pub(crate) out: parts::OutputParts,
    /// egui and what the last frame's UI laid out: context, painter, panel scroll, the scene's rects, the toast, the file dialog, the open path, the comparison window, settings kept between runs.
    pub(crate) ui_state: parts::UiState,
    /// When frames are drawn: the last present, egui's repaint delay, the display interval, whether the window waited, the run clock.
    pub(crate) pacing: parts::Pacing,
    /// What a run writes: screenshots and PNGs, the video, frame-time recordings (`capture.rs`, `screenshots.rs`, `video.rs`).
    pub(crate) files: parts::Artifacts,
    /// Device-loss recovery (`recovery.rs`): losses so far, their times, the one under way, the frame of a loss on purpose (`VIZDECK_LOSE_DEVICE_AT_FRAME`).
    pub recovery: parts::Recovery,
}

/// When the window should draw its next frame ([`Deck::next_redraw`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Redraw {
    /// Right away (a running scene, a recording, egui animating).
    Now,
    /// At this instant (egui asked for a later repaint, a toast expires), or earlier on input.
    At(Instant),
    /// Only on input (the window waits for events: an idle vizdeck costs no CPU).
    OnInput,
    /// At this instant (or earlier on input) ask [`Deck::poll_input`] whether the scene's input
    /// changed its image, and draw only then: a scene that [polls](Scene::polls_input) for
    /// input arriving at any time (a live chart), looked at once per display interval.
    Poll(Instant),
}

impl Deck {
    /// Creates the deck drawing into `output_format` (non-sRGB, as egui-wgpu expects). Nothing
    /// is recorded until [`plan_capture`](Deck::plan_capture) or the Record menu says so.
    pub fn new(
        gpu: &Gpu,
        output_format: wgpu::TextureFormat,
        active: usize,
        cfg: SceneConfig,
    ) -> Deck {
        // The starting scene's start-up work, before the first frame (another kind's runs when
        // it is first created).
        if let Some(entry) = SCENES.get(active) {
            (entry.startup)(gpu, &cfg);
        }
        let egui_ctx = egui::Context::default();
        let mut visuals = egui::Visuals::dark();
        let panel_fill = visuals.panel_fill;
        visuals.panel_fill = egui::Color32::TRANSPARENT;
        egui_ctx.set_visuals(visuals);
        Deck {
            slots: SCENES.iter().map(|_| SceneSlot::NotCreated).collect(),
            active: active.min(SCENES.len() - 1),
            cfg,
            clock: FixedClock::default(),
            frame: 0,
            memory: MemoryTrack::new(crate::stats::memory::DEFAULT_WARMUP_FRAMES),
            timer: GpuTimer::new(&gpu.device, &gpu.queue),
            uploader: Uploader::new(&gpu.device, Strategy::default()),
            ui_uploader: Uploader::new(&gpu.device, Strategy::default()),
            readback: new_readback_ring(),
            live: Live::new(240),
            gpu_live: [0.0; 3],
            capture: CapturePlan::default(),
            finished: Vec::new(),
            run_frame_ms: Vec::new(),
            // Off until asked for (F1, --overlay): it would cover data in every scene.
            overlay: false,
            quit: false,
            idle_intervals: 0,
            sharing: share::Sharing::default(),
            out: parts::OutputParts {
                composite: Composite::default(),
                composite_used: Composite::default(),
                blit: SceneBlit::new(&gpu.device, output_format),
                clear_color: clear_color(panel_fill),
                background: Background::default(),
                target: None,
                target_px: (0, 0),
                depth: None,
                output_format,
            },
            ui_state: parts::UiState {
                egui_ctx,
                painter: EguiPainter::new(&gpu.device, output_format),
                compare: Default::default(),
                open_path: String::new(),
                panel_scroll: None,
                scene_rect_px: (0, 0, 1, 1),
                scene_area_px: (0, 0, 1, 1),
                scene_area: egui::Rect::NOTHING,
                toast: None,
                kept: saved::Kept::none(),
                dialog: None,
            },
            pacing: parts::Pacing {
                last_present: None,
                run_s: 0.0,
                egui_repaint_delay: std::time::Duration::ZERO,
                repaint_from: Instant::now(),
                display_interval: std::time::Duration::from_micros(16_667),
                after_wait: false,
            },
            files: parts::Artifacts {
                screenshots: Screenshots {
                    writer: screenshot_writer(),
                    dir: None,
                    next_id: 0,
                    png_dir: None,
                    last_png: None,
                },
                readback_mark: 0,
                recording: None,
                record_path: None,
                recordings_made: 0,
                png_next: None,
                png_now: None,
                video: video::Video::default(),
            },
            recovery: parts::Recovery {
                device_resets: 0,
                device_reset_ms: Vec::new(),
                reset_started: None,
                lose_at_frame: std::env::var(LOSE_DEVICE_ENV)
                    .ok()
                    .and_then(|v| v.trim().parse().ok()),
            },
        }
    }

    /// How the scenes' uploads reach the GPU from the next frame on (`--upload-strategy`, View ▸
    /// Upload strategy, `vizdeck-lab --upload`).
    pub fn set_upload_strategy(&mut self, strategy: Strategy) {
        self.uploader.set_strategy(strategy);
        self.ui_uploader.set_strategy(strategy);
    }

    /// How the scene texture reaches the output from the next frame on (`--composite`).
    pub fn set_composite(&mut self, composite: Composite) {
        self.out.composite = composite;
    }

    /// The scene image's rect in output pixels (x, y, width, height) of the last frame.
    pub fn scene_rect_px(&self) -> (u32, u32, u32, u32) {
        self.ui_state.scene_rect_px
    }

    /// How the scene texture reaches the output.
    pub fn composite(&self) -> Composite {
        self.out.composite
    }

    /// How the scene image reached the output in the last frame: the requested
    /// [`composite`](Deck::composite), except [`Composite::Copy`] falls back to
    /// [`Composite::Blit`] where the output's format is not the scene's or it takes no copies.
    pub fn composite_used(&self) -> Composite {
        self.out.composite_used
    }

    /// The upload strategy in use.
    pub fn upload_strategy(&self) -> Strategy {
        self.uploader.strategy()
    }

    /// What the deck's uploader has done so far (bytes, writes, map-ring fallbacks).
    pub fn upload_counters(&self) -> crate::gpu::upload::UploadCounters {
        self.uploader.counters
    }

    /// What the UI's uploader has done so far (egui's textures, vertices and indices).
    pub fn ui_upload_counters(&self) -> crate::gpu::upload::UploadCounters {
        self.ui_uploader.counters
    }

    /// Shows or hides the stats overlay (View ▸ Stats overlay, F1, `--overlay`; hidden by default).
    pub fn set_overlay(&mut self, on: bool) {
        self.overlay = on;
    }

    /// The egui context (the window feeds it events).
    pub fn egui_ctx(&self) -> &egui::Context {
        &self.ui_state.egui_ctx
    }

    /// True once the user asked to quit (menu or Ctrl+Q).
    pub fn quit_requested(&self) -> bool {
        self.quit
    }

    /// Frames rendered so far.
    pub fn frames(&self) -> u64 {
        self.frame
    }

    /// The active scene's error, if it could not start.
    pub fn active_failure(&self) -> Option<&str> {
        match &self.slots[self.active] {
            SceneSlot::Failed(m) => Some(m),
            _ => None,
        }
    }

    /// The active scene's current problem or notice ([`Scene::problem`]), if any.
    pub fn active_problem(&self) -> Option<String> {
        match &self.slots[self.active] {
            SceneSlot::Ready(s) => s.problem(),
            _ => None,
        }
    }

    /// Opens the active scene if it has not been opened yet.
    pub fn ensure_active(&mut self, gpu: &Gpu) {
        if let SceneSlot::NotCreated = self.slots[self.active] {
            let entry = &SCENES[self.active];
            (entry.startup)(gpu, &self.cfg);
            self.slots[self.active] = match (entry.create)(gpu, &self.cfg) {
                Ok(mut s) => {
                    self.restore_saved(self.active, s.as_mut());
                    self.note_input(self.active);
                    SceneSlot::Ready(s)
                }
                Err(e) => {
                    // Shown in place of the scene (window) or returned as the run's error
                    // (headless): logged at debug level only, so it is not printed twice.
                    log::debug!("{}: {e}", entry.title);
                    SceneSlot::Failed(e.to_string())
                }
            };
        }
    }

    /// Puts `scene` into slot `index` of [`SCENES`] (replacing what was there) and makes it the
    /// active one: how a dropped file's scene is opened, and how tests drive a scene of their
    /// own through the real frame. An index past the table is ignored.
    pub fn insert_scene(&mut self, index: usize, scene: Box<dyn Scene>) {
        if let Some(slot) = self.slots.get_mut(index) {
            *slot = SceneSlot::Ready(scene);
            self.active = index;
        }
    }

    /// Switches the active scene (its state is kept; the other scene's too).
    pub fn switch_to(&mut self, index: usize) {
        if index < SCENES.len() {
            self.active = index;
        }
    }

    /// Ends every created scene (exports). Returns the first error, after trying all.
    pub fn finish_scenes(&mut self, gpu: &Gpu) -> Result<(), String> {
        // Scenes get every readback still in flight (e.g. the spectrogram's last columns) first.
        self.drain_readbacks(gpu, true);
        let mut first = None;
        for slot in &mut self.slots {
            if let SceneSlot::Ready(s) = slot
                && let Err(e) = s.finish(gpu)
            {
                // The first error is returned (and printed by the caller); later ones are logged.
                if first.is_some() {
                    log::error!("{e}");
                }
                first.get_or_insert(e.to_string());
            }
        }
        match first {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Metrics of every created scene, keyed by id.
    pub fn metrics(&self) -> serde_json::Map<String, serde_json::Value> {
        let mut m = serde_json::Map::new();
        for (i, slot) in self.slots.iter().enumerate() {
            match slot {
                SceneSlot::Ready(s) => {
                    m.insert(SCENES[i].id.to_string(), s.metrics());
                }
                SceneSlot::Failed(e) => {
                    m.insert(SCENES[i].id.to_string(), serde_json::json!({ "error": e }));
                }
                SceneSlot::NotCreated => {}
            }
        }
        m
    }

    /// Total fixed steps run and dropped (by the step cap).
    pub fn clock_totals(&self) -> (u64, u64) {
        (self.clock.total_steps(), self.clock.total_dropped())
    }

    /// Opens a file dropped onto the window or typed in *File* ▸ Open: `.csv`/`.tsv`/`.txt` and
    /// Parquet or Arrow IPC (`.parquet`/`.pq`/`.arrow`/`.feather`/`.ipc`/`.arrows`) in the
    /// time-series scene, `.las`/`.laz` (COPC included, also an `http(s)://` URL of one) and
    /// `.ply` in the point-cloud scene, anything
    /// else as audio in the spectrogram, and shows that scene. On error the scene that was
    /// running keeps running and the message is shown.
    pub fn open_file(&mut self, gpu: &Gpu, path: std::path::PathBuf) {
        let ext = path
            .extension()
            .map(|e| e.to_string_lossy().to_lowercase())
            .unwrap_or_default();
        let (id, cfg) = if matches!(
            ext.as_str(),
            "csv" | "tsv" | "txt" | "parquet" | "pq" | "arrow" | "feather" | "ipc" | "arrows"
        ) {
            let mut cfg = self.cfg.clone();
            cfg.series_file = Some(path.clone());
            // A file opened replaces a network source given on the command line.
            cfg.series_net = None;
            ("timeseries", cfg)
        } else if matches!(ext.as_str(), "las" | "laz" | "ply") {
            let mut cfg = self.cfg.clone();
            let text = path.to_string_lossy();
            cfg.pointcloud.source = if crate::pointcloud::http::is_url(&text) {
                crate::scene::pointcloud::CloudSource::Url(text.into_owned())
            } else {
                crate::scene::pointcloud::CloudSource::File(path.clone())
            };
            ("pointcloud", cfg)
        } else {
            let mut cfg = self.cfg.clone();
            cfg.audio = crate::audio::AudioSelection::File(path.clone());
            ("spectrogram", cfg)
        };
        let Some(index) = crate::scene::index_of(id) else {
            return;
        };
        (SCENES[index].startup)(gpu, &cfg);
        match (SCENES[index].create)(gpu, &cfg) {
            Ok(mut scene) => {
                self.carry_settings(index, scene.as_mut());
                self.insert_scene(index, scene);
                self.cfg = cfg;
                self.note_opened(&path);
                self.toast(format!("opened {}", path.display()));
            }
            Err(e) => {
                log::error!("{e}");
                self.toast(e.to_string());
            }
        }
    }

    /// When the window should draw next, after a frame: [`Redraw::Now`] while anything changes
    /// by itself (the active scene is [`animating`](Scene::animating) or not open yet, a
    /// recording (statistics or video) runs or a delayed capture waits, a lost device was just replaced, egui asked
    /// for an immediate repaint); else [`Redraw::At`] the earlier of egui's requested repaint and
    /// the end of a toast, unless the scene [polls for input](Scene::polls_input) and that is
    /// later than one display interval: then [`Redraw::Poll`] one display interval from now;
    /// else [`Redraw::OnInput`]. Stats mean the same either way: a recorded
    /// frame is a presented frame, and recordings keep the loop running, so `MsBetweenPresents`
    /// measures drawing, never waiting for input.
    pub fn next_redraw(&self) -> Redraw {
        let animating = match &self.slots[self.active] {
            SceneSlot::Ready(s) => s.animating(),
            SceneSlot::NotCreated => true,
            SceneSlot::Failed(_) => false,
        };
        // A follower draws the publisher's data as it arrives: its scene may stand still
        // between messages (a point cloud at rest), the messages do not wake the window.
        if animating
            || self.following()
            || self.files.recording.is_some()
            || self.capture.start_at.is_some()
            || self.recovery.reset_started.is_some()
            || self.pacing.egui_repaint_delay.is_zero()
            || self.png_pending()
            || self.video_busy()
            || self.frame < 3
        {
            return Redraw::Now;
        }
        let now = Instant::now();
        if self.ui_state.dialog.is_some() {
            // The dialog's answer is looked for ten times a second.
            return Redraw::At(now + std::time::Duration::from_millis(100));
        }
        let egui_at = self
            .pacing
            .repaint_from
            .checked_add(self.pacing.egui_repaint_delay);
        let toast_at = self
            .ui_state
            .toast
            .as_ref()
            .map(|(_, at)| *at + std::time::Duration::from_secs_f32(TOAST_S))
            .filter(|t| *t > now);
        let draw_at = match (egui_at, toast_at) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let polls = matches!(&self.slots[self.active], SceneSlot::Ready(s) if s.polls_input());
        match draw_at {
            Some(at) if !polls || at <= now + self.pacing.display_interval => Redraw::At(at),
            _ if polls => Redraw::Poll(now + self.pacing.display_interval),
            _ => Redraw::OnInput,
        }
    }

    /// [`Redraw::Poll`]'s question, asked when its instant comes: the active scene takes in
    /// the input that arrived ([`Scene::poll_input`]); `true` when a frame is due.
    pub fn poll_input(&mut self) -> bool {
        match &mut self.slots[self.active] {
            SceneSlot::Ready(s) => s.poll_input(),
            _ => false,
        }
    }

    /// The display's refresh rate, Hz (default 60): a scene that polls for input
    /// ([`Redraw::Poll`]) is looked at, and drawn, at most this often. Ignored unless finite
    /// and positive.
    pub fn set_display_rate(&mut self, hz: f64) {
        if hz.is_finite() && hz > 0.0 {
            self.pacing.display_interval = std::time::Duration::from_secs_f64(1.0 / hz.min(1000.0));
        }
    }

    /// The window is about to wait (for input, a time, or a nap) instead of drawing at once:
    /// the next present interval is idle time, left out of the overlay's and the run's
    /// frame-time statistics (counted in [`Deck::idle_intervals`]).
    pub fn note_wait(&mut self) {
        self.pacing.after_wait = true;
    }

    /// Shows `msg` on the scene for a few seconds (a toast).
    pub fn toast(&mut self, msg: String) {
        self.ui_state.toast = Some((msg, Instant::now()));
    }

    /// The last toast's text (shown for a few seconds after it was set), if any.
    pub fn last_toast(&self) -> Option<&str> {
        self.ui_state.toast.as_ref().map(|(m, _)| m.as_str())
    }

    /// The side panel's scroll area in the last frame (`None` before the first frame).
    pub fn side_panel_scroll(&self) -> Option<PanelScroll> {
        self.ui_state.panel_scroll
    }
}

/// The side panel's scroll area as laid out in a frame, in points.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PanelScroll {
    /// Height of the panel's contents (all of the scene's controls).
    pub content_height: f32,
    /// Height of the part shown.
    pub viewport_height: f32,
    /// How far the contents are scrolled down (0 = top).
    pub offset: f32,
}

/// How long a toast stays on the scene, s.
pub(crate) const TOAST_S: f32 = 4.0;

/// A duration in ms from whole nanoseconds (prints short: 0.00017, not 0.00016999999999999999).
pub fn duration_ms(d: std::time::Duration) -> f64 {
    d.as_nanos() as f64 / 1e6
}

/// The deck's readback ring: 16 buffers, of which screenshots may hold 8 and video frames 5 (GPU
/// timings and the scenes' copies keep the rest).
fn new_readback_ring() -> ReadbackRing {
    let mut ring = ReadbackRing::new("readback:ring", 16);
    ring.limit(Consumer::Screenshot, 8);
    ring.limit(Consumer::Video, video::RING_BUFFERS);
    ring
}

/// `fill` (sRGB-encoded, as egui writes into the non-sRGB output) as a clear colour that stores
/// the same 8-bit values.
fn clear_color(fill: egui::Color32) -> wgpu::Color {
    let c = |v: u8| f64::from(v) / 255.0;
    wgpu::Color {
        r: c(fill.r()),
        g: c(fill.g()),
        b: c(fill.b()),
        a: 1.0,
    }
}
