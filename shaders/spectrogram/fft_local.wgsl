// Spectrogram GPU FFT, fused single pass for M = N/2 ≤ 4096: one workgroup per column runs
// window + pack, every Stockham stage (radix 4, then radix 2 if log2 M is odd) and the
// real-spectrum split + dBFS, with the column held in workgroup memory (the "tile", ping-ponged
// through registers: each stage reads all its inputs, barrier, writes all its outputs, barrier).
// Same arithmetic and the same formulas as fft_pack / fft_radix4 / fft_radix2 / fft_split:
//   z[n] = w[2n]·x[2n] + i·w[2n+1]·x[2n+1]          (non-finite sample → NaN)
//   stage (r, p): thread-butterfly i, k = i mod p: a_j = tile[i + j·M/r]·T[j·k·N/(r·p)],
//                 DFT_r, out j → tile[(i − k)·r + k + j·p]
//   X[k] = ½(Z[k] + conj Z[M−k]) − ½i·T[k]·(Z[k] − conj Z[M−k]),  T[m] = e^{−2πi·m/N}
//   amplitude_k = c_k·|X_k|·scale (scale = 1/Σw), dB = 20·log10, floored at −160, non-finite → −160.

override TILE: u32 = 4096u;  // M, complex values per column
override WG: u32 = 256u;     // threads per workgroup: min(256, M/4)
override BPT: u32 = 4u;      // radix-4 butterflies per thread per stage: M/(4·WG), 1..=4

struct Params {
    p: u32,          // unused here
    per_col: u32,    // unused here
    m: u32,          // complex FFT length M = N/2 (= TILE)
    tw_stride: u32,  // unused here
    max_batch: u32,  // columns the buffers hold
    flags: u32,      // bit 0: write the complex spectrum
    scale: f32,      // 1/Σw
    pad: u32,
}

const DB_FLOOR: f32 = -160.0;
const DB_PER_LOG2: f32 = 6.020599913279624;  // 20·log10(2)

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> samples: array<vec2<f32>>;
@group(0) @binding(2) var<storage, read> window: array<vec2<f32>>;
@group(0) @binding(3) var<storage, read> twiddles: array<vec2<f32>>;
@group(0) @binding(4) var<storage, read_write> db_out: array<f32>;
@group(0) @binding(5) var<storage, read_write> spectrum: array<vec2<f32>>;

var<workgroup> tile: array<vec2<f32>, TILE>;

fn non_finite(v: f32) -> bool {
    return (bitcast<u32>(v) & 0x7f800000u) == 0x7f800000u;
}

fn cmul(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> {
    return vec2<f32>(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}

fn mul_neg_i(v: vec2<f32>) -> vec2<f32> {
    return vec2<f32>(v.y, -v.x);
}

fn load(at: u32, n: u32) -> vec2<f32> {
    let raw = samples[at];
    if non_finite(raw.x) || non_finite(raw.y) {
        let nan = bitcast<f32>(bitcast<u32>(raw.x) | 0x7fc00000u);
        return vec2<f32>(nan, nan);
    }
    return raw * window[n];
}

fn split(a: vec2<f32>, b: vec2<f32>, w: vec2<f32>) -> vec2<f32> {
    let bc = vec2<f32>(b.x, -b.y);
    let e = a + bc;
    let d = cmul(w, a - bc);
    return 0.5 * (e + vec2<f32>(d.y, -d.x));
}

fn emit(col: u32, k: u32, x: vec2<f32>) {
    let bins = TILE + 1u;
    let at = col * bins + k;
    if (P.flags & 1u) != 0u {
        spectrum[at] = x;
    }
    var db = DB_FLOOR;
    if !(non_finite(x.x) || non_finite(x.y)) {
        var c = 2.0;
        if k == 0u || k == TILE {
            c = 1.0;
        }
        let ax = abs(x.x);
        let ay = abs(x.y);
        let hi = max(ax, ay);
        let lo = min(ax, ay);
        if hi > 0.0 {
            let r = lo / hi;
            let amp = c * P.scale * hi * sqrt(1.0 + r * r);
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

@compute @workgroup_size(WG)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let col = wid.y * nwg.x + wid.x;
    if col >= P.max_batch {
        return;
    }
    let m = TILE;
    let n_real = 2u * m;
    let q4 = m / 4u;
    var v: array<vec2<f32>, 16>;

    // Stage 1 (radix 4, p = 1, no twiddles) straight from the input.
    let base = col * m;
    for (var b = 0u; b < BPT; b++) {
        let i = lid + b * WG;
        for (var j = 0u; j < 4u; j++) {
            v[4u * b + j] = load(base + i + j * q4, i + j * q4);
        }
    }
    for (var b = 0u; b < BPT; b++) {
        let i = lid + b * WG;
        let t0 = v[4u * b] + v[4u * b + 2u];
        let t1 = v[4u * b] - v[4u * b + 2u];
        let t2 = v[4u * b + 1u] + v[4u * b + 3u];
        let t3 = mul_neg_i(v[4u * b + 1u] - v[4u * b + 3u]);
        tile[4u * i] = t0 + t2;
        tile[4u * i + 1u] = t1 + t3;
        tile[4u * i + 2u] = t0 - t2;
        tile[4u * i + 3u] = t1 - t3;
    }
    workgroupBarrier();

    // Remaining radix-4 stages.
    var p = 4u;
    loop {
        if 4u * p > m {
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

    // Final radix-2 stage when log2 M is odd (p = M/2): 2·BPT butterflies per thread.
    if p < m {
        let q2 = m / 2u;
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

    // Split + dB: thread-item t (0..M/2) writes bins t and M − t; item 0 writes 0, M/2 and M.
    for (var b = 0u; b < 2u * BPT; b++) {
        let t = lid + b * WG;
        if t == 0u {
            let z0 = tile[0];
            emit(col, 0u, split(z0, z0, twiddles[0]));
            emit(col, m, split(z0, z0, twiddles[m]));
            let h = m / 2u;
            let zh = tile[h];
            emit(col, h, split(zh, zh, twiddles[h]));
        } else {
            let a = tile[t];
            let bb = tile[m - t];
            emit(col, t, split(a, bb, twiddles[t]));
            emit(col, m - t, split(bb, a, twiddles[m - t]));
        }
    }
}
