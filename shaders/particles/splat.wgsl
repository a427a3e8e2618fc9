// Particles, point-splat renderer (for large counts, where rasterizing millions of tiny sprites
// is bound by the GPU's raster and blend units): one compute thread per particle projects the
// interpolated position exactly as `draw.wgsl` does and adds its colour into the pixel it lands
// in, as fixed point (colour × 256) with atomic adds per channel. `splat_resolve.wgsl` turns the
// sums into the image. Additive, like the sprites, so the two renderers give the same picture at
// one pixel per particle.
//
// Preludes prepended by the registry (src/gpu/shaders.rs): common/particles.wgsl.

// Storage, not uniform: lavapipe makes a shader variant per distinct uniform value (render.rs).
@group(0) @binding(0) var<storage, read> view: View;
@group(0) @binding(1) var<storage, read> prev: array<Particle>;
@group(0) @binding(2) var<storage, read> cur: array<Particle>;
@group(0) @binding(3) var<storage, read> sums: array<Neighbours>;
@group(0) @binding(4) var<uniform> splat: Splat;
@group(0) @binding(5) var<storage, read_write> accum: array<atomic<u32>>;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let ii = gid.x + gid.y * groups.x * 256u;
    if ii >= splat.count {
        return;
    }
    // Only the fields used are loaded (the previous state's velocity is not): on a software
    // rasterizer every storage load is a loop over lanes.
    let b = cur[ii];
    let life = b.vel.w;
    if life > 0.0 && b.pos.w >= life {
        return;
    }
    let a_pos = prev[ii].pos;
    var pos = b.pos.xyz;
    if b.pos.w >= a_pos.w {
        pos = mix(a_pos.xyz, b.pos.xyz, splat.alpha);
    }
    let clip = splat.view_proj * vec4<f32>(pos, 1.0);
    if clip.w < NEAR_W {
        return;
    }
    let ndc = clip.xyz / clip.w;
    if ndc.z < 0.0 || ndc.z > 1.0 || abs(ndc.x) >= 1.0 || abs(ndc.y) >= 1.0 {
        return;
    }
    let x = min(u32((ndc.x * 0.5 + 0.5) * f32(splat.width)), splat.width - 1u);
    let y = min(u32((0.5 - ndc.y * 0.5) * f32(splat.height)), splat.height - 1u);
    var t = 0.0;
    var fade = 1.0;
    if life > 0.0 {
        fade = 1.0 - smoothstep(0.8, 1.0, b.pos.w / life);
    }
    let mode = view.color_mode;
    if mode == 1u {
        if view.interact != 0u {
            t = f32(sums[ii].coh.w) * splat.density_scale;
        }
    } else if mode == 2u {
        if life > 0.0 {
            t = b.pos.w / life;
        } else {
            t = b.pos.w / 20.0;
        }
    } else {
        t = length(b.vel.xyz) * splat.speed_scale;
    }
    let c = palette(clamp(t, 0.0, 1.0)) * (splat.intensity * fade) * FIXED;
    let base = (y * splat.width + x) * 3u;
    atomicAdd(&accum[base], u32(c.r + 0.5));
    atomicAdd(&accum[base + 1u], u32(c.g + 0.5));
    atomicAdd(&accum[base + 2u], u32(c.b + 0.5));
}
