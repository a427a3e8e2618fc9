//! The point-cloud compute rasterizer: a visibility buffer of the nearest point per pixel, after
//! Schütz, Kerbl and Wimmer, "Rendering Point Clouds with Compute Shaders and Vertex Order
//! Optimization" (CGF 40(4), 2021): in one pass of 64-bit atomic max of (depth, id) where the
//! device has 64-bit atomics (`raster64.wgsl`), else in two passes of 32-bit atomics
//! (`raster_depth.wgsl`: nearest depth per pixel; `raster_id.wgsl`: the smallest point index at
//! that depth), the same buffer either way ([`RasterPath`]); then a resolve (`resolve.wgsl`) that colours each pixel from its point, with an
//! optional point radius and eye-dome lighting.
//!
//! Points live in a pool of pages of [`BATCH_POINTS`] points (`vec4<u32>` each: x, y, z as f32
//! bits relative to the point's node origin, `w` the attribute word of
//! [`super::source::attribute_word`]; a second pool `vec2<u32>` per point holds its RGBA8 colour
//! and its elevation). A frame draws a batch table: one entry per page of the selected nodes,
//! its node's origin minus the eye (f32) and the page's place and fill; one workgroup per
//! batch, as the paper's batches of 128 points. So the GPU only ever adds small offsets, and
//! survey coordinates keep their precision.

use std::collections::HashMap;

use crate::gpu::layout;
use crate::gpu::shaders::{
    POINTCLOUD_PICK, POINTCLOUD_RASTER_DEPTH, POINTCLOUD_RASTER_ID, POINTCLOUD_RASTER64,
    POINTCLOUD_RESOLVE, RenderOptions,
};

/// Which visibility-buffer path runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum RasterPath {
    /// One pass, a 64-bit atomic max of (depth key, !index) per pixel (`raster64.wgsl`), where
    /// the device has `SHADER_INT64_ATOMIC_MIN_MAX`.
    Atomic64,
    /// Two passes of 32-bit atomics: nearest depth, then the smallest index at it.
    TwoPass32,
}

impl RasterPath {
    /// Name in the report and the side panel.
    pub fn name(self) -> &'static str {
        match self {
            RasterPath::Atomic64 => "compute-64bit-atomic",
            RasterPath::TwoPass32 => "compute-32bit-two-pass",
        }
    }

    /// The best path `device` has.
    pub fn best(device: &wgpu::Device) -> RasterPath {
        if device
            .features()
            .contains(wgpu::Features::SHADER_INT64_ATOMIC_MIN_MAX)
        {
            RasterPath::Atomic64
        } else {
            RasterPath::TwoPass32
        }
    }
}

/// Points per batch: a page of the pool, and the workgroup size of both passes.
pub const BATCH_POINTS: u32 = 128;
/// A batch-table entry that draws nothing (padding up to the dispatch size).
pub const EMPTY_BATCH: [u32; 4] = [0, 0, 0, u32::MAX];

/// `RasterParams` of `shaders/common/pointcloud.wgsl` (208 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct RasterParams {
    /// Camera-relative points (point − eye) → clip space, column-major.
    pub view_proj: [[f32; 4]; 4],
    /// Visibility buffer width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// Padding.
    pub _pad: [u32; 2],
    /// Bit c (word c / 32, bit c % 32) set: points of ASPRS class c are drawn.
    pub class_mask: [[u32; 4]; 2],
}

impl RasterParams {
    /// Parameters drawing every class.
    pub fn new(view_proj: [[f32; 4]; 4], size: (u32, u32)) -> RasterParams {
        RasterParams {
            view_proj,
            width: size.0.max(1),
            height: size.1.max(1),
            _pad: [0; 2],
            class_mask: [[u32::MAX; 4]; 2],
        }
    }
}

