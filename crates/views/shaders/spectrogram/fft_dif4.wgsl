// Spectrogram GPU FFT for M = N/2 of 8192 and 16384, pass 1 of 3: window + pack + one radix-4
// decimation-in-frequency stage, which splits the M-point FFT into 4 independent M/4-point FFTs
// small enough for workgroup memory (fft_local_sub.wgsl does them; fft_split.wgsl finishes).
//
// With L = M/4 and z[n] = w[2n]·x[2n] + i·w[2n+1]·x[2n+1] (non-finite sample → NaN):
//   Z[4k' + s] = Σ_{n<L} u_s[n]·e^{−2πi·n·k'/L},
//   u_s[n]     = e^{−2πi·n·s/M} · Σ_{j<4} z[n + j·L]·(−i)^{j·s},   s = 0..3,
// and thread n (0..L) of a column writes u_s[n] to dst[col·M + s·L + n] (4 contiguous blocks).
// The twiddle e^{−2πi·n·s/M} is T[2·n·s], T[m] = e^{−2πi·m/N} (f64 on the CPU, stored f32).
//
// Preludes prepended by the registry (src/shaders.rs): common/math.wgsl, common/fft.wgsl.

@group(0) @binding(0) var<uniform> P: FftParams;
@group(0) @binding(1) var<storage, read> samples: array<vec2<f32>>;
@group(0) @binding(2) var<storage, read> window: array<vec2<f32>>;
@group(0) @binding(3) var<storage, read> twiddles: array<vec2<f32>>;
@group(0) @binding(4) var<storage, read_write> dst: array<vec2<f32>>;

fn load(at: u32, n: u32) -> vec2<f32> {
    let raw = samples[at];
    if non_finite(raw.x) || non_finite(raw.y) {
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
    let n = gid - col * P.per_col;
    let l = P.m / 4u;
    let base = col * P.m;
    let a0 = load(base + n, n);
    let a1 = load(base + n + l, n + l);
    let a2 = load(base + n + 2u * l, n + 2u * l);
    let a3 = load(base + n + 3u * l, n + 3u * l);
    // 4-point DFT: b_s = Σ_j a_j·(−i)^{j·s}.
    let t0 = a0 + a2;
    let t1 = a0 - a2;
    let t2 = a1 + a3;
    let t3 = mul_neg_i(a1 - a3);
    dst[base + n] = t0 + t2;
    dst[base + l + n] = cmul(t1 + t3, twiddles[2u * n]);
    dst[base + 2u * l + n] = cmul(t0 - t2, twiddles[4u * n]);
    dst[base + 3u * l + n] = cmul(t1 - t3, twiddles[6u * n]);
}
