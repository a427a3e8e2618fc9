// Particles, point-splat renderer: draws the accumulated fixed-point colour sums (`splat.wgsl`)
// over the scene texture, one texel per pixel, clamped to 1.
//
// Preludes prepended by the registry (src/shaders.rs): common/particles.wgsl.

@group(0) @binding(0) var<uniform> splat: Splat;
@group(0) @binding(1) var<storage, read> accum: array<u32>;

@vertex
fn vs_main(@builtin(vertex_index) vi: u32) -> @builtin(position) vec4<f32> {
    let x = f32((vi << 1u) & 2u);
    let y = f32(vi & 2u);
    return vec4<f32>(x * 2.0 - 1.0, 1.0 - y * 2.0, 0.0, 1.0);
}

@fragment
fn fs_main(@builtin(position) p: vec4<f32>) -> @location(0) vec4<f32> {
    let x = min(u32(p.x), splat.width - 1u);
    let y = min(u32(p.y), splat.height - 1u);
    let base = (y * splat.width + x) * 3u;
    let c = vec3<f32>(f32(accum[base]), f32(accum[base + 1u]), f32(accum[base + 2u])) / FIXED;
    return vec4<f32>(min(c, vec3<f32>(1.0)), 1.0);
}
