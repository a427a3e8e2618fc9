// Spectrogram GPU FFT for M = N/2 of 8192 and 16384, pass 2 of 3: the 4 independent L-point
// FFTs (L = M/4) left by fft_dif4.wgsl, one workgroup per (column, s), each held in workgroup
// memory through every Stockham stage (radix 4, then radix 2 if log2 L is odd; the same stage
// formulas as fft_radix4 / fft_radix2 / fft_local):
//   stage (r, p): butterfly i, k = i mod p: a_j = tile[i + j·L/r]·T[j·k·N/(r·p)], DFT_r,
//                 out j → tile[(i − k)·r + k + j·p],   T[m] = e^{−2πi·m/N}
// Block s of the column (src[col·M + s·L ..]) transforms to Z[4k' + s] = tile[k'], written to
// dst[col·M + 4k' + s]: the natural-order M-point spectrum that fft_split.wgsl reads.
//
// Preludes prepended by the registry (src/shaders.rs): common/math.wgsl, common/fft.wgsl.

override TILE: u32 = 4096u;  // L = M/4, complex values per workgroup
override WG: u32 = 256u;     // threads per workgroup
override BPT: u32 = 4u;      // radix-4 butterflies per thread per stage: L/(4·WG), 1..=4

@group(0) @binding(0) var<uniform> P: FftParams;
@group(0) @binding(1) var<storage, read> twiddles: array<vec2<f32>>;
@group(0) @binding(2) var<storage, read> src: array<vec2<f32>>;
@group(0) @binding(3) var<storage, read_write> dst: array<vec2<f32>>;

var<workgroup> tile: array<vec2<f32>, TILE>;

@compute @workgroup_size(WG)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let g = wid.y * nwg.x + wid.x;
    let col = g / 4u;
    if col >= P.max_batch {
        return;
    }
    let s = g - 4u * col;
    let l = TILE;
    let n_real = 8u * l;  // N = 2M = 8L
    let q4 = l / 4u;
    let block = col * P.m + s * l;
    var v: array<vec2<f32>, 16>;

    for (var b = 0u; b < 4u * BPT; b++) {
        let i = lid + b * WG;
        tile[i] = src[block + i];
    }
    workgroupBarrier();

    var p = 1u;
    loop {
        if 4u * p > l {
            break;
        }
        let stride = n_real / (4u * p);
        for (var b = 0u; b < BPT; b++) {
            let i = lid + b * WG;
            let k = i & (p - 1u);
            v[4u * b] = tile[i];
            for (var j = 1u; j < 4u; j++) {
                v[4u * b + j] = cmul(tile[i + j * q4], twiddles[j * k * stride]);
            }
        }
        workgroupBarrier();
        for (var b = 0u; b < BPT; b++) {
            let i = lid + b * WG;
            let k = i & (p - 1u);
            let t0 = v[4u * b] + v[4u * b + 2u];
            let t1 = v[4u * b] - v[4u * b + 2u];
            let t2 = v[4u * b + 1u] + v[4u * b + 3u];
            let t3 = mul_neg_i(v[4u * b + 1u] - v[4u * b + 3u]);
            let o = (i - k) * 4u + k;
            tile[o] = t0 + t2;
            tile[o + p] = t1 + t3;
            tile[o + 2u * p] = t0 - t2;
            tile[o + 3u * p] = t1 - t3;
        }
        workgroupBarrier();
        p = 4u * p;
    }

    if p < l {
        let q2 = l / 2u;
        let stride = n_real / (2u * p);
        for (var b = 0u; b < 2u * BPT; b++) {
            let i = lid + b * WG;
            let k = i & (p - 1u);
            v[2u * b] = tile[i];
            v[2u * b + 1u] = cmul(tile[i + q2], twiddles[k * stride]);
        }
        workgroupBarrier();
        for (var b = 0u; b < 2u * BPT; b++) {
            let i = lid + b * WG;
            let k = i & (p - 1u);
            let o = (i - k) * 2u + k;
            tile[o] = v[2u * b] + v[2u * b + 1u];
            tile[o + p] = v[2u * b] - v[2u * b + 1u];
        }
        workgroupBarrier();
    }

    let out = col * P.m + s;
    for (var b = 0u; b < 4u * BPT; b++) {
        let k = lid + b * WG;
        dst[out + 4u * k] = tile[k];
    }
}
