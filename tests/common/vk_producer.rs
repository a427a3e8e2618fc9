//! A Vulkan producer for the `--share` tests (CUDA's stand-in on lavapipe): its own VkInstance
//! and VkDevice on the physical device of vizdeck's UUID, which imports a shared buffer's fd
//! (`VkImportMemoryFdInfoKHR`, as `ExternalMemoryInfo` / the share description says) and writes
//! bytes into it on its own queue (`vkCmdFillBuffer`, `vkCmdUpdateBuffer`, waited for with a
//! fence). Where its device has `VK_KHR_external_semaphore_fd` (not lavapipe of Mesa 22; the
//! NVIDIA driver) it also imports vizdeck's timeline semaphores (`vkImportSemaphoreFdKHR`) and
//! orders its writes with them on its queue, never waiting on the CPU
//! ([`VkProducer::write_frame`]), as a CUDA producer does with `cudaWaitExternalSemaphoresAsync`
//! / `cudaSignalExternalSemaphoresAsync`. Used by tests/app/shared_buffer.rs and the `--share` tests
//! (tests/app/share_particles.rs, through tests/common/share.rs) as `common::vk_producer`.

use std::ffi::CStr;
use std::os::fd::{FromRawFd, IntoRawFd, OwnedFd};

use ash::vk;
use vizdeck::gpu::external::{EXTERNAL_MEMORY_FD, EXTERNAL_SEMAPHORE_FD, HANDLE_TYPE};

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
    /// Whether the device was made with `VK_KHR_external_semaphore_fd` and timeline semaphores.
    pub semaphores: bool,
    semaphore_fd: Option<ash::khr::external_semaphore_fd::Device>,
    /// Semaphores made or imported, destroyed at the end.
    own_semaphores: Vec<vk::Semaphore>,
    /// Command pools of writes not waited for, destroyed at the end.
    pools: Vec<vk::CommandPool>,
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
            for p in self.pools.drain(..) {
                self.device.destroy_command_pool(p, None);
            }
            for s in self.own_semaphores.drain(..) {
                self.device.destroy_semaphore(s, None);
            }
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
            .api_version(vk::API_VERSION_1_2);
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
        let api = unsafe { instance.get_physical_device_properties(physical) }.api_version;
        let semaphores = api >= vk::API_VERSION_1_2 && has(&extensions, EXTERNAL_SEMAPHORE_FD);
        let mut names = vec![EXTERNAL_MEMORY_FD.as_ptr()];
        if semaphores {
            names.push(EXTERNAL_SEMAPHORE_FD.as_ptr());
        }
        let mut timeline =
            vk::PhysicalDeviceTimelineSemaphoreFeatures::default().timeline_semaphore(true);
        let mut info = vk::DeviceCreateInfo::default()
            .queue_create_infos(&queues)
            .enabled_extension_names(&names);
        if semaphores {
            info = info.push_next(&mut timeline);
        }
        let device = unsafe { instance.create_device(physical, &info, None) }
            .expect("vkCreateDevice (producer)");
        let queue = unsafe { device.get_device_queue(queue_family, 0) };
        let semaphore_fd =
            semaphores.then(|| ash::khr::external_semaphore_fd::Device::new(&instance, &device));
        Ok(VkProducer {
            instance,
            device,
            queue,
            queue_family,
            extensions,
            device_uuid,
            driver_uuid,
            imported: Vec::new(),
            semaphores,
            semaphore_fd,
            own_semaphores: Vec::new(),
            pools: Vec::new(),
        })
    }

    /// A timeline semaphore of the producer's own at value 0 (a gate the test opens from the
    /// host with [`VkProducer::signal_from_host`]).
    pub fn timeline(&mut self) -> vk::Semaphore {
        let mut ty = vk::SemaphoreTypeCreateInfo::default()
            .semaphore_type(vk::SemaphoreType::TIMELINE)
            .initial_value(0);
        let s = unsafe {
            self.device
                .create_semaphore(&vk::SemaphoreCreateInfo::default().push_next(&mut ty), None)
        }
        .expect("producer vkCreateSemaphore");
        self.own_semaphores.push(s);
        s
    }

    /// Imports vizdeck's timeline semaphore `fd` (opaque fd, §7.4.5) into a new semaphore of
    /// the producer's. Needs [`VkProducer::semaphores`].
    pub fn import_timeline(&mut self, fd: OwnedFd) -> vk::Semaphore {
        let s = self.timeline();
        let f = self
            .semaphore_fd
            .as_ref()
            .expect("VK_KHR_external_semaphore_fd");
        let raw = fd.into_raw_fd();
        let info = vk::ImportSemaphoreFdInfoKHR::default()
            .semaphore(s)
            .handle_type(vk::ExternalSemaphoreHandleTypeFlags::OPAQUE_FD)
            .fd(raw);
        if let Err(e) = unsafe { f.import_semaphore_fd(&info) } {
            drop(unsafe { OwnedFd::from_raw_fd(raw) });
            panic!("producer vkImportSemaphoreFdKHR failed: {e}");
        }
        s
    }

    /// Sets the timeline `s` to `value` from the host.
    pub fn signal_from_host(&self, s: vk::Semaphore, value: u64) {
        unsafe {
            self.device
                .signal_semaphore(&vk::SemaphoreSignalInfo::default().semaphore(s).value(value))
        }
        .expect("producer vkSignalSemaphore");
    }

    /// Writes `bytes` at the start of `into` on the producer's queue after waiting there for
    /// each `(semaphore, value)` of `waits`, then signals `signal` (if any) — all on the GPU:
    /// the CPU does not wait for any of it.
    pub fn write_frame(
        &mut self,
        into: Imported,
        bytes: &[u8],
        waits: &[(vk::Semaphore, u64)],
        signal: Option<(vk::Semaphore, u64)>,
    ) {
        let (pool, cmd) = self.record(into, None, bytes);
        let wait_sems: Vec<_> = waits.iter().map(|w| w.0).collect();
        let wait_values: Vec<_> = waits.iter().map(|w| w.1).collect();
        let stages = vec![vk::PipelineStageFlags::TRANSFER; waits.len()];
        let signal_sems: Vec<_> = signal.iter().map(|s| s.0).collect();
        let signal_values: Vec<_> = signal.iter().map(|s| s.1).collect();
        let mut timeline = vk::TimelineSemaphoreSubmitInfo::default()
            .wait_semaphore_values(&wait_values)
            .signal_semaphore_values(&signal_values);
        let cmds = [cmd];
        let submit = vk::SubmitInfo::default()
            .command_buffers(&cmds)
            .wait_semaphores(&wait_sems)
            .wait_dst_stage_mask(&stages)
            .signal_semaphores(&signal_sems)
            .push_next(&mut timeline);
        unsafe {
            self.device
                .queue_submit(self.queue, &[submit], vk::Fence::null())
        }
        .expect("producer vkQueueSubmit");
        self.pools.push(pool);
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
        let (pool, cmd) = self.record(into, fill, bytes);
        let d = &self.device;
        unsafe {
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

    /// Records the fill (if any) and the write of `bytes` (a multiple of 4) into a new command
    /// buffer of a new pool.
    fn record(
        &self,
        into: Imported,
        fill: Option<u32>,
        bytes: &[u8],
    ) -> (vk::CommandPool, vk::CommandBuffer) {
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
            (pool, cmd)
        }
    }
}
