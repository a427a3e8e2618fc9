//! Data layouts shared with the WGSL files, the seeded initial state, and the CPU references of
//! every simulation pass (same operations in the same order as the shaders, so a GPU step can be
//! compared with them within float rounding).

use bytemuck::{Pod, Zeroable};
use glam::Vec3;

/// Attractors in the step parameters.
pub const ATTRACTORS: usize = 4;
/// Fixed-point scale of the neighbour sums (units per 1.0 of each bounded term).
pub(crate) const FIX: f32 = 16384.0;
/// Fixed-point scale of the statistics (units per 1.0 of ½|v|² or |v|).
pub(crate) const STATS_SCALE: f32 = 1_048_576.0;
/// Largest fixed-point value one particle contributes to a statistic (2^24 − 1).
pub const STATS_CAP: f32 = 16_777_215.0;

/// One particle: 32 bytes, the layout of `Particle` in the WGSL files.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct Particle {
    /// xyz position (world units), w = age (s).
    pub pos: [f32; 4],
    /// xyz velocity (world units / s), w = lifetime (s; 0 = immortal).
    pub vel: [f32; 4],
}

impl Particle {
    /// Alive: immortal, or younger than its lifetime.
    pub fn alive(&self) -> bool {
        !(self.vel[3] > 0.0 && self.pos[3] >= self.vel[3])
    }
}

/// Flocking neighbour sums of one particle (48 bytes, `Neighbours` in the WGSL files), fixed
/// point with scale [`FIX`]: `coh` = Σ round(d·FIX/r) with neighbour count in w, `ali` =
/// Σ round(Δv·FIX/(2·max_speed)), `sep` = Σ round(−d/|d|·(1 − |d|/r)·FIX), over every other
/// live particle at |d|² < r² (d = other − self).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct Neighbours {
    /// Cohesion sum xyz, w = neighbour count.
    pub coh: [i32; 4],
    /// Alignment sum xyz, w = 0.
    pub ali: [i32; 4],
    /// Separation sum xyz, w = 0.
    pub sep: [i32; 4],
}

/// Per-configuration constants (`Consts` in the WGSL files, 48 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct SimConsts {
    /// Grid origin xyz (world units), w = cell size (≥ radius).
    pub origin: [f32; 4],
    /// Cells per axis xyz, w = total cell count.
    pub dims: [u32; 4],
    /// Number of particles.
    pub count: u32,
    /// Interaction radius r (world units).
    pub radius: f32,
    /// Speed cap (world units / s).
    pub max_speed: f32,
    /// 1 when flocking sums are applied (grid and brute modes).
    pub interact: u32,
}

/// Parameters of one step: the layout of `StepParams` in `integrate.wgsl` (208 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct StepParams {
    /// Attractor xyz position and strength G in w.
    pub attractors: [[f32; 4]; ATTRACTORS],
    /// Gravity xyz (units/s²), w = linear drag k (1/s).
    pub gravity_drag: [f32; 4],
    /// Mouse point xyz, w = strength (> 0 attract, < 0 repel, 0 off).
    pub mouse: [f32; 4],
    /// Curl-noise phases a, b, c, d (radians).
    pub curl_a: [f32; 4],
    /// Curl-noise phases e, f; z = strength (units/s²); w = spatial frequency k (1/unit).
    pub curl_b: [f32; 4],
    /// Emitter xyz position, w = launch speed.
    pub emitter: [f32; 4],
    /// Emitter unit direction xyz, w = velocity spread (units/s, full width).
    pub emit_dir: [f32; 4],
    /// Step in seconds.
    pub dt: f32,
    /// Softening ε (world units²) added to |d|² for attractors.
    pub softening: f32,
    /// First ring index respawned this step (< count).
    pub emit_start: u32,
    /// Particles respawned this step (≤ count).
    pub emit_count: u32,
    /// Random seed of this step's emission.
    pub emit_seed: u32,
    /// Mean lifetime of emitted particles (s; ≤ 0: immortal).
    pub lifetime: f32,
    /// Cohesion weight (1/s²).
    pub cohesion: f32,
    /// Alignment weight (1/s).
    pub alignment: f32,
    /// Separation weight (units/s²).
    pub separation: f32,
    /// Softening of the mouse force (world units²).
    pub mouse_softening: f32,
    /// Padding.
    pub _pad: [f32; 2],
}

