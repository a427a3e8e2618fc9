//! `vizdeck-lab --kernels pointcloud`: the compute rasterizer ([`vizdeck::pointcloud::raster`], both passes
//! into a `--size` visibility buffer (default 1280×720), then the resolve into colours) against the same points drawn as one-pixel point primitives
//! with a depth test (`points_baseline.wgsl`, what GL_POINTS viewers do), same points, same
//! view, same run.
//!
//! The points: a deterministic terrain over [−1, 1]² (z from a few sines, positions from a
//! 32-bit LCG) seen from above through an orthographic view that fills the target.
//! Timing: `reps` frames recorded into one encoder and submitted once, wall time from submit to
//! idle divided by `reps` (after one warm-up run), for every side; each frame starts from a
//! cleared target (the visibility buffer cleared, or the colour and depth attachments), so the
//! early depth test never sees an earlier frame's result; points/s = N / time.
//!
//! A further column: the same terrain quantized ([`vizdeck::pointcloud::raster::QuantizedCloud`], 4 bytes a
//! point), generated straight in spatially coherent order (cells of a 2D Morton grid, about
//! [`QBATCH_POINTS`] points a cell, so each batch covers a few pixels), over as many storage
//! bindings as the device's limits need; its resolve fetches attributes for the visible points
//! only. A count whose buffers the device cannot hold is said in its row and skipped.

use vizdeck::gpu::Gpu;
use vizdeck::gpu::shaders::{RenderOptions, ShaderSource};
use vizdeck::pointcloud::raster::{
    ColorMode, QBATCH_POINTS, QBatch, QuantizedCloud, RasterParams, Rasterizer, ResolveParams,
    ResolveVariant, contiguous_batches, points_per_binding, quantize_batch,
};

/// The rasterizer's baseline: one-pixel point primitives (render), the lab's own shader
/// (`crates/lab/shaders/points_baseline.wgsl`) after the point-cloud view's `common/pointcloud.wgsl`.
pub const POINTS_BASELINE: ShaderSource = ShaderSource {
    path: "lab/points_baseline.wgsl",
    prelude: &["common/pointcloud.wgsl"],
    body: include_str!("../shaders/points_baseline.wgsl"),
    source: concat!(
        include_str!("../../views/shaders/common/pointcloud.wgsl"),
        include_str!("../shaders/points_baseline.wgsl")
    ),
};

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
            [x, y, terrain_z(x, y), 0.0]
        })
        .collect()
}

/// The terrain's height at (x, y): in [0, 0.3].
fn terrain_z(x: f32, y: f32) -> f32 {
    0.15 + 0.1 * (3.0 * x).sin() * (2.0 * y).cos() + 0.05 * (11.0 * x * y).sin()
}

/// Point `i` of `n` of the same terrain in spatially coherent order: the points fill the cells
/// of a 2^`g_log2`-a-side grid over [−1, 1]² one cell after the other in 2D Morton order
/// (point i in cell ⌊i · cells / n⌋), each uniform within its cell (from a hash of i).
pub fn coherent_point(i: u64, n: u64, g_log2: u32) -> [f32; 3] {
    let cells = 1u64 << (2 * g_log2);
    let m = (u128::from(i) * u128::from(cells) / u128::from(n.max(1))) as u64;
    let compact = |mut v: u64| {
        v &= 0x5555_5555_5555_5555;
        v = (v | (v >> 1)) & 0x3333_3333_3333_3333;
        v = (v | (v >> 2)) & 0x0f0f_0f0f_0f0f_0f0f;
        v = (v | (v >> 4)) & 0x00ff_00ff_00ff_00ff;
        v = (v | (v >> 8)) & 0x0000_ffff_0000_ffff;
        (v | (v >> 16)) & 0x0000_0000_ffff_ffff
    };
    let (cx, cy) = (compact(m), compact(m >> 1));
    let mut h = vizdeck::scene::particles::SplitMix64(i ^ 0x9e37_79b9_7f4a_7c15);
    let g = (1u64 << g_log2) as f32;
    let x = (cx as f32 + h.next_f32()) / g * 2.0 - 1.0;
    let y = (cy as f32 + h.next_f32()) / g * 2.0 - 1.0;
    [x, y, terrain_z(x, y)]
}

/// The grid of [`coherent_point`] for `n` points: the largest power-of-two side whose cells
/// hold at least [`QBATCH_POINTS`] points each (at least 1 cell).
pub fn coherent_grid(n: u64) -> u32 {
    let mut g = 0;
    while g < 16 && (n >> (2 * (g + 1))) >= u64::from(QBATCH_POINTS) {
        g += 1;
    }
    g
}

