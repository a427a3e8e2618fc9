//! Shared GPU buffers (issue 18, `gpu/external.rs`) on the test GPU (lavapipe in CI): vizdeck's
//! buffer is exported as an opaque fd; a second Vulkan instance and device, made here with ash
//! as a producer would (CUDA's stand-in), picks the physical device by vizdeck's device UUID,
//! imports the fd (`VkImportMemoryFdInfoKHR`), writes a known pattern on its own queue
//! (`vkCmdFillBuffer`, `vkCmdUpdateBuffer`) and is torn down; vizdeck then reads its wgpu buffer
//! back and finds the pattern. A device without the extensions this needs skips the test with
//! the reason printed.

#![allow(clippy::disallowed_methods)] // tests drive the GPU with their own submits

mod common;

use std::ffi::CStr;
use std::os::fd::{FromRawFd, IntoRawFd, OwnedFd};

use ash::vk;
use vizdeck::gpu::external::{
    EXTERNAL_MEMORY_FD, ExternalMemoryBuffer, ExternalMemoryError, ExternalMemoryInfo, HANDLE_TYPE,
    memory_type, vk_buffer_usage,
};

/// Bytes shared: 1 MiB and three words, so the allocation may round up past the buffer.
const SIZE: u64 = (1 << 20) + 12;
/// What the producer fills the whole buffer with.
const FILL: u32 = 0xDEAD_BEEF;
/// Words at the start the producer then overwrites with `ramp(i)`.
const RAMP_WORDS: usize = 1024;

fn ramp(i: usize) -> u32 {
    (i as u32).wrapping_mul(2_654_435_761) ^ 0x5A5A_0000
}

/// The producer: its own VkInstance and VkDevice on the physical device whose UUID is vizdeck's.
struct Producer {
    instance: ash::Instance,
    device: ash::Device,
    queue: vk::Queue,
    queue_family: u32,
    device_uuid: [u8; vk::UUID_SIZE],
    driver_uuid: [u8; vk::UUID_SIZE],
    extensions: Vec<String>,
}

impl Drop for Producer {
    fn drop(&mut self) {
        unsafe {
            let _ = self.device.device_wait_idle();
            self.device.destroy_device(None);
            self.instance.destroy_instance(None);
        }
    }
}

fn has(extensions: &[String], name: &CStr) -> bool {
    extensions
        .iter()
        .any(|e| e.as_str() == name.to_str().unwrap())
}

/// Makes the producer on the device of `uuid`. `Err` is the reason to skip (an extension the
/// device lacks); no device of that UUID panics (the UUID check failed).
fn producer(entry: &ash::Entry, uuid: [u8; vk::UUID_SIZE]) -> Result<Producer, String> {
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
        if id.device_uuid == uuid {
            found = Some((p, id.device_uuid, id.driver_uuid));
        }
    }
    let Some((physical, device_uuid, driver_uuid)) = found else {
        unsafe { instance.destroy_instance(None) };
        panic!("no Vulkan device of vizdeck's UUID {uuid:02x?} (seen: {seen:02x?})");
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
    Ok(Producer {
        instance,
        device,
        queue,
        queue_family,
        device_uuid,
        driver_uuid,
        extensions,
    })
}

