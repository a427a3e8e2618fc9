//! The GPU simulation: ping-pong particle buffers and every compute pass of a fixed step, in the
//! three modes, plus the statistics reduction and its asynchronous readback ring.
//!
//! One step, recorded into the frame's compute pass:
//! - grid mode: clear cell counts → atomic histogram (cell + rank per particle) → multi-level
//!   exclusive scan of the counts (cell starts) → scatter into cell order → flocking sums from the
//!   27 adjacent cells;
//! - brute mode: flocking sums over all pairs (tiled through workgroup memory);
//! - every mode: integrate (forces, emitter, flocking, drag, speed cap) `src → dst`.
//!
//! wgpu puts a barrier between dispatches that touch the same storage buffer, so the passes see
//! each other's writes in order.
//!
//! Files: this one holds the constants, the mode, the sizing rules, the configuration and the
//! `Sim` type with its accessors; `build.rs` creates the buffers and pipelines, `step.rs`
//! records a frame's steps, `readback.rs` brings statistics and state back to the CPU.

mod build;
mod readback;
mod step;
pub use step::FusedStep;

pub use readback::gpu_exclusive_scan;

use super::cpu;
use super::cpu::{Neighbours, Particle, SimConsts, Stats};
use crate::gpu::frame::GpuFrame;
use crate::gpu::upload::PingPong;

const COMPUTE: wgpu::ShaderStages = wgpu::ShaderStages::COMPUTE;

/// Threads per workgroup of the per-particle passes.
pub const WORKGROUP: u32 = 64;
/// Byte stride of one step's parameters in the uniform buffer (dynamic offsets need 256).
pub(crate) const PARAM_STRIDE: u64 = 256;
/// Elements scanned per workgroup by `scan_blocks.wgsl`.
pub(crate) const SCAN_BLOCK: u32 = 512;
/// Half side of the grid box (world units): the grid covers [−B, B]³; outside, positions clamp.
pub(crate) const GRID_HALF_SIDE: f32 = 2.5;
/// Most cells per grid axis.
pub(crate) const GRID_MAX_DIM: u32 = 256;
/// Tile size of the brute-force pass.
const BRUTE_TILE: u32 = 128;
/// Particles per invocation of the reduction (`ITEMS` in stats_reduce.wgsl).
const STATS_ITEMS: u32 = 64;
/// Particles per workgroup of the reduction (64 invocations × [`STATS_ITEMS`]).
const STATS_WG: u32 = 64 * STATS_ITEMS;

/// [`Sim::set_stats_every`] on a `DeviceType::Cpu` adapter.
pub(crate) const STATS_EVERY_CPU: u32 = 4;

/// Simulation mode (`--particle-mode`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Free particles under forces (no interaction).
    #[default]
    Free,
    /// Flocking with neighbours found through a uniform grid built by counting sort each step.
    Grid,
    /// The same flocking by brute force over all pairs, O(N²).
    Brute,
}

impl Mode {
    /// All modes, in menu order.
    pub const ALL: [Mode; 3] = [Mode::Free, Mode::Grid, Mode::Brute];
    /// Lower-case name (the flag value).
    pub fn name(self) -> &'static str {
        match self {
            Mode::Free => "free",
            Mode::Grid => "grid",
            Mode::Brute => "brute",
        }
    }
    /// Bytes of per-particle storage the largest binding needs (sets the count limit).
    pub fn bytes_per_particle_binding(self) -> u64 {
        match self {
            Mode::Free => std::mem::size_of::<Particle>() as u64,
            Mode::Grid | Mode::Brute => std::mem::size_of::<Neighbours>() as u64,
        }
    }
}

pub use crate::gpu::layout::fold;

/// Workgroup counts for `n` items at [`WORKGROUP`] threads each (see [`fold`]).
pub fn dispatch_size(n: u32) -> (u32, u32) {
    fold(n.div_ceil(WORKGROUP))
}

