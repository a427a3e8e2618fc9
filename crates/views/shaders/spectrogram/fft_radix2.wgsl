// Spectrogram GPU FFT: the final radix-2 Stockham stage, used when log2(M) is odd (p = M/2).
//
// Thread i (0..M/2) of a column, k = i mod p: a_0 = src[i], a_1 = src[i + M/2]·e^{−2πi·k/(2p)}
// (twiddle T[k·N/(2p)], T[m] = e^{−2πi·m/N}); writes a_0 ± a_1 to dst[(i − k)·2 + k + {0, p}].
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
    let q = P.m / 2u;
    let base = col * P.m;
    let k = i & (P.p - 1u);
    let a0 = src[base + i];
    let a1 = cmul(src[base + i + q], twiddles[k * P.tw_stride]);
    let o = base + (i - k) * 2u + k;
    dst[o] = a0 + a1;
    dst[o + P.p] = a0 - a1;
}
