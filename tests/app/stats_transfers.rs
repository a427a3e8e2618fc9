//! CPU ↔ GPU transfers on lavapipe: every upload strategy delivers the exact bytes (read back and
//! compared) for small, odd-sized and large payloads and over repeated frames; the readback ring
//! returns textures of odd widths correctly, never blocks, and refuses rather than waits when full.

#![allow(clippy::disallowed_methods)] // tests and benches drive the GPU with their own submits

use crate::common;
use common::gpu;

use std::time::Instant;

use vizdeck::gpu::Gpu;
use vizdeck::gpu::frame::OwnedFrame;
use vizdeck::gpu::readback::{Consumer, ReadbackRing};
use vizdeck::gpu::upload::{PingPong, Strategy, Uploader, create_buffer_init};

use crate::common::payload;

/// The consumer the tests' copies are for.
const ME: Consumer = Consumer::Scene(0);

fn dst(gpu: &Gpu, size: u64) -> wgpu::Buffer {
    gpu.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("test:upload:dst"),
        size,
        usage: wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::COPY_DST
            | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    })
}

#[test]
fn every_strategy_delivers_the_bytes() {
    let gpu = gpu();
    // Odd (padded) small, exact small, and large payloads; three frames each with different bytes
    // at an offset, so ring recycling and stale data would show.
    for len in [1001usize, 64 << 10, (16 << 20) + 12] {
        let offset = 256u64;
        let buf = dst(&gpu, offset + (len as u64).next_multiple_of(4) + 256);
        for strategy in Strategy::ALL {
            let mut up = Uploader::new(&gpu.device, strategy);
            for frame in 0..3u32 {
                let data = payload(len, frame * 7 + len as u32);
                let mut enc = gpu
                    .device
                    .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
                up.write(&gpu.device, &gpu.queue, &mut enc, &buf, offset, &data)
                    .unwrap();
                up.finish();
                gpu.queue.submit([enc.finish()]);
                up.after_submit();
                let back = gpu
                    .read_buffer_blocking(&buf, 0, buf.size())
                    .expect("readback");
                let got = &back[offset as usize..offset as usize + len];
                assert!(
                    got == &data[..],
                    "{} len {len} frame {frame}: bytes differ",
                    strategy.name()
                );
                // Padding to 4 bytes is zeros.
                let pad_end = offset as usize + len.next_multiple_of(4);
                assert!(back[offset as usize + len..pad_end].iter().all(|&b| b == 0));
            }
            assert_eq!(up.counters.writes, 3);
            assert_eq!(up.counters.bytes, 3 * len as u64);
        }
    }
    common::assert_no_gpu_errors(&gpu);
}

#[test]
fn map_ring_recycles_and_never_waits() {
    let gpu = gpu();
    let buf = dst(&gpu, 1 << 20);
    let mut up = Uploader::new(&gpu.device, Strategy::MapRing);
    // Many writes without any device poll: the ring fills (4 buffers), then falls back to
    // write_buffer instead of waiting; the final contents are still the last write.
    let mut last = Vec::new();
    for frame in 0..10u32 {
        last = payload(4096, frame);
        let mut enc = gpu
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
        up.write(&gpu.device, &gpu.queue, &mut enc, &buf, 0, &last)
            .unwrap();
        gpu.queue.submit([enc.finish()]);
        up.after_submit();
    }
    assert!(up.ring_len() <= vizdeck::gpu::upload::RING_MAX);
    let back = gpu.read_buffer_blocking(&buf, 0, 4096).expect("readback");
    assert_eq!(back, last);
    // After the GPU is done the buffers come back mapped: no new ones, no fallback.
    gpu.wait_idle();
    let (created, fallbacks) = (up.counters.ring_buffers_created, up.counters.fallbacks);
    let mut enc = gpu
        .device
        .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
    up.write(
        &gpu.device,
        &gpu.queue,
        &mut enc,
        &buf,
        0,
        &payload(4096, 99),
    )
    .unwrap();
    gpu.queue.submit([enc.finish()]);
    up.after_submit();
    assert_eq!(up.counters.ring_buffers_created, created);
    assert_eq!(up.counters.fallbacks, fallbacks);
    assert_eq!(
        gpu.read_buffer_blocking(&buf, 0, 4096).expect("readback"),
        payload(4096, 99)
    );
}

