//! The raster passes: their bind groups and dispatches, for the 16-byte points of a pool and
//! for a quantized cloud, and the clear of the visibility buffer.

use super::{
    PIECE_BINDING, QuantizedCloud, RasterPath, RasterStage, Rasterizer, VisibilityBuffer,
    dispatch_size, group_of, piece_groups, qdispatch_size,
};
use crate::pointcloud::pieces::PieceGroups;

impl Rasterizer {
    /// The passes' bind groups, one per piece of `target`: `params` (a uniform of
    /// [`RasterParams`](super::RasterParams)), the point pool `points` (`vec4<u32>` per point), the
    /// batch table `batches` (`vec4<u32>` per entry, see [`batch_entry`](super::batch_entry)), into
    /// `target`.
    pub fn bind(
        &self,
        device: &wgpu::Device,
        params: &wgpu::Buffer,
        points: &wgpu::Buffer,
        batches: &wgpu::Buffer,
        target: &VisibilityBuffer,
    ) -> PieceGroups {
        let (label, layout) = match &self.atomic64 {
            Some((layout64, _)) => ("pointcloud:raster64:group", layout64),
            None => ("pointcloud:raster:group", &self.layout),
        };
        piece_groups(target, |k, piece| {
            let mut entries = vec![
                (0, params.as_entire_binding()),
                (1, points.as_entire_binding()),
                (2, batches.as_entire_binding()),
                (3, piece.depth.as_entire_binding()),
                (PIECE_BINDING, piece.uniform.as_entire_binding()),
            ];
            if self.atomic64.is_none() {
                entries.push((4, piece.ids.as_entire_binding()));
            }
            group_of(device, &format!("{label}:{k}"), layout, entries)
        })
    }

    /// The raster passes' bind groups of a quantized `cloud`, per chunk one per piece of `target`:
    /// `params` (a uniform of [`RasterParams`](super::RasterParams)), `words` (per chunk, its
    /// points' attribute words, a u32 a point with the class in bits 0–7, indexed as its codes:
    /// read only while the class mask hides a class), into `target`. A chunk past the end of
    /// `words` binds its codes there, which is right only while the mask draws every class.
    pub fn bind_quantized(
        &self,
        device: &wgpu::Device,
        params: &wgpu::Buffer,
        cloud: &QuantizedCloud,
        words: &[&wgpu::Buffer],
        target: &VisibilityBuffer,
    ) -> Vec<PieceGroups> {
        cloud
            .chunks
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let words = words.get(i).copied().unwrap_or(&c.codes);
                piece_groups(target, |k, piece| {
                    let mut entries = vec![
                        (0, params.as_entire_binding()),
                        (3, piece.depth.as_entire_binding()),
                        (5, c.codes.as_entire_binding()),
                        (6, c.batches.as_entire_binding()),
                        (7, words.as_entire_binding()),
                        (PIECE_BINDING, piece.uniform.as_entire_binding()),
                    ];
                    if self.path == RasterPath::TwoPass32 {
                        entries.push((4, piece.ids.as_entire_binding()));
                    }
                    let label = format!("pointcloud:raster_q:group:{i}:{k}");
                    group_of(device, &label, &self.q_layout, entries)
                })
            })
            .collect()
    }

    /// Records the raster passes of a quantized `cloud` (groups from
    /// [`bind_quantized`](Rasterizer::bind_quantized)) into `pass`: one dispatch per chunk and
    /// piece (on the 32-bit path the depth pass over every chunk, then the id pass).
    pub fn encode_quantized(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        cloud: &QuantizedCloud,
        groups: &[PieceGroups],
    ) {
        for pipeline in &self.q_pipelines {
            pass.set_pipeline(pipeline);
            for (c, pieces) in cloud.chunks.iter().zip(groups) {
                let (x, y) = qdispatch_size(c.batch_count);
                for group in &pieces.groups {
                    pass.set_bind_group(0, group, &[]);
                    pass.dispatch_workgroups(x, y, 1);
                }
            }
        }
    }

    /// Clears `target` (in `encoder`, before any pass of the frame).
    pub fn clear(&self, encoder: &mut wgpu::CommandEncoder, target: &VisibilityBuffer) {
        for p in &target.pieces {
            encoder.clear_buffer(&p.depth, 0, None);
            if !target.packed {
                encoder.clear_buffer(&p.ids, 0, None);
            }
        }
    }

    /// Records one stage of the 16-byte passes over `batches` batch-table entries bound in
    /// `groups` (a dispatch per piece) into `pass`: [`RasterStage::Depth`] the 64-bit pass, or
    /// the 32-bit path's depth pass; [`RasterStage::Ids`] nothing on the 64-bit path, else the
    /// id pass. For drawing the 16-byte and the quantized points of one frame into one
    /// visibility buffer: every depth stage (the quantized one within
    /// [`encode_quantized`](Rasterizer::encode_quantized)) before any id stage.
    pub fn encode_stage(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        groups: &PieceGroups,
        batches: u32,
        stage: RasterStage,
    ) {
        if batches == 0 {
            return;
        }
        let (x, y) = dispatch_size(batches);
        let pipeline = match (&self.atomic64, stage) {
            (Some((_, p)), RasterStage::Depth) => p,
            (Some(_), RasterStage::Ids) => return,
            (None, RasterStage::Depth) => &self.depth_pipeline,
            (None, RasterStage::Ids) => &self.id_pipeline,
        };
        pass.set_pipeline(pipeline);
        for group in &groups.groups {
            pass.set_bind_group(0, group, &[]);
            pass.dispatch_workgroups(x, y, 1);
        }
    }

    /// Records both passes over `batches` batch-table entries (the table holds the dispatch's
    /// padding, see [`dispatch_size`]) bound in `groups` (a dispatch per piece) into `pass`
    /// (wgpu orders the second after the first: it reads what the first wrote).
    pub fn encode(&self, pass: &mut wgpu::ComputePass<'_>, groups: &PieceGroups, batches: u32) {
        self.encode_stage(pass, groups, batches, RasterStage::Depth);
        self.encode_stage(pass, groups, batches, RasterStage::Ids);
    }
}
