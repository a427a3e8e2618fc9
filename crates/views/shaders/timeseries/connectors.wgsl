// Time series: line segments between samples in different pixel columns, from the centre of
// column `col0` at value `v0` to the centre of column `col1` at value `v1` (1-pixel lines, the
// rasterizer's own rule), each end at the centre of its pixel. A record with col0 == 0xffffffff draws nothing.
// One draw covers every series: vertex v belongs to record v / 2, whose series is its table entry
// (colour and depth; the depth test keeps the painter's order of the series).
//
// Preludes prepended by the registry (src/shaders.rs): common/timeseries.wgsl.

@group(0) @binding(0) var<uniform> view: SeriesView;
@group(0) @binding(1) var<storage, read> table: array<SeriesDraw>;
@group(0) @binding(2) var<storage, read> conns: array<Conn>;

@vertex
fn vs_main(@builtin(vertex_index) v: u32) -> VsOut {
    var out: VsOut;
    let record = v / 2u;
    let c = conns[record];
    let series = table[c.slot];
    out.color = unpack4x8unorm(series.color);
    if c.col0 == 0xffffffffu {
        out.clip = vec4<f32>(2.0, 2.0, 0.0, 1.0);
        return out;
    }
    var col = c.col0;
    var bits = c.v0;
    if (v & 1u) == 1u {
        col = c.col1;
        bits = c.v1;
    }
    // Far outside values are clamped a long way off the image, keeping the slope finite.
    // Endpoints at the centre of the value's pixel row (the row its span lights).
    let y = line_row(bits, view.a, view.b, view.height) + 0.5;
    let x = f32(col) + 0.5;
    out.clip = vec4<f32>(x / view.width * 2.0 - 1.0, 1.0 - y / view.height * 2.0, series.depth, 1.0);
    return out;
}

@fragment
fn fs_main(in: VsOut) -> @location(0) vec4<f32> {
    return in.color;
}
