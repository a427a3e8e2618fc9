//! GPU memory the CPU writes straight into (issue 18): a storage buffer allocated from a memory
//! type that is both `DEVICE_LOCAL` and `HOST_VISIBLE` (on a discrete GPU the PCIe BAR, the whole
//! of its memory where the BAR is resizable; on integrated and software devices ordinary memory),
//! mapped once for its lifetime. An upload is the CPU's `memcpy` into the mapping: no staging
//! buffer, no copy command and no submit, so a small upload costs what its bytes cost on the bus
//! rather than a submit's round trip (28.8 µs on the H200, `BENCHMARKS.md`).
//!
//! Vulkan 1.3 spec sections: §11.2.1 "Device Memory Properties" (memory types and heaps), §11.2.4
//! "Device Memory Allocation", §11.2.10 "Host Access to Device Memory Objects" (`vkMapMemory`;
//! host writes to `HOST_COHERENT` memory need no flush; `vkQueueSubmit` makes the host writes
//! before it visible to the submitted work, §7.9 "Host Write Ordering Guarantees"), §12.7
//! "Resource Memory Association".
//!
//! Ordering is the caller's: a write must not overlap GPU work in flight that reads the same
//! bytes (write between frames, or into a slot the GPU is done with). Lifetimes are by
//! construction: the Vulkan buffer goes to wgpu through
//! `wgpu::hal::vulkan::Buffer::from_raw_externally_owned`, whose drop callback (when wgpu destroys
//! the buffer: no handle and no submission left) destroys the buffer; the mapped memory is owned
//! apart, by the `DirectBuffer` and the callback together, and freed (which unmaps it, §11.2.10)
//! when both are done, so a write can never reach freed memory, even after `Buffer::destroy`.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use ash::vk;
use wgpu::hal::api::Vulkan;

/// Why a [`DirectBuffer`] cannot be made or written. One line each.
#[derive(Clone, Debug, thiserror::Error)]
pub enum DirectError {
    /// The device does not run on Vulkan.
    #[error("GPU memory the CPU writes into needs the Vulkan backend (this device is not Vulkan)")]
    NotVulkan,
    /// No memory type the buffer allows is both device-local and host-visible.
    #[error(
        "the Vulkan device {device:?} has no device-local memory the CPU can map for this buffer \
         (memory type bits {bits:#x})"
    )]
    NoMemoryType {
        /// The device's name.
        device: String,
        /// The buffer's `VkMemoryRequirements::memoryTypeBits`.
        bits: u32,
    },
    /// Turned off by the caller (tests, `UploaderOptions::device_staging`).
    #[error("GPU memory the CPU writes into is turned off")]
    Disabled,
    /// A size or range that does not fit.
    #[error("{0}")]
    BadRequest(String),
    /// A Vulkan call failed.
    #[error("{call} failed: {result}")]
    Vulkan {
        /// The Vulkan function.
        call: &'static str,
        /// Its result code.
        result: vk::Result,
    },
}

fn vk_err(call: &'static str) -> impl Fn(vk::Result) -> DirectError {
    move |result| DirectError::Vulkan { call, result }
}

/// Where a [`DirectBuffer`]'s memory came from: what the report and the bench print.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct DirectMemory {
    /// The memory type index.
    pub memory_type_index: u32,
    /// Its heap's size in bytes (256 MiB on a discrete GPU without a resizable BAR).
    pub heap_size: u64,
    /// Whether host writes need no flush (`HOST_COHERENT`).
    pub coherent: bool,
    /// Whether the CPU caches it (`HOST_CACHED`: a software or integrated device's memory).
    pub cached: bool,
}

/// The mapped `VkDeviceMemory`, owned apart from the Vulkan buffer bound to it: shared by the
/// [`DirectBuffer`] and wgpu's drop callback of the buffer, freed when both are done (dropping
/// the last `Arc`), so the mapping outlives every write, whenever wgpu destroys the buffer. The
/// `wgpu::Device` clone keeps the `VkDevice` alive until the memory is freed (fields drop after
/// `drop`).
struct MappedMemory {
    raw: ash::Device,
    memory: vk::DeviceMemory,
    ptr: std::ptr::NonNull<u8>,
    len: usize,
    _device: wgpu::Device,
}

// SAFETY: the pointer is to mapped device memory, written only through the `DirectBuffer`'s
// `&mut self` and read through `&self` (`confirm`); the handles are plain Vulkan handles.
unsafe impl Send for MappedMemory {}
// SAFETY: as above.
unsafe impl Sync for MappedMemory {}

impl Drop for MappedMemory {
    fn drop(&mut self) {
        // SAFETY: the last owner: the buffer bound to the memory is destroyed (the drop callback
        // ran, or the buffer was never made) and no write is in progress (`&mut self`). Freeing
        // unmaps it (§11.2.10).
        unsafe { self.raw.free_memory(self.memory, None) };
    }
}

