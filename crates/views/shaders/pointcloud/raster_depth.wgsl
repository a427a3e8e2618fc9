// Point-cloud compute rasterizer, pass 1 of the 32-bit path: every point keeps the nearest depth
// per pixel (atomicMax of the complemented depth bits; see `project`). Pass 2
// (raster_id.wgsl) picks, among the points at that depth, the one with the smallest index: a
// visibility buffer of point ids without 64-bit atomics (Schütz, Kerbl, Wimmer: "Rendering
// Point Clouds with Compute Shaders and Vertex Order Optimization", CGF 40(4), 2021, §4).
// Early depth test (Schütz et al. 2022, §4.1): a point reads its pixel's depth first (atomic
// load) and calls atomicMax only when it is nearer.
//
// The entry points `main` (16 bytes a point, one workgroup per batch of the batch table) and
// `main_q` (4 bytes a point quantized in its batch's box, one workgroup per `QBatch`) and the
// point bindings are common/pointcloud_raster.wgsl's; this pass's part is `keep`.
//
// Preludes prepended by the registry (src/shaders.rs): common/pointcloud.wgsl,
// common/pointcloud_raster.wgsl.

@group(0) @binding(3) var<storage, read_write> depth: array<atomic<u32>>;
@group(0) @binding(4) var<storage, read_write> ids: array<atomic<u32>>;

// Keeps the depth key at `pixel` if it is nearer than what is there (the id is pass 2's).
fn keep(pixel: u32, key: u32, id: u32) {
    if key > atomicLoad(&depth[pixel]) {
        atomicMax(&depth[pixel], key);
    }
}
