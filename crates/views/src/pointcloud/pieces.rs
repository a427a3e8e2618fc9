//! The visibility buffer and the resolve's image in pieces: bands of whole rows, each in buffers
//! of its own within the device's `max_storage_buffer_binding_size` and `max_buffer_size`, so a
//! target of any size the texture limit allows can be bound (a 6000 × 4000 target's packed
//! visibility buffer alone is 192 MB, over lavapipe's 128 MiB binding limit; 16384 × 16384 is
//! 2 GiB, over the H100's).
//!
//! A piece resolves its *core* rows and its buffers also hold [`PIECE_HALO`] rows on each side
//! (where the target has them), which the raster passes fill exactly as the neighbouring piece
//! fills them (the same points, the same nearest-then-smallest-id rule: the result at a pixel
//! does not depend on which buffer holds it). So the resolve's point radius and eye-dome lighting,
//! and the pick, which read up to [`PIECE_HALO`] rows away, read only their own piece's buffers,
//! and an image resolved in pieces is the image resolved whole, bit for bit.
//!
//! Where one piece fits (every size up to about 16 M pixels on lavapipe, 268 M on an H100 or
//! H200), it is the whole target without a halo and every pass is one dispatch as before; only
//! an over-limit target pays a raster dispatch per piece (the quantized path skips the batches
//! whose box misses the piece's rows: `qbatch_in_view`).

use super::raster::MAX_RADIUS;

/// Rows a piece's buffers hold beyond its core on each side: the farthest row the resolve (point
/// radius, eye-dome lighting's neighbours) and the pick read from a pixel.
pub(crate) const PIECE_HALO: u32 = MAX_RADIUS;

/// Bytes a pixel takes in a piece's largest buffer, for [`pieces`]: the 64-bit path's packed
/// visibility word (8; the 32-bit path's two arrays take 4 each, so both paths and the image,
/// 4 bytes a pixel, split alike).
pub(crate) const PIECE_PIXEL_BYTES: u64 = 8;

/// `Piece` of `shaders/common/pointcloud.wgsl` (16 bytes): one band of rows of a target, as the
/// raster passes, the resolve and the pick read it (a uniform buffer per piece).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct Piece {
    /// First target row its visibility buffers hold.
    pub row0: u32,
    /// Rows they hold (its core plus the halo).
    pub rows: u32,
    /// First row it resolves (row 0 of its piece of the image).
    pub core0: u32,
    /// Rows it resolves.
    pub core_rows: u32,
}

impl Piece {
    /// Whether target row `y` is one this piece resolves.
    pub fn resolves(&self, y: u32) -> bool {
        y.wrapping_sub(self.core0) < self.core_rows
    }
}

/// The bytes one piece's buffer may take on a device of `limits`: the smaller of
/// `max_storage_buffer_binding_size` and `max_buffer_size`.
pub fn piece_limit(limits: &wgpu::Limits) -> u64 {
    limits
        .max_storage_buffer_binding_size
        .min(limits.max_buffer_size)
}

/// Bytes a row of `width` pixels takes in a piece's largest buffer: [`PIECE_PIXEL_BYTES`] a pixel
/// for the visibility buffer, or the image's row pitch (4 bytes a pixel, rows rounded up to 256
/// bytes), whichever is more.
pub fn row_bytes(width: u32) -> u64 {
    let pitch = u64::from(super::raster::ResolveImage::pitch_of(width)) * 4;
    (u64::from(width.max(1)) * PIECE_PIXEL_BYTES).max(pitch)
}

