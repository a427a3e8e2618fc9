//! From the GPU back to the CPU: the statistics copy into the readback ring and its arrival,
//! blocking reads of state, sums, cell starts and statistics for tests and tools, and the
//! blocking GPU exclusive scan used by tests of the multi-level scan.

use wgpu::util::DeviceExt;

use super::build::{small_uniform, storage_buffer};
use super::cpu::{Neighbours, Particle, STATS_WORDS, Stats};
use super::{COMPUTE, Mode, SCAN_BLOCK, Sim, StatsCopy, fold, scan_levels};
use crate::gpu::readback::{Consumer, ReadbackRing};
use crate::gpu::{Gpu, layout};
use crate::particles::shaders;

impl Sim {
    /// Records the copy of the statistics reduced this frame into `ring` (tag `kind`, id = the
    /// step count they describe), in `encoder` after the frame's compute pass. Returns false
    /// when there is nothing to copy or the ring refused it.
    pub fn record_stats_copy(
        &mut self,
        device: &wgpu::Device,
        encoder: &mut wgpu::CommandEncoder,
        ring: &mut ReadbackRing,
        me: Consumer,
    ) -> bool {
        let Some(step) = self.stats.to_copy.take() else {
            return false;
        };
        ring.copy_buffer(
            device,
            encoder,
            &self.stats.buffer,
            0,
            STATS_WORDS as u64 * 4,
            me,
            StatsCopy(step),
        )
    }

    /// A statistics copy made by [`record_stats_copy`](Sim::record_stats_copy) for step `step`
    /// arrived: becomes [`latest_stats`](Sim::latest_stats) unless a newer one already did.
    /// Data of the wrong length is ignored.
    pub fn stats_arrived(&mut self, step: u64, data: &[u8]) {
        if data.len() != STATS_WORDS * 4 {
            return;
        }
        let words: [u32; STATS_WORDS] = bytemuck::pod_read_unaligned(data);
        self.keep_newest(Stats::from_words(&words, step));
    }

    fn keep_newest(&mut self, s: Stats) {
        if self.stats.history.len() == super::STATS_HISTORY {
            self.stats.history.pop_front();
        }
        self.stats.history.push_back((s.step, s.kinetic_energy));
        if self.stats.latest.as_ref().is_none_or(|l| l.step <= s.step) {
            self.stats.latest = Some(s);
        }
    }

    /// Records a copy of the newest state (after this frame's steps; [`state_bytes`] bytes)
    /// into `ring` for `me`, with `payload`, in `encoder` after the frame's compute pass.
    /// Returns false when the ring refused it (busy) or there are no particles.
    ///
    /// [`state_bytes`]: Sim::state_bytes
    pub fn record_state_copy(
        &self,
        device: &wgpu::Device,
        encoder: &mut wgpu::CommandEncoder,
        ring: &mut ReadbackRing,
        me: Consumer,
        payload: impl std::any::Any + Send,
    ) -> bool {
        let size = self.state_bytes();
        size > 0
            && ring.copy_buffer(
                device,
                encoder,
                &self.particles[self.cur],
                0,
                size,
                me,
                payload,
            )
    }

    #[allow(clippy::disallowed_methods)] // a blocking read for tests and tools
    fn read_buffer(&self, gpu: &Gpu, buffer: &wgpu::Buffer, size: u64) -> Vec<u8> {
        gpu.read_buffer_blocking(buffer, 0, size)
            .unwrap_or_else(|e| {
                log::error!("particles: readback failed: {e}");
                Vec::new()
            })
    }

    /// Reads the newest state back (blocking; tests and tools only, never in the frame loop).
    pub fn read_state(&self, gpu: &Gpu) -> Vec<Particle> {
        let size = self.consts.count as u64 * std::mem::size_of::<Particle>() as u64;
        bytemuck::pod_collect_to_vec(&self.read_buffer(gpu, &self.particles[self.cur], size))
    }

    /// Reads the previous state (before the last step) back (blocking; tests only).
    pub fn read_previous_state(&self, gpu: &Gpu) -> Vec<Particle> {
        let size = self.consts.count as u64 * std::mem::size_of::<Particle>() as u64;
        bytemuck::pod_collect_to_vec(&self.read_buffer(gpu, &self.particles[self.cur ^ 1], size))
    }

