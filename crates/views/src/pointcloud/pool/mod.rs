//! The GPU point pools: the points of resident nodes, with least-recently-used eviction when a
//! new node needs room; uploads go through the frame's uploader (counted).
//!
//! [`Pool`], the quantized pool, holds every resident node in pages of [`QBATCH_POINTS`] points (a
//! node takes whole pages, anywhere in the pool: no fragmentation); its size is the GPU memory
//! budget. Per point it holds [`POINT_BYTES`]: its 4-byte code (x, y, z as 10-bit cells of its
//! page's box, [`quantize_batch`](super::raster::quantize_batch); Schütz, Kerbl, Hei, Wimmer,
//! Wimmer, "Software Rasterization of 2 Billion Points in Real Time", HPG 2022, §4.2), its
//! attribute word ([`vizdeck_pointcloud::source::attribute_word`]; read by the raster passes only
//! while the class mask hides a class, and by the resolve) and 8 bytes of attributes (RGBA8 colour,
//! elevation above the cloud's lowest point as f32 bits; read by the resolve for the visible points
//! only). A node's points are put in Morton order ([`morton_order`](super::raster::morton_order)),
//! cut into pages and quantized page by page when it is decoded ([`QuantizedNode::new`], on a
//! loader thread), so a page is a spatially coherent batch whose box lets the raster passes skip it
//! wholly outside the view. The pool is a [`QuantizedCloud`](super::raster::QuantizedCloud) whose
//! point ids are its indices plus a base (an index is its page times [`QBATCH_POINTS`] plus its
//! place in the page), spread over as many storage bindings (chunks) as the device's limits need
//! ([`points_per_binding`](super::raster::points_per_binding); one where the pool fits). Each frame
//! the batch table of the drawn nodes is written again ([`Pool::write_batches`]): each page's box
//! low corner minus the eye, computed in f64 from the node's origin and rounded to f32 once, so
//! survey coordinates keep their precision.
//!
//! [`ExactPool`] holds, 16 bytes a point (f32 offsets from the node's origin), the nodes whose
//! quantized cells are too coarse for the view: 10 bits a page are a fraction of a pixel only
//! while the page is small on screen (the 2022 paper loads more bits then; here the node is
//! drawn from its exact copy instead). Its ids come first, the quantized pool's after.
//!
//! Both are a [`PagedPool`]: the pages, their owners, the least-recently-used eviction and the
//! uploads run by run of consecutive pages are kept once; what differs, the point layout, the
//! buffers and the batch table, is its [`PageLayout`] ([`QuantizedLayout`], [`ExactLayout`]).
//!
//! Each resident node keeps its decoded points on the CPU too (in the Morton order of its
//! pages), for the hover readout's exact coordinates.
//!
//! The parts: the pages and their eviction here, the quantized pool's layout and batch table in
//! `quantized.rs`, the exact pool's in `exact.rs`.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

use super::raster::QBATCH_POINTS;
use crate::gpu::frame::GpuFrame;
pub use vizdeck_pointcloud::quantize::{PAGE_PRECISION, PageBox, QuantizedNode};

mod exact;
mod quantized;

pub use exact::{EXACT_POINT_BYTES, ExactLayout};
pub use quantized::QuantizedLayout;

/// Bytes a point takes on the GPU: its code (u32), its attribute word (u32) and its attributes
/// (`vec2<u32>`: RGBA8 colour, elevation).
pub(crate) const POINT_BYTES: u64 = 16;

/// Most pages a pool holds: its point ids (pool indices) stay below `u32::MAX` (the visibility
/// buffer stores `!id`, 0 meaning none), and a chunk's page index fits the 22 bits of
/// [`QBatch::slot`](super::raster::QBatch::slot).
pub(crate) const MAX_PAGES: u32 = u32::MAX / QBATCH_POINTS;

/// A resident node.
pub struct Resident {
    /// Its pages, in order (page k of the node is pool page `pages[k]`, pool points
    /// `pages[k] · page points …`).
    pub pages: Vec<u32>,
    /// Its points, as decoded and quantized.
    pub node: Arc<QuantizedNode>,
    /// Last frame it was drawn.
    pub last_used: u64,
    /// Frame it was uploaded.
    pub uploaded: u64,
}

