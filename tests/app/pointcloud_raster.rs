//! The compute rasterizer's visibility buffer (32-bit two-pass path) equals the CPU reference
//! (nearest point per pixel, the smallest index among equal depths) on a cloud of 6,000 points
//! placed at pixel centres, some off screen or outside the depth range, some sharing a pixel and
//! a depth exactly (ties), through an orthographic view; the points stored as the scene stores
//! them (nodes relative to their own origins, on scattered pages of the pool, one class hidden
//! by the class mask); and the resolve colours each pixel from its point. Both paths: the 64-bit
//! one-pass (lavapipe has 64-bit atomics) and the 32-bit two-pass fallback.
//!
//! A target in pieces (bands of rows within the device's binding limits, issue 34): drawn in
//! 15 pieces (the limit lowered) it gives the whole target's visibility buffer, image (point
//! radius and eye-dome lighting across the edges) and picks, bit for bit; at 6000 × 4000 (over
//! lavapipe's 128 MiB) points at known pixels of every piece land there, their discs are drawn
//! across the edges and picks find them; and the headless app draws the point-cloud scene at
//! that size.

use crate::common;
use common::{gpu, raster};

use vizdeck::pointcloud::pieces::{piece_of_row, pieces, row_bytes};
use vizdeck::pointcloud::raster::{
    BATCH_POINTS, ColorMode, EMPTY_BATCH, PickParams, RasterParams, RasterPath, Rasterizer,
    ResolveImage, ResolveParams, ResolveVariant, batch_entry, contiguous_batches, cpu_visibility,
};
use vizdeck::scene::particles::SplitMix64;

