//! A frame's steps: uploading their parameters and recording the grid, brute-force, integrate
//! and statistics passes into the frame's compute pass.

use super::cpu::StepParams;
use super::{BRUTE_TILE, PARAM_STRIDE, SCAN_BLOCK, STATS_WG, Sim, dispatch_size, fold};
use crate::gpu::frame::GpuFrame;
use crate::gpu::upload::PingPong;

impl Sim {
    /// Starts a frame of `params.len()` steps (at most [`crate::clock::MAX_STEPS`]): uploads
    /// their parameters into the ping-pong slot of the frame and marks this frame's statistics
    /// reduction for [`record_stats_copy`](Sim::record_stats_copy). Never blocks.
    pub fn begin_frame(&mut self, gpu: &mut GpuFrame<'_>, params: &[StepParams]) {
        let stats = self.stats_due();
        self.begin_frame_with_stats(gpu, params, stats);
    }

    /// Whether the next [`begin_frame`](Sim::begin_frame) runs the statistics reduction
    /// (enabled, and every [`stats_every`](Sim::stats_every)-th frame).
    pub fn stats_due(&self) -> bool {
        self.stats_enabled
            && self
                .frames_begun
                .is_multiple_of(u64::from(self.stats_every))
    }

    /// [`begin_frame`](Sim::begin_frame) with the reduction run (`stats`) or not, whatever the
    /// schedule (a follower reduces after the steps its publisher reduced after).
    pub fn begin_frame_with_stats(
        &mut self,
        gpu: &mut GpuFrame<'_>,
        params: &[StepParams],
        stats: bool,
    ) {
        let params = &params[..params.len().min(crate::clock::MAX_STEPS as usize)];
        let mut bytes = vec![0u8; PARAM_STRIDE as usize * params.len().max(1)];
        for (i, p) in params.iter().enumerate() {
            let at = i * PARAM_STRIDE as usize;
            bytes[at..at + std::mem::size_of::<StepParams>()]
                .copy_from_slice(bytemuck::bytes_of(p));
        }
        self.step_params.write(gpu, &bytes);
        if self.step_params.generation() != self.params_generation {
            self.params_generation = self.step_params.generation();
            self.integrate_groups = Self::integrate_groups(
                gpu.device(),
                &self.integrate_layout,
                &self.consts_buf,
                &self.step_params,
                &self.particles,
                &self.sums,
            );
        }
        self.src_at_frame_start = self.cur;
        self.steps_this_frame = params.len() as u32;
        self.cur ^= (self.steps_this_frame % 2) as usize;
        self.steps_total += self.steps_this_frame as u64;
        // The reduction `encode` records this frame is copied out by record_stats_copy.
        self.stats_now = stats;
        self.frames_begun += 1;
        self.stats.to_copy = self.stats_now.then_some(self.steps_total);
    }

    /// Records this frame's steps (the last one as `last` when given) and the statistics
    /// reduction of the result (when enabled) into `pass`.
    pub fn encode(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        frame: u64,
        last: Option<FusedStep<'_>>,
    ) {
        self.encode_steps(pass, frame, last);
        if self.stats_now {
            self.encode_stats(pass);
        }
    }

    /// Records only this frame's steps. With `last`, the last step's integration runs as that
    /// pipeline (the integrate bindings as group 0, `last.group` as group 1; the renderer's
    /// step + point splat) instead of the plain integrate pipeline.
    pub fn encode_steps(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        frame: u64,
        last: Option<FusedStep<'_>>,
    ) {
        let n = self.consts.count;
        if n == 0 {
            return;
        }
        let slot = PingPong::slot(frame);
        let (x, y) = dispatch_size(n);
        let mut src = self.src_at_frame_start;
        for s in 0..self.steps_this_frame {
            if let Some(g) = &self.grid {
                let c1 = self.consts.dims[3] + 1;
                pass.set_pipeline(&g.clear_pipeline);
                pass.set_bind_group(0, &g.clear_group, &[]);
                let (cx, cy) = dispatch_size(c1);
                pass.dispatch_workgroups(cx, cy, 1);
                pass.set_pipeline(&g.hist_pipeline);
                pass.set_bind_group(0, &g.hist_groups[src], &[]);
                pass.dispatch_workgroups(x, y, 1);
                pass.set_pipeline(&g.scan_pipeline);
                for (len, sg, _) in &g.levels {
                    let (bx, by) = fold(len.div_ceil(SCAN_BLOCK));
                    pass.set_bind_group(0, sg, &[]);
                    pass.dispatch_workgroups(bx, by, 1);
                }
                pass.set_pipeline(&g.add_pipeline);
                for (len, _, ag) in g.levels.iter().rev().skip(1) {
                    let (ax, ay) = fold(len.div_ceil(256));
                    pass.set_bind_group(0, ag, &[]);
                    pass.dispatch_workgroups(ax, ay, 1);
                }
                pass.set_pipeline(&g.scatter_pipeline);
                pass.set_bind_group(0, &g.scatter_groups[src], &[]);
                pass.dispatch_workgroups(x, y, 1);
                pass.set_pipeline(&g.nb_pipeline);
                pass.set_bind_group(0, &g.nb_group, &[]);
                pass.dispatch_workgroups(x, y, 1);
            }
            if let Some((p, groups)) = &self.brute {
                let (bx, by) = fold(n.div_ceil(BRUTE_TILE));
                pass.set_pipeline(p);
                pass.set_bind_group(0, &groups[src], &[]);
                pass.dispatch_workgroups(bx, by, 1);
            }
            match last.filter(|_| s + 1 == self.steps_this_frame) {
                Some(f) => {
                    pass.set_pipeline(f.pipeline);
                    pass.set_bind_group(1, f.group, &[]);
                }
                None => pass.set_pipeline(&self.integrate_pipeline),
            }
            pass.set_bind_group(
                0,
                &self.integrate_groups[slot][src],
                &[(s as u64 * PARAM_STRIDE) as u32],
            );
            pass.dispatch_workgroups(x, y, 1);
            src ^= 1;
        }
    }

    /// Records the statistics reduction of the newest state (clear + reduce).
    pub fn encode_stats(&self, pass: &mut wgpu::ComputePass<'_>) {
        pass.set_pipeline(&self.clear_pipeline);
        pass.set_bind_group(0, &self.stats.clear_group, &[]);
        pass.dispatch_workgroups(1, 1, 1);
        let n = self.consts.count;
        if n == 0 {
            return;
        }
        let (x, y) = fold(n.div_ceil(STATS_WG));
        pass.set_pipeline(&self.stats.reduce_pipeline);
        pass.set_bind_group(0, &self.stats.reduce_groups[self.cur], &[]);
        pass.dispatch_workgroups(x, y, 1);
    }
}

/// A pipeline that replaces the integration of a frame's last step (see
/// [`Sim::encode_steps`]): laid out as [`Sim::integrate_layout`] (group 0) plus `group`
/// (group 1).
#[derive(Clone, Copy)]
pub struct FusedStep<'a> {
    /// The pipeline (entry `main_splat` of integrate.wgsl).
    pub pipeline: &'a wgpu::ComputePipeline,
    /// Its group 1.
    pub group: &'a wgpu::BindGroup,
}
