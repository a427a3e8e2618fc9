//! The quantized point-cloud path (issue 18): 4-byte points (10-bit cells of their batch's box,
//! power-of-two cell sizes), batches of up to 1024 points in Morton order with per-batch boxes
//! that let whole batches be skipped when outside the view, the cloud spread over several
//! storage bindings, and a resolve that reads attributes for the visible points only.
//!
//! - The quantization (CPU): every decoded point lies within half a cell (plus one f32 rounding)
//!   of its point; cells are powers of two no larger than twice what 1024 cells need; bad input
//!   (NaN, infinities, empty batches) gives codes, never a panic.
//! - Morton order: a permutation, and its batches' boxes are far smaller than those of the same
//!   points in random order.
//! - The GPU (both paths, lavapipe): the visibility buffer of a cloud spread over several
//!   bindings equals the CPU reference run on the CPU decode of the same codes (exact: the
//!   decode is exact in f32), with ties, off-screen batches (culled) and depths out of range;
//!   the resolve colours each pixel from its point's attributes in its own binding; the same
//!   with the target in 12 pieces (the piece limit lowered), each piece's dispatch culling the
//!   batches that miss its rows.

use crate::common;
use common::{gpu, raster};

use vizdeck::pointcloud::raster::{
    ColorMode, QBATCH_POINTS, QBatch, QCELLS, QDISPATCH_X, QuantizedCloud, RasterParams,
    RasterPath, Rasterizer, ResolveVariant, cpu_visibility, morton_order, points_per_binding,
    qdispatch_size, quantize_batch,
};
use vizdeck::scene::particles::SplitMix64;

#[test]
fn decoded_points_lie_within_half_a_cell() {
    let mut rng = SplitMix64(11);
    for (b, extent) in [1e-3f32, 0.37, 5.0, 1234.5, 0.0, 3.0e6]
        .into_iter()
        .enumerate()
    {
        let n = 1 + (b * 211) % QBATCH_POINTS as usize;
        let origin = [rng.next_f32() * 100.0 - 50.0, rng.next_f32() * 10.0, -7.0];
        let points: Vec<[f32; 3]> = (0..n)
            .map(|_| std::array::from_fn(|a| origin[a] + rng.next_f32() * extent))
            .collect();
        let mut codes = vec![0u32; n];
        let (lo, step) = quantize_batch(&points, &mut codes);
        let batch = QBatch::new(lo, step, 0, 0, n as u32);
        for a in 0..3 {
            let s = step[a];
            assert!(
                s > 0.0 && s.to_bits() & 0x007f_ffff == 0,
                "step {s} not a power of two"
            );
            let (mn, mx) = points.iter().fold((f32::MAX, f32::MIN), |(mn, mx), p| {
                (mn.min(p[a]), mx.max(p[a]))
            });
            let need = (mx - mn) / QCELLS as f32;
            assert!(
                s * QCELLS as f32 >= mx - mn,
                "axis {a}: {s} · 1024 < {}",
                mx - mn
            );
            if need > f32::MIN_POSITIVE {
                assert!(s <= 2.0 * need, "axis {a}: step {s} for {need}");
            }
        }
        for (p, &q) in points.iter().zip(&codes) {
            assert_eq!(q >> 30, 0, "code {q:#x} uses the top bits");
            let d = batch.decode(q);
            for a in 0..3 {
                let bound = step[a] * 0.5 + d[a].abs() * f32::EPSILON;
                assert!(
                    (d[a] - p[a]).abs() <= bound,
                    "extent {extent}, axis {a}: {} decoded as {} (bound {bound})",
                    p[a],
                    d[a]
                );
            }
        }
    }
    // Bad input: no panic, codes within 30 bits.
    let bad = [
        [f32::NAN, 0.0, 1.0],
        [f32::INFINITY, -1.0, 2.0],
        [0.0, f32::NEG_INFINITY, 3.0],
        [1.0, 2.0, 3.0],
    ];
    let mut codes = vec![0u32; bad.len()];
    let _ = quantize_batch(&bad, &mut codes);
    assert!(codes.iter().all(|c| c >> 30 == 0));
    let _ = quantize_batch(&[], &mut []);
    let _ = morton_order(&bad);
    let _ = morton_order(&[]);
}

