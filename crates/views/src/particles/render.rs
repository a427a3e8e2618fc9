//! Drawing: instanced sprites straight from the simulation's storage buffers (`draw.wgsl`), and
//! the orbit/zoom camera (glam) with cursor unprojection for the mouse force.

use bytemuck::{Pod, Zeroable};
use glam::{Mat4, Vec2, Vec3, Vec4};

use super::sim::Sim;
use crate::gpu::frame::GpuFrame;
use crate::gpu::upload::PingPong;
use crate::gpu::{Gpu, layout};
use crate::particles::shaders;

/// What the sprite colour shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum ColorBy {
    /// Speed |v|.
    #[default]
    Speed,
    /// Neighbour count (grid/brute modes).
    Density,
    /// Age (fraction of lifetime; immortal particles over 20 s).
    Age,
}

/// Orbit camera: looks at `target` from `distance` at `yaw`/`pitch` (radians), perspective with
/// vertical field of view `fov_y` (radians).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Camera {
    /// Point looked at.
    pub target: Vec3,
    /// Eye distance from the target (world units).
    pub distance: f32,
    /// Rotation about +y (radians).
    pub yaw: f32,
    /// Elevation (radians, within ±1.5).
    pub pitch: f32,
    /// Vertical field of view (radians).
    pub fov_y: f32,
}

impl Default for Camera {
    fn default() -> Self {
        Camera {
            target: Vec3::ZERO,
            distance: 3.5,
            yaw: 0.0,
            pitch: 0.41,
            fov_y: 45f32.to_radians(),
        }
    }
}

impl Camera {
    /// Eye position.
    pub fn eye(&self) -> Vec3 {
        let (sy, cy) = self.yaw.sin_cos();
        let (sp, cp) = self.pitch.sin_cos();
        self.target + self.distance * Vec3::new(cp * sy, sp, cp * cy)
    }
    /// View matrix (right-handed, y up).
    pub fn view(&self) -> Mat4 {
        Mat4::look_at_rh(self.eye(), self.target, Vec3::Y)
    }
    /// Projection for `aspect` = width / height (depth 0..1).
    pub fn proj(&self, aspect: f32) -> Mat4 {
        Mat4::perspective_rh(self.fov_y, aspect.max(1e-3), 0.05, 100.0)
    }
    /// Orbits by a drag of `delta` pixels (0.01 rad per pixel).
    pub fn orbit(&mut self, delta: Vec2) {
        self.yaw -= delta.x * 0.01;
        self.pitch = (self.pitch + delta.y * 0.01).clamp(-1.5, 1.5);
    }
    /// Zooms by wheel `scroll` (points; positive zooms in), distance within 0.2 … 50.
    pub fn zoom(&mut self, scroll: f32) {
        self.distance = (self.distance * (-scroll * 0.002).exp()).clamp(0.2, 50.0);
    }
    /// World point under the cursor at normalised device coordinates `ndc` (x right, y up, in
    /// −1…1): the cursor ray (inverse view-projection of the near and far points) meets the plane
    /// through the target facing the camera. `None` if the ray is parallel to it.
    pub fn unproject(&self, ndc: Vec2, aspect: f32) -> Option<Vec3> {
        let inv = (self.proj(aspect) * self.view()).inverse();
        let near = inv * Vec4::new(ndc.x, ndc.y, 0.0, 1.0);
        let far = inv * Vec4::new(ndc.x, ndc.y, 1.0, 1.0);
        if near.w == 0.0 || far.w == 0.0 {
            return None;
        }
        let (a, b) = (near.truncate() / near.w, far.truncate() / far.w);
        let dir = b - a;
        let normal = (self.eye() - self.target).normalize_or_zero();
        let denom = dir.dot(normal);
        if denom.abs() < 1e-8 {
            return None;
        }
        let t = (self.target - a).dot(normal) / denom;
        Some(a + dir * t)
    }
}

