//! The GPU point pool: the points of resident nodes, in pages of
//! [`BATCH_POINTS`](super::raster::BATCH_POINTS) (a node takes whole pages, anywhere in the
//! pool: no fragmentation), with least-recently-used eviction when a new node needs room. The
//! pool's size is the GPU memory budget; uploads go through the frame's uploader (counted).
//!
//! Each resident node keeps its decoded points on the CPU too, for the hover readout's exact
//! coordinates.

use std::collections::HashMap;
use std::sync::Arc;

use super::raster::{BATCH_POINTS, EMPTY_BATCH, batch_entry, dispatch_size};
use super::source::NodeData;
use crate::gpu::frame::GpuFrame;

/// Bytes a point takes on the GPU: `vec4<u32>` (position, attribute word) + `vec2<u32>`
/// (colour, elevation).
pub const POINT_BYTES: u64 = 24;

/// A resident node.
pub struct Resident {
    /// Its pages, in order (page p holds pool points p·128 …).
    pub pages: Vec<u32>,
    /// Its points, as decoded.
    pub data: Arc<NodeData>,
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

/// The pool (see the module docs).
pub struct Pool {
    /// Points: `vec4<u32>` each.
    pub points: wgpu::Buffer,
    /// Attributes: `vec2<u32>` each.
    pub attrs: wgpu::Buffer,
    /// The batch table the passes read (rewritten every frame).
    pub batches: wgpu::Buffer,
    pages: u32,
    /// Free pages, highest first (so `pop` takes the lowest, keeping nodes contiguous).
    free: Vec<u32>,
    /// Page → node owning it.
    owner: Vec<u32>,
    nodes: HashMap<u32, Resident>,
    /// Nodes evicted so far.
    pub evicted: u64,
    /// Bytes uploaded so far.
    pub uploaded_bytes: u64,
    table: Vec<[u32; 4]>,
}

/// No node owns the page.
const NO_OWNER: u32 = u32::MAX;

impl Pool {
    /// A pool of `capacity` points (rounded up to whole pages; at least one page).
    pub fn new(device: &wgpu::Device, capacity: u64) -> Pool {
        let pages = capacity
            .div_ceil(u64::from(BATCH_POINTS))
            .clamp(1, (1 << 24) - 1) as u32;
        let points = u64::from(pages) * u64::from(BATCH_POINTS);
        let buffer = |label: &str, bytes: u64, usage: wgpu::BufferUsages| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: bytes,
                usage: usage | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        };
        let (x, y) = dispatch_size(pages);
        let table_entries = u64::from(x) * u64::from(y);
        Pool {
            points: buffer(
                "pointcloud:pool:points",
                points * 16,
                wgpu::BufferUsages::STORAGE,
            ),
            attrs: buffer(
                "pointcloud:pool:attrs",
                points * 8,
                wgpu::BufferUsages::STORAGE,
            ),
            batches: buffer(
                "pointcloud:pool:batches",
                table_entries.max(1) * 16,
                wgpu::BufferUsages::STORAGE,
            ),
            pages,
            free: (0..pages).rev().collect(),
            owner: vec![NO_OWNER; pages as usize],
            nodes: HashMap::new(),
            evicted: 0,
            uploaded_bytes: 0,
            table: Vec::new(),
        }
    }

    /// Capacity in points.
    pub fn capacity(&self) -> u64 {
        u64::from(self.pages) * u64::from(BATCH_POINTS)
    }

    /// Bytes of GPU memory the pool holds (points, attributes, batch table).
    pub fn gpu_bytes(&self) -> u64 {
        self.points.size() + self.attrs.size() + self.batches.size()
    }

    /// Whether `node` is resident.
    pub fn contains(&self, node: u32) -> bool {
        self.nodes.contains_key(&node)
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
        self.nodes.values().map(|r| r.data.len() as u64).sum()
    }

    /// Marks `node` drawn in `frame` (for the LRU order).
    pub fn touch(&mut self, node: u32, frame: u64) {
        if let Some(r) = self.nodes.get_mut(&node) {
            r.last_used = frame;
        }
    }

    /// The node and point index within it of pool point `index`, if a node holds it.
    pub fn locate(&self, index: u32) -> Option<(u32, &Resident, usize)> {
        let page = index / BATCH_POINTS;
        let node = *self.owner.get(page as usize)?;
        let r = self.nodes.get(&node)?;
        let k = r.pages.iter().position(|&p| p == page)?;
        let i = k * BATCH_POINTS as usize + (index % BATCH_POINTS) as usize;
        (i < r.data.len()).then_some((node, r, i))
    }

