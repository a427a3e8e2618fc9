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

use wgpu::util::DeviceExt;

use super::cpu::{Neighbours, Particle, STATS_WORDS, SimConsts, Stats, StepParams};
use crate::gpu::frame::GpuFrame;
use crate::gpu::readback::{Consumer, ReadbackRing};
use crate::gpu::upload::PingPong;
use crate::gpu::{Gpu, layout, shaders};

const COMPUTE: wgpu::ShaderStages = wgpu::ShaderStages::COMPUTE;

/// Threads per workgroup of the per-particle passes.
pub const WORKGROUP: u32 = 64;
/// Byte stride of one step's parameters in the uniform buffer (dynamic offsets need 256).
pub const PARAM_STRIDE: u64 = 256;
/// Elements scanned per workgroup by `scan_blocks.wgsl`.
pub const SCAN_BLOCK: u32 = 512;
/// Half side of the grid box (world units): the grid covers [−B, B]³; outside, positions clamp.
pub const GRID_HALF_SIDE: f32 = 2.5;
/// Most cells per grid axis.
pub const GRID_MAX_DIM: u32 = 256;
/// Tile size of the brute-force pass.
const BRUTE_TILE: u32 = 128;
/// Workgroup size of the reduction.
const STATS_WG: u32 = 256;

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

/// Workgroup counts `(x, y)` for `groups` workgroups: x ≤ 32768, y rows (shaders fold y).
pub fn fold(groups: u32) -> (u32, u32) {
    if groups <= 32768 {
        (groups, 1)
    } else {
        (32768, groups.div_ceil(32768))
    }
}

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
pub fn default_radius(n: u32) -> f32 {
    (2.48 * (n.max(1) as f32).powf(-1.0 / 3.0)).clamp(0.01, 0.5)
}

/// Grid constants for `count` particles, flocking radius `radius` and speed cap `max_speed`:
/// cell size = max(r, 2B/256) so the 27 cells around a particle hold every neighbour.
pub fn make_consts(count: u32, mode: Mode, radius: f32, max_speed: f32) -> SimConsts {
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
}

/// Payload of a statistics readback: the step whose state the reduction summed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StatsCopy(pub u64);

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
    cur: usize,
    src_at_frame_start: usize,
    steps_this_frame: u32,
    steps_total: u64,
}

fn storage_buffer(device: &wgpu::Device, label: &str, size: u64) -> wgpu::Buffer {
    device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        size: size.max(16).next_multiple_of(4),
        usage: wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::COPY_SRC
            | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    })
}

fn small_uniform(device: &wgpu::Device, label: &str, words: [u32; 4]) -> wgpu::Buffer {
    device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some(label),
        contents: bytemuck::bytes_of(&words),
        usage: wgpu::BufferUsages::UNIFORM,
    })
}

