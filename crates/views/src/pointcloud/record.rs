//! One frame of the point-cloud scene recorded as the deck records it, without the UI
//! ([`record_frame`]): what the tests and the lab's streaming table drive the scene with.

use super::PointCloud;
use crate::gpu::frame::OwnedFrame;
use crate::{FrameCtx, Scene};

/// Records frame `index` of `scene` into `f` as the deck records it, without the UI: its
/// prepare (one 1/60 s step, uploads through `f`'s uploader), its compute pass (raster passes
/// and the resolve), the resolved image copied into `target` (`size` pixels, `SCENE_FORMAT`,
/// RENDER_ATTACHMENT | COPY_DST) and its render pass, which loads it (cleared to black first
/// before the first frame is prepared); unsubmitted, for the caller to add what else it needs
/// (readback copies) and submit.
pub fn record_frame(
    f: &mut OwnedFrame<'_>,
    scene: &mut PointCloud,
    target: &wgpu::Texture,
    index: u64,
    size: (u32, u32),
) {
    let ctx = FrameCtx {
        frame: index,
        steps: 1,
        dt: 1.0 / 60.0,
        alpha: 0.0,
        advanced_s: 1.0 / 60.0,
        elapsed_s: 1.0 / 60.0,
        size,
    };
    f.set_index(index);
    scene.prepare(&mut f.frame(), &ctx);
    crate::gpu::frame::compute_pass(f.encoder(), "pointcloud:frame:compute", |pass| {
        scene.compute(pass, &ctx)
    });
    let load = crate::write_or_clear(&*scene, f.encoder(), target, wgpu::Color::BLACK);
    let view = target.create_view(&Default::default());
    let label = "pointcloud:frame:render";
    let mut pass = crate::gpu::frame::color_pass(f.encoder(), &view, label, load, None);
    scene.paint(&mut pass, &ctx);
}
