//! GPU buffers another process (CUDA, or any Vulkan client) can write into with no host copy
//! (issue 18): [`ExternalMemoryBuffer`], Vulkan *external memory* allocated by vizdeck through
//! wgpu-hal and ash, exported as an opaque POSIX file descriptor and wrapped as a `wgpu::Buffer`.
//!
//! wgpu 30 cannot export its own allocations (gfx-rs/wgpu#7819), so the buffer and its memory are
//! made here with the raw `ash::Device` wgpu-hal hands out (`wgpu::Device::as_hal`), then given to
//! wgpu with `wgpu::hal::vulkan::Buffer::from_raw_managed` and
//! `wgpu::Device::create_buffer_from_hal`. From then on wgpu owns both: the buffer is destroyed and
//! its memory freed (`vkDestroyBuffer`, then `vkFreeMemory`) when the last `wgpu::Buffer` handle is
//! gone and the GPU no longer uses it. Every fd exported ([`ExternalMemoryBuffer::export_fd`]) is a
//! reference of its own to the memory (Vulkan 1.3 spec §11.2.6, "File Descriptor External
//! Memory"): an importer keeps the memory alive after vizdeck dropped it, and vice versa.
//!
//! Vulkan spec sections used: §12.1 "Buffers" (`VkExternalMemoryBufferCreateInfo`), §11.2.4
//! "Device Memory Allocation" (`VkExportMemoryAllocateInfo`, `VkMemoryDedicatedAllocateInfo`),
//! §11.2.6 (`vkGetMemoryFdKHR`, `VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT`), §12.7 "Resource
//! Memory Association" (`vkGetBufferMemoryRequirements2`, `VkMemoryDedicatedRequirements`), §36.4
//! "External Memory Handle Types" (`vkGetPhysicalDeviceExternalBufferProperties`) and §5.1
//! "Physical Devices" (`VkPhysicalDeviceIDProperties`: the device UUID a CUDA device is matched
//! against).
//!
//! The producer's writes are ordered against vizdeck's reads by [`ExternalSemaphore`]s: Vulkan
//! timeline semaphores (§7.4 "Semaphores", `VkSemaphoreTypeCreateInfo`) exported as opaque fds
//! (`VK_KHR_external_semaphore_fd`, §7.4.5 "Importing Semaphore Payloads"; CUDA:
//! `cudaImportExternalSemaphore` with `cudaExternalSemaphoreHandleTypeTimelineSemaphoreFd`).
//! vizdeck's queue waits for the value a producer signals and signals one back
//! (`wgpu::hal::vulkan::Queue::add_wait_semaphore` / `add_signal_semaphore`, applied to the
//! frame's one submit): the waits are on the GPUs, never on vizdeck's CPU. wgpu-hal 30 does not
//! enable `VK_KHR_external_semaphore_fd`; [`request_device`] opens the device through
//! `wgpu::hal::vulkan::Adapter::open_with_callback` with it (and `VK_EXT_external_memory_host`)
//! added where the device has them.

use std::ffi::CStr;
use std::os::fd::{FromRawFd, OwnedFd};

use ash::vk;
use wgpu::hal::api::Vulkan;

/// The one handle type shared: an opaque POSIX fd (what `cudaImportExternalMemory` takes as
/// `cudaExternalMemoryHandleTypeOpaqueFd`).
pub const HANDLE_TYPE: vk::ExternalMemoryHandleTypeFlags =
    vk::ExternalMemoryHandleTypeFlags::OPAQUE_FD;

/// The device extension exporting memory as an fd; wgpu-hal 30 enables it whenever the device
/// supports it.
pub const EXTERNAL_MEMORY_FD: &CStr = ash::khr::external_memory_fd::NAME;

/// Device extensions vizdeck adds to wgpu-hal's own when the device supports them
/// ([`request_device`]): exporting timeline semaphores as fds, and importing host memory.
pub(crate) const INTEROP_EXTENSIONS: [&CStr; 2] = [
    ash::khr::external_semaphore_fd::NAME,
    ash::ext::external_memory_host::NAME,
];

