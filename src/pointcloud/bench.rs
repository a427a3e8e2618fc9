//! `vizdeck bench --kernels pointcloud`: the compute rasterizer ([`super::raster`], both passes
//! into a `--size` visibility buffer (default 1280×720), then the resolve into colours) against the same points drawn as one-pixel point primitives
//! with a depth test (`points_baseline.wgsl`, what GL_POINTS viewers do), same points, same
//! view, same run.
//!
//! The points: a deterministic terrain over [−1, 1]² (z from a few sines, positions from a
//! 32-bit LCG) seen from above through an orthographic view that fills the target.
//! Timing: `reps` repetitions recorded into one pass and submitted once, wall time from submit to
//! idle divided by `reps` (after one warm-up run), for both sides; points/s = N / time.

use std::time::Instant;

use super::raster::{
    ColorMode, RasterParams, Rasterizer, ResolveParams, ResolveVariant, contiguous_batches,
};
use crate::gpu::Gpu;
use crate::gpu::shaders::{POINTCLOUD_POINTS_BASELINE, RenderOptions};

/// Size of the target of both sides when none is given (`vizdeck bench --size`'s default).
pub const SIZE: (u32, u32) = (1280, 720);

/// `n` terrain points (x, y, z, 0) in [−1, 1]² × [0, 0.3].
pub fn terrain(n: u32) -> Vec<[f32; 4]> {
    let mut s = 0x2545_f491u32;
    let mut next = move || {
        s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        (s >> 8) as f32 / (1u32 << 24) as f32
    };
    (0..n)
        .map(|_| {
            let (x, y) = (next() * 2.0 - 1.0, next() * 2.0 - 1.0);
            let z = 0.15 + 0.1 * (3.0 * x).sin() * (2.0 * y).cos() + 0.05 * (11.0 * x * y).sin();
            [x, y, z, 0.0]
        })
        .collect()
}

/// The view of both sides: orthographic from above, x and y to the target, depth 1 − z.
fn params(size: (u32, u32)) -> RasterParams {
    RasterParams::new(
        [
            [0.999, 0.0, 0.0, 0.0],
            [0.0, 0.999, 0.0, 0.0],
            [0.0, 0.0, -1.0, 0.0],
            [0.0, 0.0, 1.0, 1.0],
        ],
        size,
    )
}

/// The baseline's pipeline (one-pixel points, depth tested) and its bind group.
fn baseline(gpu: &Gpu, params: &wgpu::Buffer) -> (wgpu::RenderPipeline, wgpu::BindGroup) {
    let d = &gpu.device;
    let layout = crate::gpu::layout::bind_group_layout(
        d,
        "pointcloud:baseline",
        &[crate::gpu::layout::uniform(
            0,
            wgpu::ShaderStages::VERTEX,
            None,
        )],
    );
    let group = crate::gpu::layout::bind_group(
        d,
        "pointcloud:baseline:group",
        &layout,
        &[params.as_entire_binding()],
    );
    let pl = crate::gpu::layout::pipeline_layout(d, "pointcloud:baseline", &[&layout]);
    let attributes = [wgpu::VertexAttribute {
        format: wgpu::VertexFormat::Float32x4,
        offset: 0,
        shader_location: 0,
    }];
    let buffers = [Some(wgpu::VertexBufferLayout {
        array_stride: 16,
        step_mode: wgpu::VertexStepMode::Vertex,
        attributes: &attributes,
    })];
    let pipeline = POINTCLOUD_POINTS_BASELINE.render_pipeline(
        d,
        "pointcloud:baseline",
        &pl,
        &RenderOptions {
            topology: wgpu::PrimitiveTopology::PointList,
            vertex_buffers: &buffers,
            depth: Some(wgpu::DepthStencilState {
                format: wgpu::TextureFormat::Depth32Float,
                depth_write_enabled: Some(true),
                depth_compare: Some(wgpu::CompareFunction::Less),
                stencil: Default::default(),
                bias: Default::default(),
            }),
            ..Default::default()
        },
    );
    (pipeline, group)
}