/// `ResolveParams` of `shaders/pointcloud/resolve.wgsl` (1,216 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct ResolveParams {
    /// Visibility buffer size in pixels.
    pub width: u32,
    /// See `width`.
    pub height: u32,
    /// Padding.
    pub _pad: [u32; 2],
    /// Colour where no point landed (linear 0–1, written as it is).
    pub background: [f32; 4],
    /// Near and far plane distances (file units), 1 for an orthographic projection else 0, and
    /// the eye-dome lighting strength.
    pub near: f32,
    /// See `near`.
    pub far: f32,
    /// See `near`.
    pub ortho: f32,
    /// See `near`.
    pub edl_strength: f32,
    /// Intensity → [0, 1]: multiplied by this.
    pub intensity_scale: f32,
    /// Elevation (stored relative to the cloud's lowest point) → colormap position:
    /// `(e − elev_min) · elev_scale`.
    pub elev_min: f32,
    /// See `elev_min`.
    pub elev_scale: f32,
    /// Padding.
    pub _pad1: f32,
    /// RGBA8 per ASPRS class 0–31 (classes above use class & 31).
    pub class_colors: [[u32; 4]; 8],
    /// RGBA8 colormap of 256 entries for elevation.
    pub lut: [[u32; 4]; 64],
}

/// `PickParams` of `shaders/pointcloud/pick.wgsl` (32 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct PickParams {
    /// The pixel.
    pub x: i32,
    /// See `x`.
    pub y: i32,
    /// Point radius of the resolve, pixels (0 to [`MAX_RADIUS`]).
    pub radius: i32,
    /// Padding.
    pub _pad: u32,
    /// Visibility buffer size.
    pub width: u32,
    /// See `width`.
    pub height: u32,
    /// Padding.
    pub _pad1: [u32; 2],
}

/// The WGSL mirrors of this module's types, for the layout test.
pub(crate) fn wgsl_mirrors() -> Vec<crate::gpu::mirror::Mirror> {
    use crate::gpu::mirror::wgsl_mirror;
    vec![
        wgsl_mirror!(RasterParams => "RasterParams" {
            view_proj, width, height, _pad, class_mask,
        }),
        wgsl_mirror!(ResolveParams => "ResolveParams" {
            width, height, _pad, background, near, far, ortho, edl_strength, intensity_scale,
            elev_min, elev_scale, _pad1, class_colors, lut,
        }),
        wgsl_mirror!(PickParams => "PickParams" {
            x, y, radius, _pad, width, height, _pad1,
        }),
    ]
}

/// How a point's colour is chosen (the resolve's `MODE`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, clap::ValueEnum, serde::Serialize)]
pub enum ColorMode {
    /// The file's RGB.
    Rgb,
    /// Pulse intensity, grey.
    Intensity,
    /// Elevation through a colormap.
    Elevation,
    /// ASPRS classification colours.
    Classification,
    /// Return number.
    Return,
}

impl ColorMode {
    /// Every mode, in menu order.
    pub const ALL: [ColorMode; 5] = [
        ColorMode::Rgb,
        ColorMode::Intensity,
        ColorMode::Elevation,
        ColorMode::Classification,
        ColorMode::Return,
    ];

    /// Name in the side panel and the report.
    pub fn name(self) -> &'static str {
        match self {
            ColorMode::Rgb => "RGB",
            ColorMode::Intensity => "intensity",
            ColorMode::Elevation => "elevation",
            ColorMode::Classification => "classification",
            ColorMode::Return => "return number",
        }
    }

    fn index(self) -> u32 {
        match self {
            ColorMode::Rgb => 0,
            ColorMode::Intensity => 1,
            ColorMode::Elevation => 2,
            ColorMode::Classification => 3,
            ColorMode::Return => 4,
        }
    }
}

/// One resolve pipeline's fixed choices (override constants, so no pixel branches on them).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ResolveVariant {
    /// Colour mode.
    pub mode: ColorMode,
    /// Point radius in pixels, 0–3: each pixel takes the nearest point within this distance.
    pub radius: u32,
    /// Eye-dome lighting on.
    pub edl: bool,
}

/// Largest point radius, pixels.
pub const MAX_RADIUS: u32 = 3;

/// The visibility buffer of one size: per pixel the nearest depth key and `!index` of the point
/// there (0: none). The 32-bit path keeps them in two arrays of u32; the 64-bit path in one
/// buffer of a u64 per pixel (the id word, then the depth key), which `depth` and `ids` then
/// both are.
pub struct VisibilityBuffer {
    /// Size in pixels.
    pub size: (u32, u32),
    /// Depth keys (pass 1), or the packed buffer.
    pub depth: wgpu::Buffer,
    /// `!index` of the visible point (pass 2; 0 where no point landed), or the packed buffer.
    pub ids: wgpu::Buffer,
    /// Whether `depth` and `ids` are one packed buffer (the 64-bit path).
    pub packed: bool,
}

