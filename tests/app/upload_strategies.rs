//! The upload strategies of issue 18 on lavapipe (no timing assertions): `threaded-map` (the map
//! ring filled by several threads) and `host-import` (host memory imported with
//! `VK_EXT_external_memory_host` and read in place by the GPU's copy), through each of their ways
//! in (`Uploader::write`, `write_host` from `HostBytes`, `write_owned` of an owned buffer), at odd
//! sizes and offsets (unaligned heads and tails, 4-byte padding, 4 bytes to tens of MiB): the
//! bytes read back exactly, `BytesUploaded` counts them, the owners of imported bytes live until
//! the GPU is done, and the fallback (import turned off, memory not imported) delivers the same.

#![allow(clippy::disallowed_methods)] // the tests drive the GPU with their own submits

use crate::common;
use common::gpu;

use std::sync::Arc;

use crate::common::payload;
use vizdeck::gpu::Gpu;
use vizdeck::gpu::upload::{
    HostBytes, HostImportError, HostImporter, Strategy, Uploader, UploaderOptions,
};

/// Sizes from 4 bytes to tens of MiB: odd ones (padded to 4), one page and around it, and sizes
/// that split over several threads (from 8 MiB: two chunks of at least 4 MiB).
const SIZES: [usize; 9] = [
    4,
    5,
    7,
    1001,
    4096,
    4099,
    (64 << 10) + 12,
    (9 << 20) + 3,
    (24 << 20) + 1,
];

/// Offsets into the destination (multiples of 4, as uploads require).
const OFFSETS: [u64; 3] = [0, 4, 260];

/// Guard bytes written around each upload: they must stay as they are.
const GUARD: u8 = 0xC3;

fn dst(gpu: &Gpu, size: u64) -> wgpu::Buffer {
    gpu.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("test:upload-strategies:dst"),
        size,
        usage: wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::COPY_DST
            | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    })
}

/// A destination of `offset + len (padded) + 64` bytes, filled with [`GUARD`].
fn guarded_dst(gpu: &Gpu, offset: u64, len: usize) -> wgpu::Buffer {
    let size = offset + (len as u64).next_multiple_of(4) + 64;
    let buf = dst(gpu, size);
    let mut up = Uploader::new(&gpu.device, Strategy::WriteBuffer);
    submit(gpu, &mut up, |up, enc| {
        up.write(
            &gpu.device,
            &gpu.queue,
            enc,
            &buf,
            0,
            &vec![GUARD; size as usize],
        )
        .expect("guard");
    });
    buf
}

/// One frame: `record` into a fresh encoder, then finish, submit, after_submit and wait.
fn submit(
    gpu: &Gpu,
    up: &mut Uploader,
    record: impl FnOnce(&mut Uploader, &mut wgpu::CommandEncoder),
) {
    let mut enc = gpu
        .device
        .create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("test:upload-strategies"),
        });
    record(up, &mut enc);
    up.finish();
    gpu.queue.submit([enc.finish()]);
    up.after_submit();
    gpu.wait_idle();
}

/// Checks `buf`: `want` at `offset`, zeros up to the next multiple of 4, guard bytes elsewhere.
fn check(gpu: &Gpu, buf: &wgpu::Buffer, offset: u64, want: &[u8], what: &str) {
    let back = gpu
        .read_buffer_blocking(buf, 0, buf.size())
        .expect("readback");
    let o = offset as usize;
    let end = o + want.len();
    let pad_end = o + want.len().next_multiple_of(4);
    assert!(
        back[..o].iter().all(|&b| b == GUARD),
        "{what}: bytes before the offset changed"
    );
    if back[o..end] != want[..] {
        let first = back[o..end]
            .iter()
            .zip(want)
            .position(|(a, b)| a != b)
            .unwrap_or(0);
        panic!("{what}: bytes differ from byte {first} on");
    }
    assert!(
        back[end..pad_end].iter().all(|&b| b == 0),
        "{what}: padding not zero"
    );
    assert!(
        back[pad_end..].iter().all(|&b| b == GUARD),
        "{what}: bytes after the upload changed"
    );
}

/// Whether this device imports host memory (lavapipe does); printed when not.
fn imports(gpu: &Gpu) -> bool {
    match HostImporter::new(&gpu.device) {
        Ok(imp) => {
            assert!(imp.alignment().is_power_of_two());
            true
        }
        Err(e) => {
            eprintln!("this device does not import host memory ({e}); only the fallback is tested");
            false
        }
    }
}