/// A storage buffer in device-local memory the CPU writes directly (see the module docs).
///
/// Shapes and units: `size` bytes (a multiple of 4); writes at byte offsets, any length that fits.
pub struct DirectBuffer {
    buffer: wgpu::Buffer,
    label: String,
    map: Arc<MappedMemory>,
    memory: DirectMemory,
    /// `nonCoherentAtomSize` when the memory is not coherent (writes are flushed).
    flush_atom: Option<u64>,
}

impl std::fmt::Debug for DirectBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DirectBuffer")
            .field("buffer", &self.buffer)
            .field("memory", &self.memory)
            .finish_non_exhaustive()
    }
}

/// The usage of a [`DirectBuffer`]: read by passes, copied from and into.
pub const USAGE: wgpu::BufferUsages = wgpu::BufferUsages::STORAGE
    .union(wgpu::BufferUsages::COPY_SRC)
    .union(wgpu::BufferUsages::COPY_DST);

/// The memory type for a directly written buffer among `types` (with their heaps): one of
/// `type_bits` that is `DEVICE_LOCAL | HOST_VISIBLE` (and neither protected, lazily allocated nor
/// AMD device-coherent), on the largest such heap (a resizable BAR
/// over a 256 MiB window), coherent before not; `None` when there is none.
pub fn pick_memory_type(
    types: &[vk::MemoryType],
    heaps: &[vk::MemoryHeap],
    type_bits: u32,
) -> Option<u32> {
    let want = vk::MemoryPropertyFlags::DEVICE_LOCAL | vk::MemoryPropertyFlags::HOST_VISIBLE;
    // Types that need a feature or behave differently: protected, lazily allocated, AMD's
    // device-coherent ones (they need `deviceCoherentMemory`).
    let special = vk::MemoryPropertyFlags::PROTECTED
        | vk::MemoryPropertyFlags::LAZILY_ALLOCATED
        | vk::MemoryPropertyFlags::DEVICE_COHERENT_AMD
        | vk::MemoryPropertyFlags::DEVICE_UNCACHED_AMD;
    (0..types.len())
        .filter(|&i| {
            let flags = types[i].property_flags;
            type_bits & (1 << i) != 0 && flags.contains(want) && !flags.intersects(special)
        })
        .max_by_key(|&i| {
            let heap = heaps
                .get(types[i].heap_index as usize)
                .map_or(0, |h| h.size);
            let coherent = types[i]
                .property_flags
                .contains(vk::MemoryPropertyFlags::HOST_COHERENT);
            // Largest heap first; then coherent; then the lower index (max_by_key keeps the last
            // maximum, hence the reversed index).
            (heap, coherent, usize::MAX - i)
        })
        .map(|i| i as u32)
}

impl DirectBuffer {
    /// Allocates `size` bytes (non-zero, a multiple of 4, at most `max_buffer_size`) of
    /// device-local host-visible memory on `device`, maps it, and wraps it as a `wgpu::Buffer`
    /// labelled `label` with [`USAGE`]. The contents start undefined (zero on most drivers);
    /// wgpu treats them as initialized.
    ///
    /// Steps: `vkCreateBuffer`, `vkGetBufferMemoryRequirements`, [`pick_memory_type`],
    /// `vkAllocateMemory`, `vkBindBufferMemory`, `vkMapMemory` (whole range), then
    /// `Buffer::from_raw_externally_owned` and `Device::create_buffer_from_hal`.
    ///
    /// # Errors
    ///
    /// One-line [`DirectError`]s: not Vulkan, a bad size, no such memory
    /// type (e.g. a GPU exposing none), or the failing Vulkan call (out of memory in a 256 MiB
    /// BAR heap). Nothing stays allocated on an error.
    pub fn new(device: &wgpu::Device, label: &str, size: u64) -> Result<DirectBuffer, DirectError> {
        let max = device.limits().max_buffer_size;
        if size == 0 || !size.is_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT) || size > max {
            return Err(DirectError::BadRequest(format!(
                "{label}: size {size} bytes (needs a non-zero multiple of {} up to {max})",
                wgpu::COPY_BUFFER_ALIGNMENT
            )));
        }
        let len = usize::try_from(size)
            .map_err(|_| DirectError::BadRequest(format!("{label}: {size} bytes")))?;
        // SAFETY: the hal device only creates, queries and (on failure) destroys objects of our
        // own; the guard is dropped before wgpu takes the buffer.
        let hal = unsafe { device.as_hal::<Vulkan>() }.ok_or(DirectError::NotVulkan)?;
        let raw = hal.raw_device().clone();
        let physical = hal.raw_physical_device();
        let shared = hal.shared_instance();
        let instance = shared.raw_instance();
        // SAFETY: plain query.
        let props = unsafe { instance.get_physical_device_memory_properties(physical) };
        let types = &props.memory_types[..props.memory_type_count as usize];
        let heaps = &props.memory_heaps[..props.memory_heap_count as usize];
        // SAFETY: plain query.
        let device_props = unsafe { instance.get_physical_device_properties(physical) };
        let atom = device_props.limits.non_coherent_atom_size.max(1);
        let name = device_props
            .device_name_as_c_str()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        drop(hal);

