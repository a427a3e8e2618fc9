//! Particles: a compute-shader simulation on ping-pong storage buffers, drawn as instanced
//! sprites straight from those buffers, in three modes ([`Mode`]): free particles under forces,
//! flocking with a GPU uniform grid rebuilt by counting sort every step, and the same flocking by
//! brute force (to validate the grid and measure against it).
//!
//! Each fixed step (dt = 1/120 s, at most [`crate::clock::MAX_STEPS`] per frame) is recorded
//! into the frame's compute pass ([`sim`]); the render pass interpolates between the last two
//! states with the clock's alpha ([`render`]). Statistics (kinetic energy, mean speed,
//! neighbour-count histogram) come from a GPU reduction read back through the deck's shared
//! [`ReadbackRing`](crate::gpu::readback::ReadbackRing), 1–3 frames late. The initial state and every emission are seeded, so runs with the
//! same seed and frame count give the same result. CPU references of every pass: [`cpu`].
//! Under `--publish` / `--follow` the steps' parameters travel and a follower runs exactly
//! them ([`share`]). Under `--share PATH` the scene draws what a producer process writes into
//! shared GPU memory instead of simulating ([`shared`]).

mod controls;
pub mod cpu;
pub mod render;
mod report;
mod saved;
pub mod shaders;
pub mod share;
pub mod shared;
pub mod sim;
mod stepping;
mod ui;

use glam::Vec3;

pub use controls::Controls;

pub use cpu::{
    ATTRACTORS, Neighbours, Particle, SimConsts, SplitMix64, Stats, StepParams, attractors_at,
    cpu_neighbours, cpu_step, initial_particles,
};
pub use render::{Camera, ColorBy, Renderer, ViewUniform};
pub use sim::{
    Mode, Sim, SimConfig, WORKGROUP, bytes_per_step, clamp_count, dispatch_size, max_count,
};

use super::{FrameCtx, Scene, SceneConfig, SceneError};
use crate::gpu::Gpu;
use crate::gpu::frame::GpuFrame;
pub use stepping::{SLOW_FRAME_S, StepRate};
use stepping::{StepClock, StepInputs};
pub use ui::PRESET_COUNTS;
use ui::PanelInputs;

/// Default particle count.
pub const DEFAULT_COUNT: u32 = 131_072;

/// The particle scene.
pub struct Particles {
    seed: u64,
    mode: Mode,
    sim: Sim,
    renderer: Renderer,
    controls: Controls,
    camera: Camera,
    auto_rotate: bool,
    color_by: ColorBy,
    sprite_size: f32,
    sim_time: f32,
    /// Simulation rate, clock ticks per step and the slow-frame cap ([`stepping`]).
    clock: StepClock,
    /// Paused (Space, side panel): no steps, the newest state drawn, the window idle.
    paused: bool,
    /// What the next step's parameters come from besides the controls ([`stepping`]).
    inputs: StepInputs,
    frame_params: Vec<StepParams>,
    mouse: Option<(Vec3, f32)>,
    aspect: f32,
    /// The side panel's count and mode being edited, and the rebuild asked for ([`ui`]).
    panel: PanelInputs,
    message: Option<String>,
    limits: wgpu::Limits,
    /// `--publish` / `--follow` state ([`share`]).
    share: share::Share,
    /// `--share PATH`: the producer's particles drawn instead of the simulation ([`shared`]).
    shared: Option<shared::SharedInput>,
}

impl Particles {
    /// Table constructor.
    pub fn create(gpu: &Gpu, cfg: &SceneConfig) -> Result<Box<dyn Scene>, SceneError> {
        let mut scene = Particles::with_mode(gpu, cfg.particles, cfg.particle_mode, cfg.seed);
        scene.set_step_rate(cfg.particle_rate);
        if scene.clock.cpu_adapter {
            scene.sim_mut().set_stats_every(sim::STATS_EVERY_CPU);
        }
        scene.set_following(cfg.following);
        if let Some(path) = cfg.share_for("particles") {
            let input =
                shared::SharedInput::new(gpu, path, scene.count()).map_err(SceneError::Other)?;
            scene.shared = Some(input);
        }
        Ok(Box::new(scene))
    }

    /// Free-mode scene with `count` particles from `seed` (see [`Particles::with_mode`]).
    pub fn new(gpu: &Gpu, count: u32, seed: u64) -> Particles {
        Particles::with_mode(gpu, count, Mode::Free, seed)
    }

