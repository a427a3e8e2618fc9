//! Quantization of a node's points for the GPU, done on the loader threads: the points put in
//! Morton order, cut into pages of up to [`QBATCH_POINTS`] points, each page's points stored as
//! 10-bit cells of the page's box (4 bytes a point; Schütz, Kerbl, Wimmer 2021, "Rendering
//! Point Clouds with Compute Shaders and Vertex Order Optimization", §4–5). The GPU side (the
//! pool's buffers, the rasterizer that decodes the cells) is the point-cloud view's.

use crate::source::NodeData;

/// Points per quantized batch (`QBATCH_POINTS` of `shaders/common/pointcloud.wgsl`): one
/// workgroup of 128 invocations, 8 points each.
pub const QBATCH_POINTS: u32 = 1024;

/// Cells per axis of a quantized batch's box (10 bits).
pub const QCELLS: u32 = 1024;

/// The smallest power of two ≥ `x` (the smallest normal f32 for 0, negative or NaN; infinity
/// for what has none).
fn pow2_at_least(x: f32) -> f32 {
    if x.is_nan() || x <= f32::MIN_POSITIVE {
        return f32::MIN_POSITIVE;
    }
    let b = x.to_bits();
    if b & 0x007f_ffff == 0 {
        x
    } else {
        f32::from_bits(
            (b & 0x7f80_0000)
                .saturating_add(0x0080_0000)
                .min(0x7f80_0000),
        )
    }
}

/// Quantizes one batch of up to [`QBATCH_POINTS`] points (`points`, file units, any frame)
/// into `codes` (one per point, `codes.len() ≥ points.len()`; x, y, z cells in bits 0–9, 10–19,
/// 20–29): returns the box's low corner and the cell size per axis (the smallest power of two
/// with 1024 cells covering the points' extent). Each decoded point ([`QBatch::decode`] with
/// `lo` minus the eye) lies within `step / 2` per axis of the point, plus the f32 rounding of
/// one addition (half an ulp of the result). Non-finite coordinates give some code, never a
/// panic.
pub fn quantize_batch(points: &[[f32; 3]], codes: &mut [u32]) -> ([f32; 3], [f32; 3]) {
    let mut lo = [f32::INFINITY; 3];
    let mut hi = [f32::NEG_INFINITY; 3];
    for p in points {
        for a in 0..3 {
            lo[a] = lo[a].min(p[a]);
            hi[a] = hi[a].max(p[a]);
        }
    }
    let mut step = [0.0f32; 3];
    for a in 0..3 {
        if !lo[a].is_finite() {
            lo[a] = 0.0;
        }
        step[a] = pow2_at_least((hi[a] - lo[a]) / QCELLS as f32);
    }
    for (p, code) in points.iter().zip(codes.iter_mut()) {
        let cell = |a: usize| (((p[a] - lo[a]) / step[a]).floor() as u32).min(QCELLS - 1);
        *code = cell(0) | (cell(1) << 10) | (cell(2) << 20);
    }
    (lo, step)
}

/// The order of `points` along a 3D Morton (Z-order) curve of 2²¹ cells a side over their
/// bounding cube (the box's largest extent on every axis, so the order follows an octree's):
/// the permutation (indices into `points`) that makes runs of
/// [`QBATCH_POINTS`] points spatially coherent (Schütz et al. 2021, §5, "Morton order").
/// Non-finite coordinates sort as the box's low corner.
pub fn morton_order(points: &[[f32; 3]]) -> Vec<u32> {
    let mut lo = [f32::INFINITY; 3];
    let mut hi = [f32::NEG_INFINITY; 3];
    for p in points {
        for a in 0..3 {
            if p[a].is_finite() {
                lo[a] = lo[a].min(p[a]);
                hi[a] = hi[a].max(p[a]);
            }
        }
    }
    let spread = |v: u64| {
        let mut x = v & 0x1f_ffff;
        x = (x | (x << 32)) & 0x001f_0000_0000_ffff;
        x = (x | (x << 16)) & 0x001f_0000_ff00_00ff;
        x = (x | (x << 8)) & 0x100f_00f0_0f00_f00f;
        x = (x | (x << 4)) & 0x10c3_0c30_c30c_30c3;
        (x | (x << 2)) & 0x1249_2492_4924_9249
    };
    let extent = (0..3)
        .map(|a| f64::from(hi[a]) - f64::from(lo[a]))
        .fold(0.0, f64::max);
    let cell = |p: &[f32; 3], a: usize| {
        if extent.is_nan() || extent <= 0.0 || !p[a].is_finite() {
            return 0;
        }
        let t = (f64::from(p[a]) - f64::from(lo[a])) / extent;
        (t * f64::from((1u32 << 21) - 1)) as u64
    };
    let mut keyed: Vec<(u64, u32)> = points
        .iter()
        .enumerate()
        .map(|(i, p)| {
            (
                spread(cell(p, 0)) | (spread(cell(p, 1)) << 1) | (spread(cell(p, 2)) << 2),
                i as u32,
            )
        })
        .collect();
    keyed.sort_unstable();
    keyed.into_iter().map(|(_, i)| i).collect()
}

