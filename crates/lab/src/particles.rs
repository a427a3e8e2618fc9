//! Benchmark table of the particle scene: milliseconds per simulation step and per frame
//! (2 steps at 60 Hz display / 120 Hz simulation + statistics reduction + sprite draw into an
//! offscreen 1280×720 target), bytes moved per step and the bandwidth that achieves. GPU times
//! come from timestamp queries around the passes when the adapter has them, else from the wall
//! clock around submit + wait.

use std::time::Instant;

use vizdeck::gpu::Gpu;
use vizdeck::scene::FrameCtx;
use vizdeck::scene::Scene;
use vizdeck::scene::particles::Particles;
use vizdeck::scene::particles::{Mode, bytes_per_step, max_count};

/// Largest brute-force count benchmarked on a CPU adapter (lavapipe): 64k takes ~50 s a step.
pub const BRUTE_MAX_CPU: u32 = 16_384;
/// Largest brute-force count benchmarked on a GPU.
pub const BRUTE_MAX_GPU: u32 = 1_048_576;
/// Offscreen target of the frame benchmark (pixels).
pub const FRAME_SIZE: (u32, u32) = (1280, 720);

/// One measured row.
#[derive(Clone, Debug, serde::Serialize)]
pub struct BenchRow {
    /// Mode.
    pub mode: Mode,
    /// Particle count.
    pub count: u32,
    /// Milliseconds per simulation step (mean over the measured steps).
    pub step_ms: f64,
    /// Milliseconds per frame: 2 steps + statistics + draw.
    pub frame_ms: f64,
    /// Bytes one step moves ([`bytes_per_step`]).
    pub bytes_per_step: u64,
    /// bytes_per_step / step time, in GB/s (10^9 B/s).
    pub gb_per_s: f64,
    /// "timestamps" or "wall clock".
    pub timing: &'static str,
}

struct Timer {
    queries: wgpu::QuerySet,
    resolve: wgpu::Buffer,
    period_ns: f64,
}

impl Timer {
    fn new(gpu: &Gpu) -> Option<Timer> {
        if !gpu
            .device
            .features()
            .contains(wgpu::Features::TIMESTAMP_QUERY)
        {
            return None;
        }
        let d = &gpu.device;
        Some(Timer {
            queries: d.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("particles:bench:queries"),
                ty: wgpu::QueryType::Timestamp,
                count: 4,
            }),
            resolve: d.create_buffer(&wgpu::BufferDescriptor {
                label: Some("particles:bench:resolve"),
                size: 32,
                usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            }),
            period_ns: gpu.queue.get_timestamp_period() as f64,
        })
    }
}

/// Runs one frame of `steps` steps through the scene (optionally drawing) and returns the GPU
/// time in ms of the compute and render passes (timestamps, or wall clock for both together).
#[allow(clippy::disallowed_methods)] // a benchmark frame outside the deck
fn timed_frame(
    gpu: &Gpu,
    scene: &mut Particles,
    frame: u64,
    steps: u32,
    draw: Option<&wgpu::TextureView>,
    timer: Option<&Timer>,
) -> (f64, f64) {
    let dt = vizdeck::clock::DT as f32;
    for _ in 0..steps {
        scene.fixed_update(dt);
    }
    let ctx = FrameCtx {
        frame,
        steps,
        dt,
        alpha: 0.5,
        advanced_s: steps as f64 * dt as f64,
        elapsed_s: steps as f64 * dt as f64,
        size: FRAME_SIZE,
    };
    vizdeck::scene::prepare_standalone(
        gpu,
        scene,
        &ctx,
        vizdeck::gpu::upload::Strategy::WriteBuffer,
    );
    let mut enc = gpu
        .device
        .create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("particles:bench"),
        });
    let start = Instant::now();
    {
        let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("particles:bench:compute"),
            timestamp_writes: timer.map(|t| wgpu::ComputePassTimestampWrites {
                query_set: &t.queries,
                beginning_of_pass_write_index: Some(0),
                end_of_pass_write_index: Some(1),
            }),
        });
        scene.compute(&mut pass, &ctx);
    }
    if let Some(view) = draw {
        let mut pass = enc.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("particles:bench:render"),
            color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                view,
                depth_slice: None,
                resolve_target: None,
                ops: wgpu::Operations {
                    load: wgpu::LoadOp::Clear(wgpu::Color::BLACK),
                    store: wgpu::StoreOp::Store,
                },
            })],
            depth_stencil_attachment: None,
            timestamp_writes: timer.map(|t| wgpu::RenderPassTimestampWrites {
                query_set: &t.queries,
                beginning_of_pass_write_index: Some(2),
                end_of_pass_write_index: Some(3),
            }),
            occlusion_query_set: None,
            multiview_mask: None,
        });
        scene.paint(&mut pass, &ctx);
    }
    if let Some(t) = timer {
        let n = if draw.is_some() { 4 } else { 2 };
        enc.resolve_query_set(&t.queries, 0..n, &t.resolve, 0);
    }
    gpu.queue.submit([enc.finish()]);
    gpu.wait_idle();
    let wall = start.elapsed().as_secs_f64() * 1e3;
    match timer {
        Some(t) => match gpu.read_buffer_blocking(&t.resolve, 0, 32) {
            Ok(bytes) => {
                let ticks: [u64; 4] = bytemuck::pod_read_unaligned(&bytes);
                let ms = |a: u64, b: u64| b.saturating_sub(a) as f64 * t.period_ns / 1e6;
                let render = if draw.is_some() {
                    ms(ticks[2], ticks[3])
                } else {
                    0.0
                };
                (ms(ticks[0], ticks[1]), render)
            }
            Err(_) => (wall, 0.0),
        },
        None => (wall, 0.0),
    }
}

