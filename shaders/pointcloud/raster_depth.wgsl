// Point-cloud compute rasterizer, pass 1 of the 32-bit path: every point keeps the nearest depth
// per pixel (atomicMax of the complemented depth bits; see `project`). Pass 2
// (raster_id.wgsl) picks, among the points at that depth, the one with the smallest index: a
// visibility buffer of point ids without 64-bit atomics (Schütz, Kerbl, Wimmer: "Rendering
// Point Clouds with Compute Shaders and Vertex Order Optimization", CGF 40(4), 2021, §4).
// One workgroup per batch of the batch table (a page of 128 points of one node).
//
// Preludes prepended by the registry (src/gpu/shaders.rs): common/pointcloud.wgsl.

@group(0) @binding(0) var<uniform> params: RasterParams;
@group(0) @binding(1) var<storage, read> points: array<vec4<u32>>;  // xyz f32 bits, w attributes
@group(0) @binding(2) var<storage, read> batches: array<vec4<u32>>; // see batch_point
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
    if hit.x != NO_PIXEL {
        atomicMax(&depth[hit.x], hit.y);
    }
}