/// The WGSL mirrors of this module's types (`shaders/common/particles.wgsl`, `integrate.wgsl`), for
/// the layout test.
pub(crate) fn wgsl_mirrors() -> Vec<crate::gpu::mirror::Mirror> {
    use crate::gpu::mirror::wgsl_mirror;
    vec![
        wgsl_mirror!(Particle => "Particle" { pos, vel }),
        wgsl_mirror!(Neighbours => "Neighbours" { coh, ali, sep }),
        wgsl_mirror!(SimConsts => "Consts" { origin, dims, count, radius, max_speed, interact }),
        wgsl_mirror!(StepParams => "StepParams" {
            attractors, gravity_drag, mouse, curl_a, curl_b, emitter, emit_dir, dt, softening,
            emit_start, emit_count, emit_seed, lifetime, cohesion, alignment, separation,
            mouse_softening, _pad,
        }),
    ]
}

/// PCG hash (O'Neill's PCG-RXS-M-XS 32-bit output), as in the WGSL files.
pub(crate) fn pcg(v: u32) -> u32 {
    let state = v.wrapping_mul(747_796_405).wrapping_add(2_891_336_453);
    let word = ((state >> ((state >> 28) + 4)) ^ state).wrapping_mul(277_803_737);
    (word >> 22) ^ word
}

/// Top 24 bits of a hash as a float in [0, 1) (exact on CPU and GPU).
pub fn unit(h: u32) -> f32 {
    (h >> 8) as f32 * (1.0 / 16_777_216.0)
}

pub use vizdeck_base::rng::SplitMix64;

/// Initial state: `n` immortal particles of age 0 in a disc-like shell of radius 0.3…1.6 with
/// tangential velocity, from `seed`. Same seed, same particles.
pub fn initial_particles(n: u32, seed: u64) -> Vec<Particle> {
    let mut rng = SplitMix64(seed);
    (0..n)
        .map(|_| {
            let r = 0.3 + 1.3 * rng.next_f32();
            let theta = std::f32::consts::TAU * rng.next_f32();
            let y = (rng.next_f32() - 0.5) * 0.4;
            let (s, c) = theta.sin_cos();
            let speed = 0.45 / r.sqrt();
            Particle {
                pos: [r * c, y, r * s, 0.0],
                vel: [-s * speed, 0.0, c * speed, 0.0],
            }
        })
        .collect()
}

/// Attractor positions and strengths at simulation time `t` seconds: three slow orbits and a
/// fixed centre.
pub fn attractors_at(t: f32) -> [[f32; 4]; ATTRACTORS] {
    let orbit = |radius: f32, w: f32, phase: f32, tilt: f32, g: f32| {
        let a = w * t + phase;
        [radius * a.cos(), tilt * a.sin(), radius * a.sin(), g]
    };
    [
        [0.0, 0.0, 0.0, 0.08],
        orbit(0.9, 0.35, 0.0, 0.3, 0.05),
        orbit(1.2, -0.22, 2.1, -0.2, 0.04),
        orbit(0.6, 0.5, 4.2, 0.1, 0.03),
    ]
}

