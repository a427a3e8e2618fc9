//! The point-cloud compute rasterizer, 32-bit path (every adapter): a visibility buffer of the
//! nearest point per pixel, in two passes over the points (`raster_depth.wgsl`: nearest depth per
//! pixel; `raster_id.wgsl`: the smallest point index at that depth), after Schütz, Kerbl and
//! Wimmer, "Rendering Point Clouds with Compute Shaders and Vertex Order Optimization" (CGF 40(4),
//! 2021). The 64-bit single-pass path (atomic min of depth and id together, where the adapter
//! has 64-bit atomics), point radius and eye-dome lighting are still to come (issue 14); so is
//! the scene that drives this. The resolve (`resolve.wgsl`) colours each pixel from its point.

use crate::gpu::layout;
use crate::gpu::shaders::{
    POINTCLOUD_RASTER_DEPTH, POINTCLOUD_RASTER_ID, POINTCLOUD_RESOLVE, RenderOptions,
};

/// Points per workgroup of both passes (`@workgroup_size` in the shaders).
pub const WORKGROUP: u32 = 128;

/// `RasterParams` of `shaders/common/pointcloud.wgsl` (96 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct RasterParams {
    /// Points (relative to the batch's origin) → clip space, column-major.
    pub view_proj: [[f32; 4]; 4],
    /// Visibility buffer width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// Points in the batch.
    pub count: u32,
    /// Padding.
    pub _pad: u32,
    /// Padding.
    pub _pad1: [u32; 4],
}

/// The WGSL mirrors of this module's types, for the layout test.
pub(crate) fn wgsl_mirrors() -> Vec<crate::gpu::mirror::Mirror> {
    use crate::gpu::mirror::wgsl_mirror;
    vec![wgsl_mirror!(RasterParams => "RasterParams" {
        view_proj, width, height, count, _pad, _pad1,
    })]
}

/// The visibility buffer of one size: per pixel the nearest depth key and `!index` of the point
/// there (0: none), one u32 each.
pub struct VisibilityBuffer {
    /// Size in pixels.
    pub size: (u32, u32),
    /// Depth keys (pass 1).
    pub depth: wgpu::Buffer,
    /// `!index` of the visible point (pass 2); 0 where no point landed.
    pub ids: wgpu::Buffer,
}

/// The rasterizer's pipelines and layout.
pub struct Rasterizer {
    layout: wgpu::BindGroupLayout,
    depth_pipeline: wgpu::ComputePipeline,
    id_pipeline: wgpu::ComputePipeline,
    resolve_layout: wgpu::BindGroupLayout,
    resolve_pipeline: wgpu::RenderPipeline,
}

impl Rasterizer {
    /// Both passes' pipelines, and the resolve's into `format`.
    pub fn new(device: &wgpu::Device, format: wgpu::TextureFormat) -> Rasterizer {
        let cs = wgpu::ShaderStages::COMPUTE;
        let layout = layout::bind_group_layout(
            device,
            "pointcloud:raster",
            &[
                layout::uniform(0, cs, None),
                layout::storage(1, cs, true),
                layout::storage(2, cs, false),
                layout::storage(3, cs, false),
            ],
        );
        let fs = wgpu::ShaderStages::FRAGMENT;
        let resolve_layout = layout::bind_group_layout(
            device,
            "pointcloud:resolve",
            &[
                layout::uniform(0, fs, None),
                layout::storage(1, fs, true),
                layout::storage(2, fs, true),
            ],
        );
        let resolve_pl = layout::pipeline_layout(device, "pointcloud:resolve", &[&resolve_layout]);
        let resolve_pipeline = POINTCLOUD_RESOLVE.render_pipeline(
            device,
            "pointcloud:resolve",
            &resolve_pl,
            &RenderOptions {
                format,
                ..Default::default()
            },
        );
        Rasterizer {
            resolve_layout,
            resolve_pipeline,
            depth_pipeline: POINTCLOUD_RASTER_DEPTH.compute_pipeline(
                device,
                "pointcloud:raster_depth",
                &layout,
            ),
            id_pipeline: POINTCLOUD_RASTER_ID.compute_pipeline(
                device,
                "pointcloud:raster_id",
                &layout,
            ),
            layout,
        }
    }