/// The pieces of a target of `size` pixels whose buffers take at most `limit` bytes each (see
/// [`piece_limit`]), top to bottom: their cores tile rows `0 .. height` in order; each holds
/// its core and [`PIECE_HALO`] rows above and below it, clipped to the target. One piece, the
/// whole target with no halo, where the whole target fits. A limit too small for one core row
/// and its halo still gives pieces of one core row (their buffers then exceed it: no device
/// is that small, WebGPU's minimum binding size being 128 MiB).
pub fn pieces(size: (u32, u32), limit: u64) -> Vec<Piece> {
    let (w, h) = (size.0.max(1), size.1.max(1));
    let fit = limit / row_bytes(w);
    if fit >= u64::from(h) {
        return vec![Piece {
            row0: 0,
            rows: h,
            core0: 0,
            core_rows: h,
        }];
    }
    let core = (fit.saturating_sub(2 * u64::from(PIECE_HALO)) as u32).max(1);
    let mut out = Vec::with_capacity(h.div_ceil(core) as usize);
    let mut core0 = 0;
    while core0 < h {
        let core_rows = core.min(h - core0);
        let row0 = core0.saturating_sub(PIECE_HALO);
        let end = (core0 + core_rows + PIECE_HALO).min(h);
        out.push(Piece {
            row0,
            rows: end - row0,
            core0,
            core_rows,
        });
        core0 += core_rows;
    }
    out
}

/// The index of the piece of `pieces` that resolves row `y` (the last one for a row past the
/// target, the first for an empty list).
pub fn piece_of_row(pieces: &[Piece], y: u32) -> usize {
    pieces
        .iter()
        .position(|p| p.resolves(y))
        .unwrap_or(pieces.len().saturating_sub(1))
}

/// One bind group per piece of a target (in [`pieces`]' order), for the raster passes, the
/// resolve or the pick: a dispatch per piece.
pub struct PieceGroups {
    /// The groups, one per piece.
    pub groups: Vec<wgpu::BindGroup>,
    /// The pieces they bind.
    pub pieces: Vec<Piece>,
}

impl PieceGroups {
    /// The group and piece of the piece that resolves row `y` (see [`piece_of_row`]); `None`
    /// when there is none.
    pub fn for_row(&self, y: u32) -> Option<(&wgpu::BindGroup, &Piece)> {
        let i = piece_of_row(&self.pieces, y);
        Some((self.groups.get(i)?, self.pieces.get(i)?))
    }
}

/// The WGSL mirror of [`Piece`], for the layout test.
pub(crate) fn wgsl_mirrors() -> Vec<crate::gpu::mirror::Mirror> {
    use crate::gpu::mirror::wgsl_mirror;
    vec![wgsl_mirror!(Piece => "Piece" { row0, rows, core0, core_rows })]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cores tile the rows in order, each piece holds its core and the halo (clipped),
    /// every buffer is within the limit, and the halo rows are whole.
    #[test]
    fn pieces_tile_the_target_within_the_limit() {
        for (size, limit) in [
            ((6000, 4000), 128u64 << 20),
            ((8300, 2200), 128 << 20),
            ((16384, 16384), 128 << 20),
            ((16384, 16384), (2 << 30) - 1),
            ((640, 480), 640 * 8 * 50),
            ((7, 100), 256 * 10),
            ((1920, 1080), 128 << 20),
        ] {
            let ps = pieces(size, limit);
            let mut next = 0;
            for p in &ps {
                assert_eq!(p.core0, next, "{size:?} {limit}: {ps:?}");
                assert!(p.core_rows >= 1);
                next += p.core_rows;
                assert_eq!(p.row0, p.core0.saturating_sub(PIECE_HALO));
                assert_eq!(
                    p.row0 + p.rows,
                    (p.core0 + p.core_rows + PIECE_HALO).min(size.1)
                );
                if ps.len() > 1 {
                    assert!(
                        u64::from(p.rows) * row_bytes(size.0) <= limit,
                        "{size:?} {limit}: {p:?}"
                    );
                }
                for y in p.core0..p.core0 + p.core_rows {
                    assert_eq!(
                        piece_of_row(&ps, y),
                        ps.iter().position(|q| q == p).unwrap()
                    );
                }
            }
            assert_eq!(next, size.1, "{size:?} {limit}");
            let whole = u64::from(size.1) * row_bytes(size.0) <= limit;
            assert_eq!(ps.len() == 1, whole, "{size:?} {limit}: {ps:?}");
        }
        // 6000 × 4000 at 128 MiB: rows of 48,000 bytes, 2,796 fit a piece: cores of 2,790 rows
        // (3 halo rows each side), then the 1,210 left.
        let ps = pieces((6000, 4000), 128 << 20);
        assert_eq!(
            ps.iter().map(|p| p.core_rows).collect::<Vec<_>>(),
            [2790, 1210]
        );
    }
}
