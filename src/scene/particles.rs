//! Particles: a compute-shader simulation on ping-pong storage buffers, drawn as instanced
//! points straight from those buffers.
//!
//! Each fixed step (dt = 1/120 s) runs `shaders/particles/step.wgsl` once over every particle,
//! reading buffer `cur` and writing `cur ^ 1`. The render pass interpolates between the last two
//! states with the clock's alpha. Initial state is seeded (SplitMix64), so runs are reproducible.

use bytemuck::{Pod, Zeroable};
use glam::{Mat4, Vec3};

use super::{FrameCtx, Scene, SceneConfig, SceneError};
use crate::gpu::upload::PingPong;
use crate::gpu::{Gpu, shaders};

/// Default particle count.
pub const DEFAULT_COUNT: u32 = 131_072;
/// Threads per workgroup of the step shader.
pub const WORKGROUP: u32 = 64;
/// Attractors in the step shader.
pub const ATTRACTORS: usize = 4;
/// Byte stride of one step's parameters in the uniform buffer (dynamic offsets need 256).
const PARAM_STRIDE: u64 = 256;

/// One particle: 32 bytes, the layout of `Particle` in the WGSL files.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct Particle {
    /// xyz position (world units), w unused.
    pub pos: [f32; 4],
    /// xyz velocity (world units / s), w unused.
    pub vel: [f32; 4],
}

/// Parameters of one step: the layout of `StepParams` in `step.wgsl` (80 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct StepParams {
    /// Attractor xyz position and strength G in w.
    pub attractors: [[f32; 4]; ATTRACTORS],
    /// Step in seconds.
    pub dt: f32,
    /// Linear drag coefficient k (1/s).
    pub drag: f32,
    /// Softening ε (world units²) added to |d|².
    pub softening: f32,
    /// Number of particles.
    pub count: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
struct ViewUniform {
    view_proj: [[f32; 4]; 4],
    alpha: f32,
    speed_scale: f32,
    intensity: f32,
    _pad: f32,
}

/// The CPU reference of one step of `step.wgsl`, same operations in the same order.
pub fn cpu_step(params: &StepParams, src: &[Particle]) -> Vec<Particle> {
    src.iter()
        .take(params.count as usize)
        .map(|p| {
            let pos = Vec3::from_slice(&p.pos[..3]);
            let vel = Vec3::from_slice(&p.vel[..3]);
            let mut acc = Vec3::ZERO;
            for a in &params.attractors {
                let d = Vec3::new(a[0], a[1], a[2]) - pos;
                let r2 = d.dot(d) + params.softening;
                acc += d * (a[3] / (r2 * r2.sqrt()));
            }
            let v = (vel + acc * params.dt) / (1.0 + params.drag * params.dt);
            let x = pos + v * params.dt;
            Particle {
                pos: [x.x, x.y, x.z, p.pos[3]],
                vel: [v.x, v.y, v.z, p.vel[3]],
            }
        })
        .collect()
}

/// SplitMix64 (Steele, Lea, Flood 2014): a tiny seeded generator for initial states.
#[derive(Clone, Debug)]
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    /// Next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [0, 1) with 24 bits.
    pub fn next_f32(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32
    }
}

/// Initial state: `n` particles in a disc-like shell of radius 0.3…1.6 with tangential velocity,
/// from `seed`. Same seed, same particles.
pub fn initial_particles(n: u32, seed: u64) -> Vec<Particle> {
    let mut rng = SplitMix64(seed);
    (0..n)
        .map(|_| {
            let r = 0.3 + 1.3 * rng.next_f32();
            let theta = std::f32::consts::TAU * rng.next_f32();
            let y = (rng.next_f32() - 0.5) * 0.4;
            let (s, c) = theta.sin_cos();
            let speed = 0.45 / r.sqrt();
            Particle {
                pos: [r * c, y, r * s, 1.0],
                vel: [-s * speed, 0.0, c * speed, 0.0],
            }
        })
        .collect()
}

