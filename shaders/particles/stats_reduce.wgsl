// Particles: GPU statistics by reduction. Per live particle, fixed-point u32 values
// (WGSL has no f32 atomics): ½|v|²·S and |v|·S with S = 2^20, each clamped below 2^24 so a
// 256-thread workgroup sum fits in u32; a workgroup tree sum, then one 64-bit add per workgroup
// into the global accumulators (atomic low word, carry into the high word when it wraps).
// Also live-particle count, neighbour-count sum and maximum, and a 16-bin log2 histogram of
// neighbour counts (bin 0: none; bin b: 2^(b-1) … 2^b − 1; bin 15: ≥ 2^14).
// Layout of `stats` (u32 words): 0,1 kinetic energy lo/hi; 2,3 speed sum lo/hi; 4 live count;
// 5 max neighbours; 6,7 neighbour sum lo/hi; 8..24 histogram.
//
// Preludes prepended by the registry (src/gpu/shaders.rs): common/particles.wgsl.

const SCALE: f32 = 1048576.0;
const CAP: f32 = 16777215.0;

@group(0) @binding(0) var<uniform> consts: Consts;
@group(0) @binding(1) var<storage, read> src: array<Particle>;
@group(0) @binding(2) var<storage, read> sums: array<Neighbours>;
@group(0) @binding(3) var<storage, read_write> stats: array<atomic<u32>>;

var<workgroup> wg_ke: array<u32, 256>;
var<workgroup> wg_speed: array<u32, 256>;
var<workgroup> wg_n: array<u32, 256>;
var<workgroup> wg_live: array<u32, 256>;
var<workgroup> wg_max: atomic<u32>;
var<workgroup> wg_hist: array<atomic<u32>, 16>;

fn add64(lo: u32, v: u32) {
    if v == 0u {
        return;
    }
    let old = atomicAdd(&stats[lo], v);
    if old + v < old {
        atomicAdd(&stats[lo + 1u], 1u);
    }
}

@compute @workgroup_size(256)
fn main(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let i = (wid.x + wid.y * groups.x) * 256u + lid;
    if lid < 16u {
        atomicStore(&wg_hist[lid], 0u);
    }
    if lid == 0u {
        atomicStore(&wg_max, 0u);
    }
    var ke = 0u;
    var speed = 0u;
    var n = 0u;
    var live = 0u;
    if i < consts.count {
        let p = src[i];
        if !(p.vel.w > 0.0 && p.pos.w >= p.vel.w) {
            let v2 = dot(p.vel.xyz, p.vel.xyz);
            ke = u32(round(min(0.5 * v2 * SCALE, CAP)));
            speed = u32(round(min(sqrt(v2) * SCALE, CAP)));
            live = 1u;
            if consts.interact != 0u {
                n = u32(max(sums[i].coh.w, 0));
            }
        }
    }
    wg_ke[lid] = ke;
    wg_speed[lid] = speed;
    wg_n[lid] = n;
    wg_live[lid] = live;
    workgroupBarrier();
    if live == 1u {
        atomicMax(&wg_max, n);
        var bin = 0u;
        if n > 0u {
            bin = min(firstLeadingBit(n) + 1u, 15u);
        }
        atomicAdd(&wg_hist[bin], 1u);
    }
    for (var s = 128u; s > 0u; s >>= 1u) {
        if lid < s {
            wg_ke[lid] += wg_ke[lid + s];
            wg_speed[lid] += wg_speed[lid + s];
            wg_n[lid] += wg_n[lid + s];
            wg_live[lid] += wg_live[lid + s];
        }
        workgroupBarrier();
    }
    if lid == 0u {
        add64(0u, wg_ke[0]);
        add64(2u, wg_speed[0]);
        if wg_live[0] > 0u {
            atomicAdd(&stats[4], wg_live[0]);
        }
        atomicMax(&stats[5], atomicLoad(&wg_max));
        add64(6u, wg_n[0]);
    }
    if lid < 16u {
        let h = atomicLoad(&wg_hist[lid]);
        if h > 0u {
            atomicAdd(&stats[8u + lid], h);
        }
    }
}
