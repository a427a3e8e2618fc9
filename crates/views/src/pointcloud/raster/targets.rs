//! The buffers a frame writes: the [`VisibilityBuffer`] of the raster passes and the resolve's
//! [`ResolveImage`], in pieces of whole rows, and the rasterizer's makers of both.

use super::{RasterPath, Rasterizer};
use crate::gpu::layout;
use crate::pointcloud::pieces::{Piece, pieces};

/// The visibility buffer of one size: per pixel the nearest depth key and `!index` of the point
/// there (0: none), in [`pieces`](crate::pointcloud::pieces) of whole rows (one where the whole
/// target fits the device's binding limits). The 32-bit path keeps them in two arrays of u32 a
/// piece; the 64-bit path in one buffer of a u64 per pixel (the id word, then the depth key), which
/// a piece's `depth` and `ids` then both are.
pub struct VisibilityBuffer {
    /// Size in pixels.
    pub size: (u32, u32),
    /// The pieces, top to bottom.
    pub pieces: Vec<VisibilityPiece>,
    /// Whether each piece's `depth` and `ids` are one packed buffer (the 64-bit path).
    pub packed: bool,
}

/// One piece of a [`VisibilityBuffer`]: rows `piece.row0 .. piece.row0 + piece.rows` of the
/// target, `width` pixels a row.
pub struct VisibilityPiece {
    /// Its rows.
    pub piece: Piece,
    /// Depth keys (pass 1), or the packed buffer.
    pub depth: wgpu::Buffer,
    /// `!index` of the visible point (pass 2; 0 where no point landed), or the packed buffer.
    pub ids: wgpu::Buffer,
    /// `piece` in a uniform buffer (the `Piece` the passes bind).
    pub uniform: wgpu::Buffer,
}

impl VisibilityBuffer {
    /// Per pixel of the core rows of piece `k` the id word (`!index`, 0: none) of `bytes`, a
    /// copy of its [`ids`](VisibilityPiece::ids) ([`ids_bytes`](Self::ids_bytes) bytes), row by
    /// row; the pieces' words one after the other are the whole target's.
    pub fn id_words(&self, k: usize, bytes: &[u8]) -> Vec<u32> {
        let words: &[u32] = bytemuck::cast_slice(bytes);
        let Some(p) = self.pieces.get(k).map(|p| p.piece) else {
            return Vec::new();
        };
        let width = self.size.0 as usize;
        let step = if self.packed { 2 } else { 1 };
        let from = (p.core0 - p.row0) as usize * width * step;
        let to = (from + p.core_rows as usize * width * step).min(words.len());
        words[from.min(to)..to]
            .iter()
            .step_by(step)
            .copied()
            .collect()
    }

    /// Bytes of piece `k`'s [`ids`](VisibilityPiece::ids) to copy for
    /// [`id_words`](Self::id_words) (0 past the last piece).
    pub fn ids_bytes(&self, k: usize) -> u64 {
        self.pieces.get(k).map_or(0, |p| {
            u64::from(self.size.0) * u64::from(p.piece.rows) * if self.packed { 8 } else { 4 }
        })
    }
}

/// The resolve's output: the colour of every pixel as 8-bit RGBA (BGRA for a `Bgra8Unorm`
/// target), a u32 a pixel with R (B) in the low byte, rows of [`pitch`](Self::pitch) words; a
/// compute pass writes it (`resolve.wgsl`) and [`copy_to`](Self::copy_to) brings it into the
/// target texture (the row pitch is that of a buffer-to-texture copy).
/// The image is in the pieces of the [`VisibilityBuffer`] of its size: piece k's buffer holds
/// the core rows of the visibility buffer's piece k.
pub struct ResolveImage {
    /// Size in pixels.
    pub size: (u32, u32),
    /// Words (pixels) per row: the width rounded up to a multiple of 64 (256 bytes).
    pub pitch: u32,
    /// The pieces, top to bottom.
    pub pieces: Vec<ImagePiece>,
}

/// One piece of a [`ResolveImage`]: target rows `piece.core0 .. piece.core0 + piece.core_rows`.
pub struct ImagePiece {
    /// Its rows.
    pub piece: Piece,
    /// The pixels, `pitch × core_rows` words (STORAGE | COPY_SRC | COPY_DST: a caller may fill
    /// it first, as the tests do, so that a pixel no dispatch writes keeps a known value).
    pub buffer: wgpu::Buffer,
    pub(super) group: wgpu::BindGroup,
}

