//! The rasterizer's pipelines and layouts: [`Rasterizer::new`], its settings and the resolve
//! pipelines made per variant.

use std::collections::HashMap;

use super::resolve::chunk_buffer;
use super::{
    MAX_RADIUS, PIECE_BINDING, RESOLVE_PIECE_BINDING, RasterPath, Rasterizer, ResolveChunk,
    ResolveVariant,
};
use crate::gpu::layout;
use crate::pointcloud::pieces::piece_limit;
use crate::pointcloud::shaders::{
    POINTCLOUD_PICK, POINTCLOUD_RASTER_DEPTH, POINTCLOUD_RASTER_ID, POINTCLOUD_RASTER64,
    POINTCLOUD_RESOLVE,
};

/// The quantized raster pipelines of `path` (entry point `main_q`: the 64-bit pass, or the 32-bit
/// depth then id passes), with the workgroup depth filter (`QFILTER`) on or off.
fn quantized_pipelines(
    device: &wgpu::Device,
    path: RasterPath,
    layout: &wgpu::PipelineLayout,
    filter: bool,
) -> Vec<wgpu::ComputePipeline> {
    let constants = [("QFILTER", if filter { 1.0 } else { 0.0 })];
    let make = |source: &crate::gpu::shaders::ShaderSource, label: &str| {
        source.compute_pipeline_entry_with(device, label, layout, "main_q", &constants)
    };
    if path == RasterPath::Atomic64 {
        vec![make(&POINTCLOUD_RASTER64, "pointcloud:raster64_q")]
    } else {
        vec![
            make(&POINTCLOUD_RASTER_DEPTH, "pointcloud:raster_depth_q"),
            make(&POINTCLOUD_RASTER_ID, "pointcloud:raster_id_q"),
        ]
    }
}

