// Particles: one fixed timestep (semi-implicit Euler) on ping-pong storage buffers, all modes.
// Reads `src` (+ the neighbour sums of this step in grid/brute mode), writes `dst`. `main_splat`
// is the same step followed by the point splat of the new state (the frame's last step).
// CPU reference: `vizdeck::scene::particles::cpu::cpu_step` (same operations, same order).
//
// Forces (unit mass):
//   gravity g; softened inverse-square pull to each attractor a = G·d / (|d|² + ε)^(3/2);
//   mouse attract (s > 0) / repel (s < 0), same law with its own softening;
//   curl noise: the curl of the potential Ψ = (sin(ky+a)cos(kz+b), sin(kz+c)cos(kx+d),
//   sin(kx+e)cos(ky+f)), divergence-free by construction, scaled by strength / k;
//   flocking (interaction modes): cohesion towards the neighbours' mean offset, alignment with
//   their mean relative velocity, separation along −d/|d|·(1 − |d|/r) (fixed-point sums, see
//   neighbours_grid.wgsl); then drag implicitly v' = v / (1 + k·dt) and a speed cap.
// Emitter: particles whose index lies in the ring window [emit_start, emit_start + emit_count)
// (mod count) are respawned at the emitter with hashed random offsets (PCG hash, exact in u32).
// Particle.pos.w = age (s), vel.w = lifetime (s, 0 = immortal); a dead particle stays put.
//
// Preludes prepended by the registry (src/shaders.rs): common/particles.wgsl.

struct StepParams {
    attractors: array<vec4<f32>, 4>, // xyz position, w = strength G
    gravity_drag: vec4<f32>,         // xyz gravity, w = drag k (1/s)
    mouse: vec4<f32>,                // xyz position, w = strength (0: off)
    curl_a: vec4<f32>,               // phases a b c d
    curl_b: vec4<f32>,               // phases e f, z = strength, w = frequency k
    emitter: vec4<f32>,              // xyz position, w = speed
    emit_dir: vec4<f32>,             // xyz unit direction, w = velocity spread
    dt: f32,
    softening: f32,
    emit_start: u32,
    emit_count: u32,
    emit_seed: u32,
    lifetime: f32,
    cohesion: f32,
    alignment: f32,
    separation: f32,
    mouse_softening: f32,
    _pad0: f32,
    _pad1: f32,
}

@group(0) @binding(0) var<uniform> consts: Consts;
@group(0) @binding(1) var<uniform> params: StepParams;
@group(0) @binding(2) var<storage, read> src: array<Particle>;
@group(0) @binding(3) var<storage, read_write> dst: array<Particle>;
@group(0) @binding(4) var<storage, read> sums: array<Neighbours>;

// `main_splat` only: the point splat's bindings (as in splat.wgsl; `view` in storage for the
// branch-deciding colour mode, see render.rs).
@group(1) @binding(0) var<storage, read> view: View;
@group(1) @binding(1) var<uniform> splat: Splat;
@group(1) @binding(2) var<storage, read_write> accum: array<atomic<u32>>;

fn pcg(v: u32) -> u32 {
    let state = v * 747796405u + 2891336453u;
    let word = ((state >> ((state >> 28u) + 4u)) ^ state) * 277803737u;
    return (word >> 22u) ^ word;
}

fn unit(h: u32) -> f32 {
    return f32(h >> 8u) * (1.0 / 16777216.0);
}

fn curl(p: vec3<f32>) -> vec3<f32> {
    let k = params.curl_b.w;
    let a = params.curl_a;
    let b = params.curl_b;
    let sx_e = sin(k * p.x + b.x);
    let cx_e = cos(k * p.x + b.x);
    let sx_d = sin(k * p.x + a.w);
    let cx_d = cos(k * p.x + a.w);
    let sy_a = sin(k * p.y + a.x);
    let cy_a = cos(k * p.y + a.x);
    let sy_f = sin(k * p.y + b.y);
    let cy_f = cos(k * p.y + b.y);
    let sz_b = sin(k * p.z + a.y);
    let cz_b = cos(k * p.z + a.y);
    let sz_c = sin(k * p.z + a.z);
    let cz_c = cos(k * p.z + a.z);
    // k factors cancel against the 1/k normalisation.
    return vec3<f32>(
        -(sx_e * sy_f) - cz_c * cx_d,
        -(sy_a * sz_b) - cx_e * cy_f,
        -(sz_c * sx_d) - cy_a * cz_b,
    );
}