/// One page of a [`QuantizedNode`]: its points (`count` of them from element `first` of the
/// node's [`NodeData`] arrays) and its box: the low corner relative to the node's origin and
/// the cell size per axis (a power of two), file units, as [`quantize_batch`] gives them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PageBox {
    /// Low corner minus the node's origin.
    pub lo: [f32; 3],
    /// Cell size per axis.
    pub step: [f32; 3],
    /// Index of the page's first point in the node's arrays (Morton order).
    pub first: u32,
    /// Points in the page, 1 to [`QBATCH_POINTS`].
    pub count: u32,
}

/// How fine a page's cells are against its points' spacing: a page of Morton-consecutive points
/// is cut where its cell (its box's extent / 1024, per axis) would exceed the mean distance
/// between consecutive points of the page / `PAGE_PRECISION`, so a decoded point lies within
/// 1/(2 · `PAGE_PRECISION`) of that spacing (twice that where the power-of-two rounding of the
/// cell takes it up). Spatially compact pages of surface points (1024 points, 32 a side, over
/// 1024 cells) are whole; a page straddling a jump of the Morton curve, or a run of points on a
/// line (1024 points would take a cell each), is cut into pages that keep this precision.
pub const PAGE_PRECISION: f64 = 16.0;

/// The pages of `offsets` (Morton order): runs of up to [`QBATCH_POINTS`] consecutive points
/// whose cells keep [`PAGE_PRECISION`] against their own spacing, or against `floor` (file
/// units) where their points are closer (duplicates). `(first, count)` each.
fn page_runs(offsets: &[[f32; 3]], floor: f64) -> Vec<(u32, u32)> {
    let mut runs = Vec::with_capacity(offsets.len().div_ceil(QBATCH_POINTS as usize));
    let finite = |p: &[f32; 3]| p.iter().all(|v| v.is_finite());
    let mut i = 0;
    while i < offsets.len() {
        let mut lo = [f64::INFINITY; 3];
        let mut hi = [f64::NEG_INFINITY; 3];
        let mut path = 0.0f64;
        let mut last: Option<[f64; 3]> = None;
        let mut j = i;
        while j < offsets.len() && j - i < QBATCH_POINTS as usize {
            let p = &offsets[j];
            if finite(p) {
                let q = p.map(f64::from);
                let (mut nlo, mut nhi) = (lo, hi);
                for a in 0..3 {
                    nlo[a] = nlo[a].min(q[a]);
                    nhi[a] = nhi[a].max(q[a]);
                }
                let npath = path + last.map_or(0.0, |l| glam::DVec3::from(l).distance(q.into()));
                let gaps = (j - i) as f64; // consecutive distances in the run with point j
                let cell = (0..3).map(|a| nhi[a] - nlo[a]).fold(0.0, f64::max) / f64::from(QCELLS);
                let allowed = (npath / gaps.max(1.0) / PAGE_PRECISION).max(floor);
                if j > i && cell > allowed {
                    break;
                }
                (lo, hi, path, last) = (nlo, nhi, npath, Some(q));
            }
            j += 1;
        }
        runs.push((i as u32, (j - i) as u32));
        i = j;
    }
    runs
}

