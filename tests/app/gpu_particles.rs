//! Particle simulation on the GPU (lavapipe in CI) against CPU references: a step of each mode,
//! grid neighbour sums equal to brute force's, the multi-level scan, edge counts (0, 1, 63, 65,
//! 1,000,001), the step cap after a stall, the statistics reduction, reproducibility and
//! run-time reconfiguration.

#![allow(clippy::disallowed_methods)] // tests and benches drive the GPU with their own submits

use crate::common;
use common::gpu;
use common::particles::{DT, prepare_and_compute, step_ctx};

use vizdeck::gpu::Gpu;
use vizdeck::gpu::readback::{Consumer, ReadbackRing};
use vizdeck::gpu::upload::Strategy;
use vizdeck::scene::particles::cpu::{Stats, histogram_bin};
use vizdeck::scene::particles::sim::{gpu_exclusive_scan, scan_levels};
use vizdeck::scene::particles::{
    ColorBy, Mode, Particle, Particles, StepParams, StepRate, WORKGROUP, clamp_count,
    cpu_neighbours, cpu_step, dispatch_size, initial_particles,
};
use vizdeck::scene::{FrameCtx, SCENE_FORMAT, Scene};

/// Runs one frame of `steps` fixed steps through the scene's own prepare/compute/paint
/// (paint skipped when `draw` is false) and returns the step parameters it used.
fn run_frame(
    gpu: &Gpu,
    scene: &mut Particles,
    frame: u64,
    steps: u32,
    draw: bool,
) -> Vec<StepParams> {
    // One step per call, whatever the adapter's default rate (tests/particle_rate.rs covers 60 Hz).
    scene.set_step_rate(StepRate::Hz120);
    for _ in 0..steps {
        scene.fixed_update(DT);
    }
    let params = scene.frame_params().to_vec();
    let ctx = step_ctx(frame, steps);
    let target = gpu.device.create_texture(&wgpu::TextureDescriptor {
        label: Some("test:target"),
        size: wgpu::Extent3d {
            width: 64,
            height: 48,
            depth_or_array_layers: 1,
        },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format: SCENE_FORMAT,
        usage: wgpu::TextureUsages::RENDER_ATTACHMENT,
        view_formats: &[],
    });
    let view = target.create_view(&Default::default());
    let mut enc = prepare_and_compute(gpu, scene, &ctx, "test");
    if draw {
        let mut pass = enc.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("test:render"),
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
        scene.paint(&mut pass, &ctx);
    }
    // As the deck does: the scene's statistics copy goes through a readback ring and comes back
    // through `readback_arrived` (here at once: the frame is waited for).
    let mut ring = ReadbackRing::new("test:ring", 4);
    scene.record_readbacks(&gpu.device, &mut enc, &mut ring, Consumer::Scene(1));
    gpu.queue.submit([enc.finish()]);
    ring.after_submit();
    gpu.wait_idle();
    ring.wait(&gpu.device, |a| scene.readback_arrived(&a));
    params
}

fn assert_close(a: f32, b: f32, what: &str) {
    let tol = 1e-5 * a.abs().max(b.abs()).max(1.0);
    assert!((a - b).abs() <= tol, "{what}: gpu {a} vs cpu {b}");
}

fn assert_states_close(got: &[Particle], want: &[Particle], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    for (i, (g, e)) in got.iter().zip(want).enumerate() {
        for c in 0..4 {
            assert_close(g.pos[c], e.pos[c], &format!("{what} particle {i} pos[{c}]"));
            assert_close(g.vel[c], e.vel[c], &format!("{what} particle {i} vel[{c}]"));
        }
    }
}

fn no_errors(gpu: &Gpu, what: &str) {
    let e = gpu.error_messages();
    assert!(e.is_empty(), "{what}: {e:?}");
}