/// View parameters of `draw.wgsl` and `splat.wgsl` (112 bytes; a read-only storage buffer, see
/// [`Renderer::new`] for why not a uniform).
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
pub struct ViewUniform {
    /// Projection × view.
    pub view_proj: [[f32; 4]; 4],
    /// `P[0][0]`, `P[1][1]`, 2 / width, 2 / height.
    pub proj_scale: [f32; 4],
    /// Interpolation alpha.
    pub alpha: f32,
    /// Sprite radius (world units).
    pub size: f32,
    /// Smallest sprite radius (pixels).
    pub min_px: f32,
    /// Brightness of one particle.
    pub intensity: f32,
    /// 0 speed, 1 density, 2 age.
    pub color_mode: u32,
    /// 1 / speed of the hottest colour.
    pub speed_scale: f32,
    /// 1 / neighbour count of the hottest colour.
    pub density_scale: f32,
    /// Neighbour sums valid.
    pub interact: u32,
}

/// Particle counts from which [`Style::Auto`] draws with the point splat.
pub(crate) const SPLAT_FROM: u32 = 1 << 20;

/// How particles are drawn.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Style {
    /// Sprites below [`SPLAT_FROM`] particles, the point splat from there on.
    #[default]
    Auto,
    /// Instanced sprites with size attenuation (`draw.wgsl`).
    Sprites,
    /// One pixel per particle, accumulated by a compute pass with atomics (`splat.wgsl`):
    /// rasterizing millions of tiny sprites is bound by the raster and blend units (an H200 has
    /// few), the splat only by memory.
    Splat,
    /// Instanced sprites, opaque and depth-tested (the nearest particle wins each pixel; the
    /// scene asks the deck for a [`DEPTH_FORMAT`] attachment).
    Opaque,
}

/// Depth format of the opaque sprite mode.
pub const DEPTH_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Depth32Float;

/// `Splat` uniform of the splat shaders (128 bytes): the image size and the view values read
/// for every particle (see `shaders/common/particles.wgsl`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
struct SplatParams {
    view_proj: [[f32; 4]; 4],
    width: u32,
    height: u32,
    count: u32,
    _pad: u32,
    alpha: f32,
    intensity: f32,
    speed_scale: f32,
    density_scale: f32,
}

/// The WGSL mirrors of this module's types (`View` and `Splat` in
/// `shaders/common/particles.wgsl`), for the layout test.
pub(crate) fn wgsl_mirrors() -> Vec<crate::gpu::mirror::Mirror> {
    use crate::gpu::mirror::wgsl_mirror;
    vec![
        wgsl_mirror!(ViewUniform => "View" {
            view_proj, proj_scale, alpha, size, min_px, intensity, color_mode, speed_scale,
            density_scale, interact,
        }),
        wgsl_mirror!(SplatParams => "Splat" {
            view_proj, width, height, count, _pad, alpha, intensity, speed_scale, density_scale,
        }),
    ]
}

/// The accumulation image of the point splat, for one viewport size.
struct SplatTarget {
    size: (u32, u32),
    /// Fixed-point RGB per pixel (3 × u32), zeroed by `clear_buffer` every frame.
    accum: wgpu::Buffer,
    resolve_group: wgpu::BindGroup,
    /// [uniform slot][cur]
    splat_groups: [[wgpu::BindGroup; 2]; 2],
    /// Group 1 of the fused step + splat, [uniform slot].
    fused_groups: [wgpu::BindGroup; 2],
}

/// The renderer of one [`Sim`] (bind groups point at its buffers): sprites, or the point splat.
pub struct Renderer {
    pipeline: wgpu::RenderPipeline,
    view: PingPong,
    /// [uniform slot][cur]
    groups: [[wgpu::BindGroup; 2]; 2],
    /// How to draw.
    pub style: Style,
    splat_layout: wgpu::BindGroupLayout,
    resolve_layout: wgpu::BindGroupLayout,
    splat_pipeline: wgpu::ComputePipeline,
    resolve_pipeline: wgpu::RenderPipeline,
    splat_params: wgpu::Buffer,
    splat_target: Option<SplatTarget>,
    splat_now: bool,
    /// The frame's last step splats as it goes (`main_splat` of integrate.wgsl), so the state is
    /// not read back by a separate splat pass; the separate pass covers frames without a step.
    /// On by default; off only to compare the two (same image).
    pub fuse: bool,
    fused_layout: wgpu::BindGroupLayout,
    fused_pipeline: wgpu::ComputePipeline,
    /// Particle count from which [`Style::Auto`] splats on this adapter: [`SPLAT_FROM`], or 0 on a
    /// CPU adapter (see [`splat_from`]).
    pub splat_from: u32,
    opaque_pipeline: wgpu::RenderPipeline,
}

