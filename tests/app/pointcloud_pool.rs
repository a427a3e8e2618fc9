//! The point-cloud scene draws its GPU pool through the rasterizer's quantized path (4-byte
//! points in Morton-ordered pages, `main_q`):
//!
//! - a frame of the scene (a small synthetic cloud at survey coordinates, streamed through its
//!   octree) rasterizes exactly the visibility buffer of the CPU reference (`cpu_visibility`)
//!   run on the CPU decode (`QBatch::decode`) of the frame's batch table, and the resolve colours
//!   each pixel by the class of its point;
//! - the hover readout of a pixel (the pick, read back as the deck reads it back) gives the
//!   original coordinates of the point drawn there, bit for bit (the nearest of the cloud's
//!   points, as the source decodes them, to its quantized position), with its attributes;
//! - hiding a class (the legend's checkbox, `RasterParams::class_mask`) draws exactly the CPU
//!   reference of the other classes' points;
//! - the pool spread over several storage bindings (chunks) draws the same reference.

use crate::common;
use common::{gpu, raster};

use std::sync::Arc;

use vizdeck::gpu::Gpu;
use vizdeck::gpu::frame::OwnedFrame;
use vizdeck::gpu::readback::{Consumer, ReadbackRing};
use vizdeck::gpu::upload::Strategy;
use vizdeck::pointcloud::camera::ViewPreset;
use vizdeck::pointcloud::pool::{DrawnPoint, Pool, QuantizedNode};
use vizdeck::pointcloud::raster::{
    ColorMode, QBATCH_POINTS, RasterParams, Rasterizer, cpu_visibility,
};
use vizdeck::pointcloud::source::NodeSource;
use vizdeck::pointcloud::synthetic::Synthetic;
use vizdeck::scene::pointcloud::record_frame;
use vizdeck::scene::pointcloud::{CloudSource, PointCloud, Settings, class_rgba};
use vizdeck::scene::{SCENES, Scene};

const SIZE: (u32, u32) = (320, 200);
const POINTS: u64 = 60_000;
const SEED: u64 = 7;

/// The scene over the synthetic cloud, seen from above, radius 0, no eye-dome lighting,
/// coloured by class, frames waiting for their nodes; `probe`: a pixel read out every frame.
fn scene(gpu: &Gpu, view: ViewPreset, probe: Option<(u32, u32)>) -> PointCloud {
    let settings = Settings {
        source: CloudSource::Synthetic(POINTS),
        budget: Some(1_000_000),
        view,
        color: Some(ColorMode::Classification),
        radius: Some(0),
        edl: 0.0,
        probe,
        wait_for_nodes: Some(true),
        ..Settings::default()
    };
    PointCloud::new(gpu, &settings, SEED, true).expect("scene")
}

/// Runs frame `index` of `scene` as the deck does (`record_frame`: prepare, compute pass,
/// resolve into `image`; then the readback copies, one submit), waits for it and hands the
/// readbacks to the scene.
fn frame(gpu: &Gpu, scene: &mut PointCloud, image: &wgpu::Texture, index: u64) {
    let me = Consumer::Scene(SCENES.iter().position(|s| s.id == "pointcloud").unwrap());
    let mut ring = ReadbackRing::new("test:pool:readback", 4);
    let mut f = OwnedFrame::new(gpu, Strategy::WriteBuffer);
    record_frame(&mut f, scene, image, index, SIZE);
    scene.record_readbacks(&gpu.device, f.encoder(), &mut ring, me);
    f.submit();
    ring.after_submit();
    ring.wait(&gpu.device, |a| scene.readback_arrived(&a));
}

/// The texture the scene's resolved image is copied into.
fn image(gpu: &Gpu) -> wgpu::Texture {
    raster::resolve_image(&gpu.device, "test:pool:image", SIZE)
}

/// Runs frames until nothing in view is missing (at most 20).
fn settle(gpu: &Gpu, scene: &mut PointCloud, image: &wgpu::Texture) -> u64 {
    let mut i = 0;
    while i < 20 {
        frame(gpu, scene, image, i);
        i += 1;
        if !scene.animating() && i >= 2 {
            break;
        }
    }
    i
}

