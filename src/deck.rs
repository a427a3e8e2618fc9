//! The deck: everything one frame does, shared by the window ([`crate::app`]) and headless mode
//! ([`crate::headless`]): clock → ingest → fixed updates → egui UI → uploads → compute pass →
//! scene render pass (into the scene texture) → egui pass (into the output) → submit → stats.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::time::Instant;

use crate::clock::{FixedClock, Tick};
use crate::gpu::Gpu;
use crate::gpu::frame::GpuFrame;
use crate::gpu::readback::{PngWriter, ReadbackRing, TAG_SCREENSHOT, TAG_USER, Tag};
use crate::gpu::timing::{GpuTimer, PassTimes};
use crate::gpu::upload::{Strategy, Uploader};
use crate::scene::{FrameCtx, SCENES, Scene, SceneConfig};
use crate::stats::memory::MemoryTrack;
use crate::stats::{FrameRecord, Live, Recorder, Summary};
use crate::ui::UiCommand;

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

/// Capture control: a delayed start and a fixed duration (Record menu, `--capture-*`), on the
/// deck's run clock.
#[derive(Clone, Debug, Default)]
pub struct CapturePlan {
    /// Seconds to wait before recording starts (the menu's value).
    pub delay_s: f64,
    /// Seconds to record; 0 = until stopped.
    pub duration_s: f64,
    /// When an armed delayed start fires, on the deck's run clock (s).
    pub(crate) start_at: Option<f64>,
    /// When the running recording stops by itself, on the deck's run clock (s).
    pub(crate) stop_at: Option<f64>,
}

/// Saving screenshots through the readback ring: every frame (`--screenshot-every-frame`) and/or
/// the next one (F12).
struct Screenshots {
    writer: PngWriter,
    dir: Option<PathBuf>,
    next_id: u64,
    /// Pending F12 requests: (request id, crop rect in output pixels).
    one_off: Vec<(u64, (u32, u32, u32, u32))>,
}

struct SceneTarget {
    texture: wgpu::Texture,
    view: wgpu::TextureView,
    egui_id: egui::TextureId,
}

/// Depth attachment of the scene pass, for scenes that ask for one ([`Scene::depth_format`]).
struct SceneDepth {
    format: wgpu::TextureFormat,
    size: (u32, u32),
    view: wgpu::TextureView,
}

/// Recording state: the CSV writer and rows waiting (a few frames) for their GPU times.
struct Recording {
    path: PathBuf,
    recorder: Recorder,
    start: Instant,
    pending: VecDeque<FrameRecord>,
}

/// How many frames a row waits for its GPU times before it is written without them.
const GPU_TIME_WAIT_FRAMES: u64 = 6;

/// The frame driver.
pub struct Deck {
    /// One slot per entry of [`SCENES`].
    pub slots: Vec<SceneSlot>,
    /// Index of the active scene in [`SCENES`].
    pub active: usize,
    cfg: SceneConfig,
    clock: FixedClock,
    frame: u64,
    egui_ctx: egui::Context,
    renderer: egui_wgpu::Renderer,
    target: Option<SceneTarget>,
    target_px: (u32, u32),
    depth: Option<SceneDepth>,
    pub(crate) timer: Option<GpuTimer>,
    /// The one uploader every scene's uploads go through (its strategy and byte counters).
    uploader: Uploader,
    /// The asynchronous readback ring (GPU timings, screenshots).
    pub readback: ReadbackRing,
    pub(crate) live: Live,
    /// Last GPU pass times: compute, scene render, egui (ms).
    pub(crate) gpu_live: [f64; 3],
    /// Capture delay / duration.
    pub capture: CapturePlan,
    /// The comparison window (two recorded CSVs).
    pub(crate) compare: crate::stats::compare::CompareView,
    screenshots: Screenshots,
    readback_mark: u64,
    recording: Option<Recording>,
    record_path: Option<PathBuf>,
    recordings_made: u32,
    /// Summaries of finished recordings: (path, summary).
    pub finished: Vec<(PathBuf, Summary)>,
    /// Whole-run frame times (ms) for the report summary.
    pub run_frame_ms: Vec<f64>,
    /// The RSS reading after the warm-up frames, for the report's memory figures.
    pub memory: MemoryTrack,
    pub(crate) overlay: bool,
    quit: bool,
    /// Save a PNG of the scene panel from this frame's output (set by [`UiCommand::SavePng`]).
    screenshot_request: bool,
    /// The scene image's rect in output pixels (x, y, w, h) of the last frame.
    scene_rect_px: (u32, u32, u32, u32),
    last_present: Option<Instant>,
    toast: Option<(String, Instant)>,
    output_format: wgpu::TextureFormat,
    /// The run clock: the sum of every frame's `elapsed_s` (wall clock in a window, 1/60 s per
    /// frame headless), s. Capture delays and durations are measured on it.
    run_s: f64,
    /// GPU devices lost and replaced so far (report `device_resets`).
    pub device_resets: u32,
    /// Time from each loss being noticed to the first frame presented on the new device, ms.
    pub device_reset_ms: Vec<f64>,
    /// When the last loss was noticed, until the next frame is presented.
    reset_started: Option<Instant>,
    /// `VIZDECK_LOSE_DEVICE_AT_FRAME`: the frame before which the device is destroyed on purpose.
    lose_at_frame: Option<u64>,
}

/// Environment variable that destroys the GPU device before frame N (tests of the recovery).
pub const LOSE_DEVICE_ENV: &str = "VIZDECK_LOSE_DEVICE_AT_FRAME";

