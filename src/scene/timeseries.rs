//! Time series: a streaming chart. A producer thread (synthetic random walks, or a CSV file)
//! feeds the store; each frame the newest window is decimated per pixel column (M4: min, max,
//! first, last) and drawn as line segments from a ping-pong vertex buffer.
//!
//! M4 per pixel column is exact for a 1-pixel line chart: Jugel et al., "M4: A
//! Visualization-Oriented Time Series Data Aggregation", VLDB 2014.

use bytemuck::{Pod, Zeroable};

use super::{FrameCtx, Scene, SceneConfig, SceneError};
use crate::gpu::upload::PingPong;
use crate::gpu::{Gpu, shaders};
use crate::series::decimate::{Column, decimate_m4};
use crate::series::source::{Pacing, SeriesSelection, SeriesSource};
use crate::series::store::Store;

/// Synthetic default: series count.
pub const SYNTH_SERIES: usize = 4;
/// Synthetic default: samples per second per series (4 × 50,000 = 200,000 samples/s in all).
pub const SYNTH_RATE_HZ: f64 = 50_000.0;
/// Samples kept per series.
const STORE_CAP: usize = 1 << 24;

/// Line colours of the series, cycled.
pub const PALETTE: &[[u8; 3]] = &[
    [90, 170, 255],
    [255, 140, 60],
    [120, 220, 120],
    [230, 90, 200],
    [250, 220, 80],
    [120, 230, 230],
];

/// One vertex: NDC position and packed RGBA8 colour (12 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
pub struct Vertex {
    /// Position in normalized device coordinates.
    pub pos: [f32; 2],
    /// RGBA8, R in the low byte.
    pub color: u32,
}

/// Builds the line-list vertices of one series from its M4 columns: a vertical segment min→max
/// in each non-empty column and a segment from the last value of a column to the first value of
/// the next non-empty column. `y` maps a value to NDC; column i sits at NDC x of its centre.
pub fn columns_to_lines(
    columns: &[Column],
    y: impl Fn(f32) -> f32,
    color: u32,
    out: &mut Vec<Vertex>,
) {
    let n = columns.len().max(1) as f32;
    let x = |i: usize| -1.0 + 2.0 * (i as f32 + 0.5) / n;
    let mut prev: Option<(usize, f32)> = None;
    for (i, c) in columns.iter().enumerate() {
        if c.count == 0 {
            continue;
        }
        let xi = x(i);
        if let Some((j, last)) = prev {
            out.push(Vertex {
                pos: [x(j), y(last)],
                color,
            });
            out.push(Vertex {
                pos: [xi, y(c.first)],
                color,
            });
        }
        out.push(Vertex {
            pos: [xi, y(c.min)],
            color,
        });
        out.push(Vertex {
            pos: [xi, y(c.max)],
            color,
        });
        prev = Some((i, c.last));
    }
}

/// The time-series scene.
pub struct TimeSeries {
    source: SeriesSource,
    store: Store,
    scene_time: f64,
    window_s: f64,
    visible: Vec<bool>,
    columns: Vec<Column>,
    vertices: Vec<Vertex>,
    vertex_count: u32,
    points_drawn: u64,
    view: Option<(f64, f64, f32, f32)>,
    vbuf: PingPong,
    pipeline: wgpu::RenderPipeline,
    draw_slot: usize,
}

impl TimeSeries {
    /// Table constructor: opens the CSV (errors name the file) or the synthetic source.
    pub fn create(gpu: &Gpu, cfg: &SceneConfig) -> Result<Box<dyn Scene>, SceneError> {
        let sel = match &cfg.series_file {
            Some(p) => SeriesSelection::Csv(p.clone()),
            None => SeriesSelection::Synthetic {
                series: SYNTH_SERIES,
                rate_hz: SYNTH_RATE_HZ,
                seed: cfg.seed,
            },
        };
        let pacing = if cfg.simulated_clock {
            Pacing::Driven
        } else {
            Pacing::WallClock
        };
        let source = SeriesSource::open(&sel, pacing)?;
        Ok(Box::new(TimeSeries::new(gpu, source)))
    }

