//! The scene's render targets: the scene texture every scene paints into (sized to the scene
//! panel, clamped to the adapter's limit) and the depth
//! attachment of scenes that ask for one.
//! The texture reaches the output through [`super::composite`].

use super::{Deck, SceneSlot};
use crate::gpu::Gpu;

/// The scene texture ([`Gpu::scene_format`]), its egui id
/// ([`Composite::EguiImage`](super::Composite::EguiImage)) and its blit bind group
/// ([`Composite::Blit`](super::Composite::Blit)).
pub(super) struct SceneTarget {
    pub(super) texture: wgpu::Texture,
    pub(super) view: wgpu::TextureView,
    pub(super) egui_id: egui::TextureId,
    pub(super) blit_group: wgpu::BindGroup,
}

/// Depth attachment of the scene pass, for scenes that ask for one
/// ([`Scene::depth_format`](crate::scene::Scene::depth_format)).
pub(super) struct SceneDepth {
    pub(super) format: wgpu::TextureFormat,
    pub(super) size: (u32, u32),
    pub(super) view: wgpu::TextureView,
}

impl Deck {
    /// (Re)creates the depth attachment when the active scene asks for one
    /// ([`Scene::depth_format`](crate::scene::Scene::depth_format)) of another format or size.
    pub(super) fn ensure_depth(&mut self, gpu: &Gpu) {
        if let SceneSlot::Ready(scene) = &self.slots[self.active]
            && let Some(format) = scene.depth_format()
        {
            let size = self.out.target_px;
            if self
                .out
                .depth
                .as_ref()
                .is_none_or(|d| d.format != format || d.size != size)
            {
                let texture = gpu.device.create_texture(&wgpu::TextureDescriptor {
                    label: Some("scene:depth"),
                    size: wgpu::Extent3d {
                        width: size.0.max(1),
                        height: size.1.max(1),
                        depth_or_array_layers: 1,
                    },
                    mip_level_count: 1,
                    sample_count: 1,
                    dimension: wgpu::TextureDimension::D2,
                    format,
                    usage: wgpu::TextureUsages::RENDER_ATTACHMENT,
                    view_formats: &[],
                });
                let view = texture.create_view(&wgpu::TextureViewDescriptor {
                    label: Some("scene:depth:view"),
                    ..Default::default()
                });
                self.out.depth = Some(SceneDepth { format, size, view });
            }
        }
    }

    /// (Re)creates the scene texture when the wanted pixel size changes.
    pub(super) fn ensure_target(&mut self, gpu: &Gpu, px: (u32, u32)) {
        // Never larger than the adapter allows (the output is clamped the same way).
        let max = gpu.device.limits().max_texture_dimension_2d;
        let px = (px.0.min(max), px.1.min(max));
        if self.out.target.is_some() && (self.out.target_px == px || px == (1, 1)) {
            return;
        }
        let texture = gpu.device.create_texture(&wgpu::TextureDescriptor {
            label: Some("scene:target"),
            size: wgpu::Extent3d {
                width: px.0,
                height: px.1,
                depth_or_array_layers: 1,
            },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: gpu.scene_format,
            // COPY_DST: a scene that resolves in compute copies its image in
            // (`Scene::write_target`).
            usage: wgpu::TextureUsages::RENDER_ATTACHMENT
                | wgpu::TextureUsages::TEXTURE_BINDING
                | wgpu::TextureUsages::COPY_SRC
                | wgpu::TextureUsages::COPY_DST,
            view_formats: &[],
        });
        let view = texture.create_view(&wgpu::TextureViewDescriptor {
            label: Some("scene:target:view"),
            ..Default::default()
        });
        let egui_id = match &self.out.target {
            Some(t) => {
                self.ui_state.painter.update_native(
                    &gpu.device,
                    t.egui_id,
                    &view,
                    egui::TextureFilter::Nearest,
                );
                t.egui_id
            }
            None => self.ui_state.painter.register_native(
                &gpu.device,
                &view,
                egui::TextureFilter::Nearest,
            ),
        };
        let blit_group = self.out.blit.bind(&gpu.device, &view);
        self.out.target = Some(SceneTarget {
            texture,
            view,
            egui_id,
            blit_group,
        });
        self.out.target_px = px;
    }

    /// The scene texture of the last frame (tests read it back).
    pub fn scene_texture(&self) -> Option<&wgpu::Texture> {
        self.out.target.as_ref().map(|t| &t.texture)
    }

    /// Output format the egui painter draws into.
    pub fn output_format(&self) -> wgpu::TextureFormat {
        self.out.output_format
    }
}