/// Why a node could not be made resident.
#[derive(Debug, PartialEq, Eq)]
pub enum PoolFull {
    /// Every page holds a node drawn this frame.
    InUse,
    /// The node alone is larger than the pool.
    TooLarge,
}

/// One point of this frame's batch table, decoded on the CPU as the GPU decodes it
/// ([`Pool::drawn`], [`ExactPool::drawn`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DrawnPoint {
    /// Its id (pool index): what the visibility buffer holds for it.
    pub id: u32,
    /// Camera-relative position ([`QBatch::decode`](super::raster::QBatch::decode) of its code),
    /// file units.
    pub position: [f32; 3],
    /// Its attribute word.
    pub word: u32,
    /// Whether it is drawn quantized ([`Pool`]), else exactly ([`ExactPool`]).
    pub quantized: bool,
}

/// How a pool lays a node's points out in its pages, and its buffers and batch table: what
/// differs between [`Pool`] ([`QuantizedLayout`]) and [`ExactPool`] ([`ExactLayout`]); the
/// pages, their owners and the least-recently-used order are [`PagedPool`]'s.
pub trait PageLayout {
    /// Points a page holds.
    const PAGE_POINTS: u32;
    /// Bytes a point takes on the GPU (counted in [`PagedPool::uploaded_bytes`]).
    const POINT_BYTES: u64;
    /// Elements of `q` as the pool holds them (page k of the node from element
    /// k · [`PAGE_POINTS`](PageLayout::PAGE_POINTS)), up to the last page's last point.
    fn laid_out(q: &QuantizedNode) -> usize;
    /// Pages `q` takes.
    fn pages(q: &QuantizedNode) -> usize {
        Self::laid_out(q).div_ceil(Self::PAGE_POINTS as usize)
    }
    /// Index into `q.data`'s arrays of point `j` of the node's page `k`, if the page holds it.
    fn point(q: &QuantizedNode, k: usize, j: usize) -> Option<usize>;
    /// Pages a storage binding holds: one upload never crosses from one to the next.
    fn chunk_pages(&self) -> u32;
    /// Writes elements `points` of `q` (as [`laid_out`](PageLayout::laid_out)) through the
    /// frame's uploader into consecutive pages of one binding, from pool page `page` on.
    fn upload(&self, gpu: &mut GpuFrame<'_>, q: &QuantizedNode, points: Range<usize>, page: u32);
    /// Empties this frame's batch table.
    fn clear_batches(&mut self);
}

/// A GPU point pool of `pages` pages of [`PageLayout::PAGE_POINTS`] points: the pages each
/// resident node takes (anywhere in the pool: no fragmentation), the free ones, eviction of
/// the least recently drawn nodes when a new one needs room, the uploads; the buffers, the
/// point layout and the batch table are `L`'s. [`Pool`] and [`ExactPool`].
pub struct PagedPool<L> {
    layout: L,
    pages: u32,
    /// Free pages, highest first (so `pop` takes the lowest, keeping nodes contiguous).
    free: Vec<u32>,
    /// Page → node owning it.
    owner: Vec<u32>,
    nodes: HashMap<u32, Resident>,
    /// Id of pool point 0 (the ids below are another pool's).
    id_base: u32,
    /// Nodes evicted so far.
    pub evicted: u64,
    /// Bytes uploaded so far.
    pub uploaded_bytes: u64,
    /// Points in this frame's batch table.
    batched_points: u64,
}

/// The quantized pool (see the module docs).
pub type Pool = PagedPool<QuantizedLayout>;

/// The exact pool: the points of resident nodes whose quantized cells are too coarse for the view
/// (a node close to the eye, or a leaf whose points lie far apart on screen), 16 bytes a point (f32
/// offsets from the node's origin and the attribute word) plus the 8-byte attributes, in pages of
/// [`BATCH_POINTS`](super::raster::BATCH_POINTS) points, drawn by the rasterizer's 16-byte entry
/// point `main` into the same visibility buffer as the quantized pool (ids 0 … capacity − 1; the
/// quantized pool's follow). Its nodes keep the point order of their [`QuantizedNode`] (Morton
/// order).
pub(crate) type ExactPool = PagedPool<ExactLayout>;

/// No node owns the page.
const NO_OWNER: u32 = u32::MAX;

/// The elements `r` of `v`, cut to its length (a node whose arrays are shorter than its codes
/// uploads what it has).
fn part<'a, T>(v: &'a [T], r: &Range<usize>) -> &'a [T] {
    let end = r.end.min(v.len());
    &v[r.start.min(end)..end]
}