/// Free mode with every force on (gravity, attractors, mouse, curl noise, drag), continuous
/// emission, a burst and short lifetimes (some particles die), over frames of 1, 2, 3 steps (the
/// ping-pong direction changes with odd/even counts).
#[test]
fn free_step_matches_cpu_reference() {
    let gpu = gpu();
    let n = 300;
    let mut scene = Particles::new(&gpu, n, 7);
    assert_eq!(
        scene.read_state(&gpu),
        initial_particles(n, 7),
        "seeded upload"
    );
    let mut c = *scene.controls();
    c.gravity = 0.5;
    c.curl_strength = 0.7;
    c.emit_rate = 2400.0; // 20 per step
    c.lifetime = 0.03; // emitted particles die after 3–4 steps
    c.burst = 50;
    scene.set_controls(c);
    scene.set_mouse(Some((glam::Vec3::new(0.3, 0.2, -0.1), -0.2)));
    let consts = *scene.sim().consts();
    let mut expected = initial_particles(n, 7);
    let mut emitted = 0u32;
    for (frame, steps) in [(0u64, 1u32), (1, 2), (2, 3), (3, 2)] {
        if frame == 1 {
            scene.burst();
        }
        let params = run_frame(&gpu, &mut scene, frame, steps, true);
        assert_eq!(params.len(), steps as usize);
        for p in &params {
            emitted += p.emit_count;
            expected = cpu_step(&consts, p, &expected, &[]);
        }
        let got = scene.read_state(&gpu);
        assert_states_close(&got, &expected, &format!("frame {frame}"));
    }
    assert!(emitted >= 20 * 8 + 50, "emitted {emitted}");
    let dead = expected.iter().filter(|p| !p.alive()).count();
    assert!(dead > 0, "some emitted particles died");
    assert_ne!(expected[299].pos, initial_particles(n, 7)[299].pos);
    no_errors(&gpu, "free");
}

/// Grid and brute modes: the GPU neighbour sums equal a direct CPU search (counts exactly; each
/// fixed-point term may differ by one unit where GPU and CPU round a float an ulp apart), and
/// the step from the GPU's own input state matches the CPU step within 1e-5.
#[test]
fn interaction_steps_match_cpu_reference() {
    let gpu = gpu();
    for mode in [Mode::Grid, Mode::Brute] {
        let n = 400;
        let mut scene = Particles::with_mode(&gpu, n, mode, 11);
        let consts = *scene.sim().consts();
        let mut total_neighbours = 0u64;
        for frame in 0..3u64 {
            let before = scene.read_state(&gpu);
            let params = run_frame(&gpu, &mut scene, frame, 1, true);
            let sums = scene.sim().read_sums(&gpu);
            let want = cpu_neighbours(&consts, &before);
            assert_eq!(sums.len(), want.len());
            for (i, (g, w)) in sums.iter().zip(&want).enumerate() {
                assert_eq!(
                    g.coh[3], w.coh[3],
                    "{mode:?} frame {frame} particle {i} count"
                );
                let slack = w.coh[3].max(1);
                for k in 0..3 {
                    for (a, b, what) in [
                        (g.coh[k], w.coh[k], "coh"),
                        (g.ali[k], w.ali[k], "ali"),
                        (g.sep[k], w.sep[k], "sep"),
                    ] {
                        assert!(
                            (a - b).abs() <= slack,
                            "{mode:?} particle {i} {what}[{k}]: {a} vs {b}"
                        );
                    }
                }
                total_neighbours += g.coh[3] as u64;
            }
            let expected = cpu_step(&consts, &params[0], &before, &sums);
            assert_states_close(
                &scene.read_state(&gpu),
                &expected,
                &format!("{mode:?} frame {frame}"),
            );
        }
        assert!(
            total_neighbours > 3 * n as u64,
            "{mode:?}: too few neighbours to test ({total_neighbours})"
        );
        no_errors(&gpu, &format!("{mode:?}"));
    }
}