#[test]
fn pingpong_and_init_under_every_strategy() {
    let gpu = gpu();
    let mut pp = PingPong::new(
        &gpu.device,
        "test:pingpong",
        wgpu::BufferUsages::COPY_SRC,
        1024,
    );
    for (i, strategy) in Strategy::ALL.into_iter().enumerate() {
        let data = payload(3000, i as u32);
        let mut f = OwnedFrame::new(&gpu, strategy);
        f.set_index(i as u64);
        let slot = pp.write(&mut f.frame(), &data);
        assert_eq!(slot, i % 2);
        assert_eq!(f.counters().bytes, 3000, "{}", strategy.name());
        f.submit();
        let back = gpu
            .read_buffer_blocking(pp.buffer(slot), 0, 3000)
            .expect("readback");
        assert_eq!(back, data, "{}", strategy.name());
    }
    let data = payload(4099, 5);
    let b = create_buffer_init(
        &gpu.device,
        "test:init",
        wgpu::BufferUsages::COPY_SRC,
        &data,
    )
    .unwrap();
    let back = gpu.read_buffer_blocking(&b, 0, b.size()).expect("readback");
    assert_eq!(&back[..4099], &data[..]);
    assert_eq!(&back[4099..], &[0]);
}

/// A texture of `w × h` whose pixel (x, y) is [x, y, x ^ y, 255] (low bytes).
fn pattern_texture(
    gpu: &Gpu,
    w: u32,
    h: u32,
    format: wgpu::TextureFormat,
) -> (wgpu::Texture, Vec<u8>) {
    let tex = gpu.device.create_texture(&wgpu::TextureDescriptor {
        label: Some("test:readback:texture"),
        size: wgpu::Extent3d {
            width: w,
            height: h,
            depth_or_array_layers: 1,
        },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format,
        usage: wgpu::TextureUsages::COPY_SRC
            | wgpu::TextureUsages::COPY_DST
            | wgpu::TextureUsages::RENDER_ATTACHMENT,
        view_formats: &[],
    });
    let mut px = Vec::with_capacity((w * h * 4) as usize);
    for y in 0..h {
        for x in 0..w {
            px.extend_from_slice(&[x as u8, y as u8, (x ^ y) as u8, 255]);
        }
    }
    gpu.queue.write_texture(
        tex.as_image_copy(),
        &px,
        wgpu::TexelCopyBufferLayout {
            offset: 0,
            bytes_per_row: Some(w * 4),
            rows_per_image: Some(h),
        },
        tex.size(),
    );
    (tex, px)
}

