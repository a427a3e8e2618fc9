// Particles, grid mode, counting sort 2/3 (prefix sum, fix-up pass): adds the scanned total of
// all earlier blocks (the next level's exclusive scan) to every element of a 512-element block.
//
// Preludes prepended by the registry (src/shaders.rs): common/particles.wgsl.

@group(0) @binding(0) var<uniform> params: CountParams;
@group(0) @binding(1) var<storage, read_write> data: array<u32>;
@group(0) @binding(2) var<storage, read_write> block_sums: array<u32>;

@compute @workgroup_size(256)
fn main(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let i = gid.x + gid.y * groups.x * 256u;
    if i < params.n {
        data[i] += block_sums[i / 512u];
    }
}
