//! The resolve: its bind groups (16-byte points, quantized chunks, both pools at once) and the
//! dispatches that colour the [`ResolveImage`] from the visibility buffer.

use super::{
    RESOLVE_PIECE_BINDING, Rasterizer, ResolveChunk, ResolveImage, ResolveVariant,
    VisibilityBuffer, group_of, piece_groups,
};
use crate::pointcloud::pieces::PieceGroups;

impl Rasterizer {
    /// [`bind_resolve`](Rasterizer::bind_resolve) of the 16-byte points with ids `0 .. count`
    /// only (a pixel whose id is beyond is left to another dispatch, as the chunks of a quantized
    /// cloud are): for a frame that also draws quantized points with ids from `count` on.
    pub fn bind_resolve_ids(
        &self,
        device: &wgpu::Device,
        params: &wgpu::Buffer,
        target: &VisibilityBuffer,
        points: &wgpu::Buffer,
        attrs: &wgpu::Buffer,
        count: u32,
    ) -> PieceGroups {
        let chunk = ResolveChunk {
            first: 0,
            count,
            _pad: [0; 2],
        };
        let label = "pointcloud:resolve:ids:group";
        self.resolve_group(
            device,
            label,
            params,
            target,
            [points, attrs],
            Some(chunk),
            None,
        )
    }

    /// The resolve's bind group: `params` (a uniform of [`ResolveParams`](super::ResolveParams)),
    /// `target`, the point pool and the attribute pool (`vec2<u32>` per point: RGBA8 with R in the
    /// low byte, and the elevation above the cloud's lowest point as f32 bits).
    pub fn bind_resolve(
        &self,
        device: &wgpu::Device,
        params: &wgpu::Buffer,
        target: &VisibilityBuffer,
        points: &wgpu::Buffer,
        attrs: &wgpu::Buffer,
    ) -> PieceGroups {
        let label = "pointcloud:resolve:group";
        self.resolve_group(device, label, params, target, [points, attrs], None, None)
    }

    /// The resolve's bind group of one chunk of a quantized cloud (ids `first .. first + count`):
    /// `params` (a uniform of [`ResolveParams`](super::ResolveParams)), `target`, the chunk's
    /// attribute words `words` (a u32 per point, as [`vizdeck_pointcloud::source::attribute_word`];
    /// the buffer padded to a multiple of 16 bytes) and its `attrs` (`vec2<u32>` per point as in
    /// [`bind_resolve`](Rasterizer::bind_resolve)).
    #[allow(clippy::too_many_arguments)]
    pub fn bind_resolve_quantized(
        &self,
        device: &wgpu::Device,
        params: &wgpu::Buffer,
        target: &VisibilityBuffer,
        words: &wgpu::Buffer,
        attrs: &wgpu::Buffer,
        first: u32,
        count: u32,
    ) -> PieceGroups {
        let chunk = ResolveChunk {
            first,
            count,
            _pad: [0; 2],
        };
        let label = "pointcloud:resolve:quantized:group";
        self.resolve_group(
            device,
            label,
            params,
            target,
            [words, attrs],
            Some(chunk),
            None,
        )
    }

    /// The resolve's bind groups `label`, one per piece of `target`: `params`, `target`,
    /// `points` (binding 3: the 16-byte points, or a quantized chunk's attribute words) and
    /// `attrs`, colouring the ids of `chunk` (in a uniform buffer of its own), or every id
    /// (`None`); with `second` (the 16-byte points and attributes of a second pool, ids `0 ..
    /// count`), the two-pool resolve's groups (bindings 6–8 of `cs_dual`).
    #[allow(clippy::too_many_arguments)]
    fn resolve_group(
        &self,
        device: &wgpu::Device,
        label: &str,
        params: &wgpu::Buffer,
        target: &VisibilityBuffer,
        [points, attrs]: [&wgpu::Buffer; 2],
        chunk: Option<ResolveChunk>,
        second: Option<([&wgpu::Buffer; 2], u32)>,
    ) -> PieceGroups {
        let own_buffer = |c: ResolveChunk| {
            let label = format!("pointcloud:resolve:chunk:{}+{}", c.first, c.count);
            chunk_buffer(device, &label, c)
        };
        let own = chunk.map(own_buffer);
        let second = second.map(|(buffers, count)| {
            let c = ResolveChunk {
                first: 0,
                count,
                _pad: [0; 2],
            };
            (buffers, own_buffer(c))
        });
        let layout = match &second {
            Some(_) => &self.dual_layout,
            None => &self.resolve_layout,
        };
        piece_groups(target, |k, piece| {
            let mut entries = vec![
                (0, params.as_entire_binding()),
                (1, piece.depth.as_entire_binding()),
                (2, piece.ids.as_entire_binding()),
                (3, points.as_entire_binding()),
                (4, attrs.as_entire_binding()),
                (
                    5,
                    own.as_ref().unwrap_or(&self.chunk_all).as_entire_binding(),
                ),
                (RESOLVE_PIECE_BINDING, piece.uniform.as_entire_binding()),
            ];
            if let Some(([xpoints, xattrs], xchunk)) = &second {
                entries.extend([
                    (6, xpoints.as_entire_binding()),
                    (7, xattrs.as_entire_binding()),
                    (8, xchunk.as_entire_binding()),
                ]);
            }
            group_of(device, &format!("{label}:{k}"), layout, entries)
        })
    }