/// Attractor positions and strengths at simulation time `t` seconds: three slow orbits and a
/// fixed centre.
pub fn attractors_at(t: f32) -> [[f32; 4]; ATTRACTORS] {
    let orbit = |radius: f32, w: f32, phase: f32, tilt: f32, g: f32| {
        let a = w * t + phase;
        [radius * a.cos(), tilt * a.sin(), radius * a.sin(), g]
    };
    [
        [0.0, 0.0, 0.0, 0.08],
        orbit(0.9, 0.35, 0.0, 0.3, 0.05),
        orbit(1.2, -0.22, 2.1, -0.2, 0.04),
        orbit(0.6, 0.5, 4.2, 0.1, 0.03),
    ]
}

/// Workgroup counts for `n` items: x ≤ 32768, y = as many rows as needed (the shader folds y).
pub fn dispatch_size(n: u32) -> (u32, u32) {
    let groups = n.div_ceil(WORKGROUP);
    if groups <= 32768 {
        (groups, 1)
    } else {
        (32768, groups.div_ceil(32768))
    }
}

struct Ke {
    buffer: wgpu::Buffer,
    state: std::sync::Arc<std::sync::atomic::AtomicU8>,
}

/// The particle scene.
pub struct Particles {
    count: u32,
    seed: u64,
    sim_time: f32,
    steps_total: u64,
    drag: f32,
    frame_params: Vec<StepParams>,
    /// Index of the buffer holding the newest state before this frame's steps.
    cur_at_frame_start: usize,
    cur: usize,
    steps_this_frame: u32,
    particles: [wgpu::Buffer; 2],
    step_pipeline: wgpu::ComputePipeline,
    step_params: PingPong,
    /// [uniform slot][src index]
    step_groups: [[wgpu::BindGroup; 2]; 2],
    draw_pipeline: wgpu::RenderPipeline,
    view: PingPong,
    /// [uniform slot][cur index]
    draw_groups: [[wgpu::BindGroup; 2]; 2],
    ke: Ke,
    kinetic_energy: Option<f64>,
    ke_steps: u64,
    notice: Option<String>,
}

impl Particles {
    /// Table constructor.
    pub fn create(gpu: &Gpu, cfg: &SceneConfig) -> Result<Box<dyn Scene>, SceneError> {
        Ok(Box::new(Particles::new(gpu, cfg.particles, cfg.seed)))
    }