    /// Creates the scene with `count` particles (clamped to what the adapter's storage binding
    /// and buffer sizes hold, with a notice) in `mode` from `seed`.
    pub fn with_mode(gpu: &Gpu, count: u32, mode: Mode, seed: u64) -> Particles {
        // Statistics come back through the deck's shared readback ring (record_readbacks).
        let sim = Sim::new(gpu, &SimConfig::new(count, mode, seed));
        let renderer = Renderer::new(gpu, &sim);
        let n = sim.count();
        let mut rng = SplitMix64(seed ^ 0xC0FF_EE00_D15E_A5E5);
        let curl_base = std::array::from_fn(|_| std::f32::consts::TAU * rng.next_f32());
        let message = sim.notice().map(str::to_string);
        Particles {
            seed,
            mode,
            sim,
            renderer,
            controls: Controls::for_count(n),
            camera: Camera::default(),
            auto_rotate: true,
            color_by: ColorBy::Speed,
            sprite_size: 0.004,
            sim_time: 0.0,
            clock: StepClock {
                step_rate: StepRate::Auto,
                cpu_adapter: gpu.is_cpu_adapter(),
                ticks_pending: 0,
                slow_frame: false,
                ticks_dropped_slow: 0,
            },
            paused: false,
            inputs: StepInputs {
                step_index: 0,
                emit_start: 0,
                emit_carry: 0.0,
                burst_pending: 0,
                curl_base,
            },
            frame_params: Vec::new(),
            mouse: None,
            aspect: 1.0,
            panel: PanelInputs {
                rebuild: None,
                count_input: n,
                mode_input: mode,
            },
            message,
            limits: gpu.device.limits(),
            share: share::Share::default(),
            shared: None,
        }
    }

    /// Rebuilds buffers and pipelines for `count` particles in `mode` (the simulation restarts
    /// from the seeded initial state). Never panics; an oversized count is clamped.
    pub fn reconfigure(&mut self, gpu: &Gpu, count: u32, mode: Mode) {
        let keep = (
            self.camera,
            self.auto_rotate,
            self.color_by,
            self.sprite_size,
            self.clock.step_rate,
        );
        let stats_every = self.sim.stats_every();
        let mut share = std::mem::take(&mut self.share);
        let shared = self.shared.take();
        *self = Particles::with_mode(gpu, count, mode, self.seed);
        self.shared = shared;
        (
            self.camera,
            self.auto_rotate,
            self.color_by,
            self.sprite_size,
            self.clock.step_rate,
        ) = keep;
        self.sim.set_stats_every(stats_every);
        // A new configuration: copies in flight describe the old one.
        share.epoch += 1;
        share.invalidate = true;
        self.share = share;
    }

    /// Makes the scene a follower (`--follow`): it runs only the steps a publisher's messages
    /// carry ([`Scene::follow`]), never its own clock's; count, mode, seed and forces are the
    /// publisher's.
    pub fn set_following(&mut self, following: bool) {
        self.share.following = following;
    }

    /// Whether a `--share` producer's frame has been copied (before it, nothing is drawn).
    fn shared_waiting(&self) -> bool {
        self.shared.as_ref().is_some_and(|s| !s.has_frame())
    }

    /// Whether the scene follows a publisher.
    pub fn following(&self) -> bool {
        self.share.following
    }

    /// How particles are drawn (sprites, point splat, opaque depth-tested sprites).
    pub fn set_draw_style(&mut self, style: render::Style) {
        self.renderer.style = style;
    }

    /// Colours particles by speed, density or age (the side panel's "colour by").
    pub fn set_color_by(&mut self, color: ColorBy) {
        self.color_by = color;
    }

    /// Whether the frame's last step splats as it goes ([`Renderer::fuse`], on by default) or a
    /// separate pass splats the stored state (the same image; for comparing the two).
    pub fn set_fused_splat(&mut self, fuse: bool) {
        self.renderer.fuse = fuse;
    }

    /// Asks for a rebuild at the next `prepare` (what the side panel does).
    pub fn request_reconfigure(&mut self, count: u32, mode: Mode) {
        self.panel.rebuild = Some((count, mode));
    }

    /// The simulation.
    pub fn sim(&self) -> &Sim {
        &self.sim
    }

    /// Mutable simulation (benchmarks turn the statistics off).
    pub fn sim_mut(&mut self) -> &mut Sim {
        &mut self.sim
    }

    /// Particle count actually simulated.
    pub fn count(&self) -> u32 {
        self.sim.count()
    }

    /// Mode simulated.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Current controls.
    pub fn controls(&self) -> &Controls {
        &self.controls
    }

    /// Replaces the controls (forces, emitter, flocking) from the next step on.
    pub fn set_controls(&mut self, c: Controls) {
        self.controls = c;
    }

    /// Queues a burst of `controls().burst` particles at the next step.
    pub fn burst(&mut self) {
        self.inputs.burst_pending = self
            .inputs
            .burst_pending
            .saturating_add(self.controls.burst);
    }

