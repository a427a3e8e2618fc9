//! Point clouds: the fourth scene. A cloud (a LAS/LAZ file indexed into an octree, a COPC file
//! read node by node through its own hierarchy, or the synthetic terrain) is streamed through
//! its octree: each frame the nodes in view are selected by screen-space size within the point
//! budget ([`vizdeck_pointcloud::lod`]), loader threads decode the missing ones
//! ([`vizdeck_pointcloud::loader`]) and quantize them (4 bytes a point in Morton-ordered pages of
//! 1024), the frame uploads them within a per-frame byte budget into the GPU pool
//! ([`crate::pointcloud::pool`]), evicting the least recently drawn, and the compute
//! rasterizer's quantized path draws the selected nodes' pages, each culled against the view
//! ([`crate::pointcloud::raster`], `main_q`); a node whose quantized cells would span more
//! than [`PRECISION_PX`] on screen is drawn from an exact copy (16 bytes a point, `main`).
//!
//! Nothing heavy runs on the frame thread: indexing a LAS/LAZ file runs on
//! `vizdeck-pointcloud-index`, node decoding on the loaders. In headless runs (simulated clock)
//! the frame waits for the nodes it asked for instead, so the same file, seed and view give the
//! same image whatever the machine's speed.
//!
//! This file holds the scene's state and data flow; the flags in `settings.rs`; opening a cloud
//! in `opening.rs`; the streaming of its nodes into the pools in `stream.rs`; the side panel,
//! pointer and keys, and the readout are in `ui.rs`; the GPU objects in `render.rs`. The GPU
//! side's parts: the pool of resident nodes with LRU eviction and the per-frame batch table
//! ([`pool`]), the compute rasterizer's visibility buffer (nearest point per pixel) and its CPU
//! reference ([`raster`]), that buffer and the resolve's image split into bands of rows within
//! the device's binding limits ([`pieces`]). The rasterizer's kernel table is the lab's
//! (`vizdeck-lab --kernels pointcloud`).

pub mod pieces;
pub mod pool;
pub mod raster;
pub mod shaders;

mod cache_panel;
mod legend;
mod opening;
mod record;
mod render;
mod settings;
mod share;
mod stream;
mod style;
mod ui;

use std::sync::Arc;
use std::sync::mpsc::{Receiver, TryRecvError};

use super::{FrameCtx, Scene, SceneConfig, SceneError};
use crate::gpu::Gpu;
use crate::gpu::frame::GpuFrame;
use crate::pointcloud::pool::DrawnPoint;
use crate::pointcloud::raster::VisibilityBuffer;
use crate::pointcloud::raster::{ColorMode, ResolveParams, ResolveVariant};
pub use legend::{ClassCounts, black_rgb_notice, class_name};
use opening::{Opened, open};
pub use record::record_frame;
pub use render::{CLASS_COLORS, CLASS_NAMES, Renderer, class_rgba};
pub use settings::{CloudSource, Settings};
pub use share::SETTLE_FRAMES;
use stream::{Budgets, Stream, exact_capacity, pool_capacity};
pub use stream::{POOL_BINDINGS, PRECISION_PX};
use style::{Style, color_tables};
use ui::Pointer;
use vizdeck_pointcloud::PointCloudError;
use vizdeck_pointcloud::camera::{Camera, CameraView, ViewPreset};
use vizdeck_pointcloud::index::Progress;
use vizdeck_pointcloud::lod::Selection;

/// Points of the default synthetic cloud.
pub(crate) const DEFAULT_SYNTHETIC: u64 = 2_000_000;
/// Default point budget on a CPU adapter (lavapipe rasterizes about 20 M points/s on 2 cores).
pub(crate) const BUDGET_CPU: u64 = 500_000;
/// Default point budget on a GPU (Potree's default is 1 M; a discrete GPU takes far more).
pub(crate) const BUDGET_GPU: u64 = 10_000_000;
/// Upload budget per frame on a CPU adapter, bytes.
pub(crate) const UPLOAD_CPU: u64 = 8 << 20;
/// Upload budget per frame on a GPU, bytes.
pub(crate) const UPLOAD_GPU: u64 = 96 << 20;
/// Target spacing between drawn points on screen, pixels: a node whose points are further
/// apart on screen is refined.
pub(crate) const TARGET_SPACING_PX: f64 = 1.5;