/// Pads `table` with `empty` to the `x · y` entries of its dispatch, writes it to `buffer`
/// through the frame's uploader and cuts the padding off again. Where it does not fit: empties
/// it, logs "`{what}`batch table larger than its buffer" and returns false.
fn write_table<T: bytemuck::Pod>(
    gpu: &mut GpuFrame<'_>,
    buffer: &wgpu::Buffer,
    table: &mut Vec<T>,
    (x, y): (u32, u32),
    empty: T,
    what: &str,
) -> bool {
    let n = table.len();
    table.resize((x * y) as usize, empty);
    if std::mem::size_of_val(table.as_slice()) as u64 > buffer.size() {
        log::error!("point cloud: {what}batch table larger than its buffer");
        table.clear();
        return false;
    }
    gpu.write_slice(buffer, 0, table);
    table.truncate(n);
    true
}

impl<L: PageLayout> PagedPool<L> {
    /// The pool of `pages` pages held by `layout`, every page free, its ids from `id_base` on.
    fn with_layout(layout: L, pages: u32, id_base: u32) -> PagedPool<L> {
        PagedPool {
            layout,
            pages,
            free: (0..pages).rev().collect(),
            owner: vec![NO_OWNER; pages as usize],
            nodes: HashMap::new(),
            id_base,
            evicted: 0,
            uploaded_bytes: 0,
            batched_points: 0,
        }
    }

    /// Capacity in points.
    pub fn capacity(&self) -> u64 {
        u64::from(self.pages) * u64::from(L::PAGE_POINTS)
    }

    /// Whether `node` is resident.
    pub fn contains(&self, node: u32) -> bool {
        self.nodes.contains_key(&node)
    }

    /// The resident `node`'s points.
    pub fn node(&self, node: u32) -> Option<&Arc<QuantizedNode>> {
        self.nodes.get(&node).map(|r| &r.node)
    }

    /// Resident nodes.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether no node is resident.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Points resident.
    pub fn points_resident(&self) -> u64 {
        self.nodes.values().map(|r| r.node.len() as u64).sum()
    }

    /// Points in this frame's batch table: what the raster passes project (less the batches
    /// they cull).
    pub fn batched_points(&self) -> u64 {
        self.batched_points
    }

    /// Marks `node` drawn in `frame` (for the LRU order).
    pub fn touch(&mut self, node: u32, frame: u64) {
        if let Some(r) = self.nodes.get_mut(&node) {
            r.last_used = frame;
        }
    }

    /// The node owning the page of pool point `index` (id − `id_base`), its residency and the
    /// page's place among the node's pages.
    fn resident_page(&self, index: u32) -> Option<(u32, &Resident, usize)> {
        let page = index / L::PAGE_POINTS;
        let node = *self.owner.get(page as usize)?;
        let r = self.nodes.get(&node)?;
        let k = r.pages.iter().position(|&p| p == page)?;
        Some((node, r, k))
    }

    /// The node, its residency and the point index within it (into its [`QuantizedNode`]'s
    /// `data` arrays) of the point of id `id` (of the visibility buffer), if a node holds it.
    pub fn locate(&self, id: u32) -> Option<(u32, &Resident, usize)> {
        let index = id.checked_sub(self.id_base)?;
        let (node, r, k) = self.resident_page(index)?;
        let i = L::point(&r.node, k, (index % L::PAGE_POINTS) as usize)?;
        Some((node, r, i))
    }

