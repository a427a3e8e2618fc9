//! Host memory the GPU reads in place (issue 18, [`Strategy::HostImport`](super::Strategy)):
//! pages of the process's own memory imported as Vulkan device memory with
//! `VK_EXT_external_memory_host` and bound to a `TRANSFER_SRC` buffer, so an upload is one
//! `copy_buffer_to_buffer` that the GPU's copy engine reads straight from those pages (what a
//! CUDA `cudaMemcpy` from pinned host memory does), with no copy by the CPU.
//!
//! Vulkan 1.3 spec sections: §11.2.4 "Device Memory Allocation" and the
//! `VK_EXT_external_memory_host` part of §11.2 (`VkImportMemoryHostPointerInfoEXT`,
//! `vkGetMemoryHostPointerPropertiesEXT`, `VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT`:
//! the pointer and the allocation size must be multiples of
//! `VkPhysicalDeviceExternalMemoryHostPropertiesEXT::minImportedHostPointerAlignment`, and the
//! host range must stay allocated as long as the `VkDeviceMemory` exists), §12.1 "Buffers"
//! (`VkExternalMemoryBufferCreateInfo`), §12.7 "Resource Memory Association" and §36.4
//! "External Memory Handle Types" (`vkGetPhysicalDeviceExternalBufferProperties`: importable?).
//!
//! Lifetimes are guaranteed by construction: the Vulkan buffer is handed to wgpu with
//! `wgpu::hal::vulkan::Buffer::from_raw_externally_owned`, whose drop callback runs when wgpu
//! destroys the buffer, i.e. after the last handle is gone *and* the last submission using it has
//! completed. The callback destroys the buffer, frees the imported memory, and only then drops the
//! owner of the host bytes. The bytes cannot change meanwhile either: an imported owner
//! ([`HostSource`]) is immutable, and a [`HostBytes`] hands out `&mut` only while no GPU copy from
//! it is pending.

use std::alloc::Layout;
use std::ffi::{CStr, c_void};
use std::ptr::NonNull;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use ash::vk;

use crate::external::{Unmet, check_device, memory_type_preferring};
use wgpu::hal::api::Vulkan;

/// The device extension importing host memory (enabled by
/// [`external::request_device`](crate::external::request_device) where the device has it).
pub const EXTENSION: &CStr = ash::ext::external_memory_host::NAME;

/// The handle type of imported host memory.
pub const HANDLE_TYPE: vk::ExternalMemoryHandleTypeFlags =
    vk::ExternalMemoryHandleTypeFlags::HOST_ALLOCATION_EXT;

/// Why host memory cannot be imported. One line each; any of them makes the uploader fall back
/// to a strategy that copies.
#[derive(Clone, Debug, thiserror::Error)]
pub enum HostImportError {
    /// The device does not run on Vulkan (GL backend).
    #[error("host memory import needs the Vulkan backend (this device is not a Vulkan device)")]
    NotVulkan,
    /// Vulkan older than 1.1 (external memory is core from 1.1).
    #[error("host memory import needs Vulkan 1.1 (device {0})")]
    OldVulkan(String),
    /// `VK_EXT_external_memory_host` is not enabled on the device.
    #[error("the Vulkan device {device:?} lacks VK_EXT_external_memory_host")]
    MissingExtension {
        /// The device's name.
        device: String,
    },
    /// The driver cannot import host allocations for a transfer-source buffer.
    #[error("the Vulkan device cannot import host memory for a copy source (features {0:?})")]
    NotImportable(vk::ExternalMemoryFeatureFlags),
    /// Import forced off by the caller (tests, `UploaderOptions::host_import`).
    #[error("host memory import is turned off")]
    Disabled,
    /// A range that cannot be imported (alignment, size).
    #[error("cannot import this host range: {0}")]
    BadRequest(String),
    /// No memory type can hold both the host pointer and the buffer.
    #[error(
        "no Vulkan memory type fits imported host memory (host bits {host:#x}, buffer bits {buffer:#x})"
    )]
    NoMemoryType {
        /// `VkMemoryHostPointerPropertiesEXT::memoryTypeBits`.
        host: u32,
        /// The buffer's `VkMemoryRequirements::memoryTypeBits`.
        buffer: u32,
    },
    /// The host allocation of a [`HostBytes`] failed.
    #[error("cannot allocate {0} bytes of host memory")]
    Alloc(u64),
    /// A Vulkan call failed.
    #[error("{call} failed: {result}")]
    Vulkan {
        /// The Vulkan function.
        call: &'static str,
        /// Its result code.
        result: vk::Result,
    },
}

