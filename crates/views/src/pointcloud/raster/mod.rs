//! The point-cloud compute rasterizer: a visibility buffer of the nearest point per pixel, after
//! Schütz, Kerbl and Wimmer, "Rendering Point Clouds with Compute Shaders and Vertex Order
//! Optimization" (CGF 40(4), 2021): in one pass of 64-bit atomic max of (depth, id) where the
//! device has 64-bit atomics (`raster64.wgsl`), else in two passes of 32-bit atomics
//! (`raster_depth.wgsl`: nearest depth per pixel; `raster_id.wgsl`: the smallest point index at
//! that depth), the same buffer either way ([`RasterPath`]); then a resolve (`resolve.wgsl`, a
//! compute pass into a [`ResolveImage`] copied into the target) that colours each pixel from its
//! point, with an optional point radius and eye-dome lighting.
//!
//! Points live in a pool of pages of [`BATCH_POINTS`] points (`vec4<u32>` each: x, y, z as f32
//! bits relative to the point's node origin, `w` the attribute word of
//! [`super::source::attribute_word`]; a second pool `vec2<u32>` per point holds its RGBA8 colour
//! and its elevation). A frame draws a batch table: one entry per page of the selected nodes,
//! its node's origin minus the eye (f32) and the page's place and fill; one workgroup per
//! batch, as the paper's batches of 128 points. So the GPU only ever adds small offsets, and
//! survey coordinates keep their precision.
//!
//! Every pass tests depth early (Schütz, Kerbl, Hei, Wimmer, Wimmer, "Software Rasterization of
//! 2 Billion Points in Real Time", HPG 2022, §4.1): a point loads its pixel's value first and
//! runs the atomic only when it would win.
//!
//! Quantized clouds ([`QuantizedCloud`], the `main_q` entry points): 4 bytes a point, x, y, z
//! as 10-bit cells of its batch's box (the 2022 paper's "low precision" encoding, with
//! power-of-two cell sizes so the decode is exact in f32), batches of up to [`QBATCH_POINTS`]
//! spatially coherent points ([`morton_order`]) whose boxes let a workgroup skip a batch wholly
//! outside the view, ids and attributes read only for the visible points in the resolve, and the
//! cloud spread over as many storage bindings as it needs ([`points_per_binding`], from the
//! device's limits), one dispatch (and one resolve dispatch) per binding.
//!
//! The visibility buffer and the resolve's image are in pieces of whole rows, each within the
//! device's binding limits ([`super::pieces`]): one piece at ordinary sizes, so every pass is
//! one dispatch per binding as above; a target over the limit (6000 × 4000 on lavapipe) takes a
//! dispatch per piece, each piece holding a halo of rows so that the point radius, eye-dome
//! lighting and the pick read across piece edges as they would in one buffer.
//!
//! The parts: the GPU structs the shaders mirror and the resolve's choices (`params.rs`), quantized
//! clouds (`quantized.rs`), the visibility buffer and the resolve's image (`targets.rs`), the
//! pipelines and layouts (`pipelines.rs`), the raster passes (`passes.rs`), the resolve
//! (`resolve.rs`), the pick (`pick.rs`) and the CPU reference (`cpu.rs`).

use std::collections::HashMap;

use super::pieces::PieceGroups;
use crate::gpu::layout;

mod cpu;
mod params;
mod passes;
mod pick;
mod pipelines;
mod quantized;
mod resolve;
mod targets;

pub use cpu::cpu_visibility;
pub(crate) use params::wgsl_mirrors;
pub use params::{PickParams, RasterParams, ResolveChunk, ResolveParams, ResolveVariant};
pub use quantized::{
    QBatch, QDISPATCH_X, QuantizedChunk, QuantizedCloud, points_per_binding, qdispatch_size,
};
pub use targets::{ImagePiece, ResolveImage, VisibilityBuffer, VisibilityPiece};
pub use vizdeck_pointcloud::color::{ColorMode, MAX_RADIUS};

/// The binding of the raster passes' [`Piece`] uniform (`piece` of
/// `shaders/common/pointcloud_raster.wgsl`).
const PIECE_BINDING: u32 = 8;
/// The binding of the resolve's [`Piece`] uniform (`piece` of `shaders/pointcloud/resolve.wgsl`).
const RESOLVE_PIECE_BINDING: u32 = 9;

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

/// One stage of the 16-byte raster passes ([`Rasterizer::encode_stage`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RasterStage {
    /// The depth pass (the 64-bit path's one pass).
    Depth,
    /// The 32-bit path's id pass (nothing on the 64-bit path).
    Ids,
}

/// Points per batch: a page of the pool, and the workgroup size of both passes.
pub const BATCH_POINTS: u32 = 128;
/// A batch-table entry that draws nothing (padding up to the dispatch size).
pub const EMPTY_BATCH: [u32; 4] = [0, 0, 0, u32::MAX];

pub use vizdeck_pointcloud::quantize::{QBATCH_POINTS, QCELLS, morton_order, quantize_batch};

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
    /// The two-pool resolve (`cs_dual`): its layout and pipelines by variant.
    dual_layout: wgpu::BindGroupLayout,
    dual_pipeline_layout: wgpu::PipelineLayout,
    dual: HashMap<ResolveVariant, wgpu::ComputePipeline>,
    /// The resolve's output (group 1): a [`ResolveImage`].
    image_layout: wgpu::BindGroupLayout,
    /// The image holds BGRA8 (`SWAP_RB`): the scene texture is `Bgra8Unorm`.
    swap_rb: bool,
    /// Resolve pipelines by variant and whether they read a quantized cloud's attributes.
    resolve: HashMap<(ResolveVariant, bool), wgpu::ComputePipeline>,
    /// The [`ResolveChunk`] of a cloud in one binding (ids 0 … u32::MAX − 1).
    chunk_all: wgpu::Buffer,
    pick_layout: wgpu::BindGroupLayout,
    pick_pipeline: wgpu::ComputePipeline,
    /// Quantized clouds: the layout (bindings 0, 3, 4 on the 32-bit path, 5, 6) and the
    /// `main_q` pipelines of the path (one, or depth then id).
    q_layout: wgpu::BindGroupLayout,
    q_pipeline_layout: wgpu::PipelineLayout,
    q_pipelines: Vec<wgpu::ComputePipeline>,
    /// Bytes a piece of a visibility buffer or image may take ([`super::pieces::pieces`]).
    piece_limit: u64,
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

/// One bind group per piece of `target`, made by `make(k, piece)`.
fn piece_groups(
    target: &VisibilityBuffer,
    mut make: impl FnMut(usize, &VisibilityPiece) -> wgpu::BindGroup,
) -> PieceGroups {
    PieceGroups {
        groups: target
            .pieces
            .iter()
            .enumerate()
            .map(|(k, p)| make(k, p))
            .collect(),
        pieces: target.pieces.iter().map(|p| p.piece).collect(),
    }
}

/// The bind group `label` of `layout` with `entries` (binding, resource).
fn group_of(
    device: &wgpu::Device,
    label: &str,
    layout: &wgpu::BindGroupLayout,
    entries: Vec<(u32, wgpu::BindingResource<'_>)>,
) -> wgpu::BindGroup {
    let entries: Vec<wgpu::BindGroupEntry<'_>> = entries
        .into_iter()
        .map(|(binding, resource)| wgpu::BindGroupEntry { binding, resource })
        .collect();
    device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some(label),
        layout,
        entries: &entries,
    })
}
