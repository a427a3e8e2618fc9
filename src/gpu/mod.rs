//! The one owner of the wgpu instance, adapter, device and queue ([`Gpu`]), and the GPU helpers
//! every scene shares: the shader registry, ping-pong upload buffers, readback and timestamp
//! queries.

pub mod fft;
pub mod layout;
pub mod readback;
pub mod shaders;
pub mod timing;
pub mod upload;

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

/// A bind group layout entry for a buffer of type `ty` (uniform or storage) at `binding`, seen by
/// `visibility`, without a dynamic offset or a minimum size.
pub fn buffer_entry(
    binding: u32,
    visibility: wgpu::ShaderStages,
    ty: wgpu::BufferBindingType,
) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility,
        ty: wgpu::BindingType::Buffer {
            ty,
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        count: None,
    }
}

/// Which wgpu backend to ask for (`--backend`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
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
        let (device, queue) =
            pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
                label: Some("vizdeck:device"),
                required_features,
                required_limits: adapter.limits(),
                ..Default::default()
            }))?;
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
        device.set_device_lost_callback(|reason, msg| {
            log::error!("GPU device lost ({reason:?}): {msg}");
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
            },
            surface,
        ))
    }

    /// Uncaptured wgpu errors seen so far (validation errors, out of memory).
    pub fn error_messages(&self) -> Vec<String> {
        self.errors.lock().map(|v| v.clone()).unwrap_or_default()
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
        if let Err(e) = self.device.poll(wgpu::PollType::wait_indefinitely()) {
            log::warn!("device poll failed: {e}");
        }
    }
}