    /// Creates the scene with `count` particles (clamped to what the adapter's storage binding
    /// and buffer sizes hold, with a notice) from `seed`.
    pub fn new(gpu: &Gpu, count: u32, seed: u64) -> Particles {
        let device = &gpu.device;
        let limits = device.limits();
        let stride = std::mem::size_of::<Particle>() as u64;
        let max = limits
            .max_storage_buffer_binding_size
            .min(limits.max_buffer_size)
            / stride;
        let (count, notice) = if count as u64 > max {
            (
                max as u32,
                Some(format!(
                    "{count} particles do not fit this adapter; clamped to {max}"
                )),
            )
        } else {
            (count, None)
        };
        let init = initial_particles(count, seed);
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

        let storage = |binding, read_only, visibility| wgpu::BindGroupLayoutEntry {
            binding,
            visibility,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Storage { read_only },
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        };
        let step_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("particles:step:layout"),
            entries: &[
                wgpu::BindGroupLayoutEntry {
                    binding: 0,
                    visibility: wgpu::ShaderStages::COMPUTE,
                    ty: wgpu::BindingType::Buffer {
                        ty: wgpu::BufferBindingType::Uniform,
                        has_dynamic_offset: true,
                        min_binding_size: wgpu::BufferSize::new(
                            std::mem::size_of::<StepParams>() as u64
                        ),
                    },
                    count: None,
                },
                storage(1, true, wgpu::ShaderStages::COMPUTE),
                storage(2, false, wgpu::ShaderStages::COMPUTE),
            ],
        });
        let step_pl = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("particles:step:pipeline_layout"),
            bind_group_layouts: &[Some(&step_layout)],
            immediate_size: 0,
        });
        let step_module = shaders::PARTICLES_STEP.module(device);
        let step_pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some("particles:step"),
            layout: Some(&step_pl),
            module: &step_module,
            entry_point: Some("main"),
            compilation_options: Default::default(),
            cache: None,
        });
        let step_params = PingPong::new(
            device,
            "particles:step_params",
            wgpu::BufferUsages::UNIFORM,
            PARAM_STRIDE * crate::clock::MAX_STEPS as u64,
        );
        let step_groups = std::array::from_fn(|slot| {
            std::array::from_fn(|src| {
                device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: Some(&format!("particles:step:group[{slot}][{src}]")),
                    layout: &step_layout,
                    entries: &[
                        wgpu::BindGroupEntry {
                            binding: 0,
                            resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                                buffer: step_params.buffer(slot),
                                offset: 0,
                                size: wgpu::BufferSize::new(
                                    std::mem::size_of::<StepParams>() as u64
                                ),
                            }),
                        },
                        wgpu::BindGroupEntry {
                            binding: 1,
                            resource: particles[src].as_entire_binding(),
                        },
                        wgpu::BindGroupEntry {
                            binding: 2,
                            resource: particles[src ^ 1].as_entire_binding(),
                        },
                    ],
                })
            })
        });

        let draw_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("particles:draw:layout"),
            entries: &[
                wgpu::BindGroupLayoutEntry {
                    binding: 0,
                    visibility: wgpu::ShaderStages::VERTEX,
                    ty: wgpu::BindingType::Buffer {
                        ty: wgpu::BufferBindingType::Uniform,
                        has_dynamic_offset: false,
                        min_binding_size: None,
                    },
                    count: None,
                },
                storage(1, true, wgpu::ShaderStages::VERTEX),
                storage(2, true, wgpu::ShaderStages::VERTEX),
            ],
        });
        let draw_pl = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("particles:draw:pipeline_layout"),
            bind_group_layouts: &[Some(&draw_layout)],
            immediate_size: 0,
        });
        let draw_module = shaders::PARTICLES_DRAW.module(device);
        let additive = wgpu::BlendComponent {
            src_factor: wgpu::BlendFactor::One,
            dst_factor: wgpu::BlendFactor::One,
            operation: wgpu::BlendOperation::Add,
        };
        let draw_pipeline = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: Some("particles:draw"),
            layout: Some(&draw_pl),
            vertex: wgpu::VertexState {
                module: &draw_module,
                entry_point: Some("vs_main"),
                compilation_options: Default::default(),
                buffers: &[],
            },
            primitive: wgpu::PrimitiveState {
                topology: wgpu::PrimitiveTopology::PointList,
                ..Default::default()
            },
            depth_stencil: None,
            multisample: wgpu::MultisampleState::default(),
            fragment: Some(wgpu::FragmentState {
                module: &draw_module,
                entry_point: Some("fs_main"),
                compilation_options: Default::default(),
                targets: &[Some(wgpu::ColorTargetState {
                    format: super::SCENE_FORMAT,
                    blend: Some(wgpu::BlendState {
                        color: additive,
                        alpha: additive,
                    }),
                    write_mask: wgpu::ColorWrites::ALL,
                })],
            }),
            multiview_mask: None,
            cache: None,
        });
        let view = PingPong::new(
            device,
            "particles:view",
            wgpu::BufferUsages::UNIFORM,
            std::mem::size_of::<ViewUniform>() as u64,
        );
        let draw_groups = std::array::from_fn(|slot| {
            std::array::from_fn(|cur| {
                device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: Some(&format!("particles:draw:group[{slot}][{cur}]")),
                    layout: &draw_layout,
                    entries: &[
                        wgpu::BindGroupEntry {
                            binding: 0,
                            resource: view.buffer(slot).as_entire_binding(),
                        },
                        wgpu::BindGroupEntry {
                            binding: 1,
                            resource: particles[cur ^ 1].as_entire_binding(),
                        },
                        wgpu::BindGroupEntry {
                            binding: 2,
                            resource: particles[cur].as_entire_binding(),
                        },
                    ],
                })
            })
        });
        let ke = Ke {
            buffer: device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("particles:readback"),
                size: (count as u64 * stride).max(stride),
                usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ,
                mapped_at_creation: false,
            }),
            state: Default::default(),
        };
        Particles {
            count,
            seed,
            sim_time: 0.0,
            steps_total: 0,
            drag: 0.15,
            frame_params: Vec::new(),
            cur_at_frame_start: 0,
            cur: 0,
            steps_this_frame: 0,
            particles,
            step_pipeline,
            step_params,
            step_groups,
            draw_pipeline,
            view,
            draw_groups,
            ke,
            kinetic_energy: None,
            ke_steps: 0,
            notice,
        }
    }

    /// Particle count actually simulated.
    pub fn count(&self) -> u32 {
        self.count
    }

    /// Parameters of the steps queued this frame (what `prepare` uploads), in order.
    pub fn frame_params(&self) -> &[StepParams] {
        &self.frame_params
    }

    /// Reads the newest state back (blocking; tests and tools only, never in the frame loop).
    pub fn read_state(&self, gpu: &Gpu) -> Vec<Particle> {
        let size = self.count as u64 * std::mem::size_of::<Particle>() as u64;
        if size == 0 {
            return Vec::new();
        }
        let staging = gpu.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("particles:read_state"),
            size,
            usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ,
            mapped_at_creation: false,
        });
        let mut enc = gpu
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("particles:read_state"),
            });
        enc.copy_buffer_to_buffer(&self.particles[self.cur], 0, &staging, 0, size);
        gpu.queue.submit([enc.finish()]);
        match crate::gpu::readback::map_blocking(&gpu.device, &staging) {
            Ok(bytes) => bytemuck::pod_collect_to_vec(&bytes),
            Err(e) => {
                log::error!("particles: readback failed: {e}");
                Vec::new()
            }
        }
    }

    /// Kinetic energy Σ ½|v|² (unit mass) of the last read-back state.
    pub fn kinetic_energy(&self) -> Option<f64> {
        self.kinetic_energy
    }

    fn poll_ke(&mut self) {
        use std::sync::atomic::Ordering;
        if self.ke.state.load(Ordering::Acquire) == 2 {
            let ke = self.ke.buffer.slice(..).get_mapped_range().ok().map(|v| {
                let ps: &[Particle] = bytemuck::cast_slice(&v[..]);
                ps.iter()
                    .map(|p| {
                        0.5 * (p.vel[0] as f64 * p.vel[0] as f64
                            + p.vel[1] as f64 * p.vel[1] as f64
                            + p.vel[2] as f64 * p.vel[2] as f64)
                    })
                    .sum::<f64>()
            });
            self.ke.buffer.unmap();
            if ke.is_some() {
                self.kinetic_energy = ke;
            }
            self.ke.state.store(0, Ordering::Release);
        }
    }

    /// Every 30 frames, copies the current state into the readback buffer and maps it
    /// asynchronously; the result is picked up by a later frame (never waited for).
    fn schedule_ke(&mut self, gpu: &Gpu, frame: u64) {
        use std::sync::atomic::Ordering;
        if self.count == 0
            || !frame.is_multiple_of(30)
            || self.ke.state.load(Ordering::Acquire) != 0
        {
            return;
        }
        let size = self.count as u64 * std::mem::size_of::<Particle>() as u64;
        let mut enc = gpu
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("particles:ke_copy"),
            });
        enc.copy_buffer_to_buffer(
            &self.particles[self.cur_at_frame_start],
            0,
            &self.ke.buffer,
            0,
            size,
        );
        gpu.queue.submit([enc.finish()]);
        self.ke_steps = self.steps_total - self.steps_this_frame as u64;
        let state = self.ke.state.clone();
        state.store(1, Ordering::Release);
        self.ke
            .buffer
            .slice(..)
            .map_async(wgpu::MapMode::Read, move |r| {
                state.store(if r.is_ok() { 2 } else { 0 }, Ordering::Release);
            });
    }
}