fn vk_err(call: &'static str) -> impl Fn(vk::Result) -> HostImportError {
    move |result| HostImportError::Vulkan { call, result }
}

/// What a device can import, found once ([`HostImporter::new`]) and then used for every import.
/// Holds a clone of the `wgpu::Device` (the Vulkan device outlives it).
#[derive(Clone)]
pub struct HostImporter {
    device: wgpu::Device,
    raw: ash::Device,
    host_fn: ash::ext::external_memory_host::Device,
    alignment: u64,
    memory_types: Vec<vk::MemoryType>,
    name: String,
}

impl std::fmt::Debug for HostImporter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostImporter")
            .field("device", &self.name)
            .field("alignment", &self.alignment)
            .finish_non_exhaustive()
    }
}

impl HostImporter {
    /// Checks that `device` can import host memory for a copy source: Vulkan 1.1+,
    /// `VK_EXT_external_memory_host` enabled, `vkGetPhysicalDeviceExternalBufferProperties` says
    /// `IMPORTABLE` for `TRANSFER_SRC` and `HOST_ALLOCATION_BIT_EXT`; reads
    /// `minImportedHostPointerAlignment` (4096 on lavapipe and on NVIDIA's Linux driver).
    ///
    /// # Errors
    ///
    /// The first check that fails, one line (nothing is created).
    pub fn new(device: &wgpu::Device) -> Result<HostImporter, HostImportError> {
        // SAFETY: the hal device is only queried; its ash handles are cloned (function tables and
        // the `VkDevice` handle), and the `wgpu::Device` clone kept alongside keeps the device
        // alive as long as they are used.
        let hal = unsafe { device.as_hal::<Vulkan>() }.ok_or(HostImportError::NotVulkan)?;
        let physical = hal.raw_physical_device();
        let shared = hal.shared_instance();
        let instance = shared.raw_instance();
        let name = check_device(&hal, vk::API_VERSION_1_1, EXTENSION).map_err(|u| match u {
            Unmet::OldVulkan { device, .. } => HostImportError::OldVulkan(device),
            Unmet::MissingExtension { device, .. } => HostImportError::MissingExtension { device },
        })?;
        let mut host_props = vk::PhysicalDeviceExternalMemoryHostPropertiesEXT::default();
        let mut props2 = vk::PhysicalDeviceProperties2::default().push_next(&mut host_props);
        // SAFETY: Vulkan 1.1 checked above; the chain is one known struct.
        unsafe { instance.get_physical_device_properties2(physical, &mut props2) };
        let alignment = host_props.min_imported_host_pointer_alignment.max(1);
        if !alignment.is_power_of_two() {
            return Err(HostImportError::BadRequest(format!(
                "minImportedHostPointerAlignment {alignment} is not a power of two"
            )));
        }
        let mut external = vk::ExternalBufferProperties::default();
        // SAFETY: plain query on the device's physical device.
        unsafe {
            instance.get_physical_device_external_buffer_properties(
                physical,
                &vk::PhysicalDeviceExternalBufferInfo::default()
                    .usage(vk::BufferUsageFlags::TRANSFER_SRC)
                    .handle_type(HANDLE_TYPE),
                &mut external,
            )
        };
        let features = external.external_memory_properties.external_memory_features;
        if !features.contains(vk::ExternalMemoryFeatureFlags::IMPORTABLE) {
            return Err(HostImportError::NotImportable(features));
        }
        // SAFETY: plain query.
        let mem = unsafe { instance.get_physical_device_memory_properties(physical) };
        let memory_types = mem.memory_types[..mem.memory_type_count as usize].to_vec();
        let raw = hal.raw_device().clone();
        let host_fn = ash::ext::external_memory_host::Device::new(instance, &raw);
        drop(hal);
        Ok(HostImporter {
            device: device.clone(),
            raw,
            host_fn,
            alignment,
            memory_types,
            name,
        })
    }