impl Sim {
    /// Creates the buffers and pipelines for `cfg` and uploads the seeded initial state. A count
    /// the adapter cannot hold is clamped to [`max_count`] and [`Sim::notice`] says so.
    pub fn new(gpu: &Gpu, cfg: &SimConfig) -> Sim {
        let device = &gpu.device;
        let (count, notice) = clamp_count(&device.limits(), cfg.mode, cfg.count);
        let radius = cfg.radius.unwrap_or_else(|| default_radius(count));
        let consts = make_consts(count, cfg.mode, radius, cfg.max_speed);
        let stride = std::mem::size_of::<Particle>() as u64;
        let init = super::cpu::initial_particles(count, cfg.seed);
        let particles: [wgpu::Buffer; 2] = std::array::from_fn(|i| {
            let buf = device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(&format!("particles:state[{i}]")),
                size: (count as u64 * stride).max(stride),
                usage: wgpu::BufferUsages::STORAGE
                    | wgpu::BufferUsages::COPY_SRC
                    | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: true,
            });
            {
                let bytes: &[u8] = bytemuck::cast_slice(&init);
                if !bytes.is_empty()
                    && let Ok(mut view) = buf.slice(..bytes.len() as u64).get_mapped_range_mut()
                {
                    view.copy_from_slice(bytes);
                }
            }
            buf.unmap();
            buf
        });
        drop(init);
        let interact = cfg.mode != Mode::Free;
        let nb_size = std::mem::size_of::<Neighbours>() as u64;
        let sums = storage_buffer(
            device,
            "particles:neighbour_sums",
            if interact { count as u64 * nb_size } else { 0 }.max(nb_size),
        );
        let consts_buf = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("particles:consts"),
            contents: bytemuck::bytes_of(&consts),
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
        });
        let consts_size = std::mem::size_of::<SimConsts>() as u64;
        let params_size = std::mem::size_of::<StepParams>() as u64;

        let (integrate_pipeline, integrate_layout) = layout::compute_pipeline(
            device,
            "particles:integrate",
            &shaders::PARTICLES_INTEGRATE,
            &[
                layout::uniform(0, COMPUTE, Some(consts_size)),
                layout::uniform_dynamic(1, COMPUTE, Some(params_size)),
                layout::storage(2, COMPUTE, true),
                layout::storage(3, COMPUTE, false),
                layout::storage(4, COMPUTE, true),
            ],
        );
        let step_params = PingPong::new(
            device,
            "particles:step_params",
            wgpu::BufferUsages::UNIFORM,
            PARAM_STRIDE * crate::clock::MAX_STEPS as u64,
        );
        let integrate_groups = Self::integrate_groups(
            device,
            &integrate_layout,
            &consts_buf,
            &step_params,
            &particles,
            &sums,
        );
        let (clear_pipeline, clear_layout) = layout::compute_pipeline(
            device,
            "particles:clear",
            &shaders::PARTICLES_CLEAR,
            &[
                layout::uniform(0, COMPUTE, Some(16)),
                layout::storage(1, COMPUTE, false),
            ],
        );

        let grid = (cfg.mode == Mode::Grid).then(|| {
            Self::make_grid(
                device,
                &consts,
                &consts_buf,
                &particles,
                &sums,
                &clear_pipeline,
                &clear_layout,
            )
        });
        let brute = (cfg.mode == Mode::Brute).then(|| {
            let (p, layout) = layout::compute_pipeline(
                device,
                "particles:neighbours_brute",
                &shaders::PARTICLES_NEIGHBOURS_BRUTE,
                &[
                    layout::uniform(0, COMPUTE, Some(consts_size)),
                    layout::storage(1, COMPUTE, true),
                    layout::storage(2, COMPUTE, false),
                ],
            );
            let groups = std::array::from_fn(|src| {
                layout::bind_group(
                    device,
                    &format!("particles:neighbours_brute:group[{src}]"),
                    &layout,
                    &[
                        consts_buf.as_entire_binding(),
                        particles[src].as_entire_binding(),
                        sums.as_entire_binding(),
                    ],
                )
            });
            (p, groups)
        });

        // Statistics.
        let stats_buffer = storage_buffer(device, "particles:stats", STATS_WORDS as u64 * 4);
        let stats_clear_params = small_uniform(
            device,
            "particles:stats:clear_params",
            [STATS_WORDS as u32, 0, 0, 0],
        );
        let clear_group = layout::bind_group(
            device,
            "particles:stats:clear_group",
            &clear_layout,
            &[
                stats_clear_params.as_entire_binding(),
                stats_buffer.as_entire_binding(),
            ],
        );
        let (reduce_pipeline, reduce_layout) = layout::compute_pipeline(
            device,
            "particles:stats_reduce",
            &shaders::PARTICLES_STATS_REDUCE,
            &[
                layout::uniform(0, COMPUTE, Some(consts_size)),
                layout::storage(1, COMPUTE, true),
                layout::storage(2, COMPUTE, true),
                layout::storage(3, COMPUTE, false),
            ],
        );
        let reduce_groups = std::array::from_fn(|cur| {
            layout::bind_group(
                device,
                &format!("particles:stats_reduce:group[{cur}]"),
                &reduce_layout,
                &[
                    consts_buf.as_entire_binding(),
                    particles[cur].as_entire_binding(),
                    sums.as_entire_binding(),
                    stats_buffer.as_entire_binding(),
                ],
            )
        });

        let stats = StatsPass {
            clear_group,
            reduce_pipeline,
            reduce_groups,
            buffer: stats_buffer,
            to_copy: None,
            latest: None,
        };
        let params_generation = step_params.generation();
        Sim {
            mode: cfg.mode,
            consts,
            notice,
            particles,
            sums,
            consts_buf,
            step_params,
            integrate_pipeline,
            integrate_layout,
            integrate_groups,
            params_generation,
            grid,
            brute,
            clear_pipeline,
            stats,
            stats_enabled: true,
            cur: 0,
            src_at_frame_start: 0,
            steps_this_frame: 0,
            steps_total: 0,
        }
    }

    fn integrate_groups(
        device: &wgpu::Device,
        layout: &wgpu::BindGroupLayout,
        consts_buf: &wgpu::Buffer,
        step_params: &PingPong,
        particles: &[wgpu::Buffer; 2],
        sums: &wgpu::Buffer,
    ) -> [[wgpu::BindGroup; 2]; 2] {
        std::array::from_fn(|slot| {
            std::array::from_fn(|src| {
                layout::bind_group(
                    device,
                    &format!("particles:integrate:group[{slot}][{src}]"),
                    layout,
                    &[
                        consts_buf.as_entire_binding(),
                        wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                            buffer: step_params.buffer(slot),
                            offset: 0,
                            size: wgpu::BufferSize::new(std::mem::size_of::<StepParams>() as u64),
                        }),
                        particles[src].as_entire_binding(),
                        particles[src ^ 1].as_entire_binding(),
                        sums.as_entire_binding(),
                    ],
                )
            })
        })
    }

    fn make_grid(
        device: &wgpu::Device,
        consts: &SimConsts,
        consts_buf: &wgpu::Buffer,
        particles: &[wgpu::Buffer; 2],
        sums: &wgpu::Buffer,
        clear_pipeline: &wgpu::ComputePipeline,
        clear_layout: &wgpu::BindGroupLayout,
    ) -> Grid {
        let n = consts.count as u64;
        let cells = consts.dims[3];
        let consts_size = std::mem::size_of::<SimConsts>() as u64;
        let levels = scan_levels(cells + 1);
        let counts = storage_buffer(device, "particles:grid:cell_counts", levels[0] as u64 * 4);
        let cell_rank = storage_buffer(device, "particles:grid:cell_rank", n * 8);
        let sorted = storage_buffer(device, "particles:grid:sorted", n * 32);
        let mut keep = Vec::new();
        let clear_params =
            small_uniform(device, "particles:grid:clear_params", [levels[0], 0, 0, 0]);
        let clear_group = layout::bind_group(
            device,
            "particles:grid:clear_group",
            clear_layout,
            &[clear_params.as_entire_binding(), counts.as_entire_binding()],
        );
        keep.push(clear_params);
        let (hist_pipeline, hist_layout) = layout::compute_pipeline(
            device,
            "particles:grid_histogram",
            &shaders::PARTICLES_GRID_HISTOGRAM,
            &[
                layout::uniform(0, COMPUTE, Some(consts_size)),
                layout::storage(1, COMPUTE, true),
                layout::storage(2, COMPUTE, false),
                layout::storage(3, COMPUTE, false),
            ],
        );
        let hist_groups = std::array::from_fn(|src| {
            layout::bind_group(
                device,
                &format!("particles:grid_histogram:group[{src}]"),
                &hist_layout,
                &[
                    consts_buf.as_entire_binding(),
                    particles[src].as_entire_binding(),
                    counts.as_entire_binding(),
                    cell_rank.as_entire_binding(),
                ],
            )
        });
        let scan_entries = [
            layout::uniform(0, COMPUTE, Some(16)),
            layout::storage(1, COMPUTE, false),
            layout::storage(2, COMPUTE, false),
        ];
        let (scan_pipeline, scan_layout) = layout::compute_pipeline(
            device,
            "particles:scan_blocks",
            &shaders::PARTICLES_SCAN_BLOCKS,
            &scan_entries,
        );
        let (add_pipeline, add_layout) = layout::compute_pipeline(
            device,
            "particles:scan_add",
            &shaders::PARTICLES_SCAN_ADD,
            &scan_entries,
        );
        let mut level_bufs: Vec<wgpu::Buffer> = Vec::new();
        for (k, &len) in levels.iter().enumerate().skip(1) {
            level_bufs.push(storage_buffer(
                device,
                &format!("particles:scan:level[{k}]"),
                len as u64 * 4,
            ));
        }
        let mut scan_levels_out = Vec::new();
        for k in 0..levels.len() - 1 {
            let data = if k == 0 { &counts } else { &level_bufs[k - 1] };
            let block_sums = &level_bufs[k];
            let params = small_uniform(
                device,
                &format!("particles:scan:params[{k}]"),
                [levels[k], 0, 0, 0],
            );
            let res = [
                params.as_entire_binding(),
                data.as_entire_binding(),
                block_sums.as_entire_binding(),
            ];
            let sg = layout::bind_group(
                device,
                &format!("particles:scan_blocks:group[{k}]"),
                &scan_layout,
                &res,
            );
            let ag = layout::bind_group(
                device,
                &format!("particles:scan_add:group[{k}]"),
                &add_layout,
                &res,
            );
            scan_levels_out.push((levels[k], sg, ag));
            keep.push(params);
        }
        let (scatter_pipeline, scatter_layout) = layout::compute_pipeline(
            device,
            "particles:grid_scatter",
            &shaders::PARTICLES_GRID_SCATTER,
            &[
                layout::uniform(0, COMPUTE, Some(consts_size)),
                layout::storage(1, COMPUTE, true),
                layout::storage(2, COMPUTE, true),
                layout::storage(3, COMPUTE, true),
                layout::storage(4, COMPUTE, false),
            ],
        );
        let scatter_groups = std::array::from_fn(|src| {
            layout::bind_group(
                device,
                &format!("particles:grid_scatter:group[{src}]"),
                &scatter_layout,
                &[
                    consts_buf.as_entire_binding(),
                    particles[src].as_entire_binding(),
                    counts.as_entire_binding(),
                    cell_rank.as_entire_binding(),
                    sorted.as_entire_binding(),
                ],
            )
        });
        let (nb_pipeline, nb_layout) = layout::compute_pipeline(
            device,
            "particles:neighbours_grid",
            &shaders::PARTICLES_NEIGHBOURS_GRID,
            &[
                layout::uniform(0, COMPUTE, Some(consts_size)),
                layout::storage(1, COMPUTE, true),
                layout::storage(2, COMPUTE, true),
                layout::storage(3, COMPUTE, false),
            ],
        );
        let nb_group = layout::bind_group(
            device,
            "particles:neighbours_grid:group",
            &nb_layout,
            &[
                consts_buf.as_entire_binding(),
                sorted.as_entire_binding(),
                counts.as_entire_binding(),
                sums.as_entire_binding(),
            ],
        );
        keep.extend(level_bufs);
        keep.push(cell_rank);
        keep.push(sorted);
        Grid {
            clear_pipeline: clear_pipeline.clone(),
            clear_group,
            hist_pipeline,
            hist_groups,
            scan_pipeline,
            add_pipeline,
            levels: scan_levels_out,
            scatter_pipeline,
            scatter_groups,
            nb_pipeline,
            nb_group,
            counts,
            _keep: keep,
        }
    }

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

    /// Starts a frame of `params.len()` steps (at most [`crate::clock::MAX_STEPS`]): uploads
    /// their parameters into the ping-pong slot of the frame and marks this frame's statistics
    /// reduction for [`record_stats_copy`](Sim::record_stats_copy). Never blocks.
    pub fn begin_frame(&mut self, gpu: &mut GpuFrame<'_>, params: &[StepParams]) {
        let params = &params[..params.len().min(crate::clock::MAX_STEPS as usize)];
        let mut bytes = vec![0u8; PARAM_STRIDE as usize * params.len().max(1)];
        for (i, p) in params.iter().enumerate() {
            let at = i * PARAM_STRIDE as usize;
            bytes[at..at + std::mem::size_of::<StepParams>()]
                .copy_from_slice(bytemuck::bytes_of(p));
        }
        self.step_params.write(gpu, &bytes);
        if self.step_params.generation() != self.params_generation {
            self.params_generation = self.step_params.generation();
            self.integrate_groups = Self::integrate_groups(
                gpu.device(),
                &self.integrate_layout,
                &self.consts_buf,
                &self.step_params,
                &self.particles,
                &self.sums,
            );
        }
        self.src_at_frame_start = self.cur;
        self.steps_this_frame = params.len() as u32;
        self.cur ^= (self.steps_this_frame % 2) as usize;
        self.steps_total += self.steps_this_frame as u64;
        // The reduction `encode` records this frame is copied out by record_stats_copy.
        self.stats.to_copy = self.stats_enabled.then_some(self.steps_total);
    }

    /// Records this frame's steps (and the statistics reduction of the result) into `pass`.
    pub fn encode(&self, pass: &mut wgpu::ComputePass<'_>, frame: u64) {
        self.encode_steps(pass, frame);
        if self.stats_enabled {
            self.encode_stats(pass);
        }
    }

    /// Records only this frame's steps.
    pub fn encode_steps(&self, pass: &mut wgpu::ComputePass<'_>, frame: u64) {
        let n = self.consts.count;
        if n == 0 {
            return;
        }
        let slot = PingPong::slot(frame);
        let (x, y) = dispatch_size(n);
        let mut src = self.src_at_frame_start;
        for s in 0..self.steps_this_frame {
            if let Some(g) = &self.grid {
                let c1 = self.consts.dims[3] + 1;
                pass.set_pipeline(&g.clear_pipeline);
                pass.set_bind_group(0, &g.clear_group, &[]);
                let (cx, cy) = dispatch_size(c1);
                pass.dispatch_workgroups(cx, cy, 1);
                pass.set_pipeline(&g.hist_pipeline);
                pass.set_bind_group(0, &g.hist_groups[src], &[]);
                pass.dispatch_workgroups(x, y, 1);
                pass.set_pipeline(&g.scan_pipeline);
                for (len, sg, _) in &g.levels {
                    let (bx, by) = fold(len.div_ceil(SCAN_BLOCK));
                    pass.set_bind_group(0, sg, &[]);
                    pass.dispatch_workgroups(bx, by, 1);
                }
                pass.set_pipeline(&g.add_pipeline);
                for (len, _, ag) in g.levels.iter().rev().skip(1) {
                    let (ax, ay) = fold(len.div_ceil(256));
                    pass.set_bind_group(0, ag, &[]);
                    pass.dispatch_workgroups(ax, ay, 1);
                }
                pass.set_pipeline(&g.scatter_pipeline);
                pass.set_bind_group(0, &g.scatter_groups[src], &[]);
                pass.dispatch_workgroups(x, y, 1);
                pass.set_pipeline(&g.nb_pipeline);
                pass.set_bind_group(0, &g.nb_group, &[]);
                pass.dispatch_workgroups(x, y, 1);
            }
            if let Some((p, groups)) = &self.brute {
                let (bx, by) = fold(n.div_ceil(BRUTE_TILE));
                pass.set_pipeline(p);
                pass.set_bind_group(0, &groups[src], &[]);
                pass.dispatch_workgroups(bx, by, 1);
            }
            pass.set_pipeline(&self.integrate_pipeline);
            pass.set_bind_group(
                0,
                &self.integrate_groups[slot][src],
                &[(s as u64 * PARAM_STRIDE) as u32],
            );
            pass.dispatch_workgroups(x, y, 1);
            src ^= 1;
        }
    }

    /// Records the statistics reduction of the newest state (clear + reduce).
    pub fn encode_stats(&self, pass: &mut wgpu::ComputePass<'_>) {
        pass.set_pipeline(&self.clear_pipeline);
        pass.set_bind_group(0, &self.stats.clear_group, &[]);
        pass.dispatch_workgroups(1, 1, 1);
        let n = self.consts.count;
        if n == 0 {
            return;
        }
        let (x, y) = fold(n.div_ceil(STATS_WG));
        pass.set_pipeline(&self.stats.reduce_pipeline);
        pass.set_bind_group(0, &self.stats.reduce_groups[self.cur], &[]);
        pass.dispatch_workgroups(x, y, 1);
    }

    /// Records the copy of the statistics reduced this frame into `ring` (tag `kind`, id = the
    /// step count they describe), in `encoder` after the frame's compute pass. Returns false
    /// when there is nothing to copy or the ring refused it.
    pub fn record_stats_copy(
        &mut self,
        device: &wgpu::Device,
        encoder: &mut wgpu::CommandEncoder,
        ring: &mut ReadbackRing,
        me: Consumer,
    ) -> bool {
        let Some(step) = self.stats.to_copy.take() else {
            return false;
        };
        ring.copy_buffer(
            device,
            encoder,
            &self.stats.buffer,
            0,
            STATS_WORDS as u64 * 4,
            me,
            StatsCopy(step),
        )
    }

    /// A statistics copy made by [`record_stats_copy`](Sim::record_stats_copy) for step `step`
    /// arrived: becomes [`latest_stats`](Sim::latest_stats) unless a newer one already did.
    /// Data of the wrong length is ignored.
    pub fn stats_arrived(&mut self, step: u64, data: &[u8]) {
        if data.len() != STATS_WORDS * 4 {
            return;
        }
        let words: [u32; STATS_WORDS] = bytemuck::pod_read_unaligned(data);
        self.keep_newest(Stats::from_words(&words, step));
    }

    fn keep_newest(&mut self, s: Stats) {
        if self.stats.latest.as_ref().is_none_or(|l| l.step <= s.step) {
            self.stats.latest = Some(s);
        }
    }

    #[allow(clippy::disallowed_methods)] // a blocking read for tests and tools
    fn read_buffer(&self, gpu: &Gpu, buffer: &wgpu::Buffer, size: u64) -> Vec<u8> {
        gpu.read_buffer_blocking(buffer, 0, size)
            .unwrap_or_else(|e| {
                log::error!("particles: readback failed: {e}");
                Vec::new()
            })
    }

    /// Reads the newest state back (blocking; tests and tools only, never in the frame loop).
    pub fn read_state(&self, gpu: &Gpu) -> Vec<Particle> {
        let size = self.consts.count as u64 * std::mem::size_of::<Particle>() as u64;
        bytemuck::pod_collect_to_vec(&self.read_buffer(gpu, &self.particles[self.cur], size))
    }

    /// Reads the previous state (before the last step) back (blocking; tests only).
    pub fn read_previous_state(&self, gpu: &Gpu) -> Vec<Particle> {
        let size = self.consts.count as u64 * std::mem::size_of::<Particle>() as u64;
        bytemuck::pod_collect_to_vec(&self.read_buffer(gpu, &self.particles[self.cur ^ 1], size))
    }

    /// Reads the neighbour sums of the last step back (blocking; tests only; empty in free mode).
    pub fn read_sums(&self, gpu: &Gpu) -> Vec<Neighbours> {
        if self.mode == Mode::Free {
            return Vec::new();
        }
        let size = self.consts.count as u64 * std::mem::size_of::<Neighbours>() as u64;
        bytemuck::pod_collect_to_vec(&self.read_buffer(gpu, &self.sums, size))
    }

    /// Reads the grid's cell starts (exclusive scan of the last step's histogram, C + 1 words)
    /// back (blocking; tests only; empty unless grid mode).
    pub fn read_cell_starts(&self, gpu: &Gpu) -> Vec<u32> {
        match &self.grid {
            Some(g) => {
                let size = (self.consts.dims[3] as u64 + 1) * 4;
                bytemuck::pod_collect_to_vec(&self.read_buffer(gpu, &g.counts, size))
            }
            None => Vec::new(),
        }
    }

    /// Reads the statistics buffer of the last reduction back (blocking; tests only).
    pub fn read_stats_blocking(&self, gpu: &Gpu) -> Stats {
        let bytes = self.read_buffer(gpu, &self.stats.buffer, STATS_WORDS as u64 * 4);
        let mut w = [0u32; STATS_WORDS];
        if bytes.len() == STATS_WORDS * 4 {
            w = bytemuck::pod_read_unaligned(&bytes);
        }
        Stats::from_words(&w, self.steps_total)
    }
}

