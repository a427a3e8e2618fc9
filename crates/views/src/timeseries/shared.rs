//! `--share PATH` for the time-series scene (issue 18): the chart draws S series that a producer
//! process (CUDA / PyTorch, or any Vulkan client) writes into GPU memory vizdeck shares with it,
//! instead of a series source.
//!
//! The shared array is f32 of shape `[S, N]`, strides `[4·N, 4]` bytes (row-major, a PyTorch
//! tensor `torch.empty(S, N)`): row s is series s, a window of its newest N samples, oldest
//! first, uniformly spaced (`--share-series S`, `--share-samples N`; `--share-rate HZ` gives the
//! spacing, 1/HZ seconds, else the x axis counts samples). Each complete frame replaces the
//! window: sample k is drawn at x = k·dt (0 the oldest, (N − 1)·dt the newest). NaN is a gap;
//! ±inf is drawn clamped, outside the automatic value range.
//!
//! Frames ([`SharedFrames`]): each complete frame is copied on the GPU into vizdeck's window
//! buffer (after a GPU wait for the producer's `ready` semaphore where the device shares one,
//! after the socket handshake where it cannot, e.g. lavapipe); a new frame is then written into
//! the mirrors of series 0..S and their pyramids built ([`WindowPasses`]), and the chart
//! decimates and draws them through the same GPU M4 path as every series: exact per pixel
//! column. No value crosses the host: the frame's uploads are the column bounds (computed from
//! N, dt and the view alone) and a few parameters; 8 bytes a series come back (the finite range
//! over the view, for the value axis, a frame or two later). The last complete frame stays after
//! the producer has gone ("producer disconnected" on the scene); a new producer may connect.
//! Beside the device buffer (`buffers[0]`, fd 0) the producer gets a host memfd of the same
//! size (`buffers[1]`, fd 1; "frame n complete (host)" uploads it, counted).

use std::path::{Path, PathBuf};

use super::gpu::window::{MAX_BLOCKS, WINDOW_BLOCK, range_of_keys};
use super::gpu::{Mirrors, Pipelines, WindowPasses};
use crate::gpu::Gpu;
use crate::gpu::external::ExternalMemoryInfo;
use crate::gpu::frame::GpuFrame;
use crate::gpu::readback::{Arrived, Consumer, ReadbackRing};
use crate::interop::frames::SharedFrames;
use crate::interop::listener::Status;
use crate::interop::protocol::{Dtype, PROTOCOL_VERSION, ShareDescription, SharedBuffer, uuid_hex};

/// Default `--share-series`.
pub const DEFAULT_SERIES: u32 = 8;
/// Default `--share-samples`.
pub const DEFAULT_SAMPLES: u64 = 65_536;
/// Largest `--share-series` (the chart's limit on series).
pub const MAX_SERIES: u32 = super::SYNTH_MAX_SERIES as u32;

/// The shape of the shared window: `series` rows of `samples` f32, sampled at `rate` Hz (`None`:
/// the x axis in samples).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WindowShape {
    /// S, 1..=[`MAX_SERIES`].
    pub series: u32,
    /// N, at least 1.
    pub samples: u64,
    /// Samples per second, finite and > 0, or `None`.
    pub rate: Option<f64>,
}

impl Default for WindowShape {
    fn default() -> WindowShape {
        WindowShape {
            series: DEFAULT_SERIES,
            samples: DEFAULT_SAMPLES,
            rate: None,
        }
    }
}

impl WindowShape {
    /// The spacing of the samples on the x axis: 1/rate seconds, else 1 (sample).
    pub fn dt(&self) -> f64 {
        self.rate.map_or(1.0, |r| 1.0 / r)
    }

    /// Bytes of the array: S × N × 4.
    pub fn bytes(&self) -> u64 {
        u64::from(self.series)
            .saturating_mul(self.samples)
            .saturating_mul(4)
    }