    /// `minImportedHostPointerAlignment` in bytes (a power of two): imported ranges start and end
    /// on multiples of it.
    pub fn alignment(&self) -> u64 {
        self.alignment
    }

    /// The device's name.
    pub fn device_name(&self) -> &str {
        &self.name
    }

    /// Imports `len` bytes at `ptr` as a `COPY_SRC` `wgpu::Buffer` labelled `label`; `keep` is
    /// dropped once the buffer and its imported memory are gone (after the last handle and the
    /// last GPU work using it), and never before.
    ///
    /// Steps: `vkGetMemoryHostPointerPropertiesEXT` (memory type bits of the pointer),
    /// `vkCreateBuffer` (`TRANSFER_SRC`, `VkExternalMemoryBufferCreateInfo` of
    /// `HOST_ALLOCATION_BIT_EXT`), `vkGetBufferMemoryRequirements`, `vkAllocateMemory` with
    /// `VkImportMemoryHostPointerInfoEXT`, `vkBindBufferMemory`, then
    /// `Buffer::from_raw_externally_owned` (drop callback: destroy, free, drop `keep`) and
    /// `Device::create_buffer_from_hal`.
    ///
    /// # Safety
    ///
    /// `ptr..ptr + len` must be one live host allocation (or part of one) that stays allocated,
    /// and that nothing writes, until `keep` is dropped (`keep` normally owns it).
    ///
    /// # Errors
    ///
    /// [`HostImportError::BadRequest`] for a `ptr` or `len` not a multiple of
    /// [`alignment`](Self::alignment), zero, or over `max_buffer_size`; `NoMemoryType`; the
    /// failing Vulkan call. On an error nothing stays allocated and `keep` is dropped.
    pub unsafe fn import(
        &self,
        label: &str,
        ptr: *const u8,
        len: u64,
        keep: Box<dyn Send + Sync>,
    ) -> Result<wgpu::Buffer, HostImportError> {
        let max = self.device.limits().max_buffer_size;
        if len == 0
            || !len.is_multiple_of(self.alignment)
            || !(ptr as u64).is_multiple_of(self.alignment)
            || len > max
        {
            return Err(HostImportError::BadRequest(format!(
                "{len} bytes at {ptr:p} (needs a non-zero multiple of {} bytes at a pointer \
                 aligned to it, at most {max} bytes)",
                self.alignment
            )));
        }
        let raw = &self.raw;
        let mut host_props = vk::MemoryHostPointerPropertiesEXT::default();
        // SAFETY: the caller guarantees `ptr` is a live host allocation; the function is the
        // extension's, loaded for this device (enabled: checked in `new`).
        unsafe {
            (self.host_fn.fp().get_memory_host_pointer_properties_ext)(
                raw.handle(),
                HANDLE_TYPE,
                ptr.cast::<c_void>(),
                &mut host_props,
            )
        }
        .result()
        .map_err(vk_err("vkGetMemoryHostPointerPropertiesEXT"))?;

        let mut external_info =
            vk::ExternalMemoryBufferCreateInfo::default().handle_types(HANDLE_TYPE);
        let info = vk::BufferCreateInfo::default()
            .size(len)
            .usage(vk::BufferUsageFlags::TRANSFER_SRC)
            .sharing_mode(vk::SharingMode::EXCLUSIVE)
            .push_next(&mut external_info);
        // SAFETY: a valid create info on our device; destroyed below on every error path.
        let buffer = unsafe { raw.create_buffer(&info, None) }.map_err(vk_err("vkCreateBuffer"))?;
        let destroy_buffer = |raw: &ash::Device| {
            // SAFETY: `buffer` is ours, unbound or bound to memory freed after it, unused by GPU work.
            unsafe { raw.destroy_buffer(buffer, None) }
        };
        // SAFETY: `buffer` was just created on this device.
        let req = unsafe { raw.get_buffer_memory_requirements(buffer) };
        let bits = req.memory_type_bits & host_props.memory_type_bits;
        let Some(type_index) = self.pick_memory_type(bits) else {
            destroy_buffer(raw);
            return Err(HostImportError::NoMemoryType {
                host: host_props.memory_type_bits,
                buffer: req.memory_type_bits,
            });
        };
        if req.size > len {
            destroy_buffer(raw);
            return Err(HostImportError::BadRequest(format!(
                "the buffer needs {} bytes of memory, the host range holds {len}",
                req.size
            )));
        }
        let mut import = vk::ImportMemoryHostPointerInfoEXT::default()
            .handle_type(HANDLE_TYPE)
            .host_pointer(ptr.cast_mut().cast::<c_void>());
        let alloc = vk::MemoryAllocateInfo::default()
            .allocation_size(len)
            .memory_type_index(type_index)
            .push_next(&mut import);
        // SAFETY: the pointer and size are aligned (checked above) and the range is live (the
        // caller's guarantee); the memory type is one the pointer allows.
        let memory = match unsafe { raw.allocate_memory(&alloc, None) } {
            Ok(m) => m,
            Err(e) => {
                destroy_buffer(raw);
                return Err(vk_err("vkAllocateMemory")(e));
            }
        };
        // SAFETY: fresh buffer and memory of this device; the memory is large enough (checked).
        if let Err(e) = unsafe { raw.bind_buffer_memory(buffer, memory, 0) } {
            destroy_buffer(raw);
            // SAFETY: the memory is ours and bound to nothing.
            unsafe { raw.free_memory(memory, None) };
            return Err(vk_err("vkBindBufferMemory")(e));
        }
        let cleanup_device = raw.clone();
        let cleanup: wgpu::hal::DropCallback = Box::new(move || {
            // SAFETY: wgpu-hal runs this once, when it destroys the buffer: no handle and no GPU
            // work uses it any more. The buffer goes first, then its memory, then the host
            // owner (the range stays allocated for the memory's whole lifetime, §11.2).
            unsafe {
                cleanup_device.destroy_buffer(buffer, None);
                cleanup_device.free_memory(memory, None);
            }
            drop(keep);
        });
        // SAFETY: the buffer is bound to imported memory wgpu never maps (usage COPY_SRC only);
        // wgpu-hal neither destroys the buffer nor frees the memory (externally owned): the drop
        // callback does, when wgpu is done with it. The device outlives its buffers (wgpu-core
        // resources hold the device).
        let buffer = unsafe {
            let hal_buffer = wgpu::hal::vulkan::Buffer::from_raw_externally_owned(buffer, cleanup);
            self.device.create_buffer_from_hal::<Vulkan>(
                hal_buffer,
                &wgpu::BufferDescriptor {
                    label: Some(label),
                    size: len,
                    usage: wgpu::BufferUsages::COPY_SRC,
                    mapped_at_creation: false,
                },
            )
        };
        Ok(buffer)
    }

