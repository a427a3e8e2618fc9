//! The GPU copy of one series ([`SeriesMirror`]): values, valid-count prefix and min/max
//! pyramid kept in step with the store, the per-view column bounds, the M4 pass and its draw
//! records, and the blocking GPU M4 for tests and tools ([`decimate_gpu`]).

use super::{BRANCH, MIN_CAPACITY, PARAM_STRIDE, buffer, draw_group, fold_groups, layout_levels};
use super::{BuildParams, GpuM4Error, M4Params, MAX_LEVELS, NONE, Pipelines, ViewUniform};
use crate::gpu::Gpu;
use crate::gpu::frame::{GpuFrame, OwnedFrame};
use crate::series::decimate::{Column, column_of};
use crate::series::store::Series;
/// The GPU copy of one series (values, valid-count prefix, min/max pyramid) plus its per-view
/// buffers (column bounds, M4 output, draw records).
pub struct SeriesMirror {
    capacity: u64,
    /// Global index of mirror position 0.
    base: u64,
    /// Samples in the mirror.
    len: u64,
    valid_total: u32,
    levels: u32,
    offsets: [u32; MAX_LEVELS],
    values: wgpu::Buffer,
    prefix: wgpu::Buffer,
    pyramid: wgpu::Buffer,
    build_params: wgpu::Buffer,
    build_bg: wgpu::BindGroup,
    /// Per-level node ranges to build at the next encode.
    pending: Vec<(u32, u32, u32)>,
    columns_cap: u32,
    columns: u32,
    bounds: wgpu::Buffer,
    m4_params: wgpu::Buffer,
    out_columns: wgpu::Buffer,
    out_spans: wgpu::Buffer,
    out_conns: wgpu::Buffer,
    m4_bg: Option<wgpu::BindGroup>,
    view: wgpu::Buffer,
    spans_bg: Option<wgpu::BindGroup>,
    conns_bg: Option<wgpu::BindGroup>,
    scratch: Vec<u32>,
    bounds_host: Vec<u32>,
    /// Bytes written to the GPU by the last [`sync`](SeriesMirror::sync).
    pub uploaded_bytes: u64,
}

impl SeriesMirror {
    /// An empty mirror.
    pub fn new(device: &wgpu::Device, pipes: &Pipelines) -> SeriesMirror {
        let storage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST;
        let out = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC;
        let build_params = buffer(
            device,
            "timeseries:pyramid_build:params",
            PARAM_STRIDE * MAX_LEVELS as u64,
            wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
        );
        let (values, prefix, pyramid, build_bg) =
            Self::make_store(device, pipes, &build_params, MIN_CAPACITY);
        let (levels, offsets, _) = layout_levels(MIN_CAPACITY);
        SeriesMirror {
            capacity: MIN_CAPACITY,
            base: 0,
            len: 0,
            valid_total: 0,
            levels,
            offsets,
            values,
            prefix,
            pyramid,
            build_params,
            build_bg,
            pending: Vec::new(),
            columns_cap: 0,
            columns: 0,
            bounds: buffer(device, "timeseries:m4:bounds", 16, storage),
            m4_params: buffer(
                device,
                "timeseries:m4:params",
                std::mem::size_of::<M4Params>() as u64,
                wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            ),
            out_columns: buffer(device, "timeseries:m4:columns", 16, out),
            out_spans: buffer(device, "timeseries:m4:spans", 16, out),
            out_conns: buffer(device, "timeseries:m4:connectors", 16, out),
            m4_bg: None,
            view: buffer(
                device,
                "timeseries:draw:view",
                std::mem::size_of::<ViewUniform>() as u64,
                wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            ),
            spans_bg: None,
            conns_bg: None,
            scratch: Vec::new(),
            bounds_host: Vec::new(),
            uploaded_bytes: 0,
        }
    }