/// The quantized terrain of `n` points on the GPU ([`coherent_point`], quantized batch by batch,
/// generated on every core), `per_binding` points a binding.
///
/// # Errors
/// As [`QuantizedCloud::build`] (too many points, out of memory).
pub fn quantized_terrain(gpu: &Gpu, n: u64, per_binding: u64) -> Result<QuantizedCloud, String> {
    let g = coherent_grid(n);
    let threads = std::thread::available_parallelism().map_or(1, |t| t.get());
    QuantizedCloud::build(&gpu.device, n, per_binding, |first, codes, table| {
        let batch = QBATCH_POINTS as usize;
        let per_thread = table.len().div_ceil(threads).max(1);
        std::thread::scope(|scope| {
            for (t, (codes, table)) in codes
                .chunks_mut(per_thread * batch)
                .zip(table.chunks_mut(per_thread))
                .enumerate()
            {
                scope.spawn(move || {
                    let mut pts = vec![[0.0f32; 3]; batch];
                    for (j, (codes, entry)) in codes.chunks_mut(batch).zip(table).enumerate() {
                        let id0 = u64::from(first) + ((t * per_thread + j) * batch) as u64;
                        let run = &mut pts[..codes.len()];
                        for (k, p) in run.iter_mut().enumerate() {
                            *p = coherent_point(id0 + k as u64, n, g);
                        }
                        let (lo, step) = quantize_batch(run, codes);
                        *entry = QBatch::new(lo, step, id0 as u32, 0, codes.len() as u32);
                    }
                });
            }
        });
    })
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
    let layout = vizdeck::gpu::layout::bind_group_layout(
        d,
        "pointcloud:baseline",
        &[vizdeck::gpu::layout::uniform(
            0,
            wgpu::ShaderStages::VERTEX,
            None,
        )],
    );
    let group = vizdeck::gpu::layout::bind_group(
        d,
        "pointcloud:baseline:group",
        &layout,
        &[params.as_entire_binding()],
    );
    let pl = vizdeck::gpu::layout::pipeline_layout(d, "pointcloud:baseline", &[&layout]);
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
    let pipeline = POINTS_BASELINE.render_pipeline(
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

/// Seconds per frame of `record` (called `reps` times, each in its own render pass into a
/// `size` colour target, with a cleared depth attachment when `depth`), after `before` (clears,
/// compute passes of the frame, given the colour target) in the same encoder; the render pass
/// clears the target first, or keeps what `before` wrote there when `before` returns true (the
/// compute rasterizer's resolved image, copied in as the deck copies it); timed by
/// [`time_reps`](crate::kernel::time_reps).
fn time_render(
    gpu: &Gpu,
    size: (u32, u32),
    reps: u32,
    depth: bool,
    before: impl Fn(&mut wgpu::CommandEncoder, &wgpu::Texture) -> bool,
    record: impl Fn(&mut wgpu::RenderPass<'_>),
) -> f64 {
    let d = &gpu.device;
    let texture = |label: &str, format, usage| {
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
            usage: wgpu::TextureUsages::RENDER_ATTACHMENT | usage,
            view_formats: &[],
        })
    };
    let color_texture = texture(
        "pointcloud:bench:color",
        vizdeck::scene::SCENE_FORMAT,
        wgpu::TextureUsages::COPY_DST,
    );
    let color = color_texture.create_view(&Default::default());
    let depth_view = depth.then(|| {
        texture(
            "pointcloud:bench:depth",
            wgpu::TextureFormat::Depth32Float,
            wgpu::TextureUsages::empty(),
        )
        .create_view(&Default::default())
    });
    crate::kernel::time_reps(gpu, "pointcloud:bench:frame", reps, |enc| {
        let written = before(enc, &color_texture);
        let mut pass = enc.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("pointcloud:bench:render:pass"),
            color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                view: &color,
                depth_slice: None,
                resolve_target: None,
                ops: wgpu::Operations {
                    load: if written {
                        wgpu::LoadOp::Load
                    } else {
                        wgpu::LoadOp::Clear(wgpu::Color::BLACK)
                    },
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
        record(&mut pass);
    })
}

/// Seconds per repetition of the compute rasterizer of `path` (its passes, then the resolve)
/// over the `n` points in `vertices` (packed as the pool packs them), `reps` repetitions.
#[allow(clippy::too_many_arguments)]
fn time_rasterizer(
    gpu: &Gpu,
    path: vizdeck::pointcloud::raster::RasterPath,
    vertices: &wgpu::Buffer,
    params_buf: &wgpu::Buffer,
    batches: &wgpu::Buffer,
    n: u32,
    reps: u32,
    size: (u32, u32),
) -> f64 {
    use wgpu::util::DeviceExt;
    let d = &gpu.device;
    let mut r = Rasterizer::with_path(d, vizdeck::scene::SCENE_FORMAT, path);
    let target = r.target(d, size);
    let group = r.bind(d, params_buf, vertices, batches, &target);
    let attrs = d.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("pointcloud:bench:attrs"),
        contents: bytemuck::cast_slice(&vec![[0xff80_c0ffu32, 0]; n as usize]),
        usage: wgpu::BufferUsages::STORAGE,
    });
    let resolve_buf = resolve_params(gpu, size);
    let resolve = r.bind_resolve(d, &resolve_buf, &target, vertices, &attrs);
    let image = r.image(d, size);
    r.prepare_variant(d, VARIANT);
    time_render(
        gpu,
        size,
        reps,
        false,
        |enc, color| {
            r.clear(enc, &target);
            vizdeck::gpu::frame::compute_pass(enc, "pointcloud:bench:raster", |pass| {
                r.encode(
                    pass,
                    &group,
                    n.div_ceil(vizdeck::pointcloud::raster::BATCH_POINTS),
                );
                r.resolve(pass, VARIANT, &resolve, &image);
            });
            image.copy_to(enc, color);
            true
        },
        |_| {},
    )
}