/// Opens a device on `adapter` as `Adapter::request_device(desc)` does, with the
/// [`INTEROP_EXTENSIONS`] the device supports enabled besides wgpu-hal's (Vulkan 1.1 or newer;
/// both extensions build on external memory and semaphores, core in 1.1), through
/// `wgpu::hal::vulkan::Adapter::open_with_callback` and `Adapter::create_device_from_hal`.
///
/// Returns `None` when that path does not apply (not a Vulkan adapter, Vulkan 1.0, or none of
/// the extensions supported): the caller requests the device the plain way. `Some(Err)` is the
/// hal's reason, one line; the caller falls back to the plain way too.
pub(crate) fn request_device(
    adapter: &wgpu::Adapter,
    desc: &wgpu::DeviceDescriptor<'_>,
) -> Option<Result<(wgpu::Device, wgpu::Queue), String>> {
    // SAFETY: the hal adapter is only read, and used to open a device wgpu then owns.
    let hal = unsafe { adapter.as_hal::<Vulkan>() }?;
    let caps = hal.physical_device_capabilities();
    if caps.properties().api_version < vk::API_VERSION_1_1 {
        return None;
    }
    let extra: Vec<&'static CStr> = INTEROP_EXTENSIONS
        .into_iter()
        .filter(|e| caps.supports_extension(e))
        .collect();
    if extra.is_empty() {
        return None;
    }
    let add = extra.clone();
    // SAFETY: the callback only adds supported extensions; it removes nothing.
    let open = unsafe {
        hal.open_with_callback(
            desc.required_features,
            &desc.required_limits,
            &desc.memory_hints,
            Some(Box::new(move |args| {
                for e in add {
                    if !args.extensions.contains(&e) {
                        args.extensions.push(e);
                    }
                }
            })),
        )
    };
    drop(hal);
    let open = match open {
        Ok(o) => o,
        Err(e) => {
            return Some(Err(format!(
                "opening the Vulkan device with {extra:?}: {e}"
            )));
        }
    };
    // SAFETY: `open` was made from this adapter's hal adapter with `desc`'s features.
    let made = unsafe { adapter.create_device_from_hal::<Vulkan>(open, desc) };
    Some(made.map_err(|e| e.to_string()))
}

/// Why a shared buffer cannot be made or exported. Each message is one line, fit to be shown as
/// the reason `--share` is refused.
#[derive(Debug, thiserror::Error)]
pub enum ExternalMemoryError {
    /// The wgpu device does not run on Vulkan (GL, or no wgpu-core device).
    #[error("shared GPU buffers need the Vulkan backend (this device is not a Vulkan device)")]
    NotVulkan,
    /// The Vulkan instance or device is older than 1.1 (external memory is core from 1.1).
    #[error("shared GPU buffers need Vulkan 1.1 (instance {instance}, device {device})")]
    OldVulkan {
        /// The instance's API version, "major.minor".
        instance: String,
        /// The physical device's API version, "major.minor".
        device: String,
    },
    /// A device extension is missing (not supported, or not enabled by wgpu-hal).
    #[error(
        "the Vulkan device {device:?} lacks {extension}, needed to share GPU memory with another process"
    )]
    MissingExtension {
        /// The extension's name, e.g. `VK_KHR_external_memory_fd`.
        extension: String,
        /// The device's name.
        device: String,
    },
    /// The driver cannot export a buffer of this usage as an opaque fd
    /// (`VkExternalBufferProperties` lacks `EXPORTABLE`).
    #[error(
        "the Vulkan device cannot export buffer memory as an opaque fd (external memory features {0:?})"
    )]
    NotExportable(vk::ExternalMemoryFeatureFlags),
    /// The size or usage asked for cannot be shared.
    #[error("cannot share this buffer: {0}")]
    BadRequest(String),
    /// No memory type of the device fits the buffer's requirements.
    #[error("no Vulkan memory type fits the shared buffer (memory type bits {0:#x})")]
    NoMemoryType(u32),
    /// The `wgpu::Buffer` was destroyed (`Buffer::destroy`): its memory can no longer be exported.
    #[error("the shared buffer was destroyed")]
    Destroyed,
    /// A Vulkan call failed.
    #[error("{call} failed: {result}")]
    Vulkan {
        /// The Vulkan function, e.g. `vkAllocateMemory`.
        call: &'static str,
        /// Its result code.
        result: vk::Result,
    },
}

