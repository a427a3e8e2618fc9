//! The `--share` window on the GPU ([`WindowPasses`]): a producer's `[S, N]` f32 array (S series
//! of N samples, row-major), once copied into vizdeck's window buffer, is written into the
//! mirrors of series 0..S by two compute passes (`window_count.wgsl`: the valid samples of each
//! block of 4096; `window_write.wgsl`: per sample its f32 bits and its series' running valid
//! count, the layout [`Mirrors::sync`](super::Mirrors::sync) stages from the host), after which
//! the mirrors' pyramids are built and decimated exactly as for host samples. A third pass
//! (`window_range.wgsl`) reduces each series' smallest and largest finite value over the view,
//! which the scene reads back (8 bytes a series) for its value axis. No value crosses the host.

use bytemuck::{Pod, Zeroable};

use super::{Mirrors, PARAM_STRIDE, Pipelines, buffer};
use crate::gpu::frame::GpuFrame;
use crate::gpu::layout;
use crate::timeseries::shaders;

/// Samples a workgroup of the count and write passes covers (`WINDOW_BLOCK` in WGSL).
pub(crate) const WINDOW_BLOCK: u64 = 4096;
/// Most blocks per series (one dispatch dimension): at most `65535 × 4096` samples per series.
pub(crate) const MAX_BLOCKS: u64 = 65_535;

/// The parameters of one window dispatch (`WindowParams` in
/// `shaders/common/timeseries_window.wgsl`): samples per series, blocks per series, the entries
/// `[first, first + count)` it works on, and the view's samples `[k0, k1)` (range pass).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub(crate) struct WindowParams {
    pub samples: u32,
    pub blocks: u32,
    pub first: u32,
    pub count: u32,
    pub k0: u32,
    pub k1: u32,
    pub _pad0: u32,
    pub _pad1: u32,
}

/// Parameter slots: the count pass, the range pass, then one write pass per page.
const SLOT_COUNT: u64 = 0;
const SLOT_RANGE: u64 = 1;
const SLOT_PAGES: u64 = 2;

/// The passes that bring a producer's window into the mirrors and reduce its range (see the
/// [module](self)).
pub struct WindowPasses {
    count: wgpu::ComputePipeline,
    write: wgpu::ComputePipeline,
    range: wgpu::ComputePipeline,
    bgl: wgpu::BindGroupLayout,
    group: Option<wgpu::BindGroup>,
    params: Option<wgpu::Buffer>,
    entries: wgpu::Buffer,
    block_counts: wgpu::Buffer,
    ranges: wgpu::Buffer,
    series: u32,
    samples: u64,
    blocks: u32,
    /// Per page holding mirrors of the window: (page, first entry, entries).
    pages: Vec<(usize, u32, u32)>,
    entries_cpu: Vec<[u32; 2]>,
    /// This frame writes the window into the mirrors.
    ingest: bool,
    /// This frame reduces the range over these samples.
    range_of: Option<(u64, u64)>,
}