    /// A visibility buffer of `size` pixels (each side ≥ 1).
    pub fn target(&self, device: &wgpu::Device, size: (u32, u32)) -> VisibilityBuffer {
        let size = (size.0.max(1), size.1.max(1));
        let bytes = u64::from(size.0) * u64::from(size.1) * 4;
        let buffer = |label: &str| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: bytes,
                usage: wgpu::BufferUsages::STORAGE
                    | wgpu::BufferUsages::COPY_DST
                    | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            })
        };
        VisibilityBuffer {
            size,
            depth: buffer("pointcloud:visibility:depth"),
            ids: buffer("pointcloud:visibility:ids"),
        }
    }

    /// The bind group of one batch: `params` (a uniform of [`RasterParams`]), `points` (one
    /// `vec4<f32>` per point: x, y, z relative to the batch origin, w unused) into `target`.
    pub fn bind(
        &self,
        device: &wgpu::Device,
        params: &wgpu::Buffer,
        points: &wgpu::Buffer,
        target: &VisibilityBuffer,
    ) -> wgpu::BindGroup {
        layout::bind_group(
            device,
            "pointcloud:raster:group",
            &self.layout,
            &[
                params.as_entire_binding(),
                points.as_entire_binding(),
                target.depth.as_entire_binding(),
                target.ids.as_entire_binding(),
            ],
        )
    }

    /// The resolve's bind group: `params` as for [`bind`](Rasterizer::bind), `target`'s ids, and
    /// `colors` (one RGBA8 `u32` per point, R in the low byte).
    pub fn bind_resolve(
        &self,
        device: &wgpu::Device,
        params: &wgpu::Buffer,
        target: &VisibilityBuffer,
        colors: &wgpu::Buffer,
    ) -> wgpu::BindGroup {
        layout::bind_group(
            device,
            "pointcloud:resolve:group",
            &self.resolve_layout,
            &[
                params.as_entire_binding(),
                target.ids.as_entire_binding(),
                colors.as_entire_binding(),
            ],
        )
    }

    /// Draws the resolve into `pass` (whose target is the visibility buffer's size): each pixel
    /// its point's colour, black where none landed.
    pub fn paint(&self, pass: &mut wgpu::RenderPass<'_>, group: &wgpu::BindGroup) {
        pass.set_pipeline(&self.resolve_pipeline);
        pass.set_bind_group(0, group, &[]);
        pass.draw(0..3, 0..1);
    }

    /// Clears `target` (in `encoder`, before any pass of the frame).
    pub fn clear(&self, encoder: &mut wgpu::CommandEncoder, target: &VisibilityBuffer) {
        encoder.clear_buffer(&target.depth, 0, None);
        encoder.clear_buffer(&target.ids, 0, None);
    }

    /// Records both passes over `count` points of the batch bound in `group` into `pass`
    /// (wgpu orders the second after the first: it reads what the first wrote).
    pub fn encode(&self, pass: &mut wgpu::ComputePass<'_>, group: &wgpu::BindGroup, count: u32) {
        if count == 0 {
            return;
        }
        let (x, y) = layout::fold(count.div_ceil(WORKGROUP));
        for pipeline in [&self.depth_pipeline, &self.id_pipeline] {
            pass.set_pipeline(pipeline);
            pass.set_bind_group(0, group, &[]);
            pass.dispatch_workgroups(x, y, 1);
        }
    }
}

/// The CPU reference of the visibility buffer: for `points` (relative to the batch origin) seen
/// through `view_proj` (column-major) into `size` pixels, per pixel the index of the nearest
/// point (smallest depth; the smallest index among equal depths), `None` where none lands. The
/// same projection as `project` in `shaders/common/pointcloud.wgsl`, in f32.
pub fn cpu_visibility(
    points: &[[f32; 3]],
    view_proj: &[[f32; 4]; 4],
    size: (u32, u32),
) -> Vec<Option<u32>> {
    let (w, h) = (size.0.max(1), size.1.max(1));
    let mut best: Vec<Option<(f32, u32)>> = vec![None; (w * h) as usize];
    let m = glam::Mat4::from_cols_array_2d(view_proj);
    for (i, p) in points.iter().enumerate() {
        let clip = m * glam::Vec4::new(p[0], p[1], p[2], 1.0);
        if clip.w <= 0.0 {
            continue;
        }
        let ndc = clip.truncate() / clip.w;
        if ndc.z < 0.0 || ndc.z > 1.0 || ndc.x.abs() >= 1.0 || ndc.y.abs() >= 1.0 {
            continue;
        }
        let x = (((ndc.x * 0.5 + 0.5) * w as f32) as u32).min(w - 1);
        let y = (((0.5 - ndc.y * 0.5) * h as f32) as u32).min(h - 1);
        let slot = &mut best[(y * w + x) as usize];
        if slot.is_none_or(|(d, _)| ndc.z < d) {
            *slot = Some((ndc.z, i as u32));
        }
    }
    best.into_iter().map(|b| b.map(|(_, i)| i)).collect()
}