#[test]
fn morton_batches_are_compact() {
    let mut rng = SplitMix64(3);
    let points: Vec<[f32; 3]> = (0..20_000)
        .map(|_| {
            [
                rng.next_f32() * 2.0 - 1.0,
                rng.next_f32() * 2.0 - 1.0,
                rng.next_f32() * 0.1,
            ]
        })
        .collect();
    let order = morton_order(&points);
    let mut seen = vec![false; points.len()];
    for &i in &order {
        assert!(!seen[i as usize], "{i} twice");
        seen[i as usize] = true;
    }
    assert!(seen.iter().all(|&s| s));
    // The mean xy box area of batches of 1024 points: Morton order against the given order.
    let area = |idx: &mut dyn Iterator<Item = usize>| {
        let idx: Vec<usize> = idx.collect();
        let mut total = 0.0f64;
        let mut count = 0;
        for run in idx.chunks(QBATCH_POINTS as usize) {
            let (mut lo, mut hi) = ([f32::MAX; 2], [f32::MIN; 2]);
            for &i in run {
                for a in 0..2 {
                    lo[a] = lo[a].min(points[i][a]);
                    hi[a] = hi[a].max(points[i][a]);
                }
            }
            total += f64::from(hi[0] - lo[0]) * f64::from(hi[1] - lo[1]);
            count += 1;
        }
        total / f64::from(count)
    };
    let sorted = area(&mut order.iter().map(|&i| i as usize));
    let given = area(&mut (0..points.len()));
    assert!(
        sorted * 8.0 < given,
        "Morton batches cover {sorted} on average, random ones {given}"
    );
}

#[test]
fn a_cloud_past_32_bit_ids_is_refused() {
    let gpu = gpu();
    let err = QuantizedCloud::build(&gpu.device, u64::from(u32::MAX), 1 << 20, |_, _, _| {
        panic!("nothing is filled")
    });
    assert!(err.is_err());
    let per = points_per_binding(&gpu.device.limits());
    assert!(per >= u64::from(QBATCH_POINTS) && per.is_multiple_of(u64::from(QBATCH_POINTS)));
    assert!(per * 8 <= gpu.device.limits().max_storage_buffer_binding_size);
}

