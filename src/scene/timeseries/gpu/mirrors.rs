//! The GPU copies of every series ([`Mirrors`]): each series' values, valid-count prefix and
//! min/max pyramid kept in step with the store in a block of a page, and the frame's views of
//! them, batched: one upload of the new samples, one append dispatch and one build dispatch per
//! level per page, one M4 dispatch per page, one span draw and one connector draw for all series.
//! Also the blocking GPU M4 for tests and tools ([`decimate_gpu`]).

use super::pool::{Block, Pool};
use super::{
    BRANCH, Dispatch, DrawArgs, DrawView, GpuM4Error, Job, MAX_LEVELS, MIN_CAPACITY, NONE,
    PARAM_STRIDE, Pipelines, RASTER_MIN_RECORDS, Raster, ResolveView, SeriesDraw, Slot,
    ViewUniform, buffer, depth_of, draw_group, fold_groups, layout_levels, m4_flags,
};
use crate::gpu::Gpu;
use crate::gpu::frame::{GpuFrame, OwnedFrame};
use crate::gpu::layout;
use crate::series::decimate::{Column, column_of};
use crate::series::store::Series;

/// Words of a slot's header in the M4 pass's `views` ([`Slot`]; `HEADER` in `m4.wgsl`).
const HEADER: usize = size_of::<Slot>() / 4;

/// Column bounds found by one sweep over the samples in view when there are at most this many
/// per column (else by a search per column).
const SWEEP_PER_COLUMN: u64 = 8;

/// One series on the GPU: its block, what it holds, what is still to copy into place and build.
#[derive(Default)]
struct Mirror {
    block: Option<Block>,
    /// Global index of mirror position 0.
    base: u64,
    /// Samples in the mirror (copied into place, or staged).
    len: u64,
    valid_total: u32,
    levels: u32,
    /// Node offset of each pyramid level from the block's first node.
    offsets: [u32; MAX_LEVELS],
    /// Samples not yet copied into place, as (f32 bits, valid count up to it), from mirror
    /// position `staged_at`.
    staged: Vec<[u32; 2]>,
    staged_at: u64,
    /// Per-level node ranges `(level, first, end)` to build, merged until recorded.
    pending: Vec<(u32, u32, u32)>,
}

impl Mirror {
    /// Gives the mirror a new block of `want` samples from `pool` (its old one, if any,
    /// released) and the pyramid layout of that block.
    fn replace_block(
        &mut self,
        pool: &mut Pool,
        device: &wgpu::Device,
        pipes: &Pipelines,
        want: u64,
    ) {
        if let Some(b) = self.block.take() {
            pool.release(b);
        }
        let b = pool.alloc(device, pipes, want);
        (self.levels, self.offsets) = layout_levels(b.capacity);
        self.block = Some(b);
    }
}

/// A series the frame draws from its mirror.
#[derive(Clone, Copy, Debug)]
struct ViewRequest {
    mirror: usize,
    r0: f64,
    r1: f64,
    color: u32,
    order: u32,
    /// `Some(dt)`: the mirror's sample k is at time k·dt, its samples written on the GPU
    /// ([`Mirrors::hold_gpu_samples`]; no series in the store); `None`: the times of the series.
    spacing: Option<f64>,
}

/// Which compute pass a dispatch runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PassKind {
    Append,
    Build,
    M4,
    M4Raster,
}

/// One dispatch of the frame: its pass, its page, its slot of the dispatch uniform, its threads.
#[derive(Clone, Copy, Debug)]
struct Planned {
    kind: PassKind,
    page: usize,
    param: u32,
    threads: u32,
}

/// The buffers of the frame's batched passes and draws (grown by doubling) and their groups.
struct FrameBuffers {
    staged: wgpu::Buffer,
    jobs: wgpu::Buffer,
    params: wgpu::Buffer,
    views: wgpu::Buffer,
    args: wgpu::Buffer,
    out_columns: wgpu::Buffer,
    out_spans: wgpu::Buffer,
    out_conns: wgpu::Buffer,
    view: wgpu::Buffer,
    table: wgpu::Buffer,
    /// Per pixel: 0, or 1 + the order of the last series rastered there by the M4 pass.
    owner: wgpu::Buffer,
    /// Colour of each series by its order (the resolve's lookup).
    colors: wgpu::Buffer,
    resolve_view: wgpu::Buffer,
    jobs_group: wgpu::BindGroup,
    m4_group: wgpu::BindGroup,
    spans_group: wgpu::BindGroup,
    conns_group: wgpu::BindGroup,
    resolve_group: wgpu::BindGroup,
}

/// Bytes each buffer of [`FrameBuffers`] must hold this frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct FrameSizes {
    staged: u64,
    jobs: u64,
    params: u64,
    views: u64,
    out_columns: u64,
    out_spans: u64,
    out_conns: u64,
    table: u64,
    owner: u64,
    colors: u64,
}

