// Point-cloud compute rasterizer, the 64-bit path (adapters with 64-bit atomic min/max): one
// pass, every point takes part in one atomicMax per pixel of (depth key << 32 | ~index), so the
// nearest point wins and, at equal depth, the smallest index: the same visibility buffer as the
// 32-bit two-pass path (raster_depth.wgsl, raster_id.wgsl) in half the passes (Schütz, Kerbl,
// Wimmer: "Rendering Point Clouds with Compute Shaders and Vertex Order Optimization", CGF
// 40(4), 2021, §3). The buffer holds per pixel the id word (low) then the depth key (high).
//
// Early depth test (Schütz et al. 2022, §4.1): each point first reads its pixel's current value
// (an atomic load, relaxed) and only calls atomicMax when it would win; values only ever grow,
// so a point that loses against the load would lose against the max too: the same result, with
// far fewer atomics where points pile up on pixels.
//
// Two entry points, one per point layout: `main` (16 bytes a point: xyz f32 relative to its
// node's origin, attribute word; batch table of vec4<u32>, see `batch_point`) and `main_q`
// (4 bytes a point, quantized in its batch's box; batch table of `QBatch`; one dispatch per
// binding of a cloud spread over several buffers).
//
// Preludes prepended by the registry (src/gpu/shaders.rs): common/pointcloud.wgsl.

@group(0) @binding(0) var<uniform> params: RasterParams;
@group(0) @binding(1) var<storage, read> points: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read> batches: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read_write> visibility: array<atomic<u64>>;
@group(0) @binding(5) var<storage, read> qpoints: array<u32>;
@group(0) @binding(6) var<storage, read> qbatches: array<QBatch>;

// Keeps (depth key, ~id) at pixel `pixel` if it is nearer than what is there.
fn keep(pixel: u32, depth_key: u32, id: u32) {
    let v = (u64(depth_key) << 32u) | u64(~id);
    if v > atomicLoad(&visibility[pixel]) {
        atomicMax(&visibility[pixel], v);
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