#[test]
#[allow(clippy::disallowed_methods)] // a test frame outside the deck
fn quantized_visibility_over_several_bindings_equals_the_cpu_reference() {
    let gpu = gpu();
    let d = &gpu.device;
    let size = (64u32, 48u32);
    let mut rng = SplitMix64(5);
    // Clusters of points (so batches are compact), some clusters wholly off screen (culled
    // whole), depths from −0.1 to 1.1 (some out of range), every 10th point a duplicate (ties).
    let mut points: Vec<[f32; 3]> = Vec::new();
    for cluster in 0..14 {
        let c = if cluster == 0 {
            [3.5, -3.0, 0.5]
        } else {
            [
                rng.next_f32() * 4.4 - 2.2,
                rng.next_f32() * 4.4 - 2.2,
                rng.next_f32() * 1.2 - 0.1,
            ]
        };
        let r = 0.1 + rng.next_f32() * 1.2;
        for _ in 0..1500 {
            if points.len() % 10 == 9 {
                let j = (f64::from(rng.next_f32()) * points.len() as f64) as usize;
                points.push(points[j.min(points.len() - 1)]);
                continue;
            }
            points.push([
                c[0] + (rng.next_f32() - 0.5) * r,
                c[1] + (rng.next_f32() - 0.5) * r,
                (c[2] + (rng.next_f32() - 0.5) * r).clamp(-0.1, 1.1),
            ]);
        }
    }
    let order = morton_order(&points);
    let sorted: Vec<[f32; 3]> = order.iter().map(|&i| points[i as usize]).collect();
    // Seen from an eye at (0.25, −0.5, 0): the batch boxes are camera-relative.
    let eye = [0.25f32, -0.5, 0.0];
    let per_binding = 2 * u64::from(QBATCH_POINTS);
    let (cloud, table, codes) =
        QuantizedCloud::from_points(d, &sorted, eye, per_binding).expect("cloud");
    assert_eq!(cloud.points, sorted.len() as u64);
    assert!(cloud.chunks.len() >= 3, "{} bindings", cloud.chunks.len());
    // The CPU reference on the CPU decode (camera-relative), by id.
    let decoded: Vec<[f32; 3]> = codes
        .iter()
        .enumerate()
        .map(|(id, &q)| table[id / QBATCH_POINTS as usize].decode(q))
        .collect();
    let view_proj = [
        [0.5, 0.0, 0.0, 0.0],
        [0.0, 0.5, 0.0, 0.0],
        [0.0, 0.0, 1.0, 0.0],
        [0.0, 0.0, 0.0, 1.0],
    ];
    let want = cpu_visibility(&decoded, &view_proj, size);
    let covered = want.iter().filter(|w| w.is_some()).count();
    assert!(covered > 600, "{covered} pixels covered");
    let off_screen = table
        .iter()
        .filter(|b| {
            (0..2).any(|a| {
                let (lo, hi) = (b.lo[a] * 0.5, (b.lo[a] + b.step[a] * 1024.0) * 0.5);
                hi < -1.0 || lo > 1.0
            })
        })
        .count();
    assert!(off_screen > 0, "no batch wholly off screen");

    use wgpu::util::DeviceExt;
    let init = |label: &str, contents: &[u8], usage| {
        d.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some(label),
            contents,
            usage,
        })
    };
    let params_buf = init(
        "test:quantized:params",
        bytemuck::bytes_of(&RasterParams::new(view_proj, size)),
        wgpu::BufferUsages::UNIFORM,
    );
    // Attributes per binding: colour from the id, attribute word class 2.
    let color_of = |id: u32| id.wrapping_mul(2_654_435_761) | 0xff00_0000;
    let attrs: Vec<(wgpu::Buffer, wgpu::Buffer)> = cloud
        .chunks
        .iter()
        .map(|c| {
            let mut words: Vec<u32> = vec![2; c.count as usize];
            words.resize((c.count as usize).next_multiple_of(4), 0);
            let pairs: Vec<[u32; 2]> = (c.first..c.first + c.count)
                .map(|id| [color_of(id), 0])
                .collect();
            (
                init(
                    "test:quantized:words",
                    bytemuck::cast_slice(&words),
                    wgpu::BufferUsages::STORAGE,
                ),
                init(
                    "test:quantized:attrs",
                    bytemuck::cast_slice(&pairs),
                    wgpu::BufferUsages::STORAGE,
                ),
            )
        })
        .collect();
    let rp_buf = raster::resolve_params(d, "test:quantized:resolve", size);
    let variant = ResolveVariant {
        mode: ColorMode::Rgb,
        radius: 0,
        edl: false,
    };
    let words: Vec<&wgpu::Buffer> = attrs.iter().map(|(w, _)| w).collect();
    // Also with the target in pieces of 4 core rows (the piece limit lowered to 10 rows of 512
    // bytes): every piece's dispatches skip the batches that miss its rows, and keep the rest.
    for (path, filter, split) in [
        (RasterPath::TwoPass32, true, false),
        (RasterPath::Atomic64, true, false),
        (RasterPath::TwoPass32, false, false),
        (RasterPath::Atomic64, false, false),
        (RasterPath::TwoPass32, true, true),
        (RasterPath::Atomic64, true, true),
        (RasterPath::TwoPass32, false, true),
        (RasterPath::Atomic64, false, true),
    ] {
        let mut r = Rasterizer::with_path(d, vizdeck::scene::SCENE_FORMAT, path);
        if r.path() != path {
            eprintln!("{path:?}: not on this adapter (no 64-bit atomics), skipped");
            continue;
        }
        r.set_workgroup_filter(d, filter);
        if split {
            r.set_piece_limit(d, vizdeck::pointcloud::pieces::row_bytes(size.0) * 10);
        }
        let target = r.target(d, size);
        assert_eq!(target.pieces.len(), if split { 12 } else { 1 });
        let groups = r.bind_quantized(d, &params_buf, &cloud, &words, &target);
        let resolve: Vec<vizdeck::pointcloud::pieces::PieceGroups> = cloud
            .chunks
            .iter()
            .zip(&attrs)
            .map(|(c, (w, a))| {
                r.bind_resolve_quantized(d, &rp_buf, &target, w, a, c.first, c.count)
            })
            .collect();
        r.prepare_variant_quantized(d, variant);
        let image = raster::resolve_image(d, "test:quantized:image", size);
        let mut enc = d.create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("test:quantized"),
        });
        raster::clear_and_raster(&mut enc, &r, &target, "test:quantized:raster", |pass| {
            r.encode_quantized(pass, &cloud, &groups)
        });
        raster::resolve_into(
            &gpu,
            &mut enc,
            &r,
            &image,
            "test:quantized:resolve",
            |pass, out| r.resolve_quantized(pass, variant, &resolve, out),
        );
        gpu.queue.submit([enc.finish()]);
        let got = raster::read_ids(&gpu, &target);
        let differ = raster::differing(&got, &want);
        assert_eq!(
            differ, 0,
            "{path:?}, workgroup filter {filter}, in pieces {split}: {differ} pixels differ from \
             the CPU reference"
        );
        let rgba = vizdeck::gpu::readback::read_texture_rgba(d, &gpu.queue, &image).expect("image");
        for (px, w) in want.iter().enumerate() {
            let expect = match w {
                Some(id) => color_of(*id).to_le_bytes(),
                None => [0, 0, 0, 255],
            };
            assert_eq!(
                rgba[px * 4..px * 4 + 4],
                expect,
                "{path:?}, in pieces {split}: pixel {px}"
            );
        }
    }
    common::assert_no_gpu_errors(&gpu);
}

