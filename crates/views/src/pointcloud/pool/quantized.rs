//! The quantized pool ([`Pool`]): its chunks' buffers, the upload of a node's codes, words and
//! attributes, and the per-chunk batch tables of [`QBatch`] entries.

use std::ops::Range;

use super::{
    DrawnPoint, MAX_PAGES, POINT_BYTES, PageLayout, PagedPool, Pool, QuantizedNode, halving_on_oom,
    part, write_table,
};
use crate::gpu::frame::GpuFrame;
use crate::pointcloud::raster::{
    QBATCH_POINTS, QBatch, QuantizedChunk, QuantizedCloud, points_per_binding, qdispatch_size,
};

/// The buffers of one chunk of the pool beside its [`QuantizedChunk`] (codes, batch table).
struct ChunkAttrs {
    words: wgpu::Buffer,
    attrs: wgpu::Buffer,
}

/// The quantized pool's side of [`Pool`]: its chunks' buffers and this frame's batch tables.
pub struct QuantizedLayout {
    /// Codes and batch tables per chunk; `batch_count` is this frame's.
    cloud: QuantizedCloud,
    attrs: Vec<ChunkAttrs>,
    /// Pages a chunk holds (the last may hold fewer).
    chunk_pages: u32,
    /// This frame's batch table per chunk (before padding).
    tables: Vec<Vec<QBatch>>,
}

impl PageLayout for QuantizedLayout {
    const PAGE_POINTS: u32 = QBATCH_POINTS;
    const POINT_BYTES: u64 = POINT_BYTES;

    fn laid_out(q: &QuantizedNode) -> usize {
        q.codes.len()
    }

    fn pages(q: &QuantizedNode) -> usize {
        q.pages()
    }

    fn point(q: &QuantizedNode, k: usize, j: usize) -> Option<usize> {
        q.point(k, j)
    }

    fn chunk_pages(&self) -> u32 {
        self.chunk_pages
    }

    fn upload(&self, gpu: &mut GpuFrame<'_>, q: &QuantizedNode, points: Range<usize>, page: u32) {
        let chunk = (page / self.chunk_pages) as usize;
        let (Some(c), Some(a)) = (self.cloud.chunks.get(chunk), self.attrs.get(chunk)) else {
            return;
        };
        let at = u64::from(page % self.chunk_pages) * u64::from(QBATCH_POINTS);
        gpu.write_slice(&c.codes, at * 4, part(&q.codes, &points));
        gpu.write_slice(&a.words, at * 4, part(&q.words, &points));
        gpu.write_slice(&a.attrs, at * 8, part(&q.attrs, &points));
    }

    fn clear_batches(&mut self) {
        for (c, t) in self.cloud.chunks.iter_mut().zip(&mut self.tables) {
            c.batch_count = 0;
            t.clear();
        }
    }
}

impl Pool {
    /// A pool of `capacity` points (rounded up to whole pages; from one page to what keeps
    /// its ids below `u32::MAX`, at most [`MAX_PAGES`]) in chunks of `per_binding` points
    /// (rounded down to whole pages, at most the device's [`points_per_binding`]), its point
    /// ids from `id_base` on (pool index + `id_base`). Where the device cannot allocate it (out
    /// of memory), a pool of half the pages is tried, down to one page (said in the log).
    pub fn new(device: &wgpu::Device, capacity: u64, per_binding: u64, id_base: u32) -> Pool {
        let page = u64::from(QBATCH_POINTS);
        let id_base = id_base.min(u32::MAX - 2 * QBATCH_POINTS);
        let most = (u64::from(u32::MAX - id_base) / page - 1).clamp(1, u64::from(MAX_PAGES));
        let pages = capacity.div_ceil(page).clamp(1, most) as u32;
        let chunk_pages = (per_binding / page)
            .clamp(1, points_per_binding(&device.limits()) / page)
            .min(u64::from(MAX_PAGES)) as u32;
        halving_on_oom("pool", page, pages, |pages| {
            Pool::try_new(device, pages, chunk_pages, id_base)
        })
    }

