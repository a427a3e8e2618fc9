// Particles: one fixed timestep (semi-implicit Euler) on ping-pong storage buffers.
// Reads `src`, writes `dst`; the CPU reference is `vizdeck::scene::particles::cpu_step`.
// Forces: softened inverse-square pull towards each attractor, a ≈ G·d / (|d|² + ε)^(3/2),
// then linear drag applied implicitly: v' = v / (1 + k·dt).

struct Particle {
    pos: vec4<f32>, // xyz position, w unused
    vel: vec4<f32>, // xyz velocity, w unused
}

struct StepParams {
    attractors: array<vec4<f32>, 4>, // xyz position, w = strength G
    dt: f32,
    drag: f32,
    softening: f32,
    count: u32,
}

@group(0) @binding(0) var<uniform> params: StepParams;
@group(0) @binding(1) var<storage, read> src: array<Particle>;
@group(0) @binding(2) var<storage, read_write> dst: array<Particle>;

@compute @workgroup_size(64)
fn main(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let i = gid.x + gid.y * groups.x * 64u;
    if i >= params.count {
        return;
    }
    let p = src[i];
    var acc = vec3<f32>(0.0);
    for (var a = 0u; a < 4u; a++) {
        let att = params.attractors[a];
        let d = att.xyz - p.pos.xyz;
        let r2 = dot(d, d) + params.softening;
        acc += d * (att.w / (r2 * sqrt(r2)));
    }
    let v = (p.vel.xyz + acc * params.dt) / (1.0 + params.drag * params.dt);
    let x = p.pos.xyz + v * params.dt;
    dst[i] = Particle(vec4<f32>(x, p.pos.w), vec4<f32>(v, p.vel.w));
}
