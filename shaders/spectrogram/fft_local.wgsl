// Spectrogram GPU FFT, fused single pass: one workgroup per column runs window + pack, every
// Stockham stage and the real-spectrum split + dBFS. The column lives in registers; stages
// exchange data through workgroup memory (the "tile").
//
// Layout: the workgroup has WG = M/8 threads and each holds 8 complex values. Between stages
// thread `lid` holds v[m] = x[lid + m·WG], m = 0..8 (x = the current stage's input). Stages
// (Stockham, decimation in time, natural-order output; the same formulas as fft_pack /
// fft_radix4 / fft_radix2):
//   stage (r, p): butterfly i, k = i mod p: a_j = x[i + j·M/r]·T[j·k·N/(r·p)], j = 0..r,
//                 r-point DFT, output j → y[(i − k)·r + k + j·p]
// Radix 8 while 8p ≤ M (the thread's butterfly is i = lid, a_j = v[j]), then one radix-4 or
// radix-2 stage when M is not a power of 8 (butterflies i = lid + b·WG; their inputs and outputs
// sit at v[b + j·8/r], so that stage needs no scatter and leaves Z in natural order). An exchange
// writes every output to the tile at its y index, barrier, reads v[m] = y[lid + m·WG], barrier:
// log8(M) exchanges instead of log4(M) stages. Register indices are constants throughout, so the
// 8 values stay in registers.
//   z[n] = w[2n]·x[2n] + i·w[2n+1]·x[2n+1]          (non-finite sample → NaN)
//   X[k] = ½(Z[k] + conj Z[M−k]) − ½i·T[k]·(Z[k] − conj Z[M−k]),  T[m] = e^{−2πi·m/N}
//   amplitude_k = c_k·|X_k|·scale (scale = 1/Σw), dB = 20·log10, floored at −160, non-finite → −160.
// Tile (f32, planar): re at a, im at IM_OFF + a, or, with HALVES, re and im exchanged one after the
// other through M words (for M = 8192 in 32 KiB). With PAD, word a is stored at a + a/32, which
// spreads the stride-8 scatter of the first stages over the 32 banks.

override M: u32 = 4096u;        // complex values per column, N/2
override WG: u32 = 512u;        // threads per workgroup, M/8
override HALVES: bool = false;  // exchange re then im through one M-word tile
override PAD: bool = true;      // one padding word after every 32
override IM_OFF: u32 = 4224u;   // tile offset of the imaginary parts (unused with HALVES)
override TILE_F32: u32 = 8448u; // tile length in f32 words

struct Params {
    p: u32,          // unused here
    per_col: u32,    // unused here
    m: u32,          // complex FFT length M = N/2 (= the override M)
    tw_stride: u32,  // unused here
    max_batch: u32,  // columns the buffers hold
    flags: u32,      // bit 0: write the complex spectrum
    scale: f32,      // 1/Σw
    pad: u32,
}

const DB_FLOOR: f32 = -160.0;
const DB_PER_LOG2: f32 = 6.020599913279624;  // 20·log10(2)
const SQRT_HALF: f32 = 0.7071067811865476;

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> samples: array<vec2<f32>>;
@group(0) @binding(2) var<storage, read> window: array<vec2<f32>>;
@group(0) @binding(3) var<storage, read> twiddles: array<vec2<f32>>;
@group(0) @binding(4) var<storage, read_write> db_out: array<f32>;
@group(0) @binding(5) var<storage, read_write> spectrum: array<vec2<f32>>;

var<workgroup> tile: array<f32, TILE_F32>;

fn non_finite(v: f32) -> bool {
    return (bitcast<u32>(v) & 0x7f800000u) == 0x7f800000u;
}