    /// Sets the mouse force point and strength (> 0 attract, < 0 repel), or `None`.
    pub fn set_mouse(&mut self, m: Option<(Vec3, f32)>) {
        self.mouse = m;
    }

    /// The camera.
    pub fn camera_mut(&mut self) -> &mut Camera {
        &mut self.camera
    }

    /// Parameters of the steps queued this frame (what `prepare` uploads), in order.
    pub fn frame_params(&self) -> &[StepParams] {
        &self.frame_params
    }

    /// Reads the newest state back (blocking; tests and tools only, never in the frame loop).
    pub fn read_state(&self, gpu: &Gpu) -> Vec<Particle> {
        self.sim.read_state(gpu)
    }

    /// Pauses or resumes the simulation: while paused no step runs (clock ticks are not
    /// counted either), the newest state is drawn, auto-rotation stands still (it follows the
    /// simulation time) and the scene does not ask for frames ([`Scene::animating`]).
    pub fn set_paused(&mut self, paused: bool) {
        self.paused = paused;
    }

    /// Whether the simulation is paused.
    pub fn paused(&self) -> bool {
        self.paused
    }

    /// Kinetic energy Σ ½|v|² (unit mass) of the newest statistics that came back.
    pub fn kinetic_energy(&self) -> Option<f64> {
        self.sim.latest_stats().map(|s| s.kinetic_energy)
    }
}