impl Scene for Particles {
    fn id(&self) -> &'static str {
        "particles"
    }

    fn fixed_update(&mut self, dt: f32) {
        if self.frame_params.len() >= crate::clock::MAX_STEPS as usize {
            return;
        }
        self.frame_params.push(StepParams {
            attractors: attractors_at(self.sim_time),
            dt,
            drag: self.drag,
            softening: 0.02,
            count: self.count,
        });
        self.sim_time += dt;
    }

    fn prepare(&mut self, gpu: &Gpu, frame: &FrameCtx) {
        self.poll_ke();
        let mut bytes = vec![0u8; PARAM_STRIDE as usize * self.frame_params.len()];
        for (i, p) in self.frame_params.iter().enumerate() {
            let at = i * PARAM_STRIDE as usize;
            bytes[at..at + std::mem::size_of::<StepParams>()]
                .copy_from_slice(bytemuck::bytes_of(p));
        }
        self.step_params
            .write(&gpu.device, &gpu.queue, frame.frame, &bytes);
        self.cur_at_frame_start = self.cur;
        self.steps_this_frame = self.frame_params.len() as u32;
        self.cur ^= (self.steps_this_frame % 2) as usize;
        self.steps_total += self.steps_this_frame as u64;
        self.frame_params.clear();
        self.schedule_ke(gpu, frame.frame);

        let (w, h) = (frame.size.0.max(1) as f32, frame.size.1.max(1) as f32);
        let aspect = w / h;
        let yaw = self.sim_time * 0.1;
        let eye = Vec3::new(3.2 * yaw.sin(), 1.4, 3.2 * yaw.cos());
        let view = Mat4::look_at_rh(eye, Vec3::ZERO, Vec3::Y);
        let proj = Mat4::perspective_rh(45f32.to_radians(), aspect, 0.05, 50.0);
        // Keep the total light roughly constant whatever the count and viewport.
        let intensity = (0.35 * (w * h) / (self.count.max(1) as f32 * 2.0)).clamp(0.04, 0.6);
        let u = ViewUniform {
            view_proj: (proj * view).to_cols_array_2d(),
            alpha: frame.alpha,
            speed_scale: 0.9,
            intensity,
            _pad: 0.0,
        };
        self.view
            .write(&gpu.device, &gpu.queue, frame.frame, bytemuck::bytes_of(&u));
    }

    fn compute(&self, pass: &mut wgpu::ComputePass<'_>, frame: &FrameCtx) {
        if self.count == 0 {
            return;
        }
        pass.set_pipeline(&self.step_pipeline);
        let (x, y) = dispatch_size(self.count);
        let mut src = self.cur_at_frame_start;
        for s in 0..self.steps_this_frame {
            pass.set_bind_group(
                0,
                &self.step_groups[frame.slot()][src],
                &[(s as u64 * PARAM_STRIDE) as u32],
            );
            pass.dispatch_workgroups(x, y, 1);
            src ^= 1;
        }
    }

    fn paint(&self, pass: &mut wgpu::RenderPass<'_>, frame: &FrameCtx) {
        if self.count == 0 {
            return;
        }
        pass.set_pipeline(&self.draw_pipeline);
        pass.set_bind_group(0, &self.draw_groups[frame.slot()][self.cur], &[]);
        pass.draw(0..self.count, 0..1);
    }

    fn ui(&mut self, ui: &mut egui::Ui) {
        ui.heading("Particles");
        ui.label(format!("count: {}", self.count));
        ui.label(format!("seed: {}", self.seed));
        ui.label(format!("steps: {}", self.steps_total));
        ui.label(format!("sim time: {:.2} s", self.sim_time));
        match self.kinetic_energy {
            Some(ke) => ui.label(format!("kinetic energy: {ke:.4}")),
            None => ui.label("kinetic energy: …"),
        };
        ui.add(egui::Slider::new(&mut self.drag, 0.0..=2.0).text("drag (1/s)"));
        if let Some(n) = &self.notice {
            ui.colored_label(egui::Color32::YELLOW, n);
        }
    }

    fn metrics(&self) -> serde_json::Value {
        serde_json::json!({
            "count": self.count,
            "seed": self.seed,
            "steps": self.steps_total,
            "sim_time_s": self.sim_time,
            "kinetic_energy": self.kinetic_energy,
            "kinetic_energy_at_step": self.ke_steps,
        })
    }

    fn problem(&self) -> Option<String> {
        self.notice.clone()
    }
}