    /// The pool of `pages` pages in chunks of `chunk_pages`, and the error when the device ran
    /// out of memory making it.
    fn try_new(
        device: &wgpu::Device,
        pages: u32,
        chunk_pages: u32,
        id_base: u32,
    ) -> (Pool, Option<String>) {
        let scope = device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let page = u64::from(QBATCH_POINTS);
        let buffer = |what: &str, c: usize, bytes: u64| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(&format!("pointcloud:pool:{what}:{c}")),
                size: bytes.max(16),
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        };
        let mut chunks = Vec::new();
        let mut attrs = Vec::new();
        let mut first_page = 0u32;
        while first_page < pages {
            let c = chunks.len();
            let n = (pages - first_page).min(chunk_pages);
            let points = u64::from(n) * page;
            let (x, y) = qdispatch_size(n);
            let entries = u64::from(x) * u64::from(y);
            chunks.push(QuantizedChunk {
                codes: buffer("codes", c, points * 4),
                batches: buffer("batches", c, entries * std::mem::size_of::<QBatch>() as u64),
                batch_count: 0,
                first: id_base + first_page * QBATCH_POINTS,
                count: points as u32,
            });
            attrs.push(ChunkAttrs {
                words: buffer("words", c, points * 4),
                attrs: buffer("attrs", c, points * 8),
            });
            first_page += n;
        }
        let layout = QuantizedLayout {
            tables: vec![Vec::new(); chunks.len()],
            cloud: QuantizedCloud {
                chunks,
                points: u64::from(pages) * page,
            },
            attrs,
            chunk_pages,
        };
        let pool = PagedPool::with_layout(layout, pages, id_base);
        let error = pollster::block_on(scope.pop()).map(|e| e.to_string());
        (pool, error)
    }

    /// The pool as a quantized cloud (codes and batch tables per chunk, this frame's batch counts),
    /// for [`Rasterizer::bind_quantized`](crate::pointcloud::raster::Rasterizer::bind_quantized)
    /// and [`encode_quantized`](crate::pointcloud::raster::Rasterizer::encode_quantized).
    pub fn cloud(&self) -> &QuantizedCloud {
        &self.layout.cloud
    }

    /// Per chunk, its points' attribute words (a u32 each, indexed as the chunk's codes).
    pub fn words(&self) -> Vec<&wgpu::Buffer> {
        self.layout.attrs.iter().map(|a| &a.words).collect()
    }

    /// Per chunk, its points' attributes (`vec2<u32>` each: RGBA8, elevation f32 bits).
    pub fn attrs(&self) -> Vec<&wgpu::Buffer> {
        self.layout.attrs.iter().map(|a| &a.attrs).collect()
    }

    /// Bytes of GPU memory the pool holds (codes, attribute words, attributes, batch tables).
    pub fn gpu_bytes(&self) -> u64 {
        self.layout
            .cloud
            .chunks
            .iter()
            .zip(&self.layout.attrs)
            .map(|(c, a)| c.codes.size() + c.batches.size() + a.words.size() + a.attrs.size())
            .sum()
    }

    /// Batches in this frame's table (all chunks).
    pub fn batch_count(&self) -> u32 {
        self.layout.cloud.chunks.iter().map(|c| c.batch_count).sum()
    }

    /// Writes the batch table of `draw` (resident nodes) seen from `eye` through the frame's
    /// uploader: a [`QBatch`] per page, its box's low corner minus the eye (the node's origin
    /// plus the page's corner minus the eye, in f64, then f32), its first point's id, its cell
    /// size and its place in its chunk; each chunk's table padded with [`QBatch::EMPTY`] to its
    /// dispatch ([`qdispatch_size`]; a chunk with no batch gets one empty entry). Returns the
    /// number of batches in all chunks.
    pub fn write_batches(&mut self, gpu: &mut GpuFrame<'_>, draw: &[u32], eye: glam::DVec3) -> u32 {
        let l = &mut self.layout;
        for t in &mut l.tables {
            t.clear();
        }
        self.batched_points = 0;
        let eye = eye.to_array();
        for &n in draw {
            let Some(r) = self.nodes.get(&n) else {
                continue;
            };
            let q = &r.node;
            let o = q.data.origin;
            for (&p, b) in r.pages.iter().zip(&q.boxes) {
                let lo = std::array::from_fn(|a| ((o[a] - eye[a]) + f64::from(b.lo[a])) as f32);
                let chunk = (p / l.chunk_pages) as usize;
                if let Some(t) = l.tables.get_mut(chunk) {
                    t.push(QBatch::new(
                        lo,
                        b.step,
                        self.id_base + p * QBATCH_POINTS,
                        p % l.chunk_pages,
                        b.count,
                    ));
                    self.batched_points += u64::from(b.count);
                }
            }
        }
        let mut total = 0;
        for (c, t) in l.cloud.chunks.iter_mut().zip(&mut l.tables) {
            let n = t.len() as u32;
            c.batch_count = 0;
            if write_table(gpu, &c.batches, t, qdispatch_size(n), QBatch::EMPTY, "") {
                c.batch_count = n;
                total += n;
            }
        }
        total
    }

    /// This frame's batch table decoded on the CPU ([`QBatch::decode`] of each point's code,
    /// the GPU's arithmetic): every point the raster passes project, by id. With
    /// [`cpu_visibility`](crate::pointcloud::raster::cpu_visibility), the reference of the frame's
    /// visibility buffer.
    pub fn drawn(&self) -> Vec<DrawnPoint> {
        let mut out = Vec::with_capacity(self.batched_points as usize);
        for b in self.layout.tables.iter().flatten() {
            let count = (b.slot & 1023) + 1;
            for k in 0..count {
                let id = b.first + k;
                let Some(index) = id.checked_sub(self.id_base) else {
                    continue;
                };
                let Some((_, r, page)) = self.resident_page(index) else {
                    continue;
                };
                let at = page * QBATCH_POINTS as usize + (index % QBATCH_POINTS) as usize;
                if let (Some(&code), Some(&word)) = (r.node.codes.get(at), r.node.words.get(at)) {
                    out.push(DrawnPoint {
                        id,
                        position: b.decode(code),
                        word,
                        quantized: true,
                    });
                }
            }
        }
        out
    }
}
