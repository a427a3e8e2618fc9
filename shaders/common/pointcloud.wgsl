// Shared prelude of the point-cloud rasterizer passes (pointcloud/raster_*.wgsl): the parameters
// (mirror: src/pointcloud/raster.rs `RasterParams`, checked by tests/shader_layout.rs) and the
// projection of a point to its pixel and depth key. Declare nothing here that needs a binding.

// Parameters of one rasterization (96 bytes).
struct RasterParams {
    view_proj: mat4x4<f32>, // points (relative to the batch origin) → clip space
    width: u32,             // visibility buffer size in pixels
    height: u32,
    count: u32,             // points in the batch
    _pad: u32,
    _pad1: vec4<u32>,
}

// `project`: the point adds to no pixel.
const NO_PIXEL: u32 = 0xffffffffu;

// The pixel of point `p` (x = index y·width + x, NO_PIXEL when behind the camera or outside the
// view or depth range) and its depth key (y = bitwise complement of the f32 depth bits: larger
// is nearer, 0 never occurs for depths in [0, 1], so a cleared buffer of zeros means "empty").
fn project(p: vec3<f32>, r: RasterParams) -> vec2<u32> {
    let clip = r.view_proj * vec4<f32>(p, 1.0);
    if clip.w <= 0.0 {
        return vec2<u32>(NO_PIXEL, 0u);
    }
    let ndc = clip.xyz / clip.w;
    if ndc.z < 0.0 || ndc.z > 1.0 || abs(ndc.x) >= 1.0 || abs(ndc.y) >= 1.0 {
        return vec2<u32>(NO_PIXEL, 0u);
    }
    let x = min(u32((ndc.x * 0.5 + 0.5) * f32(r.width)), r.width - 1u);
    let y = min(u32((0.5 - ndc.y * 0.5) * f32(r.height)), r.height - 1u);
    return vec2<u32>(y * r.width + x, ~bitcast<u32>(ndc.z));
}
