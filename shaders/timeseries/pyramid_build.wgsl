// Time series: build (or extend) one level of the min/max pyramid over a series' values.
//
// Level 1 node k holds the min and max of values[16k .. 16k+16) (NaN skipped); level L > 1 node k
// combines nodes 16k .. 16k+16 of level L-1. Min and max are stored as order-preserving u32 keys
// of the f32 bits (negative: all bits flipped; positive: sign bit set), so comparisons are exact
// integer ones, ±inf order correctly and NaN never enters. An all-NaN node is (0xffffffff, 0).
// Only complete nodes are built; one dispatch covers nodes [node_start, node_end) of one level.
//
// Preludes prepended by the registry (src/gpu/shaders.rs): common/timeseries.wgsl.

struct BuildParams {
    // Level being built (1 = from the raw values).
    level: u32,
    // Offset (in nodes) of the source level inside `pyramid` (unused for level 1).
    src_offset: u32,
    // Offset (in nodes) of the level being built inside `pyramid`.
    dst_offset: u32,
    node_start: u32,
    node_end: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

@group(0) @binding(0) var<uniform> p: BuildParams;
// The values as f32 bits, four per element: a level-1 node reads its 16 values as 4 vec4 loads.
@group(0) @binding(1) var<storage, read> values: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read_write> pyramid: array<vec2<u32>>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let node = p.node_start + gid.x + gid.y * nwg.x * 64u;
    if node >= p.node_end {
        return;
    }
    var mn = 0xffffffffu;
    var mx = 0u;
    if p.level == 1u {
        for (var i = 0u; i < 4u; i++) {
            let q = values[node * 4u + i];
            for (var j = 0u; j < 4u; j++) {
                let bits = q[j];
                if !is_nan(bits) {
                    let k = key(bits);
                    mn = min(mn, k);
                    mx = max(mx, k);
                }
            }
        }
    } else {
        for (var i = 0u; i < 16u; i++) {
            let c = pyramid[p.src_offset + node * 16u + i];
            mn = min(mn, c.x);
            mx = max(mx, c.y);
        }
    }
    pyramid[p.dst_offset + node] = vec2<u32>(mn, mx);
}
