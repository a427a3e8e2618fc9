//! How the scene texture reaches the output: [`Composite::Copy`] (the default) copies it into
//! its rect of the output between the clear and egui's shapes, where the output can take a copy
//! (same format, `COPY_DST`), else falls back to [`Composite::Blit`]; the blit draws it texel
//! for pixel into its viewport of the output at the start of the egui pass, before any egui
//! shape; [`Composite::EguiImage`] hands it to egui as an image (a blended, sampled quad through
//! egui's own shader), as vizdeck did before. All give the same pixels (`tests/app/composite.rs`);
//! on a software rasterizer the copy is a memcpy and the blit a fraction of the image's fill
//! (BENCHMARKS.md, "Software rasterizer").

use crate::gpu::layout;
use crate::gpu::shader;
use crate::gpu::shaders::{RenderOptions, ShaderSource};

/// The scene texture → its viewport of the output, texel for pixel (render; the app's own
/// `shaders/deck/scene_blit.wgsl`, its only shader).
pub const SCENE_BLIT: ShaderSource = shader!("deck/scene_blit.wgsl");

/// How the scene texture reaches the output (`--composite`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Composite {
    /// `copy_texture_to_texture` into the scene's rect of the output, between a clear pass and
    /// egui's pass; the blit (below) where the output's format is not the scene's or the
    /// output cannot be copied into.
    #[default]
    Copy,
    /// A full-viewport triangle that loads the scene texel under each pixel: no sampler, no
    /// blending, no colour conversion.
    Blit,
    /// An egui image (a textured quad through egui's shader, alpha-blended over the panel).
    EguiImage,
}

impl Composite {
    /// The flag's spelling (`copy`, `blit`, `egui-image`).
    pub fn name(self) -> &'static str {
        match self {
            Composite::Copy => "copy",
            Composite::Blit => "blit",
            Composite::EguiImage => "egui-image",
        }
    }
}

/// The blit's pipeline (drawing into the output format) and its bind group layout (binding 0:
/// the scene texture, loaded, not sampled).
pub(super) struct SceneBlit {
    pipeline: wgpu::RenderPipeline,
    layout: wgpu::BindGroupLayout,
}

impl SceneBlit {
    /// The pipeline for an output of `format`.
    pub(super) fn new(device: &wgpu::Device, format: wgpu::TextureFormat) -> SceneBlit {
        let label = "deck:scene_blit";
        let layout = layout::bind_group_layout(
            device,
            label,
            &[layout::texture_2d(0, wgpu::ShaderStages::FRAGMENT, false)],
        );
        let pl = layout::pipeline_layout(device, label, &[&layout]);
        let pipeline = SCENE_BLIT.render_pipeline(
            device,
            label,
            &pl,
            &RenderOptions {
                format,
                ..Default::default()
            },
        );
        SceneBlit { pipeline, layout }
    }

    /// The bind group of one scene texture view.
    pub(super) fn bind(&self, device: &wgpu::Device, view: &wgpu::TextureView) -> wgpu::BindGroup {
        layout::bind_group(
            device,
            "deck:scene_blit:group",
            &self.layout,
            &[wgpu::BindingResource::TextureView(view)],
        )
    }

    /// Draws the texture of `group` into `rect` = (x, y, w, h) output pixels of a pass whose
    /// target is `out_size`; the rect is cut to the target (the texel mapping stays one to one
    /// only while it fits, which the layout ensures). Nothing is drawn for an empty rect.
    pub(super) fn draw(
        &self,
        pass: &mut wgpu::RenderPass<'_>,
        group: &wgpu::BindGroup,
        rect: (u32, u32, u32, u32),
        out_size: (u32, u32),
    ) {
        let (x, y) = (rect.0.min(out_size.0), rect.1.min(out_size.1));
        let w = rect.2.min(out_size.0 - x);
        let h = rect.3.min(out_size.1 - y);
        if w == 0 || h == 0 {
            return;
        }
        pass.set_viewport(x as f32, y as f32, w as f32, h as f32, 0.0, 1.0);
        pass.set_scissor_rect(x, y, w, h);
        pass.set_pipeline(&self.pipeline);
        pass.set_bind_group(0, group, &[]);
        pass.draw(0..3, 0..1);
    }
}

/// The background around the scene rect when the scene image is copied
/// ([`Composite::Copy`]): a texture of the output's size filled once with the clear colour, the
/// rects around the scene copied from it every frame, so every pixel of the output is written by
/// a copy and egui's pass loads instead of clearing.
#[derive(Default)]
pub(super) struct Background {
    texture: Option<wgpu::Texture>,
    color: Option<[u8; 4]>,
}

