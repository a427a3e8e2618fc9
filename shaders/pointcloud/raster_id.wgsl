// Point-cloud compute rasterizer, pass 2 of the 32-bit path: the points whose depth key equals
// the pixel's (pass 1, raster_depth.wgsl) write their pool index; the smallest index wins
// (atomicMax of its complement), so the result does not depend on the order the GPU runs them
// in. `ids` holds `~index`; 0 = no point. A point whose complement is not above the current one
// skips the atomic (early test, as in pass 1).
//
// Two entry points, one per point layout, as in raster_depth.wgsl: `main` (16 bytes a point)
// and `main_q` (4 bytes a point, quantized; ids are the batch's `first` + k).
//
// Preludes prepended by the registry (src/gpu/shaders.rs): common/pointcloud.wgsl.

@group(0) @binding(0) var<uniform> params: RasterParams;
@group(0) @binding(1) var<storage, read> points: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read> batches: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read_write> depth: array<atomic<u32>>;
@group(0) @binding(4) var<storage, read_write> ids: array<atomic<u32>>;
@group(0) @binding(5) var<storage, read> qpoints: array<u32>;
@group(0) @binding(6) var<storage, read> qbatches: array<QBatch>;

fn keep_id(pixel: u32, key: u32, id: u32) {
    if atomicLoad(&depth[pixel]) == key && ~id > atomicLoad(&ids[pixel]) {
        atomicMax(&ids[pixel], ~id);
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
        keep_id(hit.x, hit.y, i);
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
            keep_id(hit.x, hit.y, b.first + k);
        }
    }
}
