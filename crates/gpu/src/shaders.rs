//! The shader-registry mechanism: [`ShaderSource`] (one WGSL file with the preludes it uses,
//! composed at compile time by [`shader!`](crate::shader)), the pipeline helpers every pass uses
//! ([`ShaderSource::render_pipeline`], [`ShaderSource::compute_pipeline`], …) and the GPU core's
//! own shader ([`EGUI_PAINT`]). The registry of the app's shaders (every file in `shaders/`, the
//! preludes of `shaders/common/`) lives with the views, in the app's `scene::shaders`;
//! `tests/app/shaders.rs` validates each composed source with naga and checks that the registry
//! lists every file on disk.
//!
//! A source's [`ShaderSource::source`] is its preludes' text followed by its own file,
//! concatenated at compile time, so line numbers in a driver's error message count from the first
//! prelude. A prelude declares nothing that needs a binding (a file that includes it may not bind
//! it), except one included only by passes that all bind what it declares, and a shader must not
//! re-declare a name its preludes declare. `tests/app/shader_layout.rs` checks the structs
//! mirrored in Rust against their `#[repr(C)]` types.

/// One WGSL source: its path relative to `shaders/`, the preludes it uses and the composed text.
#[derive(Clone, Copy, Debug)]
pub struct ShaderSource {
    /// Path relative to `shaders/`, e.g. `"particles/step.wgsl"`; also the module label.
    pub path: &'static str,
    /// The `shaders/common/` files prepended, in order (paths relative to `shaders/`).
    pub prelude: &'static [&'static str],
    /// The file's own text (without the preludes).
    pub body: &'static str,
    /// The WGSL text handed to the device: the preludes' text, then [`Self::body`].
    pub source: &'static str,
}

/// `wgsl_file!("dir/file.wgsl")`: the text of `shaders/dir/file.wgsl` under the package that
/// invokes the macro (`CARGO_MANIFEST_DIR` is read where the macro expands: for the app, the
/// repository's `shaders/` folder).
#[macro_export]
macro_rules! wgsl_file {
    ($path:literal) => {
        include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/shaders/", $path))
    };
}

/// `shader!("dir/file.wgsl")`, or `shader!("dir/file.wgsl", "common/a.wgsl", ...)` with its
/// preludes (literals: the text is concatenated at compile time): a [`ShaderSource`] of files
/// in `shaders/` under the invoking package (see [`wgsl_file!`](crate::wgsl_file)).
#[macro_export]
macro_rules! shader {
    ($path:literal $(, $prelude:literal)* $(,)?) => {
        $crate::shaders::ShaderSource {
            path: $path,
            prelude: &[$($prelude),*],
            body: $crate::wgsl_file!($path),
            source: concat!($($crate::wgsl_file!($prelude),)* $crate::wgsl_file!($path)),
        }
    };
}

/// Deck: egui's tessellated shapes → the output (render; [`crate::egui_painter`]); the file is
/// this crate's `shaders/ui.wgsl`.
pub const EGUI_PAINT: ShaderSource = crate::shader!("ui.wgsl");

/// What varies between the render pipelines of [`ShaderSource::render_pipeline`]; the default is
/// `fs_main`, triangle lists, no blending, no depth, [`crate::SCENE_FORMAT`].
#[derive(Clone, Debug)]
pub struct RenderOptions<'a> {
    /// Fragment entry point.
    pub fragment: &'a str,
    /// Primitive topology.
    pub topology: wgpu::PrimitiveTopology,
    /// Vertex buffers `vs_main` reads (default none: vertices come from the vertex index).
    pub vertex_buffers: &'a [Option<wgpu::VertexBufferLayout<'a>>],
    /// Colour blending of the one target.
    pub blend: Option<wgpu::BlendState>,
    /// Depth test, if any.
    pub depth: Option<wgpu::DepthStencilState>,
    /// Format of the one colour target.
    pub format: wgpu::TextureFormat,
    /// Values of the fragment stage's pipeline-overridable constants (`override` in WGSL), by
    /// name: choices fixed per pipeline instead of branched on per pixel.
    pub constants: &'a [(&'a str, f64)],
}

impl Default for RenderOptions<'_> {
    fn default() -> Self {
        RenderOptions {
            fragment: "fs_main",
            topology: wgpu::PrimitiveTopology::TriangleList,
            vertex_buffers: &[],
            blend: None,
            depth: None,
            format: crate::SCENE_FORMAT,
            constants: &[],
        }
    }
}