    /// Builds the scene around an opened source.
    pub fn new(gpu: &Gpu, source: SeriesSource) -> TimeSeries {
        let device = &gpu.device;
        let module = shaders::TIMESERIES_LINES.module(device);
        let layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("timeseries:lines:pipeline_layout"),
            bind_group_layouts: &[],
            immediate_size: 0,
        });
        let pipeline = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: Some("timeseries:lines"),
            layout: Some(&layout),
            vertex: wgpu::VertexState {
                module: &module,
                entry_point: Some("vs_main"),
                compilation_options: Default::default(),
                buffers: &[Some(wgpu::VertexBufferLayout {
                    array_stride: std::mem::size_of::<Vertex>() as u64,
                    step_mode: wgpu::VertexStepMode::Vertex,
                    attributes: &wgpu::vertex_attr_array![0 => Float32x2, 1 => Uint32],
                })],
            },
            primitive: wgpu::PrimitiveState {
                topology: wgpu::PrimitiveTopology::LineList,
                ..Default::default()
            },
            depth_stencil: None,
            multisample: wgpu::MultisampleState::default(),
            fragment: Some(wgpu::FragmentState {
                module: &module,
                entry_point: Some("fs_main"),
                compilation_options: Default::default(),
                targets: &[Some(super::SCENE_FORMAT.into())],
            }),
            multiview_mask: None,
            cache: None,
        });
        let vbuf = PingPong::new(
            device,
            "timeseries:vertices",
            wgpu::BufferUsages::VERTEX,
            1 << 16,
        );
        TimeSeries {
            source,
            store: Store::new(STORE_CAP),
            scene_time: 0.0,
            window_s: 10.0,
            visible: Vec::new(),
            columns: Vec::new(),
            vertices: Vec::new(),
            vertex_count: 0,
            points_drawn: 0,
            view: None,
            vbuf,
            pipeline,
            draw_slot: 0,
        }
    }

    /// The store (tests and reports).
    pub fn store(&self) -> &Store {
        &self.store
    }
}

