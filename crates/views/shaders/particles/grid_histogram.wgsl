// Particles, grid mode, counting sort 1/3: cell histogram. Each live particle finds its cell
// (position clamped into the grid box, so clamped pairs within r stay in adjacent cells) and
// takes a rank inside that cell with an atomic increment. Dead particles get cell 0xFFFFFFFF.
//
// Preludes prepended by the registry (src/shaders.rs): common/particles.wgsl.

@group(0) @binding(0) var<uniform> consts: Consts;
@group(0) @binding(1) var<storage, read> src: array<Particle>;
@group(0) @binding(2) var<storage, read_write> counts: array<atomic<u32>>;
@group(0) @binding(3) var<storage, read_write> cell_rank: array<vec2<u32>>;

fn cell_coords(p: vec3<f32>) -> vec3<i32> {
    let c = floor((p - consts.origin.xyz) / consts.origin.w);
    let hi = vec3<f32>(consts.dims.xyz) - 1.0;
    return vec3<i32>(clamp(c, vec3<f32>(0.0), hi));
}

@compute @workgroup_size(64)
fn main(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let i = gid.x + gid.y * groups.x * 64u;
    if i >= consts.count {
        return;
    }
    let p = src[i];
    if p.vel.w > 0.0 && p.pos.w >= p.vel.w {
        cell_rank[i] = vec2<u32>(0xFFFFFFFFu, 0u);
        return;
    }
    let c = vec3<u32>(cell_coords(p.pos.xyz));
    let cell = c.x + consts.dims.x * (c.y + consts.dims.y * c.z);
    let rank = atomicAdd(&counts[cell], 1u);
    cell_rank[i] = vec2<u32>(cell, rank);
}
