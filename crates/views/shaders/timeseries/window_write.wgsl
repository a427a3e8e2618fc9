// Time series, `--share` window: every series of one page of mirrors written into its mirror
// (workgroup (b, e): block b of entry e): per sample its f32 bits and the valid (non-NaN) samples
// of its series up to and including it — the blocks before from window_count.wgsl's counts,
// the samples before it in the block by a workgroup scan. The pyramid is then built over them
// (pyramid_build.wgsl), as for samples uploaded from the host.
//
// Preludes prepended by the registry (src/shaders.rs): common/timeseries.wgsl,
// common/timeseries_window.wgsl.

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) l: u32, @builtin(workgroup_id) wg: vec3<u32>) {
    let e = entries[wp.first + wg.y];
    let s = e.x;
    let base = e.y;
    let b = wg.x;
    let row = s * wp.samples;
    // Valid samples of the blocks before this one.
    var before = 0u;
    for (var j = l; j < b; j += WINDOW_THREADS) {
        before += block_counts[s * wp.blocks + j];
    }
    before = workgroup_sum(l, before);
    // This thread's samples, and the valid ones of the threads before it (inclusive scan).
    let k0 = b * WINDOW_BLOCK + l * WINDOW_PER_THREAD;
    let c = thread_valid(row, k0);
    scratch[l] = c;
    workgroupBarrier();
    for (var d = 1u; d < WINDOW_THREADS; d = d * 2u) {
        var add = 0u;
        if l >= d {
            add = scratch[l - d];
        }
        workgroupBarrier();
        scratch[l] += add;
        workgroupBarrier();
    }
    var run = before + scratch[l] - c;
    for (var i = 0u; i < WINDOW_PER_THREAD; i++) {
        let k = k0 + i;
        if k < wp.samples {
            let bits = window[row + k];
            run += select(1u, 0u, is_nan(bits));
            samples[base + k] = vec2<u32>(bits, run);
        }
    }
}