/// Largest particle count the adapter's storage binding and buffer sizes hold in `mode`.
pub fn max_count(limits: &wgpu::Limits, mode: Mode) -> u32 {
    let bytes = limits
        .max_storage_buffer_binding_size
        .min(limits.max_buffer_size);
    (bytes / mode.bytes_per_particle_binding()).min(u32::MAX as u64) as u32
}

/// `requested` clamped to [`max_count`], with the message to show when it was clamped.
pub fn clamp_count(limits: &wgpu::Limits, mode: Mode, requested: u32) -> (u32, Option<String>) {
    let max = max_count(limits, mode);
    if requested > max {
        (
            max,
            Some(format!(
                "{requested} particles do not fit this adapter in {} mode; clamped to {max}",
                mode.name()
            )),
        )
    } else {
        (requested, None)
    }
}

/// Default flocking radius for `n` particles: about 20 neighbours in the initial disc
/// (volume ≈ 3.2 units³: ρ·4/3·π·r³ = 20 ⇒ r ≈ 2.48·N^(−1/3)), within 0.01 … 0.5.
pub(crate) fn default_radius(n: u32) -> f32 {
    (2.48 * (n.max(1) as f32).powf(-1.0 / 3.0)).clamp(0.01, 0.5)
}

/// Grid constants for `count` particles, flocking radius `radius` and speed cap `max_speed`:
/// cell size = max(r, 2B/256) so the 27 cells around a particle hold every neighbour.
pub(crate) fn make_consts(count: u32, mode: Mode, radius: f32, max_speed: f32) -> SimConsts {
    let side = 2.0 * GRID_HALF_SIDE;
    let cell = radius.max(side / GRID_MAX_DIM as f32);
    let dim = ((side / cell).ceil() as u32).clamp(1, GRID_MAX_DIM);
    SimConsts {
        origin: [-GRID_HALF_SIDE, -GRID_HALF_SIDE, -GRID_HALF_SIDE, cell],
        dims: [dim, dim, dim, dim * dim * dim],
        count,
        radius,
        max_speed,
        interact: (mode != Mode::Free) as u32,
    }
}

/// Sizes of the scan levels for `n` elements: n, ⌈n/512⌉, … down to 1.
pub fn scan_levels(n: u32) -> Vec<u32> {
    let mut v = vec![n.max(1)];
    while *v.last().unwrap_or(&1) > 1 {
        let last = *v.last().unwrap_or(&1);
        v.push(last.div_ceil(SCAN_BLOCK));
    }
    if v.len() == 1 {
        v.push(1);
    }
    v
}

/// Bytes one step moves in `mode` with `n` particles and `cells` grid cells, counting each
/// buffer a pass touches once (compulsory traffic; caches make repeated neighbour reads cheaper,
/// brute force re-reads tiles from cache N/128 times and is counted once):
/// - integrate: read 32 B + write 32 B per particle (+ 48 B neighbour sums when interacting);
/// - grid: clear 4·(C+1); histogram read 32 + write 8 + atomic 8; scan 2 × (read + write)
///   4·(C+1) (+ the small upper levels, ignored); scatter read 32 + 8 + 4, write 32; neighbours
///   read 32 (sorted) + 27 cells × 8 (starts), write 48;
/// - brute: read 32 + write 48.
pub fn bytes_per_step(mode: Mode, n: u64, cells: u64) -> u64 {
    let integrate = 64 * n;
    match mode {
        Mode::Free => integrate,
        Mode::Grid => {
            let c = cells + 1;
            integrate + 48 * n + 4 * c + 48 * n + 16 * c + 76 * n + (32 + 27 * 8 + 48) * n
        }
        Mode::Brute => integrate + 48 * n + (32 + 48) * n,
    }
}

/// What to simulate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SimConfig {
    /// Requested particle count (clamped to the adapter).
    pub count: u32,
    /// Mode.
    pub mode: Mode,
    /// Seed of the initial state.
    pub seed: u64,
    /// Flocking radius (None: [`default_radius`]).
    pub radius: Option<f32>,
    /// Speed cap (world units / s).
    pub max_speed: f32,
}