    /// A memory type among `bits`: host-cached first (the CPU writes and reads it as ordinary
    /// memory), else the first.
    fn pick_memory_type(&self, bits: u32) -> Option<u32> {
        memory_type_preferring(
            &self.memory_types,
            bits,
            vk::MemoryPropertyFlags::HOST_CACHED,
        )
    }
}

/// Owners of host bytes that can be imported in place ([`Uploader::write_owned`](super::Uploader::write_owned)):
/// their bytes live on the heap (moving the owner does not move them) and do not change while
/// the uploader holds the owner. Implemented here for `Vec<u8>`, `Box<[u8]>`, `Arc<[u8]>`,
/// `Arc<Vec<u8>>` and `&'static [u8]`, and by the app for its `interop::host::HostFrame` (a
/// `--share` producer's frame in its memfd, unchanged until vizdeck releases it).
///
/// # Safety
///
/// [`host_bytes`](HostSource::host_bytes) returns the same bytes, at the same address, for as
/// long as the owner lives, even after it is moved; nothing writes them meanwhile (the GPU reads
/// them in place, after the call has returned).
pub unsafe trait HostSource: Send + Sync + 'static {
    /// The bytes.
    fn host_bytes(&self) -> &[u8];
}

// SAFETY (the five impls below): heap bytes an owner moved into the uploader, or static ones;
// neither `Vec`, `Box` nor `Arc` moves its heap bytes when moved, and none is written through a
// shared reference.
unsafe impl HostSource for Vec<u8> {
    fn host_bytes(&self) -> &[u8] {
        self
    }
}
// SAFETY: as above.
unsafe impl HostSource for Box<[u8]> {
    fn host_bytes(&self) -> &[u8] {
        self
    }
}
// SAFETY: as above.
unsafe impl HostSource for Arc<[u8]> {
    fn host_bytes(&self) -> &[u8] {
        self
    }
}
// SAFETY: as above.
unsafe impl HostSource for Arc<Vec<u8>> {
    fn host_bytes(&self) -> &[u8] {
        self
    }
}
// SAFETY: as above.
unsafe impl HostSource for &'static [u8] {
    fn host_bytes(&self) -> &[u8] {
        self
    }
}

