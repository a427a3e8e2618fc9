// Time series, `--share` window: the smallest and largest finite value of every series over the
// view's samples [k0, k1) (workgroup (0, s): series s), as order-preserving keys, read back for
// the value axis (NaN and ±inf left out, as the chart's automatic range does).
//
// Preludes prepended by the registry (src/shaders.rs): common/timeseries.wgsl,
// common/timeseries_window.wgsl.

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) l: u32, @builtin(workgroup_id) wg: vec3<u32>) {
    let s = entries[wp.first + wg.y].x;
    let row = s * wp.samples;
    var mn = 0xffffffffu;
    var mx = 0u;
    for (var k = wp.k0 + l; k < wp.k1; k += WINDOW_THREADS) {
        let bits = window[row + k];
        // Finite: the exponent is not all ones.
        if (bits & 0x7f800000u) != 0x7f800000u {
            mn = min(mn, key(bits));
            mx = max(mx, key(bits));
        }
    }
    scratch[l] = mn;
    scratch_hi[l] = mx;
    workgroupBarrier();
    for (var d = WINDOW_THREADS / 2u; d > 0u; d = d / 2u) {
        if l < d {
            scratch[l] = min(scratch[l], scratch[l + d]);
            scratch_hi[l] = max(scratch_hi[l], scratch_hi[l + d]);
        }
        workgroupBarrier();
    }
    if l == 0u {
        ranges[s] = vec2<u32>(scratch[0], scratch_hi[0]);
    }
}
