// Time series: vertical spans, one pixel wide, covering every pixel row from the row of `lo` to
// the row of `hi` inclusive (closed), in pixel column `col`. Drawn as two triangles per span whose
// edges lie on pixel boundaries, so coverage is exact: the union of the spans of consecutive
// samples inside one column equals the span of the column's min and max (M4's argument).
// One draw covers every series: vertex v belongs to record v / 6, whose series is its table entry
// (colour and depth; the depth test keeps the painter's order of the series).
//
// Preludes prepended by the registry (src/shaders.rs): common/timeseries.wgsl.

@group(0) @binding(0) var<uniform> view: SeriesView;
@group(0) @binding(1) var<storage, read> table: array<SeriesDraw>;
@group(0) @binding(2) var<storage, read> spans: array<Span>;

@vertex
fn vs_main(@builtin(vertex_index) v: u32) -> VsOut {
    var out: VsOut;
    let record = v / 6u;
    let vi = v - record * 6u;
    let s = spans[record];
    let series = table[s.slot];
    out.color = unpack4x8unorm(series.color);
    // Rows top (hi) to bottom (lo), clipped to the image.
    let r0 = max(span_row(s.hi, view.a, view.b, view.height), 0.0);
    let r1 = min(span_row(s.lo, view.a, view.b, view.height), view.height - 1.0);
    if s.col == 0xffffffffu || r0 > r1 {
        out.clip = vec4<f32>(2.0, 2.0, 0.0, 1.0);
        return out;
    }
    // Corners (0,0) (1,0) (0,1), then (0,1) (1,0) (1,1).
    let right = vi == 1u || vi == 4u || vi == 5u;
    let bottom = vi == 2u || vi == 3u || vi == 5u;
    let px = f32(s.col) + select(0.0, 1.0, right);
    let py = select(r0, r1 + 1.0, bottom);
    out.clip = vec4<f32>(px / view.width * 2.0 - 1.0, 1.0 - py / view.height * 2.0, series.depth, 1.0);
    return out;
}

@fragment
fn fs_main(in: VsOut) -> @location(0) vec4<f32> {
    return in.color;
}