/// Four threads whatever the machine, so the split copy is exercised on 2 cores too.
fn options(host_import: bool) -> UploaderOptions {
    UploaderOptions {
        host_import,
        device_staging: true,
        threads: 4,
    }
}

#[test]
fn threaded_map_and_host_import_deliver_every_size_and_offset() {
    let gpu = gpu();
    let imports = imports(&gpu);
    for strategy in [
        Strategy::ThreadedMap,
        Strategy::HostImport,
        Strategy::DeviceStaging,
    ] {
        let mut up = Uploader::with_options(&gpu.device, strategy, options(true));
        let mut asked = 0u64;
        let mut writes = 0u64;
        for (k, &len) in SIZES.iter().enumerate() {
            for &offset in &OFFSETS {
                let buf = guarded_dst(&gpu, offset, len);
                // Two frames with different bytes: a recycled staging buffer shows stale data.
                for frame in 0..2u32 {
                    let data = payload(len, frame * 13 + k as u32);
                    submit(&gpu, &mut up, |up, enc| {
                        up.write(&gpu.device, &gpu.queue, enc, &buf, offset, &data)
                            .expect("write");
                    });
                    asked += len as u64;
                    writes += 1;
                    let what = format!(
                        "{} len {len} offset {offset} frame {frame}",
                        strategy.name()
                    );
                    check(&gpu, &buf, offset, &data, &what);
                }
            }
        }
        assert_eq!(up.counters.bytes, asked, "{}", strategy.name());
        assert_eq!(up.counters.writes, writes, "{}", strategy.name());
        assert_eq!(
            up.counters.fallbacks,
            0,
            "{}: waited for nothing",
            strategy.name()
        );
        // `write` copies borrowed bytes: nothing is read in place.
        assert_eq!(up.counters.imported_bytes, 0);
        if strategy == Strategy::HostImport && imports {
            assert_eq!(up.effective_strategy(), Strategy::HostImport);
            assert_eq!(up.counters.host_import_fallbacks, 0);
            assert!(up.arena_len() >= 1 && up.arena_len() <= vizdeck::gpu::upload::RING_MAX);
        }
        if strategy == Strategy::DeviceStaging {
            // Lavapipe's memory is all device-local and host-visible: no fallback.
            assert_eq!(up.effective_strategy(), Strategy::DeviceStaging);
            assert_eq!(up.counters.device_staging_fallbacks, 0);
        }
    }
    common::assert_no_gpu_errors(&gpu);
}

/// More writes of one range in a frame than a strategy has staging buffers: the last one finds
/// them all in flight and falls back (counted), and still lands last, in its place among the
/// frame's copies (a `queue.write_buffer` fallback would land at the submit, before the copies
/// of the earlier writes, which would then win). Then a second frame reuses the staging.
#[test]
fn a_fallback_write_keeps_its_place_among_the_frames_writes() {
    let gpu = gpu();
    let len = 3000usize;
    let offset = 4u64;
    for strategy in [
        Strategy::MapRing,
        Strategy::ThreadedMap,
        Strategy::HostImport,
        Strategy::DeviceStaging,
        Strategy::MappedAtCreation,
    ] {
        let mut up = Uploader::with_options(&gpu.device, strategy, options(true));
        let buf = guarded_dst(&gpu, offset, len);
        let writes = vizdeck::gpu::upload::RING_MAX as u32 + 1;
        for frame in 0..2u32 {
            let fallbacks = up.counters.fallbacks;
            let data: Vec<Vec<u8>> = (0..writes).map(|i| payload(len, frame * 100 + i)).collect();
            submit(&gpu, &mut up, |up, enc| {
                for d in &data {
                    up.write(&gpu.device, &gpu.queue, enc, &buf, offset, d)
                        .expect("write");
                }
            });
            let what = format!("{} frame {frame}", strategy.name());
            check(&gpu, &buf, offset, &data[data.len() - 1], &what);
            let expected = u64::from(strategy != Strategy::MappedAtCreation);
            assert_eq!(up.counters.fallbacks - fallbacks, expected, "{what}");
        }
        // The strategy's own staging was what ran out, not threaded-map's after a fallback
        // (lavapipe imports host memory and maps device memory; `imports` says when not).
        if strategy == Strategy::HostImport && imports(&gpu) || strategy == Strategy::DeviceStaging
        {
            assert_eq!(up.effective_strategy(), strategy, "{}", strategy.name());
            assert_eq!(
                (
                    up.counters.host_import_fallbacks,
                    up.counters.device_staging_fallbacks
                ),
                (0, 0),
                "{}",
                strategy.name()
            );
        }
    }
    common::assert_no_gpu_errors(&gpu);
}