/// The curl-noise field of `integrate.wgsl` at `p` (before the strength factor).
pub fn curl(params: &StepParams, p: Vec3) -> Vec3 {
    let k = params.curl_b[3];
    let a = params.curl_a;
    let b = params.curl_b;
    let (sx_e, cx_e) = ((k * p.x + b[0]).sin(), (k * p.x + b[0]).cos());
    let (sx_d, cx_d) = ((k * p.x + a[3]).sin(), (k * p.x + a[3]).cos());
    let (sy_a, cy_a) = ((k * p.y + a[0]).sin(), (k * p.y + a[0]).cos());
    let (sy_f, cy_f) = ((k * p.y + b[1]).sin(), (k * p.y + b[1]).cos());
    let (sz_b, cz_b) = ((k * p.z + a[1]).sin(), (k * p.z + a[1]).cos());
    let (sz_c, cz_c) = ((k * p.z + a[2]).sin(), (k * p.z + a[2]).cos());
    Vec3::new(
        -(sx_e * sy_f) - cz_c * cx_d,
        -(sy_a * sz_b) - cx_e * cy_f,
        -(sz_c * sx_d) - cy_a * cz_b,
    )
}

fn round_i(v: Vec3) -> [i32; 3] {
    [
        v.x.round_ties_even() as i32,
        v.y.round_ties_even() as i32,
        v.z.round_ties_even() as i32,
    ]
}

/// The neighbour sums of `neighbours_brute.wgsl` / `neighbours_grid.wgsl` by direct O(N²)
/// search on the CPU (dead particles get zero sums).
pub fn cpu_neighbours(consts: &SimConsts, src: &[Particle]) -> Vec<Neighbours> {
    let n = (consts.count as usize).min(src.len());
    let r = consts.radius;
    let r2max = r * r;
    let kc = FIX / r;
    let ka = FIX / (2.0 * consts.max_speed);
    (0..n)
        .map(|i| {
            let me = &src[i];
            let mut out = Neighbours::default();
            if !me.alive() {
                return out;
            }
            let mp = Vec3::from_slice(&me.pos[..3]);
            let mv = Vec3::from_slice(&me.vel[..3]);
            for (j, o) in src[..n].iter().enumerate() {
                if j == i || !o.alive() {
                    continue;
                }
                let d = Vec3::from_slice(&o.pos[..3]) - mp;
                let r2 = d.dot(d);
                if r2 < r2max {
                    out.coh[3] += 1;
                    let c = round_i(d * kc);
                    let a = round_i((Vec3::from_slice(&o.vel[..3]) - mv) * ka);
                    for k in 0..3 {
                        out.coh[k] = out.coh[k].wrapping_add(c[k]);
                        out.ali[k] = out.ali[k].wrapping_add(a[k]);
                    }
                    let dist = r2.sqrt();
                    if dist > 0.0 {
                        let s = round_i(d * (-(1.0 - dist / r) * FIX / dist));
                        for (o, v) in out.sep.iter_mut().zip(s) {
                            *o = o.wrapping_add(v);
                        }
                    }
                }
            }
            out
        })
        .collect()
}

