//! The pages that hold the series mirrors: each page is one pair of storage buffers (samples:
//! f32 bits and valid count; min/max pyramid) split into power-of-two blocks by a buddy allocator
//! (Knuth, TAOCP vol. 1, 2.5), so the batched passes reach every series of a page through one
//! bind group.

use super::{MIN_CAPACITY, PAGE_SAMPLES, Pipelines, buffer};
use crate::gpu::layout;

/// A block of a page: `capacity` samples (a power of two, at least [`MIN_CAPACITY`]) from sample
/// `offset` (a multiple of `capacity`); its pyramid nodes start at node `offset / 8`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Block {
    pub page: usize,
    pub offset: u64,
    pub capacity: u64,
}

impl Block {
    /// The first pyramid node of the block in its page.
    pub fn nodes_at(&self) -> u64 {
        self.offset / 8
    }
}

/// The free blocks of a page of `MIN_CAPACITY << top` samples.
struct Buddy {
    /// Free block offsets by order (order k: blocks of `MIN_CAPACITY << k` samples).
    free: Vec<Vec<u64>>,
    /// Samples allocated.
    used: u64,
}

fn order_of(capacity: u64) -> usize {
    (capacity / MIN_CAPACITY).trailing_zeros() as usize
}

impl Buddy {
    /// A page of `size` samples (a power of two, at least `MIN_CAPACITY`), all free.
    fn new(size: u64) -> Buddy {
        let top = order_of(size);
        let mut free = vec![Vec::new(); top + 1];
        free[top].push(0);
        Buddy { free, used: 0 }
    }

    /// A free block of `capacity` samples, split from the smallest larger one.
    fn alloc(&mut self, capacity: u64) -> Option<u64> {
        let want = order_of(capacity);
        let from = (want..self.free.len()).find(|&k| !self.free[k].is_empty())?;
        let offset = self.free[from].pop()?;
        for k in (want..from).rev() {
            self.free[k].push(offset + (MIN_CAPACITY << k));
        }
        self.used += capacity;
        Some(offset)
    }

    /// Returns a block, merged with its free buddies.
    fn release(&mut self, mut offset: u64, capacity: u64) {
        self.used -= capacity;
        let mut k = order_of(capacity);
        while k + 1 < self.free.len() {
            let buddy = offset ^ (MIN_CAPACITY << k);
            match self.free[k].iter().position(|&o| o == buddy) {
                Some(i) => {
                    self.free[k].swap_remove(i);
                    offset = offset.min(buddy);
                    k += 1;
                }
                None => break,
            }
        }
        self.free[k].push(offset);
    }
}

/// One page: `size` samples (f32 bits and the valid count of the series up to the sample, 8
/// bytes), `size / 8` pyramid nodes, and the free blocks.
pub(super) struct Page {
    blocks: Buddy,
    samples: wgpu::Buffer,
    pyramid: wgpu::Buffer,
    /// The page's bind group (group 1 of the compute passes).
    pub group: wgpu::BindGroup,
}

impl Page {
    fn new(device: &wgpu::Device, pipes: &Pipelines, size: u64) -> Page {
        let usage = wgpu::BufferUsages::STORAGE;
        let samples = buffer(device, "timeseries:page:samples", size * 8, usage);
        let pyramid = buffer(device, "timeseries:page:pyramid", size, usage);
        let group = layout::buffers_group(
            device,
            "timeseries:page:bind_group",
            &pipes.page_bgl,
            &[&samples, &pyramid],
        );
        Page {
            blocks: Buddy::new(size),
            samples,
            pyramid,
            group,
        }
    }

    fn bytes(&self) -> u64 {
        self.samples.size() + self.pyramid.size()
    }
}

/// Every page of the mirrors.
#[derive(Default)]
pub(super) struct Pool {
    pages: Vec<Option<Page>>,
}

impl Pool {
    /// A block of `capacity` samples (a power of two from [`MIN_CAPACITY`] to
    /// `pipes.max_samples`): from the first page with room, else from a new page of
    /// [`PAGE_SAMPLES`] (or of the block's size, when larger).
    pub fn alloc(&mut self, device: &wgpu::Device, pipes: &Pipelines, capacity: u64) -> Block {
        let capacity = capacity
            .clamp(MIN_CAPACITY, pipes.max_samples)
            .next_power_of_two();
        for (page, p) in self.pages.iter_mut().enumerate() {
            if let Some(p) = p
                && let Some(offset) = p.blocks.alloc(capacity)
            {
                return Block {
                    page,
                    offset,
                    capacity,
                };
            }
        }
        let size = PAGE_SAMPLES.min(pipes.max_samples).max(capacity);
        let mut p = Page::new(device, pipes, size);
        let offset = p.blocks.alloc(capacity).unwrap_or(0);
        let page = match self.pages.iter().position(Option::is_none) {
            Some(i) => {
                self.pages[i] = Some(p);
                i
            }
            None => {
                self.pages.push(Some(p));
                self.pages.len() - 1
            }
        };
        Block {
            page,
            offset,
            capacity,
        }
    }

    /// Returns `block`; a page left empty is dropped (its GPU memory freed).
    pub fn release(&mut self, block: Block) {
        if let Some(slot) = self.pages.get_mut(block.page)
            && let Some(p) = slot
        {
            p.blocks.release(block.offset, block.capacity);
            if p.blocks.used == 0 {
                *slot = None;
            }
        }
    }

    /// Page `i`, if it exists.
    pub fn page(&self, i: usize) -> Option<&Page> {
        self.pages.get(i).and_then(Option::as_ref)
    }

    /// Number of page slots (some may be empty).
    pub fn len(&self) -> usize {
        self.pages.len()
    }

    /// GPU bytes held by the pages.
    pub fn gpu_bytes(&self) -> u64 {
        self.pages.iter().flatten().map(Page::bytes).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Blocks never overlap and stay aligned, and a page whose blocks are all returned is one
    /// free block again.
    #[test]
    fn buddy_blocks_are_disjoint_and_merge_back() {
        let size = MIN_CAPACITY << 6;
        let top = order_of(size);
        let mut p = Buddy::new(size);
        let mut live: Vec<(u64, u64)> = Vec::new();
        let mut x = 12345u64;
        let mut failed = 0;
        for _ in 0..2000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            if !x.is_multiple_of(3) || live.is_empty() {
                let cap = MIN_CAPACITY << (x % 4);
                match p.alloc(cap) {
                    Some(o) => {
                        assert_eq!(o % cap, 0);
                        assert!(o + cap <= size);
                        for &(a, c) in &live {
                            assert!(o + cap <= a || a + c <= o, "overlap");
                        }
                        live.push((o, cap));
                    }
                    None => failed += 1,
                }
            } else {
                let (o, c) = live.swap_remove((x / 3) as usize % live.len());
                p.release(o, c);
            }
            assert_eq!(p.used, live.iter().map(|b| b.1).sum::<u64>());
        }
        assert!(failed > 0, "the page filled up at times");
        for (o, c) in live.drain(..) {
            p.release(o, c);
        }
        assert_eq!(p.used, 0);
        assert_eq!(p.free[top], vec![0]);
        assert!(p.free[..top].iter().all(Vec::is_empty));
    }
}