impl Deck {
    /// Creates the deck drawing into `output_format` (non-sRGB, as egui-wgpu expects). Nothing
    /// is recorded until [`plan_capture`](Deck::plan_capture) or the Record menu says so.
    pub fn new(
        gpu: &Gpu,
        output_format: wgpu::TextureFormat,
        active: usize,
        cfg: SceneConfig,
    ) -> Deck {
        let renderer = egui_wgpu::Renderer::new(
            &gpu.device,
            output_format,
            egui_wgpu::RendererOptions::default(),
        );
        let egui_ctx = egui::Context::default();
        egui_ctx.set_visuals(egui::Visuals::dark());
        Deck {
            slots: SCENES.iter().map(|_| SceneSlot::NotCreated).collect(),
            active: active.min(SCENES.len() - 1),
            cfg,
            clock: FixedClock::default(),
            frame: 0,
            memory: MemoryTrack::new(crate::stats::memory::DEFAULT_WARMUP_FRAMES),
            egui_ctx,
            renderer,
            target: None,
            target_px: (0, 0),
            depth: None,
            timer: GpuTimer::new(&gpu.device, &gpu.queue),
            uploader: Uploader::new(&gpu.device, Strategy::default()),
            readback: new_readback_ring(),
            live: Live::new(240),
            gpu_live: [0.0; 3],
            capture: CapturePlan::default(),
            compare: Default::default(),
            screenshots: Screenshots {
                writer: screenshot_writer(),
                dir: None,
                next_id: 0,
                one_off: Vec::new(),
            },
            readback_mark: crate::gpu::readback::bytes_read_back_total(),
            recording: None,
            record_path: None,
            recordings_made: 0,
            finished: Vec::new(),
            run_frame_ms: Vec::new(),
            overlay: true,
            quit: false,
            screenshot_request: false,
            scene_rect_px: (0, 0, 1, 1),
            last_present: None,
            toast: None,
            output_format,
            run_s: 0.0,
            device_resets: 0,
            device_reset_ms: Vec::new(),
            reset_started: None,
            lose_at_frame: std::env::var(LOSE_DEVICE_ENV)
                .ok()
                .and_then(|v| v.trim().parse().ok()),
        }
    }

    /// Destroys the device now when `VIZDECK_LOSE_DEVICE_AT_FRAME` names the frame about to be
    /// drawn (once). The frame loops call this before each frame, then check [`Gpu::lost`].
    pub fn inject_device_loss(&self, gpu: &Gpu) {
        if self.lose_at_frame == Some(self.frame) && self.device_resets == 0 {
            log::warn!(
                "{LOSE_DEVICE_ENV}={}: destroying the GPU device",
                self.frame
            );
            gpu.destroy_device();
        }
    }

    /// Forgets the GPU work in flight on a lost device (readback copies, timestamp queries), so
    /// that stopping the recording or finishing never waits for a device that will not answer.
    pub fn abandon_gpu_work(&mut self) {
        self.readback = new_readback_ring();
        self.timer = None;
        self.screenshots.one_off.clear();
    }

    /// Moves the deck onto `gpu`, a new device replacing one that was lost (`reason`): the egui
    /// renderer, the scene texture, timestamp queries, the uploader and the readback ring are
    /// made anew (copies in flight on the old device are gone), every scene that was open
    /// re-creates its GPU objects from its CPU-side state ([`Scene::recreate_gpu`]; one that
    /// cannot is shown failed, with its reason), and the recording carries on in the same file
    /// (the next row has `DeviceReset` = 1). Returns the new egui context (the window hands it
    /// to egui-winit): it starts with the old one's memory, and uploads its font atlas anew.
    /// `noticed`: when the loss was noticed (the recovery time runs from there to the next
    /// present, [`device_reset_ms`](Deck::device_reset_ms)).
    pub fn replace_gpu(&mut self, gpu: &Gpu, reason: &str, noticed: Instant) -> egui::Context {
        self.device_resets += 1;
        self.reset_started = Some(noticed);
        let memory = self.egui_ctx.memory(|m| m.clone());
        self.egui_ctx = egui::Context::default();
        self.egui_ctx.memory_mut(|m| *m = memory);
        self.renderer = egui_wgpu::Renderer::new(
            &gpu.device,
            self.output_format,
            egui_wgpu::RendererOptions::default(),
        );
        self.target = None;
        self.target_px = (0, 0);
        self.depth = None;
        self.timer = GpuTimer::new(&gpu.device, &gpu.queue);
        self.uploader = Uploader::new(&gpu.device, self.uploader.strategy());
        self.readback = new_readback_ring();
        self.screenshots.one_off.clear();
        for (i, slot) in self.slots.iter_mut().enumerate() {
            if let SceneSlot::Ready(scene) = slot
                && let Err(e) = scene.recreate_gpu(gpu)
            {
                log::error!(
                    "{}: cannot recreate after the GPU reset: {e}",
                    SCENES[i].title
                );
                *slot = SceneSlot::Failed(e.to_string());
            }
        }
        let msg = format!("GPU device was lost and recreated ({reason})");
        log::warn!("{msg}");
        self.toast(msg);
        self.egui_ctx.clone()
    }

    /// The recording plan of the command line: `--record-stats` (`record_path`, also the base
    /// name of later recordings), `--capture-delay` and `--capture-duration` (also the Record
    /// menu's and F9's values). With any of them set, a capture is armed now: recording starts
    /// after the delay (at once without one; into `record_path` or the next
    /// `vizdeck-stats-*.csv`) and stops by itself after the duration, both on the run clock (wall
    /// clock in a window, simulated time headless, so a headless capture covers the same frames
    /// every run).
    pub fn plan_capture(&mut self, record_path: Option<PathBuf>, delay_s: f64, duration_s: f64) {
        self.capture.delay_s = delay_s.max(0.0);
        self.capture.duration_s = duration_s.max(0.0);
        let armed = record_path.is_some() || delay_s > 0.0 || duration_s > 0.0;
        if record_path.is_some() {
            self.set_record_path(record_path);
        }
        if armed {
            self.arm_capture();
        }
    }