impl SimConfig {
    /// `count` particles in `mode` from `seed`, default radius, speed cap 3.
    pub fn new(count: u32, mode: Mode, seed: u64) -> SimConfig {
        SimConfig {
            count,
            mode,
            seed,
            radius: None,
            max_speed: 3.0,
        }
    }
}

struct Grid {
    clear_pipeline: wgpu::ComputePipeline,
    clear_group: wgpu::BindGroup,
    hist_pipeline: wgpu::ComputePipeline,
    /// [src]
    hist_groups: [wgpu::BindGroup; 2],
    scan_pipeline: wgpu::ComputePipeline,
    add_pipeline: wgpu::ComputePipeline,
    /// (elements, scan group, add group) per level
    levels: Vec<(u32, wgpu::BindGroup, wgpu::BindGroup)>,
    scatter_pipeline: wgpu::ComputePipeline,
    /// [src]
    scatter_groups: [wgpu::BindGroup; 2],
    nb_pipeline: wgpu::ComputePipeline,
    nb_group: wgpu::BindGroup,
    counts: wgpu::Buffer,
    _keep: Vec<wgpu::Buffer>,
}

struct StatsPass {
    clear_group: wgpu::BindGroup,
    reduce_pipeline: wgpu::ComputePipeline,
    /// [cur]
    reduce_groups: [wgpu::BindGroup; 2],
    buffer: wgpu::Buffer,
    /// Step of the reduction this frame records, waiting for `record_stats_copy`.
    to_copy: Option<u64>,
    latest: Option<Stats>,
    /// (step, kinetic energy) of the last [`STATS_HISTORY`] reductions that came back, oldest
    /// first.
    history: std::collections::VecDeque<(u64, f64)>,
}

/// Reductions kept in [`Sim::stats_history`].
pub(crate) const STATS_HISTORY: usize = 64;

/// Payload of a statistics readback: the step whose state the reduction summed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct StatsCopy(pub u64);

/// The GPU particle simulation (see the module docs).
pub struct Sim {
    mode: Mode,
    consts: SimConsts,
    notice: Option<String>,
    particles: [wgpu::Buffer; 2],
    sums: wgpu::Buffer,
    consts_buf: wgpu::Buffer,
    step_params: PingPong,
    integrate_pipeline: wgpu::ComputePipeline,
    integrate_layout: wgpu::BindGroupLayout,
    /// [slot][src]
    integrate_groups: [[wgpu::BindGroup; 2]; 2],
    params_generation: u64,
    grid: Option<Grid>,
    brute: Option<(wgpu::ComputePipeline, [wgpu::BindGroup; 2])>,
    clear_pipeline: wgpu::ComputePipeline,
    stats: StatsPass,
    stats_enabled: bool,
    /// The reduction runs every `stats_every`-th frame (1: every frame).
    stats_every: u32,
    /// Frames begun so far, and whether this one reduces.
    frames_begun: u64,
    stats_now: bool,
    cur: usize,
    src_at_frame_start: usize,
    steps_this_frame: u32,
    steps_total: u64,
}

impl Sim {
    /// Mode simulated.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Particle count actually simulated.
    pub fn count(&self) -> u32 {
        self.consts.count
    }

    /// Grid and flocking constants.
    pub fn consts(&self) -> &SimConsts {
        &self.consts
    }

    /// Why the count was clamped, if it was.
    pub fn notice(&self) -> Option<&str> {
        self.notice.as_deref()
    }

    /// Steps run so far.
    pub fn steps_total(&self) -> u64 {
        self.steps_total
    }

    /// Turns the per-frame statistics reduction on or off (benchmarks of the bare step).
    pub fn set_stats_enabled(&mut self, on: bool) {
        self.stats_enabled = on;
    }

    /// Runs the statistics reduction on every `n`-th frame only (`n` ≥ 1; 1: every frame, the
    /// default). The scene uses [`STATS_EVERY_CPU`] on a CPU adapter, where the reduction is a
    /// pass over every particle on the CPU (15 ms at 1,048,576 on lavapipe): the side panel's
    /// figures then refresh at 15 Hz instead of 60.
    pub fn set_stats_every(&mut self, n: u32) {
        self.stats_every = n.max(1);
    }

