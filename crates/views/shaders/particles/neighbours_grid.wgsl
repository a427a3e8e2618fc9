// Particles, grid mode: flocking neighbour sums from the 27 cells around each particle, one
// thread per sorted slot (so a workgroup reads the same few cells). Neighbours: every other live
// particle with |d|² < r² (cell size ≥ r, so the 27 cells hold all of them).
// Sums are fixed-point (FIX = 2^14 per unit of the bounded terms; integer addition is exact and
// associative), so the result does not depend on the order the atomics gave inside a cell and
// equals neighbours_brute.wgsl bit for bit. Written at the particle's original index.
//
// Preludes prepended by the registry (src/shaders.rs): common/particles.wgsl.

@group(0) @binding(0) var<uniform> consts: Consts;
@group(0) @binding(1) var<storage, read> sorted: array<Sorted>;
@group(0) @binding(2) var<storage, read> starts: array<u32>;
@group(0) @binding(3) var<storage, read_write> sums: array<Neighbours>;

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
    let k = gid.x + gid.y * groups.x * 64u;
    let live = starts[consts.dims.w];
    if k >= live || k >= consts.count {
        return;
    }
    let me = sorted[k];
    let r2max = consts.radius * consts.radius;
    let kc = FIX / consts.radius;
    let ka = FIX / (2.0 * consts.max_speed);
    var coh = vec3<i32>(0);
    var ali = vec3<i32>(0);
    var sep = vec3<i32>(0);
    var n = 0;
    let cc = cell_coords(me.pos);
    let dims = vec3<i32>(consts.dims.xyz);
    for (var dz = -1; dz <= 1; dz++) {
        for (var dy = -1; dy <= 1; dy++) {
            for (var dx = -1; dx <= 1; dx++) {
                let c = cc + vec3<i32>(dx, dy, dz);
                if any(c < vec3<i32>(0)) || any(c >= dims) {
                    continue;
                }
                let cell = u32(c.x) + consts.dims.x * (u32(c.y) + consts.dims.y * u32(c.z));
                let s1 = starts[cell + 1u];
                for (var s = starts[cell]; s < s1; s++) {
                    let o = sorted[s];
                    if o.id == me.id {
                        continue;
                    }
                    let d = o.pos - me.pos;
                    let r2 = dot(d, d);
                    if r2 < r2max {
                        n += 1;
                        coh += vec3<i32>(round(d * kc));
                        ali += vec3<i32>(round((o.vel.xyz - me.vel.xyz) * ka));
                        let dist = sqrt(r2);
                        if dist > 0.0 {
                            sep += vec3<i32>(round(d * (-(1.0 - dist / consts.radius) * FIX / dist)));
                        }
                    }
                }
            }
        }
    }
    sums[me.id] = Neighbours(vec4<i32>(coh, n), vec4<i32>(ali, 0), vec4<i32>(sep, 0));
}
