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

use std::collections::HashMap;

use super::pieces::{Piece, PieceGroups, piece_limit, pieces};
use crate::gpu::layout;
use crate::scene::shaders::{
    POINTCLOUD_PICK, POINTCLOUD_RASTER_DEPTH, POINTCLOUD_RASTER_ID, POINTCLOUD_RASTER64,
    POINTCLOUD_RESOLVE,
};

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

/// `QBatch` of `shaders/common/pointcloud.wgsl` (32 bytes): one batch of a quantized cloud.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct QBatch {
    /// The box's low corner minus the eye (camera-relative), file units.
    pub lo: [f32; 3],
    /// Id of the batch's first point (point k of the batch has id `first + k`).
    pub first: u32,
    /// Cell size per axis, file units (a power of two; the box is [`QCELLS`] cells a side).
    pub step: [f32; 3],
    /// `(index of its first point in its binding / QBATCH_POINTS) << 10 | (count − 1)`;
    /// `u32::MAX`: an empty entry (padding).
    pub slot: u32,
}

impl QBatch {
    /// An entry that draws nothing (padding up to the dispatch size).
    pub const EMPTY: QBatch = QBatch {
        lo: [0.0; 3],
        first: 0,
        step: [0.0; 3],
        slot: u32::MAX,
    };

    /// The entry of the batch of `count` points (clamped to 1…[`QBATCH_POINTS`]) stored from
    /// element `page · QBATCH_POINTS` of its binding, ids from `first`, in the box of low
    /// corner `lo` (minus the eye) and cell size `step`.
    pub fn new(lo: [f32; 3], step: [f32; 3], first: u32, page: u32, count: u32) -> QBatch {
        QBatch {
            lo,
            first,
            step,
            slot: (page.min((1 << 22) - 1) << 10) | (count.clamp(1, QBATCH_POINTS) - 1),
        }
    }

    /// The camera-relative position of point code `q` of this batch: the centre of its cell,
    /// the same arithmetic as `qdecode` in `shaders/common/pointcloud.wgsl` (exact in f32: the
    /// step is a power of two), so the GPU and this agree bit for bit.
    pub fn decode(&self, q: u32) -> [f32; 3] {
        let c = [q & 1023, (q >> 10) & 1023, (q >> 20) & 1023];
        std::array::from_fn(|a| self.lo[a] + (c[a] as f32 + 0.5) * self.step[a])
    }
}

/// Points a chunk of a quantized cloud holds on a device of `limits`: its largest per-point
/// buffer, the resolve's attributes at 8 bytes a point (the codes take 4), within
/// `max_storage_buffer_binding_size` and `max_buffer_size`; a multiple of [`QBATCH_POINTS`], at
/// least one batch.
pub fn points_per_binding(limits: &wgpu::Limits) -> u64 {
    let bytes = limits
        .max_storage_buffer_binding_size
        .min(limits.max_buffer_size);
    let batch = u64::from(QBATCH_POINTS);
    (bytes / 8 / batch).clamp(1, 1 << 22) * batch
}

/// Workgroups a row of a quantized dispatch (see [`qdispatch_size`]).
pub const QDISPATCH_X: u32 = 8192;

/// Workgroups `(x, y)` of the quantized passes for `batches` batch-table entries: `(batches,
/// 1)` up to [`QDISPATCH_X`], else `(QDISPATCH_X, rows)`; the table holds `x · y` entries
/// (padded with [`QBatch::EMPTY`]). The shaders read entry `wg.y + wg.x · y`
/// (`qbatch_index`): consecutive batches, which cover neighbouring pixels, run `x` workgroups
/// apart, so one has finished before the next starts and the early depth test rejects most of
/// the next one's points (dense clouds: hundreds of points a pixel).
pub fn qdispatch_size(batches: u32) -> (u32, u32) {
    let batches = batches.max(1);
    if batches <= QDISPATCH_X {
        (batches, 1)
    } else {
        (QDISPATCH_X, batches.div_ceil(QDISPATCH_X))
    }
}

/// One binding of a [`QuantizedCloud`]: points `first .. first + count` (ids).
pub struct QuantizedChunk {
    /// Point codes, a u32 each (see [`quantize_batch`]).
    pub codes: wgpu::Buffer,
    /// Its batch table: [`QBatch`] entries, padded with [`QBatch::EMPTY`] to the dispatch size.
    pub batches: wgpu::Buffer,
    /// Batches (entries before the padding).
    pub batch_count: u32,
    /// Id of its first point.
    pub first: u32,
    /// Points it holds.
    pub count: u32,
}

