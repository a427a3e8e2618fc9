// Particles, brute-force mode: the same flocking neighbour sums as neighbours_grid.wgsl, over all
// N² pairs, tiled through workgroup memory (each workgroup loads 128 particles at a time and
// every thread tests its particle against the tile). Kept to validate the grid and to measure
// against it. The term expressions are the grid pass's, letter for letter.
//
// Preludes prepended by the registry (src/shaders.rs): common/particles.wgsl.

const TILE: u32 = 128u;

@group(0) @binding(0) var<uniform> consts: Consts;
@group(0) @binding(1) var<storage, read> src: array<Particle>;
@group(0) @binding(2) var<storage, read_write> sums: array<Neighbours>;

var<workgroup> tile_pos: array<vec4<f32>, 128>; // xyz, w = 1 when alive
var<workgroup> tile_vel: array<vec4<f32>, 128>;

fn alive(p: Particle) -> bool {
    return !(p.vel.w > 0.0 && p.pos.w >= p.vel.w);
}

@compute @workgroup_size(128)
fn main(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let count = consts.count;
    let i = (wid.x + wid.y * groups.x) * TILE + lid;
    let valid = i < count;
    var me = Particle(vec4<f32>(0.0), vec4<f32>(0.0));
    if valid {
        me = src[i];
    }
    let live = valid && alive(me);
    let r2max = consts.radius * consts.radius;
    let kc = FIX / consts.radius;
    let ka = FIX / (2.0 * consts.max_speed);
    var coh = vec3<i32>(0);
    var ali = vec3<i32>(0);
    var sep = vec3<i32>(0);
    var n = 0;
    for (var t = 0u; t < count; t += TILE) {
        let j = t + lid;
        if j < count {
            let o = src[j];
            tile_pos[lid] = vec4<f32>(o.pos.xyz, select(0.0, 1.0, alive(o)));
            tile_vel[lid] = o.vel;
        } else {
            tile_pos[lid] = vec4<f32>(0.0);
            tile_vel[lid] = vec4<f32>(0.0);
        }
        workgroupBarrier();
        if live {
            for (var q = 0u; q < TILE; q++) {
                let op = tile_pos[q];
                if op.w == 0.0 || t + q == i {
                    continue;
                }
                let d = op.xyz - me.pos.xyz;
                let r2 = dot(d, d);
                if r2 < r2max {
                    n += 1;
                    coh += vec3<i32>(round(d * kc));
                    ali += vec3<i32>(round((tile_vel[q].xyz - me.vel.xyz) * ka));
                    let dist = sqrt(r2);
                    if dist > 0.0 {
                        sep += vec3<i32>(round(d * (-(1.0 - dist / consts.radius) * FIX / dist)));
                    }
                }
            }
        }
        workgroupBarrier();
    }
    if valid {
        sums[i] = Neighbours(vec4<i32>(coh, n), vec4<i32>(ali, 0), vec4<i32>(sep, 0));
    }
}
