// Point-cloud compute rasterizer, pass 2 of the 32-bit path: the points whose depth key equals
// the pixel's (pass 1, raster_depth.wgsl) write their pool index; the smallest index wins
// (atomicMax of its complement), so the result does not depend on the order the GPU runs them
// in. `ids` holds `~index`; 0 = no point.
//
// Preludes prepended by the registry (src/gpu/shaders.rs): common/pointcloud.wgsl.

@group(0) @binding(0) var<uniform> params: RasterParams;
@group(0) @binding(1) var<storage, read> points: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read> batches: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read_write> depth: array<atomic<u32>>;
@group(0) @binding(4) var<storage, read_write> ids: array<atomic<u32>>;

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
    if hit.x != NO_PIXEL && atomicLoad(&depth[hit.x]) == hit.y {
        atomicMax(&ids[hit.x], ~i);
    }
}
