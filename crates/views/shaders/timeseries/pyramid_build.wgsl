// Time series: build (or extend) one level of the min/max pyramid, for every series of one page
// that completed nodes of that level, in one dispatch.
//
// Level 1 node k holds the min and max of values[16k .. 16k+16) (NaN skipped); level L > 1 node k
// combines nodes 16k .. 16k+16 of level L-1. Min and max are stored as order-preserving u32 keys
// of the f32 bits (negative: all bits flipped; positive: sign bit set), so comparisons are exact
// integer ones, ±inf order correctly and NaN never enters. An all-NaN node is (0xffffffff, 0).
// Only complete nodes are built. Job j builds `count` nodes: node k reads 16 values (level 1) or
// 16 nodes (level > 1) from `src + 16·k` and writes `dst + k` (page-absolute indices).
//
// Preludes prepended by the registry (src/shaders.rs): common/timeseries.wgsl,
// common/timeseries_jobs.wgsl.

// `d`, `jobs` and `job_of` (bindings 0 and 1): common/timeseries_jobs.wgsl.
// The page (group 1): `samples` and `pyramid`, declared in common/timeseries.wgsl.

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = thread_index(gid, nwg);
    if t >= d.total {
        return;
    }
    let job = job_of(t);
    let k = t - job.start;
    let src = job.src + k * 16u;
    var mn = 0xffffffffu;
    var mx = 0u;
    if d.level == 1u {
        for (var i = 0u; i < 16u; i++) {
            let bits = samples[src + i].x;
            if !is_nan(bits) {
                let kb = key(bits);
                mn = min(mn, kb);
                mx = max(mx, kb);
            }
        }
    } else {
        for (var i = 0u; i < 16u; i++) {
            let c = pyramid[src + i];
            mn = min(mn, c.x);
            mx = max(mx, c.y);
        }
    }
    pyramid[job.dst + k] = vec2<u32>(mn, mx);
}
