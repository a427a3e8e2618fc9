//! GPU pass times from timestamp queries, read back through a ring of `MAP_READ` buffers that is
//! polled without blocking: a frame's times arrive 1–3 frames later and the frame loop never waits.
//!
//! Each frame writes 4 timestamps: compute pass begin/end (queries 0, 1) and scene render pass
//! begin/end (queries 2, 3). Times in ms = ticks × `queue.get_timestamp_period()` (ns per tick) / 1e6.

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

const QUERIES: u32 = 4;
const RING: usize = 4;
const FREE: u8 = 0;
const PENDING: u8 = 1;
const MAPPED: u8 = 2;
const FAILED: u8 = 3;

/// GPU times of one frame, in milliseconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PassTimes {
    /// The frame these times belong to.
    pub frame: u64,
    /// Duration of the scene's compute pass.
    pub compute_ms: f64,
    /// Duration of the scene's render pass.
    pub render_ms: f64,
}

struct Slot {
    buffer: wgpu::Buffer,
    state: Arc<AtomicU8>,
    frame: u64,
}

/// The timestamp query set, its resolve buffer and the readback ring.
pub struct GpuTimer {
    queries: wgpu::QuerySet,
    resolve: wgpu::Buffer,
    ring: Vec<Slot>,
    period_ns: f64,
    current: Option<usize>,
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
        let size = QUERIES as u64 * 8;
        let resolve = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("timing:resolve"),
            size,
            usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let ring = (0..RING)
            .map(|i| Slot {
                buffer: device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some(&format!("timing:readback[{i}]")),
                    size,
                    usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ,
                    mapped_at_creation: false,
                }),
                state: Arc::new(AtomicU8::new(FREE)),
                frame: 0,
            })
            .collect();
        Some(GpuTimer {
            queries,
            resolve,
            ring,
            period_ns: queue.get_timestamp_period() as f64,
            current: None,
        })
    }

    /// Picks a free ring slot for `frame`; returns false (no timing this frame) when all are busy.
    pub fn begin_frame(&mut self, frame: u64) -> bool {
        self.current = self
            .ring
            .iter()
            .position(|s| s.state.load(Ordering::Acquire) == FREE);
        if let Some(i) = self.current {
            self.ring[i].frame = frame;
        }
        self.current.is_some()
    }

    /// Gives this frame's slot back unused (nothing was timed).
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

    /// Resolves the queries and copies them into this frame's ring slot. Call after both passes.
    pub fn resolve(&self, encoder: &mut wgpu::CommandEncoder) {
        if let Some(i) = self.current {
            encoder.resolve_query_set(&self.queries, 0..QUERIES, &self.resolve, 0);
            encoder.copy_buffer_to_buffer(
                &self.resolve,
                0,
                &self.ring[i].buffer,
                0,
                QUERIES as u64 * 8,
            );
        }
    }

    /// After submit: starts mapping this frame's slot. The callback only flips an atomic.
    pub fn after_submit(&mut self) {
        if let Some(i) = self.current.take() {
            let state = self.ring[i].state.clone();
            state.store(PENDING, Ordering::Release);
            self.ring[i]
                .buffer
                .slice(..)
                .map_async(wgpu::MapMode::Read, move |r| {
                    if let Err(e) = &r {
                        log::debug!("timing: map failed: {e}");
                    }
                    state.store(if r.is_ok() { MAPPED } else { FAILED }, Ordering::Release);
                });
        }
    }

    /// Non-blocking: polls the device once and returns the times of every frame whose readback
    /// finished, oldest first.
    pub fn collect(&mut self, device: &wgpu::Device) -> Vec<PassTimes> {
        let _ = device.poll(wgpu::PollType::Poll);
        let mut out = Vec::new();
        for slot in &mut self.ring {
            match slot.state.load(Ordering::Acquire) {
                MAPPED => {
                    let ticks: Option<[u64; QUERIES as usize]> = slot
                        .buffer
                        .slice(..)
                        .get_mapped_range()
                        .ok()
                        .map(|v| bytemuck::pod_read_unaligned(&v[..]));
                    slot.buffer.unmap();
                    slot.state.store(FREE, Ordering::Release);
                    if let Some(t) = ticks {
                        let ms = |a: u64, b: u64| b.saturating_sub(a) as f64 * self.period_ns / 1e6;
                        out.push(PassTimes {
                            frame: slot.frame,
                            compute_ms: ms(t[0], t[1]),
                            render_ms: ms(t[2], t[3]),
                        });
                    }
                }
                FAILED => {
                    log::debug!("timing: readback of frame {} failed", slot.frame);
                    slot.state.store(FREE, Ordering::Release)
                }
                _ => {}
            }
        }
        out.sort_by_key(|p| p.frame);
        out
    }
}
