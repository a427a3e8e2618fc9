// Time series: M4 decimation of the visible range, one thread per pixel column.
//
// The CPU finds, by binary search on the f64 times, the index range [bounds[i], bounds[i+1]) of
// samples that fall into column i (the same column function as the CPU reference). Here each
// column's min and max come from the min/max pyramid (at most 15 nodes per side per level, so a
// column costs O(levels) whatever the zoom); count, first and last valid (non-NaN) values come from
// the prefix count of valid samples (direct reads, a binary search only when an end is NaN).
// Outputs: the M4 column, the column's vertical span and the connector from the previous sample,
// drawn only when both it and the column's first sample are valid (NaN runs are gaps).
//
// Preludes prepended by the registry (src/gpu/shaders.rs): common/timeseries.wgsl.

struct M4Params {
    columns: u32,
    // Pyramid levels above the values (level L occupies nodes offsets[L-1] ..).
    levels: u32,
    _pad0: u32,
    _pad1: u32,
    offsets: array<vec4<u32>, 2>,
}

struct Column {
    min: u32,
    max: u32,
    first: u32,
    last: u32,
    count: u32,
}

@group(0) @binding(0) var<uniform> p: M4Params;
// bounds[0..=columns]: sample index ranges; bounds[columns + 1 + i]: previous column whose index
// range is non-empty (0xffffffff: none).
@group(0) @binding(1) var<storage, read> bounds: array<u32>;
@group(0) @binding(2) var<storage, read> values: array<u32>;
// prefix[k] = number of valid samples among values[0..=k].
@group(0) @binding(3) var<storage, read> prefix: array<u32>;
@group(0) @binding(4) var<storage, read> pyramid: array<vec2<u32>>;
@group(0) @binding(5) var<storage, read_write> out_columns: array<Column>;
@group(0) @binding(6) var<storage, read_write> out_spans: array<Span>;
@group(0) @binding(7) var<storage, read_write> out_conns: array<Conn>;

fn unkey(k: u32) -> u32 {
    if (k & 0x80000000u) != 0u {
        return k & 0x7fffffffu;
    }
    return ~k;
}

// Valid samples among values[0..k).
fn valid_before(k: u32) -> u32 {
    if k == 0u {
        return 0u;
    }
    return prefix[k - 1u];
}

// Smallest k in [a, b) with valid_before(k + 1) >= want (the want-th valid sample).
fn find_valid(a: u32, b: u32, want: u32) -> u32 {
    var lo = a;
    var hi = b - 1u;
    while lo < hi {
        let mid = lo + (hi - lo) / 2u;
        if prefix[mid] >= want {
            hi = mid;
        } else {
            lo = mid + 1u;
        }
    }
    return lo;
}

fn level_offset(level: u32) -> u32 {
    let i = level - 1u;
    return p.offsets[i / 4u][i % 4u];
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if i >= p.columns {
        return;
    }
    let a = bounds[i];
    let b = bounds[i + 1u];
    var col = Column(0u, 0u, 0u, 0u, 0u);
    var span = Span(NONE, 0u, 0u);
    var conn = Conn(NONE, 0u, NONE, 0u);
    let count = select(0u, valid_before(b) - valid_before(a), b > a);
    if count > 0u {
        // Min and max through the pyramid.
        var mn = 0xffffffffu;
        var mx = 0u;
        var lo = a;
        var hi = b;
        var level = 0u;
        loop {
            if lo >= hi {
                break;
            }
            if level == p.levels {
                for (var k = lo; k < hi; k++) {
                    let n = pyramid[level_offset(level) + k];
                    mn = min(mn, n.x);
                    mx = max(mx, n.y);
                }
                break;
            }
            while lo < hi && (lo & 15u) != 0u {
                if level == 0u {
                    let bits = values[lo];
                    if !is_nan(bits) {
                        mn = min(mn, key(bits));
                        mx = max(mx, key(bits));
                    }
                } else {
                    let n = pyramid[level_offset(level) + lo];
                    mn = min(mn, n.x);
                    mx = max(mx, n.y);
                }
                lo += 1u;
            }
            while hi > lo && (hi & 15u) != 0u {
                hi -= 1u;
                if level == 0u {
                    let bits = values[hi];
                    if !is_nan(bits) {
                        mn = min(mn, key(bits));
                        mx = max(mx, key(bits));
                    }
                } else {
                    let n = pyramid[level_offset(level) + hi];
                    mn = min(mn, n.x);
                    mx = max(mx, n.y);
                }
            }
            lo = lo / 16u;
            hi = hi / 16u;
            level += 1u;
        }
        var first = values[a];
        if is_nan(first) {
            first = values[find_valid(a, b, valid_before(a) + 1u)];
        }
        var last = values[b - 1u];
        if is_nan(last) {
            last = values[find_valid(a, b, valid_before(b))];
        }
        col = Column(unkey(mn), unkey(mx), first, last, count);
        span = Span(i, unkey(mn), unkey(mx));
        let j = bounds[p.columns + 1u + i];
        if a > bounds[0] && j != NONE && !is_nan(values[a]) && !is_nan(values[a - 1u]) {
            conn = Conn(j, values[a - 1u], i, values[a]);
        }
    }
    out_columns[i] = col;
    out_spans[i] = span;
    out_conns[i] = conn;
}