    /// The two-pool resolve's bind group (for [`resolve_dual`](Rasterizer::resolve_dual)): `params`,
    /// `target`, a quantized chunk (its attribute words and attributes, ids `first .. first +
    /// count`, as [`bind_resolve_quantized`](Rasterizer::bind_resolve_quantized)) and a pool of
    /// 16-byte points (`xpoints`, `xattrs`, ids `0 .. xcount`, as
    /// [`bind_resolve_ids`](Rasterizer::bind_resolve_ids)).
    #[allow(clippy::too_many_arguments)]
    pub fn bind_resolve_dual(
        &self,
        device: &wgpu::Device,
        params: &wgpu::Buffer,
        target: &VisibilityBuffer,
        quantized: [&wgpu::Buffer; 2],
        (first, count): (u32, u32),
        exact: [&wgpu::Buffer; 2],
        xcount: u32,
    ) -> PieceGroups {
        let chunk = ResolveChunk {
            first,
            count,
            _pad: [0; 2],
        };
        let label = "pointcloud:resolve:dual:group";
        self.resolve_group(
            device,
            label,
            params,
            target,
            quantized,
            Some(chunk),
            Some((exact, xcount)),
        )
    }

    /// Records the two-pool resolve of variant `v` (made by
    /// [`prepare_variant_dual`](Rasterizer::prepare_variant_dual)) with `groups` (from
    /// [`bind_resolve_dual`](Rasterizer::bind_resolve_dual)) into `pass`, writing `image` (the
    /// visibility buffer's size): one dispatch per piece colours the pixels of both pools.
    pub fn resolve_dual(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        v: ResolveVariant,
        groups: &PieceGroups,
        image: &ResolveImage,
    ) {
        if let Some(pipeline) = self.dual.get(&v) {
            Self::dispatch_resolve(pass, pipeline, std::slice::from_ref(groups), image);
        }
    }

    /// Records the resolve of variant `v` of a quantized cloud (made by
    /// [`prepare_variant_quantized`](Rasterizer::prepare_variant_quantized)), one dispatch per
    /// piece and chunk's groups (from [`bind_resolve_quantized`](Rasterizer::bind_resolve_quantized)),
    /// into `pass`, writing `image` (the visibility buffer's size).
    pub fn resolve_quantized(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        v: ResolveVariant,
        groups: &[PieceGroups],
        image: &ResolveImage,
    ) {
        if let Some(pipeline) = self.resolve.get(&(v, true)) {
            Self::dispatch_resolve(pass, pipeline, groups, image);
        }
    }

    /// Per piece of `image`, one dispatch of `pipeline` over its core rows per group set of
    /// `groups` (their group of that piece).
    fn dispatch_resolve(
        pass: &mut wgpu::ComputePass<'_>,
        pipeline: &wgpu::ComputePipeline,
        groups: &[PieceGroups],
        image: &ResolveImage,
    ) {
        pass.set_pipeline(pipeline);
        for (k, p) in image.pieces.iter().enumerate() {
            pass.set_bind_group(1, &p.group, &[]);
            let (x, y) = (image.size.0.div_ceil(8), p.piece.core_rows.div_ceil(8));
            for group in groups.iter().filter_map(|g| g.groups.get(k)) {
                pass.set_bind_group(0, group, &[]);
                pass.dispatch_workgroups(x, y, 1);
            }
        }
    }

    /// Records the resolve of variant `v` (made by [`prepare_variant`]; nothing is recorded
    /// when it was not) into `pass`, writing `image` (the visibility buffer's size).
    ///
    /// [`prepare_variant`]: Rasterizer::prepare_variant
    pub fn resolve(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        v: ResolveVariant,
        groups: &PieceGroups,
        image: &ResolveImage,
    ) {
        if let Some(pipeline) = self.resolve.get(&(v, false)) {
            Self::dispatch_resolve(pass, pipeline, std::slice::from_ref(groups), image);
        }
    }
}

/// A uniform buffer of one [`ResolveChunk`], labelled `label`.
pub(super) fn chunk_buffer(
    device: &wgpu::Device,
    label: &str,
    chunk: ResolveChunk,
) -> wgpu::Buffer {
    use wgpu::util::DeviceExt;
    device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some(label),
        contents: bytemuck::bytes_of(&chunk),
        usage: wgpu::BufferUsages::UNIFORM,
    })
}