/// A quantized cloud on the GPU: `points` points (ids 0 … points − 1) in chunks of at most
/// `per_binding` points, each its own storage buffers.
pub struct QuantizedCloud {
    /// The chunks, by id.
    pub chunks: Vec<QuantizedChunk>,
    /// Points in all.
    pub points: u64,
}

impl QuantizedCloud {
    /// Creates the buffers of a cloud of `total` points (at most `u32::MAX − 1`, ids are u32),
    /// `per_binding` points a binding (rounded down to a multiple of [`QBATCH_POINTS`], at
    /// least one batch; at most [`points_per_binding`] of the device), and fills them a piece
    /// at a time (up to 64 M points, through host memory) through `fill(first, codes, table)`:
    /// `codes` the piece's points (ids `first …`, `first` a multiple of [`QBATCH_POINTS`]),
    /// `table` its batches (entry j holds the points from element j · [`QBATCH_POINTS`] of
    /// `codes`, ids from `first + j · QBATCH_POINTS`, made with [`QBatch::new`]; the page bits
    /// of `slot` are set here, whatever `fill` gives).
    ///
    /// # Errors
    /// A line saying why, when the ids do not fit or the device cannot allocate the buffers
    /// (out of memory): the buffers made so far are dropped.
    pub fn build(
        device: &wgpu::Device,
        total: u64,
        per_binding: u64,
        mut fill: impl FnMut(u32, &mut [u32], &mut [QBatch]),
    ) -> Result<QuantizedCloud, String> {
        if total >= u64::from(u32::MAX) {
            return Err(format!(
                "{total} points: ids are 32-bit, at most {}",
                u32::MAX - 1
            ));
        }
        let batch = u64::from(QBATCH_POINTS);
        let per =
            (per_binding / batch).clamp(1, points_per_binding(&device.limits()) / batch) * batch;
        let mut chunks = Vec::new();
        let mut first = 0u64;
        while first < total {
            let count = (total - first).min(per);
            let batches = count.div_ceil(batch) as u32;
            let (x, y) = qdispatch_size(batches);
            let entries = u64::from(x) * u64::from(y);
            let scope = device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
            let label = format!("pointcloud:quantized:codes:{}", chunks.len());
            let codes = device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(&label),
                size: (count * 4).next_multiple_of(16),
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: true,
            });
            let label = format!("pointcloud:quantized:batches:{}", chunks.len());
            let table = device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(&label),
                size: entries * std::mem::size_of::<QBatch>() as u64,
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: true,
            });
            if let Some(e) = pollster::block_on(scope.pop()) {
                return Err(format!(
                    "{total} points ({} bytes quantized) do not fit in this device's memory: {e}",
                    total * 4
                ));
            }
            {
                let (Ok(mut c), Ok(mut t)) = (
                    codes.slice(..).get_mapped_range_mut(),
                    table.slice(..).get_mapped_range_mut(),
                ) else {
                    return Err(format!(
                        "{total} points: the new buffers could not be mapped"
                    ));
                };
                // Filled a piece at a time through host memory (mapped views are write-only).
                const PIECE_BATCHES: u64 = 65536;
                let piece = PIECE_BATCHES * batch;
                let mut host_codes = vec![0u32; count.min(piece) as usize];
                let mut host_table = vec![QBatch::EMPTY; entries.min(PIECE_BATCHES) as usize];
                let mut done = 0u64;
                while done < count {
                    let n = (count - done).min(piece);
                    let nb = n.div_ceil(batch) as usize;
                    let page0 = (done / batch) as u32;
                    let codes_part = &mut host_codes[..n as usize];
                    let table_part = &mut host_table[..nb];
                    table_part.fill(QBatch::EMPTY);
                    fill((first + done) as u32, codes_part, table_part);
                    for (j, e) in table_part.iter_mut().enumerate() {
                        let c = if e.slot == u32::MAX {
                            1
                        } else {
                            (e.slot & 1023) + 1
                        };
                        *e = QBatch::new(e.lo, e.step, e.first, page0 + j as u32, c);
                    }
                    c.slice(done as usize * 4..(done + n) as usize * 4)
                        .copy_from_slice(bytemuck::cast_slice(codes_part));
                    let tb = std::mem::size_of::<QBatch>();
                    t.slice(page0 as usize * tb..(page0 as usize + nb) * tb)
                        .copy_from_slice(bytemuck::cast_slice(table_part));
                    done += n;
                }
                let pad = bytemuck::cast_slice::<QBatch, u8>(&[QBatch::EMPTY]).to_vec();
                for e in u64::from(batches)..entries {
                    let at = e as usize * pad.len();
                    t.slice(at..at + pad.len()).copy_from_slice(&pad);
                }
            }
            codes.unmap();
            table.unmap();
            chunks.push(QuantizedChunk {
                codes,
                batches: table,
                batch_count: batches,
                first: first as u32,
                count: count as u32,
            });
            first += count;
        }
        Ok(QuantizedCloud {
            chunks,
            points: total,
        })
    }

    /// The cloud of `points` (file units, in the order given: point i has id i; sort them with
    /// [`morton_order`] first for coherent batches) seen from `eye`, quantized batch by batch
    /// ([`quantize_batch`]), `per_binding` points a binding (see [`build`](Self::build)).
    /// Returns the cloud, its batch entries (entry `id / QBATCH_POINTS` decodes point `id`:
    /// [`QBatch::decode`] of its code; their `slot` page bits are not the GPU's) and the codes
    /// by id.
    ///
    /// # Errors
    /// As [`build`](Self::build).
    pub fn from_points(
        device: &wgpu::Device,
        points: &[[f32; 3]],
        eye: [f32; 3],
        per_binding: u64,
    ) -> Result<(QuantizedCloud, Vec<QBatch>, Vec<u32>), String> {
        let mut all_batches = Vec::new();
        let mut all_codes = Vec::new();
        let cloud = Self::build(
            device,
            points.len() as u64,
            per_binding,
            |first, codes, table| {
                let pts = &points[first as usize..first as usize + codes.len()];
                for (j, (run, out)) in pts
                    .chunks(QBATCH_POINTS as usize)
                    .zip(codes.chunks_mut(QBATCH_POINTS as usize))
                    .enumerate()
                {
                    let (lo, step) = quantize_batch(run, out);
                    let lo = std::array::from_fn(|a| lo[a] - eye[a]);
                    table[j] = QBatch::new(
                        lo,
                        step,
                        first + j as u32 * QBATCH_POINTS,
                        0,
                        run.len() as u32,
                    );
                }
                all_batches.extend_from_slice(table);
                all_codes.extend_from_slice(codes);
            },
        )?;
        Ok((cloud, all_batches, all_codes))
    }
}

