// Shared prelude of the time-series shaders (timeseries/*.wgsl): the records the M4 pass writes
// and the draw passes read, the draw uniform and per-series table, the job and dispatch records
// of the batched compute passes (mirrors in src/timeseries/gpu/mod.rs and
// src/series/decimate.rs, checked by tests/shader_layout.rs), and the f32-bit helpers.

// One vertical span record: pixel column, the f32 bits of the low and high values, and the
// series (its entry of the draw table).
struct Span {
    col: u32,
    lo: u32,
    hi: u32,
    slot: u32,
}

// One connector record: a line from column `col0` at value bits `v0` to `col1` at `v1`, of the
// series `slot` (its entry of the draw table).
struct Conn {
    col0: u32,
    v0: u32,
    col1: u32,
    v1: u32,
    slot: u32,
}

// The draw uniform: value → pixel row is y = b − v·a (f64-derived constants, row 0 at the top),
// image width × height pixels.
struct SeriesView {
    a: f32,
    b: f32,
    width: f32,
    height: f32,
}

// One series of a draw: RGBA8 colour (R in the low byte) and depth (the painter's order: a
// later series has a smaller depth and wins the LessEqual test).
struct SeriesDraw {
    color: u32,
    depth: f32,
    _pad0: u32,
    _pad1: u32,
}

// One job of a batched compute pass: `count` items, item k reads at `src` (+ k, or + 16·k for a
// pyramid level) and writes at `dst + k`; `start` is the job's first thread in its dispatch
// (jobs of one dispatch are contiguous and sorted by `start`).
struct Job {
    src: u32,
    dst: u32,
    start: u32,
    count: u32,
}

// One dispatch of a batched compute pass (a slot of a uniform bound with a dynamic offset):
// entries [first, first + count) of its job (or slot) list, `total` threads, the pyramid level
// being built; for M4 the columns per series (the image width), the image height `rows`, the
// value → row mapping y = b − v·a, and flags: 1 keep the M4 columns, 2 compact the records,
// 8 (m4_raster.wgsl) raster the short connectors into the owner image too.
struct Dispatch {
    first: u32,
    count: u32,
    total: u32,
    level: u32,
    columns: u32,
    flags: u32,
    rows: u32,
    _pad0: u32,
    a: f32,
    b: f32,
    _pad1: u32,
    _pad2: u32,
}

// Flags of an M4 dispatch.
const KEEP_COLUMNS: u32 = 1u;
const COMPACT: u32 = 2u;
const RASTER_LINES: u32 = 8u;
// Longest connector (rows) rastered by the M4 pass; longer ones are drawn as lines.
const LINE_MAX_ROWS: i32 = 255;

// The two indirect draws of the records the M4 pass wrote (spans: 6 vertices each, connectors:
// 2), whose vertex counts it adds up.
struct DrawArgs {
    span_vertices: atomic<u32>,
    span_instances: u32,
    span_first_vertex: u32,
    span_first_instance: u32,
    conn_vertices: atomic<u32>,
    conn_instances: u32,
    conn_first_vertex: u32,
    conn_first_instance: u32,
}

// Vertex output of the draw passes: clip position and RGBA colour.
struct VsOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) color: vec4<f32>,
}

// Marker of an empty span or connector record.
const NONE: u32 = 0xffffffffu;

fn is_nan(bits: u32) -> bool {
    return (bits & 0x7fffffffu) > 0x7f800000u;
}

// The depth of the series drawn `order`-th: 1 − (order + 1)·2⁻²⁰, exact (depth_of in
// src/timeseries/gpu/mod.rs computes the same f32).
fn depth_of(order: u32) -> f32 {
    return 1.0 - f32(min(order, 1048574u) + 1u) / 1048576.0;
}

// The pixel row of value bits `bits` for a span (clamped two rows beyond the image):
// floor(clamp(b − v·a, −2, height + 2)), as spans.wgsl and the M4 raster compute it.
fn span_row(bits: u32, a: f32, b: f32, height: f32) -> f32 {
    let y = b - bitcast<f32>(bits) * a;
    return floor(clamp(y, -2.0, height + 2.0));
}

// The pixel row of a connector's end at value bits `bits` (clamped far off the image, keeping the
// slope finite): floor(clamp(b − v·a, −1e6, height + 1e6)), as connectors.wgsl and the M4 raster
// compute it (the line runs between the centres of the end pixels).
fn line_row(bits: u32, a: f32, b: f32, height: f32) -> f32 {
    return floor(clamp(b - bitcast<f32>(bits) * a, -1.0e6, height + 1.0e6));
}

