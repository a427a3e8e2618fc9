//! Direct uploads on lavapipe (issue 18): bytes the CPU writes into a `DirectBuffer` (device-local
//! host-visible memory, mapped) are what the GPU then reads, whole and at odd offsets, on the
//! calling thread and split over the pool, frame after frame; the memory-type choice prefers the
//! largest heap; bad ranges and a destroyed buffer are refused with a message, never a panic.

#![allow(clippy::disallowed_methods)] // tests drive the GPU with their own submits

use crate::common;
use common::gpu;

use crate::common::payload;
use ash::vk;
use vizdeck::gpu::upload::direct::{DirectBuffer, DirectError, USAGE, pick_memory_type};

#[test]
fn the_gpu_reads_what_the_cpu_wrote() {
    let gpu = gpu();
    let size = (3 << 20) + 20;
    let mut buf = DirectBuffer::new(&gpu.device, "test:direct", size).expect("direct buffer");
    assert_eq!(buf.size(), size);
    assert_eq!(buf.buffer().size(), size);
    assert_eq!(buf.buffer().usage(), USAGE);
    // Lavapipe's memory is host memory: device-local, host-visible, coherent, cached.
    assert!(buf.memory().coherent);
    let mut expected = vec![0u8; size as usize];
    // Three frames: the whole buffer on the calling thread, then with the pool in 64 KiB chunks
    // (several threads), then an odd range at an odd offset; each read back by a GPU copy.
    for (frame, min_chunk) in [(1u32, usize::MAX), (2, 64 << 10)] {
        let p = payload(size as usize, frame);
        let threads = buf.write(0, &p, min_chunk).expect("write");
        if min_chunk == usize::MAX {
            assert_eq!(threads, 1);
        } else {
            assert!(threads >= 1, "{threads}");
        }
        assert_eq!(
            buf.confirm(size - 4).expect("confirm"),
            u32::from_le_bytes(p[p.len() - 4..].try_into().unwrap())
        );
        expected.copy_from_slice(&p);
        let got = gpu
            .read_buffer_blocking(buf.buffer(), 0, size)
            .expect("read back");
        assert!(got == expected, "frame {frame}: the GPU read other bytes");
    }
    let odd = payload(12_345, 9);
    buf.write(1_001, &odd, 4096).expect("odd write");
    expected[1_001..1_001 + odd.len()].copy_from_slice(&odd);
    let got = gpu
        .read_buffer_blocking(buf.buffer(), 0, size)
        .expect("read back");
    assert!(got == expected, "the odd range");
}

#[test]
fn a_compute_pass_reads_the_words() {
    // Through a storage binding too: a pass adds 1 to every word into a second buffer.
    let gpu = gpu();
    let n = 4099u32;
    let mut buf = DirectBuffer::new(&gpu.device, "test:direct:words", u64::from(n) * 4).unwrap();
    let words: Vec<u32> = (0..n).map(|i| i.wrapping_mul(2_654_435_761)).collect();
    buf.write(0, bytemuck::cast_slice(&words), usize::MAX)
        .unwrap();
    let out = gpu.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("test:direct:out"),
        size: u64::from(n) * 4,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    let module = gpu
        .device
        .create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("test:direct:add_one"),
            source: wgpu::ShaderSource::Wgsl(
                "@group(0) @binding(0) var<storage, read> src: array<u32>;\n\
             @group(0) @binding(1) var<storage, read_write> dst: array<u32>;\n\
             @compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3<u32>) {\n\
               if g.x < arrayLength(&src) { dst[g.x] = src[g.x] + 1u; }\n\
             }"
                .into(),
            ),
        });
    let pipeline = gpu
        .device
        .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some("test:direct:add_one"),
            layout: None,
            module: &module,
            entry_point: Some("main"),
            compilation_options: Default::default(),
            cache: None,
        });
    let group = gpu.device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("test:direct:add_one"),
        layout: &pipeline.get_bind_group_layout(0),
        entries: &[
            wgpu::BindGroupEntry {
                binding: 0,
                resource: buf.buffer().as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: 1,
                resource: out.as_entire_binding(),
            },
        ],
    });
    let mut enc = gpu
        .device
        .create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("test:direct"),
        });
    {
        let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("test:direct:add_one"),
            timestamp_writes: None,
        });
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(0, &group, &[]);
        pass.dispatch_workgroups(n.div_ceil(64), 1, 1);
    }
    gpu.queue.submit([enc.finish()]);
    let got = gpu.read_buffer_blocking(&out, 0, u64::from(n) * 4).unwrap();
    let got: &[u32] = bytemuck::cast_slice(&got);
    let want: Vec<u32> = words.iter().map(|w| w.wrapping_add(1)).collect();
    assert_eq!(got, &want[..]);
}

