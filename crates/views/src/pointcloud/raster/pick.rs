//! The pick: the point shown at one pixel, read from the visibility buffer.

use super::{Rasterizer, VisibilityBuffer, piece_groups};
use crate::gpu::layout;
use crate::pointcloud::pieces::PieceGroups;

impl Rasterizer {
    /// The pick's bind groups, one per piece of `target`: `params` (a uniform of
    /// [`PickParams`](super::PickParams)), `target`, and `picked` (8 bytes, storage: `~index` of
    /// the point shown at the pixel or 0, and its depth key).
    pub fn bind_pick(
        &self,
        device: &wgpu::Device,
        params: &wgpu::Buffer,
        target: &VisibilityBuffer,
        picked: &wgpu::Buffer,
    ) -> PieceGroups {
        piece_groups(target, |k, piece| {
            layout::bind_group(
                device,
                &format!("pointcloud:pick:group:{k}"),
                &self.pick_layout,
                &[
                    params.as_entire_binding(),
                    piece.depth.as_entire_binding(),
                    piece.ids.as_entire_binding(),
                    picked.as_entire_binding(),
                    piece.uniform.as_entire_binding(),
                ],
            )
        })
    }

    /// Records the pick of a pixel of row `y` (the row of its [`PickParams`](super::PickParams);
    /// after [`encode`](Rasterizer::encode) in the same pass): one invocation, over the piece
    /// that resolves that row.
    pub fn encode_pick(&self, pass: &mut wgpu::ComputePass<'_>, groups: &PieceGroups, y: u32) {
        let Some((group, _)) = groups.for_row(y) else {
            return;
        };
        pass.set_pipeline(&self.pick_pipeline);
        pass.set_bind_group(0, group, &[]);
        pass.dispatch_workgroups(1, 1, 1);
    }
}
