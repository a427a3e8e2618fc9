//! `vizdeck-lab --kernels pointcloud-stream`: the point-cloud scene's frame time at rest and
//! while its nodes stream in, same view, same run, per cloud (`--pointcloud-clouds`).
//!
//! The scene is driven as the deck drives it ([`record_frame`]: prepare with uploads through a
//! frame's uploader, the compute pass, the resolve into a `--size` target (default 1280×720),
//! one submit), without the UI; a frame's time is its wall time from prepare to the GPU idle.
//! Frames do not wait for nodes: loader threads decode while frames go on, as in the window.
//! Each cycle empties the resident set (the GPU pools and the decoded nodes waiting), then runs
//! frames until nothing in view is missing ("loading" frames), then `rest` more frames ("at
//! rest"). The first cycle is a warm-up (pipelines, caches) and is not counted.
//!
//! At rest, the raster passes alone (the visibility buffer's clear, the quantized passes,
//! `main_q`, over the frame's batch table: the pages of the drawn nodes, each culled against the
//! view, and the 16-byte passes over the nodes drawn exactly) are timed too: `rest` repetitions
//! recorded into one encoder and submitted once, wall time from submit to idle divided by
//! `rest` (after one warm-up), as the kernel table (`pointcloud::bench`) times them; points/s =
//! the points in the batch table / that time.

use std::time::Instant;

use vizdeck::gpu::Gpu;
use vizdeck::gpu::frame::OwnedFrame;
use vizdeck::gpu::upload::Strategy;
use vizdeck::pointcloud::camera::ViewPreset;
use vizdeck::scene::Scene;
use vizdeck::scene::pointcloud::{CloudSource, PointCloud, Settings, record_frame};

/// Most loading frames per cycle (a cloud that never settles is cut off and said so).
const MAX_LOADING_FRAMES: u32 = 2000;

/// One cloud's figures.
#[derive(Clone, Debug, PartialEq)]
pub struct StreamRow {
    /// The cloud.
    pub name: String,
    /// Points in the cloud, and drawn at rest.
    pub points: u64,
    /// See `points`.
    pub drawn: u64,
    /// Frame times at rest, ms: p50, p99.
    pub rest: (f64, f64),
    /// Frame times while loading, ms: p50, p99; and the loading frames counted.
    pub loading: (f64, f64),
    /// See `loading`.
    pub loading_frames: usize,
    /// Seconds from an empty pool to everything in view resident, mean over the cycles.
    pub settle_s: f64,
    /// Points in the batch tables at rest (the drawn nodes' pages, before culling): what the
    /// raster passes are handed a frame; and of them, those drawn quantized.
    pub rasterized: u64,
    /// See `rasterized`.
    pub quantized: u64,
    /// Seconds of the raster passes alone at rest (clear, quantized and exact passes), per
    /// frame.
    pub raster_s: f64,
    /// Seconds of the resolve dispatch(es) alone at rest (colour, point radius, eye-dome lighting
    /// over the whole target), per frame.
    pub resolve_s: f64,
}

fn percentile(v: &mut [f64], p: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let i = ((p / 100.0) * (v.len() - 1) as f64).round() as usize;
    v[i.min(v.len() - 1)]
}

/// Runs one frame of `scene` into `target` ([`record_frame`], one submit); returns its wall
/// time in seconds, to the GPU idle.
fn frame(
    gpu: &Gpu,
    scene: &mut PointCloud,
    target: &wgpu::Texture,
    index: u64,
    size: (u32, u32),
) -> f64 {
    let t = Instant::now();
    let mut f = OwnedFrame::new(gpu, Strategy::WriteBuffer);
    record_frame(&mut f, scene, target, index, size);
    f.submit();
    gpu.wait_idle();
    t.elapsed().as_secs_f64()
}

/// Seconds per repetition of `scene`'s raster passes alone (the visibility buffer's clear,
/// then the passes over its last frame's batch tables, quantized and exact), [`time_reps`](crate::kernel::time_reps);
/// `None` before a frame was prepared.
fn time_raster(gpu: &Gpu, scene: &PointCloud, reps: u32) -> Option<f64> {
    let r = scene.renderer();
    let target = r.target()?;
    Some(crate::kernel::time_reps(
        gpu,
        "pointcloud:bench:raster",
        reps,
        |enc| {
            r.raster.clear(enc, target);
            vizdeck::gpu::frame::compute_pass(enc, "pointcloud:bench:raster", |pass| {
                r.encode_raster(pass)
            });
        },
    ))
}

/// Seconds per repetition of `scene`'s resolve alone (the dispatch(es) that colour its image
/// from the visibility buffer of its last frame), [`time_reps`](crate::kernel::time_reps); `None` before a frame was
/// prepared.
fn time_resolve(gpu: &Gpu, scene: &PointCloud, reps: u32) -> Option<f64> {
    let r = scene.renderer();
    r.target()?;
    Some(crate::kernel::time_reps(
        gpu,
        "pointcloud:bench:resolve",
        reps,
        |enc| {
            vizdeck::gpu::frame::compute_pass(enc, "pointcloud:bench:resolve", |pass| {
                r.encode_resolve(pass)
            });
        },
    ))
}