/// `ResolveChunk` of `shaders/pointcloud/resolve.wgsl` (16 bytes): the ids one resolve dispatch
/// colours (point id `first + k` is element k of its bindings, for k < count).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct ResolveChunk {
    /// Id of element 0.
    pub first: u32,
    /// Elements.
    pub count: u32,
    /// Padding.
    pub _pad: [u32; 2],
}

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
    /// Words (pixels) per row of the [`ResolveImage`]: [`ResolveImage::pitch`].
    pub pitch: u32,
    /// Padding.
    pub _pad: u32,
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
            width, height, pitch, _pad, background, near, far, ortho, edl_strength, intensity_scale,
            elev_min, elev_scale, _pad1, class_colors, lut,
        }),
        wgsl_mirror!(PickParams => "PickParams" {
            x, y, radius, _pad, width, height, _pad1,
        }),
        wgsl_mirror!(QBatch => "QBatch" { lo, first, step, slot }),
        wgsl_mirror!(ResolveChunk => "ResolveChunk" { first, count, _pad }),
    ]
    .into_iter()
    .chain(super::pieces::wgsl_mirrors())
    .collect()
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
/// there (0: none), in [`pieces`](super::pieces) of whole rows (one where the whole target fits
/// the device's binding limits). The 32-bit path keeps them in two arrays of u32 a piece; the
/// 64-bit path in one buffer of a u64 per pixel (the id word, then the depth key), which a
/// piece's `depth` and `ids` then both are.
pub struct VisibilityBuffer {
    /// Size in pixels.
    pub size: (u32, u32),
    /// The pieces, top to bottom.
    pub pieces: Vec<VisibilityPiece>,
    /// Whether each piece's `depth` and `ids` are one packed buffer (the 64-bit path).
    pub packed: bool,
}

/// One piece of a [`VisibilityBuffer`]: rows `piece.row0 .. piece.row0 + piece.rows` of the
/// target, `width` pixels a row.
pub struct VisibilityPiece {
    /// Its rows.
    pub piece: Piece,
    /// Depth keys (pass 1), or the packed buffer.
    pub depth: wgpu::Buffer,
    /// `!index` of the visible point (pass 2; 0 where no point landed), or the packed buffer.
    pub ids: wgpu::Buffer,
    /// `piece` in a uniform buffer (the `Piece` the passes bind).
    pub uniform: wgpu::Buffer,
}

