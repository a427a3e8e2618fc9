// Particles: instanced sprites read straight from the storage buffers (no CPU round trip).
// Position = mix(previous, current, alpha): render interpolation between the last two fixed steps.
// Colour by speed; additive blending.

struct Particle {
    pos: vec4<f32>,
    vel: vec4<f32>,
}

struct View {
    view_proj: mat4x4<f32>,
    sprite_ndc: vec2<f32>, // half size of a sprite in NDC (x, y)
    alpha: f32,
    speed_scale: f32,
}

@group(0) @binding(0) var<uniform> view: View;
@group(0) @binding(1) var<storage, read> prev: array<Particle>;
@group(0) @binding(2) var<storage, read> cur: array<Particle>;

struct VsOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) uv: vec2<f32>,
    @location(1) color: vec3<f32>,
}

@vertex
fn vs_main(@builtin(vertex_index) vi: u32, @builtin(instance_index) ii: u32) -> VsOut {
    // Two triangles: (0,1,2) (2,1,3) over corners (-1,-1) (1,-1) (-1,1) (1,1).
    var corners = array<vec2<f32>, 6>(
        vec2<f32>(-1.0, -1.0), vec2<f32>(1.0, -1.0), vec2<f32>(-1.0, 1.0),
        vec2<f32>(-1.0, 1.0), vec2<f32>(1.0, -1.0), vec2<f32>(1.0, 1.0),
    );
    let corner = corners[vi % 6u];
    let a = prev[ii];
    let b = cur[ii];
    let pos = mix(a.pos.xyz, b.pos.xyz, view.alpha);
    var clip = view.view_proj * vec4<f32>(pos, 1.0);
    clip = vec4<f32>(clip.xy + corner * view.sprite_ndc * clip.w, clip.zw);
    let speed = clamp(length(b.vel.xyz) * view.speed_scale, 0.0, 1.0);
    let slow = vec3<f32>(0.10, 0.35, 1.00);
    let fast = vec3<f32>(1.00, 0.55, 0.10);
    var out: VsOut;
    out.clip = clip;
    out.uv = corner;
    out.color = mix(slow, fast, speed);
    return out;
}

@fragment
fn fs_main(in: VsOut) -> @location(0) vec4<f32> {
    let r2 = dot(in.uv, in.uv);
    if r2 > 1.0 {
        discard;
    }
    let k = (1.0 - r2) * 0.35;
    return vec4<f32>(in.color * k, k);
}