/// Where opening the cloud stands.
enum Phase {
    /// Following: no keyframe from the publisher yet (nothing opened).
    Waiting,
    /// Being opened on `vizdeck-pointcloud-index`: a LAS/LAZ/PLY file indexed (or its cache
    /// opened), or a remote COPC file's header and hierarchy fetched.
    Indexing {
        progress: Arc<Progress>,
        /// When opening started (for the rate and the time left).
        started: std::time::Instant,
        done: Receiver<Result<Opened, PointCloudError>>,
    },
    /// Streaming.
    Ready(Box<Stream>),
    /// The cloud cannot be shown (the message names the file and the problem).
    Failed(String),
}

/// The point read out under the pointer (or at `--pointcloud-probe`).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub(crate) struct Readout {
    /// Pixel (x, y) in the scene image.
    pub pixel: (u32, u32),
    /// File coordinates, exact.
    pub xyz: [f64; 3],
    /// ASPRS class.
    pub class: u8,
    /// Intensity.
    pub intensity: u16,
    /// Return number.
    pub return_number: u8,
    /// GPS time, where the cloud has it.
    pub gps_time: Option<f64>,
    /// Node holding the point (`level-x-y-z`).
    pub node: String,
}

/// Payload of a hover readback: the pixel and the frame it was recorded in.
struct HoverCopy {
    pixel: (u32, u32),
    frame: u64,
}

/// The scene.
pub struct PointCloud {
    settings: Settings,
    /// Seed of a synthetic cloud.
    seed: u64,
    phase: Phase,
    renderer: render::Renderer,
    camera: Option<Camera>,
    /// The camera as the last fit (first frame, Home, a preset) left it and the viewport size
    /// it was fitted to: while the camera is untouched, a viewport of another size (a window
    /// resized, a panel opened beside) is fitted again.
    fitted: Option<(Camera, (u32, u32))>,
    /// The point and upload budgets, and whether frames wait for their nodes ([`Budgets`]).
    budgets: Budgets,
    /// How the points are drawn: colour mode, radius, eye-dome lighting, hidden classes
    /// ([`Style`]).
    style: Style,
    selection: Selection,
    view: Option<CameraView>,
    size: (u32, u32),
    frame: u64,
    /// The pointer's and keys' state: the hovered pixel and its readout, fly keys
    /// ([`Pointer`]).
    pointer: Pointer,
    uploads_waiting: usize,
    message: Option<String>,
    /// A node drawn quantized this frame waits for its exact copy (the upload budget was
    /// spent): the next frame uploads it.
    exact_waiting: bool,
    /// The cache directory's listing and the side panel's clear buttons ([`cache_panel`]).
    cache_panel: cache_panel::CachePanel,
    /// `--publish` / `--follow` state ([`share`]).
    share: share::Share,
}

impl PointCloud {
    /// The scene table's constructor: opens the cloud of `cfg.pointcloud`.
    ///
    /// # Errors
    ///
    /// [`SceneError::Other`] naming the file and the problem when it cannot be opened (its
    /// header, for LAS/LAZ; header and hierarchy, for COPC), or a bad synthetic count.
    pub fn create(gpu: &Gpu, cfg: &SceneConfig) -> Result<Box<dyn Scene>, SceneError> {
        if cfg.following {
            return Ok(Box::new(PointCloud::following(
                gpu,
                &cfg.pointcloud,
                cfg.simulated_clock,
            )));
        }
        Ok(Box::new(PointCloud::new(
            gpu,
            &cfg.pointcloud,
            cfg.seed,
            cfg.simulated_clock,
        )?))
    }

    /// The scene for `settings` (a synthetic cloud from `seed`); `simulated_clock` makes frames wait for their nodes unless
    /// `settings.wait_for_nodes` says otherwise.
    ///
    /// # Errors
    ///
    /// As [`create`](PointCloud::create).
    pub fn new(
        gpu: &Gpu,
        settings: &Settings,
        seed: u64,
        simulated_clock: bool,
    ) -> Result<PointCloud, SceneError> {
        let phase = open(&settings.source, seed, &settings.cache_dir)?;
        let mut scene = PointCloud::with_phase(gpu, settings, seed, simulated_clock, phase);
        scene.share.source = Some(share::wire_source(&settings.source, seed));
        if scene.budgets.wait_for_nodes {
            scene.finish_indexing(true);
            if let Phase::Failed(e) = &scene.phase {
                return Err(SceneError::Other(e.clone()));
            }
        }
        scene.default_color();
        Ok(scene)
    }