#[test]
#[allow(clippy::disallowed_methods)] // a test frame outside the deck
fn visibility_buffer_equals_the_cpu_reference() {
    let gpu = gpu();
    let size = (64u32, 48u32);
    let mut rng = SplitMix64(7);
    let mut points: Vec<[f32; 3]> = Vec::new();
    for i in 0..6000 {
        if i % 10 == 9 {
            // A tie: the same position as an earlier point.
            let j = (f64::from(rng.next_f32()) * points.len() as f64) as usize;
            points.push(points[j]);
            continue;
        }
        // Pixel centres from 4 px left/above to 4 px right/below the buffer; depths in
        // [−0.1, 1.1) (some rejected).
        let px = (f64::from(rng.next_f32()) * f64::from(size.0 + 8)) as i32 - 4;
        let py = (f64::from(rng.next_f32()) * f64::from(size.1 + 8)) as i32 - 4;
        let x = ((px as f32 + 0.5) / size.0 as f32) * 2.0 - 1.0;
        let y = 1.0 - ((py as f32 + 0.5) / size.1 as f32) * 2.0;
        let z = (f64::from(rng.next_f32()) * 1.2 - 0.1) as f32;
        points.push([x, y, z]);
    }
    // An orthographic view that scales by 2 and shifts back: the same pixels, exact in f32.
    let m = glam::Mat4::from_cols_array_2d(&[
        [0.5, 0.0, 0.0, 0.0],
        [0.0, 0.5, 0.0, 0.0],
        [0.0, 0.0, 1.0, 0.0],
        [0.0, 0.0, 0.0, 1.0],
    ]);
    let scaled: Vec<[f32; 3]> = points
        .iter()
        .map(|p| [p[0] * 2.0, p[1] * 2.0, p[2]])
        .collect();
    let view_proj = m.to_cols_array_2d();
    let want = cpu_visibility(&scaled, &view_proj, size);
    let covered = want.iter().filter(|w| w.is_some()).count();
    assert!(covered > 1500, "{covered} pixels covered");

    // The pool: the points in nodes of uneven sizes, each stored relative to its own origin,
    // on pages taken in a scattered order; a hidden class (7) on every 13th point. The CPU
    // reference sees each point where the GPU puts it (offset + origin, in f32) at its pool
    // index, and empty or hidden slots off screen.
    const PAGE: usize = BATCH_POINTS as usize;
    let pages = scaled.len().div_ceil(PAGE) + 12;
    let mut order: Vec<usize> = (0..pages).collect();
    for i in (1..order.len()).rev() {
        let j = (f64::from(rng.next_f32()) * (i + 1) as f64) as usize;
        order.swap(i, j.min(i));
    }
    let off_screen = [10.0f32, 10.0, 0.5];
    let mut pool_xyz = vec![off_screen; pages * PAGE];
    let mut pool_points = vec![[0u32; 4]; pages * PAGE];
    let mut pool_attrs = vec![[0u32; 2]; pages * PAGE];
    let mut table = Vec::new();
    let mut colors = std::collections::HashMap::new();
    let (mut next, mut free_page) = (0usize, 0usize);
    while next < scaled.len() {
        let size = (1 + (f64::from(rng.next_f32()) * 700.0) as usize).min(scaled.len() - next);
        let origin = [
            rng.next_f32() - 0.5,
            rng.next_f32() - 0.5,
            rng.next_f32() * 0.2,
        ];
        for chunk in (next..next + size).collect::<Vec<_>>().chunks(PAGE) {
            let page = order[free_page];
            free_page += 1;
            for (j, &i) in chunk.iter().enumerate() {
                let slot = page * PAGE + j;
                let p = scaled[i];
                let rel = [p[0] - origin[0], p[1] - origin[1], p[2] - origin[2]];
                let class = if i % 13 == 5 { 7u32 } else { 2 };
                pool_points[slot] = [rel[0].to_bits(), rel[1].to_bits(), rel[2].to_bits(), class];
                let color = (slot as u32).wrapping_mul(2_654_435_761) | 0xff00_0000;
                pool_attrs[slot] = [color, 0];
                colors.insert(slot as u32, color);
                if class != 7 {
                    pool_xyz[slot] = [rel[0] + origin[0], rel[1] + origin[1], rel[2] + origin[2]];
                }
            }
            table.push(batch_entry(
                origin,
                (page * PAGE) as u32,
                chunk.len() as u32,
            ));
        }
        next += size;
    }
    let batches = table.len() as u32;
    let (x, y) = vizdeck::pointcloud::raster::dispatch_size(batches);
    table.resize((x * y) as usize, EMPTY_BATCH);
    let want = cpu_visibility(&pool_xyz, &view_proj, size);
    let covered = want.iter().filter(|w| w.is_some()).count();
    assert!(covered > 1500, "{covered} pixels covered");

    let d = &gpu.device;
    let mut params = RasterParams::new(view_proj, size);
    params.class_mask[0][0] &= !(1 << 7);
    use wgpu::util::DeviceExt;
    let init = |label: &str, contents: &[u8], usage| {
        d.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some(label),
            contents,
            usage,
        })
    };
    let storage = wgpu::BufferUsages::STORAGE;
    let params_buf = init(
        "test:raster:params",
        bytemuck::bytes_of(&params),
        wgpu::BufferUsages::UNIFORM,
    );
    let points_buf = init(
        "test:raster:points",
        bytemuck::cast_slice(&pool_points),
        storage,
    );
    let attrs_buf = init(
        "test:raster:attrs",
        bytemuck::cast_slice(&pool_attrs),
        storage,
    );
    let batches_buf = init("test:raster:batches", bytemuck::cast_slice(&table), storage);
    // lavapipe has 64-bit buffer atomics: CI runs both paths.
    if gpu.summary.name.contains("llvmpipe") {
        assert_eq!(
            RasterPath::best(&gpu.device),
            RasterPath::Atomic64,
            "lavapipe without 64-bit atomics?"
        );
    }
    for path in [RasterPath::TwoPass32, RasterPath::Atomic64] {
        let mut r = Rasterizer::with_path(d, vizdeck::scene::SCENE_FORMAT, path);
        if r.path() != path {
            eprintln!("{path:?}: not on this adapter (no 64-bit atomics), skipped");
            continue;
        }
        let target = r.target(d, size);
        let group = r.bind(d, &params_buf, &points_buf, &batches_buf, &target);
        let mut enc = d.create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("test:raster"),
        });
        raster::clear_and_raster(&mut enc, &r, &target, "test:raster:pass", |pass| {
            r.encode(pass, &group, batches)
        });
        gpu.queue.submit([enc.finish()]);
        let got = raster::read_ids(&gpu, &target);
        let differ = raster::differing(&got, &want);
        assert_eq!(
            differ, 0,
            "{path:?}: {differ} pixels differ from the CPU reference"
        );

        // The resolve (RGB, radius 0, no eye-dome lighting): every pixel its point's colour,
        // the background where none landed.
        let rp_buf = raster::resolve_params(d, "test:raster:resolve", size);
        let image = raster::resolve_image(d, "test:raster:image", size);
        let resolve = r.bind_resolve(d, &rp_buf, &target, &points_buf, &attrs_buf);
        let variant = ResolveVariant {
            mode: ColorMode::Rgb,
            radius: 0,
            edl: false,
        };
        r.prepare_variant(d, variant);
        let mut enc = d.create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("test:resolve"),
        });
        raster::resolve_into(
            &gpu,
            &mut enc,
            &r,
            &image,
            "test:resolve:pass",
            |pass, out| r.resolve(pass, variant, &resolve, out),
        );
        gpu.queue.submit([enc.finish()]);
        let rgba = vizdeck::gpu::readback::read_texture_rgba(d, &gpu.queue, &image).expect("image");
        for (px, w) in want.iter().enumerate() {
            let expect = match w {
                Some(i) => colors[i].to_le_bytes(),
                None => [0, 0, 0, 255],
            };
            assert_eq!(rgba[px * 4..px * 4 + 4], expect, "{path:?}: pixel {px}");
        }

        // The same resolve for a Bgra8Unorm scene texture: the image's bytes are B, G, R, A,
        // rows of `pitch` pixels.
        let mut rb = Rasterizer::with_path(d, wgpu::TextureFormat::Bgra8Unorm, path);
        let resolve_b = rb.bind_resolve(d, &rp_buf, &target, &points_buf, &attrs_buf);
        rb.prepare_variant(d, variant);
        let image_b = rb.image(d, size);
        let mut enc = d.create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("test:resolve:bgra"),
        });
        {
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("test:resolve:bgra"),
                timestamp_writes: None,
            });
            rb.resolve(&mut pass, variant, &resolve_b, &image_b);
        }
        gpu.queue.submit([enc.finish()]);
        let bytes = raster::read_image(&gpu, &image_b);
        assert_eq!(image_b.pitch % 64, 0);
        assert!(image_b.pitch >= size.0);
        for (px, w) in want.iter().enumerate() {
            let [r8, g8, b8, a8] = match w {
                Some(i) => colors[i].to_le_bytes(),
                None => [0, 0, 0, 255],
            };
            let at = ((px / size.0 as usize) * image_b.pitch as usize + px % size.0 as usize) * 4;
            assert_eq!(
                bytes[at..at + 4],
                [b8, g8, r8, a8],
                "{path:?}: BGRA pixel {px}"
            );
        }
    }
    common::assert_no_gpu_errors(&gpu);
}