    fn make_store(
        device: &wgpu::Device,
        pipes: &Pipelines,
        params: &wgpu::Buffer,
        capacity: u64,
    ) -> (wgpu::Buffer, wgpu::Buffer, wgpu::Buffer, wgpu::BindGroup) {
        let usage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST;
        // Rounded up to 16 bytes: the pyramid build reads the values as vec4<u32>.
        let values = buffer(
            device,
            "timeseries:mirror:values",
            (capacity * 4).next_multiple_of(16),
            usage,
        );
        let prefix = buffer(
            device,
            "timeseries:mirror:valid_prefix",
            capacity * 4,
            usage,
        );
        let (_, _, nodes) = layout_levels(capacity);
        let pyramid = buffer(device, "timeseries:mirror:pyramid", nodes * 8, usage);
        let build_bg = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("timeseries:pyramid_build:bind_group"),
            layout: &pipes.build_bgl,
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                        buffer: params,
                        offset: 0,
                        size: wgpu::BufferSize::new(std::mem::size_of::<BuildParams>() as u64),
                    }),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: values.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 2,
                    resource: pyramid.as_entire_binding(),
                },
            ],
        });
        (values, prefix, pyramid, build_bg)
    }

    /// Samples held on the GPU.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// `true` when no sample is held.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// GPU bytes held by the mirror (values, prefix, pyramid).
    pub fn gpu_bytes(&self) -> u64 {
        self.values.size() + self.prefix.size() + self.pyramid.size()
    }

    /// Brings the mirror up to date with `series`: appends new samples (values and valid-count
    /// prefix through the frame's uploader) and queues the pyramid nodes they complete; rebuilds from the
    /// stored samples when the mirror is full (growing it by doubling up to the storage limit) or
    /// the series was cleared. The queued builds run in the next [`encode`](SeriesMirror::encode).
    pub fn sync(
        &mut self,
        gpu: &mut GpuFrame<'_>,
        pipes: &Pipelines,
        series: &Series,
    ) -> Result<(), GpuM4Error> {
        self.uploaded_bytes = 0;
        let (first, end) = (series.first_index(), series.end_index());
        let stored = end - first;
        if stored > pipes.max_samples {
            return Err(GpuM4Error::TooLarge {
                name: series.name.clone(),
                len: stored,
                max: pipes.max_samples,
            });
        }
        let rebuild = first > self.base + self.len
            || end - self.base > self.capacity
            || end < self.base + self.len;
        if rebuild {
            let mut cap = self.capacity;
            while cap < stored + stored / 4 && cap < pipes.max_samples {
                cap *= 2;
            }
            let cap = cap.min(pipes.max_samples).max(stored);
            if cap != self.capacity {
                let (v, p, y, bg) = Self::make_store(gpu.device(), pipes, &self.build_params, cap);
                self.values = v;
                self.prefix = p;
                self.pyramid = y;
                self.build_bg = bg;
                self.capacity = cap;
                let (levels, offsets, _) = layout_levels(cap);
                self.levels = levels;
                self.offsets = offsets;
                self.m4_bg = None;
            }
            self.base = first;
            self.len = 0;
            self.valid_total = 0;
            self.pending.clear();
        }
        let old_len = self.len;
        let from = self.base + self.len;
        for (g, vals) in series.values_from(from) {
            let at = (g - self.base) * 4;
            gpu.write_slice(&self.values, at, vals);
            self.scratch.clear();
            let mut run = self.valid_total;
            for v in vals {
                run += u32::from(!v.is_nan());
                self.scratch.push(run);
            }
            self.valid_total = run;
            gpu.write_slice(&self.prefix, at, &self.scratch);
            self.len = g - self.base + vals.len() as u64;
            self.uploaded_bytes += vals.len() as u64 * 8;
        }
        // Pyramid nodes completed by the new samples, merged with builds not yet encoded.
        let mut div = 1u64;
        for level in 1..=self.levels {
            div *= BRANCH;
            let (a, b) = ((old_len / div) as u32, (self.len / div) as u32);
            if b > a {
                match self.pending.iter_mut().find(|p| p.0 == level) {
                    Some(p) => {
                        p.1 = p.1.min(a);
                        p.2 = p.2.max(b);
                    }
                    None => self.pending.push((level, a, b)),
                }
            }
        }
        for &(level, a, b) in &self.pending {
            let l = level as usize;
            let params = BuildParams {
                level,
                src_offset: if l >= 2 { self.offsets[l - 2] } else { 0 },
                dst_offset: self.offsets[l - 1],
                node_start: a,
                node_end: b,
                _pad: [0; 3],
            };
            gpu.write_pod(&self.build_params, (l as u64 - 1) * PARAM_STRIDE, &params);
        }
        Ok(())
    }

    /// Sets the view: `columns` pixel columns over `[r0, r1)` seconds relative to the series
    /// origin; computes each column's sample index range on the CPU (binary search with
    /// [`column_of`]) and uploads it with the draw uniform. Call after [`sync`](Self::sync).
    /// The series must be ordered ([`Series::is_ordered`]).
    #[allow(clippy::too_many_arguments)]
    pub fn set_view(
        &mut self,
        gpu: &mut GpuFrame<'_>,
        pipes: &Pipelines,
        series: &Series,
        r0: f64,
        r1: f64,
        columns: u32,
        view: &ViewUniform,
    ) -> Result<(), GpuM4Error> {
        if !series.is_ordered() {
            return Err(GpuM4Error::Unordered {
                name: series.name.clone(),
            });
        }
        let n = columns as usize;
        self.columns = columns;
        self.bounds_host.clear();
        if n > 0 && r1 > r0 && r0.is_finite() && r1.is_finite() {
            let w = (r1 - r0) / n as f64;
            let rel = |g: u64| (g.clamp(self.base, self.base + self.len) - self.base) as u32;
            self.bounds_host
                .push(rel(series.partition_index(|t| t < r0)));
            for i in 1..n {
                // Column i starts near r0 + i·w: search from there (exact either way).
                let g = series.partition_index_near(
                    |t| t < r0 || column_of(t, r0, w, n) < i,
                    r0 + i as f64 * w,
                );
                self.bounds_host.push(rel(g));
            }
            self.bounds_host
                .push(rel(series.partition_index(|t| t < r1)));
        } else {
            self.bounds_host.resize(n + 1, 0);
        }
        let mut prev = NONE;
        for i in 0..n {
            self.bounds_host.push(prev);
            if self.bounds_host[i + 1] > self.bounds_host[i] {
                prev = i as u32;
            }
        }
        let device = gpu.device();
        if columns > self.columns_cap {
            let cap = columns.next_power_of_two().max(256);
            let s = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST;
            let o = wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::COPY_SRC
                | wgpu::BufferUsages::COPY_DST;
            let c = cap as u64;
            self.bounds = buffer(device, "timeseries:m4:bounds", (2 * c + 1) * 4, s);
            self.out_columns = buffer(device, "timeseries:m4:columns", c * 20, o);
            self.out_spans = buffer(device, "timeseries:m4:spans", c * 12, o);
            self.out_conns = buffer(device, "timeseries:m4:connectors", c * 16, o);
            self.columns_cap = cap;
            self.m4_bg = None;
            self.spans_bg = None;
            self.conns_bg = None;
        }
        gpu.write_slice(&self.bounds, 0, &self.bounds_host);
        let mut offsets = [0u32; 8];
        offsets[..MAX_LEVELS].copy_from_slice(&self.offsets);
        let params = M4Params {
            columns,
            levels: self.levels,
            _pad: [0; 2],
            offsets,
        };
        gpu.write_pod(&self.m4_params, 0, &params);
        gpu.write_pod(&self.view, 0, view);
        if self.m4_bg.is_none() {
            let bufs = [
                &self.m4_params,
                &self.bounds,
                &self.values,
                &self.prefix,
                &self.pyramid,
                &self.out_columns,
                &self.out_spans,
                &self.out_conns,
            ];
            let entries: Vec<_> = bufs
                .iter()
                .enumerate()
                .map(|(i, b)| wgpu::BindGroupEntry {
                    binding: i as u32,
                    resource: b.as_entire_binding(),
                })
                .collect();
            self.m4_bg = Some(device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("timeseries:m4:bind_group"),
                layout: &pipes.m4_bgl,
                entries: &entries,
            }));
        }
        if self.spans_bg.is_none() {
            self.spans_bg = Some(draw_group(
                device,
                pipes,
                &self.view,
                &self.out_spans,
                "spans",
            ));
            self.conns_bg = Some(draw_group(
                device,
                pipes,
                &self.view,
                &self.out_conns,
                "connectors",
            ));
        }
        Ok(())
    }

    /// Records the queued pyramid builds (oldest level first) and the M4 pass of the view.
    pub fn encode(&self, pipes: &Pipelines, pass: &mut wgpu::ComputePass<'_>) {
        self.encode_builds(pipes, pass);
        self.encode_m4(pipes, pass);
    }

    /// Queues a build of every pyramid node over the samples held (as if every sample were new),
    /// for benchmarks of the build pass; returns the bytes that build reads and writes (level 1
    /// reads 4 bytes per sample, every level writes 8 bytes per node and the next reads them).
    pub fn queue_full_build(&mut self, gpu: &mut GpuFrame<'_>) -> u64 {
        self.pending.clear();
        let mut bytes = 0;
        let mut div = 1u64;
        let mut below = self.len * 4;
        for level in 1..=self.levels {
            div *= BRANCH;
            let nodes = self.len / div;
            if nodes == 0 {
                break;
            }
            bytes += below + nodes * 8;
            below = nodes * 8;
            self.pending.push((level, 0, nodes as u32));
            let l = level as usize;
            let params = BuildParams {
                level,
                src_offset: if l >= 2 { self.offsets[l - 2] } else { 0 },
                dst_offset: self.offsets[l - 1],
                node_start: 0,
                node_end: nodes as u32,
                _pad: [0; 3],
            };
            gpu.write_pod(&self.build_params, (l as u64 - 1) * PARAM_STRIDE, &params);
        }
        bytes
    }

    /// Records the queued pyramid builds only (oldest level first).
    pub fn encode_builds(&self, pipes: &Pipelines, pass: &mut wgpu::ComputePass<'_>) {
        if !self.pending.is_empty() {
            pass.set_pipeline(&pipes.build);
            let mut pending = self.pending.clone();
            pending.sort_unstable();
            for (level, a, b) in pending {
                let offset = (level as u64 - 1) * PARAM_STRIDE;
                pass.set_bind_group(0, &self.build_bg, &[offset as u32]);
                let (x, y) = fold_groups((b - a).div_ceil(64));
                pass.dispatch_workgroups(x, y, 1);
            }
        }
    }

    /// Records the M4 pass of the view only.
    pub fn encode_m4(&self, pipes: &Pipelines, pass: &mut wgpu::ComputePass<'_>) {
        if let Some(bg) = &self.m4_bg
            && self.columns > 0
        {
            pass.set_pipeline(&pipes.m4);
            pass.set_bind_group(0, bg, &[]);
            pass.dispatch_workgroups(self.columns.div_ceil(64), 1, 1);
        }
    }

    /// Marks the queued builds as recorded (call once the encoder holding them is submitted).
    pub fn builds_submitted(&mut self) {
        self.pending.clear();
    }

    /// Draws the view's spans and connectors.
    pub fn paint(&self, pipes: &Pipelines, pass: &mut wgpu::RenderPass<'_>) {
        if let (Some(s), Some(c)) = (&self.spans_bg, &self.conns_bg)
            && self.columns > 0
        {
            pass.set_pipeline(&pipes.spans);
            pass.set_bind_group(0, s, &[]);
            pass.draw(0..6, 0..self.columns);
            pass.set_pipeline(&pipes.conns);
            pass.set_bind_group(0, c, &[]);
            pass.draw(0..2, 0..self.columns);
        }
    }

    /// The buffer of M4 columns of the last view (`columns × 20` bytes, [`Column`] layout).
    pub fn columns_buffer(&self) -> &wgpu::Buffer {
        &self.out_columns
    }

    /// Columns of the last view.
    pub fn columns(&self) -> u32 {
        self.columns
    }

    /// Bytes the M4 pass reads for the last view, counted from its index ranges: per column the
    /// bounds, the prefix and end values, and at most 30 nodes per level (an upper bound).
    pub fn m4_bytes_read(&self) -> u64 {
        let n = self.columns as u64;
        n * (12 + 16 + 20 + 12 + 16) + n * 30 * 8 * self.levels as u64
    }
}