    /// A scene that shows what a publisher sends (`--follow`): nothing is opened until its
    /// first keyframe names the cloud (`settings.source` is not opened; its cache directory,
    /// budget and view flags apply until the publisher's view replaces them).
    pub fn following(gpu: &Gpu, settings: &Settings, simulated_clock: bool) -> PointCloud {
        let mut scene = PointCloud::with_phase(gpu, settings, 0, simulated_clock, Phase::Waiting);
        scene.share.following = true;
        scene.share.own_budget = scene.budgets.budget;
        scene
    }

    /// The camera, once the cloud has been framed.
    pub fn camera(&self) -> Option<Camera> {
        self.camera
    }

    /// Replaces the camera (as the pointer and keys move it).
    pub fn set_camera(&mut self, camera: Camera) {
        self.camera = Some(camera);
    }

    /// The last prepared frame's view (its `view_proj`, rounded to f32, is what the raster
    /// passes project camera-relative points with).
    pub fn view(&self) -> Option<CameraView> {
        self.view
    }

    /// Shows or hides the points of ASPRS class `class` (the side panel's class legend).
    pub fn set_class_shown(&mut self, class: u8, shown: bool) {
        let c = usize::from(class);
        let word = &mut self.style.hidden_classes[c / 128][(c / 32) % 4];
        if shown {
            *word &= !(1 << (c % 32));
        } else {
            *word |= 1 << (c % 32);
        }
    }

    /// The last prepared frame's batch table decoded on the CPU: every point its raster passes
    /// project, by id, camera-relative as the GPU decodes it, with its attribute word (the
    /// input of [`cpu_visibility`](crate::pointcloud::raster::cpu_visibility), the reference
    /// of [`visibility`](PointCloud::visibility)).
    pub fn drawn_points(&self) -> Vec<DrawnPoint> {
        self.renderer.drawn()
    }

    /// The visibility buffer the last frame rasterized into (per pixel `!id` of the nearest
    /// point, [`DrawnPoint::id`]), once a frame has been prepared.
    pub fn visibility(&self) -> Option<&VisibilityBuffer> {
        self.renderer.target()
    }

    /// The scene's state around `phase`, from the flags.
    fn with_phase(
        gpu: &Gpu,
        settings: &Settings,
        seed: u64,
        simulated_clock: bool,
        phase: Phase,
    ) -> PointCloud {
        let cpu = gpu.is_cpu_adapter();
        let budget = settings
            .budget
            .unwrap_or(if cpu { BUDGET_CPU } else { BUDGET_GPU })
            .max(1);
        let capacity = pool_capacity(gpu, budget);
        PointCloud {
            settings: settings.clone(),
            seed,
            phase,
            renderer: render::Renderer::new(gpu, capacity, exact_capacity(budget)),
            camera: None,
            fitted: None,
            budgets: Budgets {
                budget,
                default_budget: if cpu { BUDGET_CPU } else { BUDGET_GPU },
                upload_budget: if cpu { UPLOAD_CPU } else { UPLOAD_GPU },
                wait_for_nodes: settings.wait_for_nodes.unwrap_or(simulated_clock),
            },
            style: Style {
                color: settings.color.unwrap_or(ColorMode::Elevation),
                radius: settings
                    .radius
                    .unwrap_or(1)
                    .min(crate::pointcloud::raster::MAX_RADIUS),
                edl: settings.edl.max(0.0),
                hidden_classes: [[0; 4]; 2],
                auto_color: None,
                color_notice: None,
                color_tables: color_tables(),
            },
            selection: Selection::default(),
            view: None,
            size: (1, 1),
            frame: 0,
            pointer: Pointer {
                hover_pixel: settings.probe,
                hover: None,
                pivot_on_readout: false,
                fly: [0.0; 3],
            },
            uploads_waiting: 0,
            message: None,
            exact_waiting: false,
            cache_panel: cache_panel::CachePanel::default(),
            share: share::Share::default(),
        }
    }

    /// The stream, once the cloud is open.
    fn stream(&self) -> Option<&Stream> {
        match &self.phase {
            Phase::Ready(s) => Some(s),
            _ => None,
        }
    }

