//! vizdeck's egui painter: draws egui's tessellated output (`ClippedPrimitive`s) and keeps its
//! textures on the GPU, in place of egui-wgpu's renderer.
//!
//! Why our own: on lavapipe egui-wgpu 0.37's fragment shader (its `sample_texture` chooses a
//! filtering path at run time) shades about ten times slower per pixel than the same colour
//! arithmetic without that choice: 32 ms against 3.3 ms for one 1280×720 textured quad, the same
//! vertices, blend state and sampler (BENCHMARKS.md, "Software rasterizer"). The UI of a vizdeck
//! frame covers 0.3–0.5 Mpx, so that branch alone cost 15–25 ms a frame. [`EguiPainter`] gives the
//! same pixels as egui-wgpu (`tests/app/egui_painter.rs` draws the same egui output with both) through
//! `shaders/ui.wgsl`, and its uploads (vertices, indices, texture patches) go through the
//! frame's uploader, so they are counted like every other upload.
//!
//! Per frame: [`EguiPainter::update_textures`] (the `set` part of egui's `TexturesDelta`),
//! [`EguiPainter::prepare`] (vertices and indices of every mesh, uploaded at once),
//! [`EguiPainter::paint`] in a render pass over the output, then [`EguiPainter::free_textures`].

use std::collections::HashMap;

use super::frame::GpuFrame;
use super::layout;
use super::shaders::{EGUI_PAINT, RenderOptions, ShaderSource};

/// Bytes of one `egui::epaint::Vertex`: position (2 × f32, points), uv (2 × f32), colour (sRGBA8,
/// premultiplied).
const VERTEX_BYTES: u64 = 20;

/// The `Screen` uniform of `ui.wgsl`: the output size in points.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
struct Screen {
    size_points: [f32; 2],
    _pad: [f32; 2],
}

/// The WGSL mirror of the painter's `Screen` uniform, for the layout test (collected by the app's
/// `scene::wgsl_mirrors`).
pub fn wgsl_mirrors() -> Vec<super::mirror::Mirror> {
    use super::mirror::wgsl_mirror;
    vec![wgsl_mirror!(Screen => "Screen" { size_points, _pad })]
}

/// One texture egui knows: a managed one (font atlas, images egui loaded: created and patched
/// from `TexturesDelta`) or a native one (a texture of ours shown as an egui image).
struct PaintTexture {
    /// The texture, when it is managed (patches are written into it).
    texture: Option<wgpu::Texture>,
    options: egui::TextureOptions,
    group: wgpu::BindGroup,
}

/// One draw of [`EguiPainter::paint`]: a mesh's index range, its texture and scissor rect.
#[derive(Clone, Copy, Debug)]
struct Draw {
    texture: egui::TextureId,
    /// (x, y, width, height) in output pixels.
    scissor: (u32, u32, u32, u32),
    first_index: u32,
    index_count: u32,
    base_vertex: i32,
}

/// The painter (see the module docs). One per deck; made anew on a new device.
pub struct EguiPainter {
    pipeline: wgpu::RenderPipeline,
    texture_layout: wgpu::BindGroupLayout,
    screen: wgpu::Buffer,
    screen_group: wgpu::BindGroup,
    /// The size in points last written into `screen`.
    screen_points: [f32; 2],
    textures: HashMap<egui::TextureId, PaintTexture>,
    samplers: HashMap<egui::TextureOptions, wgpu::Sampler>,
    vertices: Option<wgpu::Buffer>,
    indices: Option<wgpu::Buffer>,
    draws: Vec<Draw>,
    vertex_bytes: Vec<u8>,
    index_data: Vec<u32>,
    next_native: u64,
}

impl EguiPainter {
    /// A painter drawing into `format` (a non-sRGB format: egui's colours are sRGB-encoded).
    pub fn new(device: &wgpu::Device, format: wgpu::TextureFormat) -> EguiPainter {
        let label = "deck:egui";
        let screen_layout = layout::bind_group_layout(
            device,
            &format!("{label}:screen"),
            &[layout::uniform(0, wgpu::ShaderStages::VERTEX, None)],
        );
        let texture_layout = layout::bind_group_layout(
            device,
            &format!("{label}:texture"),
            &[
                layout::texture_2d(0, wgpu::ShaderStages::FRAGMENT, true),
                wgpu::BindGroupLayoutEntry {
                    binding: 1,
                    visibility: wgpu::ShaderStages::FRAGMENT,
                    ty: wgpu::BindingType::Sampler(wgpu::SamplerBindingType::Filtering),
                    count: None,
                },
            ],
        );
        let pipeline_layout =
            layout::pipeline_layout(device, label, &[&screen_layout, &texture_layout]);
        let pipeline = pipeline(device, &EGUI_PAINT, label, &pipeline_layout, format);
        let screen = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("deck:egui:screen"),
            size: std::mem::size_of::<Screen>() as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let screen_group =
            layout::buffers_group(device, "deck:egui:screen:group", &screen_layout, &[&screen]);
        EguiPainter {
            pipeline,
            texture_layout,
            screen,
            screen_group,
            screen_points: [0.0; 2],
            textures: HashMap::new(),
            samplers: HashMap::new(),
            vertices: None,
            indices: None,
            draws: Vec::new(),
            vertex_bytes: Vec::new(),
            index_data: Vec::new(),
            next_native: 0,
        }
    }