    /// Checks the shape against this device, before anything is allocated.
    ///
    /// # Errors
    ///
    /// One line naming the flags: no series or samples, more series than the chart draws, an
    /// array larger than the device's largest buffer or storage binding, or more samples than a
    /// series' GPU mirror holds.
    pub fn check(&self, limits: &wgpu::Limits, pipes: &Pipelines) -> Result<(), String> {
        let (s, n) = (self.series, self.samples);
        if s == 0 || s > MAX_SERIES {
            return Err(format!("--share-series {s}: from 1 to {MAX_SERIES} series"));
        }
        if n == 0 {
            return Err("--share-samples 0: at least 1 sample per series".to_string());
        }
        if let Some(r) = self.rate
            && !(r.is_finite() && r > 0.0)
        {
            return Err(format!("--share-rate {r}: more than 0 samples/s"));
        }
        let max_buffer = limits
            .max_buffer_size
            .min(limits.max_storage_buffer_binding_size);
        if self.bytes() > max_buffer {
            return Err(format!(
                "--share-series {s} × --share-samples {n}: {} bytes of f32 is more than this \
                 device's largest buffer ({max_buffer} bytes)",
                self.bytes()
            ));
        }
        let max_n = pipes.max_samples.min(MAX_BLOCKS * WINDOW_BLOCK);
        if n > max_n {
            return Err(format!(
                "--share-samples {n}: a series holds at most {max_n} samples on this device"
            ));
        }
        Ok(())
    }
}

/// The description a producer receives for the shared buffer `info` holding `shape` (its memory
/// fd is fd 0; the host memory's, `host_bytes` long, fd 1); the semaphores are added by
/// [`SharedFrames`].
pub fn description(
    info: &ExternalMemoryInfo,
    shape: &WindowShape,
    host_bytes: u64,
) -> ShareDescription {
    let dims = [u64::from(shape.series), shape.samples];
    ShareDescription {
        protocol: PROTOCOL_VERSION,
        scene: "timeseries".into(),
        device_uuid: uuid_hex(&info.device_uuid),
        driver_uuid: uuid_hex(&info.driver_uuid),
        buffers: vec![
            SharedBuffer::c_contiguous("series", 0, info, Dtype::F32, &dims),
            SharedBuffer::host_c_contiguous("series", 1, host_bytes, Dtype::F32, &dims),
        ],
        semaphores: None,
    }
}

/// The payload of a range copy: which reduction it carries.
#[derive(Clone, Copy, Debug)]
struct RangeCopy(u64);

/// The shared-window input of the time-series scene (see the module docs).
pub(crate) struct SharedSeries {
    frames: SharedFrames,
    shape: WindowShape,
    /// vizdeck's copy of the newest complete frame, `[S, N]` f32.
    window: wgpu::Buffer,
    passes: WindowPasses,
    /// `frames_shown` of the frame last written into the mirrors (0: none yet).
    ingested: u64,
    /// The mirrors hold the window (blocks given).
    held: bool,
    /// Per series: its finite range over the view, from the last reduction that came back.
    ranges: Vec<Option<(f32, f32)>>,
    /// The reduction wanted for the view: (frame, k0, k1) last reduced.
    reduced: Option<(u64, u64, u64)>,
    /// A reduction ran this frame (its sequence number): copy it back.
    copy_due: Option<u64>,
    /// Sequence numbers of reductions run and of the newest applied.
    seq: u64,
    applied: Option<u64>,
    names: Vec<String>,
}

impl std::fmt::Debug for SharedSeries {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedSeries")
            .field("frames", &self.frames)
            .field("shape", &self.shape)
            .finish_non_exhaustive()
    }
}

impl SharedSeries {
    /// Checks `shape` ([`WindowShape::check`]), allocates the shared buffer, the window and the
    /// passes on `gpu`, and listens on `path`.
    ///
    /// # Errors
    ///
    /// One line, as [`WindowShape::check`] and [`SharedFrames::new`].
    pub fn new(
        gpu: &Gpu,
        pipes: &Pipelines,
        path: &Path,
        shape: WindowShape,
    ) -> Result<SharedSeries, String> {
        shape.check(&gpu.device.limits(), pipes)?;
        let frames = SharedFrames::new(
            gpu,
            path,
            "timeseries",
            shape.bytes(),
            Box::new(move |info, host_bytes| description(info, &shape, host_bytes)),
        )?;
        let window = gpu.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("timeseries:share:window"),
            size: shape.bytes(),
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let passes = WindowPasses::new(&gpu.device, pipes, &window, shape.series, shape.samples);
        Ok(SharedSeries {
            frames,
            shape,
            window,
            passes,
            ingested: 0,
            held: false,
            ranges: vec![None; shape.series as usize],
            reduced: None,
            copy_due: None,
            seq: 0,
            applied: None,
            names: (0..shape.series).map(|i| format!("series {i}")).collect(),
        })
    }

