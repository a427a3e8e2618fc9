// Shared prelude of the time-series `--share` window passes (timeseries/window_*.wgsl): the
// producer's window, S series of N f32 samples each, row-major ([S, N], strides [4N, 4] bytes),
// copied into vizdeck's buffer once a frame is complete; each series is written into its mirror
// (values and valid counts, common/timeseries.wgsl) and its finite range over the view is
// reduced for the value axis. Mirrored in src/timeseries/gpu/window.rs (`WindowParams`,
// checked by tests/shader_layout.rs).

// One dispatch's parameters (a slot of a uniform bound with a dynamic offset): the samples per
// series (N), the blocks per series (ceil(N / WINDOW_BLOCK)), the entries [first, first + count)
// of `entries` it works on (workgroup y = entry), and the view's sample range [k0, k1) (range
// pass).
struct WindowParams {
    samples: u32,
    blocks: u32,
    first: u32,
    count: u32,
    k0: u32,
    k1: u32,
    _pad0: u32,
    _pad1: u32,
}

// Samples a workgroup of the count and write passes covers (256 threads × 16 samples).
const WINDOW_BLOCK: u32 = 4096u;
const WINDOW_PER_THREAD: u32 = 16u;
const WINDOW_THREADS: u32 = 256u;

@group(0) @binding(0) var<uniform> wp: WindowParams;
// The window as f32 bits: series s, sample k at s·N + k.
@group(0) @binding(1) var<storage, read> window: array<u32>;
// Per entry: x = the series (its row of the window), y = where its mirror starts in its page.
@group(0) @binding(2) var<storage, read> entries: array<vec2<u32>>;
// Valid (non-NaN) samples per block of each series: series s, block b at s·blocks + b.
@group(0) @binding(3) var<storage, read_write> block_counts: array<u32>;
// Per series: the order-preserving keys (common/timeseries.wgsl `key`) of its smallest and
// largest finite value in the view; (0xffffffff, 0) when it has none.
@group(0) @binding(4) var<storage, read_write> ranges: array<vec2<u32>>;

var<workgroup> scratch: array<u32, 256>;
var<workgroup> scratch_hi: array<u32, 256>;

// The sum of `v` over the workgroup (every thread gets it).
fn workgroup_sum(l: u32, v: u32) -> u32 {
    scratch[l] = v;
    workgroupBarrier();
    for (var s = WINDOW_THREADS / 2u; s > 0u; s = s / 2u) {
        if l < s {
            scratch[l] += scratch[l + s];
        }
        workgroupBarrier();
    }
    let total = scratch[0];
    workgroupBarrier();
    return total;
}

// The valid (non-NaN) samples of row `row` of the window among the WINDOW_PER_THREAD samples
// from sample `k0` (those before N).
fn thread_valid(row: u32, k0: u32) -> u32 {
    var c = 0u;
    for (var i = 0u; i < WINDOW_PER_THREAD; i++) {
        let k = k0 + i;
        if k < wp.samples && !is_nan(window[row + k]) {
            c += 1u;
        }
    }
    return c;
}