/// The resolve variant every side is timed with: RGB, radius 0, no eye-dome lighting.
const VARIANT: ResolveVariant = ResolveVariant {
    mode: ColorMode::Rgb,
    radius: 0,
    edl: false,
};

/// The rasterizer's parameters ([`params`]) for a `size` target, in a uniform buffer.
fn params_buffer(gpu: &Gpu, size: (u32, u32)) -> wgpu::Buffer {
    use wgpu::util::DeviceExt;
    gpu.device
        .create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("pointcloud:bench:params"),
            contents: bytemuck::bytes_of(&params(size)),
            usage: wgpu::BufferUsages::UNIFORM,
        })
}

/// The resolve's parameters for a `size` target.
fn resolve_params(gpu: &Gpu, size: (u32, u32)) -> wgpu::Buffer {
    use wgpu::util::DeviceExt;
    let rp = ResolveParams {
        width: size.0,
        height: size.1,
        pitch: vizdeck::pointcloud::raster::ResolveImage::pitch_of(size.0),
        ..bytemuck::Zeroable::zeroed()
    };
    gpu.device
        .create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("pointcloud:bench:resolve_params"),
            contents: bytemuck::bytes_of(&rp),
            usage: wgpu::BufferUsages::UNIFORM,
        })
}

/// Seconds per frame (clear, raster passes, resolve) of the quantized terrain of `n` points on
/// the best path, as drawn (no workgroup depth filter) and with the filter, and the bindings it
/// takes; `Err` with a line saying why it did not run.
fn time_quantized(
    gpu: &Gpu,
    n: u32,
    reps: u32,
    size: (u32, u32),
) -> Result<(f64, f64, usize), String> {
    let d = &gpu.device;
    let per_binding = points_per_binding(&d.limits());
    let cloud = quantized_terrain(gpu, u64::from(n), per_binding)?;
    let mut r = Rasterizer::new(d, vizdeck::scene::SCENE_FORMAT);
    let target = r.target(d, size);
    let params_buf = params_buffer(gpu, size);
    // The attributes the resolve fetches for the visible points (zeros: black, class 0).
    let resolve_buf = resolve_params(gpu, size);
    let scope = d.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
    let (words, resolve): (
        Vec<wgpu::Buffer>,
        Vec<vizdeck::pointcloud::pieces::PieceGroups>,
    ) = cloud
        .chunks
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let buffer = |what: &str, bytes: u64| {
                d.create_buffer(&wgpu::BufferDescriptor {
                    label: Some(&format!("pointcloud:bench:quantized:{what}:{i}")),
                    size: bytes.next_multiple_of(16),
                    usage: wgpu::BufferUsages::STORAGE,
                    mapped_at_creation: false,
                })
            };
            let words = buffer("words", u64::from(c.count) * 4);
            let attrs = buffer("attrs", u64::from(c.count) * 8);
            let group = r.bind_resolve_quantized(
                d,
                &resolve_buf,
                &target,
                &words,
                &attrs,
                c.first,
                c.count,
            );
            (words, group)
        })
        .unzip();
    if let Some(e) = pollster::block_on(scope.pop()) {
        return Err(format!(
            "{n} points: the attributes do not fit in this device's memory: {e}"
        ));
    }
    let words: Vec<&wgpu::Buffer> = words.iter().collect();
    let groups = r.bind_quantized(d, &params_buf, &cloud, &words, &target);
    r.prepare_variant_quantized(d, VARIANT);
    let image = r.image(d, size);
    let time = |r: &Rasterizer| {
        time_render(
            gpu,
            size,
            reps,
            false,
            |enc, color| {
                r.clear(enc, &target);
                vizdeck::gpu::frame::compute_pass(enc, "pointcloud:bench:raster_q", |pass| {
                    r.encode_quantized(pass, &cloud, &groups);
                    r.resolve_quantized(pass, VARIANT, &resolve, &image);
                });
                image.copy_to(enc, color);
                true
            },
            |_| {},
        )
    };
    let plain = time(&r);
    r.set_workgroup_filter(d, true);
    let filtered = time(&r);
    Ok((plain, filtered, cloud.chunks.len()))
}

