// egui's tessellated shapes → the output (render): vizdeck's egui painter (crates/gpu/src/egui_painter.rs).
// The same colour arithmetic as egui-wgpu's `fs_main_gamma_framebuffer` (egui 0.37): the vertex
// colour (sRGB-encoded, premultiplied alpha) times the texture sample, dithered to 8 bits with
// interleaved gradient noise (Jimenez 2014, "Next Generation Post-Processing in Call of Duty"),
// written to a non-sRGB target with premultiplied-alpha blending. Unlike egui-wgpu's shader it has
// no run-time choice of filtering path: lavapipe compiles that branching `sample_texture` into code
// that shades ≈ 10× slower per pixel (BENCHMARKS.md, "Software rasterizer").

struct Screen {
    // Output size in points (pixels / pixels-per-point).
    size_points: vec2<f32>,
    _pad: vec2<f32>,
};

@group(0) @binding(0) var<uniform> screen: Screen;
@group(1) @binding(0) var tex: texture_2d<f32>;
@group(1) @binding(1) var tex_sampler: sampler;

struct VsOut {
    @builtin(position) position: vec4<f32>,
    @location(0) uv: vec2<f32>,
    // sRGB-encoded, premultiplied, 0..1.
    @location(1) color: vec4<f32>,
};

@vertex
fn vs_main(
    @location(0) pos: vec2<f32>,
    @location(1) uv: vec2<f32>,
    @location(2) color: u32,
) -> VsOut {
    var out: VsOut;
    out.position = vec4<f32>(
        2.0 * pos.x / screen.size_points.x - 1.0,
        1.0 - 2.0 * pos.y / screen.size_points.y,
        0.0,
        1.0,
    );
    out.uv = uv;
    out.color = vec4<f32>(
        f32(color & 255u),
        f32((color >> 8u) & 255u),
        f32((color >> 16u) & 255u),
        f32(color >> 24u),
    ) / 255.0;
    return out;
}

// Noise in [0, 1) for the pixel at `p`.
fn interleaved_gradient_noise(p: vec2<f32>) -> f32 {
    let f = 0.06711056 * p.x + 0.00583715 * p.y;
    return fract(52.9829189 * fract(f));
}

@fragment
fn fs_main(in: VsOut) -> @location(0) vec4<f32> {
    let c = in.color * textureSample(tex, tex_sampler, in.uv);
    // ±0.475 of one 8-bit step: flat colours stay exact, gradients do not band.
    let noise = (interleaved_gradient_noise(in.position.xy) - 0.5) * 0.95 / 255.0;
    return vec4<f32>(c.rgb + vec3<f32>(noise), c.a);
}
