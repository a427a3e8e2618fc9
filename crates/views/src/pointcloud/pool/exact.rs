//! The exact pool ([`ExactPool`]): 16 bytes a point and its attributes, the upload of a node's
//! f32 offsets, and the batch table of the rasterizer's 16-byte entry point.

use std::ops::Range;

use super::{
    DrawnPoint, ExactPool, PageLayout, PagedPool, QuantizedNode, halving_on_oom, write_table,
};
use crate::gpu::frame::GpuFrame;
use crate::pointcloud::raster::{BATCH_POINTS, EMPTY_BATCH, batch_entry, dispatch_size};

/// Bytes a point takes in the [`ExactPool`]: `vec4<u32>` (x, y, z as f32 bits relative to its
/// node's origin, attribute word) + `vec2<u32>` (colour, elevation).
pub const EXACT_POINT_BYTES: u64 = 24;

/// The exact pool's side of [`ExactPool`]: its buffers and this frame's batch table.
pub struct ExactLayout {
    /// Points: `vec4<u32>` each.
    points: wgpu::Buffer,
    /// Attributes: `vec2<u32>` each.
    attrs: wgpu::Buffer,
    /// The batch table the passes read (rewritten every frame).
    batches: wgpu::Buffer,
    /// This frame's batch table (before padding).
    table: Vec<[u32; 4]>,
    /// Batches in this frame's table.
    batch_count: u32,
}

impl PageLayout for ExactLayout {
    const PAGE_POINTS: u32 = BATCH_POINTS;
    const POINT_BYTES: u64 = EXACT_POINT_BYTES;

    fn laid_out(q: &QuantizedNode) -> usize {
        q.len()
    }

    fn point(q: &QuantizedNode, k: usize, j: usize) -> Option<usize> {
        let i = k * BATCH_POINTS as usize + j;
        (i < q.len()).then_some(i)
    }

    fn chunk_pages(&self) -> u32 {
        u32::MAX // one binding
    }

    fn upload(&self, gpu: &mut GpuFrame<'_>, q: &QuantizedNode, points: Range<usize>, page: u32) {
        let d = &q.data;
        let (first, n) = (points.start, points.len());
        let pts: Vec<[u32; 4]> = d
            .offsets
            .iter()
            .zip(&d.words)
            .skip(first)
            .take(n)
            .map(|(o, &word)| [o[0].to_bits(), o[1].to_bits(), o[2].to_bits(), word])
            .collect();
        let att: Vec<[u32; 2]> = d
            .rgba
            .iter()
            .zip(&d.xyz)
            .skip(first)
            .take(n)
            .map(|(&rgba, p)| [rgba, ((p[2] - q.elev_base) as f32).to_bits()])
            .collect();
        let at = u64::from(page) * u64::from(BATCH_POINTS);
        gpu.write_slice(&self.points, at * 16, &pts);
        gpu.write_slice(&self.attrs, at * 8, &att);
    }

    fn clear_batches(&mut self) {
        self.table.clear();
        self.batch_count = 0;
    }
}

impl ExactPool {
    /// A pool of `capacity` points (whole pages of [`BATCH_POINTS`], at least one; at most the
    /// device's storage binding and buffer limits at 16 bytes a point). Where the device cannot
    /// allocate it (out of memory), a pool of half the pages is tried, down to one page (said in
    /// the log), as [`Pool::new`](super::Pool::new).
    pub fn new(device: &wgpu::Device, capacity: u64) -> ExactPool {
        let l = device.limits();
        let page = u64::from(BATCH_POINTS);
        let most = (l.max_storage_buffer_binding_size.min(l.max_buffer_size) / 16 / page)
            .clamp(1, (1 << 24) - 1);
        let pages = capacity.div_ceil(page).clamp(1, most) as u32;
        halving_on_oom("exact pool", page, pages, |pages| {
            ExactPool::try_new(device, pages)
        })
    }

