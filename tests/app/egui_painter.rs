//! vizdeck's egui painter (`gpu::egui_painter`) against egui-wgpu's renderer, the reference it
//! replaces: the same egui output (text in several sizes, widgets, filled and stroked shapes,
//! a managed image sampled with linear and nearest filtering, nested clip rects) painted by both
//! into the same output gives the same pixels, at 1 and 1.5 pixels per point, on lavapipe; and
//! every byte the painter uploads is counted by the uploader.

#![allow(clippy::disallowed_methods)] // egui-wgpu's renderer is driven with its own submits here

use crate::common;
use common::gpu;

use vizdeck::gpu::Gpu;
use vizdeck::gpu::egui_painter::EguiPainter;
use vizdeck::gpu::frame::OwnedFrame;
use vizdeck::gpu::upload::Strategy;

const SIZE: (u32, u32) = (400, 300);
const FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Rgba8Unorm;

/// The UI both painters draw.
fn ui(ctx: &egui::Context, image: &egui::TextureHandle, nearest: &egui::TextureHandle) {
    egui::Window::new("window")
        .default_pos([10.0, 10.0])
        .show(ctx, |ui| {
            ui.heading("Heading text");
            ui.label("A label with some text, 0123456789.");
            ui.small("small text");
            let _ = ui.button("a button");
            let mut v = 0.4f32;
            ui.add(egui::Slider::new(&mut v, 0.0..=1.0).text("slider"));
            let mut on = true;
            ui.checkbox(&mut on, "checkbox");
            ui.image((image.id(), egui::vec2(64.0, 40.0)));
            ui.image((nearest.id(), egui::vec2(48.0, 48.0)));
        });
    let painter = ctx.layer_painter(egui::LayerId::background());
    painter.rect_filled(
        egui::Rect::from_min_size(egui::pos2(250.0, 20.0), egui::vec2(120.0, 80.0)),
        8.0,
        egui::Color32::from_rgba_unmultiplied(200, 60, 30, 180),
    );
    painter.circle_stroke(
        egui::pos2(310.0, 180.0),
        50.0,
        egui::Stroke::new(2.5, egui::Color32::LIGHT_BLUE),
    );
    painter.line_segment(
        [egui::pos2(230.0, 290.0), egui::pos2(395.0, 120.0)],
        egui::Stroke::new(1.3, egui::Color32::YELLOW),
    );
    painter
        .with_clip_rect(egui::Rect::from_min_size(
            egui::pos2(240.0, 220.0),
            egui::vec2(60.0, 30.0),
        ))
        .text(
            egui::pos2(235.0, 215.0),
            egui::Align2::LEFT_TOP,
            "clipped text that runs on",
            egui::FontId::proportional(18.0),
            egui::Color32::WHITE,
        );
}

/// A 16×8 gradient with transparency (premultiplied by egui), and a 4×4 checkerboard.
fn images(ctx: &egui::Context) -> (egui::TextureHandle, egui::TextureHandle) {
    let mut g = egui::ColorImage::filled([16, 8], egui::Color32::BLACK);
    for y in 0..8 {
        for x in 0..16 {
            g.pixels[y * 16 + x] = egui::Color32::from_rgba_unmultiplied(
                x as u8 * 16,
                255 - y as u8 * 30,
                90,
                128 + y as u8 * 16,
            );
        }
    }
    let mut c = egui::ColorImage::filled([4, 4], egui::Color32::WHITE);
    for i in 0..16 {
        if (i / 4 + i % 4) % 2 == 0 {
            c.pixels[i] = egui::Color32::DARK_GREEN;
        }
    }
    (
        ctx.load_texture("gradient", g, egui::TextureOptions::LINEAR),
        ctx.load_texture("checker", c, egui::TextureOptions::NEAREST),
    )
}

fn target(gpu: &Gpu) -> wgpu::Texture {
    gpu.device.create_texture(&wgpu::TextureDescriptor {
        label: Some("test:egui:target"),
        size: wgpu::Extent3d {
            width: SIZE.0,
            height: SIZE.1,
            depth_or_array_layers: 1,
        },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format: FORMAT,
        usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
        view_formats: &[],
    })
}

fn clear_pass<'e>(
    encoder: &'e mut wgpu::CommandEncoder,
    view: &'e wgpu::TextureView,
) -> wgpu::RenderPass<'e> {
    encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
        label: Some("test:egui"),
        color_attachments: &[Some(wgpu::RenderPassColorAttachment {
            view,
            depth_slice: None,
            resolve_target: None,
            ops: wgpu::Operations {
                load: wgpu::LoadOp::Clear(wgpu::Color {
                    r: 0.05,
                    g: 0.1,
                    b: 0.2,
                    a: 1.0,
                }),
                store: wgpu::StoreOp::Store,
            },
        })],
        depth_stencil_attachment: None,
        timestamp_writes: None,
        occlusion_query_set: None,
        multiview_mask: None,
    })
}

