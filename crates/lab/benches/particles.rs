//! Particle benchmarks: the table of ms per step / per frame, bytes moved and GB/s for each mode
//! and count (`vizdeck_lab::particles::bench_table`), then criterion timings of one
//! wall-clock frame (1 step + wait): free and grid at 16k particles, brute force at 4k.
//!
//! `cargo bench -p vizdeck-lab --bench particles` (lavapipe here: counts 16k…1M, brute force ≤ 16k, 2 steps
//! per row). Env: `PARTICLES_COUNTS=16384,65536` and `PARTICLES_STEPS=4` override the table's
//! counts and steps per row.

#![allow(clippy::disallowed_methods)] // tests and benches drive the GPU with their own submits

#[path = "../../../tests/common/mod.rs"]
mod common;
use common::gpu;

use criterion::{Criterion, criterion_group, criterion_main};

use vizdeck::gpu::upload::Strategy;
use vizdeck::scene::particles::{Mode, Particles};
use vizdeck::scene::{FrameCtx, Scene};
use vizdeck_lab::particles::bench_table;

fn table(_c: &mut Criterion) {
    let gpu = gpu();
    let counts: Vec<u32> = std::env::var("PARTICLES_COUNTS")
        .ok()
        .map(|s| s.split(',').filter_map(|v| v.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![16_384, 65_536, 262_144, 1_048_576]);
    let steps = std::env::var("PARTICLES_STEPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2);
    println!(
        "{}",
        bench_table(&gpu, &counts, &[Mode::Free, Mode::Grid, Mode::Brute], steps)
    );
}

fn frames(c: &mut Criterion) {
    let gpu = gpu();
    let mut group = c.benchmark_group("particles_frame");
    group.sample_size(10);
    group.measurement_time(std::time::Duration::from_secs(2));
    group.warm_up_time(std::time::Duration::from_millis(300));
    for (mode, n) in [
        (Mode::Free, 16_384),
        (Mode::Grid, 16_384),
        (Mode::Brute, 4096),
    ] {
        let mut scene = Particles::with_mode(&gpu, n, mode, 1);
        scene.set_step_rate(vizdeck::scene::particles::StepRate::Hz120);
        let mut frame = 0u64;
        group.bench_function(format!("{}_{n}", mode.name()), |b| {
            b.iter(|| {
                let dt = 1.0 / 120.0;
                scene.fixed_update(dt);
                let ctx = FrameCtx {
                    frame,
                    steps: 1,
                    dt,
                    alpha: 0.0,
                    advanced_s: dt as f64,
                    elapsed_s: dt as f64,
                    size: (64, 64),
                };
                vizdeck::scene::prepare_standalone(&gpu, &mut scene, &ctx, Strategy::WriteBuffer);
                let mut enc = gpu
                    .device
                    .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                        label: Some("particles:bench:criterion"),
                    });
                {
                    let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                        label: Some("particles:bench:criterion"),
                        timestamp_writes: None,
                    });
                    scene.compute(&mut pass, &ctx);
                }
                gpu.queue.submit([enc.finish()]);
                gpu.wait_idle();
                frame += 1;
            })
        });
    }
    group.finish();
}

criterion_group!(benches, table, frames);
criterion_main!(benches);