impl VisibilityBuffer {
    /// Per pixel of the core rows of piece `k` the id word (`!index`, 0: none) of `bytes`, a
    /// copy of its [`ids`](VisibilityPiece::ids) ([`ids_bytes`](Self::ids_bytes) bytes), row by
    /// row; the pieces' words one after the other are the whole target's.
    pub fn id_words(&self, k: usize, bytes: &[u8]) -> Vec<u32> {
        let words: &[u32] = bytemuck::cast_slice(bytes);
        let Some(p) = self.pieces.get(k).map(|p| p.piece) else {
            return Vec::new();
        };
        let width = self.size.0 as usize;
        let step = if self.packed { 2 } else { 1 };
        let from = (p.core0 - p.row0) as usize * width * step;
        let to = (from + p.core_rows as usize * width * step).min(words.len());
        words[from.min(to)..to]
            .iter()
            .step_by(step)
            .copied()
            .collect()
    }

    /// Bytes of piece `k`'s [`ids`](VisibilityPiece::ids) to copy for
    /// [`id_words`](Self::id_words) (0 past the last piece).
    pub fn ids_bytes(&self, k: usize) -> u64 {
        self.pieces.get(k).map_or(0, |p| {
            u64::from(self.size.0) * u64::from(p.piece.rows) * if self.packed { 8 } else { 4 }
        })
    }
}

/// The resolve's output: the colour of every pixel as 8-bit RGBA (BGRA for a `Bgra8Unorm`
/// target), a u32 a pixel with R (B) in the low byte, rows of [`pitch`](Self::pitch) words; a
/// compute pass writes it (`resolve.wgsl`) and [`copy_to`](Self::copy_to) brings it into the
/// target texture (the row pitch is that of a buffer-to-texture copy).
/// The image is in the pieces of the [`VisibilityBuffer`] of its size: piece k's buffer holds
/// the core rows of the visibility buffer's piece k.
pub struct ResolveImage {
    /// Size in pixels.
    pub size: (u32, u32),
    /// Words (pixels) per row: the width rounded up to a multiple of 64 (256 bytes).
    pub pitch: u32,
    /// The pieces, top to bottom.
    pub pieces: Vec<ImagePiece>,
}

/// One piece of a [`ResolveImage`]: target rows `piece.core0 .. piece.core0 + piece.core_rows`.
pub struct ImagePiece {
    /// Its rows.
    pub piece: Piece,
    /// The pixels, `pitch × core_rows` words (STORAGE | COPY_SRC | COPY_DST: a caller may fill
    /// it first, as the tests do, so that a pixel no dispatch writes keeps a known value).
    pub buffer: wgpu::Buffer,
    group: wgpu::BindGroup,
}

impl ResolveImage {
    /// Words per row of an image `width` pixels wide: `width` rounded up to
    /// `COPY_BYTES_PER_ROW_ALIGNMENT / 4`.
    pub fn pitch_of(width: u32) -> u32 {
        let align = wgpu::COPY_BYTES_PER_ROW_ALIGNMENT / 4;
        width.max(1).div_ceil(align) * align
    }