#[test]
fn ring_reads_textures_of_odd_widths_without_blocking() {
    let gpu = gpu();
    let mut ring = ReadbackRing::new("test:ring", 4);
    for (i, (w, h)) in [(37u32, 5u32), (333, 7), (65, 3), (1, 1)]
        .into_iter()
        .enumerate()
    {
        let (tex, px) = pattern_texture(&gpu, w, h, wgpu::TextureFormat::Rgba8Unorm);
        let mut enc = gpu
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
        let tag = i as u64;
        let t0 = Instant::now();
        assert!(
            ring.copy_texture(&gpu.device, &mut enc, &tex, ME, tag)
                .unwrap()
        );
        gpu.queue.submit([enc.finish()]);
        ring.after_submit();
        // A non-blocking poll returns at once, whether or not the copy has finished.
        let _ = ring.poll(&gpu.device, |_| {});
        assert!(t0.elapsed().as_millis() < 500, "poll blocked");
        let mut got = None;
        let n = ring.wait(&gpu.device, |a| {
            let mut out = Vec::new();
            assert!(a.rgba_into(&mut out));
            got = Some((a.payload::<u64>().copied(), out));
        });
        if n == 0 {
            // Arrived during the non-blocking poll above: redo to capture it.
            let mut enc = gpu
                .device
                .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
            assert!(
                ring.copy_texture(&gpu.device, &mut enc, &tex, ME, tag)
                    .unwrap()
            );
            gpu.queue.submit([enc.finish()]);
            ring.after_submit();
            ring.wait(&gpu.device, |a| {
                let mut out = Vec::new();
                a.rgba_into(&mut out);
                got = Some((a.payload::<u64>().copied(), out));
            });
        }
        let (t, out) = got.expect("readback arrived");
        assert_eq!(t, Some(tag));
        assert_eq!(out.len(), (w * h * 4) as usize);
        assert!(out == px, "{w}x{h}: pixels differ");
    }
    // BGRA is swapped to RGBA.
    let (tex, px) = pattern_texture(&gpu, 19, 3, wgpu::TextureFormat::Bgra8Unorm);
    let mut enc = gpu
        .device
        .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
    let tag = 9_u64;
    assert!(
        ring.copy_texture(&gpu.device, &mut enc, &tex, ME, tag)
            .unwrap()
    );
    gpu.queue.submit([enc.finish()]);
    ring.after_submit();
    let mut out = Vec::new();
    ring.wait(&gpu.device, |a| {
        a.rgba_into(&mut out);
    });
    let want: Vec<u8> = px
        .chunks_exact(4)
        .flat_map(|p| [p[2], p[1], p[0], p[3]])
        .collect();
    assert_eq!(out, want);
    // Unsupported formats are an error, not a panic.
    let (f32tex, _) = {
        let t = gpu.device.create_texture(&wgpu::TextureDescriptor {
            label: Some("test:readback:f32"),
            size: wgpu::Extent3d {
                width: 4,
                height: 4,
                depth_or_array_layers: 1,
            },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: wgpu::TextureFormat::R32Float,
            usage: wgpu::TextureUsages::COPY_SRC,
            view_formats: &[],
        });
        (t, ())
    };
    let mut enc = gpu
        .device
        .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
    assert!(
        ring.copy_texture(&gpu.device, &mut enc, &f32tex, ME, tag)
            .is_err()
    );
    common::assert_no_gpu_errors(&gpu);
}

#[test]
fn full_ring_refuses_instead_of_waiting() {
    let gpu = gpu();
    let src = dst(&gpu, 4096);
    let mut ring = ReadbackRing::new("test:ring:small", 2);
    let mut enc = gpu
        .device
        .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
    assert!(ring.copy_buffer(&gpu.device, &mut enc, &src, 0, 4096, ME, 0u64));
    assert!(ring.copy_buffer(&gpu.device, &mut enc, &src, 0, 4096, ME, 1u64));
    assert!(!ring.copy_buffer(&gpu.device, &mut enc, &src, 0, 4096, ME, 2u64));
    assert_eq!(ring.dropped(), 1);
    gpu.queue.submit([enc.finish()]);
    ring.after_submit();
    let mut ids = Vec::new();
    assert_eq!(
        ring.wait(&gpu.device, |a| ids.push(*a.payload::<u64>().unwrap())),
        2
    );
    assert_eq!(ids, [0, 1]);
    assert_eq!(ring.in_flight(), 0);
}

