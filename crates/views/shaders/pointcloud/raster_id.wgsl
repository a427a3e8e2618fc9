// Point-cloud compute rasterizer, pass 2 of the 32-bit path: the points whose depth key equals
// the pixel's (pass 1, raster_depth.wgsl) write their pool index; the smallest index wins
// (atomicMax of its complement), so the result does not depend on the order the GPU runs them
// in. `ids` holds `~index`; 0 = no point. A point whose complement is not above the current one
// skips the atomic (early test, as in pass 1).
//
// The entry points `main` (16 bytes a point) and `main_q` (4 bytes a point, quantized; ids are
// the batch's `first` + k) and the point bindings are common/pointcloud_raster.wgsl's; this
// pass's part is `keep`.
//
// Preludes prepended by the registry (src/shaders.rs): common/pointcloud.wgsl,
// common/pointcloud_raster.wgsl.

@group(0) @binding(3) var<storage, read_write> depth: array<atomic<u32>>;
@group(0) @binding(4) var<storage, read_write> ids: array<atomic<u32>>;

fn keep(pixel: u32, key: u32, id: u32) {
    if atomicLoad(&depth[pixel]) == key && ~id > atomicLoad(&ids[pixel]) {
        atomicMax(&ids[pixel], ~id);
    }
}