    /// The window's shape.
    pub fn shape(&self) -> WindowShape {
        self.shape
    }

    /// The socket path.
    pub fn path(&self) -> &Path {
        self.frames.path()
    }

    /// The series' names (`series 0` …), for the legend and the report.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// See [`SharedFrames::mark_restarted`].
    pub fn mark_restarted(&mut self) {
        self.frames.mark_restarted();
    }

    /// Once a frame, before the views: takes the producer's newest complete frame into the
    /// window ([`SharedFrames::prepare`]) and, when it is new (or the mirrors were rebuilt),
    /// gives mirrors `0..S` their blocks and queues their pyramids. Returns whether the window
    /// is written into the mirrors this frame, or `Err` with the line to show when a mirror
    /// cannot hold it. Never blocks.
    pub fn take_frame(
        &mut self,
        gpu: &mut GpuFrame<'_>,
        pipes: &Pipelines,
        mirrors: &mut Mirrors,
    ) -> Result<bool, String> {
        if !self.frames.prepare(gpu, &self.window) {
            return Ok(false);
        }
        let shown = self.frames.frames_shown();
        if shown == self.ingested && self.held {
            return Ok(false);
        }
        for i in 0..self.shape.series as usize {
            mirrors
                .hold_gpu_samples(gpu.device(), pipes, i, self.shape.samples)
                .map_err(|e| e.to_string())?;
            mirrors.queue_full_build(i);
        }
        self.ingested = shown;
        self.held = true;
        Ok(true)
    }

    /// The view's samples `[k0, k1)` for the view `[t0, t1)` seconds (sample k at k·dt).
    pub fn samples_in(&self, t0: f64, t1: f64) -> (u64, u64) {
        let (n, dt) = (self.shape.samples, self.shape.dt());
        let k0 = super::gpu::uniform_partition(0, n, dt, |t| t < t0);
        let k1 = super::gpu::uniform_partition(k0, n, dt, |t| t < t1);
        (k0, k1)
    }

    /// Plans the window passes after the mirrors' upload: the write of a new frame (`ingest`),
    /// and the range over the view's samples `[k0, k1)` when the frame or the view changed.
    pub fn plan(
        &mut self,
        gpu: &mut GpuFrame<'_>,
        mirrors: &Mirrors,
        ingest: bool,
        (k0, k1): (u64, u64),
    ) {
        let want = (self.ingested, k0, k1);
        let range = (self.held && self.reduced != Some(want)).then_some((k0, k1));
        self.passes.plan(gpu, &self.window, mirrors, ingest, range);
        if range.is_some() {
            self.reduced = Some(want);
        }
    }

    /// Records the planned passes into the frame's compute pass, before the mirrors' passes.
    pub fn encode(&mut self, pass: &mut wgpu::ComputePass<'_>, mirrors: &Mirrors) {
        if self.passes.encode(pass, mirrors).is_some() {
            self.seq += 1;
            self.copy_due = Some(self.seq);
        }
    }

    /// Copies the ranges reduced this frame into the readback ring (8 bytes a series); a
    /// refused copy reduces again next frame.
    pub fn record_readbacks(
        &mut self,
        device: &wgpu::Device,
        encoder: &mut wgpu::CommandEncoder,
        ring: &mut ReadbackRing,
        me: Consumer,
    ) {
        let Some(seq) = self.copy_due.take() else {
            return;
        };
        let bytes = u64::from(self.shape.series) * 8;
        if !ring.copy_buffer(
            device,
            encoder,
            self.passes.ranges(),
            0,
            bytes,
            me,
            RangeCopy(seq),
        ) {
            self.reduced = None;
        }
    }

    /// A copy made by [`record_readbacks`](SharedSeries::record_readbacks) arrived: its ranges
    /// are used unless newer ones already are. Returns whether `arrived` was one.
    pub fn readback_arrived(&mut self, arrived: &Arrived<'_>) -> bool {
        let Some(&RangeCopy(seq)) = arrived.payload::<RangeCopy>() else {
            return false;
        };
        if arrived.data.len() == self.ranges.len() * 8 && self.applied.is_none_or(|a| a < seq) {
            let keys: Vec<[u32; 2]> = bytemuck::pod_collect_to_vec(arrived.data);
            for (r, k) in self.ranges.iter_mut().zip(keys) {
                *r = range_of_keys(k[0], k[1]);
            }
            self.applied = Some(seq);
        }
        true
    }