    /// Applies the `set` part of egui's `TexturesDelta` (each texture's deltas in order): creates a managed texture for a whole
    /// image, writes a patch (`pos` set) into the existing one. A patch for a texture that does
    /// not exist, or does not fit it, is logged and skipped (egui never sends one).
    pub fn update_textures(&mut self, frame: &mut GpuFrame<'_>, delta: &egui::TexturesDelta) {
        for (id, delta) in delta
            .set
            .iter()
            .flat_map(|(id, deltas)| deltas.iter().map(move |d| (id, d)))
        {
            let egui::ImageData::Color(image) = &delta.image;
            let [w, h] = image.size;
            let (w, h) = (w as u32, h as u32);
            if w == 0 || h == 0 || image.pixels.len() != (w * h) as usize {
                log::error!(
                    "egui texture {id:?}: {w}×{h} image with {} texels",
                    image.pixels.len()
                );
                continue;
            }
            let bytes: &[u8] = bytemuck::cast_slice(&image.pixels);
            let origin = match delta.pos {
                Some([x, y]) => {
                    let fits = self
                        .textures
                        .get(id)
                        .and_then(|t| t.texture.as_ref())
                        .is_some_and(|t| x as u32 + w <= t.width() && y as u32 + h <= t.height());
                    if !fits {
                        log::error!("egui texture {id:?}: a patch at ({x}, {y}) that does not fit");
                        continue;
                    }
                    (x as u32, y as u32)
                }
                None => {
                    let texture = frame.device().create_texture(&wgpu::TextureDescriptor {
                        label: Some(&format!("deck:egui:texture:{id:?}")),
                        size: wgpu::Extent3d {
                            width: w,
                            height: h,
                            depth_or_array_layers: 1,
                        },
                        mip_level_count: 1,
                        sample_count: 1,
                        dimension: wgpu::TextureDimension::D2,
                        format: wgpu::TextureFormat::Rgba8Unorm,
                        usage: wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_DST,
                        view_formats: &[],
                    });
                    let view = texture.create_view(&wgpu::TextureViewDescriptor::default());
                    let group = self.group(frame.device(), &view, delta.options);
                    self.textures.insert(
                        *id,
                        PaintTexture {
                            texture: Some(texture),
                            options: delta.options,
                            group,
                        },
                    );
                    (0, 0)
                }
            };
            let Some(entry) = self.textures.get_mut(id) else {
                continue;
            };
            if entry.options != delta.options
                && let Some(texture) = &entry.texture
            {
                let view = texture.create_view(&wgpu::TextureViewDescriptor::default());
                let options = delta.options;
                let sampler = sampler(&mut self.samplers, frame.device(), options);
                entry.group = texture_group(frame.device(), &self.texture_layout, &view, sampler);
                entry.options = options;
            }
            if let Some(texture) = &entry.texture {
                frame.write_texture(texture, origin, (w, h), 4 * w, bytes);
            }
        }
    }

    /// Shows `view` (an `Rgba8Unorm` texture of ours, sRGB-encoded values) as an egui image:
    /// returns its id, sampled with `filter`.
    pub fn register_native(
        &mut self,
        device: &wgpu::Device,
        view: &wgpu::TextureView,
        filter: egui::TextureFilter,
    ) -> egui::TextureId {
        let id = egui::TextureId::User(self.next_native);
        self.next_native += 1;
        self.update_native(device, id, view, filter);
        id
    }

    /// Points the native image `id` at `view` (a resized texture keeps its id).
    pub fn update_native(
        &mut self,
        device: &wgpu::Device,
        id: egui::TextureId,
        view: &wgpu::TextureView,
        filter: egui::TextureFilter,
    ) {
        let options = egui::TextureOptions {
            magnification: filter,
            minification: filter,
            ..Default::default()
        };
        let group = self.group(device, view, options);
        self.textures.insert(
            id,
            PaintTexture {
                texture: None,
                options,
                group,
            },
        );
    }