/// The CPU reference of the frame's visibility buffer: `cpu_visibility` over the decoded
/// points of the frame's batch table that `keep` keeps (in id order, so ties go to the smallest
/// id as on the GPU), per pixel the id of the point.
fn reference(
    points: &[DrawnPoint],
    view_proj: &[[f32; 4]; 4],
    keep: impl Fn(&DrawnPoint) -> bool,
) -> Vec<Option<u32>> {
    let mut kept: Vec<&DrawnPoint> = points.iter().filter(|p| keep(p)).collect();
    kept.sort_by_key(|p| p.id);
    let xyz: Vec<[f32; 3]> = kept.iter().map(|p| p.position).collect();
    cpu_visibility(&xyz, view_proj, SIZE)
        .into_iter()
        .map(|w| w.map(|i| kept[i as usize].id))
        .collect()
}

/// Asserts that `got` (the GPU's ids) is `want` (the CPU reference over `drawn`): exactly
/// (`exact`: an orthographic view from above, whose matrix has no rounding the GPU could do
/// otherwise), else up to the GPU's own f32 rounding of the projection: a pixel may hold
/// another point than the reference's only when both land on that pixel (the CPU's
/// projection) at depths within 1e-6 (a near-tie the GPU's own rounding of the projection's
/// terms, fused or reordered, broke the other way), in at most 0.2 % of the covered pixels.
fn check(
    got: &[Option<u32>],
    want: &[Option<u32>],
    drawn: &[DrawnPoint],
    vp: &[[f32; 4]; 4],
    exact: bool,
    label: &str,
) {
    let differ = raster::differing(got, want);
    if exact {
        assert_eq!(
            differ, 0,
            "{label}: {differ} pixels differ from the CPU reference"
        );
        return;
    }
    let m = glam::Mat4::from_cols_array_2d(vp);
    let pos: std::collections::HashMap<u32, [f32; 3]> =
        drawn.iter().map(|p| (p.id, p.position)).collect();
    let project = |id: u32| {
        let p = pos[&id];
        let c = m * glam::Vec4::new(p[0], p[1], p[2], 1.0);
        let n = c.truncate() / c.w;
        let x = (((n.x * 0.5 + 0.5) * SIZE.0 as f32) as u32).min(SIZE.0 - 1);
        let y = (((0.5 - n.y * 0.5) * SIZE.1 as f32) as u32).min(SIZE.1 - 1);
        ((y * SIZE.0 + x) as usize, n.z)
    };
    for (px, (g, w)) in got.iter().zip(want).enumerate() {
        if g == w {
            continue;
        }
        let (Some(g), Some(w)) = (g, w) else {
            panic!("{label}: pixel {px}: GPU {g:?}, reference {w:?}");
        };
        let ((pg, zg), (pw, zw)) = (project(*g), project(*w));
        assert!(
            pg == px && pw == px && (zg - zw).abs() <= 1e-6,
            "{label}: pixel {px}: GPU {g} (pixel {pg}, depth {zg}), reference {w} (pixel {pw}, \
             depth {zw})"
        );
    }
    let covered = want.iter().flatten().count();
    assert!(
        differ * 500 <= covered,
        "{label}: {differ} of {covered} pixels differ (depth ties)"
    );
}

