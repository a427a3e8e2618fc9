// Time series: vertical spans, one pixel wide, covering every pixel row from the row of `lo` to
// the row of `hi` inclusive (closed), in pixel column `col`. Drawn as two triangles per span whose
// edges lie on pixel boundaries, so coverage is exact: the union of the spans of consecutive
// samples inside one column equals the span of the column's min and max (M4's argument).
//
// Preludes prepended by the registry (src/gpu/shaders.rs): common/timeseries.wgsl.

@group(0) @binding(0) var<uniform> view: SeriesView;
@group(0) @binding(1) var<storage, read> spans: array<Span>;

fn row_of(bits: u32) -> f32 {
    let y = view.b - bitcast<f32>(bits) * view.a;
    return floor(clamp(y, -2.0, view.height + 2.0));
}

@vertex
fn vs_main(@builtin(vertex_index) vi: u32, @builtin(instance_index) ii: u32) -> VsOut {
    var out: VsOut;
    out.color = unpack4x8unorm(view.color);
    let s = spans[ii];
    // Rows top (hi) to bottom (lo), clipped to the image.
    let r0 = max(row_of(s.hi), 0.0);
    let r1 = min(row_of(s.lo), view.height - 1.0);
    if s.col == 0xffffffffu || r0 > r1 {
        out.clip = vec4<f32>(2.0, 2.0, 0.0, 1.0);
        return out;
    }
    let corner = array<vec2<f32>, 6>(
        vec2<f32>(0.0, 0.0), vec2<f32>(1.0, 0.0), vec2<f32>(0.0, 1.0),
        vec2<f32>(0.0, 1.0), vec2<f32>(1.0, 0.0), vec2<f32>(1.0, 1.0),
    )[vi];
    let px = f32(s.col) + corner.x;
    let py = select(r0, r1 + 1.0, corner.y > 0.5);
    out.clip = vec4<f32>(px / view.width * 2.0 - 1.0, 1.0 - py / view.height * 2.0, 0.0, 1.0);
    return out;
}

@fragment
fn fs_main(in: VsOut) -> @location(0) vec4<f32> {
    return in.color;
}
