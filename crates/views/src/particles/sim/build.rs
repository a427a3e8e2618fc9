//! Creation of the simulation's GPU objects: the state, sums and constants buffers, the
//! integrate, grid (histogram, scan, scatter, neighbours), brute-force and statistics pipelines
//! and their bind groups, and the seeded initial state.

use wgpu::util::DeviceExt;

use super::cpu::{Neighbours, Particle, STATS_WORDS, SimConsts, StepParams};
use super::{
    COMPUTE, Grid, Mode, PARAM_STRIDE, Sim, SimConfig, StatsPass, clamp_count, default_radius,
    make_consts, scan_levels,
};
use crate::gpu::upload::PingPong;
use crate::gpu::{Gpu, layout};
use crate::particles::shaders;

pub(super) fn storage_buffer(device: &wgpu::Device, label: &str, size: u64) -> wgpu::Buffer {
    device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        size: size.max(16).next_multiple_of(4),
        usage: wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::COPY_SRC
            | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    })
}

pub(super) fn small_uniform(device: &wgpu::Device, label: &str, words: [u32; 4]) -> wgpu::Buffer {
    device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some(label),
        contents: bytemuck::bytes_of(&words),
        usage: wgpu::BufferUsages::UNIFORM,
    })
}

impl Sim {
    /// Creates the buffers and pipelines for `cfg` and uploads the seeded initial state. A count
    /// the adapter cannot hold is clamped to [`max_count`] and [`Sim::notice`] says so.
    ///
    /// [`max_count`]: super::max_count
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
            history: std::collections::VecDeque::new(),
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
            stats_every: 1,
            frames_begun: 0,
            stats_now: true,
            cur: 0,
            src_at_frame_start: 0,
            steps_this_frame: 0,
            steps_total: 0,
        }
    }

    pub(super) fn integrate_groups(
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
}
