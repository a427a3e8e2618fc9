// Point-cloud compute rasterizer, the resolve: every pixel of the visibility buffer
// (raster_depth.wgsl, raster_id.wgsl) takes the colour of the point it holds (RGBA8 per point,
// R in the low byte), or the background where no point landed. One triangle over the target.
//
// Preludes prepended by the registry (src/gpu/shaders.rs): common/pointcloud.wgsl.

@group(0) @binding(0) var<uniform> params: RasterParams;
@group(0) @binding(1) var<storage, read> ids: array<u32>;    // ~index; 0 = no point
@group(0) @binding(2) var<storage, read> colors: array<u32>; // per point, RGBA8

// The background where no point landed (the deck's clear colour family).
const BACKGROUND: vec4<f32> = vec4<f32>(0.0, 0.0, 0.0, 1.0);

@vertex
fn vs_main(@builtin(vertex_index) vi: u32) -> @builtin(position) vec4<f32> {
    let x = f32((vi << 1u) & 2u);
    let y = f32(vi & 2u);
    return vec4<f32>(x * 2.0 - 1.0, 1.0 - y * 2.0, 0.0, 1.0);
}

@fragment
fn fs_main(@builtin(position) p: vec4<f32>) -> @location(0) vec4<f32> {
    let x = min(u32(p.x), params.width - 1u);
    let y = min(u32(p.y), params.height - 1u);
    let v = ids[y * params.width + x];
    if v == 0u {
        return BACKGROUND;
    }
    return unpack4x8unorm(colors[~v]);
}