        let usage = vk::BufferUsageFlags::STORAGE_BUFFER
            | vk::BufferUsageFlags::TRANSFER_SRC
            | vk::BufferUsageFlags::TRANSFER_DST;
        let info = vk::BufferCreateInfo::default()
            .size(size)
            .usage(usage)
            .sharing_mode(vk::SharingMode::EXCLUSIVE);
        // SAFETY: a valid create info on this device.
        let buffer = unsafe { raw.create_buffer(&info, None) }.map_err(vk_err("vkCreateBuffer"))?;
        let destroy_buffer = |raw: &ash::Device| {
            // SAFETY: our fresh buffer, used by nothing.
            unsafe { raw.destroy_buffer(buffer, None) }
        };
        // SAFETY: our buffer.
        let req = unsafe { raw.get_buffer_memory_requirements(buffer) };
        let Some(type_index) = pick_memory_type(types, heaps, req.memory_type_bits) else {
            destroy_buffer(&raw);
            return Err(DirectError::NoMemoryType {
                device: name,
                bits: req.memory_type_bits,
            });
        };
        let flags = types[type_index as usize].property_flags;
        let memory = DirectMemory {
            memory_type_index: type_index,
            heap_size: heaps
                .get(types[type_index as usize].heap_index as usize)
                .map_or(0, |h| h.size),
            coherent: flags.contains(vk::MemoryPropertyFlags::HOST_COHERENT),
            cached: flags.contains(vk::MemoryPropertyFlags::HOST_CACHED),
        };
        let alloc = vk::MemoryAllocateInfo::default()
            .allocation_size(req.size)
            .memory_type_index(type_index);
        // SAFETY: a valid allocate info (the type is one the buffer allows).
        let mem = match unsafe { raw.allocate_memory(&alloc, None) } {
            Ok(m) => m,
            Err(e) => {
                destroy_buffer(&raw);
                return Err(vk_err("vkAllocateMemory")(e));
            }
        };
        let free = |raw: &ash::Device| {
            destroy_buffer(raw);
            // SAFETY: our memory, bound to nothing else; freeing unmaps it.
            unsafe { raw.free_memory(mem, None) };
        };
        // SAFETY: fresh buffer and memory of this device, large enough (its requirements).
        if let Err(e) = unsafe { raw.bind_buffer_memory(buffer, mem, 0) } {
            free(&raw);
            return Err(vk_err("vkBindBufferMemory")(e));
        }
        // SAFETY: host-visible memory, mapped once, whole range.
        let ptr =
            match unsafe { raw.map_memory(mem, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty()) } {
                Ok(p) => p,
                Err(e) => {
                    free(&raw);
                    return Err(vk_err("vkMapMemory")(e));
                }
            };
        let Some(ptr) = std::ptr::NonNull::new(ptr.cast::<u8>()) else {
            free(&raw);
            return Err(DirectError::BadRequest(format!(
                "{label}: vkMapMemory returned a null pointer"
            )));
        };
        let map = Arc::new(MappedMemory {
            raw: raw.clone(),
            memory: mem,
            ptr,
            len,
            _device: device.clone(),
        });
        let destroyed = Arc::new(AtomicBool::new(false));
        let (cleanup_map, cleanup_destroyed) = (map.clone(), destroyed.clone());
        let cleanup: wgpu::hal::DropCallback = Box::new(move || {
            // SAFETY: wgpu-hal runs this once, when no handle and no GPU work uses the buffer.
            // Only the buffer goes here; the memory when its last owner drops (`MappedMemory`).
            unsafe { cleanup_map.raw.destroy_buffer(buffer, None) };
            cleanup_destroyed.store(true, Ordering::SeqCst);
            drop(cleanup_map);
        });
        // SAFETY: the buffer is bound to the whole of `mem`; wgpu never maps it (no MAP_* usage)
        // and leaves destroying it to the callback; the memory outlives it (see above).
        let wgpu_buffer = unsafe {
            let hal_buffer = wgpu::hal::vulkan::Buffer::from_raw_externally_owned(buffer, cleanup);
            device.create_buffer_from_hal::<Vulkan>(
                hal_buffer,
                &wgpu::BufferDescriptor {
                    label: Some(label),
                    size,
                    usage: USAGE,
                    mapped_at_creation: false,
                },
            )
        };
        if destroyed.load(Ordering::SeqCst) {
            // wgpu refused the buffer (an invalid or lost device) and dropped it at once.
            return Err(DirectError::BadRequest(format!(
                "{label}: wgpu did not take the buffer (is the device lost?)"
            )));
        }
        Ok(DirectBuffer {
            buffer: wgpu_buffer,
            label: label.to_string(),
            map,
            flush_atom: (!memory.coherent).then_some(atom),
            memory,
        })
    }

    /// The wgpu buffer: bind it, copy from it. After its `destroy` writes still land in the
    /// memory, which this `DirectBuffer` keeps until it drops, but nothing reads them.
    pub fn buffer(&self) -> &wgpu::Buffer {
        &self.buffer
    }

    /// Where the memory came from.
    pub fn memory(&self) -> &DirectMemory {
        &self.memory
    }

    /// Size in bytes.
    pub fn size(&self) -> u64 {
        self.map.len as u64
    }

    /// Writes `src` at byte `offset`: the CPU's copy into the mapping, split over the rayon
    /// pool in chunks of at least `min_chunk` bytes (`usize::MAX`: on the calling thread only),
    /// then a store fence (write-combined stores drained) and, for non-coherent memory,
    /// `vkFlushMappedMemoryRanges`. Work submitted after this returns sees the bytes (§7.9); the
    /// caller makes sure no work in flight reads them meanwhile. Returns the threads used.
    ///
    /// # Errors
    ///
    /// [`DirectError::BadRequest`] when `offset + src.len()` exceeds the size; the flush's Vulkan
    /// error. An empty `src` writes nothing.
    pub fn write(
        &mut self,
        offset: u64,
        src: &[u8],
        min_chunk: usize,
    ) -> Result<usize, DirectError> {
        let start = usize::try_from(offset).unwrap_or(usize::MAX);
        let end = start.checked_add(src.len()).filter(|&e| e <= self.map.len);
        let Some(end) = end else {
            return Err(DirectError::BadRequest(format!(
                "{}: {} bytes at offset {offset} do not fit in {} bytes",
                self.label,
                src.len(),
                self.map.len
            )));
        };
        if src.is_empty() {
            return Ok(1);
        }
        // SAFETY: the mapping covers `len` bytes and lives as long as `self.map` (its memory is
        // freed only when the last owner drops, whenever wgpu destroys the buffer); `&mut self`
        // makes this the only writer.
        let dst = unsafe {
            std::slice::from_raw_parts_mut(self.map.ptr.as_ptr().add(start), end - start)
        };
        let threads = super::parallel::fill_pool(dst, src, min_chunk);
        std::sync::atomic::fence(Ordering::SeqCst);
        if let Some(atom) = self.flush_atom {
            let lo = offset / atom * atom;
            let hi = (end as u64).next_multiple_of(atom).min(self.map.len as u64);
            let size = if hi >= self.map.len as u64 {
                vk::WHOLE_SIZE
            } else {
                hi - lo
            };
            let range = vk::MappedMemoryRange::default()
                .memory(self.map.memory)
                .offset(lo)
                .size(size);
            // SAFETY: a range of our mapped memory (mapped whole, so WHOLE_SIZE is valid),
            // aligned to nonCoherentAtomSize.
            unsafe { self.map.raw.flush_mapped_memory_ranges(&[range]) }
                .map_err(vk_err("vkFlushMappedMemoryRanges"))?;
        }
        Ok(threads)
    }

    /// Reads back the 4 bytes at `offset` (a multiple of 4) through the mapping. On a discrete
    /// GPU this is a read over PCIe, which the bus orders after every write posted before it: it
    /// returns once the bytes written before are in GPU memory (what the upload bench waits for,
    /// as a `cudaMemcpy` returns once its copy is done). On memory the CPU caches (integrated
    /// and software devices, [`DirectMemory::cached`]) the read comes from the cache and proves
    /// nothing more than the write's return.
    ///
    /// # Errors
    ///
    /// `BadRequest` for an offset out of range or unaligned.
    pub fn confirm(&self, offset: u64) -> Result<u32, DirectError> {
        let at = usize::try_from(offset).unwrap_or(usize::MAX);
        if !at.is_multiple_of(4) || at.checked_add(4).is_none_or(|e| e > self.map.len) {
            return Err(DirectError::BadRequest(format!(
                "{}: cannot read 4 bytes at offset {offset} of {}",
                self.label, self.map.len
            )));
        }
        // SAFETY: in range and 4-aligned (mapped memory is aligned to at least 64 bytes), alive
        // as long as `self.map`.
        Ok(unsafe { std::ptr::read_volatile(self.map.ptr.as_ptr().add(at).cast::<u32>()) })
    }
}
