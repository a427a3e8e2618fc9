// Shared prelude of the particle shaders (particles/*.wgsl): the data layouts shared with Rust
// (mirrors in src/scene/particles/{cpu,render}.rs and sim.rs, checked by tests/shader_layout.rs),
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
// Clip-space w below which a particle counts as at or behind the camera.
const NEAR_W: f32 = 0.05;

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