impl FrameBuffers {
    fn new(device: &wgpu::Device, pipes: &Pipelines, s: &FrameSizes) -> FrameBuffers {
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
    fn holds(&self, s: &FrameSizes) -> bool {
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

    fn sizes(&self) -> FrameSizes {
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

/// The GPU copies of every series and the frame's views of them (see the [module](self)).
///
/// A frame: [`sync`](Mirrors::sync) each series (mirror `i` follows series `i`), then
/// [`begin_views`](Mirrors::begin_views) and [`add_view`](Mirrors::add_view) for each series
/// drawn, then [`upload`](Mirrors::upload) (a few writes through the frame's uploader), then
/// [`encode`](Mirrors::encode) in the compute pass and [`paint`](Mirrors::paint) in the render
/// pass; [`builds_submitted`](Mirrors::builds_submitted) once the encoder holding them is
/// submitted.
#[derive(Default)]
pub struct Mirrors {
    pool: Pool,
    mirrors: Vec<Mirror>,
    columns: u32,
    mapping: ViewUniform,
    keep_columns: bool,
    views: Vec<ViewRequest>,
    /// `(mirror, slot)` of each series drawn by the last upload.
    slot_of: Vec<(usize, u32)>,
    staged: Vec<[u32; 2]>,
    jobs: Vec<Job>,
    params: Vec<u8>,
    /// Per slot: its header ([`Slot`]) and column bounds.
    views_words: Vec<u32>,
    /// Pyramid levels of each slot.
    slot_levels: Vec<u32>,
    table: Vec<SeriesDraw>,
    /// Colour of each series drawn by raster, by order.
    colors: Vec<u32>,
    /// Whether this frame's records are compacted and drawn indirect.
    compact: bool,
    /// How this frame's records reach the image.
    raster: Raster,
    /// Scratch: the views in drawing order.
    order: Vec<usize>,
    /// Image height of this frame's views, pixels.
    rows: u32,
    plan: Vec<Planned>,
    by_page: Vec<Vec<usize>>,
    frame: Option<FrameBuffers>,
    /// Samples staged in all mirrors (what the next upload's `staged` holds): at most
    /// [`Pipelines::max_samples`], one storage binding ([`sync`](Mirrors::sync)).
    staged_total: u64,
    /// Bytes of new samples (values and valid counts) staged by the last upload.
    pub uploaded_bytes: u64,
}

impl Mirrors {
    /// No mirror yet.
    pub fn new() -> Mirrors {
        Mirrors::default()
    }

    /// Keeps the M4 columns of the views on the GPU for [`read_columns`](Mirrors::read_columns)
    /// (tests and tools; the chart draws from the spans and connectors only).
    pub fn set_keep_columns(&mut self, keep: bool) {
        self.keep_columns = keep;
    }

    /// Samples mirror `i` holds (uploaded or staged).
    pub fn len(&self, i: usize) -> u64 {
        self.mirrors.get(i).map_or(0, |m| m.len)
    }

    /// Number of mirrors.
    pub fn count(&self) -> usize {
        self.mirrors.len()
    }

    /// GPU bytes held by the mirrors' pages (values, prefix, pyramid).
    pub fn gpu_bytes(&self) -> u64 {
        self.pool.gpu_bytes()
    }

    /// Pages holding mirrors.
    pub fn pages(&self) -> usize {
        (0..self.pool.len())
            .filter(|&p| self.pool.page(p).is_some())
            .count()
    }

    /// Brings mirror `i` up to date with `series`: stages the new samples (values and
    /// valid-count prefix) and queues the pyramid nodes they complete; starts again from the
    /// stored samples in a block of the right size when the block is full (or far too large) or
    /// the series was cleared. What is staged and queued reaches the GPU with the next
    /// [`upload`](Mirrors::upload) and [`encode`](Mirrors::encode).
    ///
    /// Within the adapter's limits, always: a mirror never holds more than
    /// [`Pipelines::max_samples`] (one storage binding of values and valid counts), and it starts
    /// again from at most the newest [`Pipelines::mirror_span`] samples (three quarters of that),
    /// so a series longer than that (a 16 Mi-sample store on lavapipe's 128 MiB bindings) keeps
    /// its newest samples on the GPU with a quarter of a binding to grow into before the next
    /// start-over, rather than starting over every frame once the store is full; views reaching
    /// older samples are refused by [`add_view`](Mirrors::add_view)
    /// ([`GpuM4Error::BeyondMirror`]: the caller draws them with the exact CPU M4). And the
    /// samples staged for one frame (one storage binding, `staged`, for all series) never exceed
    /// [`Pipelines::max_samples`]: a series whose new samples do not fit what the frame has left
    /// is not synced this frame ([`GpuM4Error::Deferred`]; CPU M4 for this frame, its mirror
    /// untouched) and catches up at the next (a frame with nothing staged yet always takes one
    /// series' samples, which fit a binding), as when several series start over together.
    pub fn sync(
        &mut self,
        gpu: &mut GpuFrame<'_>,
        pipes: &Pipelines,
        i: usize,
        series: &Series,
    ) -> Result<(), GpuM4Error> {
        if self.mirrors.len() <= i {
            self.mirrors.resize_with(i + 1, Mirror::default);
        }
        let m = &mut self.mirrors[i];
        let (first, end) = (series.first_index(), series.end_index());
        let stored = end - first;
        let cap = m.block.map_or(0, |b| b.capacity);
        let rebuild = m.block.is_none()
            || first > m.base + m.len
            || end - m.base > cap
            || end < m.base + m.len;
        // Samples this sync stages, and what the frame then holds staged.
        let keep = stored.min(pipes.mirror_span());
        let (adds, staged_after) = if rebuild {
            (keep, self.staged_total - m.staged.len() as u64 + keep)
        } else {
            let adds = end - (m.base + m.len);
            (adds, self.staged_total + adds)
        };
        // Deferred only when other samples are staged: one series' samples fit a binding.
        if adds > 0 && staged_after > pipes.max_samples && staged_after > adds {
            return Err(GpuM4Error::Deferred {
                name: series.name.clone(),
            });
        }
        if rebuild {
            let want = (keep + keep / 4)
                .max(MIN_CAPACITY)
                .next_power_of_two()
                .min(pipes.max_samples);
            if cap < want || cap > 4 * want {
                m.replace_block(&mut self.pool, gpu.device(), pipes, want);
            }
            self.staged_total -= m.staged.len() as u64;
            m.base = end - keep;
            m.len = 0;
            m.valid_total = 0;
            m.pending.clear();
            m.staged.clear();
        }
        let old_len = m.len;
        if m.staged.is_empty() {
            m.staged_at = m.len;
        }
        for (g, vals) in series.values_from(m.base + m.len) {
            let mut run = m.valid_total;
            m.staged.extend(vals.iter().map(|v| {
                run += u32::from(!v.is_nan());
                [v.to_bits(), run]
            }));
            m.valid_total = run;
            m.len = g - m.base + vals.len() as u64;
        }
        self.staged_total += m.len - old_len;
        // Pyramid nodes completed by the new samples, merged with builds not yet recorded.
        let mut div = 1u64;
        for level in 1..=m.levels {
            div *= BRANCH;
            let (a, b) = ((old_len / div) as u32, (m.len / div) as u32);
            if b > a {
                match m.pending.iter_mut().find(|p| p.0 == level) {
                    Some(p) => {
                        p.1 = p.1.min(a);
                        p.2 = p.2.max(b);
                    }
                    None => m.pending.push((level, a, b)),
                }
            }
        }
        Ok(())
    }

    /// Queues a build of every pyramid node over the samples mirror `i` holds (as if every sample
    /// were new), for benchmarks of the build pass; returns the bytes that build reads and writes
    /// (level 1 reads each sample's 8 bytes, value and valid count side by side; every level
    /// writes 8 bytes per node and the next reads them). Takes effect with the next
    /// [`upload`](Mirrors::upload).
    pub fn queue_full_build(&mut self, i: usize) -> u64 {
        let Some(m) = self.mirrors.get_mut(i) else {
            return 0;
        };
        m.pending.clear();
        let mut bytes = 0;
        let mut div = 1u64;
        let mut below = m.len * 8;
        for level in 1..=m.levels {
            div *= BRANCH;
            let nodes = m.len / div;
            if nodes == 0 {
                break;
            }
            bytes += below + nodes * 8;
            below = nodes * 8;
            m.pending.push((level, 0, nodes as u32));
        }
        bytes
    }

    /// Starts the frame's views: `columns` pixel columns per series, values mapped by `mapping`
    /// (its colour is not used: each series has its own).
    pub fn begin_views(&mut self, columns: u32, mapping: &ViewUniform) {
        self.columns = columns;
        self.mapping = *mapping;
        self.views.clear();
    }

    /// Draws series `i` this frame from its mirror over `[r0, r1)` seconds relative to the
    /// series origin, in `color`, as the `order`-th series drawn (a later one covers an earlier
    /// one, [`depth_of`]). Call after [`sync`](Mirrors::sync); the series must be ordered
    /// ([`Series::is_ordered`]) and fit the frame's batch.
    pub fn add_view(
        &mut self,
        pipes: &Pipelines,
        i: usize,
        series: &Series,
        (r0, r1): (f64, f64),
        color: u32,
        order: u32,
    ) -> Result<(), GpuM4Error> {
        let name = || series.name.clone();
        if !series.is_ordered() {
            return Err(GpuM4Error::Unordered { name: name() });
        }
        let Some(m) = self.mirrors.get(i).filter(|m| m.block.is_some()) else {
            return Err(GpuM4Error::NotMirrored { name: name() });
        };
        // The samples in view must all be in the mirror: it holds only the newest samples of a
        // series longer than one binding ([`Mirrors::sync`]), and lags a series deferred.
        let g0 = series.partition_index(|t| t < r0);
        let g1 = series.partition_index(|t| t < r1);
        if g1 > g0 && (g0 < m.base || g1 > m.base + m.len) {
            return Err(GpuM4Error::BeyondMirror {
                name: name(),
                mirrored: m.len,
                stored: series.len() as u64,
            });
        }
        self.push_view(
            pipes,
            name,
            ViewRequest {
                mirror: i,
                r0,
                r1,
                color,
                order,
                spacing: None,
            },
        )
    }

    /// Adds `view` to the frame's batch, or [`GpuM4Error::BatchFull`] (named `name()`) when
    /// every buffer of the batch would no longer fit one storage binding (connectors: 16 bytes a
    /// column).
    fn push_view(
        &mut self,
        pipes: &Pipelines,
        name: impl FnOnce() -> String,
        view: ViewRequest,
    ) -> Result<(), GpuM4Error> {
        let records = (self.views.len() as u64 + 1) * self.columns as u64;
        if records * 20 > pipes.max_binding {
            return Err(GpuM4Error::BatchFull {
                name: name(),
                max: self.views.len(),
            });
        }
        self.views.push(view);
        Ok(())
    }

    /// Mirror `i` holds `samples` samples written on the GPU by another pass (the `--share`
    /// window, [`super::window`]), sample k at mirror position k: gives it a block of at least
    /// that many (kept while the count stays), with nothing staged. Call
    /// [`queue_full_build`](Mirrors::queue_full_build) once new values are written, so the pyramid
    /// is built over them in the frame's compute pass (after the pass that writes them).
    ///
    /// # Errors
    ///
    /// [`GpuM4Error::TooLong`] when `samples` exceeds [`Pipelines::max_samples`] (one storage
    /// binding) or is 0.
    pub fn hold_gpu_samples(
        &mut self,
        device: &wgpu::Device,
        pipes: &Pipelines,
        i: usize,
        samples: u64,
    ) -> Result<(), GpuM4Error> {
        if samples == 0 || samples > pipes.max_samples {
            return Err(GpuM4Error::TooLong {
                samples,
                max: pipes.max_samples,
            });
        }
        if self.mirrors.len() <= i {
            self.mirrors.resize_with(i + 1, Mirror::default);
        }
        let m = &mut self.mirrors[i];
        let want = samples.max(MIN_CAPACITY).next_power_of_two();
        if m.block.is_none_or(|b| b.capacity != want) {
            m.replace_block(&mut self.pool, device, pipes, want);
        }
        self.staged_total -= m.staged.len() as u64;
        m.staged.clear();
        m.base = 0;
        m.len = samples;
        m.staged_at = samples;
        m.valid_total = 0;
        Ok(())
    }

    /// Mirror `i`'s block: its page and the sample where it starts in the page.
    pub(super) fn block_of(&self, i: usize) -> Option<(usize, u64)> {
        let b = self.mirrors.get(i)?.block?;
        Some((b.page, b.offset))
    }

    /// The bind group of page `page` (group 1 of the compute passes).
    pub(super) fn page_group(&self, page: usize) -> Option<&wgpu::BindGroup> {
        self.pool.page(page).map(|p| &p.group)
    }

    /// Draws mirror `i` (held by [`hold_gpu_samples`](Mirrors::hold_gpu_samples): sample k at
    /// time k·`dt` seconds) this frame over `[r0, r1)` seconds, in `color`, as the `order`-th
    /// series drawn. The column bounds come from those times alone: the same columns as the CPU
    /// M4 of a series of those samples at those times.
    ///
    /// # Errors
    ///
    /// [`GpuM4Error::NotMirrored`] (named `name`) when the mirror holds nothing,
    /// [`GpuM4Error::BatchFull`] when the frame's batch is full.
    #[allow(clippy::too_many_arguments)]
    pub fn add_uniform_view(
        &mut self,
        pipes: &Pipelines,
        i: usize,
        name: &str,
        dt: f64,
        (r0, r1): (f64, f64),
        color: u32,
        order: u32,
    ) -> Result<(), GpuM4Error> {
        if self.mirrors.get(i).is_none_or(|m| m.block.is_none()) {
            return Err(GpuM4Error::NotMirrored {
                name: name.to_string(),
            });
        }
        self.push_view(
            pipes,
            || name.to_string(),
            ViewRequest {
                mirror: i,
                r0,
                r1,
                color,
                order,
                spacing: Some(dt),
            },
        )
    }

    /// Writes the frame's batch through the frame's uploader: the staged samples, the jobs of the
    /// append and build passes, the dispatch parameters, the M4 slots with each view's column
    /// bounds (found here, from `series[i]` for mirror `i`), the draw table and uniform; grows
    /// the frame's buffers as needed.
    pub fn upload(&mut self, gpu: &mut GpuFrame<'_>, pipes: &Pipelines, series: &[Series]) {
        self.staged.clear();
        self.jobs.clear();
        self.params.clear();
        self.views_words.clear();
        self.slot_levels.clear();
        self.table.clear();
        self.colors.clear();
        self.compact = pipes.compact;
        self.rows = self.mapping.height as u32;
        // The adapter's choice, for frames with enough columns of series to pay for the resolve
        // (and only with compaction: the raster pass appends the connectors it leaves).
        let records = self.views.len() as u64 * self.columns as u64;
        // The owner image (4 bytes a pixel) must fit one storage binding too.
        let owner = self.columns as u64 * self.rows as u64 * 4;
        self.raster =
            if pipes.compact && records >= RASTER_MIN_RECORDS && owner <= pipes.max_binding {
                pipes.raster
            } else {
                Raster::Draws
            };
        self.plan.clear();
        self.slot_of.clear();
        self.uploaded_bytes = 0;
        let pages = self.pool.len();
        self.by_page.resize_with(pages, Vec::new);
        self.by_page.iter_mut().for_each(Vec::clear);
        for (i, m) in self.mirrors.iter().enumerate() {
            if let Some(b) = m.block {
                self.by_page[b.page].push(i);
            }
        }
        // The new samples, page by page: one job per mirror.
        for page in 0..pages {
            let first = self.jobs.len() as u32;
            let mut total = 0u32;
            for &i in &self.by_page[page] {
                let m = &self.mirrors[i];
                let Some(b) = m.block.filter(|_| !m.staged.is_empty()) else {
                    continue;
                };
                self.jobs.push(Job {
                    src: self.staged.len() as u32,
                    dst: (b.offset + m.staged_at) as u32,
                    start: total,
                    count: m.staged.len() as u32,
                });
                self.staged.extend_from_slice(&m.staged);
                total += m.staged.len() as u32;
            }
            let d = self.jobs_dispatch(first, total, 0);
            self.plan_dispatch(PassKind::Append, page, d);
        }
        self.uploaded_bytes = self.staged.len() as u64 * 8;
        // The pyramid builds, level by level (a level reads the one below), page by page.
        for level in 1..=MAX_LEVELS as u32 {
            for page in 0..pages {
                let first = self.jobs.len() as u32;
                let mut total = 0u32;
                for &i in &self.by_page[page] {
                    let m = &self.mirrors[i];
                    let Some(b) = m.block else {
                        continue;
                    };
                    let nodes = b.nodes_at() as u32;
                    for &(_, a, e) in m.pending.iter().filter(|p| p.0 == level) {
                        let l = level as usize;
                        let src = if l == 1 {
                            b.offset as u32 + a * 16
                        } else {
                            nodes + m.offsets[l - 2] + a * 16
                        };
                        self.jobs.push(Job {
                            src,
                            dst: nodes + m.offsets[l - 1] + a,
                            start: total,
                            count: e - a,
                        });
                        total += e - a;
                    }
                }
                let d = self.jobs_dispatch(first, total, level);
                self.plan_dispatch(PassKind::Build, page, d);
            }
        }
        // The views, page by page: a slot each, with its header, column bounds and draw entry.
        let columns = self.columns;
        let stride = HEADER + 2 * columns as usize + 1;
        // Within a page in drawing order: the raster pass walks them in that order.
        self.order.clear();
        self.order.extend(0..self.views.len());
        let views = &self.views;
        self.order.sort_by_key(|&k| views[k].order);
        // Bounds of the last uniform view (views of the same samples, spacing and range share
        // them): its key and where its bounds start in `views_words`.
        let mut uniform_done: Option<((u64, u64, u64, u64), usize)> = None;
        for page in 0..pages {
            let first = self.slot_levels.len() as u32;
            for n in 0..self.order.len() {
                let v = self.views[self.order[n]];
                let m = &self.mirrors[v.mirror];
                let Some(b) = m.block.filter(|b| b.page == page) else {
                    continue;
                };
                let s = series.get(v.mirror);
                if s.is_none() && v.spacing.is_none() {
                    continue;
                }
                let slot = self.slot_levels.len() as u32;
                let header = Slot {
                    values_at: b.offset as u32,
                    levels: m.levels,
                    order: v.order,
                    capacity: b.capacity as u32,
                };
                self.slot_levels.push(m.levels);
                let o = v.order as usize;
                if self.colors.len() <= o {
                    self.colors.resize(o + 1, 0);
                }
                self.colors[o] = v.color;
                self.table.push(SeriesDraw {
                    color: v.color,
                    depth: depth_of(v.order),
                    _pad: [0; 2],
                });
                let at = self.views_words.len();
                self.views_words
                    .extend_from_slice(bytemuck::cast_slice(&[header]));
                self.views_words.resize(at + stride, 0);
                match (v.spacing, s) {
                    (Some(dt), _) => {
                        let key = (m.len, dt.to_bits(), v.r0.to_bits(), v.r1.to_bits());
                        match uniform_done {
                            Some((k, from)) if k == key => {
                                self.views_words
                                    .copy_within(from..from + stride - HEADER, at + HEADER);
                            }
                            _ => {
                                uniform_bounds(
                                    m.len,
                                    dt,
                                    v.r0,
                                    v.r1,
                                    columns as usize,
                                    &mut self.views_words[at + HEADER..],
                                );
                                uniform_done = Some((key, at + HEADER));
                            }
                        }
                    }
                    (None, Some(s)) => column_bounds(
                        s,
                        m.base,
                        m.len,
                        v.r0,
                        v.r1,
                        columns as usize,
                        &mut self.views_words[at + HEADER..],
                    ),
                    (None, None) => {}
                }
                self.slot_of.push((v.mirror, slot));
            }
            let count = self.slot_levels.len() as u32 - first;
            let mut flags = 0;
            if self.keep_columns {
                flags |= m4_flags::KEEP_COLUMNS;
            }
            if self.compact {
                flags |= m4_flags::COMPACT;
            }
            if self.raster == Raster::Compute {
                flags |= m4_flags::RASTER_LINES;
            }
            // The raster pass: a thread per pixel column; the record pass: per column of a series.
            let (kind, total) = match (self.raster, count) {
                (_, 0) => (PassKind::M4, 0),
                (Raster::Draws, _) => (PassKind::M4, count * columns),
                _ => (PassKind::M4Raster, columns),
            };
            let d = Dispatch {
                first,
                count,
                total,
                columns,
                flags,
                rows: self.rows,
                a: self.mapping.a,
                b: self.mapping.b,
                ..Dispatch::default()
            };
            self.plan_dispatch(kind, page, d);
        }
        self.write(gpu, pipes);
    }

    /// Adds a dispatch of `d.total` threads (none when 0) with its parameters.
    fn plan_dispatch(&mut self, kind: PassKind, page: usize, d: Dispatch) {
        if d.total == 0 {
            return;
        }
        let param = (self.params.len() as u64 / PARAM_STRIDE) as u32;
        self.params.extend_from_slice(bytemuck::bytes_of(&d));
        self.params.resize(
            self.params.len() + PARAM_STRIDE as usize - size_of::<Dispatch>(),
            0,
        );
        self.plan.push(Planned {
            kind,
            page,
            param,
            threads: d.total,
        });
    }

    /// The parameters of a dispatch over jobs `first..` of this frame (appends, builds).
    fn jobs_dispatch(&self, first: u32, total: u32, level: u32) -> Dispatch {
        Dispatch {
            first,
            count: self.jobs.len() as u32 - first,
            total,
            level,
            ..Dispatch::default()
        }
    }

    /// Grows the frame's buffers as needed and writes this frame's contents.
    fn write(&mut self, gpu: &mut GpuFrame<'_>, pipes: &Pipelines) {
        let records = self.slot_levels.len() as u64 * self.columns as u64;
        let need = FrameSizes {
            staged: self.staged.len() as u64 * 8,
            jobs: self.jobs.len() as u64 * 16,
            params: self.params.len() as u64,
            views: self.views_words.len() as u64 * 4,
            out_columns: if self.keep_columns { records * 20 } else { 0 },
            out_spans: records * 16,
            out_conns: records * 20,
            table: self.table.len() as u64 * 16,
            owner: if self.raster != Raster::Draws {
                self.columns as u64 * self.rows as u64 * 4
            } else {
                0
            },
            colors: self.colors.len() as u64 * 4,
        };
        if self.frame.as_ref().is_none_or(|f| !f.holds(&need)) {
            let have = self
                .frame
                .as_ref()
                .map(FrameBuffers::sizes)
                .unwrap_or_default();
            // Never below 256 bytes: a binding holds at least one record of any type. Never past
            // one binding (where the limit is no power of two) unless the need is, which `sync`
            // and `add_view` rule out.
            let limit = pipes.max_binding & !15;
            let grow = |need: u64, have: u64| {
                need.next_power_of_two()
                    .max(have)
                    .max(256)
                    .min(limit.max(need))
            };
            let sizes = FrameSizes {
                staged: grow(need.staged, have.staged),
                jobs: grow(need.jobs, have.jobs),
                params: grow(need.params, have.params),
                views: grow(need.views, have.views),
                out_columns: grow(need.out_columns, have.out_columns),
                out_spans: grow(need.out_spans, have.out_spans),
                out_conns: grow(need.out_conns, have.out_conns),
                table: grow(need.table, have.table),
                owner: grow(need.owner, have.owner),
                colors: grow(need.colors, have.colors),
            };
            self.frame = Some(FrameBuffers::new(gpu.device(), pipes, &sizes));
        }
        let Some(f) = &self.frame else {
            return;
        };
        if !self.staged.is_empty() {
            gpu.write_slice(&f.staged, 0, &self.staged);
        }
        if !self.jobs.is_empty() {
            gpu.write_slice(&f.jobs, 0, &self.jobs);
        }
        if !self.params.is_empty() {
            gpu.write(&f.params, 0, &self.params);
        }
        if !self.table.is_empty() {
            gpu.write_slice(&f.views, 0, &self.views_words);
            gpu.write_slice(&f.table, 0, &self.table);
            gpu.write_pod(&f.args, 0, &DrawArgs::EMPTY);
            if self.raster != Raster::Draws {
                gpu.write_slice(&f.colors, 0, &self.colors);
                let size = ResolveView {
                    width: self.columns,
                    height: self.rows,
                    _pad: [0; 2],
                };
                gpu.write_pod(&f.resolve_view, 0, &size);
                let bytes = self.columns as u64 * self.rows as u64 * 4;
                gpu.encoder().clear_buffer(&f.owner, 0, Some(bytes));
            }
        }
        gpu.write_pod(&f.view, 0, &self.mapping.draw());
    }

    /// Records the frame's dispatches: the appends, the pyramid builds (oldest level first) and
    /// the M4 pass of every view.
    pub fn encode(&self, pipes: &Pipelines, pass: &mut wgpu::ComputePass<'_>) {
        self.encode_kinds(
            pipes,
            pass,
            &[
                PassKind::Append,
                PassKind::Build,
                PassKind::M4,
                PassKind::M4Raster,
            ],
        );
    }

    /// Records the appends and pyramid builds only.
    pub fn encode_builds(&self, pipes: &Pipelines, pass: &mut wgpu::ComputePass<'_>) {
        self.encode_kinds(pipes, pass, &[PassKind::Append, PassKind::Build]);
    }

    /// Records the M4 pass of the views only.
    pub fn encode_m4(&self, pipes: &Pipelines, pass: &mut wgpu::ComputePass<'_>) {
        self.encode_kinds(pipes, pass, &[PassKind::M4, PassKind::M4Raster]);
    }

    fn encode_kinds(
        &self,
        pipes: &Pipelines,
        pass: &mut wgpu::ComputePass<'_>,
        kinds: &[PassKind],
    ) {
        let Some(f) = &self.frame else {
            return;
        };
        for p in self.plan.iter().filter(|p| kinds.contains(&p.kind)) {
            let Some(page) = self.pool.page(p.page) else {
                continue;
            };
            let (pipeline, group) = match p.kind {
                PassKind::Append => (&pipes.append, &f.jobs_group),
                PassKind::Build => (&pipes.build, &f.jobs_group),
                PassKind::M4 => (&pipes.m4, &f.m4_group),
                PassKind::M4Raster => (&pipes.m4_raster, &f.m4_group),
            };
            pass.set_pipeline(pipeline);
            pass.set_bind_group(0, group, &[p.param * PARAM_STRIDE as u32]);
            pass.set_bind_group(1, &page.group, &[]);
            let (x, y) = fold_groups(p.threads.div_ceil(64));
            pass.dispatch_workgroups(x, y, 1);
        }
    }

    /// Marks the staged samples and queued builds as recorded (call once the encoder holding
    /// them is submitted).
    pub fn builds_submitted(&mut self) {
        self.staged_total = 0;
        for m in &mut self.mirrors {
            m.staged.clear();
            if m.staged.capacity() > 1 << 16 {
                m.staged.shrink_to(1 << 16);
            }
            m.staged_at = m.len;
            m.pending.clear();
        }
        self.plan
            .retain(|p| matches!(p.kind, PassKind::M4 | PassKind::M4Raster));
    }

    /// Draws the frame's records: every view's spans, then every view's connectors (indirect
    /// when the records are compacted); when the M4 pass rastered some of them, first the
    /// resolve of its image into colour and depth. The depth test keeps the series' order.
    pub fn paint(&self, pipes: &Pipelines, pass: &mut wgpu::RenderPass<'_>) {
        let Some(f) = &self.frame else {
            return;
        };
        let records = self.slot_of.len() as u64 * self.columns as u64;
        if records == 0 {
            return;
        }
        if self.raster != Raster::Draws {
            pass.set_pipeline(&pipes.resolve);
            pass.set_bind_group(0, &f.resolve_group, &[]);
            pass.draw(0..3, 0..1);
        } else {
            pass.set_pipeline(&pipes.spans);
            pass.set_bind_group(0, &f.spans_group, &[]);
            if self.compact {
                pass.draw_indirect(&f.args, 0);
            } else if let Ok(n) = u32::try_from(records * 6) {
                pass.draw(0..n, 0..1);
            }
        }
        pass.set_pipeline(&pipes.conns);
        pass.set_bind_group(0, &f.conns_group, &[]);
        if self.compact {
            pass.draw_indirect(&f.args, 16);
        } else if let Ok(n) = u32::try_from(records * 2) {
            pass.draw(0..n, 0..1);
        }
    }

    /// Series drawn from their mirrors by the last upload.
    pub fn views(&self) -> usize {
        self.slot_of.len()
    }

    /// Columns per series of the last upload.
    pub fn columns(&self) -> u32 {
        self.columns
    }

    /// Bytes the M4 pass reads for the last upload's views, counted from their index ranges: per
    /// column the bounds, the prefix and end values, and at most 30 nodes per level (an upper
    /// bound).
    pub fn m4_bytes_read(&self) -> u64 {
        let n = self.columns as u64;
        self.slot_levels
            .iter()
            .map(|&levels| n * (12 + 16 + 20 + 12 + 16) + n * 30 * 8 * levels as u64)
            .sum()
    }

    /// The M4 columns of mirror `i` from the last frame run (blocking; tests and tools, with
    /// [`set_keep_columns`](Mirrors::set_keep_columns) on).
    pub fn read_columns(&self, gpu: &Gpu, i: usize) -> Result<Vec<Column>, String> {
        let Some(&(_, slot)) = self.slot_of.iter().find(|s| s.0 == i) else {
            return Err(format!("mirror {i} is not drawn"));
        };
        let Some(f) = self.frame.as_ref().filter(|_| self.keep_columns) else {
            return Err("columns are not kept".to_string());
        };
        let row = self.columns as u64 * size_of::<Column>() as u64;
        let data = gpu
            .read_buffer_blocking(&f.out_columns, slot as u64 * row, row)
            .map_err(|e| e.to_string())?;
        Ok(bytemuck::pod_collect_to_vec::<u8, Column>(&data))
    }

    /// Encodes the frame's passes into `f` after its uploads, submits it, marks the builds
    /// recorded, then reads mirror `i`'s columns back (blocking; tests and tools).
    pub fn run_and_read(
        &mut self,
        f: &mut OwnedFrame<'_>,
        pipes: &Pipelines,
        i: usize,
    ) -> Result<Vec<Column>, String> {
        self.run(f, pipes);
        self.read_columns(f.gpu(), i)
    }

    /// Encodes the frame's passes into `f` after its uploads, submits it and marks the builds
    /// recorded (tests and tools).
    pub fn run(&mut self, f: &mut OwnedFrame<'_>, pipes: &Pipelines) {
        {
            let mut pass = f
                .encoder()
                .begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some("timeseries:m4:pass"),
                    timestamp_writes: None,
                });
            self.encode(pipes, &mut pass);
        }
        f.submit();
        self.builds_submitted();
    }
}

/// The column bounds of a view of `columns` columns over `[r0, r1)` (seconds relative to the
/// origin of the ordered `series`), relative to the mirror holding global indices
/// `base..base + len`: `out[0..=columns]` the first sample of each column (then the end), and
/// `out[columns + 1 + i]` the previous column with samples ([`NONE`]: none). Column `i` starts at
/// the first sample `t ≥ r0` whose [`column_of`] is at least `i`: found by one sweep over the
/// samples in view when they are few, else by a search per column starting where the column's
/// start time falls.
fn column_bounds(
    series: &Series,
    base: u64,
    len: u64,
    r0: f64,
    r1: f64,
    columns: usize,
    out: &mut [u32],
) {
    let n = columns;
    let rel = |g: u64| (g.clamp(base, base + len) - base) as u32;
    if n > 0 && r1 > r0 && r0.is_finite() && r1.is_finite() {
        let w = (r1 - r0) / n as f64;
        let g0 = series.partition_index(|t| t < r0);
        let g1 = series.partition_index(|t| t < r1);
        out[0] = rel(g0);
        out[n] = rel(g1);
        let swept = g1 - g0 <= SWEEP_PER_COLUMN * n as u64 && {
            let mut next = 1;
            let mut g = g0;
            let mut sorted = true;
            for view in series.chunks_in_rel(r0, r1) {
                sorted &= view.sorted;
                for &t in view.times_rel {
                    let c = column_of(t, r0, w, n);
                    while next <= c {
                        out[next] = rel(g);
                        next += 1;
                    }
                    g += 1;
                }
            }
            out[next..n].fill(rel(g1));
            sorted && g == g1
        };
        if !swept {
            for (i, o) in out.iter_mut().enumerate().take(n).skip(1) {
                // Column i starts near r0 + i·w: search from there (exact either way).
                let g = series.partition_index_near(
                    |t| t < r0 || column_of(t, r0, w, n) < i,
                    r0 + i as f64 * w,
                );
                *o = rel(g);
            }
        }
    } else {
        out[..=n].fill(0);
    }
    previous_columns(out, n);
}

/// Fills `out[n + 1 + i]` with the last column before `i` holding samples ([`NONE`]: none),
/// from the column starts `out[0..=n]`.
fn previous_columns(out: &mut [u32], n: usize) {
    let mut prev = NONE;
    for i in 0..n {
        out[n + 1 + i] = prev;
        if out[i + 1] > out[i] {
            prev = i as u32;
        }
    }
}

/// The first of the samples `from..to` at times k·`dt` for which `before(t)` is false (`before`
/// true for a prefix of them), by binary search; `to` when there is none.
pub fn uniform_partition(from: u64, to: u64, dt: f64, before: impl Fn(f64) -> bool) -> u64 {
    let (mut lo, mut hi) = (from, to.max(from));
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if before(mid as f64 * dt) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

/// [`column_bounds`] for `len` samples at times k·`dt` (sample k at mirror position k): each
/// column's first sample found by a search over the index with the same predicate, [`column_of`]
/// of the sample's time, as the CPU M4 of a series of those times.
fn uniform_bounds(len: u64, dt: f64, r0: f64, r1: f64, columns: usize, out: &mut [u32]) {
    let n = columns;
    if n > 0 && r1 > r0 && r0.is_finite() && r1.is_finite() && dt > 0.0 {
        let w = (r1 - r0) / n as f64;
        let g0 = uniform_partition(0, len, dt, |t| t < r0);
        let g1 = uniform_partition(g0, len, dt, |t| t < r1);
        out[0] = g0 as u32;
        out[n] = g1 as u32;
        let mut lo = g0;
        for (i, o) in out.iter_mut().enumerate().take(n).skip(1) {
            // Columns start in order: search from the last start.
            lo = uniform_partition(lo, g1, dt, |t| t < r0 || column_of(t, r0, w, n) < i);
            *o = lo as u32;
        }
    } else {
        out[..=n].fill(0);
    }
    previous_columns(out, n);
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
    let mut m = Mirrors::new();
    m.set_keep_columns(true);
    let mut f = OwnedFrame::new(gpu, crate::gpu::upload::Strategy::WriteBuffer);
    m.sync(&mut f.frame(), &pipes, 0, series)
        .map_err(|e| e.to_string())?;
    m.begin_views(columns, &ViewUniform::default());
    m.add_view(&pipes, 0, series, (r0, r1), 0, 0)
        .map_err(|e| e.to_string())?;
    m.upload(&mut f.frame(), &pipes, std::slice::from_ref(series));
    m.run_and_read(&mut f, &pipes, 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bounds from uniform times alone equal those from a series of the same times, at every
    /// zoom (views inside, across and outside the samples).
    #[test]
    fn uniform_bounds_equal_series_bounds() {
        for &(len, dt) in &[
            (5000u64, 1e-3),
            (65_536, 1.0),
            (4097, 1.0 / 48_000.0),
            (1, 0.5),
        ] {
            let mut s = Series::new("u", usize::MAX);
            for k in 0..len {
                s.push(k as f64 * dt, k as f32);
            }
            let end = len as f64 * dt;
            for &(r0, r1, n) in &[
                (0.0, end, 640usize),
                (0.0, end, 7),
                (end * 0.3, end * 0.31, 1280),
                (-end, end * 0.5, 300),
                (end * 0.9, end * 2.0, 97),
                (end * 2.0, end * 3.0, 50),
            ] {
                let mut want = vec![0u32; 2 * n + 1];
                column_bounds(&s, 0, len, r0, r1, n, &mut want);
                let mut got = vec![0u32; 2 * n + 1];
                uniform_bounds(len, dt, r0, r1, n, &mut got);
                assert_eq!(got, want, "{len} × {dt}: view [{r0}, {r1}) × {n}");
            }
        }
    }

    /// The sweep and the per-column search give the same bounds, at every density.
    #[test]
    fn swept_bounds_equal_searched_bounds() {
        let mut s = Series::new("s", usize::MAX);
        let mut x = 99u64;
        let mut t = 0.0;
        for _ in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            if !x.is_multiple_of(7) {
                t += (x % 1000) as f64 * 1e-6; // duplicates when x % 7 == 0
            }
            s.push(t, (x % 100) as f32);
        }
        let (a, b) = s.time_range_rel().unwrap_or((0.0, 1.0));
        let len = s.end_index();
        for &(r0, r1, n) in &[
            (a, b + 1e-9, 1000usize),
            (a + 1.0, a + 1.01, 640),
            (a + 3.0, a + 3.5, 97),
            (a - 1.0, a + 0.001, 300),
            (b - 0.2, b + 5.0, 1280),
            (b + 1.0, b + 2.0, 50),
        ] {
            let mut swept = vec![0u32; 2 * n + 1];
            column_bounds(&s, 0, len, r0, r1, n, &mut swept);
            let mut searched = vec![0u32; 2 * n + 1];
            let w = (r1 - r0) / n as f64;
            searched[0] = s.partition_index(|t| t < r0) as u32;
            searched[n] = s.partition_index(|t| t < r1) as u32;
            for (i, o) in searched.iter_mut().enumerate().take(n).skip(1) {
                *o = s.partition_index(|t| t < r0 || column_of(t, r0, w, n) < i) as u32;
            }
            let mut prev = NONE;
            for i in 0..n {
                searched[n + 1 + i] = prev;
                if searched[i + 1] > searched[i] {
                    prev = i as u32;
                }
            }
            assert_eq!(swept, searched, "view [{r0}, {r1}) × {n}");
        }
    }
}
