// Time series, `--share` window: the valid (non-NaN) samples of each block of WINDOW_BLOCK
// samples of every series (workgroup (b, s): block b of series s), for the write pass's running
// counts.
//
// Preludes prepended by the registry (src/shaders.rs): common/timeseries.wgsl,
// common/timeseries_window.wgsl.

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) l: u32, @builtin(workgroup_id) wg: vec3<u32>) {
    let s = entries[wp.first + wg.y].x;
    let b = wg.x;
    let row = s * wp.samples;
    let c = thread_valid(row, b * WINDOW_BLOCK + l * WINDOW_PER_THREAD);
    let total = workgroup_sum(l, c);
    if l == 0u {
        block_counts[s * wp.blocks + b] = total;
    }
}
