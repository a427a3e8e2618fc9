//! The GPU copies of every series ([`Mirrors`]): each series' values, valid-count prefix and
//! min/max pyramid kept in step with the store in a block of a page, and the frame's views of
//! them, batched: one upload of the new samples, one append dispatch and one build dispatch per
//! level per page, one M4 dispatch per page, one span draw and one connector draw for all series.
//! Also the blocking GPU M4 for tests and tools ([`decimate_gpu`]).
//!
//! This file holds the mirrors, their sync with the store, the frame's views, the recorded
//! passes and draws; `upload.rs` the frame's batch written to the GPU, `buffers.rs` the frame's
//! buffers, `bounds.rs` the column bounds of a view.

mod bounds;
mod buffers;
mod upload;

pub use bounds::uniform_partition;

use super::pool::{Block, Pool};
use super::{
    BRANCH, GpuM4Error, Job, MAX_LEVELS, MIN_CAPACITY, PARAM_STRIDE, Pipelines, Raster, SeriesDraw,
    ViewUniform, fold_groups, layout_levels,
};
use crate::gpu::Gpu;
use crate::gpu::frame::{GpuFrame, OwnedFrame};
use crate::series::decimate::Column;
use crate::series::store::Series;
use buffers::FrameBuffers;
use upload::{PassKind, Planned};

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
    /// one, [`depth_of`](super::depth_of)). Call after [`sync`](Mirrors::sync); the series must
    /// be ordered ([`Series::is_ordered`]) and fit the frame's batch.
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

/// Runs the GPU M4 of `series` over `[r0, r1)` (relative seconds) into `columns` columns and reads
/// the result back (blocking; tests and tools, not the frame loop).
pub fn decimate_gpu(
    gpu: &Gpu,
    series: &Series,
    r0: f64,
    r1: f64,
    columns: u32,
) -> Result<Vec<Column>, String> {
    let pipes = Pipelines::new(&gpu.device, crate::SCENE_FORMAT);
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