#[test]
#[allow(clippy::disallowed_methods)] // a test frame outside the deck
fn a_table_of_several_dispatch_rows_is_read_column_by_column() {
    // More batches than a dispatch row holds (QDISPATCH_X): the passes read entry
    // wg.y + wg.x · rows. One point a batch, so the codes stay small enough for lavapipe.
    let gpu = gpu();
    let d = &gpu.device;
    let size = (48u32, 40u32);
    let batches = QDISPATCH_X + 2500;
    let (_, rows) = qdispatch_size(batches);
    assert!(rows >= 2);
    let total = u64::from(batches) * u64::from(QBATCH_POINTS);
    let mut rng = SplitMix64(9);
    let mut pos = Vec::new(); // (id, camera-relative position) of each batch's one point
    let cloud = QuantizedCloud::build(d, total, total, |first, codes, table| {
        for (j, e) in table.iter_mut().enumerate() {
            let p = [
                rng.next_f32() * 2.4 - 1.2,
                rng.next_f32() * 2.4 - 1.2,
                rng.next_f32(),
            ];
            let (lo, step) = quantize_batch(&[p], &mut codes[j * QBATCH_POINTS as usize..]);
            let id = first + j as u32 * QBATCH_POINTS;
            *e = QBatch::new(lo, step, id, 0, 1);
            pos.push((id, e.decode(codes[j * QBATCH_POINTS as usize])));
        }
    })
    .expect("cloud");
    assert_eq!(cloud.chunks.len(), 1);
    let view_proj = [
        [1.0, 0.0, 0.0, 0.0],
        [0.0, 1.0, 0.0, 0.0],
        [0.0, 0.0, 1.0, 0.0],
        [0.0, 0.0, 0.0, 1.0],
    ];
    let xyz: Vec<[f32; 3]> = pos.iter().map(|p| p.1).collect();
    let want: Vec<Option<u32>> = cpu_visibility(&xyz, &view_proj, size)
        .into_iter()
        .map(|w| w.map(|i| pos[i as usize].0))
        .collect();
    assert!(want.iter().filter(|w| w.is_some()).count() > 1000);
    use wgpu::util::DeviceExt;
    let params_buf = d.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("test:quantized:rows:params"),
        contents: bytemuck::bytes_of(&RasterParams::new(view_proj, size)),
        usage: wgpu::BufferUsages::UNIFORM,
    });
    for path in [RasterPath::TwoPass32, RasterPath::Atomic64] {
        let r = Rasterizer::with_path(d, vizdeck::scene::SCENE_FORMAT, path);
        if r.path() != path {
            continue;
        }
        let target = r.target(d, size);
        let groups = r.bind_quantized(d, &params_buf, &cloud, &[], &target);
        let mut enc = d.create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("test:quantized:rows"),
        });
        raster::clear_and_raster(
            &mut enc,
            &r,
            &target,
            "test:quantized:rows:raster",
            |pass| r.encode_quantized(pass, &cloud, &groups),
        );
        gpu.queue.submit([enc.finish()]);
        let got = raster::read_ids(&gpu, &target);
        let differ = raster::differing(&got, &want);
        assert_eq!(differ, 0, "{path:?}: {differ} pixels differ");
    }
    common::assert_no_gpu_errors(&gpu);
}

