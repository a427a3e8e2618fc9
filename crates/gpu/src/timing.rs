//! GPU pass times from timestamp queries, read back through the shared asynchronous
//! [`ReadbackRing`]: a frame's times arrive 1–3 frames later and the frame loop never waits.
//!
//! Each frame writes 6 timestamps: the scene's compute pass begin/end (queries 0, 1), its render
//! pass begin/end (2, 3) and the egui pass begin/end (4, 5). Times in ms = ticks ×
//! `queue.get_timestamp_period()` (ns per tick) / 1e6.

use crate::readback::{Consumer, ReadbackRing};

/// Timestamps per frame.
pub(crate) const QUERIES: u32 = 6;

/// GPU times of one frame, in milliseconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PassTimes {
    /// The frame these times belong to.
    pub frame: u64,
    /// Duration of the scene's compute pass.
    pub compute_ms: f64,
    /// Duration of the scene's render pass.
    pub render_ms: f64,
    /// Duration of the egui pass (`None` when the frame did not time it).
    pub ui_ms: Option<f64>,
}

/// Payload of a timing readback: the frame whose passes were timed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimedFrame(pub u64);

/// The timestamp query set and its resolve buffer; readback goes through a [`ReadbackRing`].
pub struct GpuTimer {
    queries: wgpu::QuerySet,
    resolve: wgpu::Buffer,
    period_ns: f64,
    current: Option<u64>,
    ui_timed: bool,
}

impl GpuTimer {
    /// Returns `None` when the device lacks TIMESTAMP_QUERY.
    pub fn new(device: &wgpu::Device, queue: &wgpu::Queue) -> Option<GpuTimer> {
        if !device.features().contains(wgpu::Features::TIMESTAMP_QUERY) {
            return None;
        }
        let queries = device.create_query_set(&wgpu::QuerySetDescriptor {
            label: Some("timing:queries"),
            ty: wgpu::QueryType::Timestamp,
            count: QUERIES,
        });
        let resolve = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("timing:resolve"),
            size: QUERIES as u64 * 8,
            usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        Some(GpuTimer {
            queries,
            resolve,
            period_ns: queue.get_timestamp_period() as f64,
            current: None,
            ui_timed: false,
        })
    }

    /// Starts timing `frame`. Returns true.
    pub fn begin_frame(&mut self, frame: u64) -> bool {
        self.current = Some(frame);
        self.ui_timed = false;
        true
    }

    /// Nothing is timed this frame.
    pub fn cancel(&mut self) {
        self.current = None;
    }

    /// Timestamp writes for the compute pass of this frame (queries 0 and 1).
    pub fn compute_writes(&self) -> Option<wgpu::ComputePassTimestampWrites<'_>> {
        self.current.map(|_| wgpu::ComputePassTimestampWrites {
            query_set: &self.queries,
            beginning_of_pass_write_index: Some(0),
            end_of_pass_write_index: Some(1),
        })
    }

    /// Timestamp writes for the scene's render pass of this frame (queries 2 and 3).
    pub fn render_writes(&self) -> Option<wgpu::RenderPassTimestampWrites<'_>> {
        self.current.map(|_| wgpu::RenderPassTimestampWrites {
            query_set: &self.queries,
            beginning_of_pass_write_index: Some(2),
            end_of_pass_write_index: Some(3),
        })
    }

    /// Timestamp writes for the egui pass of this frame (queries 4 and 5).
    pub fn ui_writes(&mut self) -> Option<wgpu::RenderPassTimestampWrites<'_>> {
        self.ui_span(Some(4), Some(5))
    }

    /// The beginning of the UI's timing on a compute pass (query 4): for an empty pass recorded
    /// before the copies that start the output's work.
    pub fn ui_begin_compute_writes(&mut self) -> Option<wgpu::ComputePassTimestampWrites<'_>> {
        self.ui_timed = self.current.is_some();
        self.current.map(|_| wgpu::ComputePassTimestampWrites {
            query_set: &self.queries,
            beginning_of_pass_write_index: Some(4),
            end_of_pass_write_index: None,
        })
    }

    /// Timestamp writes for the last of the output's passes: its end only (query 5).
    pub fn ui_end_writes(&mut self) -> Option<wgpu::RenderPassTimestampWrites<'_>> {
        self.ui_span(None, Some(5))
    }

    fn ui_span(
        &mut self,
        begin: Option<u32>,
        end: Option<u32>,
    ) -> Option<wgpu::RenderPassTimestampWrites<'_>> {
        self.ui_timed = self.current.is_some();
        self.current.map(|_| wgpu::RenderPassTimestampWrites {
            query_set: &self.queries,
            beginning_of_pass_write_index: begin,
            end_of_pass_write_index: end,
        })
    }

    /// Resolves the queries and copies them into `ring` for [`Consumer::Timing`] with the
    /// payload [`TimedFrame`] (the frame index). Call
    /// after the timed passes; ends this frame's timing. Returns false when nothing was copied
    /// (no frame being timed, or the ring is full: that frame has no GPU times).
    pub fn resolve(
        &mut self,
        device: &wgpu::Device,
        encoder: &mut wgpu::CommandEncoder,
        ring: &mut ReadbackRing,
    ) -> bool {
        let Some(frame) = self.current.take() else {
            return false;
        };
        let count = if self.ui_timed { QUERIES } else { 4 };
        encoder.resolve_query_set(&self.queries, 0..count, &self.resolve, 0);
        ring.copy_buffer(
            device,
            encoder,
            &self.resolve,
            0,
            count as u64 * 8,
            Consumer::Timing,
            TimedFrame(frame),
        )
    }

    /// Decodes a timing readback (the bytes of a [`Consumer::Timing`] copy of frame `frame`).
    pub fn decode(&self, frame: u64, data: &[u8]) -> Option<PassTimes> {
        if data.len() < 32 {
            return None;
        }
        let tick = |i: usize| -> u64 {
            data.get(i * 8..i * 8 + 8)
                .map(bytemuck::pod_read_unaligned::<u64>)
                .unwrap_or(0)
        };
        let ms = |a: u64, b: u64| b.saturating_sub(a) as f64 * self.period_ns / 1e6;
        Some(PassTimes {
            frame,
            compute_ms: ms(tick(0), tick(1)),
            render_ms: ms(tick(2), tick(3)),
            ui_ms: (data.len() >= 48).then(|| ms(tick(4), tick(5))),
        })
    }
}

