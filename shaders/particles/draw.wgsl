// Particles: one point per particle, read straight from the storage buffers (no CPU round trip).
// Position = mix(previous, current, alpha): render interpolation between the last two fixed steps.
// Colour by speed; additive blending.

struct Particle {
    pos: vec4<f32>,
    vel: vec4<f32>,
}

struct View {
    view_proj: mat4x4<f32>,
    alpha: f32,       // interpolation alpha in [0, 1)
    speed_scale: f32, // speed that maps to the "fast" colour is 1 / speed_scale
    intensity: f32,   // additive contribution of one particle
    _pad: f32,
}

@group(0) @binding(0) var<uniform> view: View;
@group(0) @binding(1) var<storage, read> prev: array<Particle>;
@group(0) @binding(2) var<storage, read> cur: array<Particle>;

struct VsOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) color: vec3<f32>,
}

@vertex
fn vs_main(@builtin(vertex_index) vi: u32) -> VsOut {
    let a = prev[vi];
    let b = cur[vi];
    let pos = mix(a.pos.xyz, b.pos.xyz, view.alpha);
    let speed = clamp(length(b.vel.xyz) * view.speed_scale, 0.0, 1.0);
    let slow = vec3<f32>(0.10, 0.35, 1.00);
    let fast = vec3<f32>(1.00, 0.55, 0.10);
    var out: VsOut;
    out.clip = view.view_proj * vec4<f32>(pos, 1.0);
    out.color = mix(slow, fast, speed) * view.intensity;
    return out;
}

@fragment
fn fs_main(in: VsOut) -> @location(0) vec4<f32> {
    return vec4<f32>(in.color, 1.0);
}
