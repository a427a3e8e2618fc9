//! vizdeck's GPU core: the one owner of the wgpu instance, adapter, device and queue ([`Gpu`]),
//! and the GPU helpers every view shares: the frame ([`frame::GpuFrame`]) and its uploader,
//! readback ring, timestamp queries, layout and pipeline helpers, the shader-registry mechanism
//! ([`shaders::ShaderSource`], [`shader!`]), the Rust/WGSL layout mirrors ([`mirror`]), PNG and
//! video writers, Vulkan interop (`external`), and the egui painter. It knows no scene: the app
//! re-exports it as `vizdeck::gpu`, and each view registers its own shaders and mirrors
//! (ARCHITECTURE.md, "The crates").

pub mod egui_painter;
pub mod external;
pub mod frame;
pub mod layout;
pub mod mirror;
pub mod png;
pub mod readback;
pub mod shaders;
pub mod timing;
pub mod upload;
pub mod video;

use std::cell::Cell;
use std::collections::HashSet;
use std::sync::{Arc, Mutex};

thread_local! {
    static BLOCKING_WAITS: Cell<u64> = const { Cell::new(0) };
}

/// Blocking waits for the GPU made on this thread so far: every call of the helpers that wait
/// ([`Gpu::wait_idle`], [`Gpu::wait_idle_spin`], [`Gpu::read_buffer_blocking`],
/// [`readback::map_blocking`], [`readback::ReadbackRing::wait`], and
/// [`timing::time_compute_pass`] through them). The frame loop makes none
/// (ARCHITECTURE.md); tests check that a frame leaves this count where it was.
pub fn blocking_waits() -> u64 {
    BLOCKING_WAITS.with(Cell::get)
}

/// Counts one blocking wait on this thread (see [`blocking_waits`]).
pub(crate) fn count_blocking_wait() {
    BLOCKING_WAITS.with(|c| c.set(c.get() + 1));
}

/// Colour format of the scene texture every scene paints into (shown by egui, so gamma-encoded
/// values are written as they are); `scene::SCENE_FORMAT` in the app.
pub const SCENE_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Rgba8Unorm;

/// Environment variable (tests): when `1`, no new device can be made after a loss
/// ([`Gpu::replacement`]).
pub(crate) const NO_NEW_DEVICE_ENV: &str = "VIZDECK_NO_NEW_DEVICE";

/// Which wgpu backend to ask for (`--backend`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum BackendChoice {
    /// Vulkan first, then GL (whatever wgpu finds).
    #[default]
    Auto,
    /// Vulkan only.
    Vulkan,
    /// OpenGL / GLES only.
    Gl,
}

impl BackendChoice {
    /// The wgpu backend set for this choice.
    pub fn backends(self) -> wgpu::Backends {
        match self {
            BackendChoice::Auto => wgpu::Backends::VULKAN | wgpu::Backends::GL,
            BackendChoice::Vulkan => wgpu::Backends::VULKAN,
            BackendChoice::Gl => wgpu::Backends::GL,
        }
    }
}