/// Measures one (mode, count): `steps` steps in frames of 8 (statistics off), then
/// max(steps / 2, 2) frames of 2 steps + statistics + draw. `None` when skipped (count over
/// the adapter's limit, or brute force above [`BRUTE_MAX_CPU`] / [`BRUTE_MAX_GPU`]).
pub fn bench_one(gpu: &Gpu, count: u32, mode: Mode, steps: u32) -> Option<BenchRow> {
    let cpu = gpu.is_cpu_adapter();
    if count > max_count(&gpu.device.limits(), mode)
        || (mode == Mode::Brute && count > if cpu { BRUTE_MAX_CPU } else { BRUTE_MAX_GPU })
    {
        return None;
    }
    let timer = Timer::new(gpu);
    let target = gpu.device.create_texture(&wgpu::TextureDescriptor {
        label: Some("particles:bench:target"),
        size: wgpu::Extent3d {
            width: FRAME_SIZE.0,
            height: FRAME_SIZE.1,
            depth_or_array_layers: 1,
        },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format: vizdeck::scene::SCENE_FORMAT,
        usage: wgpu::TextureUsages::RENDER_ATTACHMENT,
        view_formats: &[],
    });
    let view = target.create_view(&Default::default());
    let mut scene = Particles::with_mode(gpu, count, mode, 1);
    // One step per clock tick: the table measures steps, whatever this adapter's default rate.
    scene.set_step_rate(vizdeck::scene::particles::StepRate::Hz120);
    let n = scene.count();
    let mut frame = 0u64;
    // Warm-up (pipeline compilation, first-touch of buffers).
    timed_frame(gpu, &mut scene, frame, 1, Some(&view), timer.as_ref());
    frame += 1;
    scene.sim_mut().set_stats_enabled(false);
    let mut left = steps.max(1);
    let mut step_ms = 0.0;
    while left > 0 {
        let k = left.min(vizdeck::clock::MAX_STEPS);
        step_ms += timed_frame(gpu, &mut scene, frame, k, None, timer.as_ref()).0;
        frame += 1;
        left -= k;
    }
    step_ms /= steps.max(1) as f64;
    scene.sim_mut().set_stats_enabled(true);
    let frames = (steps / 2).max(2);
    let mut frame_ms = 0.0;
    for _ in 0..frames {
        let (c, r) = timed_frame(gpu, &mut scene, frame, 2, Some(&view), timer.as_ref());
        frame_ms += c + r;
        frame += 1;
    }
    frame_ms /= frames as f64;
    let bytes = bytes_per_step(mode, n as u64, scene.sim().consts().dims[3] as u64);
    Some(BenchRow {
        mode,
        count: n,
        step_ms,
        frame_ms,
        bytes_per_step: bytes,
        gb_per_s: if step_ms > 0.0 {
            bytes as f64 / (step_ms * 1e-3) / 1e9
        } else {
            0.0
        },
        timing: if timer.is_some() {
            "timestamps"
        } else {
            "wall clock"
        },
    })
}

/// Runs [`bench_one`] for every mode × count and returns a Markdown table (one row each;
/// skipped combinations say why), headed by the adapter.
pub fn bench_table(gpu: &Gpu, counts: &[u32], modes: &[Mode], steps: u32) -> String {
    let mut out = format!(
        "adapter: {} ({}, {}, {}); {} steps per row; frame = 2 steps + stats + draw {}x{}\n\n",
        gpu.summary.name,
        gpu.summary.backend,
        gpu.summary.device_type,
        gpu.summary.driver,
        steps,
        FRAME_SIZE.0,
        FRAME_SIZE.1
    );
    out += "| mode | N | ms/step | ms/frame | MB/step | GB/s | timing |\n";
    out += "|---|---:|---:|---:|---:|---:|---|\n";
    for &mode in modes {
        for &count in counts {
            match bench_one(gpu, count, mode, steps) {
                Some(r) => {
                    out += &format!(
                        "| {} | {} | {:.3} | {:.3} | {:.1} | {:.1} | {} |\n",
                        mode.name(),
                        r.count,
                        r.step_ms,
                        r.frame_ms,
                        r.bytes_per_step as f64 / 1e6,
                        r.gb_per_s,
                        r.timing
                    );
                }
                None => {
                    out += &format!("| {} | {} | skipped | | | | |\n", mode.name(), count);
                }
            }
        }
    }
    let errors = gpu.error_messages();
    if let Some(e) = errors.first() {
        out += &format!("\nGPU errors: {} (first: {e})\n", errors.len());
    }
    out
}
