//! How the scene texture reaches the output: [`Composite::Copy`] (the default) copies it into
//! its rect of the output between the clear and egui's shapes, where the output can take a copy
//! (same format, `COPY_DST`), else falls back to [`Composite::Blit`]; the blit draws it texel
//! for pixel into its viewport of the output at the start of the egui pass, before any egui
//! shape; [`Composite::EguiImage`] hands it to egui as an image (a blended, sampled quad through
//! egui's own shader), as vizdeck did before. All give the same pixels (`tests/composite.rs`);
//! on a software rasterizer the copy is a memcpy and the blit a fraction of the image's fill
//! (BENCHMARKS.md, "Software rasterizer").

use crate::gpu::layout;
use crate::gpu::shaders::{RenderOptions, SCENE_BLIT};

/// How the scene texture reaches the output (`--composite`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Composite {
    /// `copy_texture_to_texture` into the scene's rect of the output, between a clear pass and
    /// egui's pass; [`Composite::Blit`] where the output's format is not the scene's or the
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