impl Scene for TimeSeries {
    fn id(&self) -> &'static str {
        "timeseries"
    }

    fn ingest(&mut self, frame: &FrameCtx) {
        self.scene_time += frame.elapsed_s;
        self.source.advance_to(self.scene_time);
        self.source.drain_into(&mut self.store);
        self.visible.resize(self.store.series().len(), true);
    }

    fn prepare(&mut self, gpu: &Gpu, frame: &FrameCtx) {
        self.vertices.clear();
        self.points_drawn = 0;
        self.view = None;
        let width = frame.size.0.max(1) as usize;
        if let Some((t_start, t_end)) = self.store.time_range() {
            // Roll mode: the data fills the window from the left, then scrolls.
            let t1 = (t_end + 1e-9).max(t_start + self.window_s);
            let t0 = t1 - self.window_s;
            // Y range over the visible, finite data of every shown series.
            let mut lo = f32::INFINITY;
            let mut hi = f32::NEG_INFINITY;
            let mut per_series = Vec::new();
            for (s, series) in self.store.series().iter().enumerate() {
                if !self.visible.get(s).copied().unwrap_or(true) {
                    continue;
                }
                decimate_m4(series, t0, t1, width, &mut self.columns);
                for c in &self.columns {
                    if c.count > 0 {
                        self.points_drawn += c.count as u64;
                        if c.min.is_finite() {
                            lo = lo.min(c.min);
                        }
                        if c.max.is_finite() {
                            hi = hi.max(c.max);
                        }
                    }
                }
                per_series.push((s, std::mem::take(&mut self.columns)));
            }
            if lo.is_finite() && hi.is_finite() {
                let pad = ((hi - lo) * 0.05).max(1e-6 * hi.abs().max(1.0));
                let (lo, hi) = (lo - pad, hi + pad);
                let y = |v: f32| -1.0 + 2.0 * (v - lo) / (hi - lo);
                for (s, cols) in &per_series {
                    let [r, g, b] = PALETTE[s % PALETTE.len()];
                    columns_to_lines(
                        cols,
                        y,
                        u32::from_le_bytes([r, g, b, 255]),
                        &mut self.vertices,
                    );
                }
                self.view = Some((t0, t1, lo, hi));
            }
            if let Some((_, cols)) = per_series.pop() {
                self.columns = cols;
            }
        }
        self.draw_slot = self.vbuf.write(
            &gpu.device,
            &gpu.queue,
            frame.frame,
            bytemuck::cast_slice(&self.vertices),
        );
        self.vertex_count = self.vertices.len() as u32;
    }

    fn paint(&self, pass: &mut wgpu::RenderPass<'_>, _frame: &FrameCtx) {
        if self.vertex_count == 0 {
            return;
        }
        pass.set_pipeline(&self.pipeline);
        let bytes = self.vertex_count as u64 * std::mem::size_of::<Vertex>() as u64;
        pass.set_vertex_buffer(0, self.vbuf.buffer(self.draw_slot).slice(..bytes));
        pass.draw(0..self.vertex_count, 0..1);
    }

    fn ui(&mut self, ui: &mut egui::Ui) {
        ui.heading("Time series");
        ui.label(self.source.label());
        if let Some(e) = self.source.error() {
            ui.colored_label(egui::Color32::LIGHT_RED, e);
        }
        ui.add(
            egui::Slider::new(&mut self.window_s, 0.01..=600.0)
                .logarithmic(true)
                .text("window (s)"),
        );
        ui.label(format!("points ingested: {}", self.store.points_ingested()));
        ui.label(format!("points in view: {}", self.points_drawn));
        ui.label(format!("line vertices: {}", self.vertex_count));
        ui.separator();
        ui.label("Series (click to toggle):");
        for (i, s) in self.store.series().iter().enumerate() {
            let [r, g, b] = PALETTE[i % PALETTE.len()];
            if let Some(v) = self.visible.get_mut(i) {
                ui.checkbox(
                    v,
                    egui::RichText::new(format!("{} ({} pts)", s.name, s.points_ingested()))
                        .color(egui::Color32::from_rgb(r, g, b)),
                );
            }
        }
    }

    fn overlay(&self, painter: &egui::Painter, rect: egui::Rect) {
        let Some((t0, t1, lo, hi)) = self.view else {
            painter.text(
                rect.center(),
                egui::Align2::CENTER_CENTER,
                "waiting for data…",
                egui::FontId::proportional(14.0),
                egui::Color32::GRAY,
            );
            return;
        };
        let font = egui::FontId::proportional(12.0);
        let color = egui::Color32::from_gray(220);
        let stroke = egui::Stroke::new(1.0, egui::Color32::from_white_alpha(40));
        let tstep =
            super::spectrogram::axis::nice_step(t1 - t0, (rect.width() / 110.0).max(2.0) as f64);
        let mut t = (t0 / tstep).ceil() * tstep;
        while t <= t1 {
            let x = rect.left() + ((t - t0) / (t1 - t0)) as f32 * rect.width();
            painter.line_segment(
                [egui::pos2(x, rect.top()), egui::pos2(x, rect.bottom())],
                stroke,
            );
            painter.text(
                egui::pos2(x, rect.bottom() - 4.0),
                egui::Align2::CENTER_BOTTOM,
                format!("{} s", trim(t, tstep)),
                font.clone(),
                color,
            );
            t += tstep;
        }
        let vstep = super::spectrogram::axis::nice_step(
            (hi - lo) as f64,
            (rect.height() / 50.0).max(2.0) as f64,
        );
        let mut v = (lo as f64 / vstep).ceil() * vstep;
        while v <= hi as f64 {
            let y = rect.bottom() - ((v - lo as f64) / (hi - lo) as f64) as f32 * rect.height();
            painter.line_segment(
                [egui::pos2(rect.left(), y), egui::pos2(rect.right(), y)],
                stroke,
            );
            painter.text(
                egui::pos2(rect.left() + 4.0, y),
                egui::Align2::LEFT_BOTTOM,
                trim(v, vstep),
                font.clone(),
                color,
            );
            v += vstep;
        }
    }

    fn metrics(&self) -> serde_json::Value {
        let series: Vec<_> = self
            .store
            .series()
            .iter()
            .map(|s| {
                serde_json::json!({
                    "name": s.name,
                    "points": s.points_ingested(),
                    "gaps": s.gaps(),
                    "time_range_s": s.time_range(),
                })
            })
            .collect();
        serde_json::json!({
            "source": self.source.label(),
            "series_count": self.store.series().len(),
            "series": series,
            "points_ingested": self.store.points_ingested(),
            "points_drawn": self.points_drawn,
            "line_vertices": self.vertex_count,
            "window_s": self.window_s,
        })
    }

    fn problem(&self) -> Option<String> {
        self.source.error()
    }
}

/// Formats `v` with as many decimals as `step` needs.
fn trim(v: f64, step: f64) -> String {
    let decimals = if step >= 1.0 {
        0
    } else {
        (-step.log10().floor()) as usize
    };
    let v = if v.abs() < step * 1e-6 { 0.0 } else { v };
    format!("{v:.decimals$}")
}
