//! The transfer tables of `vizdeck bench --upload`: every upload [`Strategy`] × payload size
//! ([`upload_table`]), writes straight into mapped GPU memory ([`direct_table`]), readback through the [`ReadbackRing`] ([`readback_table`]), and their
//! markdown ([`transfer_markdown`]).

use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Instant;

use vizdeck::gpu::Gpu;
use vizdeck::gpu::readback::{Consumer, ReadbackRing};
use vizdeck::gpu::upload::direct::DirectBuffer;
use vizdeck::gpu::upload::{HostBytes, Strategy, UploadError, Uploader};

/// One row of the upload table.
#[derive(Clone, Debug, serde::Serialize)]
pub struct UploadRow {
    /// Strategy name.
    pub strategy: &'static str,
    /// Payload per frame, bytes.
    pub bytes: u64,
    /// Frames measured.
    pub frames: u32,
    /// CPU time per frame of the upload: write (+ copy recording) + submit, ms.
    pub cpu_ms: f64,
    /// Time per frame until the GPU holds the data (submit + wait), ms.
    pub total_ms: f64,
    /// `bytes / total` in GB/s (1e9 bytes).
    pub gb_per_s: f64,
    /// `bytes / cpu` in GB/s: what the frame loop sees.
    pub cpu_gb_per_s: f64,
    /// Writes that fell back: no free staging memory (a fresh buffer created mapped used
    /// instead), or host import not available (host-import rows).
    pub fallbacks: u64,
    /// Whether the last frame's bytes read back equal the payload.
    pub verified: bool,
}

impl UploadRow {
    /// The row of `frames` frames of `size` bytes that took `cpu` and `total` seconds in all.
    fn timed(
        strategy: &'static str,
        size: u64,
        frames: u32,
        (cpu, total): (f64, f64),
        fallbacks: u64,
        verified: bool,
    ) -> UploadRow {
        let n = f64::from(frames.max(1));
        UploadRow {
            strategy,
            bytes: size,
            frames,
            cpu_ms: cpu / n * 1e3,
            total_ms: total / n * 1e3,
            gb_per_s: size as f64 * n / total.max(1e-12) / 1e9,
            cpu_gb_per_s: size as f64 * n / cpu.max(1e-12) / 1e9,
            fallbacks,
            verified,
        }
    }
}

/// Payload sizes of the upload table: 64 KiB, 1 MiB, 16 MiB, 256 MiB.
pub const UPLOAD_SIZES: [u64; 4] = [64 << 10, 1 << 20, 16 << 20, 256 << 20];

/// Payload of `len` bytes for frame `frame` (distinct per frame, so stale data is detected).
pub fn payload(len: usize, frame: u32) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u32).wrapping_mul(2_654_435_761).wrapping_add(frame) as u8 ^ (i >> 12) as u8)
        .collect()
}