/// The grid finds exactly the neighbour sets brute force finds: same seed, same steps ⇒ the
/// neighbour sums (integers) and the states are bit-identical, over a 3-level scan.
#[test]
fn grid_neighbours_equal_brute_force() {
    let gpu = gpu();
    let n = 2000;
    let mut grid = Particles::with_mode(&gpu, n, Mode::Grid, 5);
    let mut brute = Particles::with_mode(&gpu, n, Mode::Brute, 5);
    let cells = grid.sim().consts().dims[3];
    assert!(scan_levels(cells + 1).len() >= 3, "{cells} cells");
    for frame in 0..3u64 {
        run_frame(&gpu, &mut grid, frame, 2, false);
        run_frame(&gpu, &mut brute, frame, 2, false);
        let (gs, bs) = (grid.sim().read_sums(&gpu), brute.sim().read_sums(&gpu));
        assert_eq!(gs.len(), n as usize);
        let nonzero = gs.iter().filter(|s| s.coh[3] > 0).count();
        assert!(
            nonzero > n as usize / 2,
            "only {nonzero} particles have neighbours"
        );
        for (i, (g, b)) in gs.iter().zip(&bs).enumerate() {
            assert_eq!(g, b, "frame {frame} particle {i}");
        }
        assert_eq!(
            grid.read_state(&gpu),
            brute.read_state(&gpu),
            "frame {frame}"
        );
    }
    // The cell starts are the exclusive scan of the cell occupancy of the last step's input.
    let starts = grid.sim().read_cell_starts(&gpu);
    assert_eq!(starts.len(), cells as usize + 1);
    assert_eq!(*starts.last().unwrap(), n);
    assert!(starts.windows(2).all(|w| w[0] <= w[1]));
    no_errors(&gpu, "grid vs brute");
}

#[test]
fn multi_level_scan_matches_cpu() {
    let gpu = gpu();
    let mut rng = vizdeck::scene::particles::SplitMix64(3);
    for len in [1usize, 511, 512, 513, 300_000] {
        let values: Vec<u32> = (0..len).map(|_| (rng.next_u64() % 9) as u32).collect();
        let mut want = Vec::with_capacity(len);
        let mut acc = 0u32;
        for v in &values {
            want.push(acc);
            acc += v;
        }
        assert_eq!(gpu_exclusive_scan(&gpu, &values), want, "len {len}");
    }
    assert_eq!(scan_levels(300_000), vec![300_000, 586, 2, 1]);
    no_errors(&gpu, "scan");
}

#[test]
fn edge_counts_step_and_render_without_errors() {
    let gpu = gpu();
    for mode in [Mode::Free, Mode::Grid, Mode::Brute] {
        for n in [0u32, 1, 63, 65] {
            let mut scene = Particles::with_mode(&gpu, n, mode, 3);
            let consts = *scene.sim().consts();
            let mut expected = initial_particles(n, 3);
            for (frame, steps) in [(0u64, 2u32), (1, 1), (2, 0)] {
                let before = scene.read_state(&gpu);
                let params = run_frame(&gpu, &mut scene, frame, steps, true);
                let mut src = before;
                for p in &params {
                    let sums = cpu_neighbours(&consts, &src);
                    src = cpu_step(&consts, p, &src, &sums);
                }
                if mode == Mode::Free {
                    for p in &params {
                        expected = cpu_step(&consts, p, &expected, &[]);
                    }
                    assert_states_close(&scene.read_state(&gpu), &expected, &format!("free n={n}"));
                }
                assert_states_close(
                    &scene.read_state(&gpu),
                    &src,
                    &format!("{mode:?} n={n} frame {frame}"),
                );
            }
            assert_eq!(scene.sim().steps_total(), 3);
            no_errors(&gpu, &format!("{mode:?} n={n}"));
        }
    }
}

/// 1,000,001 particles (15,626 workgroups of 64, the last one partly out of range): every
/// particle matches the CPU after two steps, so the bounds checks neither skip nor overrun.
#[test]
fn million_and_one_free_particles_step_correctly() {
    let gpu = gpu();
    let n = 1_000_001;
    let mut scene = Particles::new(&gpu, n, 21);
    assert_eq!(scene.count(), n);
    let consts = *scene.sim().consts();
    let params = run_frame(&gpu, &mut scene, 0, 2, false);
    let mut expected = initial_particles(n, 21);
    for p in &params {
        expected = cpu_step(&consts, p, &expected, &[]);
    }
    let got = scene.read_state(&gpu);
    assert_eq!(got.len(), n as usize);
    for i in [0usize, 1, 63, 64, 65, 500_000, 999_999, 1_000_000] {
        assert_states_close(
            &got[i..i + 1],
            &expected[i..i + 1],
            &format!("particle {i}"),
        );
    }
    assert_states_close(&got, &expected, "all");
    no_errors(&gpu, "1,000,001");
}

