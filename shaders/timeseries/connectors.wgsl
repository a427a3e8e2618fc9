// Time series: line segments between samples in different pixel columns, from the centre of
// column `col0` at value `v0` to the centre of column `col1` at value `v1` (1-pixel lines, the
// rasterizer's own rule), each end at the centre of its pixel. A record with col0 == 0xffffffff draws nothing.
//
// Preludes prepended by the registry (src/gpu/shaders.rs): common/timeseries.wgsl.

@group(0) @binding(0) var<uniform> view: SeriesView;
@group(0) @binding(1) var<storage, read> conns: array<Conn>;

@vertex
fn vs_main(@builtin(vertex_index) vi: u32, @builtin(instance_index) ii: u32) -> VsOut {
    var out: VsOut;
    out.color = unpack4x8unorm(view.color);
    let c = conns[ii];
    if c.col0 == 0xffffffffu {
        out.clip = vec4<f32>(2.0, 2.0, 0.0, 1.0);
        return out;
    }
    var col = c.col0;
    var bits = c.v0;
    if vi == 1u {
        col = c.col1;
        bits = c.v1;
    }
    // Far outside values are clamped a long way off the image, keeping the slope finite.
    // Endpoints at the centre of the value's pixel row (the row its span lights).
    let y = floor(clamp(view.b - bitcast<f32>(bits) * view.a, -1.0e6, view.height + 1.0e6)) + 0.5;
    let x = f32(col) + 0.5;
    out.clip = vec4<f32>(x / view.width * 2.0 - 1.0, 1.0 - y / view.height * 2.0, 0.0, 1.0);
    return out;
}

@fragment
fn fs_main(in: VsOut) -> @location(0) vec4<f32> {
    return in.color;
}
