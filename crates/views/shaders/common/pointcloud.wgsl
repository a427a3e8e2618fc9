// Shared prelude of the point-cloud rasterizer passes (pointcloud/raster_*.wgsl, resolve.wgsl):
// the parameters (mirror: src/pointcloud/raster/params.rs `RasterParams`, checked by
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

// One piece of the visibility buffer (mirror: src/pointcloud/pieces.rs `Piece`, 16 bytes): a
// band of whole rows in buffers of its own, so that a target over the device's binding limits is
// bound piece by piece. Its buffers hold rows row0 .. row0 + rows (its core rows, which it
// resolves, and a halo of MAX_PICK_RADIUS rows each side where the target has them: the raster
// passes fill the halo as the neighbouring piece fills its core, so the resolve and the pick
// read neighbours across the piece's edge from its own buffers). Pixel (x, y) is element
// (y − row0) · width + x of them. One piece (row0 0, rows = height) at ordinary sizes.
struct Piece {
    row0: u32,      // first target row its buffers hold
    rows: u32,      // rows they hold
    core0: u32,     // first row it resolves (row 0 of its piece of the image)
    core_rows: u32, // rows it resolves
}

// Element of pixel (x, y) in the buffers of piece `pc` (`width` pixels a row), NO_PIXEL when
// row y is not among its rows.
fn piece_pixel(x: u32, y: u32, width: u32, pc: Piece) -> u32 {
    let ly = y - pc.row0;
    if ly >= pc.rows {
        return NO_PIXEL;
    }
    return ly * width + x;
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

// The pixel and depth key (`project`) of pool point `p` of batch `b` in piece `pc`, NO_PIXEL
// when its class is hidden.
fn point_hit(b: vec4<u32>, p: vec4<u32>, r: RasterParams, pc: Piece) -> vec2<u32> {
    if !class_drawn(p.w, r) {
        return vec2<u32>(NO_PIXEL, 0u);
    }
    return project(bitcast<vec3<f32>>(p.xyz) + bitcast<vec3<f32>>(b.xyz), r, pc);
}

// The pixel of camera-relative point `p` in piece `pc` (x = its element, `piece_pixel`; NO_PIXEL
// when behind the camera, outside the view or depth range, or on a row the piece does not hold)
// and its depth key (y = bitwise complement of the f32 depth bits: larger is nearer, 0 never
// occurs for depths in [0, 1], so a cleared buffer of zeros means "empty").
fn project(p: vec3<f32>, r: RasterParams, pc: Piece) -> vec2<u32> {
    let h = project_xy(p, r);
    if h.x == NO_PIXEL {
        return vec2<u32>(NO_PIXEL, 0u);
    }
    return vec2<u32>(piece_pixel(h.x, h.y, r.width, pc), h.z);
}

// `project` with the pixel's column and row apart: (x, y, depth key), x = NO_PIXEL when the
// point adds to no pixel.
fn project_xy(p: vec3<f32>, r: RasterParams) -> vec3<u32> {
    let clip = r.view_proj * vec4<f32>(p, 1.0);
    if clip.w <= 0.0 {
        return vec3<u32>(NO_PIXEL, 0u, 0u);
    }
    let ndc = clip.xyz / clip.w;
    if ndc.z < 0.0 || ndc.z > 1.0 || abs(ndc.x) >= 1.0 || abs(ndc.y) >= 1.0 {
        return vec3<u32>(NO_PIXEL, 0u, 0u);
    }
    let x = min(u32((ndc.x * 0.5 + 0.5) * f32(r.width)), r.width - 1u);
    let y = min(u32((0.5 - ndc.y * 0.5) * f32(r.height)), r.height - 1u);
    return vec3<u32>(x, y, ~bitcast<u32>(ndc.z));
}

// Whether the class mask draws every class (the quantized passes then skip the attribute words).
fn all_classes_drawn(r: RasterParams) -> bool {
    let ones = vec4<u32>(0xffffffffu);
    return all(r.class_mask[0] == ones) && all(r.class_mask[1] == ones);
}

// ---- Quantized points (the `main_q` entry points of raster64.wgsl, raster_depth.wgsl,
// raster_id.wgsl): 4 bytes a point, x, y, z as 10-bit cells (bits 0–9, 10–19, 20–29) of their
// batch's box, after Schütz, Kerbl, Hei, Wimmer, Wimmer: "Software Rasterization of 2 Billion
// Points in Real Time" (HPG 2022), §4.2 (the "low precision" encoding). A batch is a run of up to
// QBATCH_POINTS spatially coherent points (Morton order); its table entry (mirror:
// src/pointcloud/raster/params.rs `QBatch`) holds the box and where its points are.

// Points per quantized batch: one workgroup of 128 invocations, 8 points each.
const QBATCH_POINTS: u32 = 1024u;

// One quantized batch (32 bytes).
struct QBatch {
    lo: vec3<f32>,   // the box's low corner minus the eye (camera-relative)
    first: u32,      // id of the batch's first point (point k of the batch is first + k)
    step: vec3<f32>, // cell size per axis (a power of two; the box is 1024 cells a side)
    slot: u32,       // (index of its first point in its binding / QBATCH_POINTS) << 10 | (count − 1); EMPTY_BATCH: none
}

// The batch workgroup `wg` of a dispatch of `groups` (x = QDISPATCH_X, y rows when there are
// more batches than that; see `qdispatch_size` in raster.rs) draws: the table read column by
// column, so batch b + 1 (the next of the same region of the screen) runs QDISPATCH_X
// workgroups after batch b, when b has finished, and its early depth test sees b's result
// instead of racing it to the same pixels.
fn qbatch_index(wg: vec3<u32>, groups: vec3<u32>) -> u32 {
    return wg.y + wg.x * groups.y;
}

// Camera-relative position of point code `q` of batch `b`: the centre of its cell. Exact in f32
// (the step is a power of two), so any GPU and the CPU reference agree bit for bit.
fn qdecode(b: QBatch, q: u32) -> vec3<f32> {
    let c = vec3<u32>(q & 1023u, (q >> 10u) & 1023u, (q >> 20u) & 1023u);
    return b.lo + (vec3<f32>(c) + 0.5) * b.step;
}

// Whether any of batch `b`'s box may be in view of piece `pc`: false only when the whole box is
// outside one clip plane (−w ≤ x ≤ w, bottom·w ≤ y ≤ top·w, 0 ≤ z ≤ w, where the piece's rows,
// with a row of slack each side, span ndc y from bottom to top within [−1, 1]; a piece of the
// whole target: −w ≤ y ≤ w). Centre and half extents in clip space; the box's extent along a
// plane's normal is the sum of |plane · axis|.
fn qbatch_in_view(b: QBatch, r: RasterParams, pc: Piece) -> bool {
    let h = b.step * 512.0;
    let c = r.view_proj * vec4<f32>(b.lo + h, 1.0);
    let ax = r.view_proj[0] * h.x;
    let ay = r.view_proj[1] * h.y;
    let az = r.view_proj[2] * h.z;
    // Row y holds ndc y in (1 − 2(y + 1)/height, 1 − 2y/height].
    let rows = f32(r.height);
    let top = min(1.0, 1.0 - 2.0 * (f32(pc.row0) - 1.0) / rows);
    let bottom = max(-1.0, 1.0 - 2.0 * (f32(pc.row0 + pc.rows) + 1.0) / rows);
    let planes = array<vec4<f32>, 6>(
        vec4<f32>(1.0, 0.0, 0.0, 1.0),
        vec4<f32>(-1.0, 0.0, 0.0, 1.0),
        vec4<f32>(0.0, 1.0, 0.0, -bottom),
        vec4<f32>(0.0, -1.0, 0.0, top),
        vec4<f32>(0.0, 0.0, 1.0, 0.0),
        vec4<f32>(0.0, 0.0, -1.0, 1.0),
    );
    for (var i = 0; i < 6; i++) {
        let p = planes[i];
        let reach = abs(dot(p, ax)) + abs(dot(p, ay)) + abs(dot(p, az));
        // Slack for f32 rounding: culling is only ever conservative.
        if dot(p, c) + reach * 1.001 + 1e-6 * abs(c.w) < 0.0 {
            return false;
        }
    }
    return true;
}

// Keys of the workgroup depth tile of `main_q`: the most pixels a batch's rectangle may cover
// for the tile to be used.
const QTILE: u32 = 1024u;

// The pixel rectangle (x0, y0, width, height) that holds every point of batch `b` (its box's
// eight corners projected, one pixel of slack a side for rounding, clipped to the target);
// width 0 when a corner is behind the camera or the rectangle holds more than QTILE pixels.
// Only a hint: `main_q` checks each point against it.
fn qbatch_rect(b: QBatch, r: RasterParams) -> vec4<u32> {
    let size = b.step * 1024.0;
    var lo = vec2<f32>(3.0e38);
    var hi = vec2<f32>(-3.0e38);
    for (var c = 0u; c < 8u; c++) {
        let corner = b.lo + size * vec3<f32>(f32(c & 1u), f32((c >> 1u) & 1u), f32(c >> 2u));
        let clip = r.view_proj * vec4<f32>(corner, 1.0);
        if clip.w <= 0.0 {
            return vec4<u32>(0u);
        }
        let s = vec2<f32>(
            (clip.x / clip.w * 0.5 + 0.5) * f32(r.width),
            (0.5 - clip.y / clip.w * 0.5) * f32(r.height),
        );
        lo = min(lo, s);
        hi = max(hi, s);
    }
    let top = vec2<f32>(f32(r.width - 1u), f32(r.height - 1u));
    let a = clamp(floor(lo) - 1.0, vec2<f32>(0.0), top);
    let z = clamp(floor(hi) + 1.0, vec2<f32>(0.0), top);
    let x0 = u32(a.x);
    let y0 = u32(a.y);
    let w = u32(z.x) - x0 + 1u;
    let h = u32(z.y) - y0 + 1u;
    if w * h > QTILE {
        return vec4<u32>(0u);
    }
    return vec4<u32>(x0, y0, w, h);
}