/// What an importer needs besides the fd, and what the JSON description of `--share` carries.
/// The importer must allocate exactly `allocation_size` bytes of memory type `memory_type_index`
/// (Vulkan: `VkMemoryAllocateInfo`; CUDA: `cudaExternalMemoryHandleDesc::size`), as a dedicated
/// allocation when `dedicated` (`VkMemoryDedicatedAllocateInfo`; CUDA: `cudaExternalMemoryDedicated`),
/// on the device whose `device_uuid` matches (CUDA: `cudaDeviceProp::uuid`).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ExternalMemoryInfo {
    /// Bytes of the buffer (the `wgpu::Buffer`'s size; the range a producer writes).
    pub size: u64,
    /// Bytes of the exported `VkDeviceMemory` (≥ `size`: the buffer's memory requirements).
    pub allocation_size: u64,
    /// The memory type index the memory was allocated from.
    pub memory_type_index: u32,
    /// Whether the memory is a dedicated allocation for this one buffer.
    pub dedicated: bool,
    /// `VkPhysicalDeviceIDProperties::deviceUUID` of vizdeck's device.
    pub device_uuid: [u8; vk::UUID_SIZE],
    /// `VkPhysicalDeviceIDProperties::driverUUID`: importer and exporter must match it too.
    pub driver_uuid: [u8; vk::UUID_SIZE],
    /// The physical device's name, for messages.
    pub device_name: String,
}

/// A `wgpu::Buffer` whose memory is Vulkan external memory another process can import: vizdeck
/// allocates it, a producer (CUDA through `cudaImportExternalMemory`, or a Vulkan client through
/// `VkImportMemoryFdInfoKHR`) writes into it on the same GPU, and vizdeck reads or draws it.
///
/// Dropping it drops vizdeck's `wgpu::Buffer` handle; wgpu frees the Vulkan buffer, then its
/// memory, once no other handle (bind groups, clones) and no GPU work uses it. fds exported and
/// not yet imported are the caller's to close (they are `OwnedFd`s).
pub struct ExternalMemoryBuffer {
    buffer: wgpu::Buffer,
    memory: vk::DeviceMemory,
    fd_fn: ash::khr::external_memory_fd::Device,
    info: ExternalMemoryInfo,
}

impl std::fmt::Debug for ExternalMemoryBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExternalMemoryBuffer")
            .field("buffer", &self.buffer)
            .field("memory", &self.memory)
            .field("info", &self.info)
            .finish_non_exhaustive()
    }
}

/// The Vulkan buffer and memory made so far, destroyed (buffer first) unless handed to wgpu.
struct Pending<'a> {
    device: &'a ash::Device,
    buffer: vk::Buffer,
    memory: vk::DeviceMemory,
}

impl Drop for Pending<'_> {
    fn drop(&mut self) {
        // SAFETY: both handles were made on `device` by `ExternalMemoryBuffer::new`, no GPU work
        // uses them yet, and they are null once handed to wgpu.
        unsafe {
            if self.buffer != vk::Buffer::null() {
                self.device.destroy_buffer(self.buffer, None);
            }
            if self.memory != vk::DeviceMemory::null() {
                self.device.free_memory(self.memory, None);
            }
        }
    }
}

fn vk_err(call: &'static str) -> impl Fn(vk::Result) -> ExternalMemoryError {
    move |result| ExternalMemoryError::Vulkan { call, result }
}

/// A Vulkan version as "major.minor".
pub(crate) fn version(v: u32) -> String {
    format!("{}.{}", vk::api_version_major(v), vk::api_version_minor(v))
}

/// Why [`check_device`] refuses a device, for each interop object's own error.
pub(crate) enum Unmet {
    /// The instance or the physical device is older than asked ("major.minor" each).
    OldVulkan {
        /// The instance's API version.
        instance: String,
        /// The physical device's API version.
        device: String,
    },
    /// The extension is not enabled on the device.
    MissingExtension {
        /// The extension's name.
        extension: String,
        /// The device's name.
        device: String,
    },
}

/// What every interop object checks first on `hal`'s device (Vulkan 1.3 spec §5.1): that the
/// instance and the physical device are at least Vulkan `min` and `extension` is enabled.
/// Returns the device's name.
pub(crate) fn check_device(
    hal: &wgpu::hal::vulkan::Device,
    min: u32,
    extension: &CStr,
) -> Result<String, Unmet> {
    let shared = hal.shared_instance();
    // SAFETY: a plain query on the device's own physical device.
    let props = unsafe {
        shared
            .raw_instance()
            .get_physical_device_properties(hal.raw_physical_device())
    };
    let name = props
        .device_name_as_c_str()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if shared.instance_api_version() < min || props.api_version < min {
        return Err(Unmet::OldVulkan {
            instance: version(shared.instance_api_version()),
            device: version(props.api_version),
        });
    }
    if !hal.enabled_device_extensions().contains(&extension) {
        return Err(Unmet::MissingExtension {
            extension: extension.to_string_lossy().into_owned(),
            device: name,
        });
    }
    Ok(name)
}