/// Measures every strategy × size: per frame one upload of the payload into a device-local
/// buffer, submit, wait until done. Sizes above the adapter's `max_buffer_size` are skipped.
///
/// [`Strategy::HostImport`] gives three rows: `host-import` (borrowed bytes, `Uploader::write`:
/// copied into an imported arena, then by the GPU), `host-import:owned` (the payload handed over
/// as an `Arc<[u8]>`, `Uploader::write_owned`: its pages imported for each frame's copy and read
/// in place) and `host-import:pinned` (the payload already in imported host memory the producer
/// filled beforehand, `Uploader::write_host`: the GPU copy only, what a pinned CUDA
/// `cudaMemcpy` host-to-device measures). Where the device cannot import, they fall back
/// (counted in the `fallbacks` column).
pub fn upload_table(
    gpu: &Gpu,
    strategies: &[Strategy],
    sizes: &[u64],
    frames: u32,
) -> Vec<UploadRow> {
    let frames = frames.max(1);
    let max = gpu.device.limits().max_buffer_size;
    let mut rows = Vec::new();
    for &size in sizes {
        if size > max || size == 0 {
            continue;
        }
        let size = size.next_multiple_of(4);
        let payloads = [payload(size as usize, 1), payload(size as usize, 2)];
        let dst = gpu.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("bench:upload:dst"),
            size,
            usage: wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::COPY_DST
                | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        for &strategy in strategies {
            rows.push(measure(
                gpu,
                &dst,
                strategy,
                strategy.name(),
                frames,
                &payloads,
                |up, enc, i| up.write(&gpu.device, &gpu.queue, enc, &dst, 0, &payloads[i]),
            ));
            if strategy != Strategy::HostImport {
                continue;
            }
            let owned: [Arc<[u8]>; 2] = [Arc::from(&payloads[0][..]), Arc::from(&payloads[1][..])];
            rows.push(measure(
                gpu,
                &dst,
                strategy,
                "host-import:owned",
                frames,
                &payloads,
                |up, enc, i| {
                    up.write_owned(&gpu.device, &gpu.queue, enc, &dst, 0, owned[i].clone())
                },
            ));
            drop(owned);
            // The producer's own buffers, filled before the timing (as pinned host memory is).
            let pinned: Vec<HostBytes> = payloads
                .iter()
                .filter_map(|p| {
                    let mut h = HostBytes::new(&gpu.device, "bench:upload:pinned", p.len()).ok()?;
                    h.bytes_mut()?.copy_from_slice(p);
                    Some(h)
                })
                .collect();
            if pinned.len() != 2 {
                log::error!(
                    "bench: host-import:pinned: cannot allocate {size} bytes of host memory"
                );
                continue;
            }
            let mut row = measure(
                gpu,
                &dst,
                strategy,
                "host-import:pinned",
                frames,
                &payloads,
                |up, enc, i| {
                    let h = &pinned[i];
                    up.write_host(&gpu.device, &gpu.queue, enc, &dst, 0, h, 0..h.len())
                },
            );
            if !pinned[0].is_imported() {
                row.fallbacks += 1;
            }
            rows.push(row);
        }
    }
    rows
}

/// Rows `direct` and `direct:pool`: per size a [`DirectBuffer`] (device-local memory the CPU
/// maps) written by the CPU, on the calling thread, then split over the rayon pool in chunks of
/// [`DIRECT_POOL_CHUNK`]; per frame the write, then [`DirectBuffer::confirm`] (a read
/// over the bus, ordered after the writes: the bytes are in GPU memory), `frames` frames after 2
/// warm-up frames, then the buffer read back through wgpu and compared with the last payload. No
/// submit and no copy command: what the CPU's stores cost. Where the device has no such memory
/// (or a size does not fit its heap) the row is missing and the reason logged.
pub fn direct_table(gpu: &Gpu, sizes: &[u64], frames: u32) -> Vec<UploadRow> {
    let frames = frames.max(1);
    let mut rows = Vec::new();
    for &size in sizes {
        let size = size.next_multiple_of(4);
        let mut buf = match DirectBuffer::new(&gpu.device, "bench:upload:direct", size) {
            Ok(b) => b,
            Err(e) => {
                log::error!("bench: direct upload of {}: {e}", human_bytes(size));
                continue;
            }
        };
        let m = buf.memory();
        log::info!(
            "bench: direct upload of {}: memory type {} (heap {}, coherent {}, cached {})",
            human_bytes(size),
            m.memory_type_index,
            human_bytes(m.heap_size),
            m.coherent,
            m.cached
        );
        let payloads = [payload(size as usize, 1), payload(size as usize, 2)];
        for (name, min_chunk) in [("direct", usize::MAX), ("direct:pool", DIRECT_POOL_CHUNK)] {
            let (mut cpu, mut total, mut failed) = (0.0, 0.0, false);
            let last_word = size - 4;
            for f in 0..2 + frames {
                let t0 = Instant::now();
                let written = buf.write(0, &payloads[(f % 2) as usize], min_chunk);
                let t1 = Instant::now();
                let confirmed = buf.confirm(last_word);
                let t2 = Instant::now();
                if let Err(e) = written.and(confirmed) {
                    log::error!("bench: {name}: {e}");
                    failed = true;
                    break;
                }
                if f >= 2 {
                    cpu += (t1 - t0).as_secs_f64();
                    total += (t2 - t0).as_secs_f64();
                }
            }
            let last = &payloads[((2 + frames - 1) % 2) as usize];
            let verified = !failed
                && gpu
                    .read_buffer_blocking(buf.buffer(), 0, size)
                    .is_ok_and(|b| b == *last);
            rows.push(UploadRow::timed(
                name,
                size,
                frames,
                (cpu, total),
                0,
                verified,
            ));
        }
    }
    rows
}

