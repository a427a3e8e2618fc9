// Time series: the pixels m4_raster.wgsl rastered (owner image, column-major: 0, or 1 + the order
// of the last series drawn there) → the colour and depth of that series, as its own span and connector draws
// would have left them; untouched pixels are discarded. One triangle covers the image; the
// connectors left to the line draw come after, tested against the depth written here.
//
// Preludes prepended by the registry (src/shaders.rs): common/timeseries.wgsl.

// The owner image's size in pixels (the scene image's).
struct ResolveView {
    width: u32,
    height: u32,
    _pad0: u32,
    _pad1: u32,
}

@group(0) @binding(0) var<uniform> view: ResolveView;
@group(0) @binding(1) var<storage, read> owner: array<u32>;
// RGBA8 colour (R in the low byte) of the series drawn `order`-th.
@group(0) @binding(2) var<storage, read> colors: array<u32>;

struct FsOut {
    @location(0) color: vec4<f32>,
    @builtin(frag_depth) depth: f32,
}

@vertex
fn vs_main(@builtin(vertex_index) v: u32) -> @builtin(position) vec4<f32> {
    let x = f32(v & 1u) * 4.0 - 1.0;
    let y = f32(v >> 1u) * 4.0 - 1.0;
    return vec4<f32>(x, y, 0.0, 1.0);
}

@fragment
fn fs_main(@builtin(position) p: vec4<f32>) -> FsOut {
    let x = u32(p.x);
    let y = u32(p.y);
    if x >= view.width || y >= view.height {
        discard;
    }
    let who = owner[x * view.height + y];
    if who == 0u {
        discard;
    }
    var out: FsOut;
    out.color = unpack4x8unorm(colors[who - 1u]);
    out.depth = depth_of(who - 1u);
    return out;
}