/// A simulated 5 s stall through the real deck: the frame runs the step cap (8), drops the rest,
/// and the particle scene steps exactly 8 times.
#[test]
fn stall_runs_at_most_the_step_cap() {
    use clap::Parser;
    let gpu = gpu();
    let cli = vizdeck::cli::Cli::parse_from([
        "vizdeck",
        "--headless",
        "--scene",
        "particles",
        "--particles",
        "500",
        "--particle-rate",
        "120",
        "--audio",
        "synthetic",
    ]);
    let index = vizdeck::scene::index_of("particles").unwrap();
    let format = wgpu::TextureFormat::Rgba8Unorm;
    let mut deck = vizdeck::deck::Deck::new(&gpu, format, index, cli.scene_config());
    let target = gpu.device.create_texture(&wgpu::TextureDescriptor {
        label: Some("test:output"),
        size: wgpu::Extent3d {
            width: 160,
            height: 120,
            depth_or_array_layers: 1,
        },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format,
        usage: wgpu::TextureUsages::RENDER_ATTACHMENT,
        view_formats: &[],
    });
    let view = target.create_view(&Default::default());
    let out = vizdeck::deck::Output {
        view: &view,
        texture: Some(&target),
        size: (160, 120),
        pixels_per_point: 1.0,
    };
    let raw = || egui::RawInput {
        screen_rect: Some(egui::Rect::from_min_size(
            egui::Pos2::ZERO,
            egui::vec2(160.0, 120.0),
        )),
        ..Default::default()
    };
    let (t, _) = deck.frame(&gpu, &out, raw(), 1.0 / 60.0);
    assert_eq!(t.tick.steps, 2);
    let (t, _) = deck.frame(&gpu, &out, raw(), 5.0);
    assert_eq!(t.tick.steps, vizdeck::clock::MAX_STEPS);
    assert_eq!(t.tick.dropped_steps, 600 - vizdeck::clock::MAX_STEPS);
    let (t, _) = deck.frame(&gpu, &out, raw(), 1.0 / 60.0);
    assert_eq!(t.tick.steps, 2);
    gpu.wait_idle();
    let m = &deck.metrics()["particles"];
    assert_eq!(m["steps"], 2 + 8 + 2, "{m}");
    no_errors(&gpu, "stall");
}

/// The reduction equals a CPU sum over the read-back state and neighbour sums. Kinetic energy and
/// speed are fixed point (2^20 per unit, rounded per particle): each particle is off by at most
/// 0.5/2^20 plus the f32 rounding of its own value (≤ 2^-23 relative, counted as 1e-6 of the
/// total), so |GPU − CPU| ≤ N·0.5/2^20 + 1e-6·total. Counts and the histogram are exact.
/// One workgroup of the reduction covers 4,096 particles: 3,000 fits in one, 9,001 spans three
/// with a partial last block, in both the flocking (neighbour histogram) and free modes.
#[test]
fn reduction_statistics_equal_cpu_sums() {
    let gpu = gpu();
    for (n, mode) in [(3000, Mode::Grid), (9001, Mode::Grid), (9001, Mode::Free)] {
        check_reduction(&gpu, n, mode);
    }
}

fn check_reduction(gpu: &Gpu, n: u32, mode: Mode) {
    let mut scene = Particles::with_mode(gpu, n, mode, 17);
    for frame in 0..3 {
        run_frame(gpu, &mut scene, frame, 2, false);
    }
    let state = scene.read_state(gpu);
    let sums = scene.sim().read_sums(gpu);
    let got = scene.sim().read_stats_blocking(gpu);
    let mut want = Stats::default();
    let (mut ke, mut speed, mut nsum) = (0f64, 0f64, 0u64);
    // Free mode keeps no neighbour sums: every particle has none.
    for (i, p) in state.iter().enumerate() {
        if !p.alive() {
            continue;
        }
        let v2 = (p.vel[0] as f64).powi(2) + (p.vel[1] as f64).powi(2) + (p.vel[2] as f64).powi(2);
        ke += 0.5 * v2;
        speed += v2.sqrt();
        let c = sums.get(i).map_or(0, |s| s.coh[3] as u32);
        nsum += c as u64;
        want.live += 1;
        want.max_neighbours = want.max_neighbours.max(c);
        want.histogram[histogram_bin(c)] += 1;
    }
    let q = 0.5 / 1_048_576.0 * n as f64;
    assert!(
        (got.kinetic_energy - ke).abs() <= q + 1e-6 * ke,
        "KE {} vs {ke}",
        got.kinetic_energy
    );
    let mean = speed / want.live as f64;
    assert!(
        (got.mean_speed - mean).abs() <= (q + 1e-6 * speed) / want.live as f64,
        "speed {} vs {mean}",
        got.mean_speed
    );
    assert_eq!(got.live, want.live);
    assert_eq!(got.max_neighbours, want.max_neighbours);
    assert_eq!(got.histogram, want.histogram);
    assert_eq!(got.mean_neighbours, nsum as f64 / want.live as f64);
    assert!(ke > 0.0 && (nsum > 0) == (mode != Mode::Free), "{mode:?}");
    // The asynchronous ring delivers the same reduction a few frames later, never waited for.
    for frame in 3..7 {
        run_frame(gpu, &mut scene, frame, 0, false);
    }
    let late = scene.sim().latest_stats().expect("stats arrived");
    assert!(late.step <= scene.sim().steps_total());
    assert_eq!(late.kinetic_energy, got.kinetic_energy);
    assert_eq!(late.histogram, got.histogram);
    no_errors(gpu, "stats");
}

