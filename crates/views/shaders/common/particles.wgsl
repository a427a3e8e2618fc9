// Shared prelude of the particle shaders (particles/*.wgsl): the data layouts shared with Rust
// (mirrors in src/particles/{cpu,render}.rs and sim/, checked by tests/app/shader_layout.rs),
// the fixed-point scales and the colour palette. Declare nothing here that needs a binding.

// One particle (32 bytes).
struct Particle {
    pos: vec4<f32>, // xyz, w = age (s)
    vel: vec4<f32>, // xyz, w = lifetime (s, 0 = immortal)
}

// Flocking neighbour sums of one particle, fixed point with scale FIX (48 bytes).
struct Neighbours {
    coh: vec4<i32>, // Σ round(d·FIX/r), w = neighbour count
    ali: vec4<i32>, // Σ round(Δv·FIX/(2·max_speed))
    sep: vec4<i32>, // Σ round(−d/|d|·(1 − |d|/r)·FIX)
}

// Per-configuration constants of the simulation passes (48 bytes).
struct Consts {
    origin: vec4<f32>, // grid origin xyz, w = cell size
    dims: vec4<u32>,   // grid cells per axis xyz, w = cell count
    count: u32,
    radius: f32,
    max_speed: f32,
    interact: u32,
}

// A particle in cell order (grid mode): position, original index, velocity.
struct Sorted {
    pos: vec3<f32>,
    id: u32,
    vel: vec4<f32>,
}

// Element count of the clear and scan passes.
struct CountParams {
    n: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

// View parameters of the sprite and splat renderers.
struct View {
    view_proj: mat4x4<f32>,
    proj_scale: vec4<f32>, // P[0][0], P[1][1], 2 / width px, 2 / height px
    alpha: f32,            // interpolation alpha in [0, 1)
    size: f32,             // sprite radius (world units)
    min_px: f32,           // smallest sprite radius (pixels)
    intensity: f32,        // brightness of one particle
    color_mode: u32,       // 0 speed, 1 density, 2 age
    speed_scale: f32,      // 1 / speed of the hottest colour
    density_scale: f32,    // 1 / neighbour count of the hottest colour
    interact: u32,         // neighbour sums valid
}

// The point splat's accumulation image.
// The point splat's image and the view values it needs every particle, as a uniform (128 bytes):
// on lavapipe a uniform read is one load for all lanes where a storage read is a loop over
// lanes, and the splat read 24 view values per particle from the `View` storage buffer. The
// values that decide branches (`color_mode`, `interact`) stay in `View` (lavapipe compiles a
// shader variant per value of a uniform that reaches a branch; see render.rs).
struct Splat {
    view_proj: mat4x4<f32>,
    width: u32,
    height: u32,
    count: u32,
    _pad: u32,
    alpha: f32,         // interpolation alpha in [0, 1]
    intensity: f32,     // brightness of one particle
    speed_scale: f32,   // 1 / speed of the hottest colour
    density_scale: f32, // 1 / neighbour count of the hottest colour
}

// Fixed-point scale of the neighbour sums (units per 1.0 of each bounded term; cpu.rs FIX).
const FIX: f32 = 16384.0;
// Fixed-point scale of the splat's accumulated colour.
const FIXED: f32 = 256.0;
// `splat_of`: the particle adds to no pixel.
const NO_PIXEL: u32 = 0xffffffffu;
// Clip-space w below which a particle counts as at or behind the camera.
const NEAR_W: f32 = 0.05;

// Where one particle lands in the point splat and what it adds there, for `splat.wgsl` and the
// fused step + splat of `integrate.wgsl`: x = its pixel's first accumulator index (3 per pixel),
// yzw = fixed-point RGB (× FIXED); x = NO_PIXEL when it adds nothing (dead, at or behind the
// camera, outside the view or the depth range). `prev_pos`: the previous state's position (xyz,
// w = age), `cur`: the newest state, interpolated with `s.alpha` unless the particle was respawned
// in between (its age went down); `neighbours`: its neighbour count (density colour); `mode`:
// 0 speed, 1 density, 2 age; `interact`: neighbour counts valid. The same projection as
// `draw.wgsl`.
fn splat_of(prev_pos: vec4<f32>, cur: Particle, neighbours: i32, mode: u32, interact: u32, s: Splat) -> vec4<u32> {
    let life = cur.vel.w;
    if life > 0.0 && cur.pos.w >= life {
        return vec4<u32>(NO_PIXEL, 0u, 0u, 0u);
    }
    var pos = cur.pos.xyz;
    if cur.pos.w >= prev_pos.w {
        pos = mix(prev_pos.xyz, cur.pos.xyz, s.alpha);
    }
    let clip = s.view_proj * vec4<f32>(pos, 1.0);
    if clip.w < NEAR_W {
        return vec4<u32>(NO_PIXEL, 0u, 0u, 0u);
    }
    let ndc = clip.xyz / clip.w;
    if ndc.z < 0.0 || ndc.z > 1.0 || abs(ndc.x) >= 1.0 || abs(ndc.y) >= 1.0 {
        return vec4<u32>(NO_PIXEL, 0u, 0u, 0u);
    }
    let x = min(u32((ndc.x * 0.5 + 0.5) * f32(s.width)), s.width - 1u);
    let y = min(u32((0.5 - ndc.y * 0.5) * f32(s.height)), s.height - 1u);
    var t = 0.0;
    var fade = 1.0;
    if life > 0.0 {
        fade = 1.0 - smoothstep(0.8, 1.0, cur.pos.w / life);
    }
    if mode == 1u {
        if interact != 0u {
            t = f32(neighbours) * s.density_scale;
        }
    } else if mode == 2u {
        if life > 0.0 {
            t = cur.pos.w / life;
        } else {
            t = cur.pos.w / 20.0;
        }
    } else {
        t = length(cur.vel.xyz) * s.speed_scale;
    }
    let c = palette(clamp(t, 0.0, 1.0)) * (s.intensity * fade) * FIXED;
    return vec4<u32>((y * s.width + x) * 3u, u32(c.r + 0.5), u32(c.g + 0.5), u32(c.b + 0.5));
}

// Cold → warm → hot colour ramp over t in [0, 1].
fn palette(t: f32) -> vec3<f32> {
    let cold = vec3<f32>(0.10, 0.30, 1.00);
    let warm = vec3<f32>(1.00, 0.50, 0.10);
    let hot = vec3<f32>(1.00, 0.95, 0.80);
    if t < 0.5 {
        return mix(cold, warm, t * 2.0);
    }
    return mix(warm, hot, t * 2.0 - 1.0);
}

