// Point-cloud compute rasterizer, the 64-bit path (adapters with 64-bit atomic min/max): one
// pass, every point takes part in one atomicMax per pixel of (depth key << 32 | ~index), so the
// nearest point wins and, at equal depth, the smallest index: the same visibility buffer as the
// 32-bit two-pass path (raster_depth.wgsl, raster_id.wgsl) in half the passes (Schütz, Kerbl,
// Wimmer: "Rendering Point Clouds with Compute Shaders and Vertex Order Optimization", CGF
// 40(4), 2021, §3). The buffer holds per pixel the id word (low) then the depth key (high).
//
// Preludes prepended by the registry (src/gpu/shaders.rs): common/pointcloud.wgsl.

@group(0) @binding(0) var<uniform> params: RasterParams;
@group(0) @binding(1) var<storage, read> points: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read> batches: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read_write> visibility: array<atomic<u64>>;

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
        atomicMax(&visibility[hit.x], (u64(hit.y) << 32u) | u64(~i));
    }
}