// One step of particle i: reads src[i], writes dst[i]; returns both states for the fused splat.
struct Stepped {
    before: Particle,
    after: Particle,
}

fn step(i: u32) -> Stepped {
    let n = consts.count;
    let p = src[i];
    var out = p;
    let rel = (i + n - params.emit_start) % n;
    let life = p.vel.w;
    if rel < params.emit_count {
        let h0 = pcg(params.emit_seed ^ pcg(i));
        let h1 = pcg(h0);
        let h2 = pcg(h1);
        let h3 = pcg(h2);
        let h4 = pcg(h3);
        let h5 = pcg(h4);
        let h6 = pcg(h5);
        let jitter = vec3<f32>(unit(h0) - 0.5, unit(h1) - 0.5, unit(h2) - 0.5) * 0.05;
        let spread = vec3<f32>(unit(h3) - 0.5, unit(h4) - 0.5, unit(h5) - 0.5) * params.emit_dir.w;
        let x = params.emitter.xyz + jitter;
        let v = params.emit_dir.xyz * params.emitter.w + spread;
        let new_life = params.lifetime * (0.75 + 0.5 * unit(h6));
        out = Particle(vec4<f32>(x, 0.0), vec4<f32>(v, new_life));
    } else if !(life > 0.0 && p.pos.w >= life) {
        // Alive (a dead particle stays put).
        let pos = p.pos.xyz;
        var acc = params.gravity_drag.xyz;
        for (var a = 0u; a < 4u; a++) {
            let att = params.attractors[a];
            let d = att.xyz - pos;
            let r2 = dot(d, d) + params.softening;
            acc += d * (att.w / (r2 * sqrt(r2)));
        }
        if params.mouse.w != 0.0 {
            let d = params.mouse.xyz - pos;
            let r2 = dot(d, d) + params.mouse_softening;
            acc += d * (params.mouse.w / (r2 * sqrt(r2)));
        }
        if params.curl_b.z != 0.0 {
            acc += curl(pos) * params.curl_b.z;
        }
        if consts.interact != 0u {
            let s = sums[i];
            if s.coh.w > 0 {
                let inv = 1.0 / f32(s.coh.w);
                let coh = vec3<f32>(s.coh.xyz) * (consts.radius / FIX) * inv;
                let ali = vec3<f32>(s.ali.xyz) * (2.0 * consts.max_speed / FIX) * inv;
                let sep = vec3<f32>(s.sep.xyz) * (1.0 / FIX);
                acc += coh * params.cohesion + ali * params.alignment + sep * params.separation;
            }
        }
        var v = (p.vel.xyz + acc * params.dt) / (1.0 + params.gravity_drag.w * params.dt);
        let s2 = dot(v, v);
        if s2 > consts.max_speed * consts.max_speed {
            v = v * (consts.max_speed / sqrt(s2));
        }
        let x = pos + v * params.dt;
        out = Particle(vec4<f32>(x, p.pos.w + params.dt), vec4<f32>(v, life));
    }
    dst[i] = out;
    return Stepped(p, out);
}

fn particle_index(gid: vec3<u32>, groups: vec3<u32>) -> u32 {
    return gid.x + gid.y * groups.x * 64u;
}

@compute @workgroup_size(64)
fn main(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let i = particle_index(gid, groups);
    if i >= consts.count {
        return;
    }
    _ = step(i);
}

// The frame's last step fused with the point splat: the new state is splatted from registers
// (interpolated against the old one with the frame's alpha) instead of being read back from
// both state buffers by splat.wgsl. Same `splat_of`, so the same image.
@compute @workgroup_size(64)
fn main_splat(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let i = particle_index(gid, groups);
    if i >= consts.count {
        return;
    }
    let s = step(i);
    if s.after.vel.w > 0.0 && s.after.pos.w >= s.after.vel.w {
        return;
    }
    let mode = view.color_mode;
    let interact = view.interact;
    var neighbours = 0;
    if mode == 1u && interact != 0u {
        neighbours = sums[i].coh.w;
    }
    let hit = splat_of(s.before.pos, s.after, neighbours, mode, interact, splat);
    if hit.x != NO_PIXEL {
        atomicAdd(&accum[hit.x], hit.y);
        atomicAdd(&accum[hit.x + 1u], hit.z);
        atomicAdd(&accum[hit.x + 2u], hit.w);
    }
}