fn cmul(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> {
    return vec2<f32>(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}

fn mul_neg_i(v: vec2<f32>) -> vec2<f32> {
    return vec2<f32>(v.y, -v.x);
}

// Tile word of logical index a.
fn ti(a: u32) -> u32 {
    if PAD {
        return a + (a >> 5u);
    }
    return a;
}

fn load(at: u32, n: u32) -> vec2<f32> {
    let raw = samples[at];
    if non_finite(raw.x) || non_finite(raw.y) {
        let nan = bitcast<f32>(bitcast<u32>(raw.x) | 0x7fc00000u);
        return vec2<f32>(nan, nan);
    }
    return raw * window[n];
}

// 4-point DFT, forward (e^{−2πi·jk/4}).
fn dft4(a0: vec2<f32>, a1: vec2<f32>, a2: vec2<f32>, a3: vec2<f32>) -> array<vec2<f32>, 4> {
    let t0 = a0 + a2;
    let t1 = a0 - a2;
    let t2 = a1 + a3;
    let t3 = mul_neg_i(a1 - a3);
    return array<vec2<f32>, 4>(t0 + t2, t1 + t3, t0 - t2, t1 - t3);
}

// 8-point DFT, forward: X[k] = E[k] + W^k·O[k], X[k+4] = E[k] − W^k·O[k], W = e^{−2πi/8},
// E and O the 4-point DFTs of the even and odd inputs.
fn dft8(a: array<vec2<f32>, 8>) -> array<vec2<f32>, 8> {
    let e = dft4(a[0], a[2], a[4], a[6]);
    let o = dft4(a[1], a[3], a[5], a[7]);
    let o1 = SQRT_HALF * vec2<f32>(o[1].x + o[1].y, o[1].y - o[1].x);   // ·(1 − i)/√2
    let o2 = mul_neg_i(o[2]);                                            // ·(−i)
    let o3 = SQRT_HALF * vec2<f32>(o[3].y - o[3].x, -(o[3].x + o[3].y)); // ·(−1 − i)/√2
    return array<vec2<f32>, 8>(
        e[0] + o[0], e[1] + o1, e[2] + o2, e[3] + o3,
        e[0] - o[0], e[1] - o1, e[2] - o2, e[3] - o3,
    );
}

// Writes output j of this thread's butterfly to logical tile index o + j·p, then reads
// v[m] = tile[lid + m·WG]. Constant register indices only (the array stays in registers).
fn exchange(v: ptr<function, array<vec2<f32>, 8>>, o: u32, p: u32, lid: u32) {
    if HALVES {
        tile[ti(o)] = (*v)[0].x;
        tile[ti(o + p)] = (*v)[1].x;
        tile[ti(o + 2u * p)] = (*v)[2].x;
        tile[ti(o + 3u * p)] = (*v)[3].x;
        tile[ti(o + 4u * p)] = (*v)[4].x;
        tile[ti(o + 5u * p)] = (*v)[5].x;
        tile[ti(o + 6u * p)] = (*v)[6].x;
        tile[ti(o + 7u * p)] = (*v)[7].x;
        workgroupBarrier();
        (*v)[0].x = tile[ti(lid)];
        (*v)[1].x = tile[ti(lid + WG)];
        (*v)[2].x = tile[ti(lid + 2u * WG)];
        (*v)[3].x = tile[ti(lid + 3u * WG)];
        (*v)[4].x = tile[ti(lid + 4u * WG)];
        (*v)[5].x = tile[ti(lid + 5u * WG)];
        (*v)[6].x = tile[ti(lid + 6u * WG)];
        (*v)[7].x = tile[ti(lid + 7u * WG)];
        workgroupBarrier();
        tile[ti(o)] = (*v)[0].y;
        tile[ti(o + p)] = (*v)[1].y;
        tile[ti(o + 2u * p)] = (*v)[2].y;
        tile[ti(o + 3u * p)] = (*v)[3].y;
        tile[ti(o + 4u * p)] = (*v)[4].y;
        tile[ti(o + 5u * p)] = (*v)[5].y;
        tile[ti(o + 6u * p)] = (*v)[6].y;
        tile[ti(o + 7u * p)] = (*v)[7].y;
        workgroupBarrier();
        (*v)[0].y = tile[ti(lid)];
        (*v)[1].y = tile[ti(lid + WG)];
        (*v)[2].y = tile[ti(lid + 2u * WG)];
        (*v)[3].y = tile[ti(lid + 3u * WG)];
        (*v)[4].y = tile[ti(lid + 4u * WG)];
        (*v)[5].y = tile[ti(lid + 5u * WG)];
        (*v)[6].y = tile[ti(lid + 6u * WG)];
        (*v)[7].y = tile[ti(lid + 7u * WG)];
        workgroupBarrier();
    } else {
        tile_put(ti(o), (*v)[0]);
        tile_put(ti(o + p), (*v)[1]);
        tile_put(ti(o + 2u * p), (*v)[2]);
        tile_put(ti(o + 3u * p), (*v)[3]);
        tile_put(ti(o + 4u * p), (*v)[4]);
        tile_put(ti(o + 5u * p), (*v)[5]);
        tile_put(ti(o + 6u * p), (*v)[6]);
        tile_put(ti(o + 7u * p), (*v)[7]);
        workgroupBarrier();
        (*v)[0] = tile_get(ti(lid));
        (*v)[1] = tile_get(ti(lid + WG));
        (*v)[2] = tile_get(ti(lid + 2u * WG));
        (*v)[3] = tile_get(ti(lid + 3u * WG));
        (*v)[4] = tile_get(ti(lid + 4u * WG));
        (*v)[5] = tile_get(ti(lid + 5u * WG));
        (*v)[6] = tile_get(ti(lid + 6u * WG));
        (*v)[7] = tile_get(ti(lid + 7u * WG));
        workgroupBarrier();
    }
}

fn tile_put(a: u32, z: vec2<f32>) {
    tile[a] = z.x;
    tile[IM_OFF + a] = z.y;
}

fn tile_get(a: u32) -> vec2<f32> {
    return vec2<f32>(tile[a], tile[IM_OFF + a]);
}

// What the split needs from Z: z[b] = Z[t_b], w[b] = Z[(M − t_b) mod M] for t_b = lid + b·WG,
// b = 0..4, and zh = Z[M/2].
struct Pairs {
    z: array<vec2<f32>, 4>,
    w: array<vec2<f32>, 4>,
    zh: vec2<f32>,
}

// Writes v[j] = Z[o + j·step] to the tile, then reads the Pairs.
fn pairs(v: ptr<function, array<vec2<f32>, 8>>, o: u32, step: u32, lid: u32) -> Pairs {
    var r: Pairs;
    let mask = M - 1u;
    let t1 = lid + WG;
    let t2 = lid + 2u * WG;
    let t3 = lid + 3u * WG;
    if HALVES {
        for (var half = 0u; half < 2u; half++) {
            // Round 0 exchanges the real parts, round 1 the imaginary parts.
            if half == 0u {
                tile[ti(o)] = (*v)[0].x;
                tile[ti(o + step)] = (*v)[1].x;
                tile[ti(o + 2u * step)] = (*v)[2].x;
                tile[ti(o + 3u * step)] = (*v)[3].x;
                tile[ti(o + 4u * step)] = (*v)[4].x;
                tile[ti(o + 5u * step)] = (*v)[5].x;
                tile[ti(o + 6u * step)] = (*v)[6].x;
                tile[ti(o + 7u * step)] = (*v)[7].x;
            } else {
                tile[ti(o)] = (*v)[0].y;
                tile[ti(o + step)] = (*v)[1].y;
                tile[ti(o + 2u * step)] = (*v)[2].y;
                tile[ti(o + 3u * step)] = (*v)[3].y;
                tile[ti(o + 4u * step)] = (*v)[4].y;
                tile[ti(o + 5u * step)] = (*v)[5].y;
                tile[ti(o + 6u * step)] = (*v)[6].y;
                tile[ti(o + 7u * step)] = (*v)[7].y;
            }
            workgroupBarrier();
            let z = vec4<f32>(tile[ti(lid)], tile[ti(t1)], tile[ti(t2)], tile[ti(t3)]);
            let w = vec4<f32>(
                tile[ti((M - lid) & mask)],
                tile[ti(M - t1)],
                tile[ti(M - t2)],
                tile[ti(M - t3)],
            );
            let h = tile[ti(M / 2u)];
            if half == 0u {
                r.z[0].x = z.x; r.z[1].x = z.y; r.z[2].x = z.z; r.z[3].x = z.w;
                r.w[0].x = w.x; r.w[1].x = w.y; r.w[2].x = w.z; r.w[3].x = w.w;
                r.zh.x = h;
            } else {
                r.z[0].y = z.x; r.z[1].y = z.y; r.z[2].y = z.z; r.z[3].y = z.w;
                r.w[0].y = w.x; r.w[1].y = w.y; r.w[2].y = w.z; r.w[3].y = w.w;
                r.zh.y = h;
            }
            workgroupBarrier();
        }
    } else {
        tile_put(ti(o), (*v)[0]);
        tile_put(ti(o + step), (*v)[1]);
        tile_put(ti(o + 2u * step), (*v)[2]);
        tile_put(ti(o + 3u * step), (*v)[3]);
        tile_put(ti(o + 4u * step), (*v)[4]);
        tile_put(ti(o + 5u * step), (*v)[5]);
        tile_put(ti(o + 6u * step), (*v)[6]);
        tile_put(ti(o + 7u * step), (*v)[7]);
        workgroupBarrier();
        r.z[0] = tile_get(ti(lid));
        r.z[1] = tile_get(ti(t1));
        r.z[2] = tile_get(ti(t2));
        r.z[3] = tile_get(ti(t3));
        r.w[0] = tile_get(ti((M - lid) & mask));
        r.w[1] = tile_get(ti(M - t1));
        r.w[2] = tile_get(ti(M - t2));
        r.w[3] = tile_get(ti(M - t3));
        r.zh = tile_get(ti(M / 2u));
    }
    return r;
}

fn split(a: vec2<f32>, b: vec2<f32>, w: vec2<f32>) -> vec2<f32> {
    let bc = vec2<f32>(b.x, -b.y);
    let e = a + bc;
    let d = cmul(w, a - bc);
    return 0.5 * (e + vec2<f32>(d.y, -d.x));
}

fn emit(col: u32, k: u32, x: vec2<f32>) {
    let bins = M + 1u;
    let at = col * bins + k;
    if (P.flags & 1u) != 0u {
        spectrum[at] = x;
    }
    var db = DB_FLOOR;
    if !(non_finite(x.x) || non_finite(x.y)) {
        var c = 2.0;
        if k == 0u || k == M {
            c = 1.0;
        }
        // amplitude² from the scaled parts (no overflow below amplitudes of ~1e19);
        // dB = 10·log10(amplitude²).
        let a = (c * P.scale) * x;
        let amp2 = dot(a, a);
        if amp2 > 1e-18 {
            let v = (0.5 * DB_PER_LOG2) * log2(amp2);
            if !non_finite(v) && v > DB_FLOOR {
                db = v;
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
    let n_real = 2u * M;
    var v: array<vec2<f32>, 8>;

    // Window + pack straight into the first stage's layout: v[m] = z[lid + m·WG].
    let base = col * M;
    v[0] = load(base + lid, lid);
    v[1] = load(base + lid + WG, lid + WG);
    v[2] = load(base + lid + 2u * WG, lid + 2u * WG);
    v[3] = load(base + lid + 3u * WG, lid + 3u * WG);
    v[4] = load(base + lid + 4u * WG, lid + 4u * WG);
    v[5] = load(base + lid + 5u * WG, lid + 5u * WG);
    v[6] = load(base + lid + 6u * WG, lid + 6u * WG);
    v[7] = load(base + lid + 7u * WG, lid + 7u * WG);

    // Radix-8 stages; this thread's butterfly is i = lid with inputs a_j = v[j].
    v = dft8(v);
    var o = lid * 8u;
    var p = 1u;
    loop {
        if 64u * p > M {
            break;
        }
        let q = 8u * p;
        let k = lid & (q - 1u);
        // This butterfly's twiddles w^j, w = e^{−2πi·k/(8q)}: w, w², w⁴ side by side in the
        // per-stage table at N + 3(q − 1)/7 (see gpu::fft::twiddle_table), loaded before the
        // exchange's barriers; w³, w⁵, w⁶, w⁷ multiplied out after it (fewer registers live
        // across the barriers, ≤ 2 f32 roundings more).
        let tw = n_real + 3u * ((q - 1u) / 7u) + 3u * k;
        let w1 = twiddles[tw];
        let w2 = twiddles[tw + 1u];
        let w4 = twiddles[tw + 2u];
        exchange(&v, o, p, lid);
        let w3 = cmul(w1, w2);
        let w5 = cmul(w1, w4);
        let w6 = cmul(w2, w4);
        let w7 = cmul(w3, w4);
        p = q;
        v[1] = cmul(v[1], w1);
        v[2] = cmul(v[2], w2);
        v[3] = cmul(v[3], w3);
        v[4] = cmul(v[4], w4);
        v[5] = cmul(v[5], w5);
        v[6] = cmul(v[6], w6);
        v[7] = cmul(v[7], w7);
        v = dft8(v);
        o = (lid - k) * 8u + k;
    }
    p = 8u * p;

    var zs: Pairs;
    if p == M {
        // The last radix-8 stage's outputs are Z: output j is Z[o + j·M/8]. Publish and pair.
        zs = pairs(&v, o, M / 8u, lid);
    } else {
        // Bring the last stage's input into v[m] = x[lid + m·WG], then the radix-4 or radix-2
        // stage with p = M/4 or M/2: butterfly i = lid + b·WG, k = i, twiddle step N/(r·p) = 2,
        // inputs and outputs at v[b + j·8/r] (its twiddles, consecutive in k, are read here).
        exchange(&v, o, p / 8u, lid);
        if M / p == 4u {
            let k0 = lid;
            let k1 = lid + WG;
            let y0 = dft4(
                v[0],
                cmul(v[2], twiddles[2u * k0]),
                cmul(v[4], twiddles[4u * k0]),
                cmul(v[6], twiddles[6u * k0]),
            );
            let y1 = dft4(
                v[1],
                cmul(v[3], twiddles[2u * k1]),
                cmul(v[5], twiddles[4u * k1]),
                cmul(v[7], twiddles[6u * k1]),
            );
            v = array<vec2<f32>, 8>(y0[0], y1[0], y0[1], y1[1], y0[2], y1[2], y0[3], y1[3]);
        } else {
            let a4 = cmul(v[4], twiddles[2u * lid]);
            let a5 = cmul(v[5], twiddles[2u * (lid + WG)]);
            let a6 = cmul(v[6], twiddles[2u * (lid + 2u * WG)]);
            let a7 = cmul(v[7], twiddles[2u * (lid + 3u * WG)]);
            v = array<vec2<f32>, 8>(
                v[0] + a4, v[1] + a5, v[2] + a6, v[3] + a7,
                v[0] - a4, v[1] - a5, v[2] - a6, v[3] - a7,
            );
        }
        // Now v[m] = Z[lid + m·WG]: publish and pair.
        zs = pairs(&v, lid, WG, lid);
    }

    // Split + dB: item t = lid + b·WG (b < 4, so t < M/2) writes bins t and M − t; t = 0 writes
    // 0, M/2 and M.
    let t0 = lid;
    if t0 == 0u {
        let z0 = zs.z[0];
        emit(col, 0u, split(z0, z0, twiddles[0]));
        emit(col, M, split(z0, z0, twiddles[M]));
        emit(col, M / 2u, split(zs.zh, zs.zh, twiddles[M / 2u]));
    } else {
        emit(col, t0, split(zs.z[0], zs.w[0], twiddles[t0]));
        emit(col, M - t0, split(zs.w[0], zs.z[0], twiddles[M - t0]));
    }
    let t1 = lid + WG;
    emit(col, t1, split(zs.z[1], zs.w[1], twiddles[t1]));
    emit(col, M - t1, split(zs.w[1], zs.z[1], twiddles[M - t1]));
    let t2 = lid + 2u * WG;
    emit(col, t2, split(zs.z[2], zs.w[2], twiddles[t2]));
    emit(col, M - t2, split(zs.w[2], zs.z[2], twiddles[M - t2]));
    let t3 = lid + 3u * WG;
    emit(col, t3, split(zs.z[3], zs.w[3], twiddles[t3]));
    emit(col, M - t3, split(zs.w[3], zs.z[3], twiddles[M - t3]));
}