impl WindowPasses {
    /// The passes over `window` (a storage buffer of `series × samples` f32, row-major) for
    /// mirrors `0..series`. `samples` is at most [`MAX_BLOCKS`] × [`WINDOW_BLOCK`] (the caller
    /// checks; larger counts are clamped).
    pub fn new(
        device: &wgpu::Device,
        pipes: &Pipelines,
        window: &wgpu::Buffer,
        series: u32,
        samples: u64,
    ) -> WindowPasses {
        let cs = wgpu::ShaderStages::COMPUTE;
        let bgl = layout::bind_group_layout(
            device,
            "timeseries:share:window",
            &[
                layout::uniform_dynamic(0, cs, Some(size_of::<WindowParams>() as u64)),
                layout::storage(1, cs, true),
                layout::storage(2, cs, true),
                layout::storage(3, cs, false),
                layout::storage(4, cs, false),
            ],
        );
        let solo = layout::pipeline_layout(device, "timeseries:share:window", &[&bgl]);
        let paged = layout::pipeline_layout(
            device,
            "timeseries:share:window_write",
            &[&bgl, &pipes.page_bgl],
        );
        let count = shaders::TIMESERIES_WINDOW_COUNT.compute_pipeline_entry(
            device,
            "timeseries:compute:window_count",
            &solo,
            "main",
        );
        let write = shaders::TIMESERIES_WINDOW_WRITE.compute_pipeline_entry(
            device,
            "timeseries:compute:window_write",
            &paged,
            "main",
        );
        let range = shaders::TIMESERIES_WINDOW_RANGE.compute_pipeline_entry(
            device,
            "timeseries:compute:window_range",
            &solo,
            "main",
        );
        let blocks = samples.div_ceil(WINDOW_BLOCK).clamp(1, MAX_BLOCKS) as u32;
        let storage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST;
        let entries = buffer(
            device,
            "timeseries:share:entries",
            u64::from(series) * 8,
            storage,
        );
        let block_counts = buffer(
            device,
            "timeseries:share:block_counts",
            u64::from(series) * u64::from(blocks) * 4,
            wgpu::BufferUsages::STORAGE,
        );
        let ranges = buffer(
            device,
            "timeseries:share:ranges",
            u64::from(series) * 8,
            wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
        );
        let mut passes = WindowPasses {
            count,
            write,
            range,
            bgl,
            group: None,
            params: None,
            entries,
            block_counts,
            ranges,
            series,
            samples,
            blocks,
            pages: Vec::new(),
            entries_cpu: Vec::new(),
            ingest: false,
            range_of: None,
        };
        passes.grow_params(device, window, SLOT_PAGES + 1);
        passes
    }

    /// Makes the parameter buffer hold `slots` slots (and the bind group over it).
    fn grow_params(&mut self, device: &wgpu::Device, window: &wgpu::Buffer, slots: u64) {
        if self
            .params
            .as_ref()
            .is_some_and(|p| p.size() >= slots * PARAM_STRIDE)
        {
            return;
        }
        let params = buffer(
            device,
            "timeseries:share:params",
            slots.next_power_of_two() * PARAM_STRIDE,
            wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
        );
        let slot = wgpu::BindingResource::Buffer(wgpu::BufferBinding {
            buffer: &params,
            offset: 0,
            size: wgpu::BufferSize::new(size_of::<WindowParams>() as u64),
        });
        self.group = Some(layout::bind_group(
            device,
            "timeseries:share:window:bind_group",
            &self.bgl,
            &[
                slot,
                window.as_entire_binding(),
                self.entries.as_entire_binding(),
                self.block_counts.as_entire_binding(),
                self.ranges.as_entire_binding(),
            ],
        ));
        self.params = Some(params);
    }

    /// The per-series ranges this frame's range pass writes: S × (min key, max key), the
    /// order-preserving keys of `shaders/common/timeseries.wgsl` (see [`range_of_keys`]).
    pub fn ranges(&self) -> &wgpu::Buffer {
        &self.ranges
    }

