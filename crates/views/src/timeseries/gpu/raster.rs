//! The line rule the M4 pass rasters short connectors by ([`Raster::Compute`](super::Raster)),
//! and the check that the connector draw follows it on an adapter ([`lines_follow_rule`]).
//!
//! A connector joins the centres of two pixels; the rasterizer decides which pixels a one-pixel
//! line lights, and Vulkan leaves the exact rule to the implementation. Between adjacent columns
//! (`j` → `j + 1`) with both ends in the image and `dy = y1 − y0` rows apart, lavapipe lights, in
//! the direction `s` of `dy`, rows `y0 + s·k` of column `j` for `k = 0 ..= |dy| / 2` and of
//! column `j + 1` for `k = (|dy| + 1) / 2 .. |dy|` (the last pixel left out), for every
//! `|dy| ≤ 255` (longer lines are drawn from the other end). The M4 pass rasters those
//! connectors itself only after [`lines_follow_rule`] drew every such line on the adapter and
//! found exactly these pixels; the other connectors are always drawn.

use super::{Conn, DEPTH_FORMAT, HostDraw, Pipelines, ViewUniform};
use crate::gpu::Gpu;
use crate::gpu::frame::OwnedFrame;

/// Longest connector, in rows, the M4 pass rasters (`LINE_MAX_ROWS` in
/// `shaders/common/timeseries.wgsl`).
pub(crate) const LINE_MAX_ROWS: i32 = 255;

/// The pixels `(column offset, row)` the line rule lights for a connector from row `y0` of a
/// column to row `y1` of the next.
pub(crate) fn line_pixels(y0: i32, y1: i32) -> impl Iterator<Item = (u32, i32)> {
    let dy = y1 - y0;
    let (n, s) = (dy.abs(), dy.signum());
    let first = (0..=n / 2).map(move |k| (0, y0 + s * k));
    let second = ((n + 1) / 2..n).map(move |k| (1, y0 + s * k));
    first.chain(second)
}

/// Calibration image, pixels.
const CHECK_W: u32 = 2048;
const CHECK_H: u32 = 600;

/// The connectors of the check: every `dy` within ±[`LINE_MAX_ROWS`] from rows around the middle,
/// and from the top and bottom rows inwards; each in its own pair of columns. As `(column, y0,
/// y1)`.
fn check_lines() -> Vec<(u32, i32, i32)> {
    let mid = CHECK_H as i32 / 2;
    let last = CHECK_H as i32 - 1;
    let mut lines = Vec::new();
    for (k, dy) in (-LINE_MAX_ROWS..=LINE_MAX_ROWS).enumerate() {
        let y0 = mid + (k as i32 * 37) % 45 - 22;
        lines.push((y0, y0 + dy));
    }
    for dy in 0..=LINE_MAX_ROWS {
        lines.push((0, dy));
        lines.push((last, last - dy));
    }
    lines
        .into_iter()
        .enumerate()
        .map(|(k, (y0, y1))| (2 * k as u32, y0, y1))
        .collect()
}

/// Whether the connector draw of `pipes` lights exactly the pixels of [`line_pixels`] on `gpu`'s
/// adapter, for every connector the M4 pass would raster (adjacent columns, ends in the image,
/// at most [`LINE_MAX_ROWS`] rows apart): draws them all once and reads the image back (one
/// submit and a blocking read; call it when the pipelines are built, not per frame). `false`
/// when the image cannot be read.
pub fn lines_follow_rule(gpu: &Gpu, pipes: &Pipelines) -> bool {
    let lines = check_lines();
    let conns: Vec<Conn> = lines
        .iter()
        .map(|&(c, y0, y1)| Conn {
            col0: c,
            v0: (y0 as f32).to_bits(),
            col1: c + 1,
            v1: (y1 as f32).to_bits(),
            slot: 0,
        })
        .collect();
    // Value v lands on row floor(v): y = b − v·a with a = −1, b = 0.
    let view = ViewUniform {
        a: -1.0,
        b: 0.0,
        width: CHECK_W as f32,
        height: CHECK_H as f32,
        color: u32::MAX,
    };
    let device = &gpu.device;
    let size = wgpu::Extent3d {
        width: CHECK_W,
        height: CHECK_H,
        depth_or_array_layers: 1,
    };
    let target = device.create_texture(&wgpu::TextureDescriptor {
        label: Some("timeseries:line_check:target"),
        size,
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format: gpu.scene_format,
        usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
        view_formats: &[],
    });
    let depth = device.create_texture(&wgpu::TextureDescriptor {
        label: Some("timeseries:line_check:depth"),
        size,
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format: DEPTH_FORMAT,
        usage: wgpu::TextureUsages::RENDER_ATTACHMENT,
        view_formats: &[],
    });
    let target_view = target.create_view(&wgpu::TextureViewDescriptor {
        label: Some("timeseries:line_check:target:view"),
        ..Default::default()
    });
    let depth_view = depth.create_view(&wgpu::TextureViewDescriptor {
        label: Some("timeseries:line_check:depth:view"),
        ..Default::default()
    });
    let mut f = OwnedFrame::new(gpu, crate::gpu::upload::Strategy::WriteBuffer);
    let draw = HostDraw::new(&mut f.frame(), pipes, &view, 0, &[], &conns);
    {
        let mut pass = f.encoder().begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("timeseries:line_check:pass"),
            color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                view: &target_view,
                depth_slice: None,
                resolve_target: None,
                ops: wgpu::Operations {
                    load: wgpu::LoadOp::Clear(wgpu::Color::BLACK),
                    store: wgpu::StoreOp::Store,
                },
            })],
            depth_stencil_attachment: Some(wgpu::RenderPassDepthStencilAttachment {
                view: &depth_view,
                depth_ops: Some(wgpu::Operations {
                    load: wgpu::LoadOp::Clear(1.0),
                    store: wgpu::StoreOp::Discard,
                }),
                stencil_ops: None,
            }),
            timestamp_writes: None,
            occlusion_query_set: None,
            multiview_mask: None,
        });
        draw.paint(pipes, &mut pass);
    }
    f.submit();
    let Ok(image) = crate::gpu::readback::read_texture_rgba(&gpu.device, &gpu.queue, &target)
    else {
        return false;
    };
    let mut want = vec![false; (CHECK_W * CHECK_H) as usize];
    for &(c, y0, y1) in &lines {
        for (dx, y) in line_pixels(y0, y1) {
            want[(y as u32 * CHECK_W + c + dx) as usize] = true;
        }
    }
    image
        .chunks_exact(4)
        .zip(&want)
        .all(|(px, &lit)| (px[..3] != [0, 0, 0]) == lit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_lights_one_pixel_per_row_but_the_middle_of_even_lines() {
        let px = |y0, y1| line_pixels(y0, y1).collect::<Vec<_>>();
        assert_eq!(px(5, 5), vec![(0, 5)]);
        assert_eq!(px(5, 6), vec![(0, 5)]);
        assert_eq!(px(5, 4), vec![(0, 5)]);
        assert_eq!(px(0, 2), vec![(0, 0), (0, 1), (1, 1)]);
        assert_eq!(px(0, 3), vec![(0, 0), (0, 1), (1, 2)]);
        assert_eq!(px(10, 6), vec![(0, 10), (0, 9), (0, 8), (1, 8), (1, 7)]);
        // Inside the check image: every line fits its pair of columns and the rows.
        let lines = check_lines();
        assert!(lines.iter().all(|&(c, y0, y1)| c + 1 < CHECK_W
            && (0..CHECK_H as i32).contains(&y0)
            && (0..CHECK_H as i32).contains(&y1)));
    }
}