impl ResolveImage {
    /// Words per row of an image `width` pixels wide: `width` rounded up to
    /// `COPY_BYTES_PER_ROW_ALIGNMENT / 4`.
    pub fn pitch_of(width: u32) -> u32 {
        let align = wgpu::COPY_BYTES_PER_ROW_ALIGNMENT / 4;
        width.max(1).div_ceil(align) * align
    }

    /// Records the copy of the image into `texture` (its format that of the [`Rasterizer`],
    /// COPY_DST among its usages), over the size both share: one copy per piece.
    pub fn copy_to(&self, encoder: &mut wgpu::CommandEncoder, texture: &wgpu::Texture) {
        let width = self.size.0.min(texture.width());
        let bottom = self.size.1.min(texture.height());
        for p in &self.pieces {
            let (y0, rows) = (p.piece.core0, p.piece.core_rows);
            if y0 >= bottom || width == 0 {
                continue;
            }
            encoder.copy_buffer_to_texture(
                wgpu::TexelCopyBufferInfo {
                    buffer: &p.buffer,
                    layout: wgpu::TexelCopyBufferLayout {
                        offset: 0,
                        bytes_per_row: Some(self.pitch * 4),
                        rows_per_image: None,
                    },
                },
                wgpu::TexelCopyTextureInfo {
                    texture,
                    mip_level: 0,
                    origin: wgpu::Origin3d { x: 0, y: y0, z: 0 },
                    aspect: wgpu::TextureAspect::All,
                },
                wgpu::Extent3d {
                    width,
                    height: rows.min(bottom - y0),
                    depth_or_array_layers: 1,
                },
            );
        }
    }
}

impl Rasterizer {
    /// The resolve's output for a target of `size` pixels (each side ≥ 1), in the pieces of
    /// this rasterizer's visibility buffer of that size: see [`ResolveImage`].
    pub fn image(&self, device: &wgpu::Device, size: (u32, u32)) -> ResolveImage {
        let size = (size.0.max(1), size.1.max(1));
        let pitch = ResolveImage::pitch_of(size.0);
        let pieces = pieces(size, self.piece_limit)
            .into_iter()
            .enumerate()
            .map(|(k, piece)| {
                let buffer = device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some(&format!("pointcloud:resolve:image:{k}")),
                    size: u64::from(pitch) * u64::from(piece.core_rows) * 4,
                    usage: wgpu::BufferUsages::STORAGE
                        | wgpu::BufferUsages::COPY_SRC
                        | wgpu::BufferUsages::COPY_DST,
                    mapped_at_creation: false,
                });
                let group = layout::bind_group(
                    device,
                    &format!("pointcloud:resolve:image:{k}:group"),
                    &self.image_layout,
                    &[buffer.as_entire_binding()],
                );
                ImagePiece {
                    piece,
                    buffer,
                    group,
                }
            })
            .collect();
        ResolveImage {
            size,
            pitch,
            pieces,
        }
    }

    /// A visibility buffer of `size` pixels (each side ≥ 1) for this rasterizer's path, in as
    /// many pieces as [`piece_limit`](Self::piece_limit) needs ([`pieces`]).
    pub fn target(&self, device: &wgpu::Device, size: (u32, u32)) -> VisibilityBuffer {
        use wgpu::util::DeviceExt;
        let size = (size.0.max(1), size.1.max(1));
        let buffer = |label: String, bytes: u64| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(&label),
                size: bytes,
                usage: wgpu::BufferUsages::STORAGE
                    | wgpu::BufferUsages::COPY_DST
                    | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            })
        };
        let packed = self.path == RasterPath::Atomic64;
        let pieces = pieces(size, self.piece_limit)
            .into_iter()
            .enumerate()
            .map(|(k, piece)| {
                let pixels = u64::from(size.0) * u64::from(piece.rows);
                let uniform = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                    label: Some(&format!("pointcloud:visibility:piece:{k}")),
                    contents: bytemuck::bytes_of(&piece),
                    usage: wgpu::BufferUsages::UNIFORM,
                });
                let (depth, ids) = if packed {
                    let b = buffer(format!("pointcloud:visibility:packed:{k}"), pixels * 8);
                    (b.clone(), b)
                } else {
                    (
                        buffer(format!("pointcloud:visibility:depth:{k}"), pixels * 4),
                        buffer(format!("pointcloud:visibility:ids:{k}"), pixels * 4),
                    )
                };
                VisibilityPiece {
                    piece,
                    depth,
                    ids,
                    uniform,
                }
            })
            .collect();
        VisibilityBuffer {
            size,
            pieces,
            packed,
        }
    }
}
