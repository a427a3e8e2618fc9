// Time series: M4 decimation of the visible range rastered straight into an image of owners, the
// path of CPU adapters (lavapipe), whose rasterizer spends most of a frame on millions of
// one-pixel-wide spans and lines. One thread per pixel column: it walks the series of one page
// in their drawing order (the slots of a page are sorted by order), takes each one's M4 column
// (m4_column in common/timeseries.wgsl, as m4.wgsl does) and writes `1 + order` into the pixels
// of its column that the series' span and connectors would light, keeping the largest: the
// series drawn last wins, as with the draws. Each column belongs to one thread, so plain
// stores suffice; the pages are dispatched one after the other.
//
// A series lights in column c: its span, rows span_row(max) ..= span_row(min) within the image
// (exactly the span draw's pixels: whole pixel rows of one column); with RASTER_LINES, the
// parts in column c of its connectors between adjacent columns whose ends lie in the image at
// most LINE_MAX_ROWS rows apart, by the line rule the connector draw was checked to follow on
// this adapter (src/timeseries/gpu/raster.rs): from row y0 of column j to row y1 of column
// j + 1, dy = y1 − y0 and s its sign, column j lights rows y0 + s·k for k = 0 ..= |dy| / 2 and
// column j + 1 rows y0 + s·k for k = (|dy| + 1) / 2 .. |dy|. The thread of the connector's end
// column appends the other connectors to the list the connector draw reads (compacted, counted
// into `args`); resolve.wgsl turns the image into colours and depths before that draw.
//
// Preludes prepended by the registry (src/shaders.rs): common/timeseries.wgsl.

@group(0) @binding(0) var<uniform> d: Dispatch;
// Per slot, HEADER + 2·columns + 1 words (see m4.wgsl).
@group(0) @binding(1) var<storage, read> views: array<u32>;
@group(0) @binding(2) var<storage, read_write> out_columns: array<Column>;
@group(0) @binding(4) var<storage, read_write> out_conns: array<Conn>;
@group(0) @binding(5) var<storage, read_write> args: DrawArgs;
// rows × columns pixels, column-major (pixel (x, y) at x · rows + y): 0, or 1 + the largest
// order of the series rastered there.
@group(0) @binding(6) var<storage, read_write> owner: array<u32>;

// The connector that ends at column i of a series (its M4 column `col` over samples from `a`),
// as m4.wgsl builds it; col0 == NONE when there is none.
fn incoming(base: u32, bb: u32, i: u32, a: u32, col: Column, slot: u32) -> Conn {
    if col.count == 0u {
        return Conn(NONE, 0u, NONE, 0u, slot);
    }
    let j = views[bb + d.columns + 1u + i];
    let v = samples[base + a].x;
    if a > views[bb] && j != NONE && !is_nan(v) && !is_nan(samples[base + a - 1u].x) {
        return Conn(j, samples[base + a - 1u].x, i, v, slot);
    }
    return Conn(NONE, 0u, NONE, 0u, slot);
}

// The rows of connector `c` (its ends' pixel rows and |dy|), and whether the rule rasters it.
fn rastered(c: Conn) -> vec4<i32> {
    let height = f32(d.rows);
    let fy0 = line_row(c.v0, d.a, d.b, height);
    let fy1 = line_row(c.v1, d.a, d.b, height);
    let inside = fy0 >= 0.0 && fy0 < height && fy1 >= 0.0 && fy1 < height;
    let y0 = i32(clamp(fy0, -1.0, height));
    let y1 = i32(clamp(fy1, -1.0, height));
    let ok = (d.flags & RASTER_LINES) != 0u && c.col0 != NONE && c.col1 == c.col0 + 1u && inside
        && abs(y1 - y0) <= LINE_MAX_ROWS;
    return vec4<i32>(y0, y1, abs(y1 - y0), select(0, 1, ok));
}

// Pixel (x, y) takes `who` when it holds less.
fn plot(x: u32, y: i32, who: u32) {
    let p = x * d.rows + u32(y);
    if owner[p] < who {
        owner[p] = who;
    }
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let c = thread_index(gid, nwg);
    let columns = d.columns;
    if c >= columns {
        return;
    }
    let height = f32(d.rows);
    for (var k = 0u; k < d.count; k++) {
        let slot = d.first + k;
        let h = slot * (HEADER + 2u * columns + 1u);
        let base = views[h];
        let levels = views[h + 1u];
        let who = views[h + 2u] + 1u;
        let bb = h + HEADER;
        let a = views[bb + c];
        let col = m4_column(base, levels, views[h + 3u], a, views[bb + c + 1u]);
        if (d.flags & KEEP_COLUMNS) != 0u {
            out_columns[slot * columns + c] = col;
        }
        if col.count > 0u {
            // The span: the rows the span draw lights.
            let r0 = i32(max(span_row(col.max, d.a, d.b, height), 0.0));
            let r1 = i32(min(span_row(col.min, d.a, d.b, height), height - 1.0));
            for (var y = r0; y <= r1; y++) {
                plot(c, y, who);
            }
            // The connector ending here: its part in this column, or the whole line drawn.
            let conn = incoming(base, bb, c, a, col, slot);
            if conn.col0 != NONE {
                let r = rastered(conn);
                if r.w == 1 {
                    let s = select(1, -1, r.y < r.x);
                    for (var q = (r.z + 1) / 2; q < r.z; q++) {
                        plot(c, r.x + s * q, who);
                    }
                } else {
                    let at = atomicAdd(&args.conn_vertices, 2u) / 2u;
                    out_conns[at] = conn;
                }
            }
        }
        // The connector leaving for column c + 1: its part in this column.
        if c + 1u < columns && views[bb + columns + 2u + c] == c {
            let a1 = views[bb + c + 1u];
            let b1 = views[bb + c + 2u];
            if valid_before(base, b1) > valid_before(base, a1) {
                let next = Column(0u, 0u, 0u, 0u, 1u);
                let conn = incoming(base, bb, c + 1u, a1, next, slot);
                let r = rastered(conn);
                if r.w == 1 {
                    let s = select(1, -1, r.y < r.x);
                    for (var q = 0; q <= r.z / 2; q++) {
                        plot(c, r.x + s * q, who);
                    }
                }
            }
        }
    }
}
