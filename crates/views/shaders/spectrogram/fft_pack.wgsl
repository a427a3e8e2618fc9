// Spectrogram GPU FFT, pass 1 of 1 + S: window, pack, first radix-4 Stockham stage.
//
// Input: `batch × N` raw f32 samples, column-major, read as N/2 complex values per column:
// z[n] = w[2n]·x[2n] + i·w[2n+1]·x[2n+1]. A sample that is NaN or ±inf (tested on its bits, so a
// driver's finite-math assumptions cannot drop it) makes z[n] a quiet NaN, which the following
// butterflies carry into every bin of that column (the split pass turns it into the dB floor).
//
// Stockham stage with p = 1 (no twiddles): thread i (0..M/4) of a column reads z[i + j·M/4],
// j = 0..3, and writes the 4-point DFT to y[4i + j]. One thread per (column, butterfly); the
// flat thread index folds workgroups over x and y (see src/spectrogram/fft/).
//
// Preludes prepended by the registry (src/shaders.rs): common/math.wgsl, common/fft.wgsl.

@group(0) @binding(0) var<uniform> P: FftParams;
@group(0) @binding(1) var<storage, read> samples: array<vec2<f32>>;
@group(0) @binding(2) var<storage, read> window: array<vec2<f32>>;
@group(0) @binding(3) var<storage, read_write> dst: array<vec2<f32>>;

fn load(at: u32, n: u32) -> vec2<f32> {
    let raw = samples[at];
    if non_finite(raw.x) || non_finite(raw.y) {
        // Exponent all ones, quiet bit set: a NaN built at run time (no NaN constant in WGSL).
        let nan = bitcast<f32>(bitcast<u32>(raw.x) | 0x7fc00000u);
        return vec2<f32>(nan, nan);
    }
    return raw * window[n];
}

@compute @workgroup_size(64)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let gid = (wid.y * nwg.x + wid.x) * 64u + lid;
    let col = gid / P.per_col;
    if col >= P.max_batch {
        return;
    }
    let i = gid - col * P.per_col;
    let q = P.m / 4u;
    let base = col * P.m;
    let a0 = load(base + i, i);
    let a1 = load(base + i + q, i + q);
    let a2 = load(base + i + 2u * q, i + 2u * q);
    let a3 = load(base + i + 3u * q, i + 3u * q);
    let t0 = a0 + a2;
    let t1 = a0 - a2;
    let t2 = a1 + a3;
    let t3 = mul_neg_i(a1 - a3);
    let o = base + 4u * i;
    dst[o] = t0 + t2;
    dst[o + 1u] = t1 + t3;
    dst[o + 2u] = t0 - t2;
    dst[o + 3u] = t1 - t3;
}