/// The Vulkan buffer usage of a wgpu usage (as wgpu-hal's `conv::map_buffer_usage`); `MAP_READ`
/// and `MAP_WRITE` are refused: wgpu cannot map a buffer made outside it.
///
/// Errors: [`ExternalMemoryError::BadRequest`] for a mappable usage or an empty one.
pub fn vk_buffer_usage(
    usage: wgpu::BufferUsages,
) -> Result<vk::BufferUsageFlags, ExternalMemoryError> {
    use wgpu::BufferUsages as U;
    if usage.intersects(U::MAP_READ | U::MAP_WRITE) {
        return Err(ExternalMemoryError::BadRequest(format!(
            "usage {usage:?}: wgpu cannot map a buffer it did not allocate"
        )));
    }
    let pairs = [
        (U::COPY_SRC, vk::BufferUsageFlags::TRANSFER_SRC),
        (U::COPY_DST, vk::BufferUsageFlags::TRANSFER_DST),
        (U::UNIFORM, vk::BufferUsageFlags::UNIFORM_BUFFER),
        (U::STORAGE, vk::BufferUsageFlags::STORAGE_BUFFER),
        (U::INDEX, vk::BufferUsageFlags::INDEX_BUFFER),
        (U::VERTEX, vk::BufferUsageFlags::VERTEX_BUFFER),
        (U::INDIRECT, vk::BufferUsageFlags::INDIRECT_BUFFER),
    ];
    let mut flags = vk::BufferUsageFlags::empty();
    for (wgpu_usage, vk_usage) in pairs {
        if usage.contains(wgpu_usage) {
            flags |= vk_usage;
        }
    }
    if flags.is_empty() {
        return Err(ExternalMemoryError::BadRequest(format!(
            "usage {usage:?} has no usage a shared buffer can take"
        )));
    }
    Ok(flags)
}

/// The memory type index for the buffer: device-local where one fits `type_bits` (the buffer's
/// `VkMemoryRequirements::memoryTypeBits`), else the first that fits (a software rasterizer's
/// memory is host memory either way); `None` when none fits.
pub fn memory_type(props: &vk::PhysicalDeviceMemoryProperties, type_bits: u32) -> Option<u32> {
    let types = &props.memory_types[..props.memory_type_count as usize];
    memory_type_preferring(types, type_bits, vk::MemoryPropertyFlags::DEVICE_LOCAL)
}

/// The index of the first of `types` that fits `type_bits` and has the `preferred` flags, else
/// of the first that fits; `None` when none fits.
pub(crate) fn memory_type_preferring(
    types: &[vk::MemoryType],
    type_bits: u32,
    preferred: vk::MemoryPropertyFlags,
) -> Option<u32> {
    let fits = |i: &usize| type_bits & (1 << i) != 0;
    (0..types.len())
        .filter(fits)
        .find(|&i| types[i].property_flags.contains(preferred))
        .or_else(|| (0..types.len()).find(fits))
        .map(|i| i as u32)
}

impl ExternalMemoryBuffer {
    /// The usage of a shared data buffer: a storage buffer (the scene reads it in its passes)
    /// that can be copied from and into.
    pub const USAGE: wgpu::BufferUsages = wgpu::BufferUsages::STORAGE
        .union(wgpu::BufferUsages::COPY_SRC)
        .union(wgpu::BufferUsages::COPY_DST);