impl VisibilityBuffer {
    /// Per pixel the id word (`!index`, 0: none) of `bytes`, a copy of [`ids`](Self::ids).
    pub fn id_words(&self, bytes: &[u8]) -> Vec<u32> {
        let words: &[u32] = bytemuck::cast_slice(bytes);
        if self.packed {
            words.iter().step_by(2).copied().collect()
        } else {
            words.to_vec()
        }
    }

    /// Bytes of [`ids`](Self::ids) to copy for [`id_words`](Self::id_words).
    pub fn ids_bytes(&self) -> u64 {
        u64::from(self.size.0) * u64::from(self.size.1) * if self.packed { 8 } else { 4 }
    }
}

/// The rasterizer's pipelines and layouts.
pub struct Rasterizer {
    path: RasterPath,
    layout: wgpu::BindGroupLayout,
    depth_pipeline: wgpu::ComputePipeline,
    id_pipeline: wgpu::ComputePipeline,
    /// The 64-bit path's layout and pipeline.
    atomic64: Option<(wgpu::BindGroupLayout, wgpu::ComputePipeline)>,
    resolve_layout: wgpu::BindGroupLayout,
    resolve_pipeline_layout: wgpu::PipelineLayout,
    format: wgpu::TextureFormat,
    resolve: HashMap<ResolveVariant, wgpu::RenderPipeline>,
    pick_layout: wgpu::BindGroupLayout,
    pick_pipeline: wgpu::ComputePipeline,
}

/// The batch-table entry of the page holding pool points `first..first + count` (`first` a
/// multiple of [`BATCH_POINTS`], 1 ≤ count ≤ 128) of a node whose origin minus the eye is
/// `offset`.
pub fn batch_entry(offset: [f32; 3], first: u32, count: u32) -> [u32; 4] {
    let page = first / BATCH_POINTS;
    [
        offset[0].to_bits(),
        offset[1].to_bits(),
        offset[2].to_bits(),
        (page << 7) | (count.clamp(1, BATCH_POINTS) - 1),
    ]
}

/// Workgroups to dispatch for `batches` entries (x, y as [`layout::fold`]); the table must hold
/// `x · y` entries, padded with [`EMPTY_BATCH`].
pub fn dispatch_size(batches: u32) -> (u32, u32) {
    layout::fold(batches.max(1))
}

/// The batch table of `count` points stored from pool index 0, all at `offset`, padded for the
/// dispatch.
pub fn contiguous_batches(count: u32, offset: [f32; 3]) -> Vec<[u32; 4]> {
    let n = count.div_ceil(BATCH_POINTS);
    let mut t: Vec<[u32; 4]> = (0..n)
        .map(|b| {
            let first = b * BATCH_POINTS;
            batch_entry(offset, first, (count - first).min(BATCH_POINTS))
        })
        .collect();
    let (x, y) = dispatch_size(n);
    t.resize((x * y) as usize, EMPTY_BATCH);
    t
}

impl Rasterizer {
    /// The rasterizer of the best path `device` has ([`RasterPath::best`]); resolve pipelines
    /// into `format` are made per variant ([`prepare_variant`](Rasterizer::prepare_variant)).
    pub fn new(device: &wgpu::Device, format: wgpu::TextureFormat) -> Rasterizer {
        Rasterizer::with_path(device, format, RasterPath::best(device))
    }