    /// Fits the camera to the bounds (`lo`, `hi`) on the first frame, and again when the
    /// viewport's size changed while the camera stayed as the last fit left it.
    fn refit(&mut self, lo: [f64; 3], hi: [f64; 3], size: (u32, u32)) {
        match (&mut self.camera, self.fitted) {
            (None, _) => {
                let c = Camera::fitted(lo, hi, self.settings.view, size);
                self.camera = Some(c);
                self.fitted = Some((c, size));
            }
            (Some(c), Some((at, fitted_size))) if *c == at => {
                if fitted_size != size {
                    c.fit(lo, hi, size);
                    self.fitted = Some((*c, size));
                }
            }
            (Some(_), _) => self.fitted = None,
        }
    }

    /// Fits the camera to the cloud in the current viewport (Home; `preset`: from that view).
    fn fit_view(&mut self, preset: Option<ViewPreset>) {
        let (Some((lo, hi)), Some(c)) = (self.bounds(), &mut self.camera) else {
            return;
        };
        match preset {
            Some(p) => c.set_preset(p, lo, hi, self.size),
            None => c.fit(lo, hi, self.size),
        }
        self.fitted = Some((*c, self.size));
    }

    /// Moves from indexing to streaming when the index is done (`block`: waits for it, with a
    /// terminal progress bar on stderr while it takes long, [`crate::progress::Progress`]).
    fn finish_indexing(&mut self, block: bool) {
        let Phase::Indexing {
            done,
            progress,
            started,
        } = &self.phase
        else {
            return;
        };
        let result = if block {
            let mut bar = crate::progress::Progress::new("point cloud", 1000, "").in_percent();
            loop {
                match done.recv_timeout(std::time::Duration::from_millis(100)) {
                    Ok(r) => break Ok(r),
                    Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                        break Err(TryRecvError::Disconnected);
                    }
                    Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                        let (e, text) = progress.describe(started.elapsed().as_secs_f64());
                        // The bar's own time left is the fraction's; the line has the stage.
                        let stage = text.split(" · ").next().unwrap_or_default();
                        bar.update((e.fraction * 1000.0) as u64, stage);
                    }
                }
            }
        } else {
            done.try_recv()
        };
        self.phase = match result {
            Ok(Ok(opened)) => {
                let mut stream = Stream::new(opened.source);
                stream.cache = opened.cache;
                stream.http = opened.http;
                stream.class_totals = opened.classes;
                if stream.cache.is_some() {
                    self.cache_panel
                        .refresh(self.settings.cache_dir.clone(), block);
                }
                Phase::Ready(Box::new(stream))
            }
            Ok(Err(e)) => Phase::Failed(e.to_string()),
            Err(TryRecvError::Empty) => return,
            Err(TryRecvError::Disconnected) => {
                Phase::Failed("point cloud: the indexing thread stopped".to_string())
            }
        };
        if self.share.following
            && self.share.notice.is_none()
            && let Phase::Failed(e) = &self.phase
        {
            let e = e.clone();
            self.follow_failed(&e);
        }
        self.default_color();
    }

    /// RGB where the cloud has colour, else elevation, unless the user chose.
    fn default_color(&mut self) {
        if let Phase::Ready(s) = &self.phase
            && self.settings.color.is_none()
            && !self.share.view_applied
        {
            self.style.color = if s.source.info().has_color {
                ColorMode::Rgb
            } else {
                ColorMode::Elevation
            };
            self.style.auto_color = Some(self.style.color);
        }
    }

    /// The GPU side: rasterizer, pools, visibility buffer (the lab times its passes).
    pub fn renderer(&self) -> &Renderer {
        &self.renderer
    }

    /// Whether a LAS/LAZ file is still being indexed.
    pub fn indexing(&self) -> bool {
        matches!(self.phase, Phase::Indexing { .. })
    }

    /// The cloud's bounds, once open.
    fn bounds(&self) -> Option<([f64; 3], [f64; 3])> {
        self.stream().map(|s| s.bounds)
    }

    /// This frame's resolve parameters (the colour tables are the scene's, made once).
    fn resolve_params(&self) -> ResolveParams {
        let (class_colors, lut) = self.style.color_tables;
        let (lo, hi) = self.bounds().unwrap_or(([0.0; 3], [1.0; 3]));
        let intensity_max = self
            .stream()
            .map_or(u16::MAX, |s| s.source.info().intensity_max)
            .max(1);
        let view = self.view;
        ResolveParams {
            width: 1,
            height: 1,
            pitch: 1,
            _pad: 0,
            background: [0.02, 0.02, 0.03, 1.0],
            near: view.map_or(0.1, |v| v.near as f32),
            far: view.map_or(1.0, |v| v.far as f32),
            ortho: if view.is_some_and(|v| v.ortho) {
                1.0
            } else {
                0.0
            },
            edl_strength: self.style.edl,
            intensity_scale: 1.0 / f32::from(intensity_max),
            elev_min: 0.0,
            elev_scale: 1.0 / ((hi[2] - lo[2]).max(1e-6) as f32),
            _pad1: 0.0,
            class_colors,
            lut,
        }
    }

    /// The readout of the point of id `index` (`!id` from the visibility buffer).
    fn readout(&self, pixel: (u32, u32), index: u32, copied_at: u64) -> Option<Readout> {
        let (node, r, i) = self.renderer.locate(index)?;
        if r.uploaded > copied_at {
            return None; // the page changed hands after the copy
        }
        let s = self.stream()?;
        let data = &r.node.data;
        let word = *data.words.get(i)?;
        Some(Readout {
            pixel,
            xyz: *data.xyz.get(i)?,
            class: (word & 0xff) as u8,
            intensity: (word >> 16) as u16,
            return_number: ((word >> 8) & 0xf) as u8,
            gps_time: data.gps_time.as_ref().and_then(|g| g.get(i).copied()),
            node: s
                .source
                .hierarchy()
                .nodes
                .get(node as usize)
                .map(|n| n.name())
                .unwrap_or_default(),
        })
    }
}