#[test]
fn same_seed_same_result() {
    let gpu = gpu();
    let run = |seed: u64, mode: Mode| {
        let mut s = Particles::with_mode(&gpu, 1500, mode, seed);
        s.burst();
        for frame in 0..5 {
            run_frame(&gpu, &mut s, frame, 2, false);
        }
        (s.read_state(&gpu), s.sim().read_stats_blocking(&gpu))
    };
    for mode in [Mode::Free, Mode::Grid] {
        let a = run(9, mode);
        let b = run(9, mode);
        assert_eq!(a.0, b.0, "{mode:?}: states");
        assert_eq!(a.1, b.1, "{mode:?}: stats");
        assert_ne!(a.0, run(10, mode).0, "{mode:?}: another seed differs");
    }
    no_errors(&gpu, "reproducible");
}

#[test]
fn reconfigure_at_run_time_and_clamp() {
    let gpu = gpu();
    let mut scene = Particles::new(&gpu, 100, 1);
    for (frame, (n, mode)) in [
        (65, Mode::Grid),
        (0, Mode::Brute),
        (1, Mode::Free),
        (4096, Mode::Grid),
    ]
    .into_iter()
    .enumerate()
    {
        scene.request_reconfigure(n, mode);
        run_frame(&gpu, &mut scene, frame as u64, 2, true);
        assert_eq!((scene.count(), scene.mode()), (n, mode));
        assert_eq!(scene.read_state(&gpu).len(), n as usize);
    }
    // A rebuild keeps the simulation rate and the statistics cadence (the adapter's defaults
    // or the user's choice), not only the view.
    scene.set_step_rate(StepRate::Hz60);
    scene.sim_mut().set_stats_every(4);
    scene.reconfigure(&gpu, 200, Mode::Free);
    assert_eq!(scene.step_rate(), StepRate::Hz60);
    assert_eq!(scene.sim().stats_every(), 4);
    no_errors(&gpu, "reconfigure");
    let limits = wgpu::Limits {
        max_storage_buffer_binding_size: 48 * 1000,
        max_buffer_size: 1 << 30,
        ..Default::default()
    };
    assert_eq!(clamp_count(&limits, Mode::Grid, 1000), (1000, None));
    let (c, msg) = clamp_count(&limits, Mode::Grid, 1001);
    assert_eq!(c, 1000);
    assert!(msg.unwrap().contains("clamped to 1000"));
    assert_eq!(clamp_count(&limits, Mode::Free, 1500).0, 1500);
}

#[test]
fn dispatch_covers_every_particle() {
    for n in [
        0u32,
        1,
        63,
        64,
        65,
        1_000_001,
        4_000_000,
        16_777_216,
        u32::MAX,
    ] {
        let (x, y) = dispatch_size(n);
        assert!(x <= 65535 && y <= 65535);
        assert!(x as u64 * y as u64 * WORKGROUP as u64 >= n as u64, "n={n}");
        // Over-dispatch is bounded by one row of workgroups (the shader bounds-checks the rest).
        let threads = x as u64 * y as u64 * WORKGROUP as u64;
        assert!(
            threads < n as u64 + x as u64 * WORKGROUP as u64 || n == 0,
            "n={n}"
        );
    }
}