    /// Uploads `data` as node `node` in `frame` through the frame's uploader, evicting the least
    /// recently drawn nodes not drawn in `frame` when room is short. `elev_base` is subtracted
    /// from each point's z for its elevation attribute.
    ///
    /// # Errors
    ///
    /// [`PoolFull`] when there is no room without evicting a node drawn this frame (nothing is
    /// uploaded).
    pub fn insert(
        &mut self,
        gpu: &mut GpuFrame<'_>,
        node: u32,
        data: Arc<NodeData>,
        elev_base: f64,
        frame: u64,
    ) -> Result<(), PoolFull> {
        if self.nodes.contains_key(&node) {
            return Ok(());
        }
        let need = (data.len() as u64).div_ceil(u64::from(BATCH_POINTS)).max(1);
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
            self.owner[p as usize] = node;
        }
        // Upload run by run of consecutive pages.
        let mut start = 0;
        while start < pages.len() {
            let mut end = start + 1;
            while end < pages.len() && pages[end] == pages[end - 1] + 1 {
                end += 1;
            }
            let first = start * BATCH_POINTS as usize;
            let last = (end * BATCH_POINTS as usize).min(data.len());
            let mut pts: Vec<[u32; 4]> = Vec::with_capacity(last - first);
            let mut att: Vec<[u32; 2]> = Vec::with_capacity(last - first);
            for i in first..last {
                let o = data.offsets[i];
                pts.push([
                    o[0].to_bits(),
                    o[1].to_bits(),
                    o[2].to_bits(),
                    data.words[i],
                ]);
                let elev = (data.xyz[i][2] - elev_base) as f32;
                att.push([data.rgba[i], elev.to_bits()]);
            }
            let at = u64::from(pages[start]) * u64::from(BATCH_POINTS);
            gpu.write_slice(&self.points, at * 16, &pts);
            gpu.write_slice(&self.attrs, at * 8, &att);
            self.uploaded_bytes += (pts.len() * 24) as u64;
            start = end;
        }
        self.nodes.insert(
            node,
            Resident {
                pages,
                data,
                last_used: frame,
                uploaded: frame,
            },
        );
        Ok(())
    }

    fn evict(&mut self, node: u32) {
        if let Some(r) = self.nodes.remove(&node) {
            for &p in &r.pages {
                self.owner[p as usize] = NO_OWNER;
            }
            self.free.extend(r.pages);
            self.free.sort_unstable_by(|a, b| b.cmp(a));
            self.evicted += 1;
        }
    }

    /// Drops every node (the GPU buffers stay).
    pub fn clear(&mut self) {
        self.nodes.clear();
        self.owner.fill(NO_OWNER);
        self.free = (0..self.pages).rev().collect();
    }

    /// Writes the batch table of `draw` (resident nodes) seen from `eye` and returns the number
    /// of batches (the table is padded for the dispatch).
    pub fn write_batches(&mut self, gpu: &mut GpuFrame<'_>, draw: &[u32], eye: glam::DVec3) -> u32 {
        self.table.clear();
        for &n in draw {
            let Some(r) = self.nodes.get(&n) else {
                continue;
            };
            let o = r.data.origin;
            let offset = [
                (o[0] - eye.x) as f32,
                (o[1] - eye.y) as f32,
                (o[2] - eye.z) as f32,
            ];
            let len = r.data.len() as u32;
            for (k, &p) in r.pages.iter().enumerate() {
                let done = k as u32 * BATCH_POINTS;
                if done >= len {
                    break;
                }
                self.table.push(batch_entry(
                    offset,
                    p * BATCH_POINTS,
                    (len - done).min(BATCH_POINTS),
                ));
            }
        }
        let n = self.table.len() as u32;
        if n == 0 {
            return 0;
        }
        let (x, y) = dispatch_size(n);
        self.table.resize((x * y) as usize, EMPTY_BATCH);
        let bytes = (self.table.len() * 16) as u64;
        if bytes > self.batches.size() {
            log::error!("point cloud: batch table larger than its buffer");
            return 0;
        }
        gpu.write_slice(&self.batches, 0, &self.table);
        n
    }
}