    /// The pool of `pages` pages, and the error when the device ran out of memory making it.
    fn try_new(device: &wgpu::Device, pages: u32) -> (ExactPool, Option<String>) {
        let scope = device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let points = u64::from(pages) * u64::from(BATCH_POINTS);
        let buffer = |label: &str, bytes: u64| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: bytes,
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        };
        let (x, y) = dispatch_size(pages);
        let layout = ExactLayout {
            points: buffer("pointcloud:pool:exact:points", points * 16),
            attrs: buffer("pointcloud:pool:exact:attrs", points * 8),
            batches: buffer(
                "pointcloud:pool:exact:batches",
                (u64::from(x) * u64::from(y)).max(1) * 16,
            ),
            table: Vec::new(),
            batch_count: 0,
        };
        let pool = PagedPool::with_layout(layout, pages, 0);
        let error = pollster::block_on(scope.pop()).map(|e| e.to_string());
        (pool, error)
    }

    /// Points: `vec4<u32>` each (x, y, z as f32 bits relative to the node's origin, attribute
    /// word), for [`Rasterizer::bind`](crate::pointcloud::raster::Rasterizer::bind) and the
    /// resolve.
    pub fn points(&self) -> &wgpu::Buffer {
        &self.layout.points
    }

    /// Attributes: `vec2<u32>` each (RGBA8, elevation f32 bits).
    pub fn attrs(&self) -> &wgpu::Buffer {
        &self.layout.attrs
    }

    /// The batch table the passes read (rewritten every frame, [`ExactPool::write_batches`]).
    pub fn batches(&self) -> &wgpu::Buffer {
        &self.layout.batches
    }

    /// Bytes of GPU memory the pool holds.
    pub fn gpu_bytes(&self) -> u64 {
        let l = &self.layout;
        l.points.size() + l.attrs.size() + l.batches.size()
    }

    /// Batches in this frame's table.
    pub fn batch_count(&self) -> u32 {
        self.layout.batch_count
    }

    /// Writes the batch table of `draw` (resident nodes) seen from `eye` (a node's origin minus
    /// the eye in f64, then f32, per page) and marks them drawn in `frame`; returns the number
    /// of batches (the table is padded for the dispatch).
    pub fn write_batches(
        &mut self,
        gpu: &mut GpuFrame<'_>,
        draw: &[u32],
        eye: glam::DVec3,
        frame: u64,
    ) -> u32 {
        let l = &mut self.layout;
        l.table.clear();
        l.batch_count = 0;
        self.batched_points = 0;
        for &n in draw {
            let Some(r) = self.nodes.get_mut(&n) else {
                continue;
            };
            r.last_used = frame;
            let o = r.node.data.origin;
            let offset = [
                (o[0] - eye.x) as f32,
                (o[1] - eye.y) as f32,
                (o[2] - eye.z) as f32,
            ];
            let len = r.node.len() as u32;
            for (k, &p) in r.pages.iter().enumerate() {
                let done = k as u32 * BATCH_POINTS;
                if done >= len {
                    break;
                }
                let count = (len - done).min(BATCH_POINTS);
                l.table.push(batch_entry(offset, p * BATCH_POINTS, count));
                self.batched_points += u64::from(count);
            }
        }
        let n = l.table.len() as u32;
        if n == 0
            || !write_table(
                gpu,
                &l.batches,
                &mut l.table,
                dispatch_size(n),
                EMPTY_BATCH,
                "exact ",
            )
        {
            return 0;
        }
        l.batch_count = n;
        n
    }

    /// This frame's table decoded on the CPU as the 16-byte pass computes positions (the
    /// point's f32 offset plus its node's origin minus the eye, in f32): every point it
    /// projects, by id.
    pub fn drawn(&self) -> Vec<DrawnPoint> {
        let mut out = Vec::with_capacity(self.batched_points as usize);
        for e in &self.layout.table {
            let offset = [e[0], e[1], e[2]].map(f32::from_bits);
            let count = (e[3] & 127) + 1;
            let first = (e[3] >> 7) * BATCH_POINTS;
            for k in 0..count {
                let id = first + k;
                let Some((_, r, i)) = self.locate(id) else {
                    continue;
                };
                let d = &r.node.data;
                if let (Some(o), Some(&word)) = (d.offsets.get(i), d.words.get(i)) {
                    out.push(DrawnPoint {
                        id,
                        position: std::array::from_fn(|a| o[a] + offset[a]),
                        word,
                        quantized: false,
                    });
                }
            }
        }
        out
    }
}