    /// Uploads `q` as node `node` in `frame` through the frame's uploader
    /// ([`PageLayout::POINT_BYTES`] a point: [`POINT_BYTES`] in the quantized pool, codes, words
    /// and attributes; [`EXACT_POINT_BYTES`] in the exact one), run by run of consecutive pages
    /// of one binding, evicting the least recently drawn nodes not drawn in `frame` when room
    /// is short. A resident node is left as it is.
    ///
    /// # Errors
    ///
    /// [`PoolFull`] when there is no room without evicting a node drawn this frame (nothing is
    /// uploaded).
    pub fn insert(
        &mut self,
        gpu: &mut GpuFrame<'_>,
        node: u32,
        q: Arc<QuantizedNode>,
        frame: u64,
    ) -> Result<(), PoolFull> {
        if self.contains(node) {
            return Ok(());
        }
        let need = L::pages(&q) as u64;
        if need > u64::from(self.pages) {
            return Err(PoolFull::TooLarge);
        }
        while (self.free.len() as u64) < need {
            let victim = self
                .nodes
                .iter()
                .filter(|(_, r)| r.last_used < frame)
                .min_by_key(|(n, r)| (r.last_used, **n))
                .map(|(n, _)| *n);
            let Some(victim) = victim else {
                return Err(PoolFull::InUse);
            };
            self.evict(victim);
        }
        let pages: Vec<u32> = (0..need).filter_map(|_| self.free.pop()).collect();
        for &p in &pages {
            if let Some(o) = self.owner.get_mut(p as usize) {
                *o = node;
            }
        }
        let (page, len) = (L::PAGE_POINTS as usize, L::laid_out(&q));
        let split = self.layout.chunk_pages().max(1);
        let mut start = 0;
        while start < pages.len() {
            let chunk = pages[start] / split;
            let mut end = start + 1;
            while end < pages.len()
                && pages[end] == pages[end - 1] + 1
                && pages[end] / split == chunk
            {
                end += 1;
            }
            let points = start * page..(end * page).min(len);
            self.uploaded_bytes += points.len() as u64 * L::POINT_BYTES;
            self.layout.upload(gpu, &q, points, pages[start]);
            start = end;
        }
        self.nodes.insert(
            node,
            Resident {
                pages,
                node: q,
                last_used: frame,
                uploaded: frame,
            },
        );
        Ok(())
    }

    fn evict(&mut self, node: u32) {
        if let Some(r) = self.nodes.remove(&node) {
            for &p in &r.pages {
                if let Some(o) = self.owner.get_mut(p as usize) {
                    *o = NO_OWNER;
                }
            }
            self.free.extend(r.pages);
            self.free.sort_unstable_by(|a, b| b.cmp(a));
            self.evicted += 1;
        }
    }

    /// Drops every node (the GPU buffers stay) and empties the batch table.
    pub fn clear(&mut self) {
        self.nodes.clear();
        self.owner.fill(NO_OWNER);
        self.free = (0..self.pages).rev().collect();
        self.layout.clear_batches();
        self.batched_points = 0;
    }
}
/// `make(pages)`, then while the device ran out of memory making it (the error `make` returns),
/// `make` of half the pages, down to one page; each failure logged as the `what` of that many
/// points (`page` points a page). The last one-page pool is kept even when it failed too: the
/// scene then draws what its buffers hold (nothing), and says so in the log.
fn halving_on_oom<P>(
    what: &str,
    page: u64,
    mut pages: u32,
    mut make: impl FnMut(u32) -> (P, Option<String>),
) -> P {
    loop {
        let (pool, error) = make(pages);
        match error {
            None => return pool,
            Some(e) if pages > 1 => {
                log::error!(
                    "point cloud: a {what} of {} points does not fit in the GPU's memory ({e}); \
                     trying half",
                    u64::from(pages) * page
                );
                pages /= 2;
            }
            Some(e) => {
                log::error!("point cloud: the GPU {what} could not be allocated: {e}");
                return pool;
            }
        }
    }
}
#[cfg(test)]
mod tests {
    use super::halving_on_oom;

    #[test]
    fn out_of_memory_halves_the_pages_down_to_one() {
        // Fails above 3 pages: 16, 8, 4 tried, 2 kept.
        let mut tried = Vec::new();
        let kept = halving_on_oom("pool", 1024, 16, |pages| {
            tried.push(pages);
            (pages, (pages > 3).then(|| "out of memory".to_string()))
        });
        assert_eq!((kept, tried), (2, vec![16, 8, 4, 2]));
        // Failing at every size: one page is kept.
        let kept = halving_on_oom("pool", 1024, 5, |pages| (pages, Some("oom".to_string())));
        assert_eq!(kept, 1);
    }
}