/// A zeroed host allocation aligned to the import alignment; freed on drop.
struct HostAlloc {
    ptr: NonNull<u8>,
    layout: Layout,
}

// SAFETY: a plain heap allocation; access is coordinated by `HostBytes` (`&mut` only when no GPU
// copy is pending), and the import's drop callback only drops it.
unsafe impl Send for HostAlloc {}
// SAFETY: as above: shared references only read.
unsafe impl Sync for HostAlloc {}

impl HostAlloc {
    fn new(len: u64, align: u64) -> Result<HostAlloc, HostImportError> {
        let size = usize::try_from(len.max(1).next_multiple_of(align))
            .map_err(|_| HostImportError::Alloc(len))?;
        let layout = Layout::from_size_align(size, align as usize)
            .map_err(|_| HostImportError::Alloc(len))?;
        // SAFETY: `layout` has a non-zero size.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        let ptr = NonNull::new(ptr).ok_or(HostImportError::Alloc(len))?;
        Ok(HostAlloc { ptr, layout })
    }
}

impl Drop for HostAlloc {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout; dropped once (the last `Arc`).
        unsafe { std::alloc::dealloc(self.ptr.as_ptr(), self.layout) };
    }
}

/// Host memory the caller fills and the GPU copies from in place: a zeroed, page-aligned host
/// allocation of [`len`](Self::len) bytes imported once as Vulkan memory (the counterpart of
/// CUDA's pinned `cudaMallocHost` memory). Write the payload into it
/// ([`bytes_mut`](Self::bytes_mut)), then upload ranges of it with
/// [`Uploader::write_host`](super::Uploader::write_host): the GPU reads these pages, no CPU copy.
///
/// Where host memory cannot be imported (GL backend, a device without the extension, or
/// [`HostBytes::unimported`]) it is plain host memory and `write_host` copies it through the
/// uploader's strategy instead: same results, one CPU copy.
///
/// `bytes_mut` returns `None` while a GPU copy from it is recorded and not yet done (the
/// uploader marks it at `write_host` and clears it through `Queue::on_submitted_work_done` after
/// [`Uploader::after_submit`](super::Uploader::after_submit)): the bytes cannot change under a
/// copy. Dropping it is always safe: the allocation lives until the imported memory is freed.
pub struct HostBytes {
    alloc: Arc<HostAlloc>,
    len: usize,
    buffer: Option<wgpu::Buffer>,
    busy: Arc<AtomicU32>,
    reason: Option<HostImportError>,
}

impl std::fmt::Debug for HostBytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostBytes")
            .field("len", &self.len)
            .field("imported", &self.buffer.is_some())
            .field("busy", &self.is_busy())
            .finish_non_exhaustive()
    }
}

/// Alignment of host memory that is not imported (one page; keeps `HostBytes` page-aligned
/// either way).
pub(crate) const PAGE: u64 = 4096;