impl ShaderSource {
    /// A render pipeline of this shader's `vs_main` and `options.fragment` over `layout`, drawing
    /// into one colour target (no multisampling), labelled `label`.
    pub fn render_pipeline(
        &self,
        device: &wgpu::Device,
        label: &str,
        layout: &wgpu::PipelineLayout,
        options: &RenderOptions<'_>,
    ) -> wgpu::RenderPipeline {
        let module = self.module(device);
        device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: Some(label),
            layout: Some(layout),
            vertex: wgpu::VertexState {
                module: &module,
                entry_point: Some("vs_main"),
                compilation_options: Default::default(),
                buffers: options.vertex_buffers,
            },
            primitive: wgpu::PrimitiveState {
                topology: options.topology,
                ..Default::default()
            },
            depth_stencil: options.depth.clone(),
            multisample: wgpu::MultisampleState::default(),
            fragment: Some(wgpu::FragmentState {
                module: &module,
                entry_point: Some(options.fragment),
                compilation_options: wgpu::PipelineCompilationOptions {
                    constants: options.constants,
                    ..Default::default()
                },
                targets: &[Some(wgpu::ColorTargetState {
                    format: options.format,
                    blend: options.blend,
                    write_mask: wgpu::ColorWrites::ALL,
                })],
            }),
            multiview_mask: None,
            cache: None,
        })
    }

    /// A compute pipeline of this shader's `main` entry point over one bind group layout (group
    /// 0), labelled `label`.
    pub fn compute_pipeline(
        &self,
        device: &wgpu::Device,
        label: &str,
        layout: &wgpu::BindGroupLayout,
    ) -> wgpu::ComputePipeline {
        self.compute_pipeline_with(device, label, layout, &[])
    }

    /// [`compute_pipeline`](ShaderSource::compute_pipeline) with values for the shader's
    /// pipeline-overridable constants, by name.
    pub fn compute_pipeline_with(
        &self,
        device: &wgpu::Device,
        label: &str,
        layout: &wgpu::BindGroupLayout,
        constants: &[(&str, f64)],
    ) -> wgpu::ComputePipeline {
        let pl = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some(&format!("{label}:pipeline_layout")),
            bind_group_layouts: &[Some(layout)],
            immediate_size: 0,
        });
        device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some(label),
            layout: Some(&pl),
            module: &self.module(device),
            entry_point: Some("main"),
            compilation_options: wgpu::PipelineCompilationOptions {
                constants,
                ..Default::default()
            },
            cache: None,
        })
    }

    /// A compute pipeline of this shader's entry point `entry` over `layout`, labelled `label`.
    pub fn compute_pipeline_entry(
        &self,
        device: &wgpu::Device,
        label: &str,
        layout: &wgpu::PipelineLayout,
        entry: &str,
    ) -> wgpu::ComputePipeline {
        self.compute_pipeline_entry_with(device, label, layout, entry, &[])
    }

    /// [`compute_pipeline_entry`](ShaderSource::compute_pipeline_entry) with values for the
    /// shader's pipeline-overridable constants, by name.
    pub fn compute_pipeline_entry_with(
        &self,
        device: &wgpu::Device,
        label: &str,
        layout: &wgpu::PipelineLayout,
        entry: &str,
        constants: &[(&str, f64)],
    ) -> wgpu::ComputePipeline {
        device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some(label),
            layout: Some(layout),
            module: &self.module(device),
            entry_point: Some(entry),
            compilation_options: wgpu::PipelineCompilationOptions {
                constants,
                ..Default::default()
            },
            cache: None,
        })
    }

    /// Creates the shader module, labelled with its path.
    pub fn module(&self, device: &wgpu::Device) -> wgpu::ShaderModule {
        device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some(self.path),
            source: wgpu::ShaderSource::Wgsl(self.source.into()),
        })
    }

    /// [`module`](Self::module) without wgpu's runtime checks (no clamps on indices, no loop
    /// bounding, no division guards: `ShaderRuntimeChecks::unchecked()`).
    ///
    /// # Safety
    ///
    /// Every index the shader computes must be in range and every loop must end, for every
    /// value of the overrides and uniforms it is used with: an index out of range is undefined
    /// behaviour on the GPU (robust buffer access, where the driver has it, still bounds buffer
    /// accesses, not workgroup memory).
    pub unsafe fn module_unchecked(&self, device: &wgpu::Device) -> wgpu::ShaderModule {
        // SAFETY: the caller's guarantee above.
        unsafe {
            device.create_shader_module_trusted(
                wgpu::ShaderModuleDescriptor {
                    label: Some(self.path),
                    source: wgpu::ShaderSource::Wgsl(self.source.into()),
                },
                wgpu::ShaderRuntimeChecks::unchecked(),
            )
        }
    }
}
