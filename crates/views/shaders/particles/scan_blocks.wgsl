// Particles, grid mode, counting sort 2/3 (prefix sum, level pass): work-efficient exclusive scan
// (Blelloch 1990: up-sweep then down-sweep in workgroup memory) of one 512-element block per
// workgroup, in place; the block's total goes to `block_sums[block]`, which the next level scans
// in turn and scan_add.wgsl adds back. Multi-level, so any cell count up to 512³ works.
//
// Preludes prepended by the registry (src/shaders.rs): common/particles.wgsl.

const BLOCK: u32 = 512u;

@group(0) @binding(0) var<uniform> params: CountParams;
@group(0) @binding(1) var<storage, read_write> data: array<u32>;
@group(0) @binding(2) var<storage, read_write> block_sums: array<u32>;

var<workgroup> tmp: array<u32, 512>;

@compute @workgroup_size(256)
fn main(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let block = wid.x + wid.y * groups.x;
    let base = block * BLOCK;
    if base >= params.n {
        return; // uniform per workgroup
    }
    let ai = lid;
    let bi = lid + 256u;
    tmp[ai] = select(0u, data[base + ai], base + ai < params.n);
    tmp[bi] = select(0u, data[base + bi], base + bi < params.n);
    var offset = 1u;
    for (var d = 256u; d > 0u; d >>= 1u) {
        workgroupBarrier();
        if lid < d {
            let a = offset * (2u * lid + 1u) - 1u;
            let b = offset * (2u * lid + 2u) - 1u;
            tmp[b] += tmp[a];
        }
        offset <<= 1u;
    }
    workgroupBarrier();
    if lid == 0u {
        block_sums[block] = tmp[BLOCK - 1u];
        tmp[BLOCK - 1u] = 0u;
    }
    for (var d = 1u; d < BLOCK; d <<= 1u) {
        offset >>= 1u;
        workgroupBarrier();
        if lid < d {
            let a = offset * (2u * lid + 1u) - 1u;
            let b = offset * (2u * lid + 2u) - 1u;
            let t = tmp[a];
            tmp[a] = tmp[b];
            tmp[b] += t;
        }
    }
    workgroupBarrier();
    if base + ai < params.n {
        data[base + ai] = tmp[ai];
    }
    if base + bi < params.n {
        data[base + bi] = tmp[bi];
    }
}
