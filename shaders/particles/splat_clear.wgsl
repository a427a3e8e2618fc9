// Particles, point-splat renderer: zeroes the fixed-point accumulation image (width × height × 3
// u32) before `splat.wgsl` adds every particle into it.
//
// Preludes prepended by the registry (src/gpu/shaders.rs): common/particles.wgsl.

@group(0) @binding(0) var<uniform> splat: Splat;
@group(0) @binding(1) var<storage, read_write> accum: array<atomic<u32>>;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let i = gid.x + gid.y * groups.x * 256u;
    if i < splat.width * splat.height * 3u {
        atomicStore(&accum[i], 0u);
    }
}
