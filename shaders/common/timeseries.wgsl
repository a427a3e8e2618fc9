// Shared prelude of the time-series shaders (timeseries/*.wgsl): the records the M4 pass writes
// and the draw passes read, the draw uniform (mirrors in src/scene/timeseries/gpu.rs and
// src/series/decimate.rs, checked by tests/shader_layout.rs), and the f32-bit helpers.

// One vertical span record: pixel column and the f32 bits of the low and high values.
struct Span {
    col: u32,
    lo: u32,
    hi: u32,
}

// One connector record: a line from column `col0` at value bits `v0` to `col1` at `v1`.
struct Conn {
    col0: u32,
    v0: u32,
    col1: u32,
    v1: u32,
}

// The draw uniform: value → pixel row is y = b − v·a (f64-derived constants, row 0 at the top),
// image width × height pixels, RGBA8 colour (R in the low byte).
struct SeriesView {
    a: f32,
    b: f32,
    width: f32,
    height: f32,
    color: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

// Vertex output of the draw passes: clip position and RGBA colour.
struct VsOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) color: vec4<f32>,
}

// Marker of an empty span or connector record.
const NONE: u32 = 0xffffffffu;

fn is_nan(bits: u32) -> bool {
    return (bits & 0x7fffffffu) > 0x7f800000u;
}

// f32 bits → u32 whose unsigned order is the float order (NaN excluded).
fn key(bits: u32) -> u32 {
    if (bits & 0x80000000u) != 0u {
        return ~bits;
    }
    return bits | 0x80000000u;
}