#[test]
fn device_staging_falls_back_to_threaded_map_where_it_cannot_map() {
    // As on a device without device-local host-visible memory (forced here): every write goes
    // through threaded-map, counted, the bytes still right, the reason kept.
    let gpu = gpu();
    let opts = UploaderOptions {
        device_staging: false,
        ..options(true)
    };
    let mut up = Uploader::with_options(&gpu.device, Strategy::DeviceStaging, opts);
    let len = (1 << 20) + 3;
    let buf = guarded_dst(&gpu, 256, len);
    for frame in 0..3u32 {
        let data = payload(len, frame + 40);
        submit(&gpu, &mut up, |up, enc| {
            up.write(&gpu.device, &gpu.queue, enc, &buf, 256, &data)
                .expect("write");
        });
        check(&gpu, &buf, 256, &data, &format!("fallback frame {frame}"));
    }
    assert_eq!(up.effective_strategy(), Strategy::ThreadedMap);
    assert_eq!(up.counters.device_staging_fallbacks, 3);
    assert_eq!(up.counters.fallbacks, 0);
    assert!(
        up.device_staging_error()
            .is_some_and(|e| e.to_string().contains("turned off"))
    );
    common::assert_no_gpu_errors(&gpu);
}

#[test]
fn host_bytes_are_read_in_place_at_odd_ranges() {
    let gpu = gpu();
    let imports = imports(&gpu);
    let total = (24 << 20) + 4096 + 9;
    let mut host = HostBytes::new(&gpu.device, "test:host-bytes", total).expect("host memory");
    assert_eq!(host.len(), total);
    assert_eq!(host.is_imported(), imports, "{:?}", host.import_error());
    assert_eq!(host.as_slice().as_ptr() as usize % 4096, 0, "page-aligned");
    let data = payload(total, 77);
    host.bytes_mut().expect("idle").copy_from_slice(&data);
    let mut up = Uploader::with_options(&gpu.device, Strategy::HostImport, options(true));
    let mut asked = 0u64;
    let mut in_place = 0u64;
    // Ranges: aligned start and odd length (a 1–3 byte tail through the copy path), starts off a
    // multiple of 4 (all through the copy path), one page, tiny, and tens of MiB.
    let ranges = [
        0..4,
        0..5,
        4..11,
        1..1002,
        2..4098,
        4096..8192 + 3,
        12..(64 << 10) + 12,
        3..(9 << 20) + 6,
        4096..total,
        0..total,
    ];
    let n_ranges = ranges.len();
    for range in ranges {
        for &offset in &OFFSETS {
            let len = range.len();
            let buf = guarded_dst(&gpu, offset, len);
            submit(&gpu, &mut up, |up, enc| {
                up.write_host(
                    &gpu.device,
                    &gpu.queue,
                    enc,
                    &buf,
                    offset,
                    &host,
                    range.clone(),
                )
                .expect("write_host");
                if imports && range.start % 4 == 0 {
                    in_place += (len / 4 * 4) as u64;
                    // Busy from the write until the GPU is done: its bytes cannot change under
                    // the copy.
                    assert!(host.is_busy(), "{range:?}");
                }
            });
            asked += len as u64;
            assert!(
                !host.is_busy(),
                "{range:?}: still busy after the GPU is done"
            );
            let what = format!("write_host {range:?} offset {offset}");
            check(&gpu, &buf, offset, &data[range.clone()], &what);
        }
    }
    assert_eq!(up.counters.bytes, asked);
    assert_eq!(up.counters.writes, (n_ranges * OFFSETS.len()) as u64);
    assert_eq!(up.counters.imported_bytes, in_place);
    if imports {
        assert!(in_place > 0);
    }
    assert!(host.bytes_mut().is_some());
    // A range outside the bytes is an error, not a panic.
    let buf = dst(&gpu, 64);
    let mut enc = gpu
        .device
        .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
    assert!(
        up.write_host(
            &gpu.device,
            &gpu.queue,
            &mut enc,
            &buf,
            0,
            &host,
            total - 4..total + 4
        )
        .is_err()
    );
    common::assert_no_gpu_errors(&gpu);
}

