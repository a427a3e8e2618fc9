// Spectrogram: draws the ring texture over the whole scene texture, newest column at the right
// edge. Nearest-column lookup (textureLoad), so every STFT column is shown as computed.

struct Params {
    ring_width: u32, // texture width in columns
    newest: u32,     // ring column just after the newest written column
    visible: u32,    // columns spanned by the viewport width
    rows: u32,       // texture height (bins)
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var ring: texture_2d<f32>;

struct VsOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) uv: vec2<f32>,
}

@vertex
fn vs_main(@builtin(vertex_index) vi: u32) -> VsOut {
    // One triangle covering the viewport.
    let x = f32((vi << 1u) & 2u);
    let y = f32(vi & 2u);
    var out: VsOut;
    out.clip = vec4<f32>(x * 2.0 - 1.0, 1.0 - y * 2.0, 0.0, 1.0);
    out.uv = vec2<f32>(x, y);
    return out;
}

@fragment
fn fs_main(in: VsOut) -> @location(0) vec4<f32> {
    let vis = max(params.visible, 1u);
    let k = min(u32(in.uv.x * f32(vis)), vis - 1u); // 0 = oldest visible column
    let back = vis - k;                               // 1 = newest
    let col = (params.newest + params.ring_width * 2u - back) % params.ring_width;
    let row = min(u32(in.uv.y * f32(params.rows)), params.rows - 1u);
    let c = textureLoad(ring, vec2<u32>(col, row), 0);
    return vec4<f32>(c.rgb, 1.0);
}
