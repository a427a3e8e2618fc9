//! Bind-group layouts, bind groups and compute pipelines: the one set of helpers every scene and
//! the FFT build their GPU objects with, so each binding reads the same way everywhere and every
//! object gets a label (`<label>`, `<label>:layout`, `<label>:pipeline_layout`).

use super::shaders::ShaderSource;

/// A uniform buffer at `binding`, seen by `visibility`; `min_size` bytes when given (wgpu checks
/// bound buffers against it at bind time instead of draw time).
pub fn uniform(
    binding: u32,
    visibility: wgpu::ShaderStages,
    min_size: Option<u64>,
) -> wgpu::BindGroupLayoutEntry {
    buffer(
        binding,
        visibility,
        wgpu::BufferBindingType::Uniform,
        false,
        min_size,
    )
}

/// A uniform buffer at `binding` bound with a dynamic offset (one slot of `min_size` bytes per
/// use, e.g. per-level or per-step parameters).
pub fn uniform_dynamic(
    binding: u32,
    visibility: wgpu::ShaderStages,
    min_size: Option<u64>,
) -> wgpu::BindGroupLayoutEntry {
    buffer(
        binding,
        visibility,
        wgpu::BufferBindingType::Uniform,
        true,
        min_size,
    )
}

/// A storage buffer at `binding`, read-only or read-write.
pub fn storage(
    binding: u32,
    visibility: wgpu::ShaderStages,
    read_only: bool,
) -> wgpu::BindGroupLayoutEntry {
    buffer(
        binding,
        visibility,
        wgpu::BufferBindingType::Storage { read_only },
        false,
        None,
    )
}

/// A buffer binding of type `ty` (the general form of [`uniform`] and [`storage`]).
pub fn buffer(
    binding: u32,
    visibility: wgpu::ShaderStages,
    ty: wgpu::BufferBindingType,
    has_dynamic_offset: bool,
    min_size: Option<u64>,
) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility,
        ty: wgpu::BindingType::Buffer {
            ty,
            has_dynamic_offset,
            min_binding_size: min_size.and_then(wgpu::BufferSize::new),
        },
        count: None,
    }
}

/// A 2D float texture sampled (or loaded) at `binding`.
pub fn texture_2d(
    binding: u32,
    visibility: wgpu::ShaderStages,
    filterable: bool,
) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility,
        ty: wgpu::BindingType::Texture {
            sample_type: wgpu::TextureSampleType::Float { filterable },
            view_dimension: wgpu::TextureViewDimension::D2,
            multisampled: false,
        },
        count: None,
    }
}

/// A write-only 2D storage texture of `format` at `binding`.
pub fn storage_texture_2d(
    binding: u32,
    visibility: wgpu::ShaderStages,
    format: wgpu::TextureFormat,
) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility,
        ty: wgpu::BindingType::StorageTexture {
            access: wgpu::StorageTextureAccess::WriteOnly,
            format,
            view_dimension: wgpu::TextureViewDimension::D2,
        },
        count: None,
    }
}

/// A bind group layout labelled `<label>:layout`.
pub fn bind_group_layout(
    device: &wgpu::Device,
    label: &str,
    entries: &[wgpu::BindGroupLayoutEntry],
) -> wgpu::BindGroupLayout {
    device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some(&format!("{label}:layout")),
        entries,
    })
}

/// A pipeline layout of `layouts` (group i = `layouts[i]`) labelled `<label>:pipeline_layout`.
pub fn pipeline_layout(
    device: &wgpu::Device,
    label: &str,
    layouts: &[&wgpu::BindGroupLayout],
) -> wgpu::PipelineLayout {
    let groups: Vec<Option<&wgpu::BindGroupLayout>> = layouts.iter().map(|l| Some(*l)).collect();
    device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some(&format!("{label}:pipeline_layout")),
        bind_group_layouts: &groups,
        immediate_size: 0,
    })
}

/// A compute pipeline of `shader`'s entry point `main` over one bind group of `entries`:
/// returns the pipeline (labelled `label`) and its group-0 layout.
pub fn compute_pipeline(
    device: &wgpu::Device,
    label: &str,
    shader: &ShaderSource,
    entries: &[wgpu::BindGroupLayoutEntry],
) -> (wgpu::ComputePipeline, wgpu::BindGroupLayout) {
    let layout = bind_group_layout(device, label, entries);
    let pl = pipeline_layout(device, label, &[&layout]);
    let module = shader.module(device);
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some(label),
        layout: Some(&pl),
        module: &module,
        entry_point: Some("main"),
        compilation_options: Default::default(),
        cache: None,
    });
    (pipeline, layout)
}

/// A bind group whose binding i is `resources[i]`, labelled `label`.
pub fn bind_group(
    device: &wgpu::Device,
    label: &str,
    layout: &wgpu::BindGroupLayout,
    resources: &[wgpu::BindingResource<'_>],
) -> wgpu::BindGroup {
    let entries: Vec<wgpu::BindGroupEntry<'_>> = resources
        .iter()
        .enumerate()
        .map(|(i, r)| wgpu::BindGroupEntry {
            binding: i as u32,
            resource: r.clone(),
        })
        .collect();
    device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some(label),
        layout,
        entries: &entries,
    })
}

/// A bind group whose binding i is the whole of `buffers[i]`, labelled `label`.
pub fn buffers_group(
    device: &wgpu::Device,
    label: &str,
    layout: &wgpu::BindGroupLayout,
    buffers: &[&wgpu::Buffer],
) -> wgpu::BindGroup {
    let resources: Vec<wgpu::BindingResource<'_>> =
        buffers.iter().map(|b| b.as_entire_binding()).collect();
    bind_group(device, label, layout, &resources)
}

/// Workgroup counts `(x, y)` for `groups` workgroups: x ≤ 32768, y rows (the shaders fold y back:
/// index = x + y · groups.x · workgroup size).
pub fn fold(groups: u32) -> (u32, u32) {
    if groups <= 32768 {
        (groups, 1)
    } else {
        (32768, groups.div_ceil(32768))
    }
}
