//! The buffers of the frame's batched passes and draws ([`FrameBuffers`]), grown by doubling,
//! and their bind groups.

use super::super::{Dispatch, DrawArgs, DrawView, Pipelines, ResolveView, buffer, draw_group};
use crate::gpu::layout;

/// The buffers of the frame's batched passes and draws (grown by doubling) and their groups.
pub(super) struct FrameBuffers {
    pub(super) staged: wgpu::Buffer,
    pub(super) jobs: wgpu::Buffer,
    pub(super) params: wgpu::Buffer,
    pub(super) views: wgpu::Buffer,
    pub(super) args: wgpu::Buffer,
    pub(super) out_columns: wgpu::Buffer,
    pub(super) out_spans: wgpu::Buffer,
    pub(super) out_conns: wgpu::Buffer,
    pub(super) view: wgpu::Buffer,
    pub(super) table: wgpu::Buffer,
    /// Per pixel: 0, or 1 + the order of the last series rastered there by the M4 pass.
    pub(super) owner: wgpu::Buffer,
    /// Colour of each series by its order (the resolve's lookup).
    pub(super) colors: wgpu::Buffer,
    pub(super) resolve_view: wgpu::Buffer,
    pub(super) jobs_group: wgpu::BindGroup,
    pub(super) m4_group: wgpu::BindGroup,
    pub(super) spans_group: wgpu::BindGroup,
    pub(super) conns_group: wgpu::BindGroup,
    pub(super) resolve_group: wgpu::BindGroup,
}

/// Bytes each buffer of [`FrameBuffers`] must hold this frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct FrameSizes {
    pub(super) staged: u64,
    pub(super) jobs: u64,
    pub(super) params: u64,
    pub(super) views: u64,
    pub(super) out_columns: u64,
    pub(super) out_spans: u64,
    pub(super) out_conns: u64,
    pub(super) table: u64,
    pub(super) owner: u64,
    pub(super) colors: u64,
}

impl FrameBuffers {
    pub(super) fn new(device: &wgpu::Device, pipes: &Pipelines, s: &FrameSizes) -> FrameBuffers {
        let storage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST;
        let out = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC;
        let uniform = wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST;
        let staged = buffer(device, "timeseries:append:staged", s.staged, storage);
        let jobs = buffer(device, "timeseries:jobs", s.jobs, storage);
        let params = buffer(device, "timeseries:dispatch_params", s.params, uniform);
        let views = buffer(device, "timeseries:m4:views", s.views, storage);
        let args = buffer(
            device,
            "timeseries:draw:indirect_args",
            size_of::<DrawArgs>() as u64,
            wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::INDIRECT
                | wgpu::BufferUsages::COPY_DST,
        );
        let out_columns = buffer(device, "timeseries:m4:columns", s.out_columns, out);
        let out_spans = buffer(device, "timeseries:m4:spans", s.out_spans, out);
        let out_conns = buffer(device, "timeseries:m4:connectors", s.out_conns, out);
        let view = buffer(
            device,
            "timeseries:draw:view",
            std::mem::size_of::<DrawView>() as u64,
            uniform,
        );
        let table = buffer(device, "timeseries:draw:table", s.table, storage);
        let owner = buffer(device, "timeseries:m4:owner", s.owner, storage);
        let colors = buffer(device, "timeseries:resolve:colors", s.colors, storage);
        let resolve_view = buffer(
            device,
            "timeseries:resolve:view",
            size_of::<ResolveView>() as u64,
            uniform,
        );
        let window = wgpu::BindingResource::Buffer(wgpu::BufferBinding {
            buffer: &params,
            offset: 0,
            size: wgpu::BufferSize::new(std::mem::size_of::<Dispatch>() as u64),
        });
        let jobs_group = layout::bind_group(
            device,
            "timeseries:jobs:bind_group",
            &pipes.jobs_bgl,
            &[
                window.clone(),
                jobs.as_entire_binding(),
                staged.as_entire_binding(),
            ],
        );
        let m4_group = layout::bind_group(
            device,
            "timeseries:m4:bind_group",
            &pipes.m4_bgl,
            &[
                window,
                views.as_entire_binding(),
                out_columns.as_entire_binding(),
                out_spans.as_entire_binding(),
                out_conns.as_entire_binding(),
                args.as_entire_binding(),
                owner.as_entire_binding(),
            ],
        );
        let spans_group = draw_group(device, pipes, &view, &table, &out_spans, "spans");
        let conns_group = draw_group(device, pipes, &view, &table, &out_conns, "connectors");
        let resolve_group = layout::buffers_group(
            device,
            "timeseries:resolve:bind_group",
            &pipes.resolve_bgl,
            &[&resolve_view, &owner, &colors],
        );
        FrameBuffers {
            staged,
            jobs,
            params,
            views,
            args,
            out_columns,
            out_spans,
            out_conns,
            view,
            table,
            owner,
            colors,
            resolve_view,
            jobs_group,
            m4_group,
            spans_group,
            conns_group,
            resolve_group,
        }
    }

    /// Whether every buffer holds at least `s`.
    pub(super) fn holds(&self, s: &FrameSizes) -> bool {
        self.staged.size() >= s.staged
            && self.jobs.size() >= s.jobs
            && self.params.size() >= s.params
            && self.views.size() >= s.views
            && self.out_columns.size() >= s.out_columns
            && self.out_spans.size() >= s.out_spans
            && self.out_conns.size() >= s.out_conns
            && self.table.size() >= s.table
            && self.owner.size() >= s.owner
            && self.colors.size() >= s.colors
    }

    pub(super) fn sizes(&self) -> FrameSizes {
        FrameSizes {
            staged: self.staged.size(),
            jobs: self.jobs.size(),
            params: self.params.size(),
            views: self.views.size(),
            out_columns: self.out_columns.size(),
            out_spans: self.out_spans.size(),
            out_conns: self.out_conns.size(),
            table: self.table.size(),
            owner: self.owner.size(),
            colors: self.colors.size(),
        }
    }
}