impl HostBytes {
    /// `len` zeroed bytes (at least 1 is allocated), imported on `device` where it can import
    /// host memory (see [`HostImporter::new`]), else plain host memory (the reason is kept:
    /// [`import_error`](Self::import_error)). The buffer is labelled `label`.
    ///
    /// # Errors
    ///
    /// [`HostImportError::Alloc`] when the host allocation fails; import failures are not
    /// errors (plain memory then).
    pub fn new(
        device: &wgpu::Device,
        label: &str,
        len: usize,
    ) -> Result<HostBytes, HostImportError> {
        match HostImporter::new(device) {
            Ok(imp) => HostBytes::with_importer(Some(&imp), label, len),
            Err(e) => {
                let mut b = HostBytes::unimported(len)?;
                b.reason = Some(e);
                Ok(b)
            }
        }
    }

    /// [`new`](Self::new) with an importer already made (`None`: plain memory).
    ///
    /// # Errors
    ///
    /// As [`new`](Self::new).
    pub fn with_importer(
        importer: Option<&HostImporter>,
        label: &str,
        len: usize,
    ) -> Result<HostBytes, HostImportError> {
        let Some(imp) = importer else {
            return HostBytes::unimported(len);
        };
        let alloc = Arc::new(HostAlloc::new(len as u64, imp.alignment().max(PAGE))?);
        let size = alloc.layout.size() as u64;
        let keep: Box<dyn Send + Sync> = Box::new(alloc.clone());
        // SAFETY: the range is the whole of `alloc`, which `keep` owns (an `Arc`); nothing writes
        // it while a GPU copy is pending (`bytes_mut` checks `busy`).
        let imported = unsafe { imp.import(label, alloc.ptr.as_ptr(), size, keep) };
        let (buffer, reason) = match imported {
            Ok(b) => (Some(b), None),
            Err(e) => (None, Some(e)),
        };
        Ok(HostBytes {
            alloc,
            len,
            buffer,
            busy: Arc::new(AtomicU32::new(0)),
            reason,
        })
    }

    /// `len` zeroed bytes of plain (not imported) page-aligned host memory: uploads of it are
    /// copied by the CPU. For devices without import, and tests of that path.
    ///
    /// # Errors
    ///
    /// [`HostImportError::Alloc`] when the allocation fails.
    pub fn unimported(len: usize) -> Result<HostBytes, HostImportError> {
        Ok(HostBytes {
            alloc: Arc::new(HostAlloc::new(len as u64, PAGE)?),
            len,
            buffer: None,
            busy: Arc::new(AtomicU32::new(0)),
            reason: Some(HostImportError::Disabled),
        })
    }

    /// Length in bytes, as asked.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it holds no bytes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether the GPU reads it in place (imported); `false`: uploads copy it.
    pub fn is_imported(&self) -> bool {
        self.buffer.is_some()
    }

    /// Why it is not imported (`None` when it is).
    pub fn import_error(&self) -> Option<&HostImportError> {
        self.reason.as_ref()
    }

    /// Whether a GPU copy from it is recorded and not yet complete.
    pub fn is_busy(&self) -> bool {
        self.busy.load(Ordering::Acquire) != 0
    }

    /// The bytes (readable at any time: the GPU only reads them).
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: `alloc` holds at least `len` initialized (zeroed, then written) bytes; writes
        // need `&mut self`, so none happens while this borrow lives.
        unsafe { std::slice::from_raw_parts(self.alloc.ptr.as_ptr(), self.len) }
    }

    /// The bytes to fill, or `None` while a GPU copy from them is pending (never blocks; poll
    /// the device and ask again).
    pub fn bytes_mut(&mut self) -> Option<&mut [u8]> {
        if self.is_busy() {
            return None;
        }
        // SAFETY: `&mut self` excludes other borrows of the bytes; no GPU copy reads them (not
        // busy), and a new copy can only be recorded through `&self`, after this borrow ends.
        Some(unsafe { std::slice::from_raw_parts_mut(self.alloc.ptr.as_ptr(), self.len) })
    }

    /// The imported buffer (`COPY_SRC`, at least `len` bytes), when imported.
    pub(super) fn buffer(&self) -> Option<&wgpu::Buffer> {
        self.buffer.as_ref()
    }

    /// Marks a GPU copy from it as recorded; returns the flag the uploader clears when done.
    pub(super) fn mark_busy(&self) -> Arc<AtomicU32> {
        self.busy.fetch_add(1, Ordering::AcqRel);
        self.busy.clone()
    }
}