/// Exclusive prefix sum of `values` on the GPU with the same two shaders and levels the grid
/// uses (blocking; for tests of the multi-level scan).
#[allow(clippy::disallowed_methods)] // a blocking test helper with its own submit
pub fn gpu_exclusive_scan(gpu: &Gpu, values: &[u32]) -> Vec<u32> {
    let device = &gpu.device;
    let levels = scan_levels(values.len() as u32);
    let data = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("particles:scan_test:data"),
        contents: bytemuck::cast_slice(if values.is_empty() { &[0u32] } else { values }),
        usage: wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::COPY_SRC
            | wgpu::BufferUsages::COPY_DST,
    });
    let entries = [
        layout::uniform(0, COMPUTE, Some(16)),
        layout::storage(1, COMPUTE, false),
        layout::storage(2, COMPUTE, false),
    ];
    let (scan_p, scan_l) = layout::compute_pipeline(
        device,
        "particles:scan_test:blocks",
        &shaders::PARTICLES_SCAN_BLOCKS,
        &entries,
    );
    let (add_p, add_l) = layout::compute_pipeline(
        device,
        "particles:scan_test:add",
        &shaders::PARTICLES_SCAN_ADD,
        &entries,
    );
    let bufs: Vec<wgpu::Buffer> = levels
        .iter()
        .skip(1)
        .map(|&l| storage_buffer(device, "particles:scan_test:level", l as u64 * 4))
        .collect();
    let mut groups = Vec::new();
    let mut keep = Vec::new();
    for k in 0..levels.len() - 1 {
        let d = if k == 0 { &data } else { &bufs[k - 1] };
        let p = small_uniform(device, "particles:scan_test:params", [levels[k], 0, 0, 0]);
        let res = [
            p.as_entire_binding(),
            d.as_entire_binding(),
            bufs[k].as_entire_binding(),
        ];
        groups.push((
            levels[k],
            layout::bind_group(device, "particles:scan_test:g", &scan_l, &res),
            layout::bind_group(device, "particles:scan_test:a", &add_l, &res),
        ));
        keep.push(p);
    }
    let mut enc = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
        label: Some("particles:scan_test"),
    });
    {
        let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("particles:scan_test"),
            timestamp_writes: None,
        });
        pass.set_pipeline(&scan_p);
        for (len, g, _) in &groups {
            let (x, y) = fold(len.div_ceil(SCAN_BLOCK));
            pass.set_bind_group(0, g, &[]);
            pass.dispatch_workgroups(x, y, 1);
        }
        pass.set_pipeline(&add_p);
        for (len, _, a) in groups.iter().rev().skip(1) {
            let (x, y) = fold(len.div_ceil(256));
            pass.set_bind_group(0, a, &[]);
            pass.dispatch_workgroups(x, y, 1);
        }
    }
    let size = values.len() as u64 * 4;
    if size == 0 {
        return Vec::new();
    }
    gpu.queue.submit([enc.finish()]);
    match gpu.read_buffer_blocking(&data, 0, size) {
        Ok(b) => bytemuck::pod_collect_to_vec(&b),
        Err(_) => Vec::new(),
    }
}
