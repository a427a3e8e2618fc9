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

pub mod cpu;
pub mod render;
mod saved;
pub mod share;
pub mod shared;
pub mod sim;

use glam::{Vec2, Vec3};

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

/// Default particle count.
pub const DEFAULT_COUNT: u32 = 131_072;

/// With [`StepRate::Auto`] on a CPU adapter, a frame that took longer than this (seconds) makes
/// the next one run at most one step: the simulation then runs slower than real time instead of
/// each frame catching up with more steps and taking longer still (the fixed-timestep spiral:
/// 1,048,576 particles in a window on lavapipe ran at 4.2 FPS with up to 4 steps a frame).
pub const SLOW_FRAME_S: f64 = 1.0 / 30.0;

/// Simulation rate: fixed steps per second (`--particle-rate`, side panel). The deck's clock
/// ticks at 120 Hz ([`crate::clock::DT`]); at 60 Hz the scene runs one step of 2·dt every second
/// tick and renders with the interpolation alpha of its own step.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
pub enum StepRate {
    /// 60 Hz on a CPU adapter (lavapipe: every step is a pass over all particles
    /// on the CPU, 4.9 ms at 131,072 and 43 ms at 1,048,576 on the 2-core project machine),
    /// 120 Hz elsewhere.
    #[default]
    Auto,
    /// 120 steps per second (dt = 1/120 s).
    #[value(name = "120")]
    Hz120,
    /// 60 steps per second (dt = 1/60 s).
    #[value(name = "60")]
    Hz60,
}

impl StepRate {
    /// Clock ticks per simulation step on an adapter that is (`cpu`) or is not a CPU adapter:
    /// 1 (120 Hz) or 2 (60 Hz).
    pub fn ticks_per_step(self, cpu: bool) -> u32 {
        match self {
            StepRate::Hz120 => 1,
            StepRate::Hz60 => 2,
            StepRate::Auto if cpu => 2,
            StepRate::Auto => 1,
        }
    }
}
/// Counts offered in the side panel.
pub const PRESET_COUNTS: [u32; 6] = [16_384, 65_536, 262_144, 1_048_576, 4_194_304, 16_777_216];

/// User-adjustable forces, emitter and flocking weights (side panel).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Controls {
    /// Gravity along −y (units/s²).
    pub gravity: f32,
    /// Linear drag k (1/s).
    pub drag: f32,
    /// Attractors on.
    pub attractors: bool,
    /// Curl-noise strength (units/s²).
    pub curl_strength: f32,
    /// Curl-noise spatial frequency (1/unit).
    pub curl_frequency: f32,
    /// Emission rate (particles/s).
    pub emit_rate: f32,
    /// Emitter launch speed (units/s).
    pub emit_speed: f32,
    /// Emitter velocity spread (units/s).
    pub emit_spread: f32,
    /// Mean lifetime of emitted particles (s; 0 = immortal).
    pub lifetime: f32,
    /// Particles of one burst.
    pub burst: u32,
    /// Mouse force strength (units³/s²).
    pub mouse_strength: f32,
    /// Flocking cohesion weight.
    pub cohesion: f32,
    /// Flocking alignment weight.
    pub alignment: f32,
    /// Flocking separation weight.
    pub separation: f32,
    /// Flocking radius (world units; ≤ the grid cell size).
    pub radius: f32,
    /// Speed cap (units/s).
    pub max_speed: f32,
}

