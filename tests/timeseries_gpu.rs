//! GPU M4 from the min/max pyramid vs the CPU reference (exact), and decimated vs
//! full-resolution drawing (pixel-identical images) on lavapipe.

#![allow(clippy::disallowed_methods)] // tests and benches drive the GPU with their own submits

mod common;
use common::gpu;

use vizdeck::gpu::Gpu;
use vizdeck::gpu::frame::OwnedFrame;
use vizdeck::gpu::upload::Strategy;
use vizdeck::scene::SCENE_FORMAT;
use vizdeck::scene::timeseries::gpu::{
    HostDraw, Pipelines, SeriesMirror, ViewUniform, decimate_gpu, reference_segments,
};
use vizdeck::series::decimate::{Column, decimate_m4_rel};
use vizdeck::series::store::Series;

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

fn cpu(s: &Series, r0: f64, r1: f64, columns: usize) -> Vec<Column> {
    let mut out = Vec::new();
    decimate_m4_rel(s, r0, r1, columns, &mut out);
    out
}

fn assert_same(gpu_cols: &[Column], cpu_cols: &[Column], what: &str) {
    assert_eq!(gpu_cols.len(), cpu_cols.len(), "{what}: column count");
    for (i, (g, c)) in gpu_cols.iter().zip(cpu_cols).enumerate() {
        // Bitwise on everything but ±0 (min/max of 0.0 and -0.0 may pick either).
        let same = g.count == c.count
            && g.min == c.min
            && g.max == c.max
            && g.first.to_bits() == c.first.to_bits()
            && g.last.to_bits() == c.last.to_bits();
        assert!(same, "{what}: column {i}: gpu {g:?} cpu {c:?}");
    }
}

#[test]
fn gpu_m4_equals_cpu_m4_at_many_zooms() {
    let gpu = gpu();
    let s = messy_series(300_000, 11, usize::MAX);
    let (a, b) = s.time_range_rel().unwrap();
    let pipes = Pipelines::new(&gpu.device, SCENE_FORMAT);
    let mut m = SeriesMirror::new(&gpu.device, &pipes);
    let mut f = OwnedFrame::new(&gpu, Strategy::WriteBuffer);
    m.sync(&mut f.frame(), &pipes, &s).unwrap();
    let views = [
        (a, b + 1e-9, 1000usize),
        (a - 5.0, b + 5.0, 333),
        ((a + b) / 2.0, (a + b) / 2.0 + 0.5, 640),
        ((a + b) / 3.0, (a + b) / 3.0 + 0.01, 97),
        (a + 1.234, a + 1.234 + 1e-4, 16),
        (b + 1.0, b + 2.0, 50),
    ];
    for (k, &(r0, r1, cols)) in views.iter().enumerate() {
        m.set_view(
            &mut f.frame(),
            &pipes,
            &s,
            r0,
            r1,
            cols as u32,
            &ViewUniform::default(),
        )
        .unwrap();
        let g = m.run_and_read(&mut f, &pipes).unwrap();
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
        let mut m = SeriesMirror::new(&gpu.device, &pipes);
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
            m.sync(&mut f.frame(), &pipes, &s).unwrap();
            let (a, b) = s.time_range_rel().unwrap();
            m.set_view(
                &mut f.frame(),
                &pipes,
                &s,
                a,
                b + 1e-9,
                700,
                &ViewUniform::default(),
            )
            .unwrap();
            let g = m.run_and_read(&mut f, &pipes).unwrap();
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
    let tex = gpu.device.create_texture(&wgpu::TextureDescriptor {
        label: Some("test:timeseries:target"),
        size: wgpu::Extent3d {
            width: W,
            height: H,
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
    let mut enc = gpu.device.create_command_encoder(&Default::default());
    {
        let mut pass = enc.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("test:timeseries:pass"),
            color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                view: &view,
                depth_slice: None,
                resolve_target: None,
                ops: wgpu::Operations {
                    load: wgpu::LoadOp::Clear(wgpu::Color::BLACK),
                    store: wgpu::StoreOp::Store,
                },
            })],
            depth_stencil_attachment: None,
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
    let mut m = SeriesMirror::new(&gpu.device, pipes);
    let mut f = OwnedFrame::new(gpu, Strategy::WriteBuffer);
    m.sync(&mut f.frame(), pipes, s).unwrap();
    m.set_view(&mut f.frame(), pipes, s, r0, r1, W, &vu)
        .unwrap();
    m.run_and_read(&mut f, pipes).unwrap();
    let a = render(gpu, |p| m.paint(pipes, p));
    let (spans, conns) = reference_segments(s, r0, r1, W as usize);
    let h = HostDraw::new(&mut f.frame(), pipes, &vu, &spans, &conns);
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