impl Producer {
    /// Imports `fd` as described by `info` (§11.2.6: same allocation size and memory type, a
    /// dedicated allocation when the exporter made one), fills the buffer with [`FILL`], writes
    /// the ramp over its first words, waits for its queue, and frees its buffer and memory.
    fn write_pattern(&self, fd: OwnedFd, info: &ExternalMemoryInfo) {
        let d = &self.device;
        unsafe {
            let mut external =
                vk::ExternalMemoryBufferCreateInfo::default().handle_types(HANDLE_TYPE);
            let buffer = d
                .create_buffer(
                    &vk::BufferCreateInfo::default()
                        .size(info.size)
                        .usage(vk::BufferUsageFlags::TRANSFER_DST)
                        .sharing_mode(vk::SharingMode::EXCLUSIVE)
                        .push_next(&mut external),
                    None,
                )
                .expect("producer vkCreateBuffer");
            let req = d.get_buffer_memory_requirements(buffer);
            assert_ne!(
                req.memory_type_bits & (1 << info.memory_type_index),
                0,
                "the exporter's memory type {} does not fit the importer's buffer ({:#x})",
                info.memory_type_index,
                req.memory_type_bits
            );
            assert!(req.size <= info.allocation_size, "{req:?} vs {info:?}");
            let raw_fd = fd.into_raw_fd();
            let mut import = vk::ImportMemoryFdInfoKHR::default()
                .handle_type(HANDLE_TYPE)
                .fd(raw_fd);
            let mut dedicated = vk::MemoryDedicatedAllocateInfo::default().buffer(buffer);
            let mut alloc = vk::MemoryAllocateInfo::default()
                .allocation_size(info.allocation_size)
                .memory_type_index(info.memory_type_index)
                .push_next(&mut import);
            if info.dedicated {
                alloc = alloc.push_next(&mut dedicated);
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
            d.cmd_fill_buffer(cmd, buffer, 0, vk::WHOLE_SIZE, FILL);
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
            let words: Vec<u32> = (0..RAMP_WORDS).map(ramp).collect();
            d.cmd_update_buffer(cmd, buffer, 0, bytemuck::cast_slice(&words));
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
            d.destroy_buffer(buffer, None);
            d.free_memory(memory, None);
        }
    }
}

#[test]
fn a_vulkan_producer_writes_into_vizdecks_buffer() {
    let gpu = common::gpu();
    if gpu.summary.backend != "Vulkan" {
        eprintln!(
            "skipped: shared buffers need Vulkan (adapter backend {})",
            gpu.summary.backend
        );
        return;
    }
    let shared = match ExternalMemoryBuffer::new(
        &gpu.device,
        "test:shared",
        SIZE,
        ExternalMemoryBuffer::USAGE,
    ) {
        Ok(b) => b,
        Err(
            e @ (ExternalMemoryError::MissingExtension { .. }
            | ExternalMemoryError::NotExportable(_)),
        ) => {
            eprintln!("skipped: {e}");
            return;
        }
        Err(e) => panic!("{e}"),
    };
    let info = shared.info().clone();
    eprintln!("shared buffer on {}: {info:?}", gpu.summary.name);
    assert_eq!(shared.buffer().size(), SIZE);
    assert!(info.allocation_size >= SIZE);
    assert_ne!(info.device_uuid, [0; vk::UUID_SIZE], "a device UUID");

    let entry = {
        let hal = unsafe { gpu.device.as_hal::<wgpu::hal::api::Vulkan>() }.expect("Vulkan device");
        hal.shared_instance().entry().clone()
    };
    let producer = match producer(&entry, info.device_uuid) {
        Ok(p) => p,
        Err(why) => {
            eprintln!("skipped: {why}");
            return;
        }
    };
    assert_eq!(producer.device_uuid, info.device_uuid);
    assert_eq!(
        producer.driver_uuid, info.driver_uuid,
        "driver UUIDs differ"
    );
    for ext in [
        "VK_KHR_external_memory_fd",
        "VK_KHR_external_semaphore_fd",
        "VK_KHR_timeline_semaphore",
    ] {
        eprintln!(
            "{}: {ext} {}",
            gpu.summary.name,
            if producer.extensions.iter().any(|e| e == ext) {
                "yes"
            } else {
                "MISSING"
            }
        );
    }

    // Two fds, two references: one is imported, the other closed unused.
    let unused = shared.export_fd().expect("export an fd");
    producer.write_pattern(shared.export_fd().expect("export an fd"), &info);
    drop(unused);
    drop(producer); // the producer is gone; vizdeck's memory stays

    let bytes = gpu
        .read_buffer_blocking(shared.buffer(), 0, SIZE)
        .expect("read the shared buffer");
    let words: &[u32] = bytemuck::cast_slice(&bytes);
    for (i, &w) in words.iter().enumerate() {
        let want = if i < RAMP_WORDS { ramp(i) } else { FILL };
        assert_eq!(w, want, "word {i} of the shared buffer");
    }

    // wgpu uses the buffer like its own: copied into a buffer of its own and read back.
    let copy = gpu.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("test:shared-copy"),
        size: 16,
        usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    let mut enc = gpu.device.create_command_encoder(&Default::default());
    enc.copy_buffer_to_buffer(shared.buffer(), SIZE - 16, &copy, 0, 16);
    gpu.queue.submit([enc.finish()]);
    let tail = gpu
        .read_buffer_blocking(&copy, 0, 16)
        .expect("read the copy");
    assert_eq!(bytemuck::cast_slice::<u8, u32>(&tail), &[FILL; 4]);

    // Destroyed: no more fds, said in one line.
    shared.buffer().destroy();
    let e = shared.export_fd().unwrap_err();
    assert!(matches!(e, ExternalMemoryError::Destroyed), "{e}");
    drop(shared);
    gpu.wait_idle();
    let errors = gpu.errors.lock().unwrap().clone();
    assert!(errors.is_empty(), "wgpu errors: {errors:?}");
}

#[test]
fn bad_requests_are_refused_in_one_line() {
    let gpu = common::gpu();
    for (size, usage) in [
        (0, ExternalMemoryBuffer::USAGE),
        (6, ExternalMemoryBuffer::USAGE),
        (
            64,
            wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        ),
    ] {
        let e = ExternalMemoryBuffer::new(&gpu.device, "test:bad", size, usage).unwrap_err();
        let msg = e.to_string();
        assert!(!msg.contains('\n'), "{msg}");
        assert!(
            matches!(e, ExternalMemoryError::BadRequest(_)),
            "{size} {usage:?}: {msg}"
        );
    }
}

#[test]
fn usage_maps_like_wgpu_hal_and_refuses_mapping() {
    let flags = vk_buffer_usage(ExternalMemoryBuffer::USAGE).unwrap();
    assert_eq!(
        flags,
        vk::BufferUsageFlags::STORAGE_BUFFER
            | vk::BufferUsageFlags::TRANSFER_SRC
            | vk::BufferUsageFlags::TRANSFER_DST
    );
    let e =
        vk_buffer_usage(wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST).unwrap_err();
    assert!(e.to_string().contains("cannot map"), "{e}");
    assert!(vk_buffer_usage(wgpu::BufferUsages::empty()).is_err());
}

#[test]
fn memory_type_prefers_device_local() {
    let mut props = vk::PhysicalDeviceMemoryProperties {
        memory_type_count: 3,
        ..Default::default()
    };
    props.memory_types[0].property_flags = vk::MemoryPropertyFlags::HOST_VISIBLE;
    props.memory_types[1].property_flags = vk::MemoryPropertyFlags::DEVICE_LOCAL;
    props.memory_types[2].property_flags = vk::MemoryPropertyFlags::DEVICE_LOCAL;
    assert_eq!(memory_type(&props, 0b111), Some(1));
    assert_eq!(memory_type(&props, 0b100), Some(2));
    assert_eq!(memory_type(&props, 0b001), Some(0));
    assert_eq!(memory_type(&props, 0b1000), None);
}
