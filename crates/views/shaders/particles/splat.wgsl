// Particles, point-splat renderer (for large counts, where rasterizing millions of tiny sprites
// is bound by the GPU's raster and blend units): one compute thread per particle projects the
// interpolated position exactly as `draw.wgsl` does and adds its colour into the pixel it lands
// in, as fixed point (colour × 256) with atomic adds per channel. `splat_resolve.wgsl` turns the
// sums into the image. Additive, like the sprites, so the two renderers give the same picture at
// one pixel per particle. Where a frame runs a step, the last step splats as it goes instead
// (`main_splat` of integrate.wgsl, the same `splat_of`); this pass covers frames without one.
//
// Preludes prepended by the registry (src/shaders.rs): common/particles.wgsl.

// Storage, not uniform: lavapipe makes a shader variant per distinct uniform value (render.rs).
@group(0) @binding(0) var<storage, read> view: View;
@group(0) @binding(1) var<storage, read> prev: array<Particle>;
@group(0) @binding(2) var<storage, read> cur: array<Particle>;
@group(0) @binding(3) var<storage, read> sums: array<Neighbours>;
@group(0) @binding(4) var<uniform> splat: Splat;
@group(0) @binding(5) var<storage, read_write> accum: array<atomic<u32>>;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let ii = gid.x + gid.y * groups.x * 256u;
    if ii >= splat.count {
        return;
    }
    // Only the fields used are loaded (the previous state's velocity is not, nor anything of a
    // dead particle's previous state): on a software rasterizer every storage load is a loop
    // over lanes.
    let b = cur[ii];
    if b.vel.w > 0.0 && b.pos.w >= b.vel.w {
        return;
    }
    let mode = view.color_mode;
    let interact = view.interact;
    var neighbours = 0;
    if mode == 1u && interact != 0u {
        neighbours = sums[ii].coh.w;
    }
    let hit = splat_of(prev[ii].pos, b, neighbours, mode, interact, splat);
    if hit.x != NO_PIXEL {
        atomicAdd(&accum[hit.x], hit.y);
        atomicAdd(&accum[hit.x + 1u], hit.z);
        atomicAdd(&accum[hit.x + 2u], hit.w);
    }
}
