//! GPU → CPU readback of textures (screenshots) and PNG writing.
//!
//! `copy_texture_to_buffer` needs `bytes_per_row` to be a multiple of
//! [`wgpu::COPY_BYTES_PER_ROW_ALIGNMENT`] (256), so rows are padded on the GPU side and unpadded
//! on the CPU side; the PNG holds exactly `width × height` RGBA pixels.

use std::path::Path;

/// Errors of readback and PNG export.
#[derive(Debug, thiserror::Error)]
pub enum ReadbackError {
    /// The texture format is not an 8-bit RGBA/BGRA format.
    #[error("cannot read back texture format {0:?} (only 8-bit RGBA/BGRA)")]
    Format(wgpu::TextureFormat),
    /// Mapping the buffer failed.
    #[error("mapping the readback buffer failed: {0}")]
    Map(String),
    /// Writing the PNG failed.
    #[error("screenshot '{path}': {reason}")]
    Png {
        /// The output path.
        path: String,
        /// What went wrong.
        reason: String,
    },
}

/// `width × 4` rounded up to the 256-byte copy alignment.
pub fn padded_bytes_per_row(width: u32) -> u32 {
    (width * 4).next_multiple_of(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT)
}

/// Removes row padding: `padded` has `height` rows of `padded_bpr` bytes, each starting with
/// `width × 4` bytes of pixels. Returns `width × height × 4` bytes. When `bgra` is true the red and
/// blue channels are swapped so the result is RGBA.
pub fn unpad_rows(padded: &[u8], width: u32, height: u32, padded_bpr: u32, bgra: bool) -> Vec<u8> {
    let row = width as usize * 4;
    let mut out = Vec::with_capacity(row * height as usize);
    for y in 0..height as usize {
        let start = y * padded_bpr as usize;
        out.extend_from_slice(&padded[start..start + row]);
    }
    if bgra {
        for px in out.chunks_exact_mut(4) {
            px.swap(0, 2);
        }
    }
    out
}

/// Copies `texture` (8-bit RGBA or BGRA, `COPY_SRC`) into a buffer and waits for it: returns
/// tightly packed RGBA8, `width × height × 4` bytes. Blocks; used for screenshots in headless mode
/// and tests, never per frame in the window.
pub fn read_texture_rgba(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    texture: &wgpu::Texture,
) -> Result<Vec<u8>, ReadbackError> {
    let format = texture.format();
    let bgra = match format.remove_srgb_suffix() {
        wgpu::TextureFormat::Rgba8Unorm => false,
        wgpu::TextureFormat::Bgra8Unorm => true,
        f => return Err(ReadbackError::Format(f)),
    };
    let (width, height) = (texture.width(), texture.height());
    let bpr = padded_bytes_per_row(width);
    let buffer = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("readback:screenshot"),
        size: bpr as u64 * height as u64,
        usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ,
        mapped_at_creation: false,
    });
    let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
        label: Some("readback:screenshot"),
    });
    encoder.copy_texture_to_buffer(
        texture.as_image_copy(),
        wgpu::TexelCopyBufferInfo {
            buffer: &buffer,
            layout: wgpu::TexelCopyBufferLayout {
                offset: 0,
                bytes_per_row: Some(bpr),
                rows_per_image: Some(height),
            },
        },
        texture.size(),
    );
    queue.submit([encoder.finish()]);
    let bytes = map_blocking(device, &buffer)?;
    let out = unpad_rows(&bytes, width, height, bpr, bgra);
    Ok(out)
}

/// Maps a whole `MAP_READ` buffer, waits, copies its contents out and unmaps it.
pub fn map_blocking(
    device: &wgpu::Device,
    buffer: &wgpu::Buffer,
) -> Result<Vec<u8>, ReadbackError> {
    let slice = buffer.slice(..);
    let (tx, rx) = std::sync::mpsc::channel();
    slice.map_async(wgpu::MapMode::Read, move |r| {
        let _ = tx.send(r);
    });
    device
        .poll(wgpu::PollType::wait_indefinitely())
        .map_err(|e| ReadbackError::Map(e.to_string()))?;
    match rx.recv() {
        Ok(Ok(())) => {}
        Ok(Err(e)) => return Err(ReadbackError::Map(e.to_string())),
        Err(e) => return Err(ReadbackError::Map(e.to_string())),
    }
    let bytes = {
        let view = slice
            .get_mapped_range()
            .map_err(|e| ReadbackError::Map(e.to_string()))?;
        view.to_vec()
    };
    buffer.unmap();
    Ok(bytes)
}

/// Writes tightly packed RGBA8 pixels as a PNG (8-bit RGBA, no gamma chunk).
pub fn write_png(path: &Path, width: u32, height: u32, rgba: &[u8]) -> Result<(), ReadbackError> {
    let err = |reason: String| ReadbackError::Png {
        path: path.display().to_string(),
        reason,
    };
    let file = std::fs::File::create(path).map_err(|e| err(e.to_string()))?;
    let mut enc = png::Encoder::new(std::io::BufWriter::new(file), width, height);
    enc.set_color(png::ColorType::Rgba);
    enc.set_depth(png::BitDepth::Eight);
    let mut writer = enc.write_header().map_err(|e| err(e.to_string()))?;
    writer
        .write_image_data(rgba)
        .map_err(|e| err(e.to_string()))?;
    writer.finish().map_err(|e| err(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn padding_rounds_to_256() {
        assert_eq!(padded_bytes_per_row(1), 256);
        assert_eq!(padded_bytes_per_row(64), 256);
        assert_eq!(padded_bytes_per_row(65), 512);
        assert_eq!(padded_bytes_per_row(1366), 5632);
    }

    #[test]
    fn unpad_keeps_pixels_and_swaps_bgra() {
        // 3×2 image, padded rows of 256 bytes; pixel (x, y) = [x, y, 100 + x, 200].
        let (w, h, bpr) = (3u32, 2u32, 256u32);
        let mut padded = vec![0xEEu8; (bpr * h) as usize];
        for y in 0..h {
            for x in 0..w {
                let i = (y * bpr + x * 4) as usize;
                padded[i..i + 4].copy_from_slice(&[x as u8, y as u8, 100 + x as u8, 200]);
            }
        }
        let rgba = unpad_rows(&padded, w, h, bpr, false);
        assert_eq!(rgba.len(), 24);
        assert_eq!(&rgba[12..16], &[0, 1, 100, 200]);
        let swapped = unpad_rows(&padded, w, h, bpr, true);
        assert_eq!(&swapped[12..16], &[100, 1, 0, 200]);
        assert!(!swapped.contains(&0xEE));
    }
}
