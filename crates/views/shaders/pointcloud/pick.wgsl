// Point-cloud compute rasterizer, the pick: the point the resolve (resolve.wgsl) shows at one
// pixel, for the hover readout: among the pixels within the point radius, the nearest depth
// key, and the point id there. One invocation; runs after both raster passes, bound to the piece
// of the visibility buffer that resolves row y (whose halo holds the rows within the radius).
//
// Preludes prepended by the registry (src/shaders.rs): common/pointcloud.wgsl.

// The pixel and radius (mirror: src/pointcloud/raster/params.rs `PickParams`).
struct PickParams {
    x: i32,
    y: i32,
    radius: i32,
    _pad: u32,
    width: u32,
    height: u32,
    _pad1: vec2<u32>,
}

@group(0) @binding(0) var<uniform> pp: PickParams;
@group(0) @binding(1) var<storage, read> depth: array<u32>;
@group(0) @binding(2) var<storage, read> ids: array<u32>;
@group(0) @binding(3) var<storage, read_write> picked: array<u32, 2>; // ~index (0: none), key
@group(0) @binding(4) var<uniform> piece: Piece; // the piece of bindings 1, 2: the one resolving row y

@compute @workgroup_size(1)
fn main() {
    var best = 0u;
    var at = 0u;
    for (var dy = -MAX_PICK_RADIUS; dy <= MAX_PICK_RADIUS; dy++) {
        for (var dx = -MAX_PICK_RADIUS; dx <= MAX_PICK_RADIUS; dx++) {
            let inside = dx * dx + dy * dy <= pp.radius * pp.radius + pp.radius;
            let cx = clamp(pp.x + dx, 0, i32(pp.width) - 1);
            let cy = clamp(pp.y + dy, 0, i32(pp.height) - 1);
            let i = (u32(cy) - piece.row0) * pp.width + u32(cx);
            let k = select(0u, depth[depth_slot(i)], inside);
            if k > best {
                best = k;
                at = i;
            }
        }
    }
    picked[0] = select(0u, ids[id_slot(at)], best != 0u);
    picked[1] = best;
}
