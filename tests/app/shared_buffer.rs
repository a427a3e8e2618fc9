//! Shared GPU buffers (issue 18, `gpu/external.rs`) on the test GPU (lavapipe in CI): vizdeck's
//! buffer is exported as an opaque fd; a second Vulkan instance and device, made here with ash
//! as a producer would (CUDA's stand-in, tests/common/vk_producer.rs), picks the physical device by vizdeck's device UUID,
//! imports the fd (`VkImportMemoryFdInfoKHR`), writes a known pattern on its own queue
//! (`vkCmdFillBuffer`, `vkCmdUpdateBuffer`) and is torn down; vizdeck then reads its wgpu buffer
//! back and finds the pattern. A device without the extensions this needs skips the test with
//! the reason printed.

#![allow(clippy::disallowed_methods)] // tests drive the GPU with their own submits

use crate::common;

use ash::vk;
use common::vk_producer::VkProducer;
use vizdeck::gpu::external::{
    ExternalMemoryBuffer, ExternalMemoryError, memory_type, vk_buffer_usage,
};
use vizdeck::interop::protocol::uuid_hex;

/// Bytes shared: 1 MiB and three words, so the allocation may round up past the buffer.
const SIZE: u64 = (1 << 20) + 12;
/// What the producer fills the whole buffer with.
const FILL: u32 = 0xDEAD_BEEF;
/// Words at the start the producer then overwrites with `ramp(i)`.
const RAMP_WORDS: usize = 1024;

fn ramp(i: usize) -> u32 {
    (i as u32).wrapping_mul(2_654_435_761) ^ 0x5A5A_0000
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
    let mut producer = match VkProducer::new(&entry, &uuid_hex(&info.device_uuid)) {
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
    let imported = producer.import(
        shared.export_fd().expect("export an fd"),
        info.size,
        info.allocation_size,
        info.memory_type_index,
        info.dedicated,
    );
    let pattern: Vec<u32> = (0..RAMP_WORDS).map(ramp).collect();
    producer.fill_and_write(imported, FILL, bytemuck::cast_slice(&pattern));
    drop(unused);
    drop(producer); // the producer (its buffer and memory too) is gone; vizdeck's memory stays

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
