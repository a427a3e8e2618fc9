//! GPU M4 from the min/max pyramid vs the CPU reference (exact), and decimated vs
//! full-resolution drawing (pixel-identical images) on lavapipe.

#![allow(clippy::disallowed_methods)] // tests and benches drive the GPU with their own submits

use crate::common;
use common::gpu;
use common::series::{assert_same, cpu};

use vizdeck::gpu::Gpu;
use vizdeck::gpu::frame::OwnedFrame;
use vizdeck::gpu::upload::Strategy;
use vizdeck::scene::SCENE_FORMAT;
use vizdeck::scene::timeseries::gpu::{
    DEPTH_FORMAT, HostDraw, Mirrors, Pipelines, RASTER_MIN_RECORDS, Raster, ViewUniform,
    column_segments, decimate_gpu, raster, reference_segments,
};
use vizdeck::scene::timeseries::{TimeSeries, series_color};
use vizdeck::scene::{FrameCtx, Scene};
use vizdeck::series::decimate::Column;
use vizdeck::series::store::Series;
use vizdeck::series::{Pacing, SeriesSelection, SeriesSource, SynthKind};

struct Rng(u64);
impl Rng {
    fn unit(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// A random walk with irregular times, duplicate times, NaN runs and a few ±inf values.
fn messy_series(n: usize, seed: u64, cap: usize) -> Series {
    let mut rng = Rng(seed);
    let mut s = Series::new("m", cap);
    let mut t = 0.0;
    let mut v = 0.0f32;
    let mut nan_left = 0;
    for k in 0..n {
        let r = rng.unit();
        if r > 0.05 {
            t += rng.unit() * 2e-3; // duplicates when the step is tiny
        }
        v += (rng.unit() as f32 - 0.5) * 0.2;
        if nan_left == 0 && rng.unit() < 0.002 {
            nan_left = 1 + (rng.unit() * 300.0) as usize;
        }
        let value = if nan_left > 0 {
            nan_left -= 1;
            f32::NAN
        } else if k % 9973 == 17 {
            f32::INFINITY
        } else if k % 10007 == 3 {
            f32::NEG_INFINITY
        } else {
            v
        };
        s.push(t, value);
    }
    s
}

#[test]
fn gpu_m4_equals_cpu_m4_at_many_zooms() {
    let gpu = gpu();
    let s = messy_series(300_000, 11, usize::MAX);
    let (a, b) = s.time_range_rel().unwrap();
    let pipes = Pipelines::new(&gpu.device, SCENE_FORMAT);
    let mut m = Mirrors::new();
    m.set_keep_columns(true);
    let mut f = OwnedFrame::new(&gpu, Strategy::WriteBuffer);
    m.sync(&mut f.frame(), &pipes, 0, &s).unwrap();
    let views = [
        (a, b + 1e-9, 1000usize),
        (a - 5.0, b + 5.0, 333),
        ((a + b) / 2.0, (a + b) / 2.0 + 0.5, 640),
        ((a + b) / 3.0, (a + b) / 3.0 + 0.01, 97),
        (a + 1.234, a + 1.234 + 1e-4, 16),
        (b + 1.0, b + 2.0, 50),
    ];
    for (k, &(r0, r1, cols)) in views.iter().enumerate() {
        m.begin_views(cols as u32, &ViewUniform::default());
        m.add_view(&pipes, 0, &s, (r0, r1), 0, 0).unwrap();
        m.upload(&mut f.frame(), &pipes, std::slice::from_ref(&s));
        let g = m.run_and_read(&mut f, &pipes, 0).unwrap();
        assert_same(&g, &cpu(&s, r0, r1, cols), &format!("view {k}"));
    }
    let nonempty = cpu(&s, a, b + 1e-9, 1000)
        .iter()
        .filter(|c| c.count > 0)
        .count();
    assert!(nonempty > 900);
}

#[test]
fn incremental_appends_and_cap_rebuilds_stay_exact() {
    let gpu = gpu();
    let pipes = Pipelines::new(&gpu.device, SCENE_FORMAT);
    let full = messy_series(200_000, 5, usize::MAX);
    let all: Vec<(f64, f32)> = full.iter().collect();
    // Capped: the mirror must follow drop-oldest (and grow past its first capacity).
    for cap in [usize::MAX, 90_000] {
        let mut s = Series::new("m", cap);
        let mut m = Mirrors::new();
        m.set_keep_columns(true);
        let mut fed = 0usize;
        for (k, step) in [1usize, 15, 16, 255, 4097, 30_000, 65_536, usize::MAX]
            .into_iter()
            .enumerate()
        {
            // Every upload strategy in turn: the staged ones record their copies into the
            // frame's encoder ahead of the builds and the M4 pass.
            let mut f = OwnedFrame::new(&gpu, Strategy::ALL[k % Strategy::ALL.len()]);
            let end = fed.saturating_add(step).min(all.len());
            for &(t, v) in &all[fed..end] {
                s.push(t, v);
            }
            fed = end;
            m.sync(&mut f.frame(), &pipes, 0, &s).unwrap();
            let (a, b) = s.time_range_rel().unwrap();
            m.begin_views(700, &ViewUniform::default());
            m.add_view(&pipes, 0, &s, (a, b + 1e-9), 0, 0).unwrap();
            m.upload(&mut f.frame(), &pipes, std::slice::from_ref(&s));
            let g = m.run_and_read(&mut f, &pipes, 0).unwrap();
            assert_same(
                &g,
                &cpu(&s, a, b + 1e-9, 700),
                &format!("cap {cap} fed {fed}"),
            );
        }
        assert_eq!(fed, all.len());
    }
}

#[test]
fn degenerate_series_decimate_sanely() {
    let gpu = gpu();
    let empty = Series::new("e", 10);
    let g = decimate_gpu(&gpu, &empty, 0.0, 1.0, 8).unwrap();
    assert!(
        gpu.error_messages().is_empty(),
        "{:?}",
        gpu.error_messages()
    );
    assert_eq!(g, vec![Column::EMPTY; 8]);
    let mut one = Series::new("one", 10);
    one.push(5.0, 2.5);
    let g = decimate_gpu(&gpu, &one, -1.0, 1.0, 4).unwrap();
    assert_same(&g, &cpu(&one, -1.0, 1.0, 4), "one point");
    assert_eq!(g.iter().map(|c| c.count).sum::<u32>(), 1);
    let mut flat = Series::new("flat", 1000);
    let mut huge = Series::new("huge", 1000);
    for k in 0..500 {
        flat.push(k as f64, 7.0);
        huge.push(k as f64, if k % 2 == 0 { f32::MAX } else { -f32::MAX });
    }
    for s in [&flat, &huge] {
        let g = decimate_gpu(&gpu, s, 0.0, 500.0, 37).unwrap();
        assert_same(&g, &cpu(s, 0.0, 500.0, 37), &s.name);
    }
}

const W: u32 = 256;
const H: u32 = 96;

fn render(gpu: &Gpu, draw: impl FnOnce(&mut wgpu::RenderPass<'_>)) -> Vec<u8> {
    render_sized(gpu, (W, H), wgpu::Color::BLACK, draw)
}

/// Draws into a `size` image cleared to `clear`, with the depth attachment the draws need
/// (cleared to 1.0, as the deck's scene pass is), and reads it back.
fn render_sized(
    gpu: &Gpu,
    size: (u32, u32),
    clear: wgpu::Color,
    draw: impl FnOnce(&mut wgpu::RenderPass<'_>),
) -> Vec<u8> {
    let (w, h) = size;
    let tex = gpu.device.create_texture(&wgpu::TextureDescriptor {
        label: Some("test:timeseries:target"),
        size: wgpu::Extent3d {
            width: w,
            height: h,
            depth_or_array_layers: 1,
        },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format: SCENE_FORMAT,
        usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
        view_formats: &[],
    });
    let view = tex.create_view(&Default::default());
    // The draws keep the series' order by depth: the pass has a depth attachment cleared to 1.0,
    // as the deck's scene pass does.
    let depth = gpu.device.create_texture(&wgpu::TextureDescriptor {
        label: Some("test:timeseries:depth"),
        size: wgpu::Extent3d {
            width: w,
            height: h,
            depth_or_array_layers: 1,
        },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format: DEPTH_FORMAT,
        usage: wgpu::TextureUsages::RENDER_ATTACHMENT,
        view_formats: &[],
    });
    let depth_view = depth.create_view(&Default::default());
    let mut enc = gpu.device.create_command_encoder(&Default::default());
    {
        let mut pass = enc.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("test:timeseries:pass"),
            color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                view: &view,
                depth_slice: None,
                resolve_target: None,
                ops: wgpu::Operations {
                    load: wgpu::LoadOp::Clear(clear),
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
        draw(&mut pass);
    }
    gpu.queue.submit([enc.finish()]);
    vizdeck::gpu::readback::read_texture_rgba(&gpu.device, &gpu.queue, &tex).unwrap()
}

/// Draws `s` over `[r0, r1)` both ways and returns (decimated image, full-resolution image).
fn both(
    gpu: &Gpu,
    pipes: &Pipelines,
    s: &Series,
    r0: f64,
    r1: f64,
    lo: f64,
    hi: f64,
) -> (Vec<u8>, Vec<u8>) {
    let vu = ViewUniform::new(lo, hi, W, H, u32::MAX);
    let mut m = Mirrors::new();
    let mut f = OwnedFrame::new(gpu, Strategy::WriteBuffer);
    m.sync(&mut f.frame(), pipes, 0, s).unwrap();
    m.begin_views(W, &vu);
    m.add_view(pipes, 0, s, (r0, r1), vu.color, 0).unwrap();
    m.upload(&mut f.frame(), pipes, std::slice::from_ref(s));
    m.run(&mut f, pipes);
    let a = render(gpu, |p| m.paint(pipes, p));
    let (spans, conns) = reference_segments(s, r0, r1, W as usize);
    let h = HostDraw::new(&mut f.frame(), pipes, &vu, 0, &spans, &conns);
    f.submit();
    let b = render(gpu, |p| h.paint(pipes, p));
    (a, b)
}

fn differing(a: &[u8], b: &[u8]) -> usize {
    assert_eq!(a.len(), b.len());
    a.chunks_exact(4)
        .zip(b.chunks_exact(4))
        .filter(|(x, y)| x != y)
        .count()
}

fn lit(img: &[u8]) -> usize {
    img.chunks_exact(4).filter(|p| p[0] > 0).count()
}

fn lit_columns(img: &[u8]) -> Vec<u32> {
    (0..W)
        .filter(|&x| (0..H).any(|y| img[((y * W + x) * 4) as usize] > 0))
        .collect()
}

#[test]
fn decimated_drawing_is_pixel_identical_to_every_point() {
    let gpu = gpu();
    let pipes = Pipelines::new(&gpu.device, SCENE_FORMAT);
    // A walk with NaN runs at least a few columns long at every zoom below.
    let mut s = Series::new("walk", usize::MAX);
    let mut rng = Rng(3);
    let mut v = 0.0f32;
    for k in 0..200_000u64 {
        v += (rng.unit() as f32 - 0.5) * 0.3;
        let gap = (k / 10_000) % 5 == 2 && k % 10_000 < 4000;
        s.push(k as f64 * 1e-3, if gap { f32::NAN } else { v });
    }
    let (a, b) = s.time_range_rel().unwrap();
    let zooms = [
        (a, b + 1e-3),
        (15.0, 40.0),
        (23.9, 24.4),
        (23.95, 24.2),
        (80.0, 84.0),
        (80.0, 80.3),
    ];
    for (k, &(r0, r1)) in zooms.iter().enumerate() {
        let (lo, hi) = s.value_range_rel(r0, r1).unwrap();
        let (lo, hi) = (lo as f64 - 0.5, hi as f64 + 0.5);
        let (dec, full) = both(&gpu, &pipes, &s, r0, r1, lo, hi);
        assert!(lit(&full) > W as usize / 2, "zoom {k}: something is drawn");
        let diff = dec
            .chunks_exact(4)
            .zip(full.chunks_exact(4))
            .filter(|(x, y)| x != y)
            .count();
        assert_eq!(diff, 0, "zoom {k} [{r0}, {r1}): {diff} pixels differ");
    }
    // The NaN run 20.0..24.0 s is a visible gap at zoom 1: columns of 21.0..23.9 s are dark.
    let (dec, _) = both(&gpu, &pipes, &s, 20.0, 40.0, -100.0, 100.0);
    let cols = lit_columns(&dec);
    let px = |t: f64| ((t - 20.0) / 20.0 * W as f64) as u32;
    assert!(cols.iter().all(|&c| !(px(20.1)..px(23.9)).contains(&c)));
    assert!(cols.contains(&px(19.99_f64.max(20.0))) || cols.contains(&px(24.1)));
}

#[test]
fn epoch_nanoseconds_render_evenly_spaced() {
    let gpu = gpu();
    let pipes = Pipelines::new(&gpu.device, SCENE_FORMAT);
    let base: i64 = 1_700_000_000_123_456_789;
    let mut s = Series::new("ns", usize::MAX);
    for k in 0..1000i64 {
        s.push_ns(base + k, (k % 3) as f32);
    }
    // Absolute f64 seconds cannot tell these apart; relative times can.
    assert_eq!((base as f64 * 1e-9), ((base + 9) as f64 * 1e-9));
    // Zoom to ten samples: 500..509 ns after the origin, 10 columns per nanosecond.
    let (r0, r1) = (499.75e-9, 509.75e-9);
    let (dec, full) = both(&gpu, &pipes, &s, r0, r1, -1.0, 3.0);
    assert_eq!(differing(&dec, &full), 0);
    let cols = decimate_gpu(&gpu, &s, r0, r1, 100).unwrap();
    let occupied: Vec<usize> = (0..100).filter(|&i| cols[i].count > 0).collect();
    assert_eq!(occupied.len(), 10, "{occupied:?}");
    let gaps: Vec<usize> = occupied.windows(2).map(|w| w[1] - w[0]).collect();
    assert!(gaps.iter().all(|&g| g == 10), "{occupied:?}");
    for (j, &i) in occupied.iter().enumerate() {
        assert_eq!(cols[i].count, 1);
        assert_eq!(cols[i].first, ((500 + j) % 3) as f32);
    }
}

#[test]
fn flat_one_point_and_huge_values_draw_sanely() {
    let gpu = gpu();
    let pipes = Pipelines::new(&gpu.device, SCENE_FORMAT);
    let mut flat = Series::new("flat", 100);
    for k in 0..50 {
        flat.push(k as f64, 1.0);
    }
    let (dec, full) = both(&gpu, &pipes, &flat, 0.0, 50.0, 0.0, 2.0);
    assert_eq!(differing(&dec, &full), 0);
    // One row: the row of value 1.0 at mid-height, the 50 sample columns and the lines between.
    let rows: Vec<u32> = (0..H)
        .filter(|&y| (0..W).any(|x| dec[((y * W + x) * 4) as usize] > 0))
        .collect();
    assert_eq!(rows, vec![H / 2]);
    // Samples sit in columns 0, 5, …, 250 (k · 256 / 50); the line lights every column between.
    assert_eq!(lit(&dec), 251);
    let mut one = Series::new("one", 100);
    one.push(3.0, 0.0);
    let (dec, full) = both(&gpu, &pipes, &one, 0.0, 10.0, -1.0, 1.0);
    assert_eq!(differing(&dec, &full), 0);
    assert_eq!(lit(&dec), 1);
    let mut huge = Series::new("huge", 100);
    for k in 0..64 {
        let v = if k % 2 == 0 { f32::MAX } else { -f32::MAX };
        huge.push(k as f64, if k == 10 { f32::INFINITY } else { v });
    }
    let (dec, full) = both(&gpu, &pipes, &huge, 0.0, 64.0, -3.4e38, 3.4e38);
    assert_eq!(differing(&dec, &full), 0);
    assert!(lit(&dec) > 64);
    let empty = Series::new("e", 10);
    let (dec, full) = both(&gpu, &pipes, &empty, 0.0, 1.0, -1.0, 1.0);
    assert_eq!(lit(&dec), 0);
    assert_eq!(lit(&full), 0);
    assert!(
        gpu.error_messages().is_empty(),
        "{:?}",
        gpu.error_messages()
    );
}

/// The series drawn alone, each from every one of its samples (full resolution, [`HostDraw`] of
/// [`reference_segments`]), laid over `background` in drawing order: what drawing the series one
/// after the other gives, worked out apart from the batch, its table and its depth test.
fn composite(
    gpu: &Gpu,
    pipes: &Pipelines,
    size: (u32, u32),
    background: wgpu::Color,
    series: &[(&Series, f64, f64, ViewUniform)],
) -> Vec<u8> {
    let mut out = render_sized(gpu, size, background, |_| {});
    for &(s, r0, r1, vu) in series {
        let (spans, conns) = reference_segments(s, r0, r1, size.0 as usize);
        let mut f = OwnedFrame::new(gpu, Strategy::WriteBuffer);
        let h = HostDraw::new(&mut f.frame(), pipes, &vu, 0, &spans, &conns);
        f.submit();
        let alone = render_sized(gpu, size, wgpu::Color::BLACK, |p| h.paint(pipes, p));
        for (o, a) in out.chunks_exact_mut(4).zip(alone.chunks_exact(4)) {
            if a[..3] != [0, 0, 0] {
                o.copy_from_slice(a);
            }
        }
    }
    out
}

/// A distinct opaque colour per series (never black).
fn colour(i: usize) -> u32 {
    let x = (i as u32 + 1).wrapping_mul(0x9E37_79B9);
    (x & 0x00ff_ffff | 0x0040_4040) | 0xff00_0000
}

/// `n` series: random walks of different lengths and densities, NaN runs, a few series equal to
/// the one before (so the drawing order decides their pixels), a few starting late.
fn many_series(n: usize) -> Vec<Series> {
    let mut rng = Rng(77);
    let mut out: Vec<Series> = Vec::new();
    for i in 0..n {
        let mut s = Series::new(format!("s{i}"), usize::MAX);
        if i % 9 == 5 {
            let prev: Vec<(f64, f32)> = out[i - 1].iter().collect();
            for (t, v) in prev {
                s.push(t, v);
            }
        } else {
            let len = 200 + (rng.unit() * 6000.0) as usize;
            let start = if i % 7 == 3 { 4.0 } else { 0.0 };
            let step = 10.0 / len as f64;
            let mut v = (rng.unit() as f32 - 0.5) * 4.0;
            let mut nan = 0;
            for k in 0..len {
                v += (rng.unit() as f32 - 0.5) * 0.4;
                if nan == 0 && rng.unit() < 0.002 {
                    nan = 1 + (rng.unit() * 80.0) as usize;
                }
                let value = if nan > 0 {
                    nan -= 1;
                    f32::NAN
                } else {
                    v
                };
                s.push(start + k as f64 * step, value);
            }
        }
        out.push(s);
    }
    out
}

/// 300 series in one batch (one M4 dispatch per page, few pages): every series' GPU M4 columns
/// equal its own CPU M4, bit for bit.
#[test]
fn many_series_in_one_batch_equal_their_cpu_m4() {
    let gpu = gpu();
    let pipes = Pipelines::new(&gpu.device, SCENE_FORMAT);
    let series = many_series(300);
    let mut m = Mirrors::new();
    m.set_keep_columns(true);
    let mut f = OwnedFrame::new(&gpu, Strategy::WriteBuffer);
    for (i, s) in series.iter().enumerate() {
        m.sync(&mut f.frame(), &pipes, i, s).unwrap();
    }
    let cols = 700u32;
    let (r0, r1) = (-0.5, 10.5);
    m.begin_views(cols, &ViewUniform::new(-5.0, 5.0, cols, 200, 0));
    for (i, s) in series.iter().enumerate() {
        m.add_view(&pipes, i, s, (r0, r1), colour(i), i as u32)
            .unwrap();
    }
    m.upload(&mut f.frame(), &pipes, &series);
    m.run(&mut f, &pipes);
    assert_eq!(m.views(), 300);
    assert!(m.pages() <= 2, "{} pages", m.pages());
    for (i, s) in series.iter().enumerate() {
        let g = m.read_columns(&gpu, i).unwrap();
        assert_same(&g, &cpu(s, r0, r1, cols as usize), &format!("series {i}"));
    }
    assert!(
        gpu.error_messages().is_empty(),
        "{:?}",
        gpu.error_messages()
    );
}

/// The connector draw lights exactly the pixels of the line rule on lavapipe, so the CPU
/// adapter's M4 pass rasters the short connectors itself ([`Raster::Compute`]).
#[test]
fn connector_draw_follows_the_line_rule_here() {
    let gpu = gpu();
    let pipes = Pipelines::new(&gpu.device, SCENE_FORMAT);
    assert!(raster::lines_follow_rule(&gpu, &pipes));
    if gpu.summary.device_type == "Cpu" {
        assert_eq!(Pipelines::for_gpu(&gpu).raster, Raster::Compute);
    }
}

/// Many series drawn in one batch, each in its own colour, hidden ones left out, one drawn from
/// the CPU (its M4 columns, as for an out-of-order series) between them: the image is the
/// series' own full-resolution drawings laid over each other in order, pixel for pixel, whether
/// the records are drawn, compacted or not, or rastered by the M4 pass.
#[test]
fn batched_series_keep_their_colours_order_and_visibility() {
    let gpu = gpu();
    let size = (1024u32, 240u32);
    let series = many_series(90);
    let (r0, r1) = (-0.2, 10.2);
    let (lo, hi) = (-9.0, 9.0);
    let hidden = |i: usize| i % 11 == 4;
    let on_cpu = 37;
    let view = |i: usize| ViewUniform::new(lo, hi, size.0, size.1, colour(i));
    for (raster, compact) in [
        (Raster::Draws, true),
        (Raster::Draws, false),
        (Raster::ComputeSpans, true),
        (Raster::Compute, true),
    ] {
        let mut pipes = Pipelines::new(&gpu.device, SCENE_FORMAT);
        pipes.raster = raster;
        pipes.compact = compact;
        let mut m = Mirrors::new();
        let mut f = OwnedFrame::new(&gpu, Strategy::WriteBuffer);
        let mut host = Vec::new();
        m.begin_views(size.0, &view(0));
        for (i, s) in series.iter().enumerate() {
            m.sync(&mut f.frame(), &pipes, i, s).unwrap();
            if hidden(i) {
                continue;
            }
            if i == on_cpu {
                let (spans, conns) = column_segments(&cpu(s, r0, r1, size.0 as usize));
                host.push(HostDraw::new(
                    &mut f.frame(),
                    &pipes,
                    &view(i),
                    i as u32,
                    &spans,
                    &conns,
                ));
            } else {
                m.add_view(&pipes, i, s, (r0, r1), colour(i), i as u32)
                    .unwrap();
            }
        }
        m.upload(&mut f.frame(), &pipes, &series);
        // Enough columns of series for the raster passes to take them.
        assert!(m.views() as u64 * size.0 as u64 >= RASTER_MIN_RECORDS);
        m.run(&mut f, &pipes);
        let got = render_sized(&gpu, size, wgpu::Color::BLACK, |p| {
            m.paint(&pipes, p);
            for h in &host {
                h.paint(&pipes, p);
            }
        });
        let shown: Vec<(&Series, f64, f64, ViewUniform)> = series
            .iter()
            .enumerate()
            .filter(|&(i, _)| !hidden(i))
            .map(|(i, s)| (s, r0, r1, view(i)))
            .collect();
        let want = composite(&gpu, &pipes, size, wgpu::Color::BLACK, &shown);
        let diff = differing(&got, &want);
        assert_eq!(
            diff, 0,
            "{raster:?} compact {compact}: {diff} pixels differ"
        );
        // Something of every shown series is on top somewhere, no hidden one is.
        let on_top = |i: usize| {
            let c = colour(i).to_le_bytes();
            got.chunks_exact(4).any(|p| p[..3] == c[..3])
        };
        assert!((0..series.len()).filter(|&i| hidden(i)).all(|i| !on_top(i)));
        let shown_on_top = (0..series.len())
            .filter(|&i| !hidden(i) && on_top(i))
            .count();
        assert!(shown_on_top > 60, "{shown_on_top} series visible");
    }
    assert!(
        gpu.error_messages().is_empty(),
        "{:?}",
        gpu.error_messages()
    );
}

/// Headless frames of the scene itself with 300 synthetic series, a few hidden: the last frame's
/// image is every shown series' own full-resolution drawing in its palette colour, laid over
/// the others in order, pixel for pixel (the scene draws them all in one batch, rastered by the
/// M4 pass on a CPU adapter).
#[test]
fn scene_with_300_series_draws_each_one_exactly() {
    let gpu = gpu();
    let sel = SeriesSelection::Synthetic {
        series: 300,
        rate_hz: 400.0,
        seed: 5,
        kind: SynthKind::Walk,
    };
    let src = SeriesSource::open(&sel, Pacing::Driven).unwrap();
    let mut scene = TimeSeries::new(&gpu, src);
    let size = (640u32, 360u32);
    let hidden = |i: usize| i % 13 == 2;
    let target = gpu.device.create_texture(&wgpu::TextureDescriptor {
        label: Some("test:timeseries:scene"),
        size: wgpu::Extent3d {
            width: size.0,
            height: size.1,
            depth_or_array_layers: 1,
        },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format: SCENE_FORMAT,
        usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
        view_formats: &[],
    });
    let view = target.create_view(&Default::default());
    let format = scene
        .depth_format()
        .expect("the scene asks for a depth attachment");
    let depth = gpu.device.create_texture(&wgpu::TextureDescriptor {
        label: Some("test:timeseries:scene:depth"),
        size: target.size(),
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format,
        usage: wgpu::TextureUsages::RENDER_ATTACHMENT,
        view_formats: &[],
    });
    let depth_view = depth.create_view(&Default::default());
    for frame in 0..40u64 {
        let fc = FrameCtx {
            frame,
            steps: 1,
            dt: 1.0 / 60.0,
            alpha: 0.0,
            advanced_s: 1.0 / 60.0,
            elapsed_s: 1.0 / 60.0,
            size,
        };
        scene.ingest(&fc);
        for i in (0..300).filter(|&i| hidden(i)) {
            scene.set_visible(i, false);
        }
        let mut f = OwnedFrame::new(&gpu, Strategy::WriteBuffer);
        f.set_index(frame);
        scene.prepare(&mut f.frame(), &fc);
        let enc = f.encoder();
        {
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("test:timeseries:scene:compute"),
                timestamp_writes: None,
            });
            scene.compute(&mut pass, &fc);
        }
        {
            let mut pass = enc.begin_render_pass(&wgpu::RenderPassDescriptor {
                label: Some("test:timeseries:scene:render"),
                color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                    view: &view,
                    depth_slice: None,
                    resolve_target: None,
                    ops: wgpu::Operations {
                        load: wgpu::LoadOp::Clear(scene.background()),
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
            scene.paint(&mut pass, &fc);
        }
        f.submit();
    }
    let got = vizdeck::gpu::readback::read_texture_rgba(&gpu.device, &gpu.queue, &target).unwrap();
    let store = scene.store();
    assert_eq!(store.series().len(), 300);
    let m = scene.metrics();
    assert_eq!(
        m["gpu_series_batched"],
        300 - (0..300).filter(|&i| hidden(i)).count()
    );
    let v = scene.view().expect("a view");
    let origin = store.series()[0].origin().unwrap();
    let pipes = Pipelines::new(&gpu.device, SCENE_FORMAT);
    let shown: Vec<(&Series, f64, f64, ViewUniform)> = store
        .series()
        .iter()
        .enumerate()
        .filter(|&(i, _)| !hidden(i))
        .map(|(i, s)| {
            let off = s.origin().unwrap() - origin;
            let vu = ViewUniform::new(v.lo, v.hi, size.0, size.1, series_color(i));
            (s, v.t0 - off, v.t1 - off, vu)
        })
        .collect();
    let want = composite(&gpu, &pipes, size, scene.background(), &shown);
    let bg = render_sized(&gpu, (1, 1), scene.background(), |_| {});
    let lit = got.chunks_exact(4).filter(|p| *p != &bg[..]).count();
    assert!(lit > 5000, "{lit} pixels drawn");
    assert_eq!(
        differing(&got, &want),
        0,
        "{} pixels differ",
        differing(&got, &want)
    );
    assert!(
        gpu.error_messages().is_empty(),
        "{:?}",
        gpu.error_messages()
    );
}