// f32 bits → u32 whose unsigned order is the float order (NaN excluded).
fn key(bits: u32) -> u32 {
    if (bits & 0x80000000u) != 0u {
        return ~bits;
    }
    return bits | 0x80000000u;
}

// The thread index of a dispatch folded over x and y (64 threads per workgroup).
fn thread_index(gid: vec3<u32>, nwg: vec3<u32>) -> u32 {
    return gid.x + gid.y * nwg.x * 64u;
}

// The page of mirrors the compute passes work on (group 1; unused by the draws): per sample its
// f32 bits and the valid (non-NaN) count of its series' samples up to and including it; the
// min/max pyramid nodes (order-preserving keys, see pyramid_build.wgsl).
@group(1) @binding(0) var<storage, read_write> samples: array<vec2<u32>>;
@group(1) @binding(1) var<storage, read_write> pyramid: array<vec2<u32>>;

// Words of a series' header in the M4 passes' `views`: [0] where its mirror starts in the page
// (a multiple of its capacity), [1] its pyramid levels above the values, [2] its order among the
// series drawn, [3] its capacity (a power of two); its column bounds follow.
const HEADER: u32 = 4u;

// One M4 column: min and max (f32 bits), first and last valid value, valid samples.
struct Column {
    min: u32,
    max: u32,
    first: u32,
    last: u32,
    count: u32,
}

fn unkey(k: u32) -> u32 {
    if (k & 0x80000000u) != 0u {
        return k & 0x7fffffffu;
    }
    return ~k;
}

// Valid samples among the series' samples [0..k) (its mirror starts at `base`).
fn valid_before(base: u32, k: u32) -> u32 {
    if k == 0u {
        return 0u;
    }
    return samples[base + k - 1u].y;
}

// Smallest k in [a, b) with valid_before(k + 1) >= want (the want-th valid sample).
fn find_valid(base: u32, a: u32, b: u32, want: u32) -> u32 {
    var lo = a;
    var hi = b - 1u;
    while lo < hi {
        let mid = lo + (hi - lo) / 2u;
        if samples[base + mid].y >= want {
            hi = mid;
        } else {
            lo = mid + 1u;
        }
    }
    return lo;
}

// The M4 column of the series' samples [a, b) (mirror at `base` of `capacity` samples, `levels`
// pyramid levels): min and max through the pyramid (at most 15 nodes per side per level), count,
// first and last valid from the valid counts. Count 0: nothing else is set. The pyramid of a
// mirror starts at node base / 8, level L + 1 right after level L's capacity / 16^L nodes.
fn m4_column(base: u32, levels: u32, capacity: u32, a: u32, b: u32) -> Column {
    let count = select(0u, valid_before(base, b) - valid_before(base, a), b > a);
    if count == 0u {
        return Column(0u, 0u, 0u, 0u, 0u);
    }
    // First node of the level being walked (level 1 at the start of the mirror's pyramid).
    var off = base / 8u;
    var mn = 0xffffffffu;
    var mx = 0u;
    var lo = a;
    var hi = b;
    var level = 0u;
    loop {
        if lo >= hi {
            break;
        }
        if level == levels {
            for (var k = lo; k < hi; k++) {
                let n = pyramid[off + k];
                mn = min(mn, n.x);
                mx = max(mx, n.y);
            }
            break;
        }
        while lo < hi && (lo & 15u) != 0u {
            if level == 0u {
                let bits = samples[base + lo].x;
                if !is_nan(bits) {
                    mn = min(mn, key(bits));
                    mx = max(mx, key(bits));
                }
            } else {
                let n = pyramid[off + lo];
                mn = min(mn, n.x);
                mx = max(mx, n.y);
            }
            lo += 1u;
        }
        while hi > lo && (hi & 15u) != 0u {
            hi -= 1u;
            if level == 0u {
                let bits = samples[base + hi].x;
                if !is_nan(bits) {
                    mn = min(mn, key(bits));
                    mx = max(mx, key(bits));
                }
            } else {
                let n = pyramid[off + hi];
                mn = min(mn, n.x);
                mx = max(mx, n.y);
            }
        }
        lo = lo / 16u;
        hi = hi / 16u;
        if level > 0u {
            off += capacity >> (4u * level);
        }
        level += 1u;
    }
    var first = samples[base + a].x;
    if is_nan(first) {
        first = samples[base + find_valid(base, a, b, valid_before(base, a) + 1u)].x;
    }
    var last = samples[base + b - 1u].x;
    if is_nan(last) {
        last = samples[base + find_valid(base, a, b, valid_before(base, b))].x;
    }
    return Column(unkey(mn), unkey(mx), first, last, count);
}