// ---- A target in pieces (`pointcloud::pieces`): over the device's binding limits, the
// visibility buffer and the image are bands of rows in buffers of their own.

/// The points of a frame (camera-relative, seen through the identity: ndc = the point), each
/// with its colour, as a 16-byte pool at origin 0 with its batch table.
struct Pool {
    points: Vec<[f32; 3]>,
    colors: Vec<u32>,
    buffers: [wgpu::Buffer; 3], // points, attributes, batches
}

const IDENTITY: [[f32; 4]; 4] = [
    [1.0, 0.0, 0.0, 0.0],
    [0.0, 1.0, 0.0, 0.0],
    [0.0, 0.0, 1.0, 0.0],
    [0.0, 0.0, 0.0, 1.0],
];

/// The camera-relative point at the centre of pixel (x, y) of a `size` target at depth `z`.
fn at_pixel(x: u32, y: u32, z: f32, size: (u32, u32)) -> [f32; 3] {
    [
        (x as f32 + 0.5) / size.0 as f32 * 2.0 - 1.0,
        1.0 - (y as f32 + 0.5) / size.1 as f32 * 2.0,
        z,
    ]
}

fn pool(d: &wgpu::Device, points: Vec<[f32; 3]>) -> Pool {
    use wgpu::util::DeviceExt;
    let colors: Vec<u32> = (0..points.len() as u32)
        .map(|i| i.wrapping_mul(2_654_435_761) | 0xff00_0000)
        .collect();
    let packed: Vec<[u32; 4]> = points
        .iter()
        .map(|p| [p[0].to_bits(), p[1].to_bits(), p[2].to_bits(), 2])
        .collect();
    let attrs: Vec<[u32; 2]> = colors.iter().map(|&c| [c, 0]).collect();
    let table = contiguous_batches(points.len() as u32, [0.0; 3]);
    let init = |label: &str, contents: &[u8]| {
        d.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some(label),
            contents,
            usage: wgpu::BufferUsages::STORAGE,
        })
    };
    let buffers = [
        init("test:pieces:points", bytemuck::cast_slice(&packed)),
        init("test:pieces:attrs", bytemuck::cast_slice(&attrs)),
        init("test:pieces:batches", bytemuck::cast_slice(&table)),
    ];
    Pool {
        points,
        colors,
        buffers,
    }
}