/// Runs the GPU M4 of `series` over `[r0, r1)` (relative seconds) into `columns` columns and reads
/// the result back (blocking; tests and tools, not the frame loop).
pub fn decimate_gpu(
    gpu: &Gpu,
    series: &Series,
    r0: f64,
    r1: f64,
    columns: u32,
) -> Result<Vec<Column>, String> {
    let pipes = Pipelines::new(&gpu.device, crate::scene::SCENE_FORMAT);
    let mut m = SeriesMirror::new(&gpu.device, &pipes);
    let mut f = OwnedFrame::new(gpu, crate::gpu::upload::Strategy::WriteBuffer);
    m.sync(&mut f.frame(), &pipes, series)
        .map_err(|e| e.to_string())?;
    m.set_view(
        &mut f.frame(),
        &pipes,
        series,
        r0,
        r1,
        columns,
        &ViewUniform::default(),
    )
    .map_err(|e| e.to_string())?;
    m.run_and_read(&mut f, &pipes)
}

impl SeriesMirror {
    /// Encodes the queued builds and the M4 pass into `f` after its uploads, submits it, then
    /// reads the columns back (blocking; tests and tools, not the frame loop).
    pub fn run_and_read(
        &mut self,
        f: &mut OwnedFrame<'_>,
        pipes: &Pipelines,
    ) -> Result<Vec<Column>, String> {
        let gpu = f.gpu();
        let enc = f.encoder();
        {
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("timeseries:m4:pass"),
                timestamp_writes: None,
            });
            self.encode(pipes, &mut pass);
        }
        f.submit();
        self.builds_submitted();
        let bytes = self.columns as u64 * size_of::<Column>() as u64;
        let data = gpu
            .read_buffer_blocking(&self.out_columns, 0, bytes)
            .map_err(|e| e.to_string())?;
        Ok(bytemuck::pod_collect_to_vec::<u8, Column>(&data))
    }
}