/// Measures `cloud` (with `budget`, or the adapter's default; iso view) over `cycles` counted
/// cycles of `rest` frames at rest each, drawn into `size` pixels.
///
/// # Errors
///
/// The scene's error when the cloud cannot be opened.
pub fn stream_row(
    gpu: &Gpu,
    cloud: &CloudSource,
    budget: Option<u64>,
    cycles: u32,
    rest: u32,
    size: (u32, u32),
) -> Result<StreamRow, vizdeck::scene::SceneError> {
    let settings = Settings {
        source: cloud.clone(),
        budget,
        view: ViewPreset::Iso,
        wait_for_nodes: Some(false),
        ..Settings::default()
    };
    let mut scene = PointCloud::new(gpu, &settings, 1, false)?;
    let texture = gpu.device.create_texture(&wgpu::TextureDescriptor {
        label: Some("pointcloud:bench:target"),
        size: wgpu::Extent3d {
            width: size.0,
            height: size.1,
            depth_or_array_layers: 1,
        },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format: gpu.scene_format,
        usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_DST,
        view_formats: &[],
    });
    let (mut at_rest, mut loading, mut settle) = (Vec::new(), Vec::new(), Vec::new());
    let mut index = 0u64;
    // Indexing (LAS/LAZ) finishes before the cycles.
    while scene.indexing() {
        frame(gpu, &mut scene, &texture, index, size);
        index += 1;
    }
    for cycle in 0..=cycles {
        scene.drop_resident();
        let start = Instant::now();
        let mut n = 0;
        let mut times = Vec::new();
        loop {
            times.push(frame(gpu, &mut scene, &texture, index, size) * 1e3);
            index += 1;
            n += 1;
            if !scene.loading() || n >= MAX_LOADING_FRAMES {
                break;
            }
        }
        let settled = start.elapsed().as_secs_f64();
        let rest_times: Vec<f64> = (0..rest)
            .map(|_| {
                let t = frame(gpu, &mut scene, &texture, index, size) * 1e3;
                index += 1;
                t
            })
            .collect();
        if cycle > 0 {
            loading.extend(times);
            at_rest.extend(rest_times);
            settle.push(settled);
        }
    }
    let quantized = scene.renderer().pool.batched_points();
    let rasterized = quantized + scene.renderer().exact.batched_points();
    let raster_s = time_raster(gpu, &scene, rest).unwrap_or(f64::NAN);
    let resolve_s = time_resolve(gpu, &scene, rest).unwrap_or(f64::NAN);
    let m = scene.metrics();
    let loading_frames = loading.len();
    Ok(StreamRow {
        name: match cloud {
            CloudSource::File(p) => p
                .file_name()
                .map_or_else(|| p.display().to_string(), |n| n.to_string_lossy().into()),
            CloudSource::Synthetic(n) => format!("synthetic:{n}"),
            CloudSource::Url(u) => u.clone(),
        },
        points: m["points_total"].as_u64().unwrap_or(0),
        drawn: m["points_drawn"].as_u64().unwrap_or(0),
        rest: (
            percentile(&mut at_rest, 50.0),
            percentile(&mut at_rest, 99.0),
        ),
        loading: (
            percentile(&mut loading, 50.0),
            percentile(&mut loading, 99.0),
        ),
        loading_frames,
        settle_s: settle.iter().sum::<f64>() / settle.len().max(1) as f64,
        rasterized,
        quantized,
        raster_s,
        resolve_s,
    })
}

/// The table for `clouds` (point `budget`, or the adapter's default): frame time at rest and
/// while loading, `cycles` cycles of `rest` frames each.
pub fn stream_table(
    gpu: &Gpu,
    clouds: &[CloudSource],
    budget: Option<u64>,
    cycles: u32,
    rest: u32,
    size: (u32, u32),
) -> String {
    let mut out = format!(
        "Point-cloud streaming, adapter: {} ({}, {}), {}x{}, iso view, budget {}, \
         {cycles} cycles (empty pool → all in view resident → {rest} frames at rest); raster: \
         the raster passes alone at rest ({} path; quantized, and 16-byte for the nodes drawn \
         exactly), points in the batch tables / their time; resolve: its dispatch(es) alone at rest\n\n\
         | cloud | points | drawn at rest | rest p50 ms | rest p99 ms | loading p50 ms | \
         loading p99 ms | loading frames | settle s | loading p99 / rest p99 | rasterized \
         points / frame | of them quantized | raster ms | raster M points/s | resolve ms |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
        gpu.summary.name,
        gpu.summary.backend,
        gpu.summary.device_type,
        size.0,
        size.1,
        budget.map_or_else(|| "the adapter's default".to_string(), |b| b.to_string()),
        vizdeck::pointcloud::raster::RasterPath::best(&gpu.device).name(),
    );
    for c in clouds {
        match stream_row(gpu, c, budget, cycles, rest, size) {
            Ok(r) => out.push_str(&format!(
                "| {} | {} | {} | {:.1} | {:.1} | {:.1} | {:.1} | {} | {:.2} | {:.2}× | {} | \
                 {} | {:.3} | {:.1} | {:.3} |\n",
                r.name,
                r.points,
                r.drawn,
                r.rest.0,
                r.rest.1,
                r.loading.0,
                r.loading.1,
                r.loading_frames,
                r.settle_s,
                r.loading.1 / r.rest.1,
                r.rasterized,
                r.quantized,
                r.raster_s * 1e3,
                r.rasterized as f64 / r.raster_s / 1e6,
                r.resolve_s * 1e3,
            )),
            Err(e) => out.push_str(&format!("| {c:?} | {e} | | | | | | | | | | | | | |\n")),
        }
    }
    out
}
