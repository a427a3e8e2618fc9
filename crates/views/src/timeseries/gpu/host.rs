//! Span and connector records drawn from the CPU: [`HostDraw`] (the full-resolution reference
//! and series the GPU path cannot take), [`reference_segments`] (every sample drawn) and
//! [`column_segments`] (records from CPU M4 columns).

use super::{Conn, Pipelines, SeriesDraw, Span, ViewUniform, buffer, depth_of, draw_group};
use crate::gpu::frame::GpuFrame;
use crate::series::decimate::{Column, column_of};
use crate::series::store::Series;

/// Span and connector records drawn from the CPU: used for the full-resolution reference and for
/// series the GPU path cannot take (out-of-order samples). Drawn with the same pipelines as the
/// mirrors' records, at the depth of its series' order.
pub struct HostDraw {
    spans_bg: wgpu::BindGroup,
    conns_bg: wgpu::BindGroup,
    n_spans: u32,
    n_conns: u32,
}

impl HostDraw {
    /// Uploads `spans` and `conns` (buffers sized to fit), the draw uniform and the one-entry
    /// table of `view.color` at the depth of the `order`-th series ([`depth_of`]).
    pub fn new(
        gpu: &mut GpuFrame<'_>,
        pipes: &Pipelines,
        view: &ViewUniform,
        order: u32,
        spans: &[Span],
        conns: &[Conn],
    ) -> HostDraw {
        let device = gpu.device();
        let s = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST;
        let u = wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST;
        let vb = buffer(device, "timeseries:host:view", 16, u);
        let tb = buffer(device, "timeseries:host:table", 16, s);
        let sb = buffer(device, "timeseries:host:spans", spans.len() as u64 * 16, s);
        let cb = buffer(
            device,
            "timeseries:host:connectors",
            conns.len() as u64 * 20,
            s,
        );
        gpu.write_pod(&vb, 0, &view.draw());
        let entry = SeriesDraw {
            color: view.color,
            depth: depth_of(order),
            _pad: [0; 2],
        };
        gpu.write_pod(&tb, 0, &entry);
        gpu.write_slice(&sb, 0, spans);
        gpu.write_slice(&cb, 0, conns);
        HostDraw {
            spans_bg: draw_group(device, pipes, &vb, &tb, &sb, "host_spans"),
            conns_bg: draw_group(device, pipes, &vb, &tb, &cb, "host_connectors"),
            n_spans: spans.len() as u32,
            n_conns: conns.len() as u32,
        }
    }

    /// Draws the records.
    pub fn paint(&self, pipes: &Pipelines, pass: &mut wgpu::RenderPass<'_>) {
        if self.n_spans > 0 {
            pass.set_pipeline(&pipes.spans);
            pass.set_bind_group(0, &self.spans_bg, &[]);
            pass.draw(0..self.n_spans.saturating_mul(6), 0..1);
        }
        if self.n_conns > 0 {
            pass.set_pipeline(&pipes.conns);
            pass.set_bind_group(0, &self.conns_bg, &[]);
            pass.draw(0..self.n_conns.saturating_mul(2), 0..1);
        }
    }
}

/// The full-resolution drawing of every sample of `series` in `[r0, r1)` (relative seconds) over
/// `columns` pixel columns: for each valid sample a one-row span; for each pair of consecutive
/// valid samples a span when they share a column, else a line between the column centres. NaN
/// samples break the line. Samples are taken in storage order (an ordered series).
pub fn reference_segments(
    series: &Series,
    r0: f64,
    r1: f64,
    columns: usize,
) -> (Vec<Span>, Vec<Conn>) {
    let mut spans = Vec::new();
    let mut conns = Vec::new();
    if columns == 0 || r1 <= r0 {
        return (spans, conns);
    }
    let w = (r1 - r0) / columns as f64;
    let mut prev: Option<(u32, f32)> = None;
    for view in series.chunks_in_rel(r0, r1) {
        for (&t, &v) in view.times_rel.iter().zip(view.values) {
            if !view.sorted && (t < r0 || t >= r1) {
                continue;
            }
            if v.is_nan() {
                prev = None;
                continue;
            }
            let c = column_of(t, r0, w, columns) as u32;
            spans.push(Span {
                col: c,
                lo: v.to_bits(),
                hi: v.to_bits(),
                slot: 0,
            });
            if let Some((pc, pv)) = prev {
                if pc == c {
                    let (lo, hi) = if pv <= v { (pv, v) } else { (v, pv) };
                    spans.push(Span {
                        col: c,
                        lo: lo.to_bits(),
                        hi: hi.to_bits(),
                        slot: 0,
                    });
                } else {
                    conns.push(Conn {
                        col0: pc,
                        v0: pv.to_bits(),
                        col1: c,
                        v1: v.to_bits(),
                        slot: 0,
                    });
                }
            }
            prev = Some((c, v));
        }
    }
    (spans, conns)
}

/// Draw records from CPU M4 columns (the fallback for out-of-order series): a span per non-empty
/// column and a line from each column's last value to the next non-empty column's first.
pub fn column_segments(columns: &[Column]) -> (Vec<Span>, Vec<Conn>) {
    let mut spans = Vec::new();
    let mut conns = Vec::new();
    let mut prev: Option<(u32, f32)> = None;
    for (i, c) in columns.iter().enumerate() {
        if c.count == 0 {
            continue;
        }
        let i = i as u32;
        spans.push(Span {
            col: i,
            lo: c.min.to_bits(),
            hi: c.max.to_bits(),
            slot: 0,
        });
        if let Some((j, last)) = prev {
            conns.push(Conn {
                col0: j,
                v0: last.to_bits(),
                col1: i,
                v1: c.first.to_bits(),
                slot: 0,
            });
        }
        prev = Some((i, c.last));
    }
    (spans, conns)
}
