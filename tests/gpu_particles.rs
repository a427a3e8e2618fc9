//! A particle step on the GPU (lavapipe in CI) read back and compared with the CPU reference step
//! of the same inputs; counts 0, 1, 63, 65 step and render without validation errors.

use vizdeck::gpu::{BackendChoice, Gpu};
use vizdeck::scene::particles::{Particles, cpu_step, initial_particles};
use vizdeck::scene::{FrameCtx, SCENE_FORMAT, Scene};

fn gpu() -> Gpu {
    Gpu::new(BackendChoice::Vulkan, None, None)
        .or_else(|_| Gpu::new(BackendChoice::Auto, None, None))
        .expect("a GPU adapter (lavapipe: apt-get install mesa-vulkan-drivers)")
        .0
}

/// Runs one frame of `steps` fixed steps through the scene's own prepare/compute/paint.
fn run_frame(gpu: &Gpu, scene: &mut Particles, frame: u64, steps: u32) {
    let dt = 1.0 / 120.0;
    for _ in 0..steps {
        scene.fixed_update(dt);
    }
    let ctx = FrameCtx {
        frame,
        steps,
        dt,
        alpha: 0.5,
        advanced_s: steps as f64 * dt as f64,
        elapsed_s: steps as f64 * dt as f64,
        size: (64, 48),
    };
    scene.prepare(gpu, &ctx);
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
    let mut enc = gpu
        .device
        .create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("test"),
        });
    {
        let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("test:compute"),
            timestamp_writes: None,
        });
        scene.compute(&mut pass, &ctx);
    }
    {
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
    gpu.queue.submit([enc.finish()]);
    gpu.wait_idle();
}

fn assert_close(a: f32, b: f32, what: &str) {
    let tol = 1e-5 * a.abs().max(b.abs()).max(1.0);
    assert!((a - b).abs() <= tol, "{what}: gpu {a} vs cpu {b}");
}

#[test]
fn gpu_step_matches_cpu_reference() {
    let gpu = gpu();
    let n = 300;
    let mut scene = Particles::new(&gpu, n, 7);
    let before = scene.read_state(&gpu);
    assert_eq!(
        before,
        initial_particles(n, 7),
        "upload of the seeded state"
    );
    // Three frames of 1, 2 and 3 steps: the ping-pong direction changes with odd/even counts.
    let mut expected = before;
    for (frame, steps) in [(0u64, 1u32), (1, 2), (2, 3)] {
        let dt = 1.0 / 120.0;
        // Same parameters the scene will queue, computed by a twin scene on the CPU side.
        let mut params = Vec::new();
        {
            let mut probe = Particles::new(&gpu, n, 7);
            // Advance the probe's clock to where `scene` is.
            let done: u32 = [(0u64, 1u32), (1, 2), (2, 3)]
                .iter()
                .take_while(|(f, _)| *f < frame)
                .map(|(_, s)| *s)
                .sum();
            for _ in 0..done {
                probe.fixed_update(dt);
            }
            let skip = probe.frame_params().len();
            for _ in 0..steps {
                probe.fixed_update(dt);
            }
            params.extend_from_slice(&probe.frame_params()[skip..]);
        }
        assert_eq!(params.len(), steps as usize);
        for p in &params {
            expected = cpu_step(p, &expected);
        }
        run_frame(&gpu, &mut scene, frame, steps);
        let got = scene.read_state(&gpu);
        assert_eq!(got.len(), expected.len());
        for (i, (g, e)) in got.iter().zip(&expected).enumerate() {
            for c in 0..3 {
                assert_close(
                    g.pos[c],
                    e.pos[c],
                    &format!("frame {frame} particle {i} pos[{c}]"),
                );
                assert_close(
                    g.vel[c],
                    e.vel[c],
                    &format!("frame {frame} particle {i} vel[{c}]"),
                );
            }
        }
        // The particles moved: the comparison is not trivially equal states.
        assert_ne!(got[0].pos, initial_particles(n, 7)[0].pos);
    }
    assert!(
        gpu.error_messages().is_empty(),
        "{:?}",
        gpu.error_messages()
    );
}

#[test]
fn edge_counts_step_and_render_without_errors() {
    let gpu = gpu();
    for n in [0u32, 1, 63, 65] {
        let mut scene = Particles::new(&gpu, n, 3);
        run_frame(&gpu, &mut scene, 0, 2);
        run_frame(&gpu, &mut scene, 1, 1);
        let state = scene.read_state(&gpu);
        assert_eq!(state.len(), n as usize);
        let mut expected = initial_particles(n, 3);
        let mut probe = Particles::new(&gpu, n, 3);
        for _ in 0..3 {
            probe.fixed_update(1.0 / 120.0);
        }
        for p in probe.frame_params() {
            expected = cpu_step(p, &expected);
        }
        for (g, e) in state.iter().zip(&expected) {
            for c in 0..3 {
                assert_close(g.pos[c], e.pos[c], &format!("n={n} pos"));
            }
        }
        assert!(
            gpu.error_messages().is_empty(),
            "n={n}: {:?}",
            gpu.error_messages()
        );
    }
}

#[test]
fn dispatch_covers_every_particle() {
    use vizdeck::scene::particles::{WORKGROUP, dispatch_size};
    for n in [0u32, 1, 63, 64, 65, 1_000_001, 4_000_000, 16_777_216] {
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