/// Every point of the synthetic cloud as its source decodes them: exact coordinates and
/// attribute word.
fn originals() -> Vec<([f64; 3], u32)> {
    let s = Synthetic::new(POINTS, SEED).expect("synthetic");
    (0..s.hierarchy().nodes.len() as u32)
        .flat_map(|n| {
            let d = s.load(n).expect("node");
            d.xyz.into_iter().zip(d.words).collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn the_scene_draws_the_quantized_reference_and_reads_out_exact_points() {
    let gpu = gpu();
    let img = image(&gpu);
    for view in [ViewPreset::Top, ViewPreset::Iso] {
        let mut a = scene(&gpu, view, None);
        let frames = settle(&gpu, &mut a, &img);
        let m = a.metrics();
        let drawn = a.drawn_points();
        assert_eq!(m["points_total"].as_u64(), Some(POINTS), "{m}");
        assert_eq!(
            drawn.len() as u64,
            m["points_drawn"].as_u64().unwrap(),
            "{m}"
        );
        assert!(m["nodes_drawn"].as_u64().unwrap() > 1, "{m}");
        // Both paths draw: the nodes near the eye or sparse on screen exact, the rest quantized.
        let (quantized, exact) = (
            m["points_quantized"].as_u64().unwrap(),
            m["points_exact"].as_u64().unwrap(),
        );
        assert!(quantized > 5_000 && exact > 5_000, "{view:?}: {m}");
        assert_eq!(quantized + exact, drawn.len() as u64);
        let vp = a
            .view()
            .expect("view")
            .view_proj
            .as_mat4()
            .to_cols_array_2d();
        let want = reference(&drawn, &vp, |_| true);
        let covered = want.iter().filter(|w| w.is_some()).count();
        assert!(covered > 5_000, "{view:?}: {covered} pixels covered");
        let got = raster::read_ids(&gpu, a.visibility().expect("visibility buffer"));
        check(
            &got,
            &want,
            &drawn,
            &vp,
            view == ViewPreset::Top,
            &format!("{view:?}"),
        );
        // The resolve: each covered pixel the colour of the class of the point the GPU drew
        // there (checked against the reference just above; near-ties may differ in the iso
        // view), the rest background.
        let by_id: std::collections::HashMap<u32, u32> =
            drawn.iter().map(|p| (p.id, p.word)).collect();
        let rgba = vizdeck::gpu::readback::read_texture_rgba(&gpu.device, &gpu.queue, &img)
            .expect("image");
        let bg = [5u8, 5, 8, 255]; // the scene's background (0.02, 0.02, 0.03) in unorm8
        for (px, w) in got.iter().enumerate() {
            let expect = match w {
                Some(id) => class_rgba((by_id[id] & 31) as u8).to_le_bytes(),
                None => bg,
            };
            assert_eq!(rgba[px * 4..px * 4 + 4], expect, "{view:?}: pixel {px}");
        }

        // Class 6 (buildings) hidden: exactly the other classes' reference.
        assert!(
            want.iter().flatten().any(|id| by_id[id] & 0xff == 6),
            "{view:?}: no building in view"
        );
        a.set_class_shown(6, false);
        frame(&gpu, &mut a, &img, frames);
        let drawn_f = a.drawn_points();
        let want_f = reference(&drawn_f, &vp, |p| p.word & 0xff != 6);
        let got_f = raster::read_ids(&gpu, a.visibility().unwrap());
        let label = format!("{view:?}, class 6 hidden");
        check(
            &got_f,
            &want_f,
            &drawn_f,
            &vp,
            view == ViewPreset::Top,
            &label,
        );
        let word_f: std::collections::HashMap<u32, u32> =
            drawn_f.iter().map(|p| (p.id, p.word)).collect();
        assert!(got_f.iter().flatten().all(|id| word_f[id] & 0xff != 6));
        assert!(got_f.iter().flatten().count() > covered / 2);
        a.set_class_shown(6, true);

        // The readout at the covered pixel nearest the centre whose point is drawn quantized,
        // and at the one whose point is drawn exactly, through the pick and its readback, in a
        // scene probing it from the start.
        let quantized_id: std::collections::HashMap<u32, bool> =
            drawn.iter().map(|p| (p.id, p.quantized)).collect();
        let all = originals();
        for quantized in [true, false] {
            let (w, h) = (i64::from(SIZE.0), i64::from(SIZE.1));
            let at = (0..w * h)
                .filter(|&i| want[i as usize].is_some_and(|id| quantized_id[&id] == quantized))
                .min_by_key(|&i| (i % w - w / 2).pow(2) + (i / w - h / 2).pow(2))
                .unwrap();
            let probe = ((at % w) as u32, (at / w) as u32);
            let label = format!("{view:?}, probe {probe:?} (quantized: {quantized})");
            let mut b = scene(&gpu, view, Some(probe));
            settle(&gpu, &mut b, &img);
            let drawn_b = b.drawn_points();
            let vp_b = b.view().unwrap().view_proj.as_mat4().to_cols_array_2d();
            let got_b = raster::read_ids(&gpu, b.visibility().unwrap());
            let id = got_b[at as usize].expect("the probed pixel is covered");
            let point = drawn_b.iter().find(|p| p.id == id).unwrap();
            assert_eq!(point.quantized, quantized, "{label}");
            assert_eq!(vp_b, vp, "{label}");
            let m = b.metrics();
            let hover = &m["hover"];
            assert!(hover.is_object(), "{label}: no readout: {m}");
            let xyz: Vec<f64> = (0..3).map(|k| hover["xyz"][k].as_f64().unwrap()).collect();
            // The original point nearest to where the point was drawn (its quantized position).
            let eye = b.view().unwrap().eye.to_array();
            let drawn_at: [f64; 3] = std::array::from_fn(|k| eye[k] + f64::from(point.position[k]));
            let (nearest, word) = all
                .iter()
                .min_by(|(p, _), (q, _)| {
                    let d =
                        |a: &[f64; 3]| (0..3).map(|k| (a[k] - drawn_at[k]).powi(2)).sum::<f64>();
                    d(p).total_cmp(&d(q))
                })
                .unwrap();
            assert!(
                (0..3).all(|k| nearest[k].to_bits() == xyz[k].to_bits()),
                "{label}: readout {xyz:?}, drawn at {drawn_at:?}, nearest point {nearest:?}"
            );
            assert_eq!(hover["class"].as_u64(), Some(u64::from(word & 0xff)));
            assert_eq!(hover["intensity"].as_u64(), Some(u64::from(word >> 16)));
            assert_eq!(
                hover["return_number"].as_u64(),
                Some(u64::from((word >> 8) & 0xf))
            );
            assert_eq!(point.word, *word);
        }
    }
    common::assert_no_gpu_errors(&gpu);
}

/// The pool of a few nodes in chunks of two pages (several storage bindings): the quantized
/// passes over its batch table give the CPU reference of its decode.
#[test]
#[allow(clippy::disallowed_methods)] // a test frame outside the deck
fn a_pool_over_several_bindings_draws_the_reference() {
    let gpu = gpu();
    let d = &gpu.device;
    let s = Synthetic::new(POINTS, SEED).expect("synthetic");
    let nodes: Vec<u32> = (0..s.hierarchy().nodes.len() as u32).collect();
    let mut pool = Pool::new(
        d,
        200 * u64::from(QBATCH_POINTS),
        2 * u64::from(QBATCH_POINTS),
        5000,
    );
    assert!(
        pool.cloud().chunks.len() >= 50,
        "{}",
        pool.cloud().chunks.len()
    );
    let (lo, hi) = s.info().bounds;
    let eye = glam::DVec3::new((lo[0] + hi[0]) / 2.0, (lo[1] + hi[1]) / 2.0, hi[2] + 100.0);
    let mut f = OwnedFrame::new(&gpu, Strategy::WriteBuffer);
    for &n in &nodes {
        let q = QuantizedNode::new(
            s.load(n).unwrap(),
            s.hierarchy().nodes[n as usize].spacing,
            lo[2],
        );
        pool.insert(&mut f.frame(), n, Arc::new(q), 0)
            .expect("room");
    }
    let batches = pool.write_batches(&mut f.frame(), &nodes, eye);
    assert!(batches > 50);
    let drawn = pool.drawn();
    assert_eq!(drawn.len() as u64, POINTS);
    // Orthographic from above over the cloud's square (camera-relative), depth from z.
    let half = ((hi[0] - lo[0]) / 2.0) as f32;
    let vp = [
        [1.0 / half, 0.0, 0.0, 0.0],
        [0.0, 1.0 / half, 0.0, 0.0],
        [0.0, 0.0, -1.0 / 400.0, 0.0],
        [0.0, 0.0, 0.0, 1.0],
    ];
    let want = reference(&drawn, &vp, |_| true);
    assert!(want.iter().filter(|w| w.is_some()).count() > 5_000);
    use wgpu::util::DeviceExt;
    let params = d.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("test:pool:params"),
        contents: bytemuck::bytes_of(&RasterParams::new(vp, SIZE)),
        usage: wgpu::BufferUsages::UNIFORM,
    });
    let r = Rasterizer::new(d, gpu.scene_format);
    let target = r.target(d, SIZE);
    let groups = r.bind_quantized(d, &params, pool.cloud(), &pool.words(), &target);
    raster::clear_and_raster(f.encoder(), &r, &target, "test:pool:raster", |pass| {
        r.encode_quantized(pass, pool.cloud(), &groups)
    });
    f.submit();
    let got = raster::read_ids(&gpu, &target);
    let differ = raster::differing(&got, &want);
    assert_eq!(differ, 0, "{differ} pixels differ from the CPU reference");
    common::assert_no_gpu_errors(&gpu);
}
