// Particles: GPU statistics by reduction. Per live particle, fixed-point u32 values
// (WGSL has no f32 atomics): ½|v|²·S and |v|·S with S = 2^20, each clamped below 2^24.
// Each invocation walks ITEMS particles of its workgroup's block (stride 64, so neighbouring
// invocations read neighbouring particles) and sums them in registers as 64-bit lo/hi pairs;
// the 64 invocations of a workgroup then add their sums into workgroup atomics, and one
// invocation adds the workgroup's sums into the global accumulators (atomic low word, carry into
// the high word when it wraps). Integer sums do not depend on the order of addition, so the
// result equals the CPU reference exactly (`vizdeck::scene::particles::cpu::cpu_stats`).
// Per-particle cost is the loads of the fields used (age, velocity, lifetime, neighbour count),
// not a workgroup tree per 256 particles: on a software rasterizer (lavapipe) every
// workgroup-memory access and barrier is a loop over lanes, and the tree cost 14 ms at 131,072.
// Also live-particle count, neighbour-count sum and maximum, and a 16-bin log2 histogram of
// neighbour counts (bin 0: none; bin b: 2^(b-1) … 2^b − 1; bin 15: ≥ 2^14).
// Layout of `stats` (u32 words): 0,1 kinetic energy lo/hi; 2,3 speed sum lo/hi; 4 live count;
// 5 max neighbours; 6,7 neighbour sum lo/hi; 8..24 histogram.
//
// Preludes prepended by the registry (src/shaders.rs): common/particles.wgsl.

const SCALE: f32 = 1048576.0;
const CAP: f32 = 16777215.0;
// Particles per invocation (the Rust side's STATS_ITEMS); a workgroup covers 64 · ITEMS.
const ITEMS: u32 = 64u;

@group(0) @binding(0) var<uniform> consts: Consts;
@group(0) @binding(1) var<storage, read> src: array<Particle>;
@group(0) @binding(2) var<storage, read> sums: array<Neighbours>;
@group(0) @binding(3) var<storage, read_write> stats: array<atomic<u32>>;

// Workgroup sums: 0,1 kinetic energy lo/hi; 2,3 speed lo/hi; 4,5 neighbour sum lo/hi.
var<workgroup> wg_sums: array<atomic<u32>, 6>;
var<workgroup> wg_live: atomic<u32>;
var<workgroup> wg_max: atomic<u32>;
var<workgroup> wg_hist: array<atomic<u32>, 16>;

// Adds v to the 64-bit register pair s (x = low word, y = high word).
fn acc64(s: ptr<function, vec2<u32>>, v: u32) {
    let lo = (*s).x + v;
    (*s).y += select(0u, 1u, lo < v);
    (*s).x = lo;
}

fn wg_add64(k: u32, v: vec2<u32>) {
    if v.x != 0u {
        let old = atomicAdd(&wg_sums[k], v.x);
        if old + v.x < old {
            atomicAdd(&wg_sums[k + 1u], 1u);
        }
    }
    if v.y != 0u {
        atomicAdd(&wg_sums[k + 1u], v.y);
    }
}

fn add64(k: u32, lo: u32, hi: u32) {
    var carry = 0u;
    if lo != 0u {
        let old = atomicAdd(&stats[k], lo);
        carry = select(0u, 1u, old + lo < old);
    }
    if hi + carry != 0u {
        atomicAdd(&stats[k + 1u], hi + carry);
    }
}

@compute @workgroup_size(64)
fn main(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    if lid < 6u {
        atomicStore(&wg_sums[lid], 0u);
    }
    if lid < 16u {
        atomicStore(&wg_hist[lid], 0u);
    }
    if lid == 0u {
        atomicStore(&wg_live, 0u);
        atomicStore(&wg_max, 0u);
    }
    workgroupBarrier();

    let block = (wid.x + wid.y * groups.x) * 64u * ITEMS;
    let n_all = consts.count;
    var ke = vec2<u32>(0u);
    var speed = vec2<u32>(0u);
    var nsum = vec2<u32>(0u);
    var live = 0u;
    var most = 0u;
    // Histogram bins 0–3, 4–7, 8–11, 12–15.
    var h0 = vec4<u32>(0u);
    var h1 = vec4<u32>(0u);
    var h2 = vec4<u32>(0u);
    var h3 = vec4<u32>(0u);
    for (var k = 0u; k < ITEMS; k++) {
        let i = block + k * 64u + lid;
        if i >= n_all {
            break;
        }
        let age = src[i].pos.w;
        let vel = src[i].vel;
        if vel.w > 0.0 && age >= vel.w {
            continue;
        }
        let v2 = dot(vel.xyz, vel.xyz);
        acc64(&ke, u32(round(min(0.5 * v2 * SCALE, CAP))));
        acc64(&speed, u32(round(min(sqrt(v2) * SCALE, CAP))));
        live += 1u;
        if consts.interact != 0u {
            let n = u32(max(sums[i].coh.w, 0));
            acc64(&nsum, n);
            most = max(most, n);
            var bin = 0u;
            if n > 0u {
                bin = min(firstLeadingBit(n) + 1u, 15u);
            }
            let b = vec4<u32>(bin);
            h0 += select(vec4<u32>(0u), vec4<u32>(1u), b == vec4<u32>(0u, 1u, 2u, 3u));
            h1 += select(vec4<u32>(0u), vec4<u32>(1u), b == vec4<u32>(4u, 5u, 6u, 7u));
            h2 += select(vec4<u32>(0u), vec4<u32>(1u), b == vec4<u32>(8u, 9u, 10u, 11u));
            h3 += select(vec4<u32>(0u), vec4<u32>(1u), b == vec4<u32>(12u, 13u, 14u, 15u));
        }
    }
    if consts.interact == 0u {
        // No neighbour sums: every live particle has none (bin 0).
        h0.x = live;
    }

    if live > 0u {
        wg_add64(0u, ke);
        wg_add64(2u, speed);
        wg_add64(4u, nsum);
        atomicAdd(&wg_live, live);
        atomicMax(&wg_max, most);
        let hist = array<vec4<u32>, 4>(h0, h1, h2, h3);
        for (var q = 0u; q < 4u; q++) {
            for (var c = 0u; c < 4u; c++) {
                let h = hist[q][c];
                if h > 0u {
                    atomicAdd(&wg_hist[q * 4u + c], h);
                }
            }
        }
    }
    workgroupBarrier();

    if lid == 0u {
        add64(0u, atomicLoad(&wg_sums[0]), atomicLoad(&wg_sums[1]));
        add64(2u, atomicLoad(&wg_sums[2]), atomicLoad(&wg_sums[3]));
        let l = atomicLoad(&wg_live);
        if l > 0u {
            atomicAdd(&stats[4], l);
        }
        atomicMax(&stats[5], atomicLoad(&wg_max));
        add64(6u, atomicLoad(&wg_sums[4]), atomicLoad(&wg_sums[5]));
    }
    if lid < 16u {
        let h = atomicLoad(&wg_hist[lid]);
        if h > 0u {
            atomicAdd(&stats[8u + lid], h);
        }
    }
}