/// A decoded node ready for the pool: its points in Morton order, cut into pages
/// ([`PAGE_PRECISION`]) and quantized page by page, laid out as the pool holds them (page k's
/// points from element k · [`QBATCH_POINTS`] of `codes`, `words` and `attrs`; a page's unused
/// tail zeros).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct QuantizedNode {
    /// The node's points, every array in Morton order (page k's point j is element
    /// `boxes[k].first + j`: its exact coordinates `data.xyz[..]`, for the readout).
    pub data: NodeData,
    /// Each page's points and box.
    pub boxes: Vec<PageBox>,
    /// 4-byte code per point: x, y, z cells (bits 0–9, 10–19, 20–29) of its page's box.
    pub codes: Vec<u32>,
    /// Attribute word per point ([`super::source::attribute_word`]).
    pub words: Vec<u32>,
    /// The resolve's attributes per point: RGBA8 colour, elevation above `elev_base` as f32
    /// bits.
    pub attrs: Vec<[u32; 2]>,
    /// The elevation attribute's zero (the cloud's lowest z), file units.
    pub elev_base: f64,
    /// The coarsest cell of its pages (largest step of any axis), file units: a decoded point
    /// lies within half of it of the point.
    pub max_step: f32,
}

impl QuantizedNode {
    /// Puts `data`'s points in Morton order of their offsets (every array alike), cuts them
    /// into pages and quantizes each ([`quantize_batch`]); `spacing` (the node's point spacing,
    /// file units; 0 when unknown) sets the finest cell a page needs where its points are
    /// closer than that (duplicates), `elev_base` is subtracted from each point's z for its
    /// elevation attribute. Arrays of unequal lengths (a faulty source) are cut to the
    /// shortest; a GPS time array shorter than the points is dropped. Never panics (non-finite
    /// offsets give some code).
    pub fn new(data: NodeData, spacing: f64, elev_base: f64) -> QuantizedNode {
        let n = data
            .offsets
            .len()
            .min(data.words.len())
            .min(data.rgba.len())
            .min(data.xyz.len());
        let order = morton_order(&data.offsets[..n]);
        let pick = |v: &[u32]| -> Vec<u32> { order.iter().map(|&i| v[i as usize]).collect() };
        let data = NodeData {
            origin: data.origin,
            offsets: order.iter().map(|&i| data.offsets[i as usize]).collect(),
            words: pick(&data.words),
            rgba: pick(&data.rgba),
            xyz: order.iter().map(|&i| data.xyz[i as usize]).collect(),
            gps_time: data
                .gps_time
                .filter(|g| g.len() >= n)
                .map(|g| order.iter().map(|&i| g[i as usize]).collect()),
        };
        let floor = if spacing.is_finite() && spacing > 0.0 {
            spacing / f64::from(QCELLS)
        } else {
            0.0
        };
        let runs = page_runs(&data.offsets, floor);
        let page = QBATCH_POINTS as usize;
        let len = runs
            .last()
            .map_or(0, |r| (runs.len() - 1) * page + r.1 as usize);
        let mut codes = vec![0u32; len];
        let mut words = vec![0u32; len];
        let mut attrs = vec![[0u32; 2]; len];
        let mut boxes = Vec::with_capacity(runs.len());
        for (k, &(first, count)) in runs.iter().enumerate() {
            let (f, c) = (first as usize, count as usize);
            let at = k * page;
            let (lo, step) = quantize_batch(&data.offsets[f..f + c], &mut codes[at..at + c]);
            words[at..at + c].copy_from_slice(&data.words[f..f + c]);
            for (a, (&rgba, p)) in attrs[at..at + c]
                .iter_mut()
                .zip(data.rgba[f..f + c].iter().zip(&data.xyz[f..f + c]))
            {
                *a = [rgba, ((p[2] - elev_base) as f32).to_bits()];
            }
            boxes.push(PageBox {
                lo,
                step,
                first,
                count,
            });
        }
        let max_step = boxes
            .iter()
            .flat_map(|b: &PageBox| b.step)
            .fold(0.0f32, f32::max);
        QuantizedNode {
            data,
            boxes,
            codes,
            words,
            attrs,
            elev_base,
            max_step,
        }
    }

    /// Points in the node.
    pub fn len(&self) -> usize {
        self.data.xyz.len()
    }

    /// Whether the node holds no point.
    pub fn is_empty(&self) -> bool {
        self.data.xyz.is_empty()
    }

    /// Pages the node takes in the pool.
    pub fn pages(&self) -> usize {
        self.boxes.len()
    }

    /// Index into `data`'s arrays of point `j` of page `k`, if the page holds it.
    pub fn point(&self, k: usize, j: usize) -> Option<usize> {
        let b = self.boxes.get(k)?;
        (j < b.count as usize).then_some(b.first as usize + j)
    }
}