/// Renders one frame of `scene` (2 steps) into a 96×64 target, with a depth attachment when the
/// scene asks for one, calling `paint` `draws` times; returns the RGBA8 pixels.
fn render_frame(gpu: &Gpu, scene: &mut Particles, frame: u64, draws: usize) -> Vec<u8> {
    let (w, h) = (96u32, 64u32);
    let dt = 1.0 / 120.0;
    let steps = if frame == 0 { 2 } else { 0 };
    scene.set_step_rate(StepRate::Hz120);
    for _ in 0..steps {
        scene.fixed_update(dt);
    }
    let ctx = FrameCtx {
        frame,
        steps,
        dt,
        alpha: 0.0,
        advanced_s: steps as f64 * dt as f64,
        elapsed_s: steps as f64 * dt as f64,
        size: (w, h),
    };
    vizdeck::scene::prepare_standalone(gpu, scene, &ctx, Strategy::WriteBuffer);
    let size = wgpu::Extent3d {
        width: w,
        height: h,
        depth_or_array_layers: 1,
    };
    let target = gpu.device.create_texture(&wgpu::TextureDescriptor {
        label: Some("test:opaque:target"),
        size,
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format: SCENE_FORMAT,
        usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
        view_formats: &[],
    });
    let depth = scene.depth_format().map(|format| {
        gpu.device
            .create_texture(&wgpu::TextureDescriptor {
                label: Some("test:opaque:depth"),
                size,
                mip_level_count: 1,
                sample_count: 1,
                dimension: wgpu::TextureDimension::D2,
                format,
                usage: wgpu::TextureUsages::RENDER_ATTACHMENT,
                view_formats: &[],
            })
            .create_view(&Default::default())
    });
    let view = target.create_view(&Default::default());
    let mut enc = gpu
        .device
        .create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("test:opaque"),
        });
    {
        let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("test:opaque:compute"),
            timestamp_writes: None,
        });
        scene.compute(&mut pass, &ctx);
    }
    {
        let mut pass = enc.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("test:opaque:render"),
            color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                view: &view,
                depth_slice: None,
                resolve_target: None,
                ops: wgpu::Operations {
                    load: wgpu::LoadOp::Clear(wgpu::Color::BLACK),
                    store: wgpu::StoreOp::Store,
                },
            })],
            depth_stencil_attachment: depth.as_ref().map(|d| {
                wgpu::RenderPassDepthStencilAttachment {
                    view: d,
                    depth_ops: Some(wgpu::Operations {
                        load: wgpu::LoadOp::Clear(1.0),
                        store: wgpu::StoreOp::Discard,
                    }),
                    stencil_ops: None,
                }
            }),
            timestamp_writes: None,
            occlusion_query_set: None,
            multiview_mask: None,
        });
        for _ in 0..draws {
            scene.paint(&mut pass, &ctx);
        }
    }
    gpu.queue.submit([enc.finish()]);
    vizdeck::gpu::readback::read_texture_rgba(&gpu.device, &gpu.queue, &target).expect("readback")
}

#[test]
fn opaque_sprites_are_depth_tested_and_additive_ones_are_not() {
    use vizdeck::scene::particles::render::{DEPTH_FORMAT, Style};
    let gpu = gpu();
    let mut scene = Particles::new(&gpu, 3000, 11);
    scene.set_draw_style(Style::Opaque);
    assert_eq!(scene.depth_format(), Some(DEPTH_FORMAT));
    let once = render_frame(&gpu, &mut scene, 0, 1);
    let twice = render_frame(&gpu, &mut scene, 1, 2);
    no_errors(&gpu, "opaque");
    let lit = once.chunks_exact(4).filter(|p| p[..3] != [0, 0, 0]).count();
    assert!(lit > 50, "only {lit} pixels drawn");
    // Depth test (Less): drawing the same sprites again changes nothing; opaque: no blending.
    assert_eq!(once, twice, "a second opaque draw changed the image");
    // Additive sprites brighten where drawn twice.
    scene.set_draw_style(Style::Sprites);
    assert_eq!(scene.depth_format(), None);
    let a1 = render_frame(&gpu, &mut scene, 2, 1);
    let a2 = render_frame(&gpu, &mut scene, 3, 2);
    no_errors(&gpu, "additive");
    let sum = |img: &[u8]| {
        img.chunks_exact(4)
            .map(|p| p[0] as u64 + p[1] as u64 + p[2] as u64)
            .sum::<u64>()
    };
    assert!(sum(&a2) > sum(&a1), "additive double draw did not brighten");
}

