// Spectrogram GPU FFT: one radix-4 Stockham auto-sort stage (decimation in time, natural order
// out), for p = 4, 16, ... < M.
//
// Thread i (0..M/4) of a column, k = i mod p: reads a_j = src[i + j·M/4], multiplies a_j by the
// twiddle e^{−2πi·j·k/(4p)} = T[j·k·N/(4p)] (T[m] = e^{−2πi·m/N}, computed on the CPU in f64,
// stored as f32), takes the 4-point DFT and writes it to dst[(i − k)·4 + k + j·p].
//
// Preludes prepended by the registry (src/shaders.rs): common/math.wgsl, common/fft.wgsl.

@group(0) @binding(0) var<uniform> P: FftParams;
@group(0) @binding(1) var<storage, read> twiddles: array<vec2<f32>>;
@group(0) @binding(2) var<storage, read> src: array<vec2<f32>>;
@group(0) @binding(3) var<storage, read_write> dst: array<vec2<f32>>;

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
    let k = i & (P.p - 1u);
    let step = k * P.tw_stride;
    let a0 = src[base + i];
    let a1 = cmul(src[base + i + q], twiddles[step]);
    let a2 = cmul(src[base + i + 2u * q], twiddles[2u * step]);
    let a3 = cmul(src[base + i + 3u * q], twiddles[3u * step]);
    let t0 = a0 + a2;
    let t1 = a0 - a2;
    let t2 = a1 + a3;
    let t3 = mul_neg_i(a1 - a3);
    let o = base + (i - k) * 4u + k;
    dst[o] = t0 + t2;
    dst[o + P.p] = t1 + t3;
    dst[o + 2u * P.p] = t0 - t2;
    dst[o + 3u * P.p] = t1 - t3;
}
