//! The compute rasterizer's visibility buffer (32-bit two-pass path) equals the CPU reference
//! (nearest point per pixel, the smallest index among equal depths) on a cloud of 6,000 points
//! placed at pixel centres, some off screen or outside the depth range, some sharing a pixel and
//! a depth exactly (ties), through an orthographic view; the points stored as the scene stores
//! them (nodes relative to their own origins, on scattered pages of the pool, one class hidden
//! by the class mask); and the resolve colours each pixel from its point. Both paths: the 64-bit
//! one-pass (lavapipe has 64-bit atomics) and the 32-bit two-pass fallback.

mod common;
use common::{gpu, raster};

use vizdeck::pointcloud::raster::{
    BATCH_POINTS, ColorMode, EMPTY_BATCH, RasterParams, RasterPath, Rasterizer, ResolveVariant,
    batch_entry, cpu_visibility,
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
        let bytes = gpu
            .read_buffer_blocking(&image_b.buffer, 0, image_b.buffer.size())
            .expect("image");
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