    /// Reads the neighbour sums of the last step back (blocking; tests only; empty in free mode).
    pub fn read_sums(&self, gpu: &Gpu) -> Vec<Neighbours> {
        if self.mode == Mode::Free {
            return Vec::new();
        }
        let size = self.consts.count as u64 * std::mem::size_of::<Neighbours>() as u64;
        bytemuck::pod_collect_to_vec(&self.read_buffer(gpu, &self.sums, size))
    }

    /// Reads the grid's cell starts (exclusive scan of the last step's histogram, C + 1 words)
    /// back (blocking; tests only; empty unless grid mode).
    pub fn read_cell_starts(&self, gpu: &Gpu) -> Vec<u32> {
        match &self.grid {
            Some(g) => {
                let size = (self.consts.dims[3] as u64 + 1) * 4;
                bytemuck::pod_collect_to_vec(&self.read_buffer(gpu, &g.counts, size))
            }
            None => Vec::new(),
        }
    }

    /// Reads the statistics buffer of the last reduction back (blocking; tests only).
    pub fn read_stats_blocking(&self, gpu: &Gpu) -> Stats {
        let bytes = self.read_buffer(gpu, &self.stats.buffer, STATS_WORDS as u64 * 4);
        let mut w = [0u32; STATS_WORDS];
        if bytes.len() == STATS_WORDS * 4 {
            w = bytemuck::pod_read_unaligned(&bytes);
        }
        Stats::from_words(&w, self.steps_total)
    }
}

/// Exclusive prefix sum of `values` on the GPU with the same two shaders and levels the grid
/// uses (blocking; for tests of the multi-level scan).
#[allow(clippy::disallowed_methods)] // a blocking test helper with its own submit
pub fn gpu_exclusive_scan(gpu: &Gpu, values: &[u32]) -> Vec<u32> {
    let device = &gpu.device;
    let levels = scan_levels(values.len() as u32);
    let data = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("particles:scan_test:data"),
        contents: bytemuck::cast_slice(if values.is_empty() { &[0u32] } else { values }),
        usage: wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::COPY_SRC
            | wgpu::BufferUsages::COPY_DST,
    });
    let entries = [
        layout::uniform(0, COMPUTE, Some(16)),
        layout::storage(1, COMPUTE, false),
        layout::storage(2, COMPUTE, false),
    ];
    let (scan_p, scan_l) = layout::compute_pipeline(
        device,
        "particles:scan_test:blocks",
        &shaders::PARTICLES_SCAN_BLOCKS,
        &entries,
    );
    let (add_p, add_l) = layout::compute_pipeline(
        device,
        "particles:scan_test:add",
        &shaders::PARTICLES_SCAN_ADD,
        &entries,
    );
    let bufs: Vec<wgpu::Buffer> = levels
        .iter()
        .skip(1)
        .map(|&l| storage_buffer(device, "particles:scan_test:level", l as u64 * 4))
        .collect();
    let mut groups = Vec::new();
    let mut keep = Vec::new();
    for k in 0..levels.len() - 1 {
        let d = if k == 0 { &data } else { &bufs[k - 1] };
        let p = small_uniform(device, "particles:scan_test:params", [levels[k], 0, 0, 0]);
        let res = [
            p.as_entire_binding(),
            d.as_entire_binding(),
            bufs[k].as_entire_binding(),
        ];
        groups.push((
            levels[k],
            layout::bind_group(device, "particles:scan_test:g", &scan_l, &res),
            layout::bind_group(device, "particles:scan_test:a", &add_l, &res),
        ));
        keep.push(p);
    }
    let mut enc = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
        label: Some("particles:scan_test"),
    });
    {
        let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("particles:scan_test"),
            timestamp_writes: None,
        });
        pass.set_pipeline(&scan_p);
        for (len, g, _) in &groups {
            let (x, y) = fold(len.div_ceil(SCAN_BLOCK));
            pass.set_bind_group(0, g, &[]);
            pass.dispatch_workgroups(x, y, 1);
        }
        pass.set_pipeline(&add_p);
        for (len, _, a) in groups.iter().rev().skip(1) {
            let (x, y) = fold(len.div_ceil(256));
            pass.set_bind_group(0, a, &[]);
            pass.dispatch_workgroups(x, y, 1);
        }
    }
    let size = values.len() as u64 * 4;
    if size == 0 {
        return Vec::new();
    }
    gpu.queue.submit([enc.finish()]);
    match gpu.read_buffer_blocking(&data, 0, size) {
        Ok(b) => bytemuck::pod_collect_to_vec(&b),
        Err(_) => Vec::new(),
    }
}