/// Screenshot path: a lent (still mapped) texture readback is written as a PNG by a worker
/// thread straight from the padded rows; the decoded PNG equals the texture (odd width, RGBA
/// and BGRA), and the buffer goes back to the ring only when the worker is done with it.
#[test]
fn lent_readbacks_become_exact_pngs_and_return_to_the_ring() {
    use vizdeck::gpu::readback::PngWriter;
    let gpu = gpu();
    let dir = std::env::temp_dir().join(format!("vizdeck-lend-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut ring = ReadbackRing::new("test:ring:lend", 3);
    let mut writer = PngWriter::with_workers(4, 2);
    let cases = [
        (65u32, 3u32, wgpu::TextureFormat::Rgba8Unorm),
        (19, 7, wgpu::TextureFormat::Bgra8Unorm),
        (300, 2, wgpu::TextureFormat::Rgba8Unorm),
    ];
    let mut want = Vec::new();
    let mut enc = gpu
        .device
        .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
    for (i, (w, h, format)) in cases.into_iter().enumerate() {
        let (tex, px) = pattern_texture(&gpu, w, h, format);
        let rgba: Vec<u8> = if format == wgpu::TextureFormat::Bgra8Unorm {
            // pattern_texture wrote [x, y, x^y, 255] as B, G, R, A.
            px.chunks_exact(4)
                .flat_map(|p| [p[2], p[1], p[0], p[3]])
                .collect()
        } else {
            px
        };
        want.push((w, h, rgba));
        let tag = i as u64;
        assert!(
            ring.copy_texture(&gpu.device, &mut enc, &tex, ME, tag)
                .unwrap()
        );
    }
    gpu.queue.submit([enc.finish()]);
    ring.after_submit();
    let n = ring.wait(&gpu.device, |a| {
        let path = dir.join(format!("{}.png", a.payload::<u64>().unwrap()));
        assert!(writer.submit_mapped(path, a.lend()));
    });
    assert_eq!(n, 3);
    // All three buffers are lent (or already given back by a fast worker): none is reused
    // before its PNG is written.
    let (written, errors) = writer.finish();
    assert_eq!((written, errors), (3, Vec::<String>::new()));
    assert_eq!(ring.in_flight(), 0, "every lent buffer came back");
    for (i, (w, h, rgba)) in want.iter().enumerate() {
        let file = std::fs::File::open(dir.join(format!("{i}.png"))).unwrap();
        let mut reader = png::Decoder::new(std::io::BufReader::new(file))
            .read_info()
            .unwrap();
        let mut buf = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut buf).unwrap();
        assert_eq!((info.width, info.height), (*w, *h));
        assert_eq!(info.color_type, png::ColorType::Rgba);
        assert!(
            buf[..info.buffer_size()] == rgba[..],
            "PNG {i} pixels differ"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A consumer's limit refuses its copies beyond it (counted) while other consumers still get
/// buffers.
#[test]
fn consumer_limit_keeps_buffers_for_other_consumers() {
    let gpu = gpu();
    let src = dst(&gpu, 1024);
    let mut ring = ReadbackRing::new("test:ring:kinds", 3);
    let other_consumer = Consumer::Scene(1);
    ring.limit(ME, 1);
    let mut enc = gpu
        .device
        .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
    assert!(ring.copy_buffer(&gpu.device, &mut enc, &src, 0, 1024, ME, 0u64));
    assert!(ring.full(ME));
    assert!(!ring.copy_buffer(&gpu.device, &mut enc, &src, 0, 1024, ME, 1u64));
    assert_eq!(ring.dropped(), 1);
    assert!(ring.copy_buffer(&gpu.device, &mut enc, &src, 0, 1024, other_consumer, 0u64));
    assert!(ring.copy_buffer(&gpu.device, &mut enc, &src, 0, 1024, other_consumer, 1u64));
    assert_eq!(ring.busy(ME), 1);
    assert_eq!(ring.busy(other_consumer), 2);
    gpu.queue.submit([enc.finish()]);
    ring.after_submit();
    assert_eq!(ring.wait(&gpu.device, |_| {}), 3);
    assert!(!ring.full(ME));
}

/// Copies a consumer asked for before `invalidate` are dropped when they arrive (counted as
/// stale, never delivered); copies asked for after it, and other consumers' copies, arrive with
/// their payloads.
#[test]
fn invalidated_copies_are_dropped_in_the_ring() {
    let gpu = gpu();
    let src = dst(&gpu, 1024);
    let other = Consumer::Scene(7);
    let mut ring = ReadbackRing::new("test:ring:stale", 6);
    let mut enc = gpu
        .device
        .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
    assert!(ring.copy_buffer(&gpu.device, &mut enc, &src, 0, 256, ME, 1u64));
    assert!(ring.copy_buffer(&gpu.device, &mut enc, &src, 0, 256, ME, 2u64));
    assert!(ring.copy_buffer(&gpu.device, &mut enc, &src, 0, 256, other, 3u64));
    ring.invalidate(ME);
    assert!(ring.copy_buffer(&gpu.device, &mut enc, &src, 0, 256, ME, 4u64));
    gpu.queue.submit([enc.finish()]);
    ring.after_submit();
    let mut got = Vec::new();
    let n = ring.wait(&gpu.device, |a| {
        got.push((a.consumer, *a.payload::<u64>().expect("a u64 payload")));
        assert!(
            a.payload::<u32>().is_none(),
            "a payload is only its own type"
        );
    });
    assert_eq!(n, 2);
    got.sort_by_key(|g| g.1);
    assert_eq!(got, [(other, 3), (ME, 4)]);
    assert_eq!(ring.stale(), 2);
    assert_eq!(ring.bytes_read(), 2 * 256);
    assert_eq!(ring.in_flight(), 0);
}