/// The count from which [`Style::Auto`] draws with the point splat on `gpu`: 0 (always) on a
/// `DeviceType::Cpu` adapter such as lavapipe, where rasterizing sprites is bound by fill rate
/// (131,072 sprites at 1280×720: 148 ms a frame) and the splat costs a compute pass over the
/// particles; [`SPLAT_FROM`] elsewhere.
pub(crate) fn splat_from(gpu: &Gpu) -> u32 {
    if gpu.is_cpu_adapter() { 0 } else { SPLAT_FROM }
}

impl Renderer {
    /// Pipeline and bind groups for drawing `sim` into [`Gpu::scene_format`],
    /// additive blending.
    pub fn new(gpu: &Gpu, sim: &Sim) -> Renderer {
        let device = &gpu.device;
        let vf = wgpu::ShaderStages::VERTEX | wgpu::ShaderStages::FRAGMENT;
        // The view parameters are a read-only *storage* buffer, not a uniform buffer, here and in
        // the splat pass: lavapipe (Mesa 22.3) inlines uniform-buffer values that reach branch
        // conditions into a new shader variant for every distinct value and keeps every variant,
        // so a camera that moves each frame grew the process by ~0.3 MB a frame, without end
        // (heaptrack: NIR clones held by the queue thread). Storage buffers are never inlined.
        let layout = layout::bind_group_layout(
            device,
            "particles:draw",
            &[
                layout::storage(0, vf, true),
                layout::storage(1, vf, true),
                layout::storage(2, vf, true),
                layout::storage(3, vf, true),
            ],
        );
        let pl = layout::pipeline_layout(device, "particles:draw", &[&layout]);
        let additive = wgpu::BlendComponent {
            src_factor: wgpu::BlendFactor::One,
            dst_factor: wgpu::BlendFactor::One,
            operation: wgpu::BlendOperation::Add,
        };
        let pipeline = shaders::PARTICLES_DRAW.render_pipeline(
            device,
            "particles:draw",
            &pl,
            &shaders::RenderOptions {
                blend: Some(wgpu::BlendState {
                    color: additive,
                    alpha: additive,
                }),
                format: gpu.scene_format,
                ..Default::default()
            },
        );
        let opaque_pipeline = shaders::PARTICLES_DRAW.render_pipeline(
            device,
            "particles:draw_opaque",
            &pl,
            &shaders::RenderOptions {
                fragment: "fs_opaque",
                format: gpu.scene_format,
                depth: Some(wgpu::DepthStencilState {
                    format: DEPTH_FORMAT,
                    depth_write_enabled: Some(true),
                    depth_compare: Some(wgpu::CompareFunction::Less),
                    stencil: Default::default(),
                    bias: Default::default(),
                }),
                ..Default::default()
            },
        );
        let view = PingPong::new(
            device,
            "particles:view",
            wgpu::BufferUsages::STORAGE,
            std::mem::size_of::<ViewUniform>() as u64,
        );
        let bufs = sim.state_buffers();
        let groups = std::array::from_fn(|slot| {
            std::array::from_fn(|cur| {
                device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: Some(&format!("particles:draw:group[{slot}][{cur}]")),
                    layout: &layout,
                    entries: &[
                        wgpu::BindGroupEntry {
                            binding: 0,
                            resource: view.buffer(slot).as_entire_binding(),
                        },
                        wgpu::BindGroupEntry {
                            binding: 1,
                            resource: bufs[cur ^ 1].as_entire_binding(),
                        },
                        wgpu::BindGroupEntry {
                            binding: 2,
                            resource: bufs[cur].as_entire_binding(),
                        },
                        wgpu::BindGroupEntry {
                            binding: 3,
                            resource: sim.sums_buffer().as_entire_binding(),
                        },
                    ],
                })
            })
        });
        let cs = wgpu::ShaderStages::COMPUTE;
        let splat_layout = layout::bind_group_layout(
            device,
            "particles:splat",
            &[
                layout::storage(0, cs, true),
                layout::storage(1, cs, true),
                layout::storage(2, cs, true),
                layout::storage(3, cs, true),
                layout::uniform(4, cs, None),
                layout::storage(5, cs, false),
            ],
        );
        let fs = wgpu::ShaderStages::FRAGMENT;
        let resolve_layout = layout::bind_group_layout(
            device,
            "particles:splat_resolve",
            &[layout::uniform(0, fs, None), layout::storage(1, fs, true)],
        );
        let splat_pipeline =
            shaders::PARTICLES_SPLAT.compute_pipeline(device, "particles:splat", &splat_layout);
        let fused_layout = layout::bind_group_layout(
            device,
            "particles:integrate_splat",
            &[
                layout::storage(0, cs, true),
                layout::uniform(1, cs, None),
                layout::storage(2, cs, false),
            ],
        );
        let fused_pl = layout::pipeline_layout(
            device,
            "particles:integrate_splat",
            &[sim.integrate_layout(), &fused_layout],
        );
        let fused_pipeline = shaders::PARTICLES_INTEGRATE.compute_pipeline_entry(
            device,
            "particles:integrate_splat",
            &fused_pl,
            "main_splat",
        );
        let resolve_pl =
            layout::pipeline_layout(device, "particles:splat_resolve", &[&resolve_layout]);
        let resolve_pipeline = shaders::PARTICLES_SPLAT_RESOLVE.render_pipeline(
            device,
            "particles:splat_resolve",
            &resolve_pl,
            &shaders::RenderOptions {
                format: gpu.scene_format,
                ..Default::default()
            },
        );
        let splat_params = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("particles:splat:params"),
            size: std::mem::size_of::<SplatParams>() as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        Renderer {
            pipeline,
            view,
            groups,
            style: Style::Auto,
            splat_layout,
            resolve_layout,
            splat_pipeline,
            resolve_pipeline,
            splat_params,
            splat_target: None,
            splat_now: false,
            fuse: true,
            fused_layout,
            fused_pipeline,
            splat_from: splat_from(gpu),
            opaque_pipeline,
        }
    }

    /// Whether this frame draws with the point splat.
    pub fn splatting(&self) -> bool {
        self.splat_now
    }

    /// Point splat: sizes the accumulation image for a `size` viewport (rebuilt on resize) and
    /// writes its parameters. Call from `prepare` every frame; decides the style of the frame.
    pub fn prepare_splat(
        &mut self,
        gpu: &mut GpuFrame<'_>,
        sim: &Sim,
        size: (u32, u32),
        view: &ViewUniform,
    ) {
        self.splat_now = match self.style {
            Style::Auto => sim.count() >= self.splat_from,
            Style::Sprites | Style::Opaque => false,
            Style::Splat => true,
        };
        if !self.splat_now {
            return;
        }
        let size = (size.0.max(1), size.1.max(1));
        let bytes = size.0 as u64 * size.1 as u64 * 3 * 4;
        if bytes > gpu.device().limits().max_storage_buffer_binding_size {
            self.splat_now = false;
            return;
        }
        let params = SplatParams {
            view_proj: view.view_proj,
            width: size.0,
            height: size.1,
            count: sim.count(),
            _pad: 0,
            alpha: view.alpha,
            intensity: view.intensity,
            speed_scale: view.speed_scale,
            density_scale: view.density_scale,
        };
        gpu.write_pod(&self.splat_params, 0, &params);
        if self.splat_target.as_ref().is_none_or(|t| t.size != size) {
            self.splat_target = Some(self.splat_target(gpu.device(), sim, size, bytes));
        }
        if let Some(t) = &self.splat_target {
            // A memset on a software rasterizer (a clearing compute pass cost 5 ms at 1280×720
            // on lavapipe, every store a loop over lanes); a fill on a GPU.
            gpu.encoder().clear_buffer(&t.accum, 0, None);
        }
    }

    fn splat_target(
        &self,
        device: &wgpu::Device,
        sim: &Sim,
        size: (u32, u32),
        bytes: u64,
    ) -> SplatTarget {
        let accum = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("particles:splat:accum"),
            size: bytes,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let resolve_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("particles:splat_resolve:group"),
            layout: &self.resolve_layout,
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: self.splat_params.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: accum.as_entire_binding(),
                },
            ],
        });
        let bufs = sim.state_buffers();
        let splat_groups = std::array::from_fn(|slot| {
            std::array::from_fn(|cur| {
                device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: Some(&format!("particles:splat:group[{slot}][{cur}]")),
                    layout: &self.splat_layout,
                    entries: &[
                        wgpu::BindGroupEntry {
                            binding: 0,
                            resource: self.view.buffer(slot).as_entire_binding(),
                        },
                        wgpu::BindGroupEntry {
                            binding: 1,
                            resource: bufs[cur ^ 1].as_entire_binding(),
                        },
                        wgpu::BindGroupEntry {
                            binding: 2,
                            resource: bufs[cur].as_entire_binding(),
                        },
                        wgpu::BindGroupEntry {
                            binding: 3,
                            resource: sim.sums_buffer().as_entire_binding(),
                        },
                        wgpu::BindGroupEntry {
                            binding: 4,
                            resource: self.splat_params.as_entire_binding(),
                        },
                        wgpu::BindGroupEntry {
                            binding: 5,
                            resource: accum.as_entire_binding(),
                        },
                    ],
                })
            })
        });
        let fused_groups = std::array::from_fn(|slot| {
            layout::bind_group(
                device,
                &format!("particles:integrate_splat:group[{slot}]"),
                &self.fused_layout,
                &[
                    self.view.buffer(slot).as_entire_binding(),
                    self.splat_params.as_entire_binding(),
                    accum.as_entire_binding(),
                ],
            )
        });
        SplatTarget {
            size,
            accum,
            resolve_group,
            splat_groups,
            fused_groups,
        }
    }

    /// The step + splat pipeline for the last step of frame `frame`, when this frame splats
    /// and [`fuse`](Renderer::fuse) is on; then [`encode_splat`](Renderer::encode_splat) is
    /// not needed (the caller skips it when the frame ran a step).
    pub fn fused_step(&self, frame: u64) -> Option<super::sim::FusedStep<'_>> {
        let t = self
            .splat_target
            .as_ref()
            .filter(|_| self.splat_now && self.fuse)?;
        Some(super::sim::FusedStep {
            pipeline: &self.fused_pipeline,
            group: &t.fused_groups[PingPong::slot(frame)],
        })
    }

    /// Point splat: records the splat into the frame's compute pass (after the simulation
    /// steps, so it reads the newest state; `prepare_splat` cleared the image).
    pub fn encode_splat(&self, pass: &mut wgpu::ComputePass<'_>, frame: u64, sim: &Sim) {
        let Some(t) = self.splat_target.as_ref().filter(|_| self.splat_now) else {
            return;
        };
        if sim.count() == 0 {
            return;
        }
        let (x, y) = super::sim::fold(sim.count().div_ceil(256));
        pass.set_pipeline(&self.splat_pipeline);
        pass.set_bind_group(0, &t.splat_groups[PingPong::slot(frame)][sim.cur()], &[]);
        pass.dispatch_workgroups(x, y, 1);
    }

    /// Writes this frame's view uniform (slot `frame % 2`).
    pub fn prepare(&mut self, gpu: &mut GpuFrame<'_>, u: &ViewUniform) {
        self.view.write(gpu, bytemuck::bytes_of(u));
    }

    /// Draws every particle of `sim` as a sprite (6 vertices × count instances), or resolves
    /// the point splat.
    pub fn paint(&self, pass: &mut wgpu::RenderPass<'_>, frame: u64, sim: &Sim) {
        if self.splat_now {
            if let Some(t) = &self.splat_target {
                pass.set_pipeline(&self.resolve_pipeline);
                pass.set_bind_group(0, &t.resolve_group, &[]);
                pass.draw(0..3, 0..1);
            }
            return;
        }
        if sim.count() == 0 {
            return;
        }
        if self.style == Style::Opaque {
            pass.set_pipeline(&self.opaque_pipeline);
        } else {
            pass.set_pipeline(&self.pipeline);
        }
        pass.set_bind_group(0, &self.groups[PingPong::slot(frame)][sim.cur()], &[]);
        pass.draw(0..6, 0..sim.count());
    }
}
