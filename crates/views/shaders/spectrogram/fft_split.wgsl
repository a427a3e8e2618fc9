// Spectrogram GPU FFT, last pass: real-spectrum split, magnitude and dBFS.
//
// Z = FFT_M(z) of the packed column (z[n] = x[2n] + i·x[2n+1], M = N/2). For k = 0..M:
//   X[k] = ½(Z[k] + conj Z[M−k]) − ½i·e^{−2πik/N}·(Z[k] − conj Z[M−k]),   Z[M] ≡ Z[0]
// (the standard two-for-one real FFT split). Thread t (0..M/2) of a column writes bins t and
// M − t; thread 0 writes bins 0, M/2 and M.
//
// Level (exactly vizdeck::audio::stft): amplitude_k = c_k·|X_k|·scale, scale = 1/Σw,
// c_0 = c_M = 1, else 2; dB = 20·log10(amplitude) floored at DB_FLOOR (−160); a non-finite X_k
// (a NaN/inf sample in the column) or a non-finite level gives DB_FLOOR.
// With flags bit 0 set, X_k is also written (interleaved re, im) to `spectrum`.
//
// Preludes prepended by the registry (src/shaders.rs): common/math.wgsl, common/fft.wgsl.

@group(0) @binding(0) var<uniform> P: FftParams;
@group(0) @binding(1) var<storage, read> twiddles: array<vec2<f32>>;
@group(0) @binding(2) var<storage, read> src: array<vec2<f32>>;
@group(0) @binding(3) var<storage, read_write> db_out: array<f32>;
@group(0) @binding(4) var<storage, read_write> spectrum: array<vec2<f32>>;

// X[k] from a = Z[k], b = Z[M−k], w = e^{−2πik/N}.
fn split(a: vec2<f32>, b: vec2<f32>, w: vec2<f32>) -> vec2<f32> {
    let bc = vec2<f32>(b.x, -b.y);
    let e = a + bc;
    let d = cmul(w, a - bc);
    // −i·d = (d.y, −d.x)
    return 0.5 * (e + vec2<f32>(d.y, -d.x));
}

fn emit(col: u32, k: u32, x: vec2<f32>) {
    let bins = P.m + 1u;
    let at = col * bins + k;
    if (P.flags & 1u) != 0u {
        spectrum[at] = x;
    }
    var db = DB_FLOOR;
    if !(non_finite(x.x) || non_finite(x.y)) {
        var c = 2.0;
        if k == 0u || k == P.m {
            c = 1.0;
        }
        // Overflow-safe |x|: max·sqrt(1 + (min/max)²).
        let ax = abs(x.x);
        let ay = abs(x.y);
        let hi = max(ax, ay);
        let lo = min(ax, ay);
        if hi > 0.0 {
            let r = lo / hi;
            let amp = c * P.scale * hi * sqrt(1.0 + r * r);
            // Below 1e-9 the level is under the floor anyway; avoids log2(0).
            if amp > 1e-9 {
                let v = DB_PER_LOG2 * log2(amp);
                if !non_finite(v) && v > DB_FLOOR {
                    db = v;
                }
            }
        }
    }
    db_out[at] = db;
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
    let t = gid - col * P.per_col;
    let m = P.m;
    let base = col * m;
    if t == 0u {
        let z0 = src[base];
        emit(col, 0u, split(z0, z0, twiddles[0]));
        emit(col, m, split(z0, z0, twiddles[m]));
        let h = m / 2u;
        let zh = src[base + h];
        emit(col, h, split(zh, zh, twiddles[h]));
    } else {
        let a = src[base + t];
        let b = src[base + m - t];
        emit(col, t, split(a, b, twiddles[t]));
        emit(col, m - t, split(b, a, twiddles[m - t]));
    }
}
