//! A Vulkan producer for the `--share` tests (CUDA's stand-in on lavapipe): its own VkInstance
//! and VkDevice on the physical device of vizdeck's UUID, which imports a shared buffer's fd
//! (`VkImportMemoryFdInfoKHR`, as `ExternalMemoryInfo` / the share description says) and writes
//! bytes into it on its own queue (`vkCmdFillBuffer`, `vkCmdUpdateBuffer`, waited for with a
//! fence). Used by tests/shared_buffer.rs and tests/share_particles.rs as `common::vk_producer`.

use std::ffi::CStr;
use std::os::fd::{FromRawFd, IntoRawFd, OwnedFd};

use ash::vk;
use vizdeck::gpu::external::{EXTERNAL_MEMORY_FD, HANDLE_TYPE};

/// The producer's device.
pub struct VkProducer {
    instance: ash::Instance,
    device: ash::Device,
    queue: vk::Queue,
    queue_family: u32,
    /// Device extensions of its physical device.
    pub extensions: Vec<String>,
    /// The device UUID of its physical device (the one it was asked for).
    pub device_uuid: [u8; vk::UUID_SIZE],
    /// The driver UUID of its physical device.
    pub driver_uuid: [u8; vk::UUID_SIZE],
    imported: Vec<(vk::Buffer, vk::DeviceMemory)>,
}

/// A buffer imported into the producer's device.
#[derive(Clone, Copy, Debug)]
pub struct Imported {
    buffer: vk::Buffer,
    /// Bytes of the buffer.
    pub size: u64,
}

impl Drop for VkProducer {
    fn drop(&mut self) {
        unsafe {
            let _ = self.device.device_wait_idle();
            for (b, m) in self.imported.drain(..) {
                self.device.destroy_buffer(b, None);
                self.device.free_memory(m, None);
            }
            self.device.destroy_device(None);
            self.instance.destroy_instance(None);
        }
    }
}

fn has(extensions: &[String], name: &CStr) -> bool {
    extensions.iter().any(|e| e.as_bytes() == name.to_bytes())
}

impl VkProducer {
    /// The producer on the device of `uuid` (32 hex digits, as in the share description), made
    /// through `entry` (wgpu-hal's, `Device::as_hal`). `Err`: the reason to skip (the extension
    /// missing); no instance, or no device of that UUID, panics.
    pub fn new(entry: &ash::Entry, uuid_hex: &str) -> Result<VkProducer, String> {
        let uuid: Vec<u8> = (0..16)
            .map(|i| u8::from_str_radix(&uuid_hex[2 * i..2 * i + 2], 16).expect("hex UUID"))
            .collect();
        let app = vk::ApplicationInfo::default()
            .application_name(c"vizdeck-test-producer")
            .api_version(vk::API_VERSION_1_1);
        let instance = unsafe {
            entry.create_instance(
                &vk::InstanceCreateInfo::default().application_info(&app),
                None,
            )
        }
        .expect("vkCreateInstance (producer)");
        let physicals = unsafe { instance.enumerate_physical_devices() }.expect("physical devices");
        let mut found = None;
        let mut seen = Vec::new();
        for p in physicals {
            let mut id = vk::PhysicalDeviceIDProperties::default();
            let mut props2 = vk::PhysicalDeviceProperties2::default().push_next(&mut id);
            unsafe { instance.get_physical_device_properties2(p, &mut props2) };
            seen.push(id.device_uuid);
            if id.device_uuid[..] == uuid[..] {
                found = Some((p, id.device_uuid, id.driver_uuid));
            }
        }
        let Some((physical, device_uuid, driver_uuid)) = found else {
            unsafe { instance.destroy_instance(None) };
            panic!("no Vulkan device of vizdeck's UUID {uuid_hex} (seen: {seen:02x?})");
        };
        let extensions: Vec<String> =
            unsafe { instance.enumerate_device_extension_properties(physical) }
                .expect("device extensions")
                .iter()
                .filter_map(|e| e.extension_name_as_c_str().ok())
                .map(|n| n.to_string_lossy().into_owned())
                .collect();
        if !has(&extensions, EXTERNAL_MEMORY_FD) {
            unsafe { instance.destroy_instance(None) };
            return Err(format!(
                "the producer's device lacks {}",
                EXTERNAL_MEMORY_FD.to_string_lossy()
            ));
        }
        let families = unsafe { instance.get_physical_device_queue_family_properties(physical) };
        let queue_family = families
            .iter()
            .position(|f| {
                f.queue_flags.intersects(
                    vk::QueueFlags::TRANSFER | vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE,
                )
            })
            .expect("a queue family that can transfer") as u32;
        let priorities = [1.0];
        let queues = [vk::DeviceQueueCreateInfo::default()
            .queue_family_index(queue_family)
            .queue_priorities(&priorities)];
        let names = [EXTERNAL_MEMORY_FD.as_ptr()];
        let device = unsafe {
            instance.create_device(
                physical,
                &vk::DeviceCreateInfo::default()
                    .queue_create_infos(&queues)
                    .enabled_extension_names(&names),
                None,
            )
        }
        .expect("vkCreateDevice (producer)");
        let queue = unsafe { device.get_device_queue(queue_family, 0) };
        Ok(VkProducer {
            instance,
            device,
            queue,
            queue_family,
            extensions,
            device_uuid,
            driver_uuid,
            imported: Vec::new(),
        })
    }