/// The table for each of `counts` points, `reps` repetitions per side (at least 1): the
/// compute rasterizer's 64-bit path (where the adapter has it) and 32-bit path, each with the
/// resolve, against point primitives, into a target of `size` pixels; then the quantized cloud
/// (4 bytes a point, coherent batches, several bindings where needed) on the best path. A side
/// whose buffers exceed the adapter's limits is left empty (the row says so); a count the device
/// cannot hold quantized is said in one line and skipped.
pub fn bench_table(gpu: &Gpu, counts: &[u32], reps: u32, size: (u32, u32)) -> String {
    use vizdeck::pointcloud::raster::RasterPath;
    use wgpu::util::DeviceExt;
    let reps = reps.max(1);
    let d = &gpu.device;
    let has64 = RasterPath::best(d) == RasterPath::Atomic64;
    let limits = d.limits();
    let mut out = format!(
        "Point-cloud rasterization, adapter: {} ({}, {}), {}x{}, {reps} frames per submit{}; \
         quantized: 4 bytes a point on the {} path, up to {} points a binding\n\n\
         | points | compute 64-bit ms | M points/s | compute 32-bit ms | M points/s | point \
         primitives ms | M points/s | 64-bit / primitives | 32-bit / primitives | quantized ms | \
         M points/s | quantized, workgroup filter ms | M points/s | bindings |\n\
         |---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
        gpu.summary.name,
        gpu.summary.backend,
        gpu.summary.device_type,
        size.0,
        size.1,
        if has64 {
            ""
        } else {
            " (no 64-bit atomics: that column is empty)"
        },
        RasterPath::best(d).name(),
        points_per_binding(&limits),
    );
    let rate = |n: u32, s: f64| f64::from(n) / s / 1e6;
    let mut notes = String::new();
    for &n in counts {
        if n == 0 {
            continue;
        }
        // The 16-byte sides: one binding (and one vertex buffer) of 16 bytes a point.
        let max16 = limits
            .max_storage_buffer_binding_size
            .min(limits.max_buffer_size)
            / 16;
        let mut cells: Vec<String> = if u64::from(n) > max16 {
            let mut v = vec![format!("over the binding limit ({max16} points)")];
            v.resize(8, String::new());
            v
        } else {
            let pts = terrain(n);
            let vertices = d.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some("pointcloud:bench:points"),
                contents: bytemuck::cast_slice(&pts),
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::VERTEX,
            });
            drop(pts);
            let params_buf = params_buffer(gpu, size);
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
            let base = time_render(
                gpu,
                size,
                reps,
                true,
                |_, _| false,
                |pass| {
                    pass.set_pipeline(&pipeline);
                    pass.set_bind_group(0, &base_group, &[]);
                    pass.set_vertex_buffer(0, vertices.slice(..));
                    pass.draw(0..n, 0..1);
                },
            );
            let (ms64, rate64, ratio64) = match wall64 {
                Some(w) => (
                    format!("{:.3}", w * 1e3),
                    format!("{:.1}", rate(n, w)),
                    format!("{:.2}×", base / w),
                ),
                None => Default::default(),
            };
            vec![
                ms64,
                rate64,
                format!("{:.3}", wall32 * 1e3),
                format!("{:.1}", rate(n, wall32)),
                format!("{:.3}", base * 1e3),
                format!("{:.1}", rate(n, base)),
                ratio64,
                format!("{:.2}×", base / wall32),
            ]
        };
        match time_quantized(gpu, n, reps, size) {
            Ok((s, filtered, bindings)) => {
                cells.push(format!("{:.3}", s * 1e3));
                cells.push(format!("{:.1}", rate(n, s)));
                cells.push(format!("{:.3}", filtered * 1e3));
                cells.push(format!("{:.1}", rate(n, filtered)));
                cells.push(bindings.to_string());
            }
            Err(e) => {
                // Said in one line, and the row keeps what ran.
                notes.push_str(&format!("\nskipped quantized {n}: {e}"));
                cells.extend(std::iter::repeat_n(String::new(), 5));
            }
        }
        out.push_str(&format!("| {n} | {} |\n", cells.join(" | ")));
    }
    out.push_str(&notes);
    out
}
