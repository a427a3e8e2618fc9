//! What the compute rasterizer's tests share (tests/app/pointcloud_raster.rs,
//! tests/app/pointcloud_quantized.rs): the visibility buffer read back as point ids, and the image
//! the resolve writes.

use vizdeck::gpu::Gpu;
use vizdeck::pointcloud::raster::{Rasterizer, ResolveImage, ResolveParams, VisibilityBuffer};

/// Records into `enc` the clear of `target`, then `record` (the raster passes) in a compute pass
/// labelled `label`.
pub fn clear_and_raster(
    enc: &mut wgpu::CommandEncoder,
    r: &Rasterizer,
    target: &VisibilityBuffer,
    label: &str,
    record: impl FnOnce(&mut wgpu::ComputePass<'_>),
) {
    r.clear(enc, target);
    let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
        label: Some(label),
        timestamp_writes: None,
    });
    record(&mut pass);
}

/// Pixels whose ids differ between `got` and `want`.
pub fn differing(got: &[Option<u32>], want: &[Option<u32>]) -> usize {
    got.iter().zip(want).filter(|(g, w)| g != w).count()
}

/// The point id of every pixel of `target` (`None` where no point landed), read back after the
/// GPU is done: each piece's core rows, top to bottom.
pub fn read_ids(gpu: &Gpu, target: &VisibilityBuffer) -> Vec<Option<u32>> {
    let mut out = Vec::with_capacity(target.size.0 as usize * target.size.1 as usize);
    for (k, piece) in target.pieces.iter().enumerate() {
        let bytes = gpu
            .read_buffer_blocking(&piece.ids, 0, target.ids_bytes(k))
            .expect("read back");
        out.extend(
            target
                .id_words(k, &bytes)
                .iter()
                .map(|&v| (v != 0).then_some(!v)),
        );
    }
    out
}

/// The bytes of `image` (rows of `image.pitch` words), read back after the GPU is done: each
/// piece's rows, top to bottom.
pub fn read_image(gpu: &Gpu, image: &ResolveImage) -> Vec<u8> {
    image
        .pieces
        .iter()
        .flat_map(|p| {
            gpu.read_buffer_blocking(&p.buffer, 0, p.buffer.size())
                .expect("image")
        })
        .collect()
}

/// The resolve's parameters for a `size` image on a black background, in a uniform buffer.
pub fn resolve_params(d: &wgpu::Device, label: &str, size: (u32, u32)) -> wgpu::Buffer {
    use wgpu::util::DeviceExt;
    let rp = ResolveParams {
        width: size.0,
        height: size.1,
        pitch: ResolveImage::pitch_of(size.0),
        background: [0.0, 0.0, 0.0, 1.0],
        ..bytemuck::Zeroable::zeroed()
    };
    d.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some(label),
        contents: bytemuck::bytes_of(&rp),
        usage: wgpu::BufferUsages::UNIFORM,
    })
}

/// A texture of `size` in the scene's format the resolve's image is copied into and a test
/// reads back (a frame's render pass can load it too).
pub fn resolve_image(d: &wgpu::Device, label: &str, size: (u32, u32)) -> wgpu::Texture {
    d.create_texture(&wgpu::TextureDescriptor {
        label: Some(label),
        size: wgpu::Extent3d {
            width: size.0,
            height: size.1,
            depth_or_array_layers: 1,
        },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format: vizdeck::scene::SCENE_FORMAT,
        usage: wgpu::TextureUsages::RENDER_ATTACHMENT
            | wgpu::TextureUsages::COPY_SRC
            | wgpu::TextureUsages::COPY_DST,
        view_formats: &[],
    })
}

/// Records `record` (resolve dispatches into a fresh image of `r` filled with white, so a pixel
/// the resolve misses stays white) in a compute pass labelled `label`, then the image's copy
/// into `texture`.
#[allow(clippy::disallowed_methods)] // a test frame outside the deck fills its own buffer
pub fn resolve_into(
    gpu: &Gpu,
    enc: &mut wgpu::CommandEncoder,
    r: &Rasterizer,
    texture: &wgpu::Texture,
    label: &str,
    record: impl FnOnce(&mut wgpu::ComputePass<'_>, &ResolveImage),
) {
    let image = r.image(&gpu.device, (texture.width(), texture.height()));
    for p in &image.pieces {
        let white = vec![0xffu8; p.buffer.size() as usize];
        gpu.queue.write_buffer(&p.buffer, 0, &white);
    }
    {
        let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some(label),
            timestamp_writes: None,
        });
        record(&mut pass, &image);
    }
    image.copy_to(enc, texture);
}