    /// How the scenes' uploads reach the GPU from the next frame on (`--upload-strategy`, View ▸
    /// Upload strategy, `vizdeck bench --upload`).
    pub fn set_upload_strategy(&mut self, strategy: Strategy) {
        self.uploader.set_strategy(strategy);
    }

    /// The upload strategy in use.
    pub fn upload_strategy(&self) -> Strategy {
        self.uploader.strategy()
    }

    /// What the deck's uploader has done so far (bytes, writes, map-ring fallbacks).
    pub fn upload_counters(&self) -> crate::gpu::upload::UploadCounters {
        self.uploader.counters
    }

    /// Shows or hides the stats overlay (View ▸ Stats overlay, F1, `--no-overlay`).
    pub fn set_overlay(&mut self, on: bool) {
        self.overlay = on;
    }

    /// The egui context (the window feeds it events).
    pub fn egui_ctx(&self) -> &egui::Context {
        &self.egui_ctx
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
            self.slots[self.active] = match (entry.create)(gpu, &self.cfg) {
                Ok(s) => SceneSlot::Ready(s),
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

    /// Runs one frame: `elapsed_s` of (real or simulated) time has passed since the previous one.
    /// Draws into `out` and submits; the caller presents, then calls [`Deck::end_frame`].
    pub fn frame(
        &mut self,
        gpu: &Gpu,
        out: &Output<'_>,
        raw_input: egui::RawInput,
        elapsed_s: f64,
    ) -> (FrameTimes, egui::PlatformOutput) {
        let start = Instant::now();
        let uploaded_before = self.uploader.counters.bytes;
        self.ensure_active(gpu);
        let tick = self.clock.tick(elapsed_s);
        if elapsed_s.is_finite() && elapsed_s > 0.0 {
            self.run_s += elapsed_s;
        }
        let dt = self.clock.dt() as f32;
        let mut ctx = FrameCtx {
            frame: self.frame,
            steps: tick.steps,
            dt,
            alpha: tick.alpha,
            advanced_s: tick.advanced_s,
            elapsed_s: elapsed_s.clamp(0.0, crate::scene::MAX_FRAME_ELAPSED_S),
            size: self.target_px,
        };
        let mut t_mark = Instant::now();
        let mut lap = || {
            let now = Instant::now();
            let ms = duration_ms(now - t_mark);
            t_mark = now;
            ms
        };
        let mut update_ms = lap();
        let mut ingest_ms = 0.0;
        let mut ingest_late = false;
        let ingesting = self.active;
        if let SceneSlot::Ready(scene) = &mut self.slots[self.active] {
            for _ in 0..tick.steps {
                scene.fixed_update(dt);
            }
            update_ms += lap();
            ingest_late = scene.ingest_after_ui();
            if !ingest_late {
                scene.ingest(&ctx);
            }
            ingest_ms = lap();
        }

        // UI: lays out the panels and tells us the scene's pixel size for this frame.
        self.ensure_target(gpu, (1, 1));
        let tex_id = self.target.as_ref().map(|t| t.egui_id);
        let mut scene_rect = egui::Rect::NOTHING;
        let mut commands = Vec::new();
        let full = {
            let ctx_egui = self.egui_ctx.clone();
            ctx_egui.run_ui(raw_input, |ui| {
                scene_rect = self.ui(ui, tex_id, &mut commands);
            })
        };
        for command in commands {
            self.apply(gpu, command);
        }
        let ppp = full.pixels_per_point;
        let max_side = gpu.device.limits().max_texture_dimension_2d;
        let px = (
            ((scene_rect.width() * ppp).round() as u32).clamp(1, max_side),
            ((scene_rect.height() * ppp).round() as u32).clamp(1, max_side),
        );
        self.scene_rect_px = (
            (scene_rect.left() * ppp).round().max(0.0) as u32,
            (scene_rect.top() * ppp).round().max(0.0) as u32,
            px.0,
            px.1,
        );
        self.ensure_target(gpu, px);
        ctx.size = self.target_px;
        self.capture_tick(gpu);
        let ui_ms = lap();
        // A scene that asks for it pulls its input only now, just before its uploads: whatever
        // arrived while the UI was laid out reaches this frame (the spectrogram's latency).
        if ingest_late
            && self.active == ingesting
            && let SceneSlot::Ready(scene) = &mut self.slots[self.active]
        {
            scene.ingest(&ctx);
            ingest_ms += lap();
        }

        // Uploads (through the frame's uploader, into the frame's one encoder), then one compute
        // pass and the scene's render pass, both timed.
        let mut encoder = gpu
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("frame"),
            });
        if let SceneSlot::Ready(scene) = &mut self.slots[self.active] {
            let mut f = GpuFrame::new(gpu, &mut encoder, &mut self.uploader, self.frame);
            scene.prepare(&mut f, &ctx);
        }
        let upload_ms = lap();
        if let SceneSlot::Ready(scene) = &self.slots[self.active]
            && let Some(format) = scene.depth_format()
        {
            let size = self.target_px;
            if self
                .depth
                .as_ref()
                .is_none_or(|d| d.format != format || d.size != size)
            {
                let texture = gpu.device.create_texture(&wgpu::TextureDescriptor {
                    label: Some("scene:depth"),
                    size: wgpu::Extent3d {
                        width: size.0.max(1),
                        height: size.1.max(1),
                        depth_or_array_layers: 1,
                    },
                    mip_level_count: 1,
                    sample_count: 1,
                    dimension: wgpu::TextureDimension::D2,
                    format,
                    usage: wgpu::TextureUsages::RENDER_ATTACHMENT,
                    view_formats: &[],
                });
                let view = texture.create_view(&wgpu::TextureViewDescriptor {
                    label: Some("scene:depth:view"),
                    ..Default::default()
                });
                self.depth = Some(SceneDepth { format, size, view });
            }
        }
        let timed = match &mut self.timer {
            Some(t) => t.begin_frame(self.frame),
            None => false,
        };
        if let (SceneSlot::Ready(scene), Some(target)) =
            (&mut self.slots[self.active], &self.target)
        {
            {
                let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some("scene:compute"),
                    timestamp_writes: self.timer.as_ref().and_then(|t| t.compute_writes()),
                });
                scene.compute(&mut pass, &ctx);
            }
            {
                let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
                    label: Some("scene:render"),
                    color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                        view: &target.view,
                        depth_slice: None,
                        resolve_target: None,
                        ops: wgpu::Operations {
                            load: wgpu::LoadOp::Clear(scene.background()),
                            store: wgpu::StoreOp::Store,
                        },
                    })],
                    depth_stencil_attachment: scene.depth_format().and(self.depth.as_ref()).map(
                        |d| wgpu::RenderPassDepthStencilAttachment {
                            view: &d.view,
                            depth_ops: Some(wgpu::Operations {
                                load: wgpu::LoadOp::Clear(1.0),
                                store: wgpu::StoreOp::Discard,
                            }),
                            stencil_ops: None,
                        },
                    ),
                    timestamp_writes: self.timer.as_ref().and_then(|t| t.render_writes()),
                    occlusion_query_set: None,
                    multiview_mask: None,
                });
                scene.paint(&mut pass, &ctx);
            }
        } else if timed {
            // Nothing to time this frame: give the slot back unused.
            if let Some(t) = &mut self.timer {
                t.cancel();
            }
        }

        // The scene's GPU → CPU copies (statistics, levels) into the shared ring, after its passes.
        let kind = TAG_USER + self.active as u32;
        if let (SceneSlot::Ready(scene), true) =
            (&mut self.slots[self.active], self.target.is_some())
        {
            scene.record_readbacks(&gpu.device, &mut encoder, &mut self.readback, kind);
        }

        // egui on top, into the output.
        for (id, deltas) in &full.textures_delta.set {
            for delta in deltas {
                self.renderer
                    .update_texture(&gpu.device, &gpu.queue, *id, delta);
            }
        }
        let prims = self.egui_ctx.tessellate(full.shapes, ppp);
        let screen = egui_wgpu::ScreenDescriptor {
            size_in_pixels: [out.size.0, out.size.1],
            pixels_per_point: ppp,
        };
        let extra =
            self.renderer
                .update_buffers(&gpu.device, &gpu.queue, &mut encoder, &prims, &screen);
        {
            let pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
                label: Some("egui"),
                color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                    view: out.view,
                    depth_slice: None,
                    resolve_target: None,
                    ops: wgpu::Operations {
                        load: wgpu::LoadOp::Clear(wgpu::Color {
                            r: 0.05,
                            g: 0.05,
                            b: 0.06,
                            a: 1.0,
                        }),
                        store: wgpu::StoreOp::Store,
                    },
                })],
                depth_stencil_attachment: None,
                timestamp_writes: self.timer.as_mut().and_then(|t| t.ui_writes()),
                occlusion_query_set: None,
                multiview_mask: None,
            });
            let mut pass = pass.forget_lifetime();
            self.renderer.render(&mut pass, &prims, &screen);
        }
        if let Some(t) = &mut self.timer {
            t.resolve(&gpu.device, &mut encoder, &mut self.readback);
        }
        self.record_screenshots(gpu, &mut encoder, out.texture);
        for id in &full.textures_delta.free {
            self.renderer.free_texture(id);
        }
        let encode_ms = lap();
        self.uploader.finish();
        // The frame's one submit (egui's own upload command buffers first).
        #[allow(clippy::disallowed_methods)]
        gpu.queue
            .submit(extra.into_iter().chain(std::iter::once(encoder.finish())));
        self.uploader.after_submit();
        self.readback.after_submit();
        let submit_ms = lap();
        let times = FrameTimes {
            frame: self.frame,
            start,
            ingest_ms,
            update_ms,
            ui_ms,
            upload_ms,
            encode_ms,
            submit_ms,
            acquire_wait_ms: 0.0,
            present_ms: 0.0,
            bytes_uploaded: self.uploader.counters.bytes.saturating_sub(uploaded_before),
            tick,
        };
        self.frame += 1;
        (times, full.platform_output)
    }

    /// Records the frame's statistics after it was presented at `presented`. Never blocks: the
    /// readback ring is polled once (GPU times and screenshots that have arrived are handed out).
    pub fn end_frame(&mut self, gpu: &Gpu, times: &FrameTimes, presented: Instant) {
        let cpu_frame_ms = duration_ms(presented.duration_since(times.start));
        let present_interval_ms = match self.last_present {
            Some(p) => duration_ms(presented.duration_since(p)),
            None => cpu_frame_ms,
        };
        self.last_present = Some(presented);
        let device_reset = match self.reset_started.take() {
            Some(t) => {
                let ms = duration_ms(presented.saturating_duration_since(t));
                log::info!(
                    "GPU reset: first frame presented on the new device {ms:.1} ms after the loss was noticed"
                );
                self.device_reset_ms.push(ms);
                true
            }
            None => false,
        };
        if let SceneSlot::Ready(scene) = &mut self.slots[self.active] {
            scene.presented(presented);
        }
        self.live.push(present_interval_ms);
        self.run_frame_ms.push(present_interval_ms);
        self.memory.frame_ended(self.run_frame_ms.len() as u64);
        let gpu_times = self.drain_readbacks(gpu, false);
        if let Some(last) = gpu_times.last() {
            self.gpu_live = [last.compute_ms, last.render_ms, last.ui_ms.unwrap_or(0.0)];
        }
        let read_total = crate::gpu::readback::bytes_read_back_total();
        let bytes_read_back = read_total.saturating_sub(self.readback_mark);
        self.readback_mark = read_total;
        let scene = SCENES[self.active].id;
        if let Some(rec) = &mut self.recording {
            let time_ms = times
                .start
                .checked_duration_since(rec.start)
                .map_or(0.0, duration_ms);
            rec.pending.push_back(FrameRecord {
                frame: times.frame,
                scene,
                time_ms,
                ms_between_presents: present_interval_ms,
                cpu_busy_ms: times.cpu_busy_ms(),
                present_ms: times.present_ms,
                acquire_wait_ms: times.acquire_wait_ms,
                ingest_ms: times.ingest_ms,
                update_ms: times.update_ms,
                ui_ms: times.ui_ms,
                upload_ms: times.upload_ms,
                encode_ms: times.encode_ms,
                submit_ms: times.submit_ms,
                gpu_compute_ms: None,
                gpu_render_ms: None,
                gpu_ui_ms: None,
                steps: times.tick.steps,
                dropped_steps: times.tick.dropped_steps,
                dropped_sim_ms: times.tick.dropped_steps as f64 * self.clock.dt() * 1e3,
                bytes_uploaded: times.bytes_uploaded,
                bytes_read_back,
                device_reset,
            });
            // GPU times arrive 0–3 frames late (possibly for this very frame).
            attach_gpu_times(&mut rec.pending, &gpu_times);
            let mut failed = None;
            while let Some(front) = rec.pending.front() {
                let ready = front.gpu_compute_ms.is_some()
                    || times.frame.saturating_sub(front.frame) >= GPU_TIME_WAIT_FRAMES
                    || self.timer.is_none();
                if !ready {
                    break;
                }
                if let Some(row) = rec.pending.pop_front()
                    && let Err(e) = rec.recorder.push(&row)
                {
                    failed = Some(e.to_string());
                    break;
                }
            }
            if let Some(e) = failed {
                log::error!(
                    "recording to {}: {e}; recording stopped",
                    rec.path.display()
                );
                self.toast(format!("recording stopped: {e}"));
                self.recording = None;
            }
        }
    }

    /// Polls the readback ring once (or, with `wait`, waits for every copy in flight) and routes
    /// what arrived: GPU times are decoded and returned, screenshots go to the PNG writer, and
    /// copies of kind [`TAG_USER`] + i to scene i ([`Scene::readback_arrived`]).
    fn drain_readbacks(&mut self, gpu: &Gpu, wait: bool) -> Vec<PassTimes> {
        let mut gpu_times = Vec::new();
        let timer = self.timer.as_ref();
        let shots = &mut self.screenshots;
        let slots = &mut self.slots;
        let scene = SCENES[self.active].id;
        let mut saved = Vec::new();
        let route = |a: crate::gpu::readback::Arrived<'_>| match a.tag.kind {
            crate::gpu::readback::TAG_TIMING => {
                if let Some(t) = timer.and_then(|t| t.decode(a.tag.id, a.data)) {
                    gpu_times.push(t);
                }
            }
            TAG_SCREENSHOT => {
                if let Some(p) = shots.arrived(&a, scene) {
                    saved.push(p);
                }
            }
            kind => {
                let i = kind.wrapping_sub(TAG_USER) as usize;
                if let Some(SceneSlot::Ready(s)) = slots.get_mut(i) {
                    s.readback_arrived(&a);
                }
            }
        };
        if wait {
            self.readback.wait(&gpu.device, route);
        } else {
            self.readback.poll(&gpu.device, route);
        }
        for p in saved {
            self.toast(format!("saving {}", p.display()));
        }
        gpu_times
    }

    /// Saves a PNG of the output texture every frame into `dir` (`frame-NNNNNN.png`), through the
    /// readback ring and the PNG worker; `None` stops. Frames are dropped (counted) rather than
    /// waited for when the ring or the worker is behind.
    pub fn set_screenshot_dir(&mut self, dir: Option<PathBuf>) {
        self.screenshots.dir = dir;
    }

    /// Screenshots dropped so far (ring full or PNG worker behind).
    pub fn screenshots_dropped(&self) -> u64 {
        self.screenshots.writer.dropped() + self.readback.dropped()
    }

    /// Records this frame's screenshot copies of `output` into the frame's `encoder`, after the
    /// egui pass: the every-frame screenshot when a directory is set (dropped and counted when
    /// the PNG workers are behind), and the scene panel when "Save PNG" (F12) was asked for.
    /// Never waits. An output without `COPY_SRC` cannot be read back: said once a request.
    fn record_screenshots(
        &mut self,
        gpu: &Gpu,
        encoder: &mut wgpu::CommandEncoder,
        output: Option<&wgpu::Texture>,
    ) {
        let one_off = std::mem::take(&mut self.screenshot_request);
        let every = self.screenshots.dir.is_some();
        if !one_off && !every {
            return;
        }
        let Some(output) = output.filter(|t| t.usage().contains(wgpu::TextureUsages::COPY_SRC))
        else {
            if one_off {
                log::warn!("this surface cannot be read back (no COPY_SRC); PNG not saved");
                self.toast("PNG export failed: this surface cannot be read back".into());
            }
            return;
        };
        if every {
            let id = self.screenshots.next_id;
            self.screenshots.next_id += 1;
            let committed = self.readback.kind_busy(TAG_SCREENSHOT);
            if self.screenshots.writer.is_full() || committed >= self.screenshots.writer.capacity()
            {
                // The PNG workers could not take this frame by the time it arrived (every slot
                // is taken by frames queued, being written or still in flight): skip the copy,
                // count the drop.
                self.screenshots.writer.count_dropped();
            } else {
                self.copy_output(gpu, encoder, output, id);
            }
        }
        if one_off {
            // The scene panel (image, axes and overlays as shown), cropped from the output and
            // written as `vizdeck-<scene>-<unix time>.png` by the PNG worker 1–3 frames later.
            let id = self.screenshots.next_id;
            self.screenshots.next_id += 1;
            if self.copy_output(gpu, encoder, output, id) {
                self.screenshots.one_off.push((id, self.scene_rect_px));
            } else {
                log::error!("PNG export: the readback ring is busy; try again");
                self.toast("PNG export failed: the readback ring is busy".into());
            }
        }
    }

    fn copy_output(
        &mut self,
        gpu: &Gpu,
        encoder: &mut wgpu::CommandEncoder,
        output: &wgpu::Texture,
        id: u64,
    ) -> bool {
        let tag = Tag {
            kind: TAG_SCREENSHOT,
            id,
        };
        match self
            .readback
            .copy_texture(&gpu.device, encoder, output, tag)
        {
            Ok(copied) => copied,
            Err(e) => {
                log::warn!("screenshot: {e}");
                false
            }
        }
    }

    /// Writes every screenshot still in flight and waits for the PNG worker (end of a run).
    pub fn finish_screenshots(&mut self, gpu: &Gpu) -> (u64, Vec<String>) {
        self.drain_readbacks(gpu, true);
        let old = std::mem::replace(&mut self.screenshots.writer, screenshot_writer());
        old.finish()
    }

    /// Empties the overlay's statistics (window and HDR histogram) and the GPU bars.
    pub fn reset_stats(&mut self) {
        self.live.reset();
        self.gpu_live = [0.0; 3];
    }

    /// Arms a capture: starts recording after `capture.delay_s` (at once when 0); it stops by
    /// itself after `capture.duration_s` when that is positive.
    pub fn arm_capture(&mut self) {
        if self.recording.is_some() {
            return;
        }
        let delay = self.capture.delay_s.max(0.0);
        if delay > 0.0 {
            self.capture.start_at = Some(self.run_s + delay.min(86_400.0));
            self.toast(format!("recording starts in {delay:.1} s"));
        } else {
            self.start_recording();
        }
    }

    /// Seconds until an armed capture starts, if one is armed.
    pub fn capture_countdown(&self) -> Option<f64> {
        self.capture.start_at.map(|t| (t - self.run_s).max(0.0))
    }

    /// Starts or stops a capture whose time has come.
    fn capture_tick(&mut self, gpu: &Gpu) {
        let now = self.run_s;
        if self.capture.start_at.is_some_and(|t| now >= t) {
            self.capture.start_at = None;
            self.start_recording();
        }
        if self.capture.stop_at.is_some_and(|t| now >= t) {
            self.capture.stop_at = None;
            self.stop_recording(gpu);
        }
    }

    /// Starts frame-time recording into the next file name.
    pub fn start_recording(&mut self) {
        if self.recording.is_some() {
            return;
        }
        let path = self.next_record_path();
        match Recorder::create(&path) {
            Ok(recorder) => {
                log::info!("recording frame times to {}", path.display());
                self.toast(format!("recording to {}", path.display()));
                self.recording = Some(Recording {
                    path,
                    recorder,
                    start: Instant::now(),
                    pending: VecDeque::new(),
                });
                self.capture.start_at = None;
                self.capture.stop_at = (self.capture.duration_s > 0.0)
                    .then(|| self.run_s + self.capture.duration_s.min(86_400.0));
                self.recordings_made += 1;
            }
            Err(e) => {
                log::error!("{e}");
                self.toast(e.to_string());
            }
        }
    }

    /// Stops recording: waits for outstanding GPU times (briefly), writes every pending row,
    /// closes the file and prints its summary. Returns the summary.
    pub fn stop_recording(&mut self, gpu: &Gpu) -> Option<Summary> {
        self.capture.start_at = None;
        self.capture.stop_at = None;
        let mut rec = self.recording.take()?;
        let gpu_times = self.drain_readbacks(gpu, true);
        attach_gpu_times(&mut rec.pending, &gpu_times);
        for row in rec.pending.drain(..) {
            if let Err(e) = rec.recorder.push(&row) {
                log::error!("recording to {}: {e}", rec.path.display());
                break;
            }
        }
        match rec.recorder.finish() {
            Ok(summary) => {
                println!("recorded {}: {summary}", rec.path.display());
                self.toast(format!("saved {}", rec.path.display()));
                self.finished.push((rec.path.clone(), summary.clone()));
                Some(summary)
            }
            Err(e) => {
                log::error!("recording to {}: {e}", rec.path.display());
                None
            }
        }
    }

    /// Opens a file dropped onto the window: `.csv`/`.tsv`/`.txt` in the time-series scene,
    /// anything else as audio in the spectrogram, and shows that scene. On error the scene that
    /// was running keeps running and the message is shown.
    pub fn open_file(&mut self, gpu: &Gpu, path: std::path::PathBuf) {
        let ext = path
            .extension()
            .map(|e| e.to_string_lossy().to_lowercase())
            .unwrap_or_default();
        let (id, cfg) = if matches!(ext.as_str(), "csv" | "tsv" | "txt") {
            let mut cfg = self.cfg.clone();
            cfg.series_file = Some(path.clone());
            ("timeseries", cfg)
        } else {
            let mut cfg = self.cfg.clone();
            cfg.audio = crate::audio::AudioSelection::File(path.clone());
            ("spectrogram", cfg)
        };
        let Some(index) = crate::scene::index_of(id) else {
            return;
        };
        match (SCENES[index].create)(gpu, &cfg) {
            Ok(scene) => {
                self.insert_scene(index, scene);
                self.cfg = cfg;
                self.toast(format!("opened {}", path.display()));
            }
            Err(e) => {
                log::error!("{e}");
                self.toast(e.to_string());
            }
        }
    }

    /// Sets the file the next recording goes to (`None`: `vizdeck-stats-<unix time>.csv`); the
    /// numbering of later recordings restarts from it.
    pub fn set_record_path(&mut self, path: Option<PathBuf>) {
        self.record_path = path;
        self.recordings_made = 0;
    }

    /// Whether a recording is running.
    pub fn recording(&self) -> bool {
        self.recording.is_some()
    }

    fn next_record_path(&self) -> PathBuf {
        let base = self.record_path.clone().unwrap_or_else(|| {
            let secs = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0);
            PathBuf::from(format!("vizdeck-stats-{secs}.csv"))
        });
        if self.recordings_made == 0 && !(self.record_path.is_none() && base.exists()) {
            return base;
        }
        let stem = base
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "vizdeck-stats".into());
        let dir = base.parent().map(PathBuf::from).unwrap_or_default();
        (2..)
            .map(|n| dir.join(format!("{stem}-{n}.csv")))
            .find(|p| !p.exists())
            .unwrap_or(base)
    }

    /// Shows `msg` on the scene for a few seconds (a toast).
    pub fn toast(&mut self, msg: String) {
        self.toast = Some((msg, Instant::now()));
    }

    /// (Re)creates the scene texture when the wanted pixel size changes.
    fn ensure_target(&mut self, gpu: &Gpu, px: (u32, u32)) {
        // Never larger than the adapter allows (the output is clamped the same way).
        let max = gpu.device.limits().max_texture_dimension_2d;
        let px = (px.0.min(max), px.1.min(max));
        if self.target.is_some() && (self.target_px == px || px == (1, 1)) {
            return;
        }
        let texture = gpu.device.create_texture(&wgpu::TextureDescriptor {
            label: Some("scene:target"),
            size: wgpu::Extent3d {
                width: px.0,
                height: px.1,
                depth_or_array_layers: 1,
            },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: crate::scene::SCENE_FORMAT,
            usage: wgpu::TextureUsages::RENDER_ATTACHMENT
                | wgpu::TextureUsages::TEXTURE_BINDING
                | wgpu::TextureUsages::COPY_SRC,
            view_formats: &[],
        });
        let view = texture.create_view(&wgpu::TextureViewDescriptor {
            label: Some("scene:target:view"),
            ..Default::default()
        });
        let egui_id = match &self.target {
            Some(t) => {
                self.renderer.update_egui_texture_from_wgpu_texture(
                    &gpu.device,
                    &view,
                    wgpu::FilterMode::Nearest,
                    t.egui_id,
                );
                t.egui_id
            }
            None => {
                self.renderer
                    .register_native_texture(&gpu.device, &view, wgpu::FilterMode::Nearest)
            }
        };
        self.target = Some(SceneTarget {
            texture,
            view,
            egui_id,
        });
        self.target_px = px;
    }

    /// The scene texture of the last frame (tests read it back).
    pub fn scene_texture(&self) -> Option<&wgpu::Texture> {
        self.target.as_ref().map(|t| &t.texture)
    }

    /// Output format the egui renderer was built for.
    pub fn output_format(&self) -> wgpu::TextureFormat {
        self.output_format
    }

    /// Carries out one thing the UI asked for (see [`UiCommand`]); called once per command,
    /// in order, right after the UI of the frame.
    pub fn apply(&mut self, gpu: &Gpu, command: UiCommand) {
        match command {
            UiCommand::SwitchScene(i) => self.switch_to(i),
            UiCommand::SetOverlay(on) => self.overlay = on,
            UiCommand::SavePng => self.screenshot_request = true,
            UiCommand::ResetStats => self.reset_stats(),
            UiCommand::OpenCompare => self.compare.open = true,
            UiCommand::SetUploadStrategy(s) => self.set_upload_strategy(s),
            UiCommand::ToggleRecording => {
                if self.recording.is_some() {
                    self.stop_recording(gpu);
                } else if self.capture.start_at.take().is_some() {
                    self.toast("delayed capture cancelled".into());
                } else {
                    self.arm_capture();
                }
            }
            UiCommand::ArmCapture => self.arm_capture(),
            UiCommand::Quit => self.quit = true,
        }
    }

    /// The whole UI; returns the rect (points) the scene image occupies. What the menus and keys
    /// ask for is pushed onto `commands`.
    fn ui(
        &mut self,
        ui: &mut egui::Ui,
        tex_id: Option<egui::TextureId>,
        commands: &mut Vec<UiCommand>,
    ) -> egui::Rect {
        self.keys(ui, commands);
        crate::ui::menu_bar(self, ui, commands);
        let active = self.active;
        egui::Panel::left("scene-controls")
            .resizable(true)
            .default_size(270.0)
            .show(ui, |ui| {
                egui::ScrollArea::vertical().show(ui, |ui| match &mut self.slots[active] {
                    SceneSlot::Ready(scene) => scene.ui(ui),
                    SceneSlot::Failed(msg) => {
                        ui.heading(SCENES[active].title);
                        ui.colored_label(egui::Color32::LIGHT_RED, "This scene could not start:");
                        ui.colored_label(egui::Color32::LIGHT_RED, msg.as_str());
                    }
                    SceneSlot::NotCreated => {
                        ui.label("starting…");
                    }
                });
            });
        let mut rect = egui::Rect::NOTHING;
        egui::CentralPanel::default()
            .frame(egui::Frame::NONE)
            .show(ui, |ui| {
                rect = ui.available_rect_before_wrap();
                let response = ui.interact(
                    rect,
                    ui.scope_id().with(("scene-image", active)),
                    egui::Sense::click_and_drag(),
                );
                if let SceneSlot::Ready(scene) = &mut self.slots[active] {
                    scene.interact(&response, rect);
                }
                let painter = ui.painter_at(rect);
                match &self.slots[active] {
                    SceneSlot::Ready(scene) => {
                        if let Some(id) = tex_id {
                            painter.image(
                                id,
                                rect,
                                egui::Rect::from_min_max(
                                    egui::pos2(0.0, 0.0),
                                    egui::pos2(1.0, 1.0),
                                ),
                                egui::Color32::WHITE,
                            );
                        }
                        scene.overlay(&painter, rect);
                        if let Some(p) = scene.problem() {
                            painter.text(
                                rect.center_top() + egui::vec2(0.0, 30.0),
                                egui::Align2::CENTER_TOP,
                                p,
                                egui::FontId::proportional(15.0),
                                egui::Color32::LIGHT_RED,
                            );
                        }
                    }
                    SceneSlot::Failed(msg) => {
                        painter.text(
                            rect.center(),
                            egui::Align2::CENTER_CENTER,
                            format!("{} could not start:\n{msg}", SCENES[active].title),
                            egui::FontId::proportional(16.0),
                            egui::Color32::LIGHT_RED,
                        );
                    }
                    SceneSlot::NotCreated => {}
                }
                if self.overlay {
                    crate::ui::stats_overlay(self, &painter, rect);
                }
                if let Some((msg, at)) = &self.toast
                    && at.elapsed().as_secs_f32() < 4.0
                {
                    painter.text(
                        rect.center_bottom() - egui::vec2(0.0, 30.0),
                        egui::Align2::CENTER_BOTTOM,
                        msg,
                        egui::FontId::proportional(14.0),
                        egui::Color32::LIGHT_GREEN,
                    );
                }
            });
        rect
    }

    fn keys(&self, ui: &mut egui::Ui, commands: &mut Vec<UiCommand>) {
        let (f1, f9, quit, digit, f12) = ui.input(|i| {
            let digit = SCENES.iter().position(|s| {
                let key = match s.key {
                    '1' => egui::Key::Num1,
                    '2' => egui::Key::Num2,
                    _ => egui::Key::Num3,
                };
                i.key_pressed(key) && !i.modifiers.any()
            });
            (
                i.key_pressed(egui::Key::F1),
                i.key_pressed(egui::Key::F9),
                i.modifiers.command && i.key_pressed(egui::Key::Q),
                digit,
                i.key_pressed(egui::Key::F12),
            )
        });
        if ui.memory(|m| m.focused().is_some()) {
            return; // typing into a widget
        }
        if f1 {
            commands.push(UiCommand::SetOverlay(!self.overlay));
        }
        if f9 {
            commands.push(UiCommand::ToggleRecording);
        }
        if f12 {
            commands.push(UiCommand::SavePng);
        }
        if quit {
            commands.push(UiCommand::Quit);
        }
        if let Some(i) = digit {
            commands.push(UiCommand::SwitchScene(i));
        }
    }
}