/// What a frame of `r` gives: the id per pixel, the resolved image (rows of `pitch` words) and
/// the point id the pick finds at each of `picks`.
struct Frame {
    ids: Vec<Option<u32>>,
    image: Vec<u8>,
    pitch: u32,
    picked: Vec<Option<u32>>,
    pieces: usize,
}

/// Draws `pool` into a `size` target of `r` (its piece limit as set): clear, raster passes,
/// resolve of `variant` (orthographic depth 0–10, eye-dome lighting strength 0.005: shades of
/// 0.3–1), then the picks (radius `variant.radius`), read back after the GPU is done.
#[allow(clippy::disallowed_methods)] // a test frame outside the deck
fn frame(
    gpu: &vizdeck::gpu::Gpu,
    r: &mut Rasterizer,
    pool: &Pool,
    size: (u32, u32),
    variant: ResolveVariant,
    picks: &[(u32, u32)],
) -> Frame {
    use wgpu::util::DeviceExt;
    let d = &gpu.device;
    let uniform = |label: &str, contents: &[u8]| {
        d.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some(label),
            contents,
            usage: wgpu::BufferUsages::UNIFORM,
        })
    };
    let params = uniform(
        "test:pieces:params",
        bytemuck::bytes_of(&RasterParams::new(IDENTITY, size)),
    );
    let rp = ResolveParams {
        width: size.0,
        height: size.1,
        pitch: ResolveImage::pitch_of(size.0),
        background: [0.0, 0.0, 0.0, 1.0],
        near: 0.0,
        far: 10.0,
        ortho: 1.0,
        edl_strength: 0.005,
        ..bytemuck::Zeroable::zeroed()
    };
    let rp = uniform("test:pieces:resolve", bytemuck::bytes_of(&rp));
    let [points, attrs, batches] = &pool.buffers;
    let target = r.target(d, size);
    let group = r.bind(d, &params, points, batches, &target);
    let resolve = r.bind_resolve(d, &rp, &target, points, attrs);
    r.prepare_variant(d, variant);
    let image = r.image(d, size);
    let batch_count = (pool.points.len() as u32).div_ceil(BATCH_POINTS);
    let mut enc = d.create_command_encoder(&wgpu::CommandEncoderDescriptor {
        label: Some("test:pieces"),
    });
    raster::clear_and_raster(&mut enc, r, &target, "test:pieces:pass", |pass| {
        r.encode(pass, &group, batch_count);
        r.resolve(pass, variant, &resolve, &image);
    });
    let picked: Vec<wgpu::Buffer> = picks
        .iter()
        .map(|&(x, y)| {
            let pp = PickParams {
                x: x as i32,
                y: y as i32,
                radius: variant.radius as i32,
                _pad: 0,
                width: size.0,
                height: size.1,
                _pad1: [0; 2],
            };
            let pp = uniform("test:pieces:pick", bytemuck::bytes_of(&pp));
            let out = d.create_buffer(&wgpu::BufferDescriptor {
                label: Some("test:pieces:picked"),
                size: 8,
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            });
            let group = r.bind_pick(d, &pp, &target, &out);
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("test:pieces:pick"),
                timestamp_writes: None,
            });
            r.encode_pick(&mut pass, &group, y);
            drop(pass);
            out
        })
        .collect();
    gpu.queue.submit([enc.finish()]);
    let picked = picked
        .iter()
        .map(|b| {
            let bytes = gpu.read_buffer_blocking(b, 0, 8).expect("picked");
            let w: &[u32] = bytemuck::cast_slice(&bytes);
            (w[0] != 0).then_some(!w[0])
        })
        .collect();
    Frame {
        ids: raster::read_ids(gpu, &target),
        image: raster::read_image(gpu, &image),
        pitch: image.pitch,
        picked,
        pieces: target.pieces.len(),
    }
}