#[test]
fn bad_requests_are_refused() {
    let gpu = gpu();
    for size in [0u64, 6] {
        let e = DirectBuffer::new(&gpu.device, "test:direct:bad", size).unwrap_err();
        assert!(matches!(e, DirectError::BadRequest(_)), "{e}");
        assert!(e.to_string().contains("test:direct:bad"), "{e}");
    }
    let mut buf = DirectBuffer::new(&gpu.device, "test:direct:small", 64).unwrap();
    let e = buf.write(60, &[1, 2, 3, 4, 5], usize::MAX).unwrap_err();
    assert!(
        e.to_string()
            .contains("5 bytes at offset 60 do not fit in 64"),
        "{e}"
    );
    let e = buf.write(u64::MAX, &[1], usize::MAX).unwrap_err();
    assert!(matches!(e, DirectError::BadRequest(_)), "{e}");
    for at in [62u64, 64] {
        assert!(matches!(buf.confirm(at), Err(DirectError::BadRequest(_))));
    }
    // After `destroy` wgpu destroys the Vulkan buffer once the GPU is idle; the memory stays
    // the DirectBuffer's until it drops, so a write lands in live memory nothing reads (never in
    // freed memory), and confirm reads it back.
    buf.buffer().destroy();
    gpu.wait_idle();
    buf.write(0, &[1, 2, 3, 4], usize::MAX)
        .expect("a write after destroy");
    assert_eq!(buf.confirm(0).unwrap(), u32::from_le_bytes([1, 2, 3, 4]));
    // An empty write writes nothing, even at the end.
    assert_eq!(buf.write(64, &[], usize::MAX).unwrap(), 1);
    drop(buf);
    gpu.wait_idle();
    common::assert_no_gpu_errors(&gpu);
}

fn mem_type(flags: vk::MemoryPropertyFlags, heap: u32) -> vk::MemoryType {
    vk::MemoryType {
        property_flags: flags,
        heap_index: heap,
    }
}

#[test]
fn the_largest_mappable_device_heap_is_chosen() {
    use vk::MemoryPropertyFlags as F;
    let heaps = [
        vk::MemoryHeap {
            size: 80 << 30,
            flags: vk::MemoryHeapFlags::DEVICE_LOCAL,
        },
        vk::MemoryHeap {
            size: 64 << 30,
            flags: vk::MemoryHeapFlags::empty(),
        },
        vk::MemoryHeap {
            size: 256 << 20,
            flags: vk::MemoryHeapFlags::DEVICE_LOCAL,
        },
    ];
    let bar = F::DEVICE_LOCAL | F::HOST_VISIBLE | F::HOST_COHERENT;
    // A discrete GPU without a resizable BAR: device-local only (0), host (1), the 256 MiB BAR (2).
    let types = [
        mem_type(F::DEVICE_LOCAL, 0),
        mem_type(F::HOST_VISIBLE | F::HOST_COHERENT, 1),
        mem_type(bar, 2),
    ];
    assert_eq!(pick_memory_type(&types, &heaps, 0b111), Some(2));
    assert_eq!(pick_memory_type(&types, &heaps, 0b011), None);
    // With a resizable BAR the same flags on the 80 GiB heap (3) win over the 256 MiB window, a
    // coherent type over a non-coherent one on the same heap (3 over 1), and the larger heap
    // over coherence (1 over 2).
    let types = [
        mem_type(F::DEVICE_LOCAL, 0),
        mem_type(F::DEVICE_LOCAL | F::HOST_VISIBLE, 0),
        mem_type(bar, 2),
        mem_type(bar, 0),
    ];
    assert_eq!(pick_memory_type(&types, &heaps, 0b1111), Some(3));
    assert_eq!(pick_memory_type(&types, &heaps, 0b0111), Some(1));
    assert_eq!(pick_memory_type(&types, &heaps, 0b0101), Some(2));
    // AMD's device-coherent types (they need a feature) and protected ones are passed over.
    let types = [
        mem_type(bar | F::DEVICE_COHERENT_AMD | F::DEVICE_UNCACHED_AMD, 0),
        mem_type(bar | F::PROTECTED, 0),
        mem_type(bar, 2),
    ];
    assert_eq!(pick_memory_type(&types, &heaps, 0b111), Some(2));
    assert_eq!(pick_memory_type(&types, &heaps, 0b011), None);
}

#[test]
fn device_staging_delivers_through_its_own_buffers() {
    // The uploader strategy built on DirectBuffer: each frame's bytes written into GPU memory the
    // CPU maps, copied on the GPU; the staging buffer comes back once the copy is done.
    use vizdeck::gpu::upload::{Strategy, Uploader};
    let gpu = gpu();
    let size = (1 << 20) + 12;
    let dst = gpu.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("test:device-staging:dst"),
        size: size + 256,
        usage: wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::COPY_DST
            | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    let mut up = Uploader::new(&gpu.device, Strategy::DeviceStaging);
    for frame in 0..4u32 {
        // An odd length: the last 1–3 bytes padded with zeros.
        let p = payload(size as usize - 1 - frame as usize % 3, frame);
        let mut enc = gpu
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("test:device-staging"),
            });
        up.write(&gpu.device, &gpu.queue, &mut enc, &dst, 256, &p)
            .expect("write");
        up.finish();
        gpu.queue.submit([enc.finish()]);
        up.after_submit();
        gpu.wait_idle();
        let got = gpu
            .read_buffer_blocking(&dst, 256, p.len().next_multiple_of(4) as u64)
            .expect("read back");
        assert!(got[..p.len()] == p[..], "frame {frame}");
        assert!(
            got[p.len()..].iter().all(|&b| b == 0),
            "frame {frame}: padding"
        );
    }
    assert_eq!(up.effective_strategy(), Strategy::DeviceStaging);
    assert!(up.device_staging_error().is_none());
    assert_eq!(up.counters.device_staging_fallbacks, 0);
    assert_eq!(up.counters.fallbacks, 0);
    // Each frame waited for the GPU: one staging buffer served all four.
    assert_eq!(up.counters.ring_buffers_created, 1);
    assert_eq!(up.counters.writes, 4);
}
