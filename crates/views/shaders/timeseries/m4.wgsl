// Time series: M4 decimation of the visible range into span and connector records for the
// draws (spans.wgsl, connectors.wgsl), one thread per pixel column of every series drawn from
// one page, in one dispatch (thread t: series slot d.first + t / columns, column t % columns).
// The path of GPUs; m4_raster.wgsl rasters the same pixels itself on CPU adapters.
//
// The CPU finds, by binary search on the f64 times, the index range [bounds[i], bounds[i+1]) of
// samples that fall into column i (the same column function as the CPU reference); m4_column
// (common/timeseries.wgsl) gives its min, max, first, last and count in O(levels) reads.
// Outputs: the M4 column (when kept, flags & KEEP_COLUMNS), the column's vertical span and the
// connector from the previous sample, drawn only when both it and the column's first sample are
// valid (NaN runs are gaps). With COMPACT the non-empty records only, in any order (the depth
// test decides between series, and a series' records share its colour), counted into the
// indirect draws (`args`); else every column's records in place, empty ones marked NONE.
//
// Preludes prepended by the registry (src/shaders.rs): common/timeseries.wgsl.

@group(0) @binding(0) var<uniform> d: Dispatch;
// Per slot, HEADER + 2·columns + 1 words from slot · (HEADER + 2·columns + 1): the header, then
// [0..=columns] sample index ranges and [columns + 1 + i] the previous column whose index range
// is non-empty (0xffffffff: none).
@group(0) @binding(1) var<storage, read> views: array<u32>;
@group(0) @binding(2) var<storage, read_write> out_columns: array<Column>;
@group(0) @binding(3) var<storage, read_write> out_spans: array<Span>;
@group(0) @binding(4) var<storage, read_write> out_conns: array<Conn>;
@group(0) @binding(5) var<storage, read_write> args: DrawArgs;

// Records of this workgroup, and where they go in the compacted lists.
var<workgroup> wg_spans: atomic<u32>;
var<workgroup> wg_conns: atomic<u32>;
var<workgroup> base_spans: u32;
var<workgroup> base_conns: u32;

@compute @workgroup_size(64)
fn main(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) li: u32,
) {
    let t = thread_index(gid, nwg);
    let columns = d.columns;
    let slot = d.first + t / columns;
    let i = t % columns;
    var span = Span(NONE, 0u, 0u, slot);
    var conn = Conn(NONE, 0u, NONE, 0u, slot);
    if t < d.total {
        let h = slot * (HEADER + 2u * columns + 1u);
        let base = views[h];
        let bb = h + HEADER;
        let a = views[bb + i];
        let col = m4_column(base, views[h + 1u], views[h + 3u], a, views[bb + i + 1u]);
        if col.count > 0u {
            span = Span(i, col.min, col.max, slot);
            let j = views[bb + columns + 1u + i];
            let v = samples[base + a].x;
            if a > views[bb] && j != NONE && !is_nan(v) && !is_nan(samples[base + a - 1u].x) {
                conn = Conn(j, samples[base + a - 1u].x, i, v, slot);
            }
        }
        if (d.flags & KEEP_COLUMNS) != 0u {
            out_columns[slot * columns + i] = col;
        }
    }
    if (d.flags & COMPACT) == 0u {
        if t < d.total {
            out_spans[slot * columns + i] = span;
            out_conns[slot * columns + i] = conn;
        }
        return;
    }
    var si = 0u;
    var ci = 0u;
    if span.col != NONE {
        si = atomicAdd(&wg_spans, 1u);
    }
    if conn.col0 != NONE {
        ci = atomicAdd(&wg_conns, 1u);
    }
    workgroupBarrier();
    if li == 0u {
        base_spans = atomicAdd(&args.span_vertices, atomicLoad(&wg_spans) * 6u) / 6u;
        base_conns = atomicAdd(&args.conn_vertices, atomicLoad(&wg_conns) * 2u) / 2u;
    }
    workgroupBarrier();
    if span.col != NONE {
        out_spans[base_spans + si] = span;
    }
    if conn.col0 != NONE {
        out_conns[base_conns + ci] = conn;
    }
}