/// The CPU reference of one step of `integrate.wgsl`. `sums` are the step's neighbour sums
/// (used only when `consts.interact != 0`; pass [`cpu_neighbours`] of `src`).
pub fn cpu_step(
    consts: &SimConsts,
    params: &StepParams,
    src: &[Particle],
    sums: &[Neighbours],
) -> Vec<Particle> {
    let n = (consts.count as usize).min(src.len());
    (0..n)
        .map(|i| {
            let p = &src[i];
            let count = consts.count;
            let rel = ((i as u32)
                .wrapping_add(count)
                .wrapping_sub(params.emit_start))
                % count;
            if rel < params.emit_count {
                let h0 = pcg(params.emit_seed ^ pcg(i as u32));
                let h1 = pcg(h0);
                let h2 = pcg(h1);
                let h3 = pcg(h2);
                let h4 = pcg(h3);
                let h5 = pcg(h4);
                let h6 = pcg(h5);
                let jitter = Vec3::new(unit(h0) - 0.5, unit(h1) - 0.5, unit(h2) - 0.5) * 0.05;
                let spread =
                    Vec3::new(unit(h3) - 0.5, unit(h4) - 0.5, unit(h5) - 0.5) * params.emit_dir[3];
                let x = Vec3::from_slice(&params.emitter[..3]) + jitter;
                let v = Vec3::from_slice(&params.emit_dir[..3]) * params.emitter[3] + spread;
                let life = params.lifetime * (0.75 + 0.5 * unit(h6));
                return Particle {
                    pos: [x.x, x.y, x.z, 0.0],
                    vel: [v.x, v.y, v.z, life],
                };
            }
            if !p.alive() {
                return *p;
            }
            let life = p.vel[3];
            let pos = Vec3::from_slice(&p.pos[..3]);
            let mut acc = Vec3::from_slice(&params.gravity_drag[..3]);
            for a in &params.attractors {
                let d = Vec3::new(a[0], a[1], a[2]) - pos;
                let r2 = d.dot(d) + params.softening;
                acc += d * (a[3] / (r2 * r2.sqrt()));
            }
            if params.mouse[3] != 0.0 {
                let d = Vec3::from_slice(&params.mouse[..3]) - pos;
                let r2 = d.dot(d) + params.mouse_softening;
                acc += d * (params.mouse[3] / (r2 * r2.sqrt()));
            }
            if params.curl_b[2] != 0.0 {
                acc += curl(params, pos) * params.curl_b[2];
            }
            if consts.interact != 0
                && let Some(s) = sums.get(i)
                && s.coh[3] > 0
            {
                let inv = 1.0 / s.coh[3] as f32;
                let v3 = |a: [i32; 4]| Vec3::new(a[0] as f32, a[1] as f32, a[2] as f32);
                let coh = v3(s.coh) * (consts.radius / FIX) * inv;
                let ali = v3(s.ali) * (2.0 * consts.max_speed / FIX) * inv;
                let sep = v3(s.sep) * (1.0 / FIX);
                acc += coh * params.cohesion + ali * params.alignment + sep * params.separation;
            }
            let mut v = (Vec3::from_slice(&p.vel[..3]) + acc * params.dt)
                / (1.0 + params.gravity_drag[3] * params.dt);
            let s2 = v.dot(v);
            if s2 > consts.max_speed * consts.max_speed {
                v *= consts.max_speed / s2.sqrt();
            }
            let x = pos + v * params.dt;
            Particle {
                pos: [x.x, x.y, x.z, p.pos[3] + params.dt],
                vel: [v.x, v.y, v.z, life],
            }
        })
        .collect()
}

/// Statistics of a state, as `stats_reduce.wgsl` computes them.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Stats {
    /// Σ ½|v|² over live particles (unit mass).
    pub kinetic_energy: f64,
    /// Σ |v| / live (world units / s).
    pub mean_speed: f64,
    /// Live particles.
    pub live: u32,
    /// Mean neighbour count over live particles (0 in free mode).
    pub mean_neighbours: f64,
    /// Largest neighbour count.
    pub max_neighbours: u32,
    /// Log2 histogram of neighbour counts: bin 0 = none, bin b = 2^(b−1) … 2^b − 1, bin 15 ≥ 2^14.
    pub histogram: [u32; 16],
    /// Simulation step the statistics belong to.
    pub step: u64,
}

/// Words of the GPU statistics buffer.
pub(crate) const STATS_WORDS: usize = 24;

impl Stats {
    /// Decodes the statistics buffer of `stats_reduce.wgsl`.
    pub fn from_words(w: &[u32; STATS_WORDS], step: u64) -> Stats {
        let wide = |lo: usize| (w[lo] as u64 | ((w[lo + 1] as u64) << 32)) as f64;
        let live = w[4];
        let per = |x: f64| if live > 0 { x / live as f64 } else { 0.0 };
        let mut histogram = [0u32; 16];
        histogram.copy_from_slice(&w[8..24]);
        Stats {
            kinetic_energy: wide(0) / STATS_SCALE as f64,
            mean_speed: per(wide(2) / STATS_SCALE as f64),
            live,
            mean_neighbours: per(wide(6)),
            max_neighbours: w[5],
            histogram,
            step,
        }
    }
}

/// Log2 histogram bin of a neighbour count.
pub fn histogram_bin(n: u32) -> usize {
    if n == 0 {
        0
    } else {
        ((32 - n.leading_zeros()) as usize).min(15)
    }
}