impl Rasterizer {
    /// The rasterizer of the best path `device` has ([`RasterPath::best`]), resolving for a target
    /// of `format`: `Rgba8Unorm` or `Bgra8Unorm` (the scene formats,
    /// [`crate::gpu::Gpu::scene_format`]), which the [`ResolveImage`](super::ResolveImage) holds as
    /// 8-bit RGBA or BGRA and [`ResolveImage::copy_to`](super::ResolveImage::copy_to) copies byte
    /// for byte (any other format would take those bytes as they are, so none other is supported);
    /// resolve pipelines are made per variant ([`prepare_variant`](Rasterizer::prepare_variant)).
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
                    layout::uniform(PIECE_BINDING, cs, None),
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
                layout::uniform(PIECE_BINDING, cs, None),
            ],
        );
        let mut q_entries = vec![
            layout::uniform(0, cs, None),
            layout::storage(3, cs, false),
            layout::storage(5, cs, true),
            layout::storage(6, cs, true),
            layout::storage(7, cs, true),
            layout::uniform(PIECE_BINDING, cs, None),
        ];
        if path == RasterPath::TwoPass32 {
            q_entries.push(layout::storage(4, cs, false));
        }
        let q_layout = layout::bind_group_layout(device, "pointcloud:raster_q", &q_entries);
        let q_pl = layout::pipeline_layout(device, "pointcloud:raster_q", &[&q_layout]);
        let q_pipelines = quantized_pipelines(device, path, &q_pl, false);
        // The resolve's bindings 0–5 and its piece (9); the two-pool resolve adds the second
        // pool's 6–8; its output image is group 1.
        let resolve_entries = [
            layout::uniform(0, cs, None),
            layout::storage(1, cs, true),
            layout::storage(2, cs, true),
            layout::storage(3, cs, true),
            layout::storage(4, cs, true),
            layout::uniform(5, cs, None),
            layout::uniform(RESOLVE_PIECE_BINDING, cs, None),
        ];
        let image_layout = layout::bind_group_layout(
            device,
            "pointcloud:resolve:image",
            &[layout::storage(0, cs, false)],
        );
        let resolve_layout =
            layout::bind_group_layout(device, "pointcloud:resolve", &resolve_entries);
        let chunk_all = chunk_buffer(
            device,
            "pointcloud:resolve:chunk:all",
            ResolveChunk {
                first: 0,
                count: u32::MAX,
                _pad: [0; 2],
            },
        );
        let resolve_pipeline_layout = layout::pipeline_layout(
            device,
            "pointcloud:resolve",
            &[&resolve_layout, &image_layout],
        );
        let mut dual_entries = resolve_entries.to_vec();
        dual_entries.extend([
            layout::storage(6, cs, true),
            layout::storage(7, cs, true),
            layout::uniform(8, cs, None),
        ]);
        let dual_layout =
            layout::bind_group_layout(device, "pointcloud:resolve:dual", &dual_entries);
        let dual_pipeline_layout = layout::pipeline_layout(
            device,
            "pointcloud:resolve:dual",
            &[&dual_layout, &image_layout],
        );
        let pick_layout = layout::bind_group_layout(
            device,
            "pointcloud:pick",
            &[
                layout::uniform(0, cs, None),
                layout::storage(1, cs, true),
                layout::storage(2, cs, true),
                layout::storage(3, cs, false),
                layout::uniform(4, cs, None),
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
            dual_layout,
            dual_pipeline_layout,
            dual: HashMap::new(),
            image_layout,
            swap_rb: format.remove_srgb_suffix() == wgpu::TextureFormat::Bgra8Unorm,
            resolve: HashMap::new(),
            chunk_all,
            q_layout,
            q_pipeline_layout: q_pl,
            q_pipelines,
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
            piece_limit: piece_limit(&device.limits()),
        }
    }

    /// Bytes a piece of this rasterizer's visibility buffers and images may take: the device's
    /// `max_storage_buffer_binding_size` and `max_buffer_size` ([`piece_limit`]), unless lowered.
    pub fn piece_limit(&self) -> u64 {
        self.piece_limit
    }

    /// Lowers the bytes a piece may take to `bytes` (at most the device's limit; at least one row
    /// and its halo is always a piece, see [`pieces`](crate::pointcloud::pieces::pieces)), for the
    /// targets and images made after: tests split a small target into pieces this way.
    pub fn set_piece_limit(&mut self, device: &wgpu::Device, bytes: u64) {
        self.piece_limit = bytes.min(piece_limit(&device.limits()));
    }

    /// The path this rasterizer runs.
    pub fn path(&self) -> RasterPath {
        self.path
    }

    /// Turns the quantized passes' workgroup depth filter (`QFILTER` of
    /// `shaders/common/pointcloud_raster.wgsl`) on or off: the same visibility buffer either
    /// way. Off by default: on the H200 it made dense clouds 1.4–7× slower (BENCHMARKS.md); kept
    /// for the kernel bench's comparison.
    pub fn set_workgroup_filter(&mut self, device: &wgpu::Device, on: bool) {
        self.q_pipelines = quantized_pipelines(device, self.path, &self.q_pipeline_layout, on);
    }

    /// Makes the resolve pipeline of `v` if it does not exist yet (a few ms, once per variant).
    pub fn prepare_variant(&mut self, device: &wgpu::Device, v: ResolveVariant) {
        self.prepare(device, v, false);
    }

    /// [`prepare_variant`](Rasterizer::prepare_variant) for the resolve of a quantized cloud
    /// ([`resolve_quantized`](Rasterizer::resolve_quantized)).
    pub fn prepare_variant_quantized(&mut self, device: &wgpu::Device, v: ResolveVariant) {
        self.prepare(device, v, true);
    }

    fn prepare(&mut self, device: &wgpu::Device, v: ResolveVariant, quant: bool) {
        if !self.resolve.contains_key(&(v, quant)) {
            let pipeline = self.resolve_pipeline(device, v, quant, false);
            self.resolve.insert((v, quant), pipeline);
        }
    }

    /// Makes the two-pool resolve pipeline of `v` (`cs_dual`: a quantized chunk and the 16-byte
    /// points of a second pool in one dispatch) if it does not exist yet.
    pub fn prepare_variant_dual(&mut self, device: &wgpu::Device, v: ResolveVariant) {
        if !self.dual.contains_key(&v) {
            let pipeline = self.resolve_pipeline(device, v, true, true);
            self.dual.insert(v, pipeline);
        }
    }

    /// The resolve pipeline of variant `v`: 16-byte points or a quantized chunk (`quant`), or
    /// both pools in one dispatch (`dual`, entry point `cs_dual`).
    fn resolve_pipeline(
        &self,
        device: &wgpu::Device,
        v: ResolveVariant,
        quant: bool,
        dual: bool,
    ) -> wgpu::ComputePipeline {
        let flag = |on: bool| if on { 1.0 } else { 0.0 };
        let constants = [
            ("MODE", f64::from(v.mode.index())),
            ("RADIUS", f64::from(v.radius.min(MAX_RADIUS))),
            ("EDL", flag(v.edl)),
            ("PACKED", flag(self.path == RasterPath::Atomic64)),
            ("QUANT", flag(quant)),
            ("SWAP_RB", flag(self.swap_rb)),
        ];
        let label = format!(
            "pointcloud:resolve:{}:r{}:{}{}",
            v.mode.name(),
            v.radius,
            if v.edl { "edl" } else { "flat" },
            match (quant, dual) {
                (_, true) => ":dual",
                (true, false) => ":quantized",
                (false, false) => "",
            }
        );
        let layout = if dual {
            &self.dual_pipeline_layout
        } else {
            &self.resolve_pipeline_layout
        };
        POINTCLOUD_RESOLVE.compute_pipeline_entry_with(
            device,
            &label,
            layout,
            if dual { "cs_dual" } else { "cs_main" },
            &constants,
        )
    }
}