#[test]
#[allow(clippy::disallowed_methods)] // a test frame outside the deck
fn dense_batches_and_hidden_classes_draw_the_reference() {
    // Batches whose 1024 points fall on a few pixels (a dense cloud seen whole: the case of the
    // passes' workgroup depth filter), with exact ties inside a batch and across batches, and a
    // class mask hiding class 3 (the passes then read the attribute words). Every combination of
    // path, filter and mask must give the CPU reference's point per pixel, where a hidden point
    // takes no part.
    let gpu = gpu();
    let d = &gpu.device;
    let size = (32u32, 24u32);
    let mut rng = SplitMix64(23);
    let mut points: Vec<[f32; 3]> = Vec::new();
    for b in 0..24 {
        let c = [rng.next_f32() * 1.4 - 0.7, rng.next_f32() * 1.4 - 0.7];
        let start = points.len();
        for k in 0..QBATCH_POINTS as usize {
            if k % 7 == 6 {
                // An exact copy of an earlier point of this batch: the smaller id must win.
                let j = start + (rng.next_f32() * (k as f32)) as usize;
                points.push(points[j.min(points.len() - 1)]);
                continue;
            }
            points.push([
                c[0] + (rng.next_f32() - 0.5) * 0.15,
                c[1] + (rng.next_f32() - 0.5) * 0.15,
                0.05 + rng.next_f32() * 0.9,
            ]);
        }
        if b % 4 == 3 {
            // A batch that repeats the previous one's first 512 points: ties across batches.
            let prev = start - QBATCH_POINTS as usize;
            for k in 0..512 {
                points[start + k] = points[prev + k];
            }
        }
    }
    let class_of = |id: u32| (id.wrapping_mul(7) / 3) % 5;
    let eye = [0.0f32; 3];
    let (cloud, table, codes) =
        QuantizedCloud::from_points(d, &points, eye, 1 << 20).expect("cloud");
    let decoded: Vec<[f32; 3]> = codes
        .iter()
        .enumerate()
        .map(|(id, &q)| table[id / QBATCH_POINTS as usize].decode(q))
        .collect();
    let view_proj = [
        [1.0, 0.0, 0.0, 0.0],
        [0.0, 1.0, 0.0, 0.0],
        [0.0, 0.0, 1.0, 0.0],
        [0.0, 0.0, 0.0, 1.0],
    ];
    // The setup is what it claims: some pixel holds dozens of one batch's points.
    let mut per_pixel = std::collections::HashMap::new();
    for (id, p) in decoded.iter().enumerate() {
        let x = ((p[0] * 0.5 + 0.5) * size.0 as f32) as u32;
        let y = ((0.5 - p[1] * 0.5) * size.1 as f32) as u32;
        *per_pixel.entry((id / 1024, x, y)).or_insert(0u32) += 1;
    }
    let densest = per_pixel.values().copied().max().unwrap_or(0);
    assert!(
        densest >= 20,
        "at most {densest} points of a batch on a pixel"
    );

    use wgpu::util::DeviceExt;
    let init = |label: &str, contents: &[u8], usage| {
        d.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some(label),
            contents,
            usage,
        })
    };
    let words: Vec<wgpu::Buffer> = cloud
        .chunks
        .iter()
        .map(|c| {
            let w: Vec<u32> = (c.first..c.first + c.count)
                .map(|id| class_of(id) | 0x5a00)
                .collect();
            init(
                "test:quantized:dense:words",
                bytemuck::cast_slice(&w),
                wgpu::BufferUsages::STORAGE,
            )
        })
        .collect();
    let words: Vec<&wgpu::Buffer> = words.iter().collect();
    for hide in [None, Some(3u32)] {
        let mut params = RasterParams::new(view_proj, size);
        // The CPU reference: a hidden point is moved behind the depth range.
        let mut visible = decoded.clone();
        if let Some(c) = hide {
            params.class_mask[0][0] &= !(1 << c);
            for (id, p) in visible.iter_mut().enumerate() {
                if class_of(id as u32) == c {
                    p[2] = -10.0;
                }
            }
        }
        let want = cpu_visibility(&visible, &view_proj, size);
        assert!(want.iter().filter(|w| w.is_some()).count() > 100);
        let params_buf = init(
            "test:quantized:dense:params",
            bytemuck::bytes_of(&params),
            wgpu::BufferUsages::UNIFORM,
        );
        for path in [RasterPath::TwoPass32, RasterPath::Atomic64] {
            for filter in [true, false] {
                let mut r = Rasterizer::with_path(d, vizdeck::scene::SCENE_FORMAT, path);
                if r.path() != path {
                    continue;
                }
                r.set_workgroup_filter(d, filter);
                let target = r.target(d, size);
                let groups = r.bind_quantized(d, &params_buf, &cloud, &words, &target);
                let mut enc = d.create_command_encoder(&wgpu::CommandEncoderDescriptor {
                    label: Some("test:quantized:dense"),
                });
                raster::clear_and_raster(
                    &mut enc,
                    &r,
                    &target,
                    "test:quantized:dense:raster",
                    |pass| r.encode_quantized(pass, &cloud, &groups),
                );
                gpu.queue.submit([enc.finish()]);
                let got = raster::read_ids(&gpu, &target);
                let differ = raster::differing(&got, &want);
                assert_eq!(
                    differ, 0,
                    "{path:?}, filter {filter}, hidden class {hide:?}: {differ} pixels differ"
                );
            }
        }
    }
    common::assert_no_gpu_errors(&gpu);
}