/// A duration in ms from whole nanoseconds (prints short: 0.00017, not 0.00016999999999999999).
pub fn duration_ms(d: std::time::Duration) -> f64 {
    d.as_nanos() as f64 / 1e6
}

/// Puts GPU pass times on their rows.
fn attach_gpu_times(pending: &mut VecDeque<FrameRecord>, gpu_times: &[PassTimes]) {
    for g in gpu_times {
        if let Some(row) = pending.iter_mut().find(|r| r.frame == g.frame) {
            row.gpu_compute_ms = Some(g.compute_ms);
            row.gpu_render_ms = Some(g.render_ms);
            row.gpu_ui_ms = g.ui_ms;
        }
    }
}

impl Screenshots {
    /// A screenshot readback arrived: crop (F12) or keep whole (every frame) and hand it to the
    /// PNG worker. Returns the path of an F12 PNG.
    fn arrived(&mut self, a: &crate::gpu::readback::Arrived<'_>, scene: &str) -> Option<PathBuf> {
        let t = a.texture?;
        if !self.one_off.iter().any(|(id, _)| *id == a.tag.id) {
            // Every-frame screenshot: the worker reads the mapped buffer itself (no copy here).
            let dir = self.dir.as_ref()?;
            let path = dir.join(format!("frame-{:06}.png", a.tag.id));
            self.writer.submit_mapped(path, a.lend());
            return None;
        }
        let mut rgba = self.writer.buffer();
        a.rgba_into(&mut rgba);
        if let Some(i) = self.one_off.iter().position(|(id, _)| *id == a.tag.id) {
            let (_, (x, y, w, h)) = self.one_off.swap_remove(i);
            let (w, h) = (
                w.min(t.width.saturating_sub(x)),
                h.min(t.height.saturating_sub(y)),
            );
            if w == 0 || h == 0 {
                log::error!("PNG export: the scene panel is empty");
                return None;
            }
            let mut crop = Vec::with_capacity((w * h * 4) as usize);
            for row in y..y + h {
                let start = ((row * t.width + x) * 4) as usize;
                crop.extend_from_slice(&rgba[start..start + (w * 4) as usize]);
            }
            let secs = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0);
            let path = PathBuf::from(format!("vizdeck-{scene}-{secs}.png"));
            log::info!("saving {}", path.display());
            self.writer.submit(path.clone(), w, h, crop);
            return Some(path);
        }
        None
    }
}

/// The deck's readback ring: 12 buffers, of which screenshots may hold 8 (GPU timings and the
/// scenes' copies keep the rest).
fn new_readback_ring() -> ReadbackRing {
    let mut ring = ReadbackRing::new("readback:ring", 12);
    ring.limit_kind(TAG_SCREENSHOT, 8);
    ring
}

/// The PNG writer of the screenshots: a queue of 2 frames and one worker per spare core (the
/// frame loop and the driver keep two), 1 to 4.
fn screenshot_writer() -> PngWriter {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    PngWriter::with_workers(2, cores.saturating_sub(2).clamp(1, 4))
}