/// Seconds per repetition of `record` (called `reps` times inside one render pass into a
/// `size` colour target, with a depth attachment when `depth`), after one warm-up run.
#[allow(clippy::disallowed_methods)] // a benchmark outside the deck
fn time_render(
    gpu: &Gpu,
    size: (u32, u32),
    reps: u32,
    depth: bool,
    record: impl Fn(&mut wgpu::RenderPass<'_>),
) -> f64 {
    let d = &gpu.device;
    let texture = |label: &str, format| {
        d.create_texture(&wgpu::TextureDescriptor {
            label: Some(label),
            size: wgpu::Extent3d {
                width: size.0,
                height: size.1,
                depth_or_array_layers: 1,
            },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format,
            usage: wgpu::TextureUsages::RENDER_ATTACHMENT,
            view_formats: &[],
        })
        .create_view(&Default::default())
    };
    let color = texture("pointcloud:bench:color", crate::scene::SCENE_FORMAT);
    let depth_view =
        depth.then(|| texture("pointcloud:bench:depth", wgpu::TextureFormat::Depth32Float));
    let run = |reps: u32| {
        let mut enc = d.create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("pointcloud:bench:render"),
        });
        {
            let mut pass = enc.begin_render_pass(&wgpu::RenderPassDescriptor {
                label: Some("pointcloud:bench:render:pass"),
                color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                    view: &color,
                    depth_slice: None,
                    resolve_target: None,
                    ops: wgpu::Operations {
                        load: wgpu::LoadOp::Clear(wgpu::Color::BLACK),
                        store: wgpu::StoreOp::Store,
                    },
                })],
                depth_stencil_attachment: depth_view.as_ref().map(|v| {
                    wgpu::RenderPassDepthStencilAttachment {
                        view: v,
                        depth_ops: Some(wgpu::Operations {
                            load: wgpu::LoadOp::Clear(1.0),
                            store: wgpu::StoreOp::Store,
                        }),
                        stencil_ops: None,
                    }
                }),
                timestamp_writes: None,
                occlusion_query_set: None,
                multiview_mask: None,
            });
            for _ in 0..reps {
                record(&mut pass);
            }
        }
        let t = Instant::now();
        gpu.queue.submit([enc.finish()]);
        gpu.wait_idle();
        t.elapsed().as_secs_f64()
    };
    run(1);
    run(reps) / f64::from(reps)
}

/// Seconds per repetition of the compute rasterizer of `path` (its passes, then the resolve)
/// over the `n` points in `vertices` (packed as the pool packs them), `reps` repetitions.
#[allow(clippy::too_many_arguments)]
fn time_rasterizer(
    gpu: &Gpu,
    path: super::raster::RasterPath,
    vertices: &wgpu::Buffer,
    params_buf: &wgpu::Buffer,
    batches: &wgpu::Buffer,
    n: u32,
    reps: u32,
    size: (u32, u32),
) -> f64 {
    use wgpu::util::DeviceExt;
    let d = &gpu.device;
    let mut r = Rasterizer::with_path(d, crate::scene::SCENE_FORMAT, path);
    let target = r.target(d, size);
    let group = r.bind(d, params_buf, vertices, batches, &target);
    let (raster, _) =
        crate::gpu::timing::time_compute_pass(gpu, "pointcloud:bench:raster", reps, |pass| {
            r.encode(pass, &group, n.div_ceil(super::raster::BATCH_POINTS))
        });
    let attrs = d.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("pointcloud:bench:attrs"),
        contents: bytemuck::cast_slice(&vec![[0xff80_c0ffu32, 0]; n as usize]),
        usage: wgpu::BufferUsages::STORAGE,
    });
    let rp = ResolveParams {
        width: size.0,
        height: size.1,
        ..bytemuck::Zeroable::zeroed()
    };
    let resolve_buf = d.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("pointcloud:bench:resolve_params"),
        contents: bytemuck::bytes_of(&rp),
        usage: wgpu::BufferUsages::UNIFORM,
    });
    let resolve = r.bind_resolve(d, &resolve_buf, &target, vertices, &attrs);
    let variant = ResolveVariant {
        mode: ColorMode::Rgb,
        radius: 0,
        edl: false,
    };
    r.prepare_variant(d, variant);
    raster
        + time_render(gpu, size, reps, false, |pass| {
            r.paint(pass, variant, &resolve)
        })
}