/// Runs the UI for three frames at `ppp`, painting each with both painters: (ours, egui-wgpu's)
/// RGBA8 of the last, and per frame (bytes our uploader counted, bytes egui handed over: texture
/// patches, vertices, indices, plus the 16-byte screen uniform when the size is new).
fn paint_both(gpu: &Gpu, ppp: f32) -> (Vec<u8>, Vec<u8>, Vec<(u64, u64)>) {
    let ctx = egui::Context::default();
    ctx.set_visuals(egui::Visuals::dark());
    let (image, nearest) = images(&ctx);
    let mut ours = EguiPainter::new(&gpu.device, FORMAT);
    let mut reference = egui_wgpu::Renderer::new(&gpu.device, FORMAT, Default::default());
    let (t_ours, t_ref) = (target(gpu), target(gpu));
    let (v_ours, v_ref) = (
        t_ours.create_view(&Default::default()),
        t_ref.create_view(&Default::default()),
    );
    let mut bytes = Vec::new();
    for frame in 0..3 {
        let raw = egui::RawInput {
            screen_rect: Some(egui::Rect::from_min_size(
                egui::Pos2::ZERO,
                egui::vec2(SIZE.0 as f32, SIZE.1 as f32) / ppp,
            )),
            viewports: std::iter::once((
                egui::ViewportId::ROOT,
                egui::ViewportInfo {
                    native_pixels_per_point: Some(ppp),
                    ..Default::default()
                },
            ))
            .collect(),
            time: Some(frame as f64 / 60.0),
            ..Default::default()
        };
        let out = ctx.run_ui(raw, |u| ui(u.ctx(), &image, &nearest));
        let prims = ctx.tessellate(out.shapes, out.pixels_per_point);
        assert!((out.pixels_per_point - ppp).abs() < 1e-6);

        // Ours, through an owned frame (one uploader, one submit).
        let mut owned = OwnedFrame::new(gpu, Strategy::WriteBuffer);
        {
            let mut f = owned.frame();
            ours.update_textures(&mut f, &out.textures_delta);
            ours.prepare(&mut f, &prims, SIZE, ppp);
        }
        let mut handed = if frame == 0 { 16 } else { 0 };
        handed += out
            .textures_delta
            .set
            .values()
            .flatten()
            .map(|d| (d.image.width() * d.image.height() * 4) as u64)
            .sum::<u64>();
        for p in &prims {
            if let egui::epaint::Primitive::Mesh(m) = &p.primitive {
                handed += (m.vertices.len() * 20 + m.indices.len() * 4) as u64;
            }
        }
        {
            let mut pass = clear_pass(owned.encoder(), &v_ours);
            ours.paint(&mut pass, SIZE);
        }
        bytes.push((owned.counters().bytes, handed));
        owned.submit();
        ours.free_textures(&out.textures_delta);

        // egui-wgpu's renderer.
        for (id, deltas) in &out.textures_delta.set {
            for d in deltas {
                reference.update_texture(&gpu.device, &gpu.queue, *id, d);
            }
        }
        let screen = egui_wgpu::ScreenDescriptor {
            size_in_pixels: [SIZE.0, SIZE.1],
            pixels_per_point: ppp,
        };
        let mut encoder = gpu.device.create_command_encoder(&Default::default());
        let extra =
            reference.update_buffers(&gpu.device, &gpu.queue, &mut encoder, &prims, &screen);
        {
            let mut pass = clear_pass(&mut encoder, &v_ref).forget_lifetime();
            reference.render(&mut pass, &prims, &screen);
        }
        gpu.queue
            .submit(extra.into_iter().chain(std::iter::once(encoder.finish())));
        for id in &out.textures_delta.free {
            reference.free_texture(id);
        }
        gpu.wait_idle();
    }
    let read = |t: &wgpu::Texture| {
        vizdeck::gpu::readback::read_texture_rgba(&gpu.device, &gpu.queue, t).expect("readback")
    };
    (read(&t_ours), read(&t_ref), bytes)
}

#[test]
fn painter_matches_egui_wgpu_pixel_for_pixel() {
    let gpu = gpu();
    for ppp in [1.0f32, 1.5] {
        let (ours, reference, bytes) = paint_both(&gpu, ppp);
        for (frame, (counted, handed)) in bytes.iter().enumerate() {
            assert_eq!(counted, handed, "ppp {ppp}, frame {frame}: bytes counted");
        }
        // The font atlas went up in the first frame.
        assert!(bytes[0].1 > 100_000, "{bytes:?}");
        let mut differ = 0usize;
        let mut worst = 0u8;
        for (a, b) in ours.chunks_exact(4).zip(reference.chunks_exact(4)) {
            let d = a
                .iter()
                .zip(b)
                .map(|(x, y)| x.abs_diff(*y))
                .max()
                .unwrap_or(0);
            worst = worst.max(d);
            differ += usize::from(d > 1);
        }
        assert_eq!(
            differ, 0,
            "ppp {ppp}: {differ} pixels differ by more than 1 (worst {worst})"
        );
        // Something was drawn: text, widgets and shapes over the clear colour.
        let drawn = common::non_background_fraction(&ours);
        assert!(drawn > 0.1, "ppp {ppp}: {drawn}");
    }
    assert!(
        gpu.error_messages().is_empty(),
        "{:?}",
        gpu.error_messages()
    );
}