#[test]
fn owned_bytes_are_imported_and_kept_until_the_gpu_is_done() {
    let gpu = gpu();
    let imports = imports(&gpu);
    let mut up = Uploader::with_options(&gpu.device, Strategy::HostImport, options(true));
    let mut asked = 0u64;
    for (k, &len) in SIZES.iter().enumerate() {
        for &offset in &OFFSETS {
            let buf = guarded_dst(&gpu, offset, len);
            let data = payload(len, 500 + k as u32);
            let owner = Arc::new(data.clone());
            let imported_before = up.counters.imported_bytes;
            submit(&gpu, &mut up, |up, enc| {
                up.write_owned(&gpu.device, &gpu.queue, enc, &buf, offset, owner.clone())
                    .expect("write_owned");
                let imported = up.counters.imported_bytes - imported_before;
                if imports && len >= 2 * 4096 {
                    // A buffer of two pages or more holds at least one whole aligned page.
                    assert!(imported > 0, "len {len}: nothing imported");
                    assert_eq!(imported % 4096, 0);
                    // The uploader holds the owner while the copy is pending.
                    assert!(Arc::strong_count(&owner) > 1, "len {len}: owner not held");
                }
            });
            asked += len as u64;
            let what = format!("write_owned len {len} offset {offset}");
            check(&gpu, &buf, offset, &data, &what);
            // Once the GPU is done (and wgpu freed the imported memory) the owner is released.
            gpu.wait_idle();
            assert_eq!(Arc::strong_count(&owner), 1, "{what}: owner still held");
        }
    }
    // Heads of every alignment: slices of one leaked buffer starting 0..8 bytes into a page.
    let big: &'static [u8] = Vec::leak(payload((3 << 20) + 4096 * 2, 9));
    let page = (big.as_ptr() as usize).next_multiple_of(4096) - big.as_ptr() as usize;
    for skew in 0..8usize {
        let start = page + 4096 - skew;
        let bytes = &big[start..start + (1 << 20) + 4096 + 3];
        let buf = guarded_dst(&gpu, 4, bytes.len());
        submit(&gpu, &mut up, |up, enc| {
            up.write_owned(&gpu.device, &gpu.queue, enc, &buf, 4, bytes)
                .expect("write_owned");
        });
        asked += bytes.len() as u64;
        check(&gpu, &buf, 4, bytes, &format!("write_owned head {skew}"));
    }
    assert_eq!(up.counters.bytes, asked);
    assert_eq!(up.counters.writes, (SIZES.len() * OFFSETS.len() + 8) as u64);
    if imports {
        assert!(up.counters.imported_bytes > 0);
    }
    common::assert_no_gpu_errors(&gpu);
}

#[test]
fn host_import_falls_back_when_import_is_off() {
    let gpu = gpu();
    let mut up = Uploader::with_options(&gpu.device, Strategy::HostImport, options(false));
    let host_data = payload(70_001, 3);
    let mut host = HostBytes::unimported(host_data.len()).expect("host memory");
    assert!(!host.is_imported());
    host.bytes_mut().expect("idle").copy_from_slice(&host_data);
    let mut asked = 0u64;
    for (k, &len) in SIZES.iter().enumerate() {
        let offset = OFFSETS[k % OFFSETS.len()];
        let buf = guarded_dst(&gpu, offset, len);
        let data = payload(len, 900 + k as u32);
        submit(&gpu, &mut up, |up, enc| {
            up.write(&gpu.device, &gpu.queue, enc, &buf, offset, &data)
                .expect("write");
        });
        check(
            &gpu,
            &buf,
            offset,
            &data,
            &format!("fallback write len {len}"),
        );
        submit(&gpu, &mut up, |up, enc| {
            up.write_owned(&gpu.device, &gpu.queue, enc, &buf, offset, data.clone())
                .expect("write_owned");
        });
        check(
            &gpu,
            &buf,
            offset,
            &data,
            &format!("fallback write_owned len {len}"),
        );
        asked += 2 * len as u64;
    }
    let buf = guarded_dst(&gpu, 8, host_data.len() - 1);
    submit(&gpu, &mut up, |up, enc| {
        up.write_host(
            &gpu.device,
            &gpu.queue,
            enc,
            &buf,
            8,
            &host,
            1..host_data.len(),
        )
        .expect("write_host");
    });
    check(&gpu, &buf, 8, &host_data[1..], "fallback write_host");
    asked += host_data.len() as u64 - 1;
    assert!(!host.is_busy());
    assert!(matches!(
        up.host_import_error(),
        Some(HostImportError::Disabled)
    ));
    assert_eq!(up.effective_strategy(), Strategy::ThreadedMap);
    assert_eq!(up.counters.bytes, asked);
    assert_eq!(up.counters.imported_bytes, 0);
    // Every write, owned or host bytes, counted once.
    assert_eq!(
        up.counters.host_import_fallbacks,
        2 * SIZES.len() as u64 + 1
    );
    assert_eq!(up.arena_len(), 0);
    common::assert_no_gpu_errors(&gpu);
}