/// Benchmark helper: records `encode` `reps` times (at least 1) into one compute pass and submits
/// it, after one untimed warm-up pass of 2 reps (pipeline compilation, first touch of buffers).
/// Returns (wall seconds per rep: submit → idle of an untimed run, GPU seconds per rep from
/// timestamps at the pass begin and end of a second run when the device has TIMESTAMP_QUERY).
/// Blocks; for benchmarks, never the frame loop.
#[allow(clippy::disallowed_methods)] // a benchmark helper outside any frame
pub fn time_compute_pass(
    gpu: &crate::Gpu,
    label: &str,
    reps: u32,
    mut encode: impl FnMut(&mut wgpu::ComputePass<'_>),
) -> (f64, Option<f64>) {
    let device = &gpu.device;
    let queue = &gpu.queue;
    let reps = reps.max(1);
    let timestamps = device.features().contains(wgpu::Features::TIMESTAMP_QUERY);
    let queries = timestamps.then(|| {
        let set = device.create_query_set(&wgpu::QuerySetDescriptor {
            label: Some(&format!("{label}:queries")),
            ty: wgpu::QueryType::Timestamp,
            count: 2,
        });
        let resolve = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(&format!("{label}:resolve")),
            size: 16,
            usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        (set, resolve)
    });
    let mut run = |reps: u32, timed: bool| {
        let mut enc =
            device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some(label) });
        {
            let timestamp_writes = match (&queries, timed) {
                (Some((set, _)), true) => Some(wgpu::ComputePassTimestampWrites {
                    query_set: set,
                    beginning_of_pass_write_index: Some(0),
                    end_of_pass_write_index: Some(1),
                }),
                _ => None,
            };
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some(&format!("{label}:pass")),
                timestamp_writes,
            });
            for _ in 0..reps {
                encode(&mut pass);
            }
        }
        if let (Some((set, resolve)), true) = (&queries, timed) {
            enc.resolve_query_set(set, 0..2, resolve, 0);
        }
        queue.submit([enc.finish()]);
        gpu.wait_idle();
    };
    run(2, false);
    let t0 = std::time::Instant::now();
    run(reps, false);
    let wall = t0.elapsed().as_secs_f64() / f64::from(reps);
    let gpu_s = match &queries {
        Some((_, resolve)) => {
            run(reps, true);
            gpu.read_buffer_blocking(resolve, 0, 16)
                .ok()
                .and_then(|bytes| {
                    let t: [u64; 2] = bytemuck::pod_read_unaligned(bytes.get(..16)?);
                    let ns =
                        t[1].saturating_sub(t[0]) as f64 * f64::from(queue.get_timestamp_period());
                    (ns > 0.0).then(|| ns / 1e9 / f64::from(reps))
                })
        }
        None => None,
    };
    (wall, gpu_s)
}
