// Particles: instanced sprites read straight from the storage buffers (no CPU round trip);
// `fs_main` additive, `fs_opaque` opaque with a depth test.
// Instance = particle, 6 vertices = one quad. Position = mix(previous, current, alpha): render
// interpolation between the last two fixed steps (no blend across a respawn). Size attenuation:
// the quad's half-size is a world radius projected with the camera (so it shrinks with
// distance), but never below `min_px` pixels. Colour by speed, density (neighbour count) or age,
// faded over the last 20 % of a particle's life; additive blending.
//
// Preludes prepended by the registry (src/shaders.rs): common/particles.wgsl.

// Largest sprite radius in pixels: a particle passing next to the camera would otherwise cover
// the screen (and, additively blended, cost a full-screen fill each).
const MAX_PX: f32 = 24.0;

// Storage, not uniform: lavapipe makes a shader variant per distinct uniform value (render.rs).
@group(0) @binding(0) var<storage, read> view: View;
@group(0) @binding(1) var<storage, read> prev: array<Particle>;
@group(0) @binding(2) var<storage, read> cur: array<Particle>;
@group(0) @binding(3) var<storage, read> sums: array<Neighbours>;

struct VsOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) color: vec3<f32>,
    @location(1) corner: vec2<f32>,
}

@vertex
fn vs_main(@builtin(vertex_index) vi: u32, @builtin(instance_index) ii: u32) -> VsOut {
    var corners = array<vec2<f32>, 6>(
        vec2<f32>(-1.0, -1.0), vec2<f32>(1.0, -1.0), vec2<f32>(1.0, 1.0),
        vec2<f32>(-1.0, -1.0), vec2<f32>(1.0, 1.0), vec2<f32>(-1.0, 1.0),
    );
    let corner = corners[vi % 6u];
    let a = prev[ii];
    let b = cur[ii];
    var out: VsOut;
    out.corner = corner;
    let life = b.vel.w;
    if life > 0.0 && b.pos.w >= life {
        out.clip = vec4<f32>(2.0, 2.0, 2.0, 1.0); // dead: outside the clip volume
        out.color = vec3<f32>(0.0);
        return out;
    }
    var pos = b.pos.xyz;
    if b.pos.w >= a.pos.w {
        pos = mix(a.pos.xyz, b.pos.xyz, view.alpha);
    }
    var clip = view.view_proj * vec4<f32>(pos, 1.0);
    if clip.w < NEAR_W {
        // At or behind the camera: a sprite there would cover the screen; drop it.
        out.clip = vec4<f32>(2.0, 2.0, 2.0, 1.0);
        out.color = vec3<f32>(0.0);
        return out;
    }
    let w = clip.w;
    // World radius projected (shrinks with distance), kept between min_px and MAX_PX pixels.
    let hx = clamp(
        view.size * view.proj_scale.x,
        view.min_px * view.proj_scale.z * w,
        MAX_PX * view.proj_scale.z * w,
    );
    let hy = clamp(
        view.size * view.proj_scale.y,
        view.min_px * view.proj_scale.w * w,
        MAX_PX * view.proj_scale.w * w,
    );
    clip = vec4<f32>(clip.xy + corner * vec2<f32>(hx, hy), clip.zw);
    var t = 0.0;
    var fade = 1.0;
    if life > 0.0 {
        fade = 1.0 - smoothstep(0.8, 1.0, b.pos.w / life);
    }
    if view.color_mode == 1u {
        if view.interact != 0u {
            t = f32(sums[ii].coh.w) * view.density_scale;
        }
    } else if view.color_mode == 2u {
        if life > 0.0 {
            t = b.pos.w / life;
        } else {
            t = b.pos.w / 20.0;
        }
    } else {
        t = length(b.vel.xyz) * view.speed_scale;
    }
    out.clip = clip;
    out.color = palette(clamp(t, 0.0, 1.0)) * (view.intensity * fade);
    return out;
}

@fragment
fn fs_main(in: VsOut) -> @location(0) vec4<f32> {
    let r2 = dot(in.corner, in.corner);
    if r2 > 1.0 {
        discard;
    }
    let falloff = 1.0 - r2;
    return vec4<f32>(in.color * falloff, falloff);
}

// Opaque, depth-tested variant: the nearest particle wins each pixel (no blending). The colour
// is the palette colour itself (the additive brightness factor divided out), lightly shaded.
@fragment
fn fs_opaque(in: VsOut) -> @location(0) vec4<f32> {
    let r2 = dot(in.corner, in.corner);
    if r2 > 1.0 {
        discard;
    }
    let c = min(in.color / max(view.intensity, 1e-6), vec3<f32>(1.0));
    return vec4<f32>(c * (0.55 + 0.45 * sqrt(1.0 - r2)), 1.0);
}