/// The chunk the `direct:pool` rows share out among the threads, bytes (64 KiB).
pub const DIRECT_POOL_CHUNK: usize = 64 << 10;

/// One row: a new uploader of `strategy`, `frames` frames (after 2 warm-up frames) of
/// `write(uploader, encoder, i)` (frame `f` uploads payload `i = f % 2`), submit, wait (spinning,
/// [`Gpu::wait_idle_spin`], as CUDA's synchronisation does); then the destination read back and
/// compared with the last payload.
fn measure(
    gpu: &Gpu,
    dst: &wgpu::Buffer,
    strategy: Strategy,
    name: &'static str,
    frames: u32,
    payloads: &[Vec<u8>; 2],
    mut write: impl FnMut(&mut Uploader, &mut wgpu::CommandEncoder, usize) -> Result<(), UploadError>,
) -> UploadRow {
    let mut up = Uploader::new(&gpu.device, strategy);
    let size = dst.size();
    let mut cpu = 0.0;
    let mut total = 0.0;
    let warm = 2;
    for f in 0..warm + frames {
        let t0 = Instant::now();
        let mut enc = gpu
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("bench:upload"),
            });
        if let Err(e) = write(&mut up, &mut enc, (f % 2) as usize) {
            log::error!("upload {name}: {e}");
        }
        up.finish();
        #[allow(clippy::disallowed_methods)] // a benchmark of the upload strategies themselves
        gpu.queue.submit([enc.finish()]);
        up.after_submit();
        let t1 = Instant::now();
        gpu.wait_idle_spin();
        let t2 = Instant::now();
        if f >= warm {
            cpu += (t1 - t0).as_secs_f64();
            total += (t2 - t0).as_secs_f64();
        }
    }
    let last = &payloads[((warm + frames - 1) % 2) as usize];
    let verified = gpu
        .read_buffer_blocking(dst, 0, size)
        .is_ok_and(|b| b == *last);
    let fallbacks = up.counters.fallbacks
        + up.counters.host_import_fallbacks
        + up.counters.device_staging_fallbacks;
    UploadRow::timed(name, size, frames, (cpu, total), fallbacks, verified)
}

/// The floor under every row of the upload table: µs per frame of an empty encoder, submit and
/// wait, `(blocking wait, spinning wait)`, the mean of `frames` frames after 2 warm-up frames.
#[allow(clippy::disallowed_methods)] // a benchmark of the submit itself, outside any frame
pub fn empty_frame_us(gpu: &Gpu, frames: u32) -> (f64, f64) {
    let frames = frames.max(1);
    let run = |spin: bool| {
        let mut total = 0.0;
        for f in 0..2 + frames {
            let t0 = Instant::now();
            let enc = gpu
                .device
                .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                    label: Some("bench:upload:empty"),
                });
            gpu.queue.submit([enc.finish()]);
            if spin {
                gpu.wait_idle_spin();
            } else {
                gpu.wait_idle();
            }
            if f >= 2 {
                total += t0.elapsed().as_secs_f64();
            }
        }
        total / f64::from(frames) * 1e6
    };
    (run(false), run(true))
}