    /// Allocates `size` bytes (a multiple of 4, at most the device's `max_buffer_size`) of
    /// exportable Vulkan memory on `device` and wraps it as a `wgpu::Buffer` labelled `label` with
    /// `usage` ([`Self::USAGE`] for scene data; no `MAP_*`). The buffer's contents start undefined
    /// (a producer writes them); wgpu treats them as initialized and never clears them.
    ///
    /// Steps: `vkGetPhysicalDeviceExternalBufferProperties` (exportable? dedicated only?),
    /// `vkCreateBuffer` with `VkExternalMemoryBufferCreateInfo` (OPAQUE_FD),
    /// `vkGetBufferMemoryRequirements2` with `VkMemoryDedicatedRequirements`, `vkAllocateMemory`
    /// with `VkExportMemoryAllocateInfo` (+ `VkMemoryDedicatedAllocateInfo` when the driver requires
    /// or prefers it), `vkBindBufferMemory`, then `Buffer::from_raw_managed` and
    /// `Device::create_buffer_from_hal`.
    ///
    /// # Errors
    ///
    /// One-line [`ExternalMemoryError`]s: not a Vulkan device, Vulkan older than 1.1,
    /// `VK_KHR_external_memory_fd` missing, not exportable, bad size or usage, no memory type, or
    /// the failing Vulkan call. Nothing is left allocated on an error.
    pub fn new(
        device: &wgpu::Device,
        label: &str,
        size: u64,
        usage: wgpu::BufferUsages,
    ) -> Result<ExternalMemoryBuffer, ExternalMemoryError> {
        let vk_usage = vk_buffer_usage(usage)?;
        let max = device.limits().max_buffer_size;
        if size == 0 || !size.is_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT) || size > max {
            return Err(ExternalMemoryError::BadRequest(format!(
                "size {size} bytes (needs a non-zero multiple of {} up to {max})",
                wgpu::COPY_BUFFER_ALIGNMENT
            )));
        }
        // SAFETY: the hal device is only used to create, query and (on failure) destroy objects
        // of our own; the guard is dropped before wgpu takes the buffer.
        let (fd_fn, memory, raw_buffer, info) = {
            let hal = unsafe { device.as_hal::<Vulkan>() }.ok_or(ExternalMemoryError::NotVulkan)?;
            let raw_device = hal.raw_device().clone();
            let physical = hal.raw_physical_device();
            let shared = hal.shared_instance();
            let instance = shared.raw_instance();

            // §5.1: version, name and the UUIDs.
            let device_name = check_device(&hal, vk::API_VERSION_1_1, EXTERNAL_MEMORY_FD).map_err(
                |u| match u {
                    Unmet::OldVulkan { instance, device } => {
                        ExternalMemoryError::OldVulkan { instance, device }
                    }
                    Unmet::MissingExtension { extension, device } => {
                        ExternalMemoryError::MissingExtension { extension, device }
                    }
                },
            )?;
            let mut id = vk::PhysicalDeviceIDProperties::default();
            let mut props2 = vk::PhysicalDeviceProperties2::default().push_next(&mut id);
            unsafe { instance.get_physical_device_properties2(physical, &mut props2) };
            let (device_uuid, driver_uuid) = (id.device_uuid, id.driver_uuid);

            // §36.4: can a buffer of this usage be exported as an opaque fd?
            let mut external = vk::ExternalBufferProperties::default();
            unsafe {
                instance.get_physical_device_external_buffer_properties(
                    physical,
                    &vk::PhysicalDeviceExternalBufferInfo::default()
                        .usage(vk_usage)
                        .handle_type(HANDLE_TYPE),
                    &mut external,
                )
            };
            let features = external.external_memory_properties.external_memory_features;
            if !features.contains(vk::ExternalMemoryFeatureFlags::EXPORTABLE) {
                return Err(ExternalMemoryError::NotExportable(features));
            }

            // §12.1: the buffer, declared exportable.
            let mut external_info =
                vk::ExternalMemoryBufferCreateInfo::default().handle_types(HANDLE_TYPE);
            let buffer_info = vk::BufferCreateInfo::default()
                .size(size)
                .usage(vk_usage)
                .sharing_mode(vk::SharingMode::EXCLUSIVE)
                .push_next(&mut external_info);
            let mut pending = Pending {
                device: &raw_device,
                buffer: vk::Buffer::null(),
                memory: vk::DeviceMemory::null(),
            };
            pending.buffer = unsafe { raw_device.create_buffer(&buffer_info, None) }
                .map_err(vk_err("vkCreateBuffer"))?;

            // §12.7: its requirements, dedicated or not.
            let mut dedicated_req = vk::MemoryDedicatedRequirements::default();
            let mut req2 = vk::MemoryRequirements2::default().push_next(&mut dedicated_req);
            unsafe {
                raw_device.get_buffer_memory_requirements2(
                    &vk::BufferMemoryRequirementsInfo2::default().buffer(pending.buffer),
                    &mut req2,
                )
            };
            let req = req2.memory_requirements;
            let dedicated = features.contains(vk::ExternalMemoryFeatureFlags::DEDICATED_ONLY)
                || dedicated_req.requires_dedicated_allocation == vk::TRUE
                || dedicated_req.prefers_dedicated_allocation == vk::TRUE;
            let mem_props = unsafe { instance.get_physical_device_memory_properties(physical) };
            let memory_type_index = memory_type(&mem_props, req.memory_type_bits)
                .ok_or(ExternalMemoryError::NoMemoryType(req.memory_type_bits))?;

            // §11.2.4: exportable memory, bound to the buffer.
            let mut export = vk::ExportMemoryAllocateInfo::default().handle_types(HANDLE_TYPE);
            let mut dedicated_info =
                vk::MemoryDedicatedAllocateInfo::default().buffer(pending.buffer);
            let mut alloc = vk::MemoryAllocateInfo::default()
                .allocation_size(req.size)
                .memory_type_index(memory_type_index)
                .push_next(&mut export);
            if dedicated {
                alloc = alloc.push_next(&mut dedicated_info);
            }
            pending.memory = unsafe { raw_device.allocate_memory(&alloc, None) }
                .map_err(vk_err("vkAllocateMemory"))?;
            unsafe { raw_device.bind_buffer_memory(pending.buffer, pending.memory, 0) }
                .map_err(vk_err("vkBindBufferMemory"))?;

            let fd_fn = ash::khr::external_memory_fd::Device::new(instance, &raw_device);
            let (raw_buffer, memory) = (pending.buffer, pending.memory);
            pending.buffer = vk::Buffer::null();
            pending.memory = vk::DeviceMemory::null();
            drop(pending);
            let info = ExternalMemoryInfo {
                size,
                allocation_size: req.size,
                memory_type_index,
                dedicated,
                device_uuid,
                driver_uuid,
                device_name,
            };
            (fd_fn, memory, raw_buffer, info)
        };

