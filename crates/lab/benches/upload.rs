//! Transfer and statistics benchmarks.
//!
//! 1. The transfer table: every upload strategy (`queue.write_buffer`, `StagingBelt`, the
//!    MAP_WRITE ring, `mapped_at_creation`) × payload (64 KiB, 1 MiB, 16 MiB, 256 MiB): CPU ms per
//!    frame, ms until the GPU holds the data, GB/s; and readback GB/s through the readback ring
//!    (`vizdeck_lab::transfer::{upload_table, readback_table}`, the same as
//!    `vizdeck-lab --upload all`).
//! 2. Criterion: one 1 MiB upload per strategy (write + submit + wait), and the cost of recording
//!    statistics per frame (one CSV row written and flushed + the live window and HDR histogram),
//!    to compare with a frame time.
//!
//! `cargo bench -p vizdeck-lab --bench upload`. Env: `UPLOAD_SIZES=65536,1048576` (bytes) and `UPLOAD_FRAMES=5`.

#![allow(clippy::disallowed_methods)] // tests and benches drive the GPU with their own submits

#[path = "../../../tests/common/mod.rs"]
mod common;
use common::gpu;

use criterion::{Criterion, criterion_group, criterion_main};
use vizdeck::gpu::upload::{Strategy, Uploader};

use vizdeck::stats::{FrameRecord, Live, Recorder};
use vizdeck_lab::transfer::{
    empty_frame_us, payload, readback_table, transfer_markdown, upload_table,
};

fn table(_c: &mut Criterion) {
    let gpu = gpu();
    let sizes: Vec<u64> = std::env::var("UPLOAD_SIZES")
        .ok()
        .map(|s| s.split(',').filter_map(|v| v.trim().parse().ok()).collect())
        .unwrap_or_else(|| vizdeck_lab::transfer::UPLOAD_SIZES.to_vec());
    let frames = std::env::var("UPLOAD_FRAMES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5);
    let up = upload_table(&gpu, &Strategy::ALL, &sizes, frames);
    let rb = readback_table(&gpu, &sizes, frames);
    let empty = empty_frame_us(&gpu, frames.max(20));
    println!("{}", transfer_markdown(&gpu, &up, &rb, empty));
}

fn uploads(c: &mut Criterion) {
    let gpu = gpu();
    let mut group = c.benchmark_group("upload_1MiB");
    group.sample_size(10);
    group.measurement_time(std::time::Duration::from_secs(2));
    group.warm_up_time(std::time::Duration::from_millis(300));
    let data = payload(1 << 20, 3);
    let dst = gpu.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("bench:upload:dst"),
        size: 1 << 20,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    for strategy in Strategy::ALL {
        let mut up = Uploader::new(&gpu.device, strategy);
        group.bench_function(strategy.name(), |b| {
            b.iter(|| {
                let mut enc = gpu
                    .device
                    .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
                up.write(&gpu.device, &gpu.queue, &mut enc, &dst, 0, &data)
                    .expect("upload");
                up.finish();
                gpu.queue.submit([enc.finish()]);
                up.after_submit();
                gpu.wait_idle();
            })
        });
    }
    group.finish();
}

fn recording(c: &mut Criterion) {
    let path = std::env::temp_dir().join(format!("vizdeck_bench_rec_{}.csv", std::process::id()));
    let mut rec = Recorder::create(&path).expect("temp file");
    let mut live = Live::default();
    let mut row = FrameRecord {
        scene: "particles",
        ms_between_presents: 16.7,
        cpu_busy_ms: 2.345678,
        ingest_ms: 0.012345,
        update_ms: 0.4567,
        ui_ms: 0.891,
        upload_ms: 0.1234,
        encode_ms: 0.5678,
        submit_ms: 0.0345,
        gpu_compute_ms: Some(1.234567),
        gpu_render_ms: Some(2.345678),
        gpu_ui_ms: Some(0.345678),
        steps: 2,
        bytes_uploaded: 1 << 20,
        bytes_read_back: 48,
        ..Default::default()
    };
    let mut group = c.benchmark_group("stats");
    group.sample_size(20);
    group.measurement_time(std::time::Duration::from_secs(2));
    group.warm_up_time(std::time::Duration::from_millis(300));
    group.bench_function("record_row_csv_flush_and_live", |b| {
        b.iter(|| {
            row.frame += 1;
            row.time_ms += 16.7;
            rec.push(&row).expect("write");
            live.push(row.ms_between_presents + (row.frame % 7) as f64);
            std::hint::black_box(live.hdr_percentile(99.0));
        })
    });
    group.finish();
    drop(rec);
    let _ = std::fs::remove_file(&path);
}

criterion_group!(benches, table, uploads, recording);
criterion_main!(benches);
