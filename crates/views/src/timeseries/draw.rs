//! The frame drawn from the store: the value range of the view, every shown series synced to its
//! GPU mirror and viewed (or decimated on the CPU when the GPU cannot), and the dots of sparse
//! and isolated samples ([`markers`](super::markers)).

use super::gpu::{self, GpuM4Error, HostDraw, Mirrors, Pipelines, ViewUniform};
use super::{TimeSeries, View, axis, markers, series_color};
use crate::FrameCtx;
use crate::gpu::frame::GpuFrame;
use crate::series::decimate::{Column, decimate_m4_rel};

/// Most dots ([`markers`]) drawn a frame. When the series sparser than the view's pixels have
/// more samples in view than this together (many sparse series: a network source of 1024
/// fields, or the first seconds of 1024 synthetic series), their samples are not dotted (the
/// dots would cover the chart, and cost the UI a shape each), and the side panel says so;
/// isolated samples keep their dots up to this many.
pub const MARKER_BUDGET: usize = 8192;

/// A sample drawn as a dot this frame (see [`markers`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Marker {
    /// Index of the series in the store.
    pub series: usize,
    /// Chart-relative time, seconds.
    pub t: f64,
    pub value: f32,
}

/// The pipelines, the GPU copies of the series and the series drawn from the CPU.
pub(super) struct GpuParts {
    pub(super) pipes: Pipelines,
    /// The GPU copies of the series and the frame's batched passes and draws.
    pub(super) mirrors: Mirrors,
    /// Series drawn from the CPU this frame (out of order, or beyond the GPU's limits).
    pub(super) host: Vec<HostDraw>,
    /// Scratch: the CPU M4 columns of a series drawn from the CPU.
    pub(super) columns: Vec<Column>,
}

/// What the last frame drew.
pub(super) struct Drawn {
    /// Samples drawn as dots this frame.
    pub(super) markers: Vec<Marker>,
    /// Scratch for [`markers::marker_samples`].
    pub(super) marker_scratch: Vec<(f64, f32)>,
    pub(super) points_in_view: u64,
    pub(super) view: Option<View>,
    pub(super) size: (u32, u32),
    pub(super) gpu_notes: Vec<String>,
}

impl TimeSeries {
    /// The start of [`Scene::prepare`](crate::Scene::prepare) (of either data flow): the
    /// frame's size (at least 1×1) kept and returned; the last frame's view, points in view,
    /// notes, host draws and markers cleared.
    pub(super) fn begin_prepare(&mut self, frame: &FrameCtx) -> (u32, u32) {
        let (width, height) = (frame.size.0.max(1), frame.size.1.max(1));
        self.drawn.size = (width, height);
        // This frame draws what was taken in.
        self.arrivals.redraw_due = false;
        self.drawn.points_in_view = 0;
        self.drawn.view = None;
        self.drawn.gpu_notes.clear();
        self.gpu.host.clear();
        self.drawn.markers.clear();
        (width, height)
    }

    /// [`Scene::prepare`](crate::Scene::prepare) of a chart of the store: the value
    /// range, the view, each series synced to its mirror and its view added (or drawn from the
    /// CPU), its dots, then the frame's upload.
    pub(super) fn prepare_store(&mut self, gpu: &mut GpuFrame<'_>, frame: &FrameCtx) {
        let (width, height) = self.begin_prepare(frame);
        let window = self.time_window();
        // Value range: fixed, or the finite values in view (±inf and NaN excluded).
        let (lo, hi) = match (self.fixed_y, window) {
            (Some(r), _) => r,
            (None, None) => (-1.0, 1.0),
            (None, Some((t0, t1))) => {
                let mut lo = f64::INFINITY;
                let mut hi = f64::NEG_INFINITY;
                for (i, s) in self.store.series().iter().enumerate() {
                    if !self.visible.get(i).copied().unwrap_or(true) {
                        continue;
                    }
                    let off = self.offset_of(s);
                    if let Some((a, b)) = s.value_range_rel(t0 - off, t1 - off) {
                        lo = lo.min(a as f64);
                        hi = hi.max(b as f64);
                    }
                }
                axis::padded_range(lo, hi)
            }
        };
        if let Some((t0, t1)) = window {
            self.drawn.view = Some(View { t0, t1, lo, hi });
        }
        self.gpu
            .mirrors
            .begin_views(width, &ViewUniform::new(lo, hi, width, height, 0));
        // Samples in view of the series the sparse rule dots (all theirs), against the budget.
        let sparse_dots: u64 = match window {
            Some((t0, t1)) => self
                .store
                .series()
                .iter()
                .enumerate()
                .filter(|&(i, s)| self.visible.get(i).copied().unwrap_or(true) && s.is_ordered())
                .map(|(_, s)| {
                    let off = self.offset_of(s);
                    s.partition_index(|t| t < t1 - off) - s.partition_index(|t| t < t0 - off)
                })
                .filter(|&n| n < width as u64)
                .sum(),
            None => 0,
        };
        let dot_sparse = sparse_dots <= MARKER_BUDGET as u64;
        if !dot_sparse {
            self.drawn.gpu_notes.push(format!(
                "{sparse_dots} samples in view of series sparser than the chart's pixels: not \
                 dotted (more than {MARKER_BUDGET} dots)"
            ));
        }
        for i in 0..self.store.series().len() {
            let s = &self.store.series()[i];
            // Keep the mirror current even while hidden or out of view, so showing it is cheap.
            let synced = self.gpu.mirrors.sync(gpu, &self.gpu.pipes, i, s);
            let Some((t0, t1)) = window else {
                continue;
            };
            if !self.visible.get(i).copied().unwrap_or(true) {
                continue;
            }
            let off = self.offset_of(s);
            let (r0, r1) = (t0 - off, t1 - off);
            let in_view = s.partition_index(|t| t < r1) - s.partition_index(|t| t < r0);
            self.drawn.marker_scratch.clear();
            if dot_sparse || !s.is_ordered() || in_view >= width as u64 {
                markers::marker_samples(s, r0, r1, width, &mut self.drawn.marker_scratch);
            }
            let room = MARKER_BUDGET.saturating_sub(self.drawn.markers.len());
            self.drawn
                .markers
                .extend(
                    self.drawn
                        .marker_scratch
                        .iter()
                        .take(room)
                        .map(|&(t, value)| Marker {
                            series: i,
                            t: t + off,
                            value,
                        }),
                );
            let color = series_color(i);
            let order = i as u32;
            let result = synced.and_then(|()| {
                self.gpu
                    .mirrors
                    .add_view(&self.gpu.pipes, i, s, (r0, r1), color, order)
            });
            match result {
                Ok(()) => self.drawn.points_in_view += in_view,
                Err(e) => {
                    if !matches!(e, GpuM4Error::Unordered { .. }) {
                        self.drawn.gpu_notes.push(e.to_string());
                    }
                    decimate_m4_rel(s, r0, r1, width as usize, &mut self.gpu.columns);
                    self.drawn.points_in_view +=
                        self.gpu.columns.iter().map(|c| c.count as u64).sum::<u64>();
                    let (spans, conns) = gpu::column_segments(&self.gpu.columns);
                    let vu = ViewUniform::new(lo, hi, width, height, color);
                    self.gpu.host.push(HostDraw::new(
                        gpu,
                        &self.gpu.pipes,
                        &vu,
                        order,
                        &spans,
                        &conns,
                    ));
                }
            }
        }
        self.gpu
            .mirrors
            .upload(gpu, &self.gpu.pipes, self.store.series());
    }
}