        // SAFETY: the buffer is bound to the whole of `memory` (offset 0, `allocation_size`
        // bytes); wgpu owns both from here (destroy, then free) and never maps them.
        let buffer = unsafe {
            let hal_buffer = wgpu::hal::vulkan::Buffer::from_raw_managed(
                raw_buffer,
                memory,
                0,
                info.allocation_size,
            );
            device.create_buffer_from_hal::<Vulkan>(
                hal_buffer,
                &wgpu::BufferDescriptor {
                    label: Some(label),
                    size,
                    usage,
                    mapped_at_creation: false,
                },
            )
        };
        Ok(ExternalMemoryBuffer {
            buffer,
            memory,
            fd_fn,
            info,
        })
    }

    /// The wgpu buffer (bind it, copy from it; do not `destroy` it while fds are still to be
    /// exported).
    pub fn buffer(&self) -> &wgpu::Buffer {
        &self.buffer
    }

    /// What an importer needs besides the fd.
    pub fn info(&self) -> &ExternalMemoryInfo {
        &self.info
    }

    /// A new opaque fd for the buffer's memory (`vkGetMemoryFdKHR`, §11.2.6): each call is a new
    /// reference, handed to one importer (importing transfers the fd's ownership to the driver;
    /// an fd never imported closes when dropped).
    ///
    /// # Errors
    ///
    /// [`ExternalMemoryError::Destroyed`] after `Buffer::destroy`; `Vulkan` when the call fails
    /// (e.g. out of file descriptors: `VK_ERROR_TOO_MANY_OBJECTS`).
    pub fn export_fd(&self) -> Result<OwnedFd, ExternalMemoryError> {
        // SAFETY: the hal guard keeps the buffer (and so its memory) from being destroyed while
        // the fd is made; nothing is destroyed through it.
        let _alive =
            unsafe { self.buffer.as_hal::<Vulkan>() }.ok_or(ExternalMemoryError::Destroyed)?;
        let get = vk::MemoryGetFdInfoKHR::default()
            .memory(self.memory)
            .handle_type(HANDLE_TYPE);
        let fd = unsafe { self.fd_fn.get_memory_fd(&get) }.map_err(vk_err("vkGetMemoryFdKHR"))?;
        // SAFETY: vkGetMemoryFdKHR returns a new fd the caller owns.
        Ok(unsafe { OwnedFd::from_raw_fd(fd) })
    }
}

/// The semaphore device extension vizdeck exports timeline semaphores with.
pub const EXTERNAL_SEMAPHORE_FD: &CStr = ash::khr::external_semaphore_fd::NAME;

/// Why a shared semaphore cannot be made, exported or used. One line each.
#[derive(Debug, thiserror::Error)]
pub enum ExternalSemaphoreError {
    /// The wgpu device does not run on Vulkan.
    #[error("shared semaphores need the Vulkan backend (this device is not a Vulkan device)")]
    NotVulkan,
    /// Timeline semaphores are core from Vulkan 1.2 only.
    #[error("shared timeline semaphores need Vulkan 1.2 (device {0})")]
    OldVulkan(String),
    /// `VK_KHR_external_semaphore_fd` is missing (lavapipe of Mesa 22 has none).
    #[error("the Vulkan device {device:?} lacks {extension}, needed to share a semaphore")]
    MissingExtension {
        /// The extension's name.
        extension: String,
        /// The device's name.
        device: String,
    },
    /// The driver cannot export a timeline semaphore as an opaque fd.
    #[error(
        "the Vulkan device cannot export a timeline semaphore as an opaque fd (features {0:?})"
    )]
    NotExportable(vk::ExternalSemaphoreFeatureFlags),
    /// A Vulkan call failed.
    #[error("{call} failed: {result}")]
    Vulkan {
        /// The Vulkan function.
        call: &'static str,
        /// Its result code.
        result: vk::Result,
    },
}

