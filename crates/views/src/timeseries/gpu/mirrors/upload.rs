//! The frame's batch written through the frame's uploader ([`Mirrors::upload`]): the staged
//! samples, the append and build jobs, the dispatch plan, the M4 slots with their column bounds,
//! the draw table; the frame's buffers grown as needed.

use super::super::{
    Dispatch, DrawArgs, Job, MAX_LEVELS, PARAM_STRIDE, Pipelines, RASTER_MIN_RECORDS, Raster,
    ResolveView, SeriesDraw, Slot, depth_of, m4_flags,
};
use super::Mirrors;
use super::bounds::{column_bounds, uniform_bounds};
use super::buffers::{FrameBuffers, FrameSizes};
use crate::gpu::frame::GpuFrame;
use crate::series::store::Series;

/// Words of a slot's header in the M4 pass's `views` ([`Slot`]; `HEADER` in `m4.wgsl`).
const HEADER: usize = size_of::<Slot>() / 4;

/// Which compute pass a dispatch runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum PassKind {
    Append,
    Build,
    M4,
    M4Raster,
}

/// One dispatch of the frame: its pass, its page, its slot of the dispatch uniform, its threads.
#[derive(Clone, Copy, Debug)]
pub(super) struct Planned {
    pub(super) kind: PassKind,
    pub(super) page: usize,
    pub(super) param: u32,
    pub(super) threads: u32,
}

impl Mirrors {
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
}