/// A dense cloud drawn into a target split into 15 pieces of 8 rows (the piece limit lowered)
/// gives the visibility buffer of the CPU reference, and the image and picks of the same
/// target drawn whole, bit for bit: the point radius and eye-dome lighting read across every
/// piece edge (the halo rows), on both paths.
#[test]
fn a_target_in_pieces_draws_as_the_whole_target() {
    let gpu = gpu();
    let d = &gpu.device;
    let size = (160u32, 120u32);
    let mut rng = SplitMix64(34);
    let mut points = Vec::new();
    for i in 0..4000 {
        if i % 10 == 9 {
            points.push(points[i / 2]); // ties
            continue;
        }
        let x = (f64::from(rng.next_f32()) * f64::from(size.0)) as u32;
        let y = (f64::from(rng.next_f32()) * f64::from(size.1)) as u32;
        points.push(at_pixel(x, y, 0.05 + rng.next_f32() * 0.9, size));
    }
    let want = cpu_visibility(&points, &IDENTITY, size);
    let pool = pool(d, points);
    // 14 rows of 1,280 bytes a piece: 8 core rows and 3 halo rows each side.
    let limit = row_bytes(size.0) * 14;
    let split = pieces(size, limit);
    assert_eq!(split.len(), 15, "{split:?}");
    // Picks on the rows about every piece edge, a few columns each, the edges of the target too.
    let picks: Vec<(u32, u32)> = split
        .iter()
        .flat_map(|p| p.core0.saturating_sub(4)..(p.core0 + 4).min(size.1))
        .flat_map(|y| [0, 37, 80, 121, size.0 - 1].map(|x| (x, y)))
        .chain([(0, size.1 - 1), (size.0 - 1, size.1 - 1)])
        .collect();
    for path in [RasterPath::TwoPass32, RasterPath::Atomic64] {
        for variant in [
            ResolveVariant {
                mode: ColorMode::Rgb,
                radius: 3,
                edl: true,
            },
            ResolveVariant {
                mode: ColorMode::Rgb,
                radius: 1,
                edl: false,
            },
            ResolveVariant {
                mode: ColorMode::Rgb,
                radius: 0,
                edl: true,
            },
        ] {
            let mut whole = Rasterizer::with_path(d, vizdeck::scene::SCENE_FORMAT, path);
            if whole.path() != path {
                eprintln!("{path:?}: not on this adapter, skipped");
                continue;
            }
            let mut split = Rasterizer::with_path(d, vizdeck::scene::SCENE_FORMAT, path);
            split.set_piece_limit(d, limit);
            let a = frame(&gpu, &mut whole, &pool, size, variant, &picks);
            let b = frame(&gpu, &mut split, &pool, size, variant, &picks);
            assert_eq!((a.pieces, b.pieces), (1, 15));
            assert_eq!(raster::differing(&a.ids, &want), 0, "{path:?} whole");
            assert_eq!(raster::differing(&b.ids, &want), 0, "{path:?} in pieces");
            assert_eq!(a.image.len(), b.image.len());
            let differ = a
                .image
                .chunks(4)
                .zip(b.image.chunks(4))
                .filter(|(p, q)| p != q)
                .count();
            assert_eq!(differ, 0, "{path:?} {variant:?}: pixels differ");
            assert_eq!(a.picked, b.picked, "{path:?} {variant:?}: picks differ");
            if variant.radius == 0 {
                // The pick at radius 0: the pixel's own point, as the CPU reference has it.
                let own: Vec<Option<u32>> = picks
                    .iter()
                    .map(|&(x, y)| want[(y * size.0 + x) as usize])
                    .collect();
                assert_eq!(a.picked, own, "{path:?}: picks at radius 0");
            } else {
                let found = a.picked.iter().filter(|p| p.is_some()).count();
                assert!(found > picks.len() / 2, "{found} of {} picks", picks.len());
            }
            // The image is not the background alone: a real test of the edges.
            let lit = a.image.chunks(4).filter(|p| p[..3] != [0, 0, 0]).count();
            let covered = want.iter().filter(|w| w.is_some()).count();
            assert!(
                lit * 10 >= covered * 9,
                "{lit} pixels lit, {covered} covered"
            );
        }
    }
    common::assert_no_gpu_errors(&gpu);
}