impl Scene for Particles {
    fn id(&self) -> &'static str {
        "particles"
    }

    fn saved_settings(&self) -> serde_json::Value {
        self.settings_json()
    }

    fn restore_settings(&mut self, saved: &serde_json::Value) -> Vec<String> {
        self.restore_json(saved)
    }

    fn fixed_update(&mut self, dt: f32) {
        self.fixed_step(dt);
    }

    fn record_readbacks(
        &mut self,
        device: &wgpu::Device,
        encoder: &mut wgpu::CommandEncoder,
        ring: &mut crate::gpu::readback::ReadbackRing,
        me: crate::gpu::readback::Consumer,
    ) {
        if std::mem::take(&mut self.share.invalidate) {
            ring.invalidate(me);
        }
        self.sim.record_stats_copy(device, encoder, ring, me);
        self.record_state_copy(device, encoder, ring, me);
    }

    fn readback_arrived(&mut self, arrived: &crate::gpu::readback::Arrived<'_>) {
        if let Some(&sim::StatsCopy(step)) = arrived.payload::<sim::StatsCopy>() {
            self.sim.stats_arrived(step, arrived.data);
        } else if let Some(&copy) = arrived.payload::<share::StateCopy>() {
            self.state_arrived(copy, arrived.data);
        }
    }

    fn publish(&mut self, keyframe: bool) -> Option<vizdeck_protocols::publish::Body> {
        self.publish_body(keyframe)
    }

    fn follow(&mut self, publisher: u64, body: vizdeck_protocols::publish::Body, attached: bool) {
        use vizdeck_protocols::publish::Body;
        if !self.share.following {
            return;
        }
        let view = match &body {
            Body::ParticlesKey(k) => k.view.as_ref(),
            Body::ParticlesDelta(d) => d.view.as_ref(),
            _ => None,
        };
        if attached && let Some(v) = view {
            self.apply_view(&v.clone());
        }
        self.follow_body(publisher, body);
    }

    fn prepare(&mut self, gpu: &mut GpuFrame<'_>, frame: &FrameCtx) {
        self.clock.slow_frame = frame.elapsed_s > SLOW_FRAME_S;
        let rebuild = self.panel.rebuild.take();
        // A follower's count, mode and steps are the publisher's (a saved count is dropped).
        let follower_stats = self.share.following.then(|| self.follow_plan(gpu));
        if let (Some((count, mode)), None) = (rebuild, follower_stats) {
            self.reconfigure(gpu.gpu(), count, mode);
        }
        self.sim
            .set_flocking(gpu, self.controls.radius, self.controls.max_speed);
        self.controls.radius = self.sim.consts().radius;
        if let Some(input) = &mut self.shared {
            // A producer's frame, copied on the GPU; no steps.
            let dst = &self.sim.state_buffers()[self.sim.cur()];
            let ready = input.prepare(gpu, dst);
            let stats = ready && self.sim.stats_due();
            self.sim.begin_frame_with_stats(gpu, &[], stats);
        } else {
            match follower_stats {
                Some(stats) => self
                    .sim
                    .begin_frame_with_stats(gpu, &self.frame_params, stats),
                None => self.sim.begin_frame(gpu, &self.frame_params),
            }
        }
        self.frame_params.clear();

        let (w, h) = (frame.size.0.max(1) as f32, frame.size.1.max(1) as f32);
        self.aspect = w / h;
        if self.auto_rotate {
            self.camera.yaw = self.sim_time * 0.1;
        }
        let proj = self.camera.proj(self.aspect);
        let view_proj = proj * self.camera.view();
        // Keep the total light roughly constant whatever the count and viewport.
        let intensity = (0.35 * (w * h) / (self.count().max(1) as f32 * 2.0)).clamp(0.04, 0.6);
        let u = ViewUniform {
            view_proj: view_proj.to_cols_array_2d(),
            proj_scale: [proj.x_axis.x, proj.y_axis.y, 2.0 / w, 2.0 / h],
            // A follower draws the newest state it ran.
            alpha: if self.share.following || self.shared.is_some() {
                1.0
            } else {
                self.step_alpha(frame.alpha)
            },
            size: self.sprite_size,
            min_px: 0.75,
            intensity,
            color_mode: match self.color_by {
                ColorBy::Speed => 0,
                ColorBy::Density => 1,
                ColorBy::Age => 2,
            },
            speed_scale: 0.9,
            density_scale: 1.0 / 40.0,
            interact: (self.mode != Mode::Free) as u32,
        };
        self.renderer.prepare(gpu, &u);
        self.renderer.prepare_splat(gpu, &self.sim, frame.size, &u);
    }

    fn recreate_gpu(&mut self, gpu: &Gpu) -> Result<(), SceneError> {
        // The particle state lived on the GPU only: the simulation restarts from the seed with
        // the same count, mode, controls, camera and draw style.
        let (count, mode, style, controls) = (
            self.sim.count(),
            self.mode,
            self.renderer.style,
            self.controls,
        );
        self.reconfigure(gpu, count, mode);
        self.renderer.style = style;
        self.controls = controls;
        if self.share.following {
            self.share.lost_state();
        }
        if let Some(old) = self.shared.take() {
            // The shared memory and semaphores went with the device: the old producer's socket
            // is closed (it sees vizdeck gone), and a new buffer is offered on the same path.
            let path = old.path().to_path_buf();
            drop(old);
            match shared::SharedInput::new(gpu, &path, count) {
                Ok(mut input) => {
                    input.mark_restarted();
                    self.shared = Some(input);
                }
                Err(e) => {
                    self.message = Some(format!(
                        "the GPU device was lost; sharing cannot start again: {e}"
                    ));
                }
            }
            return Ok(());
        }
        let restart =
            "the GPU device was lost and recreated: particle positions restarted from the seed";
        self.message = Some(match self.message.take() {
            Some(m) => format!("{m}; {restart}"),
            None => restart.to_string(),
        });
        Ok(())
    }

    fn depth_format(&self) -> Option<wgpu::TextureFormat> {
        (self.renderer.style == render::Style::Opaque).then_some(render::DEPTH_FORMAT)
    }

    fn compute(&mut self, pass: &mut wgpu::ComputePass<'_>, frame: &FrameCtx) {
        if self.shared_waiting() {
            return;
        }
        // The last step splats as it goes when this frame draws points; a frame without a
        // step splats the state as it stands.
        let fused = (self.sim.steps_this_frame() > 0)
            .then(|| self.renderer.fused_step(frame.frame))
            .flatten();
        self.sim.encode(pass, frame.frame, fused);
        if fused.is_none() {
            self.renderer.encode_splat(pass, frame.frame, &self.sim);
        }
    }

    fn paint(&self, pass: &mut wgpu::RenderPass<'_>, frame: &FrameCtx) {
        if self.shared_waiting() {
            return;
        }
        self.renderer.paint(pass, frame.frame, &self.sim);
    }

    /// A paused simulation stands still (a drag or zoom is input, which draws anyway).
    fn animating(&self) -> bool {
        self.share.following || self.shared.is_some() || !self.paused
    }

    fn interact(&mut self, response: &egui::Response, rect: egui::Rect) {
        self.pointer_input(response, rect);
    }

    fn ui(&mut self, ui: &mut egui::Ui) {
        self.panel_ui(ui);
    }

    fn metrics(&self) -> serde_json::Value {
        self.metrics_json()
    }

    fn problem(&self) -> Option<String> {
        let notice = self
            .shared
            .as_ref()
            .and_then(|s| s.notice())
            .or_else(|| self.share.notice.clone());
        match (&self.message, notice) {
            (Some(m), Some(n)) => Some(format!("{m}; {n}")),
            (m, n) => m.clone().or(n),
        }
    }
}

/// Every Rust type of this view mirrored by a WGSL struct ([`crate::gpu::mirror`]), this
/// view's line of [`crate::SCENES`].
pub fn wgsl_mirrors() -> Vec<crate::gpu::mirror::Mirror> {
    cpu::wgsl_mirrors()
        .into_iter()
        .chain(render::wgsl_mirrors())
        .collect()
}