    /// Forgets the textures egui freed (the `free` part of its `TexturesDelta`); call after
    /// painting.
    pub fn free_textures(&mut self, delta: &egui::TexturesDelta) {
        for id in &delta.free {
            self.textures.remove(id);
        }
    }

    /// Uploads the vertices and indices of every mesh in `prims` (one write each, through the
    /// frame's uploader) and plans their draws for an output of `size_px` pixels at
    /// `pixels_per_point`: scissor rects as egui-wgpu computes them (clip rect × ppp, rounded,
    /// clamped to the output). Primitives with an empty clip rect, or a texture this painter does
    /// not hold (logged), are skipped; paint callbacks are not supported (vizdeck uses none) and
    /// skipped too.
    pub fn prepare(
        &mut self,
        frame: &mut GpuFrame<'_>,
        prims: &[egui::ClippedPrimitive],
        size_px: (u32, u32),
        pixels_per_point: f32,
    ) {
        self.draws.clear();
        self.vertex_bytes.clear();
        self.index_data.clear();
        let mut vertex_count = 0u32;
        for prim in prims {
            let egui::epaint::Primitive::Mesh(mesh) = &prim.primitive else {
                continue;
            };
            if mesh.indices.is_empty() {
                continue;
            }
            if !self.textures.contains_key(&mesh.texture_id) {
                log::warn!("egui mesh with an unknown texture {:?}", mesh.texture_id);
                continue;
            }
            let scissor = scissor_px(prim.clip_rect, pixels_per_point, size_px);
            if scissor.2 == 0 || scissor.3 == 0 {
                continue;
            }
            self.draws.push(Draw {
                texture: mesh.texture_id,
                scissor,
                first_index: self.index_data.len() as u32,
                index_count: mesh.indices.len() as u32,
                base_vertex: vertex_count as i32,
            });
            self.index_data.extend_from_slice(&mesh.indices);
            self.vertex_bytes
                .extend_from_slice(bytemuck::cast_slice(&mesh.vertices));
            vertex_count += mesh.vertices.len() as u32;
        }
        let points = [
            size_px.0 as f32 / pixels_per_point,
            size_px.1 as f32 / pixels_per_point,
        ];
        if points != self.screen_points {
            let screen = Screen {
                size_points: points,
                _pad: [0.0; 2],
            };
            frame.write_pod(&self.screen, 0, &screen);
            self.screen_points = points;
        }
        if self.draws.is_empty() {
            return;
        }
        let device = frame.device();
        let vertex_len = self.vertex_bytes.len() as u64;
        let index_len = self.index_data.len() as u64 * 4;
        let vertices = grown(
            device,
            &mut self.vertices,
            vertex_len,
            wgpu::BufferUsages::VERTEX,
        );
        frame.write(&vertices, 0, &self.vertex_bytes);
        let indices = grown(
            device,
            &mut self.indices,
            index_len,
            wgpu::BufferUsages::INDEX,
        );
        frame.write_slice(&indices, 0, &self.index_data);
        debug_assert_eq!(vertex_len, u64::from(vertex_count) * VERTEX_BYTES);
    }

    /// Draws what [`prepare`](EguiPainter::prepare) planned into `pass` (whose target is the
    /// output of that size), in egui's order, over what the pass holds already. Sets the
    /// viewport to the whole output.
    pub fn paint(&self, pass: &mut wgpu::RenderPass<'_>, size_px: (u32, u32)) {
        let (Some(vertices), Some(indices)) = (&self.vertices, &self.indices) else {
            return;
        };
        if self.draws.is_empty() {
            return;
        }
        pass.set_viewport(0.0, 0.0, size_px.0 as f32, size_px.1 as f32, 0.0, 1.0);
        pass.set_pipeline(&self.pipeline);
        pass.set_bind_group(0, &self.screen_group, &[]);
        pass.set_vertex_buffer(0, vertices.slice(..));
        pass.set_index_buffer(indices.slice(..), wgpu::IndexFormat::Uint32);
        for d in &self.draws {
            let Some(t) = self.textures.get(&d.texture) else {
                continue;
            };
            pass.set_bind_group(1, &t.group, &[]);
            pass.set_scissor_rect(d.scissor.0, d.scissor.1, d.scissor.2, d.scissor.3);
            pass.draw_indexed(
                d.first_index..d.first_index + d.index_count,
                d.base_vertex,
                0..1,
            );
        }
        pass.set_scissor_rect(0, 0, size_px.0, size_px.1);
    }

    /// The texture bind group of `view` sampled with `options`.
    fn group(
        &mut self,
        device: &wgpu::Device,
        view: &wgpu::TextureView,
        options: egui::TextureOptions,
    ) -> wgpu::BindGroup {
        let sampler = sampler(&mut self.samplers, device, options);
        texture_group(device, &self.texture_layout, view, sampler)
    }
}