impl Scene for PointCloud {
    fn id(&self) -> &'static str {
        "pointcloud"
    }

    fn saved_settings(&self) -> serde_json::Value {
        if self.share.view_applied {
            // The publisher's radius, strength and budget are not this user's to keep.
            return serde_json::Value::Null;
        }
        self.settings_json()
    }

    fn restore_settings(&mut self, saved: &serde_json::Value) -> Vec<String> {
        self.restore_json(saved)
    }

    /// Indexing (its progress), flying, or decoded nodes waiting for upload. Nodes being
    /// decoded keep the window drawing only where no waker is installed: with one (the
    /// window's), each loader wakes the frame loop when it hands a node over.
    fn animating(&self) -> bool {
        let waiting_for_loaders = match &self.phase {
            Phase::Ready(s) => !s.ready.is_empty() || (self.loading() && !s.woken),
            _ => self.loading(),
        };
        waiting_for_loaders
            || self.exact_waiting
            || self.pointer.fly != [0.0; 3]
            || self.cache_panel.busy()
    }

    fn prepare(&mut self, gpu: &mut GpuFrame<'_>, frame: &FrameCtx) {
        self.frame = frame.frame;
        self.size = frame.size;
        // A budget raised in the side panel beyond the pool: a pool of twice the new budget
        // (the nodes stream in again).
        let capacity = pool_capacity(gpu.gpu(), self.budgets.budget);
        if capacity > self.renderer.asked {
            self.renderer =
                render::Renderer::new(gpu.gpu(), capacity, exact_capacity(self.budgets.budget));
        }
        self.finish_indexing(self.budgets.wait_for_nodes);
        self.cache_panel.poll();
        let Some((lo, hi)) = self.bounds() else {
            return;
        };
        self.refit(lo, hi, frame.size);
        let Some(camera) = &mut self.camera else {
            return;
        };
        if self.pointer.fly != [0.0; 3] {
            let step = camera.distance * frame.elapsed_s;
            camera.fly(
                self.pointer.fly[0] * step,
                self.pointer.fly[1] * step,
                self.pointer.fly[2] * step,
            );
        }
        let center = glam::DVec3::from(lo).midpoint(glam::DVec3::from(hi));
        let radius = (glam::DVec3::from(hi) - glam::DVec3::from(lo)).length() * 0.5;
        let view = camera.view(frame.size, center, radius);
        self.view = Some(view);
        let left = self.stream_nodes(gpu);
        self.check_black_rgb();
        let draw = std::mem::take(&mut self.selection.draw);
        let (exact, quantized) = self.split_by_precision(gpu, &draw, &view, left);
        self.selection.draw = draw;
        let eye = view.eye;
        self.renderer
            .exact
            .write_batches(gpu, &exact, eye, self.frame);
        self.renderer.pool.write_batches(gpu, &quantized, eye);
        let mut mask = [[u32::MAX; 4]; 2];
        for (w, h) in mask
            .iter_mut()
            .flatten()
            .zip(self.style.hidden_classes.iter().flatten())
        {
            *w &= !h;
        }
        let resolve = self.resolve_params();
        let variant = ResolveVariant {
            mode: self.style.color,
            radius: self.style.radius,
            edl: self.style.edl > 0.0,
        };
        self.renderer.prepare(
            gpu,
            &view,
            mask,
            &resolve,
            variant,
            self.pointer.hover_pixel,
        );
    }

    fn compute(&mut self, pass: &mut wgpu::ComputePass<'_>, _frame: &FrameCtx) {
        self.renderer.compute(pass);
    }

    fn writes_target(&self) -> bool {
        self.renderer.writes_target(self.size)
    }

    fn write_target(&self, encoder: &mut wgpu::CommandEncoder, target: &wgpu::Texture) {
        self.renderer.write_target(encoder, target);
    }

    /// Nothing: the resolve runs in the compute pass and
    /// [`write_target`](Scene::write_target) copies its image.
    fn paint(&self, _pass: &mut wgpu::RenderPass<'_>, _frame: &FrameCtx) {}

    fn record_readbacks(
        &mut self,
        device: &wgpu::Device,
        encoder: &mut wgpu::CommandEncoder,
        ring: &mut crate::gpu::readback::ReadbackRing,
        me: crate::gpu::readback::Consumer,
    ) {
        let Some(pixel) = self.renderer.pick else {
            return;
        };
        ring.copy_buffer(
            device,
            encoder,
            &self.renderer.picked,
            0,
            8,
            me,
            HoverCopy {
                pixel,
                frame: self.frame,
            },
        );
    }

    fn readback_arrived(&mut self, arrived: &crate::gpu::readback::Arrived<'_>) {
        let Some(copy) = arrived.payload::<HoverCopy>() else {
            return;
        };
        let Some(bytes) = arrived.data.get(..4) else {
            return;
        };
        let v = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
        self.pointer.hover = if v == 0 {
            None
        } else {
            self.readout(copy.pixel, !v, copy.frame)
        };
        if self.pointer.pivot_on_readout
            && let (Some(r), Some(c)) = (&self.pointer.hover, &mut self.camera)
        {
            c.set_pivot(glam::DVec3::from(r.xyz));
            self.pointer.pivot_on_readout = false;
        }
    }

    fn ui(&mut self, ui: &mut egui::Ui) {
        ui::side_panel(self, ui);
    }

    fn interact(&mut self, response: &egui::Response, rect: egui::Rect) {
        ui::interact(self, response, rect);
    }

    fn overlay(&self, painter: &egui::Painter, rect: egui::Rect) {
        ui::overlay(self, painter, rect);
    }

    fn metrics(&self) -> serde_json::Value {
        let s = self.stream();
        let h = s.map(|s| s.source.hierarchy());
        let info = s.map(|s| s.source.info());
        let drawn_points: u64 = self.selection.points;
        let mut m = serde_json::json!({
            "source": info.map(|i| i.name.clone()),
            "kind": info.map(|i| i.kind),
            "warning": info.and_then(|i| i.warning.clone()),
            "error": match &self.phase { Phase::Failed(e) => Some(e.clone()), _ => None },
            "load_errors": s.map_or(0, |s| s.load_errors),
            "first_load_error": s.and_then(|s| s.first_error.clone()),
            "points_total": h.map_or(0, |h| h.total_points()),
            "points_resident": self.renderer.pool.points_resident(),
            "points_drawn": drawn_points,
            "bounds_min": info.map(|i| i.bounds.0),
            "bounds_max": info.map(|i| i.bounds.1),
            "bounds_from": info.map(|i| i.bounds_from),
            "rasterizer": self.renderer.raster.path().name(),
            "nodes_total": h.map_or(0, |h| h.nodes.len()),
            "nodes_visible": self.selection.visible,
            "nodes_drawn": self.selection.draw.len(),
            "nodes_resident": self.renderer.pool.len(),
            "nodes_evicted": self.renderer.pool.evicted,
            "nodes_wanted": self.selection.wanted.len(),
            "gpu_bytes": self.renderer.gpu_bytes(),
            "pool_points": self.renderer.pool.capacity(),
            "uploaded_bytes": self.renderer.pool.uploaded_bytes + self.renderer.exact.uploaded_bytes,
            "point_budget": self.budgets.budget,
            "budget_hit": self.selection.budget_hit,
            "lod_depth": self.selection.depth,
            "hierarchy_depth": h.map_or(0, |h| h.depth()),
            "decode_points_per_s": s.and_then(|s| (s.decode_seconds > 0.0).then(|| s.decoded_points as f64 / s.decode_seconds)),
            "index_decode_points_per_s": info.and_then(|i| i.decode_rate),
            "hierarchy_build_points_per_s": info.and_then(|i| i.build_rate),
            "color": self.style.color.name(),
            "point_radius": self.style.radius,
            "edl_strength": self.style.edl,
            "view": self.camera.map(|c| serde_json::json!({
                "pivot": c.pivot.to_array(), "yaw": c.yaw, "pitch": c.pitch,
                "distance": c.distance, "ortho": c.ortho,
            })),
            "hover": self.pointer.hover,
            "share": self.share_metrics(),
            "http": s.and_then(|s| s.http.as_ref()).map(|f| f.metrics()),
            "cache": s.and_then(|s| s.cache.as_ref()).map(|c| serde_json::json!({
                "path": c.path, "hit": c.hit,
            })),
        });
        // Beyond what one `json!` expands: the precision split of this frame's points.
        m["points_exact"] = self.renderer.exact.batched_points().into();
        m["points_quantized"] = self.renderer.pool.batched_points().into();
        m["nodes_exact"] = self.renderer.exact.len().into();
        m["color_notice"] = self.style.color_notice.clone().into();
        m["classes"] = self.class_counts().map_or(serde_json::Value::Null, |c| {
            let counts: serde_json::Map<String, serde_json::Value> = c
                .present()
                .into_iter()
                .map(|(c, n)| (c.to_string(), n.into()))
                .collect();
            serde_json::json!({ "exact": c.exact, "counts": counts })
        });
        m["cache_bytes"] = self
            .cache_panel
            .file_bytes(s.and_then(|s| s.cache.as_ref()).map(|c| c.path.as_path()))
            .into();
        m["cache_dir_bytes"] = self.cache_panel.summary().map(|c| c.total_bytes()).into();
        m
    }

    /// A follower that could not open the publisher's cloud (and showed nothing since) ends
    /// the run with that reason: the CLI exits non-zero.
    fn finish(&mut self, _gpu: &Gpu) -> Result<(), SceneError> {
        match (&self.phase, &self.share.notice) {
            (Phase::Failed(_), Some(n)) if self.share.following => {
                Err(SceneError::Other(n.clone()))
            }
            _ => Ok(()),
        }
    }

    fn problem(&self) -> Option<String> {
        match &self.phase {
            Phase::Failed(e) => Some(e.clone()),
            Phase::Ready(s) => s
                .source
                .info()
                .warning
                .clone()
                .or_else(|| s.first_error.clone())
                .or_else(|| self.message.clone())
                .or_else(|| self.style.color_notice.clone()),
            Phase::Indexing { .. } | Phase::Waiting => None,
        }
    }

    fn publish(&mut self, keyframe: bool) -> Option<vizdeck_protocols::publish::Body> {
        self.publish_body(keyframe)
    }

    fn follow(&mut self, _publisher: u64, body: vizdeck_protocols::publish::Body, attached: bool) {
        self.follow_body(body, attached);
    }

    fn recreate_gpu(&mut self, gpu: &Gpu) -> Result<(), SceneError> {
        let capacity = pool_capacity(gpu, self.budgets.budget);
        self.renderer = render::Renderer::new(gpu, capacity, exact_capacity(self.budgets.budget));
        self.message = Some(
            "the GPU device was lost and recreated: the visible nodes are loading again".into(),
        );
        Ok(())
    }
}

/// Every Rust type of this view mirrored by a WGSL struct ([`crate::gpu::mirror`]), this
/// view's line of [`crate::SCENES`].
pub fn wgsl_mirrors() -> Vec<crate::gpu::mirror::Mirror> {
    raster::wgsl_mirrors()
}