/// Errors of GPU set-up.
#[derive(Debug, thiserror::Error)]
pub enum GpuError {
    /// No adapter of the requested backend exists.
    #[error("no GPU adapter found for backend {backend:?} ({reason})")]
    NoAdapter {
        /// The backend that was asked for.
        backend: BackendChoice,
        /// wgpu's reason.
        reason: String,
    },
    /// The adapter refused the device.
    #[error("GPU device request failed: {0}")]
    Device(#[from] wgpu::RequestDeviceError),
    /// A surface could not be created for the window.
    #[error("cannot create a GPU surface for the window: {0}")]
    Surface(#[from] wgpu::CreateSurfaceError),
}

/// Adapter facts reported in `--report` and in the overlay.
#[derive(Clone, Debug, serde::Serialize)]
pub struct AdapterSummary {
    /// Adapter name, e.g. "llvmpipe (LLVM 15.0.6, 256 bits)".
    pub name: String,
    /// "Vulkan" or "Gl".
    pub backend: String,
    /// "Cpu", "DiscreteGpu", ...
    pub device_type: String,
    /// Driver name and version string.
    pub driver: String,
    /// Whether GPU pass times are measured (TIMESTAMP_QUERY).
    pub timestamps: bool,
}

/// The single owner of instance, adapter, device and queue. Every scene borrows it.
pub struct Gpu {
    /// The wgpu instance (kept to recreate surfaces).
    pub instance: wgpu::Instance,
    /// The adapter the device came from.
    pub adapter: wgpu::Adapter,
    /// The device.
    pub device: wgpu::Device,
    /// The queue.
    pub queue: wgpu::Queue,
    /// Facts about the adapter.
    pub summary: AdapterSummary,
    /// Uncaptured errors seen so far, each message logged once; tests and headless runs fail on any.
    pub errors: Arc<Mutex<Vec<String>>>,
    /// Why the device was lost, once it was (set by the device-lost callback).
    lost: Arc<Mutex<Option<String>>>,
    /// The backend asked for, so a lost device is replaced by one of the same kind.
    pub backend: BackendChoice,
    /// The format of the scene texture every scene draws into ([`SCENE_FORMAT`]
    /// unless the output is another 8-bit RGBA/BGRA format: see [`Gpu::set_output_format`]).
    pub scene_format: wgpu::TextureFormat,
}

impl Gpu {
    /// Creates the instance and, if `surface_target` is given, a surface for it; then picks an
    /// adapter compatible with that surface and requests a device with TIMESTAMP_QUERY when the
    /// adapter has it, and the adapter's own limits (so large particle counts fit).
    ///
    /// Errors: [`GpuError::NoAdapter`] when no adapter of `backend` exists.
    pub fn new(
        backend: BackendChoice,
        display: Option<Box<dyn wgpu::wgt::WgpuHasDisplayHandle>>,
        surface_target: Option<wgpu::SurfaceTarget<'static>>,
    ) -> Result<(Gpu, Option<wgpu::Surface<'static>>), GpuError> {
        let mut desc = wgpu::InstanceDescriptor::new_without_display_handle().with_env();
        desc.backends = backend.backends();
        desc.display = display;
        let instance = wgpu::Instance::new(desc);
        let surface = match surface_target {
            Some(t) => Some(instance.create_surface(t)?),
            None => None,
        };
        let adapter = pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
            power_preference: wgpu::PowerPreference::HighPerformance,
            force_fallback_adapter: false,
            compatible_surface: surface.as_ref(),
            apply_limit_buckets: false,
        }))
        .map_err(|e| GpuError::NoAdapter {
            backend,
            reason: e.to_string(),
        })?;
        let info = adapter.get_info();
        let timestamps = adapter.features().contains(wgpu::Features::TIMESTAMP_QUERY);
        let mut required_features = wgpu::Features::empty();
        if timestamps {
            required_features |= wgpu::Features::TIMESTAMP_QUERY;
        }
        // The point-cloud rasterizer's one-pass path (64-bit atomic max of depth and id).
        let int64_atomics =
            wgpu::Features::SHADER_INT64 | wgpu::Features::SHADER_INT64_ATOMIC_MIN_MAX;
        if adapter.features().contains(int64_atomics) {
            required_features |= int64_atomics;
        }
        let desc = wgpu::DeviceDescriptor {
            label: Some("vizdeck:device"),
            required_features,
            required_limits: adapter.limits(),
            ..Default::default()
        };
        // Vulkan: with the interop extensions the device has (`--share`'s semaphores, host
        // memory imports); anything else, or if that fails, the plain way.
        let (device, queue) = match external::request_device(&adapter, &desc) {
            Some(Ok(dq)) => dq,
            Some(Err(e)) => {
                log::warn!("{e}; opening the device without them");
                pollster::block_on(adapter.request_device(&desc))?
            }
            None => pollster::block_on(adapter.request_device(&desc))?,
        };
        let errors: Arc<Mutex<Vec<String>>> = Arc::default();
        let sink = errors.clone();
        let seen: Mutex<HashSet<String>> = Mutex::default();
        device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
            let msg = e.to_string();
            let first = seen
                .lock()
                .map(|mut s| s.insert(msg.clone()))
                .unwrap_or(false);
            if first {
                log::error!("wgpu: {msg}");
            }
            if let Ok(mut v) = sink.lock()
                && v.len() < 64
            {
                v.push(msg);
            }
        }));
        let lost: Arc<Mutex<Option<String>>> = Arc::default();
        let lost_sink = lost.clone();
        device.set_device_lost_callback(move |reason, msg| {
            let why = match (reason, msg.trim()) {
                (wgpu::DeviceLostReason::Destroyed, "") => "destroyed".to_string(),
                (wgpu::DeviceLostReason::Destroyed, m) => format!("destroyed: {m}"),
                (wgpu::DeviceLostReason::Unknown, "") => "driver reset or removed".to_string(),
                (wgpu::DeviceLostReason::Unknown, m) => m.to_string(),
            };
            if let Ok(mut l) = lost_sink.lock() {
                l.get_or_insert(why);
            }
        });
        let summary = AdapterSummary {
            name: info.name.clone(),
            backend: format!("{:?}", info.backend),
            device_type: format!("{:?}", info.device_type),
            driver: format!("{} {}", info.driver, info.driver_info)
                .trim()
                .to_string(),
            timestamps,
        };
        log::info!(
            "adapter: {} ({}, {}, {})",
            summary.name,
            summary.backend,
            summary.device_type,
            summary.driver
        );
        Ok((
            Gpu {
                instance,
                adapter,
                device,
                queue,
                summary,
                errors,
                lost,
                backend,
                scene_format: SCENE_FORMAT,
            },
            surface,
        ))
    }

    /// A new `Gpu` to replace one whose device was lost: [`Gpu::new`] with the same backend.
    /// For tests of the path where none can be made, `VIZDECK_NO_NEW_DEVICE=1` makes it fail
    /// as if no adapter were left.
    ///
    /// # Errors
    ///
    /// As [`Gpu::new`].
    pub fn replacement(
        &self,
        display: Option<Box<dyn wgpu::wgt::WgpuHasDisplayHandle>>,
        surface_target: Option<wgpu::SurfaceTarget<'static>>,
    ) -> Result<(Gpu, Option<wgpu::Surface<'static>>), GpuError> {
        if std::env::var_os(NO_NEW_DEVICE_ENV).is_some_and(|v| v == "1") {
            return Err(GpuError::NoAdapter {
                backend: self.backend,
                reason: format!("{NO_NEW_DEVICE_ENV}=1"),
            });
        }
        Gpu::new(self.backend, display, surface_target)
    }

    /// Makes the scenes draw in the format of an output of `format` when it is 8-bit RGBA or
    /// BGRA (sRGB or not: the non-sRGB one), so the deck copies the scene image into the output
    /// instead of drawing it (the app's `--composite copy`); any other output keeps
    /// [`SCENE_FORMAT`]. Call before creating the deck and its scenes.
    pub fn set_output_format(&mut self, format: wgpu::TextureFormat) {
        let f = format.remove_srgb_suffix();
        self.scene_format = match f {
            wgpu::TextureFormat::Rgba8Unorm | wgpu::TextureFormat::Bgra8Unorm => f,
            _ => SCENE_FORMAT,
        };
    }

    /// Whether the adapter is a `DeviceType::Cpu` one (a software rasterizer such as lavapipe),
    /// where the per-adapter defaults differ (ARCHITECTURE.md, "Per-adapter defaults").
    pub fn is_cpu_adapter(&self) -> bool {
        self.summary.device_type == "Cpu"
    }

    /// Uncaptured wgpu errors seen so far (validation errors, out of memory).
    pub fn error_messages(&self) -> Vec<String> {
        self.errors.lock().map(|v| v.clone()).unwrap_or_default()
    }

    /// Why the device was lost (the device-lost callback ran: a driver reset, a removed GPU, or
    /// [`destroy_device`](Gpu::destroy_device)), or `None` while it works. The frame loops check
    /// it before each frame and replace the whole `Gpu` when it is set.
    pub fn lost(&self) -> Option<String> {
        self.lost.lock().ok().and_then(|l| l.clone())
    }

    /// Destroys the device on purpose (`VIZDECK_LOSE_DEVICE_AT_FRAME`, tests): `Device::destroy`,
    /// then a poll, which runs the device-lost callback once the queue is empty, as a real loss
    /// does. Never blocks on the GPU.
    pub fn destroy_device(&self) {
        self.device.destroy();
        let _ = self.device.poll(wgpu::PollType::Poll);
        if let Ok(mut l) = self.lost.lock() {
            // The callback runs only once the queue is empty: the loss is real from now on.
            l.get_or_insert_with(|| "destroyed".to_string());
        }
    }

    /// Reads bytes `offset .. offset + size` of `src` back to the CPU, blocking: the one blocking
    /// buffer read for tests, benches, tools and shutdown (never the frame loop, which reads back
    /// through [`readback::ReadbackRing`] without waiting).
    ///
    /// Records a copy into a new `MAP_READ` staging buffer, submits it (after everything already
    /// submitted, so it sees their results), waits for the device and returns exactly `size`
    /// bytes (none for 0). `src` needs `COPY_SRC` usage.
    ///
    /// # Errors
    /// [`readback::ReadbackError::Map`] when `offset`/`size` are not multiples of 4
    /// (`wgpu::COPY_BUFFER_ALIGNMENT`) or run past the end of `src`, or when mapping fails (a lost
    /// device).
    #[allow(clippy::disallowed_methods)] // the one blocking read, outside any frame
    pub fn read_buffer_blocking(
        &self,
        src: &wgpu::Buffer,
        offset: u64,
        size: u64,
    ) -> Result<Vec<u8>, readback::ReadbackError> {
        let align = wgpu::COPY_BUFFER_ALIGNMENT;
        if !offset.is_multiple_of(align)
            || !size.is_multiple_of(align)
            || offset.saturating_add(size) > src.size()
        {
            return Err(readback::ReadbackError::Map(format!(
                "cannot read {size} bytes at {offset} of a {}-byte buffer (multiples of {align})",
                src.size()
            )));
        }
        if size == 0 {
            return Ok(Vec::new());
        }
        let staging = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("gpu:read_buffer_blocking"),
            size,
            usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ,
            mapped_at_creation: false,
        });
        let mut enc = self
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("gpu:read_buffer_blocking"),
            });
        enc.copy_buffer_to_buffer(src, offset, &staging, 0, size);
        self.queue.submit([enc.finish()]);
        readback::map_blocking(&self.device, &staging)
    }

    /// Blocks until all submitted work is done. Only for headless shutdown, tests and screenshots,
    /// never in the windowed frame loop.
    pub fn wait_idle(&self) {
        count_blocking_wait();
        if let Err(e) = self.device.poll(wgpu::PollType::wait_indefinitely()) {
            log::warn!("device poll failed: {e}");
        }
    }

    /// [`wait_idle`](Gpu::wait_idle) without sleeping: polls until no submission is in flight
    /// (one CPU core busy meanwhile). For measuring when the GPU finished, as CUDA's default
    /// stream synchronisation does (it spins while there are more cores than contexts): a
    /// blocking wait adds the driver's and the OS's wake-up latency, tens of µs on NVIDIA.
    pub fn wait_idle_spin(&self) {
        count_blocking_wait();
        loop {
            match self.device.poll(wgpu::PollType::Poll) {
                Ok(s) if s.is_queue_empty() => return,
                Ok(_) => std::hint::spin_loop(),
                Err(e) => {
                    log::warn!("device poll failed: {e}");
                    return;
                }
            }
        }
    }
}
