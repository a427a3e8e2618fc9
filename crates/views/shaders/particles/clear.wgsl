// Particles: zero the first `n` words of a u32 buffer (grid cell counts before the histogram,
// the statistics accumulators before the reduction). Runs inside the compute pass, where
// `clear_buffer` is not available.
//
// Preludes prepended by the registry (src/shaders.rs): common/particles.wgsl.

@group(0) @binding(0) var<uniform> params: CountParams;
@group(0) @binding(1) var<storage, read_write> data: array<u32>;

@compute @workgroup_size(64)
fn main(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let i = gid.x + gid.y * groups.x * 64u;
    if i < params.n {
        data[i] = 0u;
    }
}
