//! Drawing: instanced sprites straight from the simulation's storage buffers (`draw.wgsl`), and
//! the orbit/zoom camera (glam) with cursor unprojection for the mouse force.

use bytemuck::{Pod, Zeroable};
use glam::{Mat4, Vec2, Vec3, Vec4};

use super::sim::Sim;
use crate::gpu::upload::PingPong;
use crate::gpu::{Gpu, shaders};

/// What the sprite colour shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
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

/// Uniform of `draw.wgsl` (112 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
pub struct ViewUniform {
    /// Projection × view.
    pub view_proj: [[f32; 4]; 4],
    /// P[0][0], P[1][1], 2 / width, 2 / height.
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

/// The sprite renderer of one [`Sim`] (bind groups point at its buffers).
pub struct Renderer {
    pipeline: wgpu::RenderPipeline,
    view: PingPong,
    /// [uniform slot][cur]
    groups: [[wgpu::BindGroup; 2]; 2],
}

impl Renderer {
    /// Pipeline and bind groups for drawing `sim` into [`crate::scene::SCENE_FORMAT`],
    /// additive blending.
    pub fn new(gpu: &Gpu, sim: &Sim) -> Renderer {
        let device = &gpu.device;
        let entry = |binding, ty| wgpu::BindGroupLayoutEntry {
            binding,
            visibility: wgpu::ShaderStages::VERTEX | wgpu::ShaderStages::FRAGMENT,
            ty: wgpu::BindingType::Buffer {
                ty,
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        };
        let ro = wgpu::BufferBindingType::Storage { read_only: true };
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("particles:draw:layout"),
            entries: &[
                entry(0, wgpu::BufferBindingType::Uniform),
                entry(1, ro),
                entry(2, ro),
                entry(3, ro),
            ],
        });
        let pl = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("particles:draw:pipeline_layout"),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        let module = shaders::PARTICLES_DRAW.module(device);
        let additive = wgpu::BlendComponent {
            src_factor: wgpu::BlendFactor::One,
            dst_factor: wgpu::BlendFactor::One,
            operation: wgpu::BlendOperation::Add,
        };
        let pipeline = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: Some("particles:draw"),
            layout: Some(&pl),
            vertex: wgpu::VertexState {
                module: &module,
                entry_point: Some("vs_main"),
                compilation_options: Default::default(),
                buffers: &[],
            },
            primitive: wgpu::PrimitiveState::default(),
            depth_stencil: None,
            multisample: wgpu::MultisampleState::default(),
            fragment: Some(wgpu::FragmentState {
                module: &module,
                entry_point: Some("fs_main"),
                compilation_options: Default::default(),
                targets: &[Some(wgpu::ColorTargetState {
                    format: crate::scene::SCENE_FORMAT,
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
        Renderer {
            pipeline,
            view,
            groups,
        }
    }

    /// Writes this frame's view uniform (slot `frame % 2`).
    pub fn prepare(&mut self, gpu: &Gpu, frame: u64, u: &ViewUniform) {
        self.view
            .write(&gpu.device, &gpu.queue, frame, bytemuck::bytes_of(u));
    }

    /// Draws every particle of `sim` as a sprite (6 vertices × count instances).
    pub fn paint(&self, pass: &mut wgpu::RenderPass<'_>, frame: u64, sim: &Sim) {
        if sim.count() == 0 {
            return;
        }
        pass.set_pipeline(&self.pipeline);
        pass.set_bind_group(0, &self.groups[PingPong::slot(frame)][sim.cur()], &[]);
        pass.draw(0..6, 0..sim.count());
    }
}