#[test]
fn switching_strategies_with_copies_in_flight() {
    let gpu = gpu();
    let buf = dst(&gpu, 1 << 20);
    let mut up = Uploader::with_options(&gpu.device, Strategy::HostImport, options(true));
    // Writes with no poll in between: arenas fill up, then writes fall back, never wait.
    let mut last = Vec::new();
    for frame in 0..10u32 {
        last = payload(100_000, frame);
        let mut enc = gpu
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
        up.write(&gpu.device, &gpu.queue, &mut enc, &buf, 0, &last)
            .expect("write");
        up.finish();
        gpu.queue.submit([enc.finish()]);
        up.after_submit();
        if frame == 5 {
            // Arenas still in flight are dropped from the uploader; wgpu keeps them alive.
            up.set_strategy(Strategy::ThreadedMap);
            assert_eq!(up.arena_len(), 0);
        }
    }
    gpu.wait_idle();
    assert_eq!(
        gpu.read_buffer_blocking(&buf, 0, 100_000)
            .expect("readback"),
        last
    );
    assert_eq!(up.counters.bytes, 10 * 100_000);
    common::assert_no_gpu_errors(&gpu);
}

#[test]
fn the_new_strategies_are_selectable_by_name() {
    for (name, strategy) in [
        ("threaded-map", Strategy::ThreadedMap),
        ("host-import", Strategy::HostImport),
    ] {
        assert_eq!(strategy.name(), name);
        assert!(Strategy::ALL.contains(&strategy));
        let cli = <vizdeck::cli::Cli as clap::Parser>::try_parse_from([
            "vizdeck",
            "--headless",
            "--upload-strategy",
            name,
        ])
        .expect("flag");
        assert_eq!(cli.upload_strategy, strategy);
    }
}

#[test]
fn a_frame_uploads_host_bytes_and_owned_bytes_counted() {
    let gpu = gpu();
    let imports = imports(&gpu);
    let len = (2 << 20) + 4096 + 3;
    let data = payload(len, 4242);
    let mut host = HostBytes::new(&gpu.device, "test:frame:host", len).expect("host memory");
    host.bytes_mut().expect("idle").copy_from_slice(&data);
    let a = guarded_dst(&gpu, 8, len);
    let b = guarded_dst(&gpu, 12, len);
    let mut frame = vizdeck::gpu::frame::OwnedFrame::new(&gpu, Strategy::HostImport);
    {
        let mut f = frame.frame();
        assert!(f.write_host(&a, 8, &host, 0..len));
        assert!(f.write_owned(&b, 12, data.clone()));
        // Out of range: logged and skipped, not a panic.
        assert!(!f.write_host(&a, 8, &host, 0..len + 1));
    }
    frame.submit();
    gpu.wait_idle();
    check(&gpu, &a, 8, &data, "frame write_host");
    check(&gpu, &b, 12, &data, "frame write_owned");
    let c = frame.counters();
    assert_eq!(c.bytes, 2 * len as u64);
    assert_eq!(c.writes, 2);
    if imports {
        assert!(c.imported_bytes >= (len / 4 * 4) as u64);
    }
    assert!(!host.is_busy());
    common::assert_no_gpu_errors(&gpu);
}
