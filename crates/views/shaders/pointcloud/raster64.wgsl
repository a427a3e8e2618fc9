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
// The entry points `main` (16 bytes a point) and `main_q` (4 bytes a point, quantized) and the
// point bindings are common/pointcloud_raster.wgsl's; this pass's part is `keep`.
//
// Preludes prepended by the registry (src/shaders.rs): common/pointcloud.wgsl,
// common/pointcloud_raster.wgsl.

@group(0) @binding(3) var<storage, read_write> visibility: array<atomic<u64>>;

// Keeps (depth key, ~id) at pixel `pixel` if it is nearer than what is there.
fn keep(pixel: u32, depth_key: u32, id: u32) {
    let v = (u64(depth_key) << 32u) | u64(~id);
    if v > atomicLoad(&visibility[pixel]) {
        atomicMax(&visibility[pixel], v);
    }
}
