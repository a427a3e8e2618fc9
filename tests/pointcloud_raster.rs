//! The compute rasterizer's visibility buffer (32-bit two-pass path) equals the CPU reference
//! (nearest point per pixel, the smallest index among equal depths) on a cloud of 6,000 points
//! placed at pixel centres, some off screen or outside the depth range, some sharing a pixel and
//! a depth exactly (ties), through an orthographic view.

mod common;
use common::gpu;

use vizdeck::pointcloud::raster::{RasterParams, Rasterizer, cpu_visibility};
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

    let d = &gpu.device;
    let params = RasterParams {
        view_proj,
        width: size.0,
        height: size.1,
        count: scaled.len() as u32,
        _pad: 0,
        _pad1: [0; 4],
    };
    use wgpu::util::DeviceExt;
    let params_buf = d.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("test:raster:params"),
        contents: bytemuck::bytes_of(&params),
        usage: wgpu::BufferUsages::UNIFORM,
    });
    let packed: Vec<[f32; 4]> = scaled.iter().map(|p| [p[0], p[1], p[2], 0.0]).collect();
    let points_buf = d.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("test:raster:points"),
        contents: bytemuck::cast_slice(&packed),
        usage: wgpu::BufferUsages::STORAGE,
    });
    let r = Rasterizer::new(d, vizdeck::scene::SCENE_FORMAT);
    let target = r.target(d, size);
    let group = r.bind(d, &params_buf, &points_buf, &target);
    let mut enc = d.create_command_encoder(&wgpu::CommandEncoderDescriptor {
        label: Some("test:raster"),
    });
    r.clear(&mut enc, &target);
    {
        let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("test:raster:pass"),
            timestamp_writes: None,
        });
        r.encode(&mut pass, &group, params.count);
    }
    gpu.queue.submit([enc.finish()]);
    let bytes = gpu
        .read_buffer_blocking(&target.ids, 0, u64::from(size.0 * size.1) * 4)
        .expect("read back");
    let got: Vec<Option<u32>> = bytemuck::cast_slice::<u8, u32>(&bytes)
        .iter()
        .map(|&v| (v != 0).then_some(!v))
        .collect();
    let differ = got.iter().zip(&want).filter(|(g, w)| g != w).count();
    assert_eq!(differ, 0, "{differ} pixels differ from the CPU reference");

    // The resolve: every pixel its point's colour (a distinct RGBA8 per point), black where
    // none landed.
    let colors: Vec<u32> = (0..scaled.len() as u32)
        .map(|i| i.wrapping_mul(2_654_435_761) | 0xff00_0000)
        .collect();
    let colors_buf = d.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("test:raster:colors"),
        contents: bytemuck::cast_slice(&colors),
        usage: wgpu::BufferUsages::STORAGE,
    });
    let image = d.create_texture(&wgpu::TextureDescriptor {
        label: Some("test:raster:image"),
        size: wgpu::Extent3d {
            width: size.0,
            height: size.1,
            depth_or_array_layers: 1,
        },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format: vizdeck::scene::SCENE_FORMAT,
        usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
        view_formats: &[],
    });
    let view = image.create_view(&Default::default());
    let resolve = r.bind_resolve(d, &params_buf, &target, &colors_buf);
    let mut enc = d.create_command_encoder(&wgpu::CommandEncoderDescriptor {
        label: Some("test:resolve"),
    });
    {
        let mut pass = enc.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("test:resolve:pass"),
            color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                view: &view,
                depth_slice: None,
                resolve_target: None,
                ops: wgpu::Operations {
                    load: wgpu::LoadOp::Clear(wgpu::Color::WHITE),
                    store: wgpu::StoreOp::Store,
                },
            })],
            depth_stencil_attachment: None,
            timestamp_writes: None,
            occlusion_query_set: None,
            multiview_mask: None,
        });
        r.paint(&mut pass, &resolve);
    }
    gpu.queue.submit([enc.finish()]);
    let rgba = vizdeck::gpu::readback::read_texture_rgba(d, &gpu.queue, &image).expect("image");
    for (px, w) in want.iter().enumerate() {
        let expect = match w {
            Some(i) => colors[*i as usize].to_le_bytes(),
            None => [0, 0, 0, 255],
        };
        assert_eq!(rgba[px * 4..px * 4 + 4], expect, "pixel {px}");
    }
    assert!(
        gpu.error_messages().is_empty(),
        "{:?}",
        gpu.error_messages()
    );
}