    /// The rasterizer of `path` (the 32-bit path where the device lacks the 64-bit one).
    pub fn with_path(
        device: &wgpu::Device,
        format: wgpu::TextureFormat,
        path: RasterPath,
    ) -> Rasterizer {
        let path = if path == RasterPath::Atomic64 && RasterPath::best(device) != path {
            RasterPath::TwoPass32
        } else {
            path
        };
        let cs = wgpu::ShaderStages::COMPUTE;
        let atomic64 = (path == RasterPath::Atomic64).then(|| {
            let layout = layout::bind_group_layout(
                device,
                "pointcloud:raster64",
                &[
                    layout::uniform(0, cs, None),
                    layout::storage(1, cs, true),
                    layout::storage(2, cs, true),
                    layout::storage(3, cs, false),
                ],
            );
            let pipeline =
                POINTCLOUD_RASTER64.compute_pipeline(device, "pointcloud:raster64", &layout);
            (layout, pipeline)
        });
        let packed = if path == RasterPath::Atomic64 {
            1.0
        } else {
            0.0
        };
        let layout = layout::bind_group_layout(
            device,
            "pointcloud:raster",
            &[
                layout::uniform(0, cs, None),
                layout::storage(1, cs, true),
                layout::storage(2, cs, true),
                layout::storage(3, cs, false),
                layout::storage(4, cs, false),
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
                layout::storage(3, fs, true),
                layout::storage(4, fs, true),
            ],
        );
        let resolve_pipeline_layout =
            layout::pipeline_layout(device, "pointcloud:resolve", &[&resolve_layout]);
        let pick_layout = layout::bind_group_layout(
            device,
            "pointcloud:pick",
            &[
                layout::uniform(0, cs, None),
                layout::storage(1, cs, true),
                layout::storage(2, cs, true),
                layout::storage(3, cs, false),
            ],
        );
        Rasterizer {
            path,
            atomic64,
            pick_pipeline: POINTCLOUD_PICK.compute_pipeline_with(
                device,
                "pointcloud:pick",
                &pick_layout,
                &[("PACKED", packed)],
            ),
            pick_layout,
            resolve_layout,
            resolve_pipeline_layout,
            format,
            resolve: HashMap::new(),
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

    /// The path this rasterizer runs.
    pub fn path(&self) -> RasterPath {
        self.path
    }

    /// Makes the resolve pipeline of `v` if it does not exist yet (a few ms, once per variant).
    pub fn prepare_variant(&mut self, device: &wgpu::Device, v: ResolveVariant) {
        if self.resolve.contains_key(&v) {
            return;
        }
        let constants = [
            ("MODE", f64::from(v.mode.index())),
            ("RADIUS", f64::from(v.radius.min(MAX_RADIUS))),
            ("EDL", if v.edl { 1.0 } else { 0.0 }),
            (
                "PACKED",
                if self.path == RasterPath::Atomic64 {
                    1.0
                } else {
                    0.0
                },
            ),
        ];
        let label = format!(
            "pointcloud:resolve:{}:r{}:{}",
            v.mode.name(),
            v.radius,
            if v.edl { "edl" } else { "flat" }
        );
        let pipeline = POINTCLOUD_RESOLVE.render_pipeline(
            device,
            &label,
            &self.resolve_pipeline_layout,
            &RenderOptions {
                format: self.format,
                constants: &constants,
                ..Default::default()
            },
        );
        self.resolve.insert(v, pipeline);
    }

    /// A visibility buffer of `size` pixels (each side ≥ 1) for this rasterizer's path.
    pub fn target(&self, device: &wgpu::Device, size: (u32, u32)) -> VisibilityBuffer {
        let size = (size.0.max(1), size.1.max(1));
        let pixels = u64::from(size.0) * u64::from(size.1);
        let buffer = |label: &str, bytes: u64| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: bytes,
                usage: wgpu::BufferUsages::STORAGE
                    | wgpu::BufferUsages::COPY_DST
                    | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            })
        };
        if self.path == RasterPath::Atomic64 {
            let packed = buffer("pointcloud:visibility:packed", pixels * 8);
            return VisibilityBuffer {
                size,
                depth: packed.clone(),
                ids: packed,
                packed: true,
            };
        }
        VisibilityBuffer {
            size,
            depth: buffer("pointcloud:visibility:depth", pixels * 4),
            ids: buffer("pointcloud:visibility:ids", pixels * 4),
            packed: false,
        }
    }

    /// The passes' bind group: `params` (a uniform of [`RasterParams`]), the point pool
    /// `points` (`vec4<u32>` per point), the batch table `batches` (`vec4<u32>` per entry, see
    /// [`batch_entry`]), into `target`.
    pub fn bind(
        &self,
        device: &wgpu::Device,
        params: &wgpu::Buffer,
        points: &wgpu::Buffer,
        batches: &wgpu::Buffer,
        target: &VisibilityBuffer,
    ) -> wgpu::BindGroup {
        if let Some((layout64, _)) = &self.atomic64 {
            return layout::bind_group(
                device,
                "pointcloud:raster64:group",
                layout64,
                &[
                    params.as_entire_binding(),
                    points.as_entire_binding(),
                    batches.as_entire_binding(),
                    target.depth.as_entire_binding(),
                ],
            );
        }
        layout::bind_group(
            device,
            "pointcloud:raster:group",
            &self.layout,
            &[
                params.as_entire_binding(),
                points.as_entire_binding(),
                batches.as_entire_binding(),
                target.depth.as_entire_binding(),
                target.ids.as_entire_binding(),
            ],
        )
    }

    /// The resolve's bind group: `params` (a uniform of [`ResolveParams`]), `target`, the point
    /// pool and the attribute pool (`vec2<u32>` per point: RGBA8 with R in the low byte, and
    /// the elevation above the cloud's lowest point as f32 bits).
    pub fn bind_resolve(
        &self,
        device: &wgpu::Device,
        params: &wgpu::Buffer,
        target: &VisibilityBuffer,
        points: &wgpu::Buffer,
        attrs: &wgpu::Buffer,
    ) -> wgpu::BindGroup {
        layout::bind_group(
            device,
            "pointcloud:resolve:group",
            &self.resolve_layout,
            &[
                params.as_entire_binding(),
                target.depth.as_entire_binding(),
                target.ids.as_entire_binding(),
                points.as_entire_binding(),
                attrs.as_entire_binding(),
            ],
        )
    }

    /// Draws the resolve of variant `v` (made by [`prepare_variant`]; nothing is drawn when it
    /// was not) into `pass`, whose target is the visibility buffer's size.
    ///
    /// [`prepare_variant`]: Rasterizer::prepare_variant
    pub fn paint(
        &self,
        pass: &mut wgpu::RenderPass<'_>,
        v: ResolveVariant,
        group: &wgpu::BindGroup,
    ) {
        let Some(pipeline) = self.resolve.get(&v) else {
            return;
        };
        pass.set_pipeline(pipeline);
        pass.set_bind_group(0, group, &[]);
        pass.draw(0..3, 0..1);
    }

    /// The pick's bind group: `params` (a uniform of [`PickParams`]), `target`, and `picked`
    /// (8 bytes, storage: `~index` of the point shown at the pixel or 0, and its depth key).
    pub fn bind_pick(
        &self,
        device: &wgpu::Device,
        params: &wgpu::Buffer,
        target: &VisibilityBuffer,
        picked: &wgpu::Buffer,
    ) -> wgpu::BindGroup {
        layout::bind_group(
            device,
            "pointcloud:pick:group",
            &self.pick_layout,
            &[
                params.as_entire_binding(),
                target.depth.as_entire_binding(),
                target.ids.as_entire_binding(),
                picked.as_entire_binding(),
            ],
        )
    }

    /// Records the pick (after [`encode`](Rasterizer::encode) in the same pass).
    pub fn encode_pick(&self, pass: &mut wgpu::ComputePass<'_>, group: &wgpu::BindGroup) {
        pass.set_pipeline(&self.pick_pipeline);
        pass.set_bind_group(0, group, &[]);
        pass.dispatch_workgroups(1, 1, 1);
    }

    /// Clears `target` (in `encoder`, before any pass of the frame).
    pub fn clear(&self, encoder: &mut wgpu::CommandEncoder, target: &VisibilityBuffer) {
        encoder.clear_buffer(&target.depth, 0, None);
        if !target.packed {
            encoder.clear_buffer(&target.ids, 0, None);
        }
    }

    /// Records both passes over `batches` batch-table entries (the table holds the dispatch's
    /// padding, see [`dispatch_size`]) bound in `group` into `pass` (wgpu orders the second
    /// after the first: it reads what the first wrote).
    pub fn encode(&self, pass: &mut wgpu::ComputePass<'_>, group: &wgpu::BindGroup, batches: u32) {
        if batches == 0 {
            return;
        }
        let (x, y) = dispatch_size(batches);
        if let Some((_, pipeline)) = &self.atomic64 {
            pass.set_pipeline(pipeline);
            pass.set_bind_group(0, group, &[]);
            pass.dispatch_workgroups(x, y, 1);
            return;
        }
        for pipeline in [&self.depth_pipeline, &self.id_pipeline] {
            pass.set_pipeline(pipeline);
            pass.set_bind_group(0, group, &[]);
            pass.dispatch_workgroups(x, y, 1);
        }
    }
}

/// The CPU reference of the visibility buffer: for `points` (camera-relative) seen through
/// `view_proj` (column-major) into `size` pixels, per pixel the index of the nearest point
/// (smallest depth; the smallest index among equal depths), `None` where none lands. The same
/// projection as `project` in `shaders/common/pointcloud.wgsl`, in f32.
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
