// Particles, grid mode, counting sort 3/3: scatter. Each live particle goes to slot
// start[cell] + rank of the sorted copy (position, original index, velocity), so particles of a
// cell are contiguous and the neighbour pass reads adjacent memory.
//
// Preludes prepended by the registry (src/shaders.rs): common/particles.wgsl.

@group(0) @binding(0) var<uniform> consts: Consts;
@group(0) @binding(1) var<storage, read> src: array<Particle>;
@group(0) @binding(2) var<storage, read> starts: array<u32>;
@group(0) @binding(3) var<storage, read> cell_rank: array<vec2<u32>>;
@group(0) @binding(4) var<storage, read_write> sorted: array<Sorted>;

@compute @workgroup_size(64)
fn main(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let i = gid.x + gid.y * groups.x * 64u;
    if i >= consts.count {
        return;
    }
    let cr = cell_rank[i];
    if cr.x == 0xFFFFFFFFu {
        return;
    }
    let p = src[i];
    let slot = starts[cr.x] + cr.y;
    if slot < consts.count {
        sorted[slot] = Sorted(p.pos.xyz, i, p.vel);
    }
}