impl Background {
    /// Copies the background into every pixel of `output` outside `rect` = (x, y, w, h)
    /// (the top and bottom bands over the full width, the left and right ones beside the
    /// rect), (re)making the background texture (output size, `output`'s format without sRGB so
    /// `color`'s values are stored as they are, cleared to `color`) when the output's size,
    /// format or the colour changed.
    pub(super) fn fill_around(
        &mut self,
        device: &wgpu::Device,
        encoder: &mut wgpu::CommandEncoder,
        output: &wgpu::Texture,
        rect: (u32, u32, u32, u32),
        color: wgpu::Color,
    ) {
        let (ow, oh) = (output.width(), output.height());
        let format = output.format().remove_srgb_suffix();
        let key = [color.r, color.g, color.b, color.a].map(|c| (c * 255.0).round() as u8);
        let stale = self
            .texture
            .as_ref()
            .is_none_or(|t| t.width() != ow || t.height() != oh || t.format() != format)
            || self.color != Some(key);
        if stale {
            let texture = device.create_texture(&wgpu::TextureDescriptor {
                label: Some("deck:background"),
                size: wgpu::Extent3d {
                    width: ow,
                    height: oh,
                    depth_or_array_layers: 1,
                },
                mip_level_count: 1,
                sample_count: 1,
                dimension: wgpu::TextureDimension::D2,
                format,
                usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
                view_formats: &[],
            });
            let view = texture.create_view(&wgpu::TextureViewDescriptor {
                label: Some("deck:background:view"),
                ..Default::default()
            });
            let _ = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
                label: Some("deck:background:clear"),
                color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                    view: &view,
                    depth_slice: None,
                    resolve_target: None,
                    ops: wgpu::Operations {
                        load: wgpu::LoadOp::Clear(color),
                        store: wgpu::StoreOp::Store,
                    },
                })],
                depth_stencil_attachment: None,
                timestamp_writes: None,
                occlusion_query_set: None,
                multiview_mask: None,
            });
            self.texture = Some(texture);
            self.color = Some(key);
        }
        let Some(bg) = &self.texture else { return };
        let (x, y, w, h) = rect;
        let (x, y) = (x.min(ow), y.min(oh));
        let (w, h) = (w.min(ow - x), h.min(oh - y));
        let bands = [
            (0, 0, ow, y),
            (0, y + h, ow, oh - (y + h)),
            (0, y, x, h),
            (x + w, y, ow - (x + w), h),
        ];
        for (bx, by, bw, bh) in bands {
            if bw == 0 || bh == 0 {
                continue;
            }
            let at = wgpu::Origin3d { x: bx, y: by, z: 0 };
            encoder.copy_texture_to_texture(
                wgpu::TexelCopyTextureInfo {
                    texture: bg,
                    mip_level: 0,
                    origin: at,
                    aspect: wgpu::TextureAspect::All,
                },
                wgpu::TexelCopyTextureInfo {
                    texture: output,
                    mip_level: 0,
                    origin: at,
                    aspect: wgpu::TextureAspect::All,
                },
                wgpu::Extent3d {
                    width: bw,
                    height: bh,
                    depth_or_array_layers: 1,
                },
            );
        }
    }
}

/// Whether a scene image of `scene_format` can be copied into `output`: a single-sample
/// texture of that format (sRGB or not) that takes copies.
pub(super) fn copyable(scene_format: wgpu::TextureFormat, output: &wgpu::Texture) -> bool {
    output.format().remove_srgb_suffix() == scene_format.remove_srgb_suffix()
        && output.usage().contains(wgpu::TextureUsages::COPY_DST)
        && output.sample_count() == 1
}

/// Copies `scene` from its origin into `rect` = (x, y, w, h) pixels of `output`, cut to both
/// textures (the blit's mapping: texel (i, j) to pixel (x + i, y + j)). Returns the rect
/// written (w or h 0 when nothing was).
pub(super) fn copy_into_rect(
    encoder: &mut wgpu::CommandEncoder,
    scene: &wgpu::Texture,
    output: &wgpu::Texture,
    rect: (u32, u32, u32, u32),
) -> (u32, u32, u32, u32) {
    let (ow, oh) = (output.width(), output.height());
    let (x, y) = (rect.0.min(ow), rect.1.min(oh));
    let w = rect.2.min(scene.width()).min(ow - x);
    let h = rect.3.min(scene.height()).min(oh - y);
    if w == 0 || h == 0 {
        return (x, y, 0, 0);
    }
    encoder.copy_texture_to_texture(
        scene.as_image_copy(),
        wgpu::TexelCopyTextureInfo {
            texture: output,
            mip_level: 0,
            origin: wgpu::Origin3d { x, y, z: 0 },
            aspect: wgpu::TextureAspect::All,
        },
        wgpu::Extent3d {
            width: w,
            height: h,
            depth_or_array_layers: 1,
        },
    );
    (x, y, w, h)
}