#[test]
fn point_splat_draws_each_particle_in_its_pixel() {
    use vizdeck::scene::particles::render::Style;
    let gpu = gpu();
    let n = 2000;
    let mut scene = Particles::new(&gpu, n, 4);
    scene.set_draw_style(Style::Splat);
    let img = render_frame(&gpu, &mut scene, 0, 1);
    no_errors(&gpu, "splat");
    // The accumulation image is cleared every frame: the same state splatted again (frame 1
    // runs no step) gives the same picture, not twice the light.
    let again = render_frame(&gpu, &mut scene, 1, 1);
    assert!(
        img == again,
        "a second splat of the same state changed the image"
    );
    // Frame 0 ran two steps, so its last step splatted as it went (fused); the separate pass,
    // which reads both state buffers back, gives the same picture to the bit, in every colour
    // mode (grid mode: the density colour reads the neighbour sums).
    for (mode, color) in [
        (Mode::Free, ColorBy::Speed),
        (Mode::Free, ColorBy::Age),
        (Mode::Grid, ColorBy::Density),
    ] {
        let mut images = Vec::new();
        for fuse in [true, false] {
            let mut s = Particles::with_mode(&gpu, n, mode, 4);
            s.set_draw_style(Style::Splat);
            s.set_color_by(color);
            s.set_fused_splat(fuse);
            images.push(render_frame(&gpu, &mut s, 0, 1));
        }
        let lit = images[0]
            .chunks_exact(4)
            .filter(|p| p[..3] != [0, 0, 0])
            .count();
        assert!(lit > 100, "{mode:?} {color:?}: {lit} lit");
        assert!(
            images[0] == images[1],
            "{mode:?} {color:?}: fused and separate splats differ"
        );
    }
    // One pixel per particle at most (several may share one), and some are on screen.
    let lit = img.chunks_exact(4).filter(|p| p[..3] != [0, 0, 0]).count();
    assert!(
        lit > 100 && lit <= n as usize,
        "{lit} lit pixels for {n} particles"
    );
    // Same frame drawn by sprites lights at least as many pixels (sprites cover ≥ 1 px each).
    let mut sprites = Particles::new(&gpu, n, 4);
    sprites.set_draw_style(Style::Sprites);
    let s_img = render_frame(&gpu, &mut sprites, 0, 1);
    let s_lit = s_img
        .chunks_exact(4)
        .filter(|p| p[..3] != [0, 0, 0])
        .count();
    assert!(s_lit >= lit / 2, "sprites {s_lit} vs splat {lit}");
}

/// At 60 Hz the scene runs one step of 2·dt every second clock tick, renders with the alpha of
/// its own step ((ticks since the step + clock alpha) / 2), and the GPU state after those steps
/// equals the CPU reference run with the same parameters. `Auto` means 60 Hz on a CPU adapter
/// only.
#[test]
fn sixty_hz_steps_every_second_tick_with_twice_the_dt() {
    assert_eq!(StepRate::Auto.ticks_per_step(true), 2);
    assert_eq!(StepRate::Auto.ticks_per_step(false), 1);
    assert_eq!(StepRate::Hz120.ticks_per_step(true), 1);
    assert_eq!(StepRate::Hz60.ticks_per_step(false), 2);
    let gpu = gpu();
    let n = 1000;
    let mut scene = Particles::new(&gpu, n, 7);
    let before = scene.read_state(&gpu);
    scene.set_step_rate(StepRate::Hz60);
    assert_eq!(scene.steps_per_second(), 60.0);
    for _ in 0..3 {
        scene.fixed_update(DT);
    }
    let params = scene.frame_params().to_vec();
    assert_eq!(params.len(), 1, "3 ticks at 60 Hz: one step");
    assert_eq!(params[0].dt, 2.0 * DT);
    // One tick since that step, a quarter of the next one gone.
    assert_eq!(scene.step_alpha(0.25), (1.0 + 0.25) / 2.0);
    let ctx = FrameCtx {
        frame: 0,
        steps: 3,
        dt: DT,
        alpha: 0.25,
        advanced_s: 3.0 * DT as f64,
        elapsed_s: 3.0 * DT as f64,
        size: (64, 64),
    };
    let enc = prepare_and_compute(&gpu, &mut scene, &ctx, "test:rate");
    #[allow(clippy::disallowed_methods)] // a test frame outside the deck
    gpu.queue.submit([enc.finish()]);
    let got = scene.read_state(&gpu);
    let consts = *scene.sim().consts();
    let want = cpu_step(&consts, &params[0], &before, &[]);
    assert_states_close(&got, &want, "60 Hz step");
    no_errors(&gpu, "60 Hz");
}