fn sem_err(call: &'static str) -> impl Fn(vk::Result) -> ExternalSemaphoreError {
    move |result| ExternalSemaphoreError::Vulkan { call, result }
}

/// A Vulkan timeline semaphore (a 64-bit counter that only grows; Vulkan 1.3 spec §7.4.2
/// "Semaphore Signaling", §7.4.4 "Host Operations on Semaphores") whose payload another process
/// imports from an opaque fd: CUDA (`cudaImportExternalSemaphore`,
/// `cudaExternalSemaphoreHandleTypeTimelineSemaphoreFd`; `cudaSignalExternalSemaphoresAsync` /
/// `cudaWaitExternalSemaphoresAsync` with a fence value) or Vulkan (`vkImportSemaphoreFdKHR`).
///
/// vizdeck's queue waits for a value ([`wait_on_next_submit`](Self::wait_on_next_submit)) or
/// signals one ([`signal_on_next_submit`](Self::signal_on_next_submit)) in its next submit, the
/// frame's one. The CPU only reads the counter ([`value`](Self::value), never blocking) or, when
/// a producer has gone without signalling what it promised, signals it from the host
/// ([`signal_from_host`](Self::signal_from_host)) so vizdeck's queue does not wait forever.
///
/// It keeps a clone of the `wgpu::Device` so the Vulkan device outlives it; dropping it destroys
/// the semaphore (`vkDestroySemaphore`) — drop it only once no submitted work waits on or signals
/// it (the owner defers the drop with `Queue::on_submitted_work_done`).
pub struct ExternalSemaphore {
    device: wgpu::Device,
    raw: vk::Semaphore,
    fd_fn: ash::khr::external_semaphore_fd::Device,
    label: String,
}

impl std::fmt::Debug for ExternalSemaphore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExternalSemaphore")
            .field("label", &self.label)
            .field("raw", &self.raw)
            .finish_non_exhaustive()
    }
}

impl ExternalSemaphore {
    /// Makes an exportable timeline semaphore at value `initial` on `device`, named `label` in
    /// the Vulkan debug utilities where they are on.
    ///
    /// Checks: Vulkan (1.2 for timeline semaphores), `VK_KHR_external_semaphore_fd` enabled
    /// (see [`request_device`]), and `vkGetPhysicalDeviceExternalSemaphoreProperties` for a
    /// timeline semaphore exportable as `OPAQUE_FD`.
    ///
    /// # Errors
    ///
    /// One-line [`ExternalSemaphoreError`]s, nothing left allocated.
    pub fn new(
        device: &wgpu::Device,
        label: &str,
        initial: u64,
    ) -> Result<ExternalSemaphore, ExternalSemaphoreError> {
        // SAFETY: the hal device only creates and queries objects of our own.
        let hal = unsafe { device.as_hal::<Vulkan>() }.ok_or(ExternalSemaphoreError::NotVulkan)?;
        let raw_device = hal.raw_device();
        let physical = hal.raw_physical_device();
        let instance = hal.shared_instance().raw_instance();
        check_device(&hal, vk::API_VERSION_1_2, EXTERNAL_SEMAPHORE_FD).map_err(|u| match u {
            Unmet::OldVulkan { device, .. } => ExternalSemaphoreError::OldVulkan(device),
            Unmet::MissingExtension { extension, device } => {
                ExternalSemaphoreError::MissingExtension { extension, device }
            }
        })?;
        let handle = vk::ExternalSemaphoreHandleTypeFlags::OPAQUE_FD;
        let mut type_info = vk::SemaphoreTypeCreateInfo::default()
            .semaphore_type(vk::SemaphoreType::TIMELINE)
            .initial_value(initial);
        let mut props_out = vk::ExternalSemaphoreProperties::default();
        unsafe {
            instance.get_physical_device_external_semaphore_properties(
                physical,
                &vk::PhysicalDeviceExternalSemaphoreInfo::default()
                    .handle_type(handle)
                    .push_next(&mut type_info),
                &mut props_out,
            )
        };
        let features = props_out.external_semaphore_features;
        if !features.contains(vk::ExternalSemaphoreFeatureFlags::EXPORTABLE) {
            return Err(ExternalSemaphoreError::NotExportable(features));
        }
        let mut export = vk::ExportSemaphoreCreateInfo::default().handle_types(handle);
        let mut type_info = vk::SemaphoreTypeCreateInfo::default()
            .semaphore_type(vk::SemaphoreType::TIMELINE)
            .initial_value(initial);
        let info = vk::SemaphoreCreateInfo::default()
            .push_next(&mut type_info)
            .push_next(&mut export);
        let raw = unsafe { raw_device.create_semaphore(&info, None) }
            .map_err(sem_err("vkCreateSemaphore"))?;
        let fd_fn = ash::khr::external_semaphore_fd::Device::new(instance, raw_device);
        Ok(ExternalSemaphore {
            device: device.clone(),
            raw,
            fd_fn,
            label: label.to_string(),
        })
    }