/// The table for each of `counts` points, `reps` repetitions per side (at least 1): the
/// compute rasterizer's 64-bit path (where the adapter has it) and 32-bit path, each with the
/// resolve, against point primitives, into a target of `size` pixels.
pub fn bench_table(gpu: &Gpu, counts: &[u32], reps: u32, size: (u32, u32)) -> String {
    use super::raster::RasterPath;
    use wgpu::util::DeviceExt;
    let reps = reps.max(1);
    let d = &gpu.device;
    let has64 = RasterPath::best(d) == RasterPath::Atomic64;
    let mut out = format!(
        "Point-cloud rasterization, adapter: {} ({}, {}), {}x{}, {reps} reps per submit{}\n\n\
         | points | compute 64-bit ms | M points/s | compute 32-bit ms | M points/s | point \
         primitives ms | M points/s | 64-bit / primitives | 32-bit / primitives |\n\
         |---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
        gpu.summary.name,
        gpu.summary.backend,
        gpu.summary.device_type,
        size.0,
        size.1,
        if has64 {
            ""
        } else {
            " (no 64-bit atomics: that column is empty)"
        }
    );
    for &n in counts {
        let max = d.limits().max_storage_buffer_binding_size / 16;
        if u64::from(n) > max {
            out.push_str(&format!(
                "| {n} | over this adapter's binding limit | | | | | | | |\n"
            ));
            continue;
        }
        let pts = terrain(n);
        let vertices = d.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("pointcloud:bench:points"),
            contents: bytemuck::cast_slice(&pts),
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::VERTEX,
        });
        let p = params(size);
        let params_buf = d.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("pointcloud:bench:params"),
            contents: bytemuck::bytes_of(&p),
            usage: wgpu::BufferUsages::UNIFORM,
        });
        let table = contiguous_batches(n, [0.0; 3]);
        let batches = d.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("pointcloud:bench:batches"),
            contents: bytemuck::cast_slice(&table),
            usage: wgpu::BufferUsages::STORAGE,
        });
        let time =
            |path| time_rasterizer(gpu, path, &vertices, &params_buf, &batches, n, reps, size);
        let wall64 = has64.then(|| time(RasterPath::Atomic64));
        let wall32 = time(RasterPath::TwoPass32);
        let (pipeline, base_group) = baseline(gpu, &params_buf);
        let base = time_render(gpu, size, reps, true, |pass| {
            pass.set_pipeline(&pipeline);
            pass.set_bind_group(0, &base_group, &[]);
            pass.set_vertex_buffer(0, vertices.slice(..));
            pass.draw(0..n, 0..1);
        });
        let rate = |s: f64| f64::from(n) / s / 1e6;
        let (ms64, rate64, ratio64) = match wall64 {
            Some(w) => (
                format!("{:.3}", w * 1e3),
                format!("{:.1}", rate(w)),
                format!("{:.2}×", base / w),
            ),
            None => Default::default(),
        };
        out.push_str(&format!(
            "| {n} | {ms64} | {rate64} | {:.3} | {:.1} | {:.3} | {:.1} | {ratio64} | {:.2}× |\n",
            wall32 * 1e3,
            rate(wall32),
            base * 1e3,
            rate(base),
            base / wall32
        ));
    }
    out
}