impl Controls {
    /// Defaults for `count` particles: emission replaces the population every 10 s.
    pub fn for_count(count: u32) -> Controls {
        Controls {
            gravity: 0.0,
            drag: 0.15,
            attractors: true,
            curl_strength: 0.1,
            curl_frequency: 2.0,
            emit_rate: count as f32 / 10.0,
            emit_speed: 0.41,
            emit_spread: 0.15,
            lifetime: 10.0,
            burst: (count / 20).max(1),
            mouse_strength: 0.05,
            cohesion: 1.0,
            alignment: 1.0,
            separation: 2.0,
            radius: sim::default_radius(count),
            max_speed: 3.0,
        }
    }
}

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
    step_index: u64,
    /// Simulation rate asked for, whether the adapter is a CPU one (what `Auto` means), and
    /// the clock ticks since the last step (0 or 1 at 60 Hz).
    step_rate: StepRate,
    cpu_adapter: bool,
    ticks_pending: u32,
    /// The last frame took longer than [`SLOW_FRAME_S`] (see there), and the clock ticks
    /// dropped so far because of it.
    slow_frame: bool,
    ticks_dropped_slow: u64,
    /// Paused (Space, side panel): no steps, the newest state drawn, the window idle.
    paused: bool,
    emit_start: u32,
    emit_carry: f32,
    burst_pending: u32,
    curl_base: [f32; 6],
    frame_params: Vec<StepParams>,
    mouse: Option<(Vec3, f32)>,
    aspect: f32,
    /// Requested (count, mode) to rebuild with at the next prepare.
    rebuild: Option<(u32, Mode)>,
    count_input: u32,
    mode_input: Mode,
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
        if scene.cpu_adapter {
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
            step_index: 0,
            step_rate: StepRate::Auto,
            cpu_adapter: gpu.is_cpu_adapter(),
            ticks_pending: 0,
            slow_frame: false,
            ticks_dropped_slow: 0,
            paused: false,
            emit_start: 0,
            emit_carry: 0.0,
            burst_pending: 0,
            curl_base,
            frame_params: Vec::new(),
            mouse: None,
            aspect: 1.0,
            rebuild: None,
            count_input: n,
            mode_input: mode,
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
            self.step_rate,
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
            self.step_rate,
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
        self.rebuild = Some((count, mode));
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
        self.burst_pending = self.burst_pending.saturating_add(self.controls.burst);
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

    /// Sets the simulation rate (takes effect at the next clock tick).
    pub fn set_step_rate(&mut self, rate: StepRate) {
        self.step_rate = rate;
        if self.ticks_pending >= self.ticks_per_step() {
            self.ticks_pending = 0;
        }
    }

    /// The simulation rate asked for.
    pub fn step_rate(&self) -> StepRate {
        self.step_rate
    }

    /// Clock ticks per simulation step on this adapter (1: 120 Hz, 2: 60 Hz).
    pub fn ticks_per_step(&self) -> u32 {
        self.step_rate.ticks_per_step(self.cpu_adapter)
    }

    /// Whether this frame runs at most one step: [`StepRate::Auto`] on a CPU adapter after a
    /// frame slower than [`SLOW_FRAME_S`].
    pub fn one_step_cap(&self) -> bool {
        self.step_rate == StepRate::Auto && self.cpu_adapter && self.slow_frame
    }

    /// Simulation steps per second on this adapter.
    pub fn steps_per_second(&self) -> f64 {
        1.0 / (crate::clock::DT * self.ticks_per_step() as f64)
    }

    /// The interpolation alpha between the last two simulation states for the clock's alpha
    /// `clock_alpha` (fraction of a clock tick): (ticks since the last step + clock alpha) /
    /// ticks per step, in [0, 1).
    pub fn step_alpha(&self, clock_alpha: f32) -> f32 {
        if self.paused {
            return 1.0;
        }
        let k = self.ticks_per_step() as f32;
        ((self.ticks_pending as f32 + clock_alpha) / k).clamp(0.0, 1.0)
    }

    /// Kinetic energy Σ ½|v|² (unit mass) of the newest statistics that came back.
    pub fn kinetic_energy(&self) -> Option<f64> {
        self.sim.latest_stats().map(|s| s.kinetic_energy)
    }

    /// Parameters of the next step (advances the emitter ring and the clock).
    fn next_params(&mut self, dt: f32) -> StepParams {
        let c = &self.controls;
        let n = self.sim.count();
        let mut emit = 0u32;
        if n > 0 {
            self.emit_carry += c.emit_rate.max(0.0) * dt;
            let whole = self.emit_carry.floor();
            self.emit_carry -= whole;
            emit = (whole.min(n as f32) as u32)
                .saturating_add(std::mem::take(&mut self.burst_pending))
                .min(n);
        }
        let emit_start = self.emit_start;
        if n > 0 {
            self.emit_start = ((self.emit_start as u64 + emit as u64) % n as u64) as u32;
        }
        let seed =
            SplitMix64(self.seed ^ self.step_index.wrapping_mul(0x9E37_79B9_7F4A_7C15)).next_u64();
        let t = self.sim_time;
        let tau = std::f32::consts::TAU;
        let ph = |i: usize, w: f32| (self.curl_base[i] + w * t).rem_euclid(tau);
        let mut attractors = attractors_at(t);
        if !c.attractors {
            for a in &mut attractors {
                a[3] = 0.0;
            }
        }
        let (mouse_pos, mouse_s) = self.mouse.unwrap_or((Vec3::ZERO, 0.0));
        let p = StepParams {
            attractors,
            gravity_drag: [0.0, -c.gravity, 0.0, c.drag],
            mouse: [mouse_pos.x, mouse_pos.y, mouse_pos.z, mouse_s],
            curl_a: [ph(0, 0.31), ph(1, -0.27), ph(2, 0.23), ph(3, -0.19)],
            curl_b: [ph(4, 0.17), ph(5, -0.13), c.curl_strength, c.curl_frequency],
            emitter: [1.2, 0.0, 0.0, c.emit_speed],
            emit_dir: [0.0, 0.0, 1.0, c.emit_spread],
            dt,
            softening: 0.02,
            emit_start,
            emit_count: emit,
            emit_seed: (seed >> 32) as u32,
            lifetime: c.lifetime,
            cohesion: c.cohesion,
            alignment: c.alignment,
            separation: c.separation,
            mouse_softening: 0.05,
            _pad: [0.0; 2],
        };
        self.sim_time += dt;
        self.step_index += 1;
        p
    }

    fn stats_ui(&self, ui: &mut egui::Ui) {
        match self.sim.latest_stats() {
            Some(s) => {
                ui.label(format!("kinetic energy: {:.4}", s.kinetic_energy));
                ui.label(format!("mean speed: {:.4}", s.mean_speed));
                ui.label(format!("live: {}", s.live));
                if self.mode != Mode::Free {
                    ui.label(format!(
                        "neighbours: mean {:.2}, max {}",
                        s.mean_neighbours, s.max_neighbours
                    ));
                    let max = s.histogram.iter().copied().max().unwrap_or(1).max(1);
                    for (b, &h) in s.histogram.iter().enumerate() {
                        if h == 0 {
                            continue;
                        }
                        let range = match b {
                            0 => "0".to_string(),
                            15 => "≥16384".to_string(),
                            _ => format!("{}–{}", 1u32 << (b - 1), (1u32 << b) - 1),
                        };
                        let bar = "█".repeat((h as f64 / max as f64 * 20.0).ceil() as usize);
                        ui.monospace(format!("{range:>11} {bar} {h}"));
                    }
                }
                ui.label(format!("(step {})", s.step));
                if self.sim.stats_every() > 1 {
                    ui.small(format!(
                        "every {}th frame here: a CPU adapter runs the reduction on the CPU",
                        self.sim.stats_every()
                    ));
                }
            }
            None => {
                ui.label("statistics: …");
            }
        }
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
        if self.share.following || self.shared.is_some() {
            // A follower steps only as the publisher's messages say (`prepare`).
            return;
        }
        if self.paused || self.frame_params.len() >= crate::clock::MAX_STEPS as usize {
            return;
        }
        if self.one_step_cap() && !self.frame_params.is_empty() {
            self.ticks_dropped_slow += 1;
            return;
        }
        let k = self.ticks_per_step();
        self.ticks_pending += 1;
        if self.ticks_pending < k {
            return;
        }
        self.ticks_pending = 0;
        let p = self.next_params(dt * k as f32);
        self.frame_params.push(p);
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

    fn publish(&mut self, keyframe: bool) -> Option<crate::publish::protocol::Body> {
        self.publish_body(keyframe)
    }

    fn follow(&mut self, publisher: u64, body: crate::publish::protocol::Body, attached: bool) {
        use crate::publish::protocol::Body;
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
        self.slow_frame = frame.elapsed_s > SLOW_FRAME_S;
        let rebuild = self.rebuild.take();
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
        let space = response.ctx.input(|i| i.key_pressed(egui::Key::Space));
        if space && response.ctx.memory(|m| m.focused().is_none()) {
            self.paused = !self.paused;
        }
        if response.dragged_by(egui::PointerButton::Primary) {
            let d = response.drag_delta();
            self.camera.orbit(Vec2::new(d.x, d.y));
            self.auto_rotate = false;
        }
        let (scroll, secondary, shift) = response.ctx.input(|i| {
            (
                i.smooth_scroll_delta.y,
                i.pointer.secondary_down(),
                i.modifiers.shift,
            )
        });
        if response.hovered() && scroll != 0.0 {
            self.camera.zoom(scroll);
        }
        self.mouse = None;
        if secondary
            && let Some(pos) = response.hover_pos()
            && rect.width() > 0.0
            && rect.height() > 0.0
        {
            let ndc = Vec2::new(
                (pos.x - rect.min.x) / rect.width() * 2.0 - 1.0,
                1.0 - (pos.y - rect.min.y) / rect.height() * 2.0,
            );
            if let Some(p) = self.camera.unproject(ndc, rect.width() / rect.height()) {
                let s = self.controls.mouse_strength;
                self.mouse = Some((p, if shift { -s } else { s }));
            }
        }
    }

    fn ui(&mut self, ui: &mut egui::Ui) {
        ui.heading("Particles");
        ui.label(format!(
            "{} particles, {} mode, seed {}",
            self.count(),
            self.mode.name(),
            self.seed
        ));
        ui.label(format!(
            "steps: {}   sim time: {:.2} s",
            self.sim.steps_total(),
            self.sim_time
        ));
        if let Some(input) = &self.shared {
            ui.label("drawing a producer's particles (--share): no simulation");
            let s = input.status();
            ui.label(format!(
                "producers: {}   frames complete: {}",
                s.producers, s.frames_complete
            ));
            if let Some(n) = input.notice() {
                ui.colored_label(egui::Color32::YELLOW, n);
            }
        } else if self.share.following {
            ui.label("following a publisher: its count, mode, forces and steps");
            if let Some(n) = &self.share.notice {
                ui.colored_label(egui::Color32::YELLOW, n);
            }
        }
        if self.shared.is_some() || self.share.following {
            // The particles come from elsewhere: no simulation controls.
            ui.separator();
            ui.strong("statistics (GPU)");
            self.stats_ui(ui);
            self.view_ui(ui);
            return;
        }
        ui.checkbox(&mut self.paused, "paused (Space)")
            .on_hover_text("no steps while paused; the window then draws only on input");
        if let Some(m) = &self.message {
            ui.colored_label(egui::Color32::YELLOW, m);
        }
        ui.separator();
        egui::ComboBox::from_label("mode")
            .selected_text(self.mode_input.name())
            .show_ui(ui, |ui| {
                for m in Mode::ALL {
                    ui.selectable_value(&mut self.mode_input, m, m.name());
                }
            });
        ui.horizontal(|ui| {
            ui.label("count");
            ui.add(egui::DragValue::new(&mut self.count_input).speed(1000.0));
        });
        ui.horizontal_wrapped(|ui| {
            for c in PRESET_COUNTS {
                let label = if c >= 1 << 20 {
                    format!("{}M", c >> 20)
                } else {
                    format!("{}k", c >> 10)
                };
                if ui.small_button(label).clicked() {
                    self.count_input = c;
                }
            }
        });
        let max = max_count(&self.limits, self.mode_input);
        if self.count_input > max {
            ui.colored_label(
                egui::Color32::YELLOW,
                format!("adapter limit in this mode: {max} (will clamp)"),
            );
        }
        if self.mode_input == Mode::Brute && self.count_input > 65_536 {
            ui.colored_label(egui::Color32::YELLOW, "brute force is O(N²): slow");
        }
        if ui.button("apply (restarts)").clicked() {
            self.request_reconfigure(self.count_input, self.mode_input);
        }
        ui.separator();
        ui.strong("statistics (GPU)");
        self.stats_ui(ui);
        ui.separator();
        ui.strong("forces");
        let c = &mut self.controls;
        ui.checkbox(&mut c.attractors, "attractors");
        ui.add(egui::Slider::new(&mut c.gravity, -2.0..=2.0).text("gravity"));
        ui.add(egui::Slider::new(&mut c.drag, 0.0..=2.0).text("drag (1/s)"));
        ui.add(egui::Slider::new(&mut c.curl_strength, 0.0..=2.0).text("curl noise"));
        ui.add(egui::Slider::new(&mut c.curl_frequency, 0.1..=10.0).text("curl frequency"));
        ui.add(
            egui::Slider::new(&mut c.mouse_strength, 0.0..=1.0)
                .text("mouse (right drag; shift repels)"),
        );
        ui.strong("emitter");
        ui.add(
            egui::Slider::new(&mut c.emit_rate, 0.0..=1.0e6)
                .logarithmic(true)
                .text("rate (/s)"),
        );
        ui.add(egui::Slider::new(&mut c.lifetime, 0.0..=60.0).text("lifetime (s)"));
        ui.add(egui::Slider::new(&mut c.emit_speed, 0.0..=3.0).text("speed"));
        ui.add(egui::Slider::new(&mut c.emit_spread, 0.0..=2.0).text("spread"));
        ui.horizontal(|ui| {
            ui.add(egui::DragValue::new(&mut c.burst).speed(100.0));
            if ui.button("burst").clicked() {
                self.burst_pending = self.burst_pending.saturating_add(c.burst);
            }
        });
        if self.mode != Mode::Free {
            ui.strong("flocking");
            ui.add(egui::Slider::new(&mut c.cohesion, 0.0..=10.0).text("cohesion"));
            ui.add(egui::Slider::new(&mut c.alignment, 0.0..=10.0).text("alignment"));
            ui.add(egui::Slider::new(&mut c.separation, 0.0..=10.0).text("separation"));
            let cell = self.sim.consts().origin[3];
            ui.add(egui::Slider::new(&mut c.radius, 0.001..=cell).text("radius"));
        }
        ui.add(egui::Slider::new(&mut c.max_speed, 0.1..=10.0).text("speed cap"));
        self.view_ui(ui);
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

impl Particles {
    /// The side panel's view section (colours, sprites, draw style, rate, camera).
    fn view_ui(&mut self, ui: &mut egui::Ui) {
        ui.separator();
        ui.strong("view");
        egui::ComboBox::from_label("colour by")
            .selected_text(format!("{:?}", self.color_by))
            .show_ui(ui, |ui| {
                ui.selectable_value(&mut self.color_by, ColorBy::Speed, "Speed");
                ui.selectable_value(&mut self.color_by, ColorBy::Density, "Density");
                ui.selectable_value(&mut self.color_by, ColorBy::Age, "Age");
            });
        ui.add(
            egui::Slider::new(&mut self.sprite_size, 0.0005..=0.05)
                .logarithmic(true)
                .text("sprite size"),
        );
        ui.horizontal(|ui| {
            ui.label("draw");
            use render::Style;
            let s = &mut self.renderer.style;
            ui.selectable_value(s, Style::Auto, "auto");
            ui.selectable_value(s, Style::Sprites, "sprites");
            ui.selectable_value(s, Style::Splat, "points");
            ui.selectable_value(s, Style::Opaque, "opaque");
        })
        .response
        .on_hover_text(if self.renderer.splat_from == 0 {
            "auto: one-pixel points accumulated by a compute pass (this is a CPU adapter: sprites cost fill rate)"
        } else {
            "auto: sprites below 1,048,576 particles, one-pixel points accumulated by a compute pass from there on"
        });
        if self.renderer.style == render::Style::Auto && self.renderer.splat_from == 0 {
            ui.small("auto draws points here: a CPU adapter (software rasterizer)");
        }
        ui.horizontal(|ui| {
            ui.label("rate");
            let mut r = self.step_rate;
            ui.selectable_value(&mut r, StepRate::Auto, "auto");
            ui.selectable_value(&mut r, StepRate::Hz120, "120 Hz");
            ui.selectable_value(&mut r, StepRate::Hz60, "60 Hz");
            if r != self.step_rate {
                self.set_step_rate(r);
            }
        })
        .response
        .on_hover_text(
            "simulation steps per second; the picture is interpolated between the last two steps",
        );
        if self.step_rate == StepRate::Auto && self.cpu_adapter {
            ui.small(
                "auto steps at 60 Hz here (a CPU adapter runs each step on the CPU), one a frame \
                 while frames take over 33 ms: slow motion rather than slower frames",
            );
        }
        ui.checkbox(&mut self.auto_rotate, "auto-rotate");
        if ui.button("reset camera").clicked() {
            self.camera = Camera::default();
        }
        ui.label("left drag: orbit · wheel: zoom");
    }

    /// The report's `particles` object.
    fn metrics_json(&self) -> serde_json::Value {
        let s = self.sim.latest_stats();
        let c = self.sim.consts();
        serde_json::json!({
            "count": self.count(),
            "seed": self.seed,
            "mode": self.mode.name(),
            // The draw style asked for, what this adapter's default made of it, and why.
            "draw_style": format!("{:?}", self.renderer.style),
            "drawn_as": if self.renderer.splatting() { "points" } else { "sprites" },
            "view": self.view_metrics(),
            "auto_splat_from": self.renderer.splat_from,
            "auto_reason": if self.renderer.splat_from == 0 {
                "CPU adapter: sprites are bound by fill rate, the point splat by the particle count"
            } else {
                "sprites below 1,048,576 particles, the point splat from there on"
            },
            // The simulation rate asked for, what it is on this adapter, and why.
            "step_rate": format!("{:?}", self.step_rate),
            "steps_per_second": self.steps_per_second(),
            // Clock ticks dropped by the one-step cap after slow frames (simulated time lost).
            "ticks_dropped_slow": self.ticks_dropped_slow,
            "rate_reason": if self.step_rate != StepRate::Auto {
                "set by the user"
            } else if self.cpu_adapter {
                "CPU adapter: each step is a pass over every particle on the CPU"
            } else {
                "GPU adapter: 120 Hz"
            },
            // The clamp notice of the count, and the restart after a GPU reset.
            "notice": self.message,
            "steps": self.sim.steps_total(),
            "paused": self.paused,
            "sim_time_s": self.sim_time,
            "kinetic_energy": s.map(|s| s.kinetic_energy),
            "mean_speed": s.map(|s| s.mean_speed),
            "live": s.map(|s| s.live),
            "mean_neighbours": s.map(|s| s.mean_neighbours),
            "max_neighbours": s.map(|s| s.max_neighbours),
            "neighbour_histogram": s.map(|s| s.histogram.to_vec()),
            "stats_at_step": s.map(|s| s.step),
            // The step count (in this configuration) the kinetic energy above belongs to.
            "kinetic_energy_step": s.map(|s| s.step),
            // [step, kinetic energy] of the last reductions that came back, oldest first (a
            // follower's and its publisher's are compared step by step).
            "kinetic_energy_history": self
                .sim
                .stats_history()
                .map(|(step, ke)| serde_json::json!([step, ke]))
                .collect::<Vec<_>>(),
            // `--publish` / `--follow`.
            "share": self.share_metrics(),
            // `--share PATH`: the producer, its frames, the notice (null without `--share`).
            "shared": self.shared.as_ref().map(|s| s.metrics()),
            // The reduction runs every n-th frame (4 on a CPU adapter, 1 elsewhere).
            "stats_every": self.sim.stats_every(),
            "radius": c.radius,
            "grid_cells": c.dims[3],
        })
    }
}