/// At 6000 × 4000 the packed visibility buffer is 192 MB, over lavapipe's 128 MiB binding limit
/// (the blank scene): isolated points at known pixels of every piece, on the rows about
/// each piece edge and on the last row, land where their pixel centres are (the CPU reference,
/// by construction); with a point radius of 3 and eye-dome lighting every pixel of each point's
/// disc (dx² + dy² ≤ 12) takes its colour, across piece edges; a pick in a piece beside a
/// point's finds it.
#[test]
fn a_target_over_the_binding_limit_draws_every_piece() {
    draws_every_piece_at((6000, 4000));
}

/// The same at the largest square target the adapter's texture limit allows (16384 × 16384 on
/// the H100/H200: a 2 GiB packed visibility buffer), on a hardware adapter only: on a software
/// one (lavapipe, CI) it would take minutes and several GB, and the test above covers it.
#[test]
fn a_target_of_the_texture_limit_draws_every_piece() {
    let gpu = gpu();
    if gpu.is_cpu_adapter() {
        eprintln!("{}: a software adapter, skipped", gpu.summary.name);
        return;
    }
    let side = gpu.device.limits().max_texture_dimension_2d;
    drop(gpu);
    draws_every_piece_at((side, side));
}

fn draws_every_piece_at(size: (u32, u32)) {
    let gpu = gpu();
    let d = &gpu.device;
    let mut r = Rasterizer::new(d, vizdeck::scene::SCENE_FORMAT);
    let split = pieces(size, r.piece_limit());
    let packed_bytes = u64::from(size.0) * u64::from(size.1) * 8;
    if gpu.summary.name.contains("llvmpipe") || r.piece_limit() < packed_bytes {
        assert!(
            split.len() >= 2,
            "{} bytes a piece: {split:?}",
            r.piece_limit()
        );
    }
    eprintln!(
        "{size:?} on {}: {} pieces of at most {} bytes",
        gpu.summary.name,
        split.len(),
        r.piece_limit()
    );
    // Points, at least 8 px apart (the discs of radius 3 do not touch): on each piece edge, one
    // a row from −4 to +4 about the edge, 16 px apart; the target's corners and last row; the
    // rest at random.
    // Picks: 2 columns right of each of those points, 2 rows over the edge beside it where
    // the point is within 2 rows of one (so the pick reads the point from its piece's halo).
    let mut pixels: Vec<(u32, u32)> = Vec::new();
    let mut picks: Vec<(u32, u32)> = Vec::new();
    for (k, p) in split.iter().enumerate() {
        for o in 0..9u32 {
            let Some(y) = (p.core0 + o).checked_sub(4).filter(|&y| y < size.1) else {
                continue;
            };
            let x = 200 + 400 * k as u32 + 16 * o;
            pixels.push((x, y));
            let py = if o < 4 { y + 2 } else { y.saturating_sub(2) };
            picks.push((x + 2, py.min(size.1 - 1)));
        }
    }
    for (x, y) in [
        (0, 0),
        (size.0 - 1, 0),
        (0, size.1 - 1),
        (size.0 - 1, size.1 - 1),
        (3000, size.1 - 1),
    ] {
        pixels.push((x, y));
        picks.push((x.saturating_sub(2), y.saturating_sub(1)));
    }
    let mut rng = SplitMix64(4000);
    while pixels.len() < 3000 {
        let x = (f64::from(rng.next_f32()) * f64::from(size.0)) as u32;
        let y = (f64::from(rng.next_f32()) * f64::from(size.1)) as u32;
        if pixels
            .iter()
            .all(|&(a, b)| a.abs_diff(x) >= 8 || b.abs_diff(y) >= 8)
        {
            pixels.push((x, y));
        }
    }
    let points = pixels
        .iter()
        .map(|&(x, y)| at_pixel(x, y, 0.1 + rng.next_f32() * 0.8, size))
        .collect();
    let pool = pool(d, points);
    assert!(
        picks
            .iter()
            .any(|&(_, y)| piece_of_row(&split, y) == split.len() - 1),
        "a pick in the last piece"
    );
    let variant = ResolveVariant {
        mode: ColorMode::Rgb,
        radius: 3,
        edl: true,
    };
    let f = frame(&gpu, &mut r, &pool, size, variant, &picks);
    assert_eq!(f.pieces, split.len());
    // The visibility buffer: each point's id at its pixel, nothing elsewhere.
    let mut want = std::collections::HashMap::new();
    for (i, &(x, y)) in pixels.iter().enumerate() {
        want.insert((y * size.0 + x) as usize, i as u32);
    }
    let wrong: Vec<usize> = f
        .ids
        .iter()
        .enumerate()
        .filter(|&(px, id)| want.get(&px).copied() != *id)
        .map(|(px, _)| px)
        .take(5)
        .collect();
    assert!(
        wrong.is_empty(),
        "pixels {wrong:?} differ from their points"
    );
    // The image: each point's disc in its colour, the background elsewhere.
    let mut expect = vec![0xff00_0000u32; (size.0 * size.1) as usize];
    for (&(x, y), &c) in pixels.iter().zip(&pool.colors) {
        for dy in -3i32..=3 {
            for dx in -3i32..=3 {
                let (px, py) = (x as i32 + dx, y as i32 + dy);
                let inside = px >= 0 && py >= 0 && px < size.0 as i32 && py < size.1 as i32;
                if inside && dx * dx + dy * dy <= 12 {
                    expect[(py as u32 * size.0 + px as u32) as usize] = c;
                }
            }
        }
    }
    let words: &[u32] = bytemuck::cast_slice(&f.image);
    let mut bad = Vec::new();
    for y in 0..size.1 {
        let row = &words[(y * f.pitch) as usize..(y * f.pitch + size.0) as usize];
        let want_row = &expect[(y * size.0) as usize..((y + 1) * size.0) as usize];
        for (x, (g, w)) in row.iter().zip(want_row).enumerate() {
            if g != w && bad.len() < 5 {
                bad.push((x, y, *g, *w));
            }
        }
    }
    assert!(bad.is_empty(), "(x, y, got, want): {bad:?}");
    let want_picks: Vec<Option<u32>> = (0..picks.len() as u32).map(Some).collect();
    assert_eq!(f.picked, want_picks);
    common::assert_no_gpu_errors(&gpu);
}

