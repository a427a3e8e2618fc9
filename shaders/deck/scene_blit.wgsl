// The scene texture → its viewport of the output, texel for pixel (render). Drawn first in the
// egui pass, with the viewport and scissor set to the scene's rect in output pixels, so pixel
// (i, j) of the viewport shows texel (i, j): no filtering, no blending, no colour conversion (the
// scene texture and the output both hold gamma-encoded values, as egui's image quad copied them).

@group(0) @binding(0) var scene: texture_2d<f32>;

struct VsOut {
    @builtin(position) position: vec4<f32>,
    // 0..1 across the viewport.
    @location(0) uv: vec2<f32>,
};

// One triangle covering the viewport: (-1,-1), (3,-1), (-1,3) in clip space.
@vertex
fn vs_main(@builtin(vertex_index) i: u32) -> VsOut {
    let x = f32((i << 1u) & 2u);
    let y = f32(i & 2u);
    var out: VsOut;
    out.position = vec4<f32>(x * 2.0 - 1.0, 1.0 - y * 2.0, 0.0, 1.0);
    out.uv = vec2<f32>(x, y);
    return out;
}

@fragment
fn fs_main(in: VsOut) -> @location(0) vec4<f32> {
    let size = textureDimensions(scene, 0);
    // Pixel centres sit at uv = (i + 0.5) / size: floor recovers i exactly.
    let texel = min(vec2<u32>(floor(in.uv * vec2<f32>(size))), size - vec2<u32>(1u));
    return textureLoad(scene, texel, 0);
}
