// Shared prelude of the point-cloud rasterizer passes (pointcloud/raster_*.wgsl, resolve.wgsl):
// the parameters (mirror: src/pointcloud/raster.rs `RasterParams`, checked by
// tests/shader_layout.rs), the batch table's layout and the projection of a point to its pixel
// and depth key. Declare nothing here that needs a binding.

// Parameters of one rasterization (208 bytes).
struct RasterParams {
    view_proj: mat4x4<f32>,        // camera-relative points (point − eye) → clip space
    width: u32,                    // visibility buffer size in pixels
    height: u32,
    _pad: vec2<u32>,
    class_mask: array<vec4<u32>, 2>, // bit c: ASPRS class c is drawn
}

// Points per batch (a page of the pool; the passes' workgroup size).
const BATCH_POINTS: u32 = 128u;
// A batch-table entry that draws nothing.
const EMPTY_BATCH: u32 = 0xffffffffu;
// `batch_point`: no point for this invocation.
const NO_POINT: u32 = 0xffffffffu;

// Pool index of the point invocation `local` of batch `b` handles (NO_POINT past the batch's
// fill). A batch: xyz = f32 bits of its node's origin minus the eye, w = page << 7 | (count − 1).
fn batch_point(b: vec4<u32>, local: u32) -> u32 {
    if b.w == EMPTY_BATCH || local > (b.w & 127u) {
        return NO_POINT;
    }
    return (b.w >> 7u) * BATCH_POINTS + local;
}

// Whether points of the class in attribute word `word` (bits 0–7) are drawn.
fn class_drawn(word: u32, r: RasterParams) -> bool {
    let c = word & 0xffu;
    return ((r.class_mask[c >> 7u][(c >> 5u) & 3u] >> (c & 31u)) & 1u) != 0u;
}

// Whether the visibility buffer is the 64-bit path's (raster64.wgsl): per pixel the id word
// then the depth key in one buffer, bound as both `depth` and `ids` of the resolve and the pick.
override PACKED: bool = false;

// Index of pixel `i`'s depth key and id word in the arrays the resolve and the pick read.
fn depth_slot(i: u32) -> u32 {
    return select(i, 2u * i + 1u, PACKED);
}
fn id_slot(i: u32) -> u32 {
    return select(i, 2u * i, PACKED);
}

// Largest point radius of the resolve and the pick, pixels (MAX_RADIUS in raster.rs).
const MAX_PICK_RADIUS: i32 = 3;

// `project`: the point adds to no pixel.
const NO_PIXEL: u32 = 0xffffffffu;

// The pixel and depth key (`project`) of pool point `p` of batch `b`, NO_PIXEL when its class
// is hidden.
fn point_hit(b: vec4<u32>, p: vec4<u32>, r: RasterParams) -> vec2<u32> {
    if !class_drawn(p.w, r) {
        return vec2<u32>(NO_PIXEL, 0u);
    }
    return project(bitcast<vec3<f32>>(p.xyz) + bitcast<vec3<f32>>(b.xyz), r);
}

// The pixel of camera-relative point `p` (x = index y·width + x, NO_PIXEL when behind the camera
// or outside the view or depth range) and its depth key (y = bitwise complement of the f32
// depth bits: larger is nearer, 0 never occurs for depths in [0, 1], so a cleared buffer of
// zeros means "empty").
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