    /// Its label.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// A new opaque fd of the semaphore's payload (`vkGetSemaphoreFdKHR`), for one importer.
    ///
    /// # Errors
    ///
    /// The failing call, one line.
    pub fn export_fd(&self) -> Result<OwnedFd, ExternalSemaphoreError> {
        let get = vk::SemaphoreGetFdInfoKHR::default()
            .semaphore(self.raw)
            .handle_type(vk::ExternalSemaphoreHandleTypeFlags::OPAQUE_FD);
        let fd =
            unsafe { self.fd_fn.get_semaphore_fd(&get) }.map_err(sem_err("vkGetSemaphoreFdKHR"))?;
        // SAFETY: vkGetSemaphoreFdKHR returns a new fd the caller owns.
        Ok(unsafe { OwnedFd::from_raw_fd(fd) })
    }

    /// The counter's current value (`vkGetSemaphoreCounterValue`; never blocks).
    ///
    /// # Errors
    ///
    /// The failing call (a lost device), one line.
    pub fn value(&self) -> Result<u64, ExternalSemaphoreError> {
        let hal =
            unsafe { self.device.as_hal::<Vulkan>() }.ok_or(ExternalSemaphoreError::NotVulkan)?;
        unsafe { hal.raw_device().get_semaphore_counter_value(self.raw) }
            .map_err(sem_err("vkGetSemaphoreCounterValue"))
    }

    /// Sets the counter to `value` from the host (`vkSignalSemaphore`); a value not above the
    /// current one is left alone (a timeline only grows). For a producer that promised `value`
    /// and went away: whatever waits for it on vizdeck's queue goes on.
    ///
    /// # Errors
    ///
    /// The failing call, one line.
    pub fn signal_from_host(&self, value: u64) -> Result<(), ExternalSemaphoreError> {
        if self.value()? >= value {
            return Ok(());
        }
        let hal =
            unsafe { self.device.as_hal::<Vulkan>() }.ok_or(ExternalSemaphoreError::NotVulkan)?;
        let info = vk::SemaphoreSignalInfo::default()
            .semaphore(self.raw)
            .value(value);
        unsafe { hal.raw_device().signal_semaphore(&info) }.map_err(sem_err("vkSignalSemaphore"))
    }

    /// Makes `queue`'s next submit wait, at the transfer stage, until the counter reaches
    /// `value` (`wgpu::hal::vulkan::Queue::add_wait_semaphore`). Returns `false` when the
    /// queue is not a Vulkan one.
    pub fn wait_on_next_submit(&self, queue: &wgpu::Queue, value: u64) -> bool {
        // SAFETY: the semaphore lives until the submit that uses it is done (see the type docs).
        match unsafe { queue.as_hal::<Vulkan>() } {
            Some(q) => {
                q.add_wait_semaphore(self.raw, Some(value), vk::PipelineStageFlags::TRANSFER);
                true
            }
            None => false,
        }
    }

    /// Makes `queue`'s next submit set the counter to `value` once its work is done
    /// (`add_signal_semaphore`). Returns `false` when the queue is not a Vulkan one.
    pub fn signal_on_next_submit(&self, queue: &wgpu::Queue, value: u64) -> bool {
        // SAFETY: as `wait_on_next_submit`.
        match unsafe { queue.as_hal::<Vulkan>() } {
            Some(q) => {
                q.add_signal_semaphore(self.raw, Some(value));
                true
            }
            None => false,
        }
    }
}

impl Drop for ExternalSemaphore {
    fn drop(&mut self) {
        // SAFETY: the owner drops it once no submitted work uses it (type docs); the wgpu device
        // clone keeps the Vulkan device alive until here.
        if let Some(hal) = unsafe { self.device.as_hal::<Vulkan>() } {
            unsafe { hal.raw_device().destroy_semaphore(self.raw, None) };
        }
    }
}