/// Paused, the scene runs no step whatever the clock ticks, draws the newest state (alpha 1),
/// does not ask for frames, and carries on from where it stopped when resumed.
#[test]
fn paused_scene_runs_no_step_and_stands_still() {
    let gpu = gpu();
    let mut scene = Particles::new(&gpu, 500, 3);
    scene.set_step_rate(StepRate::Hz120);
    assert!(scene.animating());
    scene.set_paused(true);
    assert!(!scene.animating());
    for _ in 0..5 {
        scene.fixed_update(DT);
    }
    assert!(scene.frame_params().is_empty(), "steps while paused");
    assert_eq!(scene.step_alpha(0.3), 1.0);
    let before = scene.read_state(&gpu);
    run_frame(&gpu, &mut scene, 0, 0, true);
    assert_eq!(scene.read_state(&gpu), before, "state moved while paused");
    assert_eq!(scene.sim().steps_total(), 0);
    scene.set_paused(false);
    assert!(scene.animating());
    let params = run_frame(&gpu, &mut scene, 1, 2, false);
    assert_eq!(params.len(), 2);
    let consts = *scene.sim().consts();
    let mut want = before;
    for p in &params {
        want = cpu_step(&consts, p, &want, &[]);
    }
    assert_states_close(&scene.read_state(&gpu), &want, "after resuming");
    no_errors(&gpu, "pause");
}

/// With the automatic rate on a CPU adapter, a frame slower than 1/30 s makes the next run one
/// step whatever the clock's ticks (the rest dropped and counted); a fast frame lifts the cap.
/// An explicit rate is never capped.
#[test]
fn slow_frames_run_one_step_on_a_cpu_adapter() {
    let gpu = gpu();
    let cpu = gpu.summary.device_type == "Cpu";
    let frame = |scene: &mut Particles, i: u64, elapsed_s: f64| {
        let ctx = FrameCtx {
            frame: i,
            steps: 0,
            dt: DT,
            alpha: 0.0,
            advanced_s: 0.0,
            elapsed_s,
            size: (64, 64),
        };
        vizdeck::scene::prepare_standalone(&gpu, scene, &ctx, Strategy::WriteBuffer);
    };
    let ticks = |scene: &mut Particles| {
        for _ in 0..8 {
            scene.fixed_update(DT);
        }
        scene.frame_params().len()
    };
    let mut scene = Particles::new(&gpu, 200, 5);
    frame(&mut scene, 0, 0.1);
    assert_eq!(scene.one_step_cap(), cpu);
    // 8 ticks of 1/120 s: 4 steps at 60 Hz (CPU adapter), 8 at 120 Hz elsewhere.
    assert_eq!(ticks(&mut scene), if cpu { 1 } else { 8 });
    assert_eq!(
        scene.metrics()["ticks_dropped_slow"],
        if cpu { 6 } else { 0 }
    );
    frame(&mut scene, 1, 1.0 / 60.0);
    assert!(!scene.one_step_cap());
    assert_eq!(ticks(&mut scene), if cpu { 4 } else { 8 });
    // An explicit rate: no cap after a slow frame.
    scene.set_step_rate(StepRate::Hz60);
    frame(&mut scene, 2, 0.1);
    assert!(!scene.one_step_cap());
    assert_eq!(ticks(&mut scene), 4);
    no_errors(&gpu, "slow frames");
}