/// The case through the real binary: the point-cloud scene headless at 6000 × 4000 (its
/// visibility buffer over lavapipe's binding limit) exits 0 with no GPU error, and draws points
/// in the rows beyond the first piece as well as above.
#[test]
fn headless_point_cloud_at_6000_by_4000_draws() {
    let dir = std::env::temp_dir().join(format!("vizdeck-pieces-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let png = dir.join("pc.png");
    let json = dir.join("pc.json");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_vizdeck"))
        .env("RUST_LOG", "warn")
        .args([
            "--headless",
            "--scene",
            "pointcloud",
            "--no-overlay",
            "--frames",
            "3",
            "--size",
            "6000x4000",
            "--screenshot",
            png.to_str().unwrap(),
            "--report",
            json.to_str().unwrap(),
        ])
        .output()
        .expect("run vizdeck");
    assert!(o.status.success(), "{}", common::text(&o));
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(report["gpu_errors"].as_array().map(|a| a.len()), Some(0));
    let (w, h, rgba) = common::read_png(&png);
    assert_eq!((w, h), (6000, 4000));
    // Points drawn (pixels off the background) in the top and the bottom third alike.
    let lit = |rows: std::ops::Range<u32>| {
        rows.flat_map(|y| (0..w).map(move |x| ((y * w + x) * 4) as usize))
            .filter(|&i| {
                rgba[i..i + 3]
                    .iter()
                    .zip([5u8, 5, 8])
                    .any(|(a, b)| a.abs_diff(b) > 2)
            })
            .count()
    };
    let (top, bottom) = (lit(0..h / 3), lit(2 * h / 3..h));
    assert!(
        top > 10_000 && bottom > 10_000,
        "{top} / {bottom} pixels lit"
    );
    std::fs::remove_dir_all(&dir).ok();
}
