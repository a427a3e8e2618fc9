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
// over several buffers).

@group(0) @binding(0) var<uniform> params: RasterParams;
@group(0) @binding(1) var<storage, read> points: array<vec4<u32>>;  // xyz f32 bits, w attributes
@group(0) @binding(2) var<storage, read> batches: array<vec4<u32>>; // see batch_point
@group(0) @binding(5) var<storage, read> qpoints: array<u32>;       // see qdecode
@group(0) @binding(6) var<storage, read> qbatches: array<QBatch>;

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
    let hit = point_hit(b, points[i], params);
    if hit.x != NO_PIXEL {
        keep(hit.x, hit.y, i);
    }
}

@compute @workgroup_size(128)
fn main_q(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) local: u32,
) {
    let b = qbatches[qbatch_index(wg, groups)];
    if b.slot == EMPTY_BATCH || !qbatch_in_view(b, params) {
        return;
    }
    let count = (b.slot & 1023u) + 1u;
    let base = (b.slot >> 10u) * QBATCH_POINTS;
    for (var k = local; k < count; k += 128u) {
        let hit = project(qdecode(b, qpoints[base + k]), params);
        if hit.x != NO_PIXEL {
            keep(hit.x, hit.y, b.first + k);
        }
    }
}