    /// Records the copy of the image into `texture` (its format that of the [`Rasterizer`],
    /// COPY_DST among its usages), over the size both share: one copy per piece.
    pub fn copy_to(&self, encoder: &mut wgpu::CommandEncoder, texture: &wgpu::Texture) {
        let width = self.size.0.min(texture.width());
        let bottom = self.size.1.min(texture.height());
        for p in &self.pieces {
            let (y0, rows) = (p.piece.core0, p.piece.core_rows);
            if y0 >= bottom || width == 0 {
                continue;
            }
            encoder.copy_buffer_to_texture(
                wgpu::TexelCopyBufferInfo {
                    buffer: &p.buffer,
                    layout: wgpu::TexelCopyBufferLayout {
                        offset: 0,
                        bytes_per_row: Some(self.pitch * 4),
                        rows_per_image: None,
                    },
                },
                wgpu::TexelCopyTextureInfo {
                    texture,
                    mip_level: 0,
                    origin: wgpu::Origin3d { x: 0, y: y0, z: 0 },
                    aspect: wgpu::TextureAspect::All,
                },
                wgpu::Extent3d {
                    width,
                    height: rows.min(bottom - y0),
                    depth_or_array_layers: 1,
                },
            );
        }
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
    /// The rasterizer of the best path `device` has ([`RasterPath::best`]), resolving for a
    /// target of `format`: `Rgba8Unorm` or `Bgra8Unorm` (the scene formats,
    /// [`crate::gpu::Gpu::scene_format`]), which the [`ResolveImage`] holds as 8-bit RGBA or
    /// BGRA and [`ResolveImage::copy_to`] copies byte for byte (any other format would take
    /// those bytes as they are, so none other is supported); resolve pipelines are made per
    /// variant ([`prepare_variant`](Rasterizer::prepare_variant)).
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

    /// Lowers the bytes a piece may take to `bytes` (at most the device's limit; at least one
    /// row and its halo is always a piece, see [`pieces`]), for the targets and images made
    /// after: tests split a small target into pieces this way.
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

    /// The resolve's output for a target of `size` pixels (each side ≥ 1), in the pieces of
    /// this rasterizer's visibility buffer of that size: see [`ResolveImage`].
    pub fn image(&self, device: &wgpu::Device, size: (u32, u32)) -> ResolveImage {
        let size = (size.0.max(1), size.1.max(1));
        let pitch = ResolveImage::pitch_of(size.0);
        let pieces = pieces(size, self.piece_limit)
            .into_iter()
            .enumerate()
            .map(|(k, piece)| {
                let buffer = device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some(&format!("pointcloud:resolve:image:{k}")),
                    size: u64::from(pitch) * u64::from(piece.core_rows) * 4,
                    usage: wgpu::BufferUsages::STORAGE
                        | wgpu::BufferUsages::COPY_SRC
                        | wgpu::BufferUsages::COPY_DST,
                    mapped_at_creation: false,
                });
                let group = layout::bind_group(
                    device,
                    &format!("pointcloud:resolve:image:{k}:group"),
                    &self.image_layout,
                    &[buffer.as_entire_binding()],
                );
                ImagePiece {
                    piece,
                    buffer,
                    group,
                }
            })
            .collect();
        ResolveImage {
            size,
            pitch,
            pieces,
        }
    }

    /// A visibility buffer of `size` pixels (each side ≥ 1) for this rasterizer's path, in as
    /// many pieces as [`piece_limit`](Self::piece_limit) needs ([`pieces`]).
    pub fn target(&self, device: &wgpu::Device, size: (u32, u32)) -> VisibilityBuffer {
        use wgpu::util::DeviceExt;
        let size = (size.0.max(1), size.1.max(1));
        let buffer = |label: String, bytes: u64| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(&label),
                size: bytes,
                usage: wgpu::BufferUsages::STORAGE
                    | wgpu::BufferUsages::COPY_DST
                    | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            })
        };
        let packed = self.path == RasterPath::Atomic64;
        let pieces = pieces(size, self.piece_limit)
            .into_iter()
            .enumerate()
            .map(|(k, piece)| {
                let pixels = u64::from(size.0) * u64::from(piece.rows);
                let uniform = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                    label: Some(&format!("pointcloud:visibility:piece:{k}")),
                    contents: bytemuck::bytes_of(&piece),
                    usage: wgpu::BufferUsages::UNIFORM,
                });
                let (depth, ids) = if packed {
                    let b = buffer(format!("pointcloud:visibility:packed:{k}"), pixels * 8);
                    (b.clone(), b)
                } else {
                    (
                        buffer(format!("pointcloud:visibility:depth:{k}"), pixels * 4),
                        buffer(format!("pointcloud:visibility:ids:{k}"), pixels * 4),
                    )
                };
                VisibilityPiece {
                    piece,
                    depth,
                    ids,
                    uniform,
                }
            })
            .collect();
        VisibilityBuffer {
            size,
            pieces,
            packed,
        }
    }

    /// The passes' bind groups, one per piece of `target`: `params` (a uniform of
    /// [`RasterParams`]), the point pool `points` (`vec4<u32>` per point), the batch table
    /// `batches` (`vec4<u32>` per entry, see [`batch_entry`]), into `target`.
    pub fn bind(
        &self,
        device: &wgpu::Device,
        params: &wgpu::Buffer,
        points: &wgpu::Buffer,
        batches: &wgpu::Buffer,
        target: &VisibilityBuffer,
    ) -> PieceGroups {
        let (label, layout) = match &self.atomic64 {
            Some((layout64, _)) => ("pointcloud:raster64:group", layout64),
            None => ("pointcloud:raster:group", &self.layout),
        };
        piece_groups(target, |k, piece| {
            let mut entries = vec![
                (0, params.as_entire_binding()),
                (1, points.as_entire_binding()),
                (2, batches.as_entire_binding()),
                (3, piece.depth.as_entire_binding()),
                (PIECE_BINDING, piece.uniform.as_entire_binding()),
            ];
            if self.atomic64.is_none() {
                entries.push((4, piece.ids.as_entire_binding()));
            }
            group_of(device, &format!("{label}:{k}"), layout, entries)
        })
    }

    /// [`bind_resolve`](Rasterizer::bind_resolve) of the 16-byte points with ids `0 .. count`
    /// only (a pixel whose id is beyond is left to another dispatch, as the chunks of a quantized
    /// cloud are): for a frame that also draws quantized points with ids from `count` on.
    pub fn bind_resolve_ids(
        &self,
        device: &wgpu::Device,
        params: &wgpu::Buffer,
        target: &VisibilityBuffer,
        points: &wgpu::Buffer,
        attrs: &wgpu::Buffer,
        count: u32,
    ) -> PieceGroups {
        let chunk = ResolveChunk {
            first: 0,
            count,
            _pad: [0; 2],
        };
        let label = "pointcloud:resolve:ids:group";
        self.resolve_group(
            device,
            label,
            params,
            target,
            [points, attrs],
            Some(chunk),
            None,
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
    ) -> PieceGroups {
        let label = "pointcloud:resolve:group";
        self.resolve_group(device, label, params, target, [points, attrs], None, None)
    }

    /// The resolve's bind group of one chunk of a quantized cloud (ids `first .. first +
    /// count`): `params` (a uniform of [`ResolveParams`]), `target`, the chunk's attribute
    /// words `words` (a u32 per point, as [`super::source::attribute_word`]; the buffer padded
    /// to a multiple of 16 bytes) and its `attrs` (`vec2<u32>` per point as in
    /// [`bind_resolve`](Rasterizer::bind_resolve)).
    #[allow(clippy::too_many_arguments)]
    pub fn bind_resolve_quantized(
        &self,
        device: &wgpu::Device,
        params: &wgpu::Buffer,
        target: &VisibilityBuffer,
        words: &wgpu::Buffer,
        attrs: &wgpu::Buffer,
        first: u32,
        count: u32,
    ) -> PieceGroups {
        let chunk = ResolveChunk {
            first,
            count,
            _pad: [0; 2],
        };
        let label = "pointcloud:resolve:quantized:group";
        self.resolve_group(
            device,
            label,
            params,
            target,
            [words, attrs],
            Some(chunk),
            None,
        )
    }

    /// The resolve's bind groups `label`, one per piece of `target`: `params`, `target`,
    /// `points` (binding 3: the 16-byte points, or a quantized chunk's attribute words) and
    /// `attrs`, colouring the ids of `chunk` (in a uniform buffer of its own), or every id
    /// (`None`); with `second` (the 16-byte points and attributes of a second pool, ids `0 ..
    /// count`), the two-pool resolve's groups (bindings 6–8 of `cs_dual`).
    #[allow(clippy::too_many_arguments)]
    fn resolve_group(
        &self,
        device: &wgpu::Device,
        label: &str,
        params: &wgpu::Buffer,
        target: &VisibilityBuffer,
        [points, attrs]: [&wgpu::Buffer; 2],
        chunk: Option<ResolveChunk>,
        second: Option<([&wgpu::Buffer; 2], u32)>,
    ) -> PieceGroups {
        let own_buffer = |c: ResolveChunk| {
            let label = format!("pointcloud:resolve:chunk:{}+{}", c.first, c.count);
            chunk_buffer(device, &label, c)
        };
        let own = chunk.map(own_buffer);
        let second = second.map(|(buffers, count)| {
            let c = ResolveChunk {
                first: 0,
                count,
                _pad: [0; 2],
            };
            (buffers, own_buffer(c))
        });
        let layout = match &second {
            Some(_) => &self.dual_layout,
            None => &self.resolve_layout,
        };
        piece_groups(target, |k, piece| {
            let mut entries = vec![
                (0, params.as_entire_binding()),
                (1, piece.depth.as_entire_binding()),
                (2, piece.ids.as_entire_binding()),
                (3, points.as_entire_binding()),
                (4, attrs.as_entire_binding()),
                (
                    5,
                    own.as_ref().unwrap_or(&self.chunk_all).as_entire_binding(),
                ),
                (RESOLVE_PIECE_BINDING, piece.uniform.as_entire_binding()),
            ];
            if let Some(([xpoints, xattrs], xchunk)) = &second {
                entries.extend([
                    (6, xpoints.as_entire_binding()),
                    (7, xattrs.as_entire_binding()),
                    (8, xchunk.as_entire_binding()),
                ]);
            }
            group_of(device, &format!("{label}:{k}"), layout, entries)
        })
    }

    /// The two-pool resolve's bind group (for [`resolve_dual`](Rasterizer::resolve_dual)): `params`,
    /// `target`, a quantized chunk (its attribute words and attributes, ids `first .. first +
    /// count`, as [`bind_resolve_quantized`](Rasterizer::bind_resolve_quantized)) and a pool of
    /// 16-byte points (`xpoints`, `xattrs`, ids `0 .. xcount`, as
    /// [`bind_resolve_ids`](Rasterizer::bind_resolve_ids)).
    #[allow(clippy::too_many_arguments)]
    pub fn bind_resolve_dual(
        &self,
        device: &wgpu::Device,
        params: &wgpu::Buffer,
        target: &VisibilityBuffer,
        quantized: [&wgpu::Buffer; 2],
        (first, count): (u32, u32),
        exact: [&wgpu::Buffer; 2],
        xcount: u32,
    ) -> PieceGroups {
        let chunk = ResolveChunk {
            first,
            count,
            _pad: [0; 2],
        };
        let label = "pointcloud:resolve:dual:group";
        self.resolve_group(
            device,
            label,
            params,
            target,
            quantized,
            Some(chunk),
            Some((exact, xcount)),
        )
    }

    /// Records the two-pool resolve of variant `v` (made by
    /// [`prepare_variant_dual`](Rasterizer::prepare_variant_dual)) with `groups` (from
    /// [`bind_resolve_dual`](Rasterizer::bind_resolve_dual)) into `pass`, writing `image` (the
    /// visibility buffer's size): one dispatch per piece colours the pixels of both pools.
    pub fn resolve_dual(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        v: ResolveVariant,
        groups: &PieceGroups,
        image: &ResolveImage,
    ) {
        if let Some(pipeline) = self.dual.get(&v) {
            Self::dispatch_resolve(pass, pipeline, std::slice::from_ref(groups), image);
        }
    }

    /// Records the resolve of variant `v` of a quantized cloud (made by
    /// [`prepare_variant_quantized`](Rasterizer::prepare_variant_quantized)), one dispatch per
    /// piece and chunk's groups (from [`bind_resolve_quantized`](Rasterizer::bind_resolve_quantized)),
    /// into `pass`, writing `image` (the visibility buffer's size).
    pub fn resolve_quantized(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        v: ResolveVariant,
        groups: &[PieceGroups],
        image: &ResolveImage,
    ) {
        if let Some(pipeline) = self.resolve.get(&(v, true)) {
            Self::dispatch_resolve(pass, pipeline, groups, image);
        }
    }

    /// Per piece of `image`, one dispatch of `pipeline` over its core rows per group set of
    /// `groups` (their group of that piece).
    fn dispatch_resolve(
        pass: &mut wgpu::ComputePass<'_>,
        pipeline: &wgpu::ComputePipeline,
        groups: &[PieceGroups],
        image: &ResolveImage,
    ) {
        pass.set_pipeline(pipeline);
        for (k, p) in image.pieces.iter().enumerate() {
            pass.set_bind_group(1, &p.group, &[]);
            let (x, y) = (image.size.0.div_ceil(8), p.piece.core_rows.div_ceil(8));
            for group in groups.iter().filter_map(|g| g.groups.get(k)) {
                pass.set_bind_group(0, group, &[]);
                pass.dispatch_workgroups(x, y, 1);
            }
        }
    }

    /// The raster passes' bind groups of a quantized `cloud`, per chunk one per piece of
    /// `target`: `params` (a uniform of [`RasterParams`]), `words` (per chunk, its points'
    /// attribute words, a u32 a point with the class in bits 0–7, indexed as its codes: read
    /// only while the class mask hides a class), into `target`. A chunk past the end of `words`
    /// binds its codes there, which is right only while the mask draws every class.
    pub fn bind_quantized(
        &self,
        device: &wgpu::Device,
        params: &wgpu::Buffer,
        cloud: &QuantizedCloud,
        words: &[&wgpu::Buffer],
        target: &VisibilityBuffer,
    ) -> Vec<PieceGroups> {
        cloud
            .chunks
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let words = words.get(i).copied().unwrap_or(&c.codes);
                piece_groups(target, |k, piece| {
                    let mut entries = vec![
                        (0, params.as_entire_binding()),
                        (3, piece.depth.as_entire_binding()),
                        (5, c.codes.as_entire_binding()),
                        (6, c.batches.as_entire_binding()),
                        (7, words.as_entire_binding()),
                        (PIECE_BINDING, piece.uniform.as_entire_binding()),
                    ];
                    if self.path == RasterPath::TwoPass32 {
                        entries.push((4, piece.ids.as_entire_binding()));
                    }
                    let label = format!("pointcloud:raster_q:group:{i}:{k}");
                    group_of(device, &label, &self.q_layout, entries)
                })
            })
            .collect()
    }

    /// Records the raster passes of a quantized `cloud` (groups from
    /// [`bind_quantized`](Rasterizer::bind_quantized)) into `pass`: one dispatch per chunk and
    /// piece (on the 32-bit path the depth pass over every chunk, then the id pass).
    pub fn encode_quantized(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        cloud: &QuantizedCloud,
        groups: &[PieceGroups],
    ) {
        for pipeline in &self.q_pipelines {
            pass.set_pipeline(pipeline);
            for (c, pieces) in cloud.chunks.iter().zip(groups) {
                let (x, y) = qdispatch_size(c.batch_count);
                for group in &pieces.groups {
                    pass.set_bind_group(0, group, &[]);
                    pass.dispatch_workgroups(x, y, 1);
                }
            }
        }
    }

    /// Records the resolve of variant `v` (made by [`prepare_variant`]; nothing is recorded
    /// when it was not) into `pass`, writing `image` (the visibility buffer's size).
    ///
    /// [`prepare_variant`]: Rasterizer::prepare_variant
    pub fn resolve(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        v: ResolveVariant,
        groups: &PieceGroups,
        image: &ResolveImage,
    ) {
        if let Some(pipeline) = self.resolve.get(&(v, false)) {
            Self::dispatch_resolve(pass, pipeline, std::slice::from_ref(groups), image);
        }
    }

    /// The pick's bind groups, one per piece of `target`: `params` (a uniform of
    /// [`PickParams`]), `target`, and `picked` (8 bytes, storage: `~index` of the point shown
    /// at the pixel or 0, and its depth key).
    pub fn bind_pick(
        &self,
        device: &wgpu::Device,
        params: &wgpu::Buffer,
        target: &VisibilityBuffer,
        picked: &wgpu::Buffer,
    ) -> PieceGroups {
        piece_groups(target, |k, piece| {
            layout::bind_group(
                device,
                &format!("pointcloud:pick:group:{k}"),
                &self.pick_layout,
                &[
                    params.as_entire_binding(),
                    piece.depth.as_entire_binding(),
                    piece.ids.as_entire_binding(),
                    picked.as_entire_binding(),
                    piece.uniform.as_entire_binding(),
                ],
            )
        })
    }

    /// Records the pick of a pixel of row `y` (the row of its [`PickParams`]; after
    /// [`encode`](Rasterizer::encode) in the same pass): one invocation, over the piece that
    /// resolves that row.
    pub fn encode_pick(&self, pass: &mut wgpu::ComputePass<'_>, groups: &PieceGroups, y: u32) {
        let Some((group, _)) = groups.for_row(y) else {
            return;
        };
        pass.set_pipeline(&self.pick_pipeline);
        pass.set_bind_group(0, group, &[]);
        pass.dispatch_workgroups(1, 1, 1);
    }

    /// Clears `target` (in `encoder`, before any pass of the frame).
    pub fn clear(&self, encoder: &mut wgpu::CommandEncoder, target: &VisibilityBuffer) {
        for p in &target.pieces {
            encoder.clear_buffer(&p.depth, 0, None);
            if !target.packed {
                encoder.clear_buffer(&p.ids, 0, None);
            }
        }
    }

    /// Records one stage of the 16-byte passes over `batches` batch-table entries bound in
    /// `groups` (a dispatch per piece) into `pass`: [`RasterStage::Depth`] the 64-bit pass, or
    /// the 32-bit path's depth pass; [`RasterStage::Ids`] nothing on the 64-bit path, else the
    /// id pass. For drawing the 16-byte and the quantized points of one frame into one
    /// visibility buffer: every depth stage (the quantized one within
    /// [`encode_quantized`](Rasterizer::encode_quantized)) before any id stage.
    pub fn encode_stage(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        groups: &PieceGroups,
        batches: u32,
        stage: RasterStage,
    ) {
        if batches == 0 {
            return;
        }
        let (x, y) = dispatch_size(batches);
        let pipeline = match (&self.atomic64, stage) {
            (Some((_, p)), RasterStage::Depth) => p,
            (Some(_), RasterStage::Ids) => return,
            (None, RasterStage::Depth) => &self.depth_pipeline,
            (None, RasterStage::Ids) => &self.id_pipeline,
        };
        pass.set_pipeline(pipeline);
        for group in &groups.groups {
            pass.set_bind_group(0, group, &[]);
            pass.dispatch_workgroups(x, y, 1);
        }
    }

    /// Records both passes over `batches` batch-table entries (the table holds the dispatch's
    /// padding, see [`dispatch_size`]) bound in `groups` (a dispatch per piece) into `pass`
    /// (wgpu orders the second after the first: it reads what the first wrote).
    pub fn encode(&self, pass: &mut wgpu::ComputePass<'_>, groups: &PieceGroups, batches: u32) {
        self.encode_stage(pass, groups, batches, RasterStage::Depth);
        self.encode_stage(pass, groups, batches, RasterStage::Ids);
    }
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

/// A uniform buffer of one [`ResolveChunk`], labelled `label`.
fn chunk_buffer(device: &wgpu::Device, label: &str, chunk: ResolveChunk) -> wgpu::Buffer {
    use wgpu::util::DeviceExt;
    device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some(label),
        contents: bytemuck::bytes_of(&chunk),
        usage: wgpu::BufferUsages::UNIFORM,
    })
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