/// One row of the readback table.
#[derive(Clone, Debug, serde::Serialize)]
pub struct ReadbackRow {
    /// Bytes per frame.
    pub bytes: u64,
    /// Frames measured.
    pub frames: u32,
    /// Copy + map + copy-out per frame, ms.
    pub total_ms: f64,
    /// `bytes / total`, GB/s.
    pub gb_per_s: f64,
}

/// Readback through the [`ReadbackRing`]: per frame a buffer copy into the ring, submit, wait
/// for the map, copy the bytes out.
#[allow(clippy::disallowed_methods)] // a benchmark of the readback ring, outside any frame
pub fn readback_table(gpu: &Gpu, sizes: &[u64], frames: u32) -> Vec<ReadbackRow> {
    let frames = frames.max(1);
    let max = gpu.device.limits().max_buffer_size;
    let mut rows = Vec::new();
    for &size in sizes {
        if size > max || size == 0 {
            continue;
        }
        let size = size.next_multiple_of(4);
        let src = gpu.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("bench:readback:src"),
            size,
            usage: wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut ring = ReadbackRing::new("bench:readback:ring", 2);
        let mut sink = Vec::with_capacity(size as usize);
        let mut total = 0.0;
        for f in 0..2 + frames {
            let t0 = Instant::now();
            let mut enc = gpu
                .device
                .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                    label: Some("bench:readback"),
                });
            ring.copy_buffer(&gpu.device, &mut enc, &src, 0, size, Consumer::Scene(0), f);
            gpu.queue.submit([enc.finish()]);
            ring.after_submit();
            ring.wait(&gpu.device, |a| {
                sink.clear();
                sink.extend_from_slice(a.data);
            });
            if f >= 2 {
                total += t0.elapsed().as_secs_f64();
            }
        }
        let n = frames as f64;
        rows.push(ReadbackRow {
            bytes: size,
            frames,
            total_ms: total / n * 1e3,
            gb_per_s: size as f64 * n / total.max(1e-12) / 1e9,
        });
    }
    rows
}

/// `65536` → `64 KiB`, `1048576` → `1 MiB`.
pub fn human_bytes(b: u64) -> String {
    if b >= 1 << 20 && b.is_multiple_of(1 << 20) {
        format!("{} MiB", b >> 20)
    } else if b >= 1 << 10 && b.is_multiple_of(1 << 10) {
        format!("{} KiB", b >> 10)
    } else {
        format!("{b} B")
    }
}

/// Markdown tables of [`upload_table`] and [`readback_table`] rows.
pub fn transfer_markdown(
    gpu: &Gpu,
    up: &[UploadRow],
    rb: &[ReadbackRow],
    empty_us: (f64, f64),
) -> String {
    let mut s = format!(
        "adapter: {} ({}, {}), driver: {}\n\nAn empty frame (encoder, submit, wait): {:.1} µs \
         with a blocking wait, {:.1} µs spinning (the rows below spin).\n\n| strategy | payload | frames | CPU ms/frame | total \
         ms/frame | GB/s (total) | GB/s (CPU) | fallbacks | bytes verified |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---|\n",
        gpu.summary.name,
        gpu.summary.backend,
        gpu.summary.device_type,
        gpu.summary.driver,
        empty_us.0,
        empty_us.1
    );
    for r in up {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {:.3} | {:.3} | {:.2} | {:.2} | {} | {} |",
            r.strategy,
            human_bytes(r.bytes),
            r.frames,
            r.cpu_ms,
            r.total_ms,
            r.gb_per_s,
            r.cpu_gb_per_s,
            r.fallbacks,
            if r.verified { "yes" } else { "NO" }
        );
    }
    if !rb.is_empty() {
        s.push_str("\n| readback (ring) | frames | ms/frame | GB/s |\n|---:|---:|---:|---:|\n");
        for r in rb {
            let _ = writeln!(
                s,
                "| {} | {} | {:.3} | {:.2} |",
                human_bytes(r.bytes),
                r.frames,
                r.total_ms,
                r.gb_per_s
            );
        }
    }
    s
}