    /// Series `i`'s finite range over the view, from the last reduction that came back.
    pub fn range(&self, i: usize) -> Option<(f32, f32)> {
        self.ranges.get(i).copied().flatten()
    }

    /// The line shown on the scene ([`SharedFrames::notice`]).
    pub fn notice(&self) -> Option<String> {
        self.frames.notice()
    }

    /// The listener's status.
    pub fn status(&self) -> Status {
        self.frames.status()
    }

    /// The report's `timeseries.shared` object: [`SharedFrames::metrics`], the shape
    /// (`series`, `samples`, `rate_hz`), and per series its finite `value_range` over the view.
    pub fn metrics(&self) -> serde_json::Value {
        let mut m = self.frames.metrics();
        m["series"] = self.shape.series.into();
        m["samples"] = self.shape.samples.into();
        m["rate_hz"] = self.shape.rate.into();
        m["value_ranges"] = self
            .ranges
            .iter()
            .map(|r| r.map(|(a, b)| serde_json::json!([a, b])))
            .collect::<Vec<_>>()
            .into();
        m
    }
}

/// `--share` path and window shape of a time-series scene built around a producer.
#[derive(Clone, Debug, PartialEq)]
pub struct ShareTarget {
    /// The socket path.
    pub path: PathBuf,
    /// The window's shape.
    pub shape: WindowShape,
}

impl super::TimeSeries {
    /// [`Scene::prepare`](crate::Scene::prepare) of a chart drawing a producer's window:
    /// takes the newest complete frame, the view (following: the whole window; else the paused
    /// range), the value range (fixed, or the visible series' finite ranges over the view as read
    /// back), and the views of the shown series from their mirrors, with no host samples.
    pub(super) fn prepare_shared(&mut self, gpu: &mut GpuFrame<'_>, frame: &crate::FrameCtx) {
        use super::gpu::ViewUniform;
        let (width, height) = self.begin_prepare(frame);
        let Some(input) = self.shared.as_mut() else {
            return;
        };
        let ingest = match input.take_frame(gpu, &self.gpu.pipes, &mut self.gpu.mirrors) {
            Ok(i) => i,
            Err(e) => {
                self.drawn.gpu_notes.push(e);
                false
            }
        };
        if !input.held {
            // Nothing to draw before the first frame.
            self.gpu
                .mirrors
                .begin_views(width, &ViewUniform::new(-1.0, 1.0, width, height, 0));
            self.gpu.mirrors.upload(gpu, &self.gpu.pipes, &[]);
            return;
        }
        let shape = input.shape();
        let dt = shape.dt();
        let whole = (0.0, shape.samples as f64 * dt);
        let (t0, t1) = if self.follow {
            whole
        } else {
            self.paused_range
        };
        let (k0, k1) = input.samples_in(t0, t1);
        let (lo, hi) = match self.fixed_y {
            Some(r) => r,
            None => {
                let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
                for i in 0..shape.series as usize {
                    if self.visible.get(i).copied().unwrap_or(true)
                        && let Some((a, b)) = input.range(i)
                    {
                        lo = lo.min(f64::from(a));
                        hi = hi.max(f64::from(b));
                    }
                }
                super::axis::padded_range(lo, hi)
            }
        };
        self.drawn.view = Some(super::View { t0, t1, lo, hi });
        self.gpu
            .mirrors
            .begin_views(width, &ViewUniform::new(lo, hi, width, height, 0));
        for i in 0..shape.series as usize {
            if !self.visible.get(i).copied().unwrap_or(true) {
                continue;
            }
            let name = &input.names()[i];
            let color = super::series_color(i);
            match self.gpu.mirrors.add_uniform_view(
                &self.gpu.pipes,
                i,
                name,
                dt,
                (t0, t1),
                color,
                i as u32,
            ) {
                Ok(()) => self.drawn.points_in_view += k1 - k0,
                Err(e) => self.drawn.gpu_notes.push(e.to_string()),
            }
        }
        self.gpu.mirrors.upload(gpu, &self.gpu.pipes, &[]);
        input.plan(gpu, &self.gpu.mirrors, ingest, (k0, k1));
    }
}
