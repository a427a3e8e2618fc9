//! What the particle tests share: the fixed step, a frame's context, and a frame's prepare and
//! compute pass recorded as the deck records them.

use vizdeck::gpu::Gpu;
use vizdeck::gpu::upload::Strategy;
use vizdeck::scene::{FrameCtx, Scene};

/// The fixed step of the particle tests (the deck's clock tick).
pub const DT: f32 = 1.0 / 120.0;

/// The context of frame `frame` of `steps` fixed steps of [`DT`] into a 64×48 target, half a
/// step past the last one.
pub fn step_ctx(frame: u64, steps: u32) -> FrameCtx {
    FrameCtx {
        frame,
        steps,
        dt: DT,
        alpha: 0.5,
        advanced_s: f64::from(steps) * f64::from(DT),
        elapsed_s: f64::from(steps) * f64::from(DT),
        size: (64, 48),
    }
}

/// Prepares `scene` for `ctx` (uploads written through `queue.write_buffer`) and records its
/// compute pass into a new encoder labelled `label` (the pass `{label}:compute`), returned
/// unsubmitted.
pub fn prepare_and_compute(
    gpu: &Gpu,
    scene: &mut dyn Scene,
    ctx: &FrameCtx,
    label: &str,
) -> wgpu::CommandEncoder {
    vizdeck::scene::prepare_standalone(gpu, scene, ctx, Strategy::WriteBuffer);
    let mut enc = gpu
        .device
        .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some(label) });
    {
        let pass_label = format!("{label}:compute");
        let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some(&pass_label),
            timestamp_writes: None,
        });
        scene.compute(&mut pass, ctx);
    }
    enc
}
