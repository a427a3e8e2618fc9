// Point-cloud compute rasterizer, pass 1 of the 32-bit path: every point keeps the nearest depth
// per pixel (atomicMax of the complemented depth bits; see `project`). Pass 2
// (raster_id.wgsl) picks, among the points at that depth, the one with the smallest index: a
// visibility buffer of point ids without 64-bit atomics (Schütz, Kerbl, Wimmer: "Rendering
// Point Clouds with Compute Shaders and Vertex Order Optimization", CGF 40(4), 2021, §4).
// Early depth test (Schütz et al. 2022, §4.1): a point reads its pixel's depth first (atomic
// load) and calls atomicMax only when it is nearer.
//
// Two entry points, one per point layout: `main` (16 bytes a point, one workgroup per batch of
// the batch table: a page of 128 points of one node) and `main_q` (4 bytes a point quantized in
// its batch's box, one workgroup per `QBatch` of up to 1024 points, batches wholly outside the
// view skipped; one dispatch per binding of a cloud spread over several buffers).
//
// Preludes prepended by the registry (src/gpu/shaders.rs): common/pointcloud.wgsl.

@group(0) @binding(0) var<uniform> params: RasterParams;
@group(0) @binding(1) var<storage, read> points: array<vec4<u32>>;  // xyz f32 bits, w attributes
@group(0) @binding(2) var<storage, read> batches: array<vec4<u32>>; // see batch_point
@group(0) @binding(3) var<storage, read_write> depth: array<atomic<u32>>;
@group(0) @binding(4) var<storage, read_write> ids: array<atomic<u32>>;
@group(0) @binding(5) var<storage, read> qpoints: array<u32>;       // see qdecode
@group(0) @binding(6) var<storage, read> qbatches: array<QBatch>;

fn keep_depth(pixel: u32, key: u32) {
    if key > atomicLoad(&depth[pixel]) {
        atomicMax(&depth[pixel], key);
    }
}

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
        keep_depth(hit.x, hit.y);
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
            keep_depth(hit.x, hit.y);
        }
    }
}