/// egui's clip rect (points) as a scissor rect (x, y, w, h) in pixels of a `size` output: × ppp,
/// rounded, clamped (the rule of egui-wgpu's `ScissorRect`, so both cut the same pixels).
fn scissor_px(clip: egui::Rect, ppp: f32, size: (u32, u32)) -> (u32, u32, u32, u32) {
    let round = |v: f32, max: u32| ((v * ppp).round().max(0.0) as u32).min(max);
    let x0 = round(clip.min.x, size.0);
    let y0 = round(clip.min.y, size.1);
    let x1 = round(clip.max.x, size.0).max(x0);
    let y1 = round(clip.max.y, size.1).max(y0);
    (x0, y0, x1 - x0, y1 - y0)
}

/// The sampler for `options` (made once per set of options).
fn sampler<'s>(
    samplers: &'s mut HashMap<egui::TextureOptions, wgpu::Sampler>,
    device: &wgpu::Device,
    options: egui::TextureOptions,
) -> &'s wgpu::Sampler {
    samplers.entry(options).or_insert_with(|| {
        let filter = |f: egui::TextureFilter| match f {
            egui::TextureFilter::Nearest => wgpu::FilterMode::Nearest,
            egui::TextureFilter::Linear => wgpu::FilterMode::Linear,
        };
        let address = match options.wrap_mode {
            egui::TextureWrapMode::ClampToEdge => wgpu::AddressMode::ClampToEdge,
            egui::TextureWrapMode::Repeat => wgpu::AddressMode::Repeat,
            egui::TextureWrapMode::MirroredRepeat => wgpu::AddressMode::MirrorRepeat,
        };
        device.create_sampler(&wgpu::SamplerDescriptor {
            label: Some("deck:egui:sampler"),
            mag_filter: filter(options.magnification),
            min_filter: filter(options.minification),
            address_mode_u: address,
            address_mode_v: address,
            ..Default::default()
        })
    })
}

fn texture_group(
    device: &wgpu::Device,
    layout: &wgpu::BindGroupLayout,
    view: &wgpu::TextureView,
    sampler: &wgpu::Sampler,
) -> wgpu::BindGroup {
    layout::bind_group(
        device,
        "deck:egui:texture:group",
        layout,
        &[
            wgpu::BindingResource::TextureView(view),
            wgpu::BindingResource::Sampler(sampler),
        ],
    )
}

/// `slot`'s buffer, replaced by one of at least `len` bytes (next power of two, ≥ 64 KiB) when
/// it is smaller; returns a handle to it.
fn grown(
    device: &wgpu::Device,
    slot: &mut Option<wgpu::Buffer>,
    len: u64,
    usage: wgpu::BufferUsages,
) -> wgpu::Buffer {
    if let Some(b) = slot
        && b.size() >= len
    {
        return b.clone();
    }
    let size = len.next_power_of_two().max(1 << 16);
    let label = if usage.contains(wgpu::BufferUsages::VERTEX) {
        "deck:egui:vertices"
    } else {
        "deck:egui:indices"
    };
    let b = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        size,
        usage: usage | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    *slot = Some(b.clone());
    b
}

/// The painter's render pipeline: egui's vertex layout, egui's blend state (premultiplied colour;
/// alpha `1 - dst.a` + dst.a), one colour target of `format`.
fn pipeline(
    device: &wgpu::Device,
    shader: &ShaderSource,
    label: &str,
    layout: &wgpu::PipelineLayout,
    format: wgpu::TextureFormat,
) -> wgpu::RenderPipeline {
    let blend = wgpu::BlendState {
        color: wgpu::BlendComponent {
            src_factor: wgpu::BlendFactor::One,
            dst_factor: wgpu::BlendFactor::OneMinusSrcAlpha,
            operation: wgpu::BlendOperation::Add,
        },
        alpha: wgpu::BlendComponent {
            src_factor: wgpu::BlendFactor::OneMinusDstAlpha,
            dst_factor: wgpu::BlendFactor::One,
            operation: wgpu::BlendOperation::Add,
        },
    };
    let vertices = [Some(wgpu::VertexBufferLayout {
        array_stride: VERTEX_BYTES,
        step_mode: wgpu::VertexStepMode::Vertex,
        attributes: &wgpu::vertex_attr_array![0 => Float32x2, 1 => Float32x2, 2 => Uint32],
    })];
    shader.render_pipeline(
        device,
        label,
        layout,
        &RenderOptions {
            vertex_buffers: &vertices,
            blend: Some(blend),
            format,
            ..Default::default()
        },
    )
}