    /// Every how many frames the statistics reduction runs.
    pub fn stats_every(&self) -> u32 {
        self.stats_every
    }

    /// Changes the flocking radius (clamped to the cell size, so the grid stays valid) and
    /// the speed cap; takes effect from the next submitted step.
    pub fn set_flocking(&mut self, gpu: &mut GpuFrame<'_>, radius: f32, max_speed: f32) {
        let r = radius.clamp(1e-4, self.consts.origin[3]);
        let s = max_speed.max(1e-3);
        if r != self.consts.radius || s != self.consts.max_speed {
            self.consts.radius = r;
            self.consts.max_speed = s;
            gpu.write_pod(&self.consts_buf, 0, &self.consts);
        }
    }

    /// Buffers `[previous, current]` of the newest state after this frame's steps (for drawing).
    pub fn draw_buffers(&self) -> [&wgpu::Buffer; 2] {
        [&self.particles[self.cur ^ 1], &self.particles[self.cur]]
    }

    /// Index (0/1) of the buffer holding the newest state.
    pub fn cur(&self) -> usize {
        self.cur
    }

    /// The integrate pass's bind group layout (group 0 of every pipeline that integrates a
    /// step, [`FusedStep`] included).
    pub fn integrate_layout(&self) -> &wgpu::BindGroupLayout {
        &self.integrate_layout
    }

    /// Steps recorded this frame (by the last `begin_frame`).
    pub fn steps_this_frame(&self) -> u32 {
        self.steps_this_frame
    }

    /// Both state buffers.
    pub fn state_buffers(&self) -> &[wgpu::Buffer; 2] {
        &self.particles
    }

    /// The neighbour sums buffer (one [`Neighbours`] per particle in grid/brute mode).
    pub fn sums_buffer(&self) -> &wgpu::Buffer {
        &self.sums
    }

    /// Newest statistics that came back from the GPU (1–3 frames late), if any.
    pub fn latest_stats(&self) -> Option<&Stats> {
        self.stats.latest.as_ref()
    }

    /// (step, kinetic energy Σ ½|v|²) of the last [`STATS_HISTORY`] reductions that came back,
    /// in the order they arrived (a follower and its publisher compare them step by step).
    pub fn stats_history(&self) -> impl Iterator<Item = (u64, f64)> + '_ {
        self.stats.history.iter().copied()
    }

    /// Bytes of one state buffer: count × 32.
    pub fn state_bytes(&self) -> u64 {
        self.consts.count as u64 * std::mem::size_of::<Particle>() as u64
    }

    /// Replaces the state with `bytes` (particles in [`Particle`]'s layout; at most
    /// [`count`](Sim::count) of them, a shorter state fills the first ones) as the state after
    /// step `step`: both state buffers are written through the frame's uploader (the previous
    /// state drawn for interpolation is the same), the step count becomes `step`, and the
    /// statistics kept so far are forgotten (the caller invalidates the copies in flight).
    ///
    /// # Errors
    ///
    /// A state that is not a whole number of particles or holds more than
    /// [`count`](Sim::count): one line; nothing is written.
    pub fn upload_state(
        &mut self,
        gpu: &mut GpuFrame<'_>,
        bytes: &[u8],
        step: u64,
    ) -> Result<(), String> {
        let one = std::mem::size_of::<Particle>();
        if !bytes.len().is_multiple_of(one) || bytes.len() as u64 > self.state_bytes() {
            return Err(format!(
                "a particle state of {} bytes does not fit {} particles of {one} bytes",
                bytes.len(),
                self.consts.count
            ));
        }
        if !bytes.is_empty() {
            for b in &self.particles {
                gpu.write(b, 0, bytes);
            }
        }
        self.steps_total = step;
        self.stats.latest = None;
        self.stats.history.clear();
        self.stats.to_copy = None;
        Ok(())
    }
}