    /// Imports `fd` as a buffer of `size` bytes from an allocation of `allocation_size` bytes
    /// of memory type `memory_type_index` (dedicated when `dedicated`), as the share
    /// description says (§11.2.6: the exporter's allocation size and memory type, a dedicated
    /// allocation when the exporter made one). Freed when the producer is dropped.
    pub fn import(
        &mut self,
        fd: OwnedFd,
        size: u64,
        allocation_size: u64,
        memory_type_index: u32,
        dedicated: bool,
    ) -> Imported {
        let d = &self.device;
        unsafe {
            let mut external =
                vk::ExternalMemoryBufferCreateInfo::default().handle_types(HANDLE_TYPE);
            let buffer = d
                .create_buffer(
                    &vk::BufferCreateInfo::default()
                        .size(size)
                        .usage(vk::BufferUsageFlags::TRANSFER_DST)
                        .sharing_mode(vk::SharingMode::EXCLUSIVE)
                        .push_next(&mut external),
                    None,
                )
                .expect("producer vkCreateBuffer");
            let req = d.get_buffer_memory_requirements(buffer);
            assert_ne!(
                req.memory_type_bits & (1 << memory_type_index),
                0,
                "the exporter's memory type {memory_type_index} does not fit the importer's \
                 buffer ({:#x})",
                req.memory_type_bits
            );
            assert!(
                req.size <= allocation_size,
                "{req:?} vs an allocation of {allocation_size} bytes"
            );
            let raw_fd = fd.into_raw_fd();
            let mut import = vk::ImportMemoryFdInfoKHR::default()
                .handle_type(HANDLE_TYPE)
                .fd(raw_fd);
            let mut ded = vk::MemoryDedicatedAllocateInfo::default().buffer(buffer);
            let mut alloc = vk::MemoryAllocateInfo::default()
                .allocation_size(allocation_size)
                .memory_type_index(memory_type_index)
                .push_next(&mut import);
            if dedicated {
                alloc = alloc.push_next(&mut ded);
            }
            let memory = match d.allocate_memory(&alloc, None) {
                Ok(m) => m, // the driver owns the fd now
                Err(e) => {
                    drop(OwnedFd::from_raw_fd(raw_fd)); // not consumed on failure
                    panic!("producer vkAllocateMemory (import) failed: {e}");
                }
            };
            d.bind_buffer_memory(buffer, memory, 0)
                .expect("producer vkBindBufferMemory");
            self.imported.push((buffer, memory));
            Imported { buffer, size }
        }
    }

    /// Writes `bytes` (a multiple of 4) at the start of `into` on the producer's queue and waits
    /// for it (after this the frame is complete on the GPU).
    pub fn write(&self, into: Imported, bytes: &[u8]) {
        self.submit(into, None, bytes);
    }

    /// Fills the whole of `into` with the word `fill`, then writes `bytes` (a multiple of 4) at
    /// its start, on the producer's queue, and waits for it.
    pub fn fill_and_write(&self, into: Imported, fill: u32, bytes: &[u8]) {
        self.submit(into, Some(fill), bytes);
    }

    /// [`VkProducer::write`], after a fill of the whole buffer with `fill` when there is one.
    fn submit(&self, into: Imported, fill: Option<u32>, bytes: &[u8]) {
        assert!(bytes.len() as u64 <= into.size && bytes.len().is_multiple_of(4));
        let d = &self.device;
        unsafe {
            let pool = d
                .create_command_pool(
                    &vk::CommandPoolCreateInfo::default().queue_family_index(self.queue_family),
                    None,
                )
                .expect("command pool");
            let cmd = d
                .allocate_command_buffers(
                    &vk::CommandBufferAllocateInfo::default()
                        .command_pool(pool)
                        .level(vk::CommandBufferLevel::PRIMARY)
                        .command_buffer_count(1),
                )
                .expect("command buffer")[0];
            d.begin_command_buffer(
                cmd,
                &vk::CommandBufferBeginInfo::default()
                    .flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT),
            )
            .expect("begin");
            if let Some(word) = fill {
                d.cmd_fill_buffer(cmd, into.buffer, 0, vk::WHOLE_SIZE, word);
                let barrier = vk::MemoryBarrier::default()
                    .src_access_mask(vk::AccessFlags::TRANSFER_WRITE)
                    .dst_access_mask(vk::AccessFlags::TRANSFER_WRITE);
                d.cmd_pipeline_barrier(
                    cmd,
                    vk::PipelineStageFlags::TRANSFER,
                    vk::PipelineStageFlags::TRANSFER,
                    vk::DependencyFlags::empty(),
                    &[barrier],
                    &[],
                    &[],
                );
            }
            // vkCmdUpdateBuffer takes at most 65536 bytes a call.
            for (i, chunk) in bytes.chunks(65536).enumerate() {
                d.cmd_update_buffer(cmd, into.buffer, (i * 65536) as u64, chunk);
            }
            d.end_command_buffer(cmd).expect("end");
            let fence = d
                .create_fence(&vk::FenceCreateInfo::default(), None)
                .expect("fence");
            let cmds = [cmd];
            d.queue_submit(
                self.queue,
                &[vk::SubmitInfo::default().command_buffers(&cmds)],
                fence,
            )
            .expect("producer vkQueueSubmit");
            d.wait_for_fences(&[fence], true, u64::MAX)
                .expect("producer fence");
            d.destroy_fence(fence, None);
            d.destroy_command_pool(pool, None);
        }
    }
}