    /// Plans the frame's window passes, writing their parameters through the frame's uploader
    /// (a few hundred bytes; none of the values): with `ingest`, the window written into the
    /// mirrors `0..S` (held by [`Mirrors::hold_gpu_samples`], whose pyramids the caller queues);
    /// with `range`, the range of every series over samples `[k0, k1)`.
    pub fn plan(
        &mut self,
        gpu: &mut GpuFrame<'_>,
        window: &wgpu::Buffer,
        mirrors: &Mirrors,
        ingest: bool,
        range: Option<(u64, u64)>,
    ) {
        self.ingest = false;
        self.range_of = None;
        let base = WindowParams {
            samples: self.samples as u32,
            blocks: self.blocks,
            first: 0,
            count: self.series,
            ..WindowParams::default()
        };
        if ingest {
            // Entries by page: a write dispatch per page.
            let mut by_page: Vec<(usize, u32, u64)> = (0..self.series)
                .filter_map(|s| {
                    mirrors
                        .block_of(s as usize)
                        .map(|(page, offset)| (page, s, offset))
                })
                .collect();
            if by_page.len() != self.series as usize {
                return;
            }
            by_page.sort_by_key(|e| (e.0, e.1));
            self.entries_cpu.clear();
            self.pages.clear();
            for &(page, s, offset) in &by_page {
                match self.pages.last_mut() {
                    Some(p) if p.0 == page => p.2 += 1,
                    _ => self.pages.push((page, self.entries_cpu.len() as u32, 1)),
                }
                self.entries_cpu.push([s, offset as u32]);
            }
            self.grow_params(gpu.device(), window, SLOT_PAGES + self.pages.len() as u64);
            gpu.write_slice(&self.entries, 0, &self.entries_cpu);
            let Some(params) = self.params.clone() else {
                return;
            };
            gpu.write_pod(&params, SLOT_COUNT * PARAM_STRIDE, &base);
            for (n, &(_, first, count)) in self.pages.iter().enumerate() {
                let p = WindowParams {
                    first,
                    count,
                    ..base
                };
                gpu.write_pod(&params, (SLOT_PAGES + n as u64) * PARAM_STRIDE, &p);
            }
            self.ingest = true;
        }
        if let (Some((k0, k1)), Some(params)) = (range, &self.params)
            && !self.entries_cpu.is_empty()
        {
            let p = WindowParams {
                k0: k0.min(self.samples) as u32,
                k1: k1.min(self.samples) as u32,
                ..base
            };
            gpu.write_pod(params, SLOT_RANGE * PARAM_STRIDE, &p);
            self.range_of = Some((k0, k1));
        }
    }

    /// Records the planned passes (before the mirrors' own: the pyramid builds read what the
    /// write pass wrote). Returns the view range reduced, if the range pass ran.
    pub fn encode(
        &mut self,
        pass: &mut wgpu::ComputePass<'_>,
        mirrors: &Mirrors,
    ) -> Option<(u64, u64)> {
        let group = self.group.as_ref()?;
        let slot = |n: u64| (n * PARAM_STRIDE) as u32;
        if std::mem::take(&mut self.ingest) {
            pass.set_pipeline(&self.count);
            pass.set_bind_group(0, group, &[slot(SLOT_COUNT)]);
            pass.dispatch_workgroups(self.blocks, self.series, 1);
            pass.set_pipeline(&self.write);
            for (n, &(page, _, count)) in self.pages.iter().enumerate() {
                let Some(page_group) = mirrors.page_group(page) else {
                    continue;
                };
                pass.set_bind_group(0, group, &[slot(SLOT_PAGES + n as u64)]);
                pass.set_bind_group(1, page_group, &[]);
                pass.dispatch_workgroups(self.blocks, count, 1);
            }
        }
        let range = self.range_of.take()?;
        pass.set_pipeline(&self.range);
        pass.set_bind_group(0, group, &[slot(SLOT_RANGE)]);
        pass.dispatch_workgroups(1, self.series, 1);
        Some(range)
    }
}

/// The value range of a series from its two keys read back from [`WindowPasses::ranges`]:
/// `None` when the view held no finite value.
pub(crate) fn range_of_keys(min_key: u32, max_key: u32) -> Option<(f32, f32)> {
    let unkey = |k: u32| {
        if k & 0x8000_0000 != 0 {
            f32::from_bits(k & 0x7fff_ffff)
        } else {
            f32::from_bits(!k)
        }
    };
    (min_key <= max_key && min_key != u32::MAX).then(|| (unkey(min_key), unkey(max_key)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Keys order as the floats do, and decode back.
    #[test]
    fn keys_decode_to_their_values() {
        let key = |v: f32| {
            let b = v.to_bits();
            if b & 0x8000_0000 != 0 {
                !b
            } else {
                b | 0x8000_0000
            }
        };
        for (lo, hi) in [
            (-3.5f32, 2.25f32),
            (-0.0, 0.0),
            (1e-30, 3e38),
            (-3e38, -1e-30),
        ] {
            assert_eq!(range_of_keys(key(lo), key(hi)), Some((lo, hi)));
            assert!(key(lo) <= key(hi));
        }
        assert_eq!(range_of_keys(u32::MAX, 0), None);
    }
}
