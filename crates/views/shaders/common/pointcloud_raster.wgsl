// Shared prelude of the point-cloud rasterizer's point passes (pointcloud/raster64.wgsl,
// raster_depth.wgsl, raster_id.wgsl), after common/pointcloud.wgsl: their common bindings and
// the two entry points, which hand every point that lands on a pixel to the pass's own
// `keep(pixel, depth_key, id)`. Each pass declares `keep` and its visibility bindings (3, and 4
// in the 32-bit passes); WGSL module-scope declarations are order-independent. Included only
// by these passes, which all bind these.
//
// Two entry points, one per point layout: `main` (16 bytes a point: xyz f32 relative to its
// node's origin, attribute word; one workgroup per batch of the batch table: a page of 128
// points of one node, see `batch_point`) and `main_q` (4 bytes a point quantized in its batch's
// box, see `qdecode`; one workgroup per `QBatch` of up to 1024 points, batches wholly outside
// the view skipped; ids are the batch's `first` + k; one dispatch per binding of a cloud spread
// over several buffers; the attribute words are read only while the class mask hides a class;
// see QFILTER for its workgroup depth filter).

@group(0) @binding(0) var<uniform> params: RasterParams;
@group(0) @binding(1) var<storage, read> points: array<vec4<u32>>;  // xyz f32 bits, w attributes
@group(0) @binding(2) var<storage, read> batches: array<vec4<u32>>; // see batch_point
@group(0) @binding(5) var<storage, read> qpoints: array<u32>;       // see qdecode
@group(0) @binding(6) var<storage, read> qbatches: array<QBatch>;
@group(0) @binding(7) var<storage, read> qwords: array<u32>;        // attribute words (class: bits 0–7), as qpoints
// The piece of the visibility buffer bound at 3 (and 4): a dispatch per piece, each keeping the
// points that land on its rows (`keep` gets the element in its buffers, see `piece_pixel`).
@group(0) @binding(8) var<uniform> piece: Piece;

@compute @workgroup_size(128)
fn main(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) local: u32,
) {
    let b = batches[wg.x + wg.y * groups.x];
    let i = batch_point(b, local);
    if i == NO_POINT {
        return;
    }
    let hit = point_hit(b, points[i], params, piece);
    if hit.x != NO_PIXEL {
        keep(hit.x, hit.y, i);
    }
}

// Workgroup depth filter of `main_q` (off unless the override is true; the kernel bench times
// both): where a batch's points fall on a few pixels (a dense cloud seen whole: hundreds of
// points a pixel), each workgroup first keeps the nearest depth key per pixel of its batch in
// workgroup memory, and only the points that equal it go on to `keep`, whose early depth test
// and atomic then see about one point per pixel per batch. The same result: a point nearer than
// every other of its batch at its pixel still reaches `keep`, ties included, and one that is not
// cannot win there (keys only grow). Measured slower on the H200 (the workgroup atomics on a few
// addresses and the barrier cost more than the global early test saves), hence off.
override QFILTER: bool = false;
const QFILTER_DENSITY: u32 = 2u;
var<workgroup> qtile: array<atomic<u32>, QTILE>;
var<workgroup> qrect: vec4<u32>;

// Pixel (x, y) and depth key of point k of batch `b` (element `base` + k of the bindings), x =
// NO_PIXEL when it adds to no pixel or its class is hidden (`classes`: some class is, so the
// attribute word is read).
fn qhit(b: QBatch, base: u32, k: u32, classes: bool) -> vec3<u32> {
    if classes && !class_drawn(qwords[base + k], params) {
        return vec3<u32>(NO_PIXEL, 0u, 0u);
    }
    return project_xy(qdecode(b, qpoints[base + k]), params);
}

// Slot of pixel (x, y) in the workgroup tile of rectangle `rect`, QTILE when outside it.
fn qslot(x: u32, y: u32, rect: vec4<u32>) -> u32 {
    let tx = x - rect.x;
    let ty = y - rect.y;
    if tx >= rect.z || ty >= rect.w {
        return QTILE;
    }
    return ty * rect.z + tx;
}

@compute @workgroup_size(128)
fn main_q(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) local: u32,
) {
    let b = qbatches[qbatch_index(wg, groups)];
    if b.slot == EMPTY_BATCH || !qbatch_in_view(b, params, piece) {
        return;
    }
    let count = (b.slot & 1023u) + 1u;
    let base = (b.slot >> 10u) * QBATCH_POINTS;
    let classes = !all_classes_drawn(params);
    if !QFILTER {
        for (var k = local; k < count; k += 128u) {
            let h = qhit(b, base, k, classes);
            if h.x != NO_PIXEL {
                let px = piece_pixel(h.x, h.y, params.width, piece);
                if px != NO_PIXEL {
                    keep(px, h.z, b.first + k);
                }
            }
        }
        return;
    }
    if local == 0u {
        qrect = qbatch_rect(b, params);
    }
    for (var i = local; i < QTILE; i += 128u) {
        atomicStore(&qtile[i], 0u);
    }
    // This invocation's points k = local + 128·j (x = NO_PIXEL: none).
    var hits: array<vec3<u32>, 8>;
    for (var j = 0u; j < 8u; j++) {
        let k = local + 128u * j;
        hits[j] = vec3<u32>(NO_PIXEL, 0u, 0u);
        if k < count {
            hits[j] = qhit(b, base, k, classes);
        }
    }
    // The tile only where the batch is dense: at least QFILTER_DENSITY points a pixel of its
    // rectangle on average (sparser batches barely contend, and skip the tile and its barrier).
    var rect = workgroupUniformLoad(&qrect);
    if count < QFILTER_DENSITY * rect.z * rect.w {
        rect.z = 0u;
    }
    if rect.z != 0u {
        for (var j = 0u; j < 8u; j++) {
            let h = hits[j];
            if h.x != NO_PIXEL {
                let s = qslot(h.x, h.y, rect);
                if s < QTILE {
                    atomicMax(&qtile[s], h.z);
                }
            }
        }
        workgroupBarrier();
    }
    for (var j = 0u; j < 8u; j++) {
        let h = hits[j];
        if h.x == NO_PIXEL {
            continue;
        }
        if rect.z != 0u {
            let s = qslot(h.x, h.y, rect);
            if s < QTILE && h.z < atomicLoad(&qtile[s]) {
                continue;
            }
        }
        let px = piece_pixel(h.x, h.y, params.width, piece);
        if px != NO_PIXEL {
            keep(px, h.z, b.first + local + 128u * j);
        }
    }
}
