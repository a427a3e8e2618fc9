// Spectrogram GPU FFT, fused single pass: one workgroup per column (main16: per P.cols
// consecutive columns) runs window + pack, every Stockham stage and the real-spectrum split + dBFS. The column lives in registers; stages
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
//   z[n] = w[2n]·x[2n] + i·w[2n+1]·x[2n+1]          (a non-finite sample: z[n] non-finite)
//   X[k] = ½(Z[k] + conj Z[M−k]) − ½i·T[k]·(Z[k] − conj Z[M−k]),  T[m] = e^{−2πi·m/N}
//   amplitude_k = c_k·|X_k|·scale (scale = 1/Σw), dB = 20·log10, floored at −160, non-finite → −160.
// Tile (f32, planar): re at a, im at IM_OFF + a, or, with HALVES, re and im exchanged one after the
// other through M words (for M = 8192 in 32 KiB). With PAD, word a is stored at a + a/32, which
// spreads the stride-8 scatter of the first stages over the 32 banks. Tile addresses: every put
// writes o + j·p and every get reads lid + m·WG (the fused tails' reads, get_tail, also mirror
// indices, through at() or ti() of the whole index) where (o mod 32) + (j·p mod 32) < 32 and
// (lid mod 32) + (m·WG mod 32) < 32 (o = r(i − k) + k with k < p, p a power of the radix r or
// WG; WG a power of two above lid), so ti(o + j·p) = ti(o) + ti(j·p): one base register and a
// constant offset per value, rather than an address register per value (fewer registers a
// thread, more workgroups a multiprocessor).
//
// Preludes prepended by the registry (src/shaders.rs): common/math.wgsl, common/fft.wgsl.

override M: u32 = 4096u;        // complex values per column, N/2
override WG: u32 = 512u;        // threads per workgroup, M/8
override HALVES: bool = false;  // exchange re then im through one M-word tile
override SPECTRUM: bool = false; // also write the complex spectrum (FftOptions::spectrum)
override PAD: bool = true;      // one padding word after every 32
override IM_OFF: u32 = 4224u;   // tile offset of the imaginary parts (unused with HALVES)
override TILE_F32: u32 = 8448u; // tile length in f32 words

const SQRT_HALF: f32 = 0.7071067811865476;

@group(0) @binding(0) var<uniform> P: FftParams;
@group(0) @binding(1) var<storage, read> samples: array<vec2<f32>>;
@group(0) @binding(2) var<storage, read> window: array<vec2<f32>>;
@group(0) @binding(3) var<storage, read> twiddles: array<vec2<f32>>;
@group(0) @binding(4) var<storage, read_write> db_out: array<f32>;
@group(0) @binding(5) var<storage, read_write> spectrum: array<vec2<f32>>;

var<workgroup> tile: array<f32, TILE_F32>;

// Tile word of logical index a.
fn ti(a: u32) -> u32 {
    if PAD {
        return a + (a >> 5u);
    }
    return a;
}

// Windowed sample n of the column starting at sample pair `base`. A non-finite sample gives a
// non-finite product (inf·0 is NaN), which the butterflies carry into every bin of its column
// and emit floors; no check here (checking each value with a select was 4 % slower at N = 8192
// on the H200, BENCHMARKS.md).
fn load(base: u32, n: u32) -> vec2<f32> {
    return samples[base + n] * window[n];
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
// v[m] = tile[lid + m·WG] (both parts, or with HALVES the real then the imaginary parts).
fn exchange(v: ptr<function, array<vec2<f32>, 8>>, o: u32, p: u32, lid: u32) {
    put8(v, o, p, 0u);
    workgroupBarrier();
    get8(v, lid, 0u);
    workgroupBarrier();
    if HALVES {
        put8(v, o, p, 1u);
        workgroupBarrier();
        get8(v, lid, 1u);
        workgroupBarrier();
    }
}

// Tile word a ← z: both parts, or with HALVES only part `part` (0 = real, 1 = imaginary).
// HALVES is an override and `part` a constant at every call, so the branches fold away.
fn place(a: u32, z: vec2<f32>, part: u32) {
    if !HALVES {
        tile_put(a, z);
    } else if part == 0u {
        tile[a] = z.x;
    } else {
        tile[a] = z.y;
    }
}

// `old` with tile word a read into it: both parts, or with HALVES only part `part` (as in place).
fn take(a: u32, old: vec2<f32>, part: u32) -> vec2<f32> {
    if !HALVES {
        return tile_get(a);
    } else if part == 0u {
        return vec2<f32>(tile[a], old.y);
    }
    return vec2<f32>(old.x, tile[a]);
}

// Writes value j of this thread to logical tile index o + j·p (parts as in place). Constant
// register indices throughout (the values stay in registers), hence the unrolled statements.
fn put8(v: ptr<function, array<vec2<f32>, 8>>, o: u32, p: u32, part: u32) {
    let b = ti(o);
    place(b, (*v)[0], part);
    place(b + ti(p), (*v)[1], part);
    place(b + ti(2u * p), (*v)[2], part);
    place(b + ti(3u * p), (*v)[3], part);
    place(b + ti(4u * p), (*v)[4], part);
    place(b + ti(5u * p), (*v)[5], part);
    place(b + ti(6u * p), (*v)[6], part);
    place(b + ti(7u * p), (*v)[7], part);
}

// Reads v[m] = tile[lid + m·WG] (parts as in place).
fn get8(v: ptr<function, array<vec2<f32>, 8>>, lid: u32, part: u32) {
    let b = ti(lid);
    (*v)[0] = take(b, (*v)[0], part);
    (*v)[1] = take(b + ti(WG), (*v)[1], part);
    (*v)[2] = take(b + ti(2u * WG), (*v)[2], part);
    (*v)[3] = take(b + ti(3u * WG), (*v)[3], part);
    (*v)[4] = take(b + ti(4u * WG), (*v)[4], part);
    (*v)[5] = take(b + ti(5u * WG), (*v)[5], part);
    (*v)[6] = take(b + ti(6u * WG), (*v)[6], part);
    (*v)[7] = take(b + ti(7u * WG), (*v)[7], part);
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

// Writes v[j] = Z[o + j·step] to the tile, then reads the Pairs (b < 4).
fn pairs(v: ptr<function, array<vec2<f32>, 8>>, o: u32, step: u32, lid: u32) -> Pairs {
    var r: Pairs;
    put8(v, o, step, 0u);
    workgroupBarrier();
    pair(&r, lid, 0u);
    if HALVES {
        workgroupBarrier();
        put8(v, o, step, 1u);
        workgroupBarrier();
        pair(&r, lid, 1u);
    }
    return r;
}

// Reads z[b] = Z[t], w[b] = Z[(M − t) mod M] for t = lid + b·WG, b < 4, and zh = Z[M/2] (parts as
// in put), after Z was published to the tile.
fn pair(r: ptr<function, Pairs>, lid: u32, part: u32) {
    let mask = M - 1u;
    let t1 = lid + WG;
    let t2 = lid + 2u * WG;
    let t3 = lid + 3u * WG;
    let b = ti(lid);
    (*r).z[0] = take(b, (*r).z[0], part);
    (*r).z[1] = take(b + ti(WG), (*r).z[1], part);
    (*r).z[2] = take(b + ti(2u * WG), (*r).z[2], part);
    (*r).z[3] = take(b + ti(3u * WG), (*r).z[3], part);
    (*r).w[0] = take(ti((M - lid) & mask), (*r).w[0], part);
    (*r).w[1] = take(ti(M - t1), (*r).w[1], part);
    (*r).w[2] = take(ti(M - t2), (*r).w[2], part);
    (*r).w[3] = take(ti(M - t3), (*r).w[3], part);
    (*r).zh = take(ti(M / 2u), (*r).zh, part);
}

// X_k = ½(Z[k] + conj Z[M−k]) − ½i·T[k]·(Z[k] − conj Z[M−k]) from a = Z[k], b = Z[M−k],
// w = T[k].
fn split(a: vec2<f32>, b: vec2<f32>, w: vec2<f32>) -> vec2<f32> {
    let bc = vec2<f32>(b.x, -b.y);
    let e = a + bc;
    let d = cmul(w, a - bc);
    return 0.5 * (e + vec2<f32>(d.y, -d.x));
}

// Bin k of column `col` from X_k; c = c_k, 1 for bins 0 and M, else 2 (the one-sided amplitude).
fn emit(col: u32, k: u32, x: vec2<f32>, c: f32) {
    let bins = M + 1u;
    let at = col * bins + k;
    if SPECTRUM {
        spectrum[at] = x;
    }
    // amplitude² from the scaled parts; dB = 10·log10(amplitude²). One check covers every
    // non-finite case: a NaN or infinite part (a non-finite sample in the column) or an overflow
    // (amplitudes over ~1e19) makes amp2 non-finite, and a finite amp2 over 1e-18 has a finite
    // logarithm (three checks before: both parts and the level).
    let a = (c * P.scale) * x;
    let amp2 = dot(a, a);
    var db = DB_FLOOR;
    if !non_finite(amp2) && amp2 > 1e-18 {
        db = max((0.5 * DB_PER_LOG2) * log2(amp2), DB_FLOOR);
    }
    db_out[at] = db;
}

// Bins t and M − t from z = Z[t], w = Z[M − t] (0 < t < M/2).
fn emit_pair(col: u32, t: u32, z: vec2<f32>, w: vec2<f32>) {
    emit_split(col, t, z, w, twiddles[t]);
}

// emit_pair with c = T[t] already loaded. With a = z + conj w and b = z − conj w,
// X_t = ½(a − i·c·b) and X_{M−t} = ½·conj(a + i·c·b) (split with T[M − t] = −conj c): one
// complex product for both bins (1–4 % faster than two splits on the H200).
fn emit_split(col: u32, t: u32, z: vec2<f32>, w: vec2<f32>, c: vec2<f32>) {
    let wc = vec2<f32>(w.x, -w.y);
    let a = z + wc;
    let d = cmul(c, z - wc);
    let id = vec2<f32>(-d.y, d.x);
    let y = 0.5 * (a + id);
    emit(col, t, 0.5 * (a - id), 2.0);
    emit(col, M - t, vec2<f32>(y.x, -y.y), 2.0);
}

// Bins 0, M and M/2 from z0 = Z[0] and zh = Z[M/2].
fn emit_ends(col: u32, z0: vec2<f32>, zh: vec2<f32>) {
    emit(col, 0u, split(z0, z0, twiddles[0]), 1.0);
    emit(col, M, split(z0, z0, twiddles[M]), 1.0);
    emit(col, M / 2u, split(zh, zh, twiddles[M / 2u]), 2.0);
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
    v[0] = load(base, lid);
    v[1] = load(base, lid + WG);
    v[2] = load(base, lid + 2u * WG);
    v[3] = load(base, lid + 3u * WG);
    v[4] = load(base, lid + 4u * WG);
    v[5] = load(base, lid + 5u * WG);
    v[6] = load(base, lid + 6u * WG);
    v[7] = load(base, lid + 7u * WG);

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
        // per-stage table at N + 3(q − 1)/7 (see gpu::fft::twiddle_table), loaded after the
        // exchange (none live across its barriers: 44 registers a thread on the H200 where
        // loading them before took 45–50, main16 69 where it took 83 at M = 4096); w³, w⁵, w⁶,
        // w⁷ multiplied out (≤ 2 f32 roundings more).
        let tw = n_real + 3u * ((q - 1u) / 7u) + 3u * k;
        exchange(&v, o, p, lid);
        let w1 = twiddles[tw];
        let w2 = twiddles[tw + 1u];
        let w4 = twiddles[tw + 2u];
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
    if lid == 0u {
        emit_ends(col, zs.z[0], zs.zh);
    } else {
        emit_pair(col, lid, zs.z[0], zs.w[0]);
    }
    emit_pair(col, lid + WG, zs.z[1], zs.w[1]);
    emit_pair(col, lid + 2u * WG, zs.z[2], zs.w[2]);
    emit_pair(col, lid + 3u * WG, zs.z[3], zs.w[3]);
}

// ---- Entry point `main16`: 16 complex values per thread, radix-16 stages ----------------------
//
// The same algorithm with WG = M/16 threads holding v[m] = x[lid + m·WG], m = 0..16: radix-16
// stages while 16p ≤ M (one exchange each after the first), then one radix-2, 4 or 8 stage when M
// is not a power of 16 (butterflies i = lid + b·WG, inputs and outputs at v[b + j·16/r]), then
// the split. log16(M) + 1 exchanges instead of log8(M) + 1: for M = 8192, 4 instead of 5.
// Twiddles of the radix-16 stages: w, w²,
// w⁴, w⁸ side by side in a per-stage table at TW16 + 4(q − 1)/15 (see gpu::fft::twiddle_table).
// The last stage's radix is the override LAST_R, so the compiler drops the other branches (with
// the radix computed at run time the kernel held more registers and ran 7–12 % slower on the
// H200). FusedValues::Auto picks this entry point for M = 1024 to 4096 (gpu::fft::FUSED16_MIN_M
// up to FUSED32_AUTO_M, where main32 takes over); FusedValues::Sixteen at any M.
// The split: with LAST_R = 4 or 8 the last stage and the split are one step (get_tail,
// tail_split: each thread reads butterflies in mirror pairs and splits them itself); with
// LAST_R = 1 or 2 every thread holds v[m] = Z[lid + m·WG] after the last stage, and the split
// pairs thread lid with thread WG − lid only (mirror_split: a mirror exchange of half the values
// through one barrier; the full exchange with the halves tile took three). A workgroup takes
// P.cols consecutive columns (gpu::fft::FusedColumns; a column after the first begins with a
// barrier), loading the next column's 16 sample pairs into registers before the split so that
// their latency hides behind the split and the dB epilogue (on the H200, N = 16384: 8 columns
// 2–3 % faster than one, 14 % before the loads below were issued together).
// The 16 sample and 16 window loads of a column are issued before any is used (fetch16, fetch16w,
// then the products: with a branch per value the window loads waited one by one; 6–9 % on the
// H200), and the last radix-r stage takes its twiddles from T[k] (tail4, tail8, sq) rather than
// T[2jk]. A radix-16 stage's twiddles are loaded after its exchange (loaded before the
// exchange's last read they were in flight during it but live across its barriers: on the H200
// 1–4 % slower at N = 2048, 4096 and 16384 once the split was fused, 0.7 % faster at 8192).

override TW16: u32 = 0u;        // offset of the radix-16 stage tables in `twiddles`
override LAST_R: u32 = 1u;      // the radix of the last stage (1: none): M / 16^⌊log16 M⌋ in
                                // main16, M / 32^⌊log32 M⌋ in main32

// 16-point DFT, forward: X[k] = E[k] + W^k·O[k], X[k+8] = E[k] − W^k·O[k], W = e^{−2πi/16},
// E and O the 8-point DFTs of the even and odd inputs.
fn dft16(a: array<vec2<f32>, 16>) -> array<vec2<f32>, 16> {
    let e = dft8(array<vec2<f32>, 8>(a[0], a[2], a[4], a[6], a[8], a[10], a[12], a[14]));
    let o = dft8(array<vec2<f32>, 8>(a[1], a[3], a[5], a[7], a[9], a[11], a[13], a[15]));
    const C1: f32 = 0.9238795325112867;  // cos(π/8)
    const S1: f32 = 0.3826834323650898;  // sin(π/8)
    let o1 = cmul(o[1], vec2<f32>(C1, -S1));
    let o2 = SQRT_HALF * vec2<f32>(o[2].x + o[2].y, o[2].y - o[2].x);
    let o3 = cmul(o[3], vec2<f32>(S1, -C1));
    let o4 = mul_neg_i(o[4]);
    let o5 = cmul(o[5], vec2<f32>(-S1, -C1));
    let o6 = SQRT_HALF * vec2<f32>(o[6].y - o[6].x, -(o[6].x + o[6].y));
    let o7 = cmul(o[7], vec2<f32>(-C1, -S1));
    return array<vec2<f32>, 16>(
        e[0] + o[0], e[1] + o1, e[2] + o2, e[3] + o3,
        e[4] + o4, e[5] + o5, e[6] + o6, e[7] + o7,
        e[0] - o[0], e[1] - o1, e[2] - o2, e[3] - o3,
        e[4] - o4, e[5] - o5, e[6] - o6, e[7] - o7,
    );
}

// Writes value j of this thread to logical tile index o + j·p (parts as in place).
fn put16(v: ptr<function, array<vec2<f32>, 16>>, o: u32, p: u32, part: u32) {
    let b = ti(o);
    place(b + ti(0u * p), (*v)[0], part);
    place(b + ti(1u * p), (*v)[1], part);
    place(b + ti(2u * p), (*v)[2], part);
    place(b + ti(3u * p), (*v)[3], part);
    place(b + ti(4u * p), (*v)[4], part);
    place(b + ti(5u * p), (*v)[5], part);
    place(b + ti(6u * p), (*v)[6], part);
    place(b + ti(7u * p), (*v)[7], part);
    place(b + ti(8u * p), (*v)[8], part);
    place(b + ti(9u * p), (*v)[9], part);
    place(b + ti(10u * p), (*v)[10], part);
    place(b + ti(11u * p), (*v)[11], part);
    place(b + ti(12u * p), (*v)[12], part);
    place(b + ti(13u * p), (*v)[13], part);
    place(b + ti(14u * p), (*v)[14], part);
    place(b + ti(15u * p), (*v)[15], part);
}

// Reads v[m] = tile[lid + m·WG] (parts as in place).
fn get16(v: ptr<function, array<vec2<f32>, 16>>, lid: u32, part: u32) {
    let b = ti(lid);
    (*v)[0] = take(b + ti(0u * WG), (*v)[0], part);
    (*v)[1] = take(b + ti(1u * WG), (*v)[1], part);
    (*v)[2] = take(b + ti(2u * WG), (*v)[2], part);
    (*v)[3] = take(b + ti(3u * WG), (*v)[3], part);
    (*v)[4] = take(b + ti(4u * WG), (*v)[4], part);
    (*v)[5] = take(b + ti(5u * WG), (*v)[5], part);
    (*v)[6] = take(b + ti(6u * WG), (*v)[6], part);
    (*v)[7] = take(b + ti(7u * WG), (*v)[7], part);
    (*v)[8] = take(b + ti(8u * WG), (*v)[8], part);
    (*v)[9] = take(b + ti(9u * WG), (*v)[9], part);
    (*v)[10] = take(b + ti(10u * WG), (*v)[10], part);
    (*v)[11] = take(b + ti(11u * WG), (*v)[11], part);
    (*v)[12] = take(b + ti(12u * WG), (*v)[12], part);
    (*v)[13] = take(b + ti(13u * WG), (*v)[13], part);
    (*v)[14] = take(b + ti(14u * WG), (*v)[14], part);
    (*v)[15] = take(b + ti(15u * WG), (*v)[15], part);
}

// exchange with 16 values: put16, barrier, get16, barrier (with HALVES the real parts, then the
// imaginary parts).
fn exchange16(v: ptr<function, array<vec2<f32>, 16>>, o: u32, p: u32, lid: u32) {
    put16(v, o, p, 0u);
    workgroupBarrier();
    get16(v, lid, 0u);
    workgroupBarrier();
    if HALVES {
        put16(v, o, p, 1u);
        workgroupBarrier();
        get16(v, lid, 1u);
        workgroupBarrier();
    }
}

// Tile word of logical index x + c (x ≤ WG, c a multiple of WG): one base register and a
// constant when WG is a multiple of 32 (see ti).
fn at(x: u32, c: u32) -> u32 {
    if WG % 32u == 0u {
        return ti(x) + ti(c);
    }
    return ti(x + c);
}

// Slot s of thread x in main16's mirror exchange: re at tile word at(x, s·WG), im M/2 logical
// words further (M/2 is a multiple of 32, so that is ti(M/2) words further). Slots 0..8 of
// every thread fill M words, which every tile holds.
fn mirror_put(x: u32, s: u32, z: vec2<f32>) {
    let a = at(x, s * WG);
    tile[a] = z.x;
    tile[a + ti(M / 2u)] = z.y;
}

fn mirror_get(x: u32, s: u32) -> vec2<f32> {
    let a = at(x, s * WG);
    return vec2<f32>(tile[a], tile[a + ti(M / 2u)]);
}

// Raw samples raw[m] = samples[base + lid + m·WG], m < 16: all 16 loads issued before any is used.
fn fetch16(raw: ptr<function, array<vec2<f32>, 16>>, base: u32, lid: u32) {
    let b = base + lid;
    (*raw)[0] = samples[b + 0u * WG];
    (*raw)[1] = samples[b + 1u * WG];
    (*raw)[2] = samples[b + 2u * WG];
    (*raw)[3] = samples[b + 3u * WG];
    (*raw)[4] = samples[b + 4u * WG];
    (*raw)[5] = samples[b + 5u * WG];
    (*raw)[6] = samples[b + 6u * WG];
    (*raw)[7] = samples[b + 7u * WG];
    (*raw)[8] = samples[b + 8u * WG];
    (*raw)[9] = samples[b + 9u * WG];
    (*raw)[10] = samples[b + 10u * WG];
    (*raw)[11] = samples[b + 11u * WG];
    (*raw)[12] = samples[b + 12u * WG];
    (*raw)[13] = samples[b + 13u * WG];
    (*raw)[14] = samples[b + 14u * WG];
    (*raw)[15] = samples[b + 15u * WG];
}

// Window values win[m] = window[lid + m·WG], m < 16: all 16 loads issued before any is used.
fn fetch16w(win: ptr<function, array<vec2<f32>, 16>>, lid: u32) {
    (*win)[0] = window[lid + 0u * WG];
    (*win)[1] = window[lid + 1u * WG];
    (*win)[2] = window[lid + 2u * WG];
    (*win)[3] = window[lid + 3u * WG];
    (*win)[4] = window[lid + 4u * WG];
    (*win)[5] = window[lid + 5u * WG];
    (*win)[6] = window[lid + 6u * WG];
    (*win)[7] = window[lid + 7u * WG];
    (*win)[8] = window[lid + 8u * WG];
    (*win)[9] = window[lid + 9u * WG];
    (*win)[10] = window[lid + 10u * WG];
    (*win)[11] = window[lid + 11u * WG];
    (*win)[12] = window[lid + 12u * WG];
    (*win)[13] = window[lid + 13u * WG];
    (*win)[14] = window[lid + 14u * WG];
    (*win)[15] = window[lid + 15u * WG];
}

// The last stage's twiddles T[2jk] = e^{−2πi·2jk/N} (r = 2, 4, 8: j < r) from c = T[k], one load
// the split uses again for its item k: w2 = T[k]², then products (at most four f32
// products deep: T[14k] within about 7 ulp where the f64 table's T[2jk] is within ½; the
// spectrum stays within 4·10⁻⁷ of the f64 reference). One twiddle line per k in L1 instead of up
// to seven spread over T: on the H200 the radix-2 stage at N = 16384 ran 3 % faster.
fn sq(c: vec2<f32>) -> vec2<f32> {
    return cmul(c, c);
}

fn tail4(c: vec2<f32>) -> array<vec2<f32>, 3> {
    let w2 = sq(c);
    let w4 = sq(w2);
    return array<vec2<f32>, 3>(w2, w4, cmul(w4, w2));
}

fn tail8(c: vec2<f32>) -> array<vec2<f32>, 7> {
    let w2 = sq(c);
    let w4 = sq(w2);
    let w6 = cmul(w4, w2);
    let w8 = sq(w4);
    return array<vec2<f32>, 7>(w2, w4, w6, w8, cmul(w8, w2), cmul(w8, w4), cmul(w8, w6));
}

// ---- main16's last radix-r stage fused with the split (LAST_R = r ∈ {4, 8}) ------------------
//
// The stage has h = M/r butterflies; butterfly k turns x[k + l·h] (l < r) into Z[k + j·h]
// (j < r), and M − (k + j·h) = k' + (r − 1 − j)·h with k' = h − k: the split's partners of
// butterfly k's outputs are exactly butterfly k''s. So the exchange into the stage reads each
// thread's butterflies in mirror pairs (get_tail), and the thread splits them itself: no mirror
// exchange, no barrier after the last read. Slot b < 8/r of thread lid holds butterfly
// k = lid + b·WG at v[2r·b + l] and its mirror k' = h − k at v[2r·b + r + l]; slot 0 of thread 0
// holds butterflies 0 and h/2, each its own mirror (M − j·h = (r − j)·h, M − (h/2 + j·h) =
// h/2 + (r − 1 − j)·h). The split's twiddles come from the stage's: T[k + j·h] = T[k]·e^{−iπj/r}.
// On the H200 at 4096-column batches 3–9 % faster than the radix-r stage in place and the mirror
// split (N = 2048, 4096); with r = 2 (N = 1024, 16384) it was as fast or slower, so main16 keeps
// the mirror split there (BENCHMARKS.md, session 7).

// Slot 0's mirror butterfly: h − lid, or h/2 in thread 0 (h = M/LAST_R, the tail's butterflies;
// also main32's, whose fused tail has LAST_R = 8).
fn tail_mirror0(lid: u32) -> u32 {
    let h = M / LAST_R;
    return select(h - lid, h / 2u, lid == 0u);
}

// Reads the tail's inputs in mirror pairs (parts as in take): x[k + l·h] for slot b's butterfly
// k = lid + b·WG (one base register and constants, as get16) and for its mirror
// k' = (WG − lid) + (h − (b + 1)·WG) (at); slot 0's mirror is k0 = h − lid, or h/2 in thread 0.
fn get_tail(v: ptr<function, array<vec2<f32>, 16>>, lid: u32, part: u32) {
    let h = M / LAST_R;
    let a = ti(lid);
    let k0 = tail_mirror0(lid);
    if LAST_R == 4u {
        let q = WG - lid;
        (*v)[0] = take(a, (*v)[0], part);
        (*v)[1] = take(a + ti(h), (*v)[1], part);
        (*v)[2] = take(a + ti(2u * h), (*v)[2], part);
        (*v)[3] = take(a + ti(3u * h), (*v)[3], part);
        (*v)[4] = take(ti(k0), (*v)[4], part);
        (*v)[5] = take(ti(k0 + h), (*v)[5], part);
        (*v)[6] = take(ti(k0 + 2u * h), (*v)[6], part);
        (*v)[7] = take(ti(k0 + 3u * h), (*v)[7], part);
        (*v)[8] = take(a + ti(WG), (*v)[8], part);
        (*v)[9] = take(a + ti(WG + h), (*v)[9], part);
        (*v)[10] = take(a + ti(WG + 2u * h), (*v)[10], part);
        (*v)[11] = take(a + ti(WG + 3u * h), (*v)[11], part);
        (*v)[12] = take(at(q, h - 2u * WG), (*v)[12], part);
        (*v)[13] = take(at(q, 2u * h - 2u * WG), (*v)[13], part);
        (*v)[14] = take(at(q, 3u * h - 2u * WG), (*v)[14], part);
        (*v)[15] = take(at(q, 4u * h - 2u * WG), (*v)[15], part);
    } else {
        (*v)[0] = take(a, (*v)[0], part);
        (*v)[1] = take(a + ti(h), (*v)[1], part);
        (*v)[2] = take(a + ti(2u * h), (*v)[2], part);
        (*v)[3] = take(a + ti(3u * h), (*v)[3], part);
        (*v)[4] = take(a + ti(4u * h), (*v)[4], part);
        (*v)[5] = take(a + ti(5u * h), (*v)[5], part);
        (*v)[6] = take(a + ti(6u * h), (*v)[6], part);
        (*v)[7] = take(a + ti(7u * h), (*v)[7], part);
        (*v)[8] = take(ti(k0), (*v)[8], part);
        (*v)[9] = take(ti(k0 + h), (*v)[9], part);
        (*v)[10] = take(ti(k0 + 2u * h), (*v)[10], part);
        (*v)[11] = take(ti(k0 + 3u * h), (*v)[11], part);
        (*v)[12] = take(ti(k0 + 4u * h), (*v)[12], part);
        (*v)[13] = take(ti(k0 + 5u * h), (*v)[13], part);
        (*v)[14] = take(ti(k0 + 6u * h), (*v)[14], part);
        (*v)[15] = take(ti(k0 + 7u * h), (*v)[15], part);
    }
}

// The exchange into the tail: put, barrier, get_tail (with HALVES the real parts, then barrier,
// the imaginary parts' put, barrier, get_tail). No barrier after the last read: nothing writes
// the tile again in this column (the next column's loop starts with one).
fn exchange16_tail(v: ptr<function, array<vec2<f32>, 16>>, o: u32, p: u32, lid: u32) {
    put16(v, o, p, 0u);
    workgroupBarrier();
    get_tail(v, lid, 0u);
    if HALVES {
        workgroupBarrier();
        put16(v, o, p, 1u);
        workgroupBarrier();
        get_tail(v, lid, 1u);
    }
}

// Bins of butterfly pair (k, kp) of the tail from z[j] = Z[k + j·h] and w[j] = Z[kp + j·h],
// c = T[k], d = T[kp], e_j = e^{−iπj/r}: for j < r/2, bin k + j·h with its partner
// w[r − 1 − j] (twiddle c·e_j) and bin kp + j·h with z[r − 1 − j] (d·e_j). `ends` (slot 0 of
// thread 0: k = 0, kp = h/2, each its own mirror): bins 0, M, M/2 from z[0], z[r/2], then j·h
// with z[r − j] and kp + j·h with w[r − 1 − j].
fn tail_emit4(col: u32, k: u32, kp: u32, z: array<vec2<f32>, 4>, w: array<vec2<f32>, 4>, c: vec2<f32>, d: vec2<f32>, ends: bool) {
    let h = M / 4u;
    let e1 = vec2<f32>(SQRT_HALF, -SQRT_HALF);
    if ends {
        emit_ends(col, z[0], z[2]);
    } else {
        emit_split(col, k, z[0], w[3], c);
    }
    emit_split(col, k + h, z[1], select(w[2], z[3], ends), cmul(c, e1));
    emit_split(col, kp, w[0], select(z[3], w[3], ends), d);
    emit_split(col, kp + h, w[1], select(z[2], w[2], ends), cmul(d, e1));
}

fn tail_emit8(col: u32, k: u32, kp: u32, z: array<vec2<f32>, 8>, w: array<vec2<f32>, 8>, c: vec2<f32>, d: vec2<f32>, ends: bool) {
    let h = M / 8u;
    const C1: f32 = 0.9238795325112867;  // cos(π/8)
    const S1: f32 = 0.3826834323650898;  // sin(π/8)
    let e1 = vec2<f32>(C1, -S1);
    let e2 = vec2<f32>(SQRT_HALF, -SQRT_HALF);
    let e3 = vec2<f32>(S1, -C1);
    if ends {
        emit_ends(col, z[0], z[4]);
    } else {
        emit_split(col, k, z[0], w[7], c);
    }
    emit_split(col, k + h, z[1], select(w[6], z[7], ends), cmul(c, e1));
    emit_split(col, k + 2u * h, z[2], select(w[5], z[6], ends), cmul(c, e2));
    emit_split(col, k + 3u * h, z[3], select(w[4], z[5], ends), cmul(c, e3));
    emit_split(col, kp, w[0], select(z[7], w[7], ends), d);
    emit_split(col, kp + h, w[1], select(z[6], w[6], ends), cmul(d, e1));
    emit_split(col, kp + 2u * h, w[2], select(z[5], w[5], ends), cmul(d, e2));
    emit_split(col, kp + 3u * h, w[3], select(z[4], w[4], ends), cmul(d, e3));
}

// The radix-4 butterfly x[k + l·h] → Z[k + j·h] (l, j < 4) with t = T[k] (twiddles T[2lk]).
fn bfly4(x0: vec2<f32>, x1: vec2<f32>, x2: vec2<f32>, x3: vec2<f32>, t: vec2<f32>) -> array<vec2<f32>, 4> {
    let w = tail4(t);
    return dft4(x0, cmul(x1, w[0]), cmul(x2, w[1]), cmul(x3, w[2]));
}

// The radix-8 butterfly x[k + l·h] → Z[k + j·h] (l, j < 8) with t = T[k] (twiddles T[2lk]).
fn bfly8(x: array<vec2<f32>, 8>, t: vec2<f32>) -> array<vec2<f32>, 8> {
    let w = tail8(t);
    return dft8(array<vec2<f32>, 8>(
        x[0], cmul(x[1], w[0]), cmul(x[2], w[1]), cmul(x[3], w[2]),
        cmul(x[4], w[3]), cmul(x[5], w[4]), cmul(x[6], w[5]), cmul(x[7], w[6]),
    ));
}

// The tail after get_tail: every slot's two radix-r butterflies, then their bins.
fn tail_split(v: ptr<function, array<vec2<f32>, 16>>, col: u32, lid: u32) {
    let h = M / LAST_R;
    let k0 = tail_mirror0(lid);
    let c = twiddles[lid];
    let d = twiddles[k0];
    if LAST_R == 4u {
        let k1 = lid + WG;
        let c1 = twiddles[k1];
        let d1 = twiddles[h - k1];
        tail_emit4(
            col, lid, k0,
            bfly4((*v)[0], (*v)[1], (*v)[2], (*v)[3], c),
            bfly4((*v)[4], (*v)[5], (*v)[6], (*v)[7], d),
            c, d, lid == 0u,
        );
        tail_emit4(
            col, k1, h - k1,
            bfly4((*v)[8], (*v)[9], (*v)[10], (*v)[11], c1),
            bfly4((*v)[12], (*v)[13], (*v)[14], (*v)[15], d1),
            c1, d1, false,
        );
    } else {
        let z = bfly8(array<vec2<f32>, 8>((*v)[0], (*v)[1], (*v)[2], (*v)[3], (*v)[4], (*v)[5], (*v)[6], (*v)[7]), c);
        let w = bfly8(array<vec2<f32>, 8>((*v)[8], (*v)[9], (*v)[10], (*v)[11], (*v)[12], (*v)[13], (*v)[14], (*v)[15]), d);
        tail_emit8(col, lid, k0, z, w, c, d, lid == 0u);
    }
}

// The split's twiddles T[t] of this thread's items t = lid + j·WG, j < 8.
fn split_twiddles(lid: u32) -> array<vec2<f32>, 8> {
    return array<vec2<f32>, 8>(
        twiddles[lid + 0u * WG], twiddles[lid + 1u * WG], twiddles[lid + 2u * WG], twiddles[lid + 3u * WG],
        twiddles[lid + 4u * WG], twiddles[lid + 5u * WG], twiddles[lid + 6u * WG], twiddles[lid + 7u * WG],
    );
}

// main16's radix-2 last stage (LAST_R = 2; p = M/2) after the exchange that brought its input
// into v[m] = x[lid + m·WG]: butterfly i = lid + b·WG (b < 8), k = i, inputs
// a_j = x[i + j·p] = v[b + 8j]·T[2jk] with T[2k] = c[b]² (c = split_twiddles, the split's own),
// outputs back to the same registers, so that v[m] = Z[lid + m·WG] as mirror_split needs.
fn radix2_tail(v: ptr<function, array<vec2<f32>, 16>>, c: array<vec2<f32>, 8>) {
    let a0 = cmul((*v)[8], sq(c[0]));
    let a1 = cmul((*v)[9], sq(c[1]));
    let a2 = cmul((*v)[10], sq(c[2]));
    let a3 = cmul((*v)[11], sq(c[3]));
    let a4 = cmul((*v)[12], sq(c[4]));
    let a5 = cmul((*v)[13], sq(c[5]));
    let a6 = cmul((*v)[14], sq(c[6]));
    let a7 = cmul((*v)[15], sq(c[7]));
    let b0 = (*v)[0];
    let b1 = (*v)[1];
    let b2 = (*v)[2];
    let b3 = (*v)[3];
    let b4 = (*v)[4];
    let b5 = (*v)[5];
    let b6 = (*v)[6];
    let b7 = (*v)[7];
    (*v)[0] = b0 + a0;
    (*v)[8] = b0 - a0;
    (*v)[1] = b1 + a1;
    (*v)[9] = b1 - a1;
    (*v)[2] = b2 + a2;
    (*v)[10] = b2 - a2;
    (*v)[3] = b3 + a3;
    (*v)[11] = b3 - a3;
    (*v)[4] = b4 + a4;
    (*v)[12] = b4 - a4;
    (*v)[5] = b5 + a5;
    (*v)[13] = b5 - a5;
    (*v)[6] = b6 + a6;
    (*v)[14] = b6 - a6;
    (*v)[7] = b7 + a7;
    (*v)[15] = b7 - a7;
}

// main16's split when v[m] = Z[lid + m·WG] (LAST_R = 1: the last radix-16 stage's butterfly is
// i = lid with k = i; LAST_R = 2: radix2_tail). Item t = lid + j·WG (j < 8, so t < M/2) writes
// bins t and M − t, and M − t = (WG − lid) + (15 − j)·WG: value 15 − j of thread WG − lid,
// which it publishes at slot 7 − j, logical index (WG − lid) + (7 − j)·WG; for thread 0 the same
// index, (8 − j)·WG, is its own slot 8 − j = value 16 − j = Z[M − t] (j ≥ 1), and Z[M/2] is its
// v[8]. So the split's exchange is a mirror: each thread publishes v[8..16] (re and im side by
// side, M words) and reads its partner's: half the traffic of a full exchange, and one barrier.
// c = split_twiddles.
fn mirror_split(v: ptr<function, array<vec2<f32>, 16>>, col: u32, lid: u32, c: array<vec2<f32>, 8>) {
    mirror_put(lid, 0u, (*v)[8]);
    mirror_put(lid, 1u, (*v)[9]);
    mirror_put(lid, 2u, (*v)[10]);
    mirror_put(lid, 3u, (*v)[11]);
    mirror_put(lid, 4u, (*v)[12]);
    mirror_put(lid, 5u, (*v)[13]);
    mirror_put(lid, 6u, (*v)[14]);
    mirror_put(lid, 7u, (*v)[15]);
    workgroupBarrier();
    let q = WG - lid;
    if lid == 0u {
        emit_ends(col, (*v)[0], (*v)[8]);
    } else {
        emit_split(col, lid, (*v)[0], mirror_get(q, 7u), c[0]);
    }
    emit_split(col, lid + 1u * WG, (*v)[1], mirror_get(q, 6u), c[1]);
    emit_split(col, lid + 2u * WG, (*v)[2], mirror_get(q, 5u), c[2]);
    emit_split(col, lid + 3u * WG, (*v)[3], mirror_get(q, 4u), c[3]);
    emit_split(col, lid + 4u * WG, (*v)[4], mirror_get(q, 3u), c[4]);
    emit_split(col, lid + 5u * WG, (*v)[5], mirror_get(q, 2u), c[5]);
    emit_split(col, lid + 6u * WG, (*v)[6], mirror_get(q, 1u), c[6]);
    emit_split(col, lid + 7u * WG, (*v)[7], mirror_get(q, 0u), c[7]);
}

@compute @workgroup_size(WG)
fn main16(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    // Columns first..end, one after another: the next column's samples are loaded during this
    // one's split (P.cols columns a workgroup; see gpu::fft FusedPlan::cols).
    let first = (wid.y * nwg.x + wid.x) * P.cols;
    if first >= P.max_batch {
        return;
    }
    let end = min(first + P.cols, P.max_batch);
    var raw: array<vec2<f32>, 16>;
    fetch16(&raw, first * M, lid);
    var col = first;
    loop {
    let next = col + 1u;
    var v: array<vec2<f32>, 16>;

    // Window + pack straight into the first stage's layout: v[m] = z[lid + m·WG]. The 16 window
    // loads are issued together, before any product (no branch between them).
    var win: array<vec2<f32>, 16>;
    fetch16w(&win, lid);
    v[0] = raw[0] * win[0];
    v[1] = raw[1] * win[1];
    v[2] = raw[2] * win[2];
    v[3] = raw[3] * win[3];
    v[4] = raw[4] * win[4];
    v[5] = raw[5] * win[5];
    v[6] = raw[6] * win[6];
    v[7] = raw[7] * win[7];
    v[8] = raw[8] * win[8];
    v[9] = raw[9] * win[9];
    v[10] = raw[10] * win[10];
    v[11] = raw[11] * win[11];
    v[12] = raw[12] * win[12];
    v[13] = raw[13] * win[13];
    v[14] = raw[14] * win[14];
    v[15] = raw[15] * win[15];

    // Radix-16 stages; this thread's butterfly is i = lid with inputs a_j = v[j].
    v = dft16(v);
    var o = lid * 16u;
    var p = 1u;
    loop {
        if 256u * p > M {
            break;
        }
        let q = 16u * p;
        let k = lid & (q - 1u);
        let tw = TW16 + 4u * ((q - 1u) / 15u) + 4u * k;
        exchange16(&v, o, p, lid);
        let w1 = twiddles[tw];
        let w2 = twiddles[tw + 1u];
        let w4 = twiddles[tw + 2u];
        let w8 = twiddles[tw + 3u];
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
        v[8] = cmul(v[8], w8);
        v[9] = cmul(v[9], cmul(w1, w8));
        v[10] = cmul(v[10], cmul(w2, w8));
        v[11] = cmul(v[11], cmul(w3, w8));
        v[12] = cmul(v[12], cmul(w4, w8));
        v[13] = cmul(v[13], cmul(w5, w8));
        v[14] = cmul(v[14], cmul(w6, w8));
        v[15] = cmul(v[15], cmul(w7, w8));
        v = dft16(v);
        o = (lid - k) * 16u + k;
    }
    p = 16u * p;

    if LAST_R == 4u || LAST_R == 8u {
        // The last radix-r stage fused with the split (get_tail, tail_split).
        exchange16_tail(&v, o, p / 16u, lid);
        if next < end {
            fetch16(&raw, next * M, lid);
        }
        tail_split(&v, col, lid);
    } else {
        // The split's twiddles; the radix-2 stage squares them.
        var c: array<vec2<f32>, 8>;
        if LAST_R == 2u {
            exchange16(&v, o, p / 16u, lid);
            c = split_twiddles(lid);
            radix2_tail(&v, c);
        } else {
            // The last radix-16 stage's outputs are Z: output j is Z[o + j·M/16].
            c = split_twiddles(lid);
        }
        if next < end {
            fetch16(&raw, next * M, lid);
        }
        mirror_split(&v, col, lid, c);
    }
    if next >= end {
        break;
    }
    col = next;
    // The next column's first exchange writes the tile this one's last reads read.
    workgroupBarrier();
    }
}

// ---- Entry point `main32`: 32 complex values per thread, radix-32 stages ----------------------
//
// The same algorithm with WG = M/32 threads holding v[m] = x[lid + m·WG], m = 0..32: radix-32
// stages while 32p ≤ M (one exchange each after the first), then one radix-2, 4, 8 or 16 stage
// when M is not a power of 32 (butterflies i = lid + b·WG, inputs and outputs at v[b + j·32/r]),
// then the split. Half the threads of main16 per column and fewer exchanges. Twiddles of the
// radix-32 stages: w, w², w⁴, w⁸, w¹⁶ side by side in a per-stage table at TW32 + 5(q − 1)/31
// (see gpu::fft::twiddle_table), loaded after the exchange, the other powers multiplied out
// from them (each from ≤ 4 complex products). The last stage's radix is LAST_R, here
// M / 32^⌊log32 M⌋. With LAST_R = 8 that stage and the split are one step, as main16's tail
// (get_tail32, tail_split32): for M = 8192 = 32·32·8 two exchanges (the radix-32 stage's and the
// tail's) where main16 takes four (three and the mirror), and on the H200 0.207 ms at
// 4096-column batches against main16's 0.224 (0.246 before the tail was fused). So
// FusedValues::Auto picks this entry point from M = FUSED32_AUTO_M = 8192 up; elsewhere only
// FusedValues::ThirtyTwo does.

override TW32: u32 = 0u;        // offset of the radix-32 stage tables in `twiddles`

// 32-point DFT, forward: X[k] = E[k] + W^k·O[k], X[k+16] = E[k] − W^k·O[k], W = e^{−2πi/32},
// E and O the 16-point DFTs of the even and odd inputs.
fn dft32(a: array<vec2<f32>, 32>) -> array<vec2<f32>, 32> {
    let e = dft16(array<vec2<f32>, 16>(
        a[0], a[2], a[4], a[6], a[8], a[10], a[12], a[14],
        a[16], a[18], a[20], a[22], a[24], a[26], a[28], a[30],
    ));
    let o = dft16(array<vec2<f32>, 16>(
        a[1], a[3], a[5], a[7], a[9], a[11], a[13], a[15],
        a[17], a[19], a[21], a[23], a[25], a[27], a[29], a[31],
    ));
    const C1: f32 = 0.9807852804032304;  // cos(π/16)
    const S1: f32 = 0.19509032201612825; // sin(π/16)
    const C2: f32 = 0.9238795325112867;  // cos(π/8)
    const S2: f32 = 0.3826834323650898;  // sin(π/8)
    const C3: f32 = 0.8314696123025452;  // cos(3π/16)
    const S3: f32 = 0.5555702330196022;  // sin(3π/16)
    let o1 = cmul(o[1], vec2<f32>(C1, -S1));
    let o2 = cmul(o[2], vec2<f32>(C2, -S2));
    let o3 = cmul(o[3], vec2<f32>(C3, -S3));
    let o4 = SQRT_HALF * vec2<f32>(o[4].x + o[4].y, o[4].y - o[4].x);
    let o5 = cmul(o[5], vec2<f32>(S3, -C3));
    let o6 = cmul(o[6], vec2<f32>(S2, -C2));
    let o7 = cmul(o[7], vec2<f32>(S1, -C1));
    let o8 = mul_neg_i(o[8]);
    let o9 = cmul(o[9], vec2<f32>(-S1, -C1));
    let o10 = cmul(o[10], vec2<f32>(-S2, -C2));
    let o11 = cmul(o[11], vec2<f32>(-S3, -C3));
    let o12 = SQRT_HALF * vec2<f32>(o[12].y - o[12].x, -(o[12].x + o[12].y));
    let o13 = cmul(o[13], vec2<f32>(-C3, -S3));
    let o14 = cmul(o[14], vec2<f32>(-C2, -S2));
    let o15 = cmul(o[15], vec2<f32>(-C1, -S1));
    return array<vec2<f32>, 32>(
        e[0] + o[0], e[1] + o1, e[2] + o2, e[3] + o3,
        e[4] + o4, e[5] + o5, e[6] + o6, e[7] + o7,
        e[8] + o8, e[9] + o9, e[10] + o10, e[11] + o11,
        e[12] + o12, e[13] + o13, e[14] + o14, e[15] + o15,
        e[0] - o[0], e[1] - o1, e[2] - o2, e[3] - o3,
        e[4] - o4, e[5] - o5, e[6] - o6, e[7] - o7,
        e[8] - o8, e[9] - o9, e[10] - o10, e[11] - o11,
        e[12] - o12, e[13] - o13, e[14] - o14, e[15] - o15,
    );
}

// Writes value j of this thread to logical tile index o + j·p (parts as in place).
fn put32(v: ptr<function, array<vec2<f32>, 32>>, o: u32, p: u32, part: u32) {
    let b = ti(o);
    place(b + ti(0u * p), (*v)[0], part);
    place(b + ti(1u * p), (*v)[1], part);
    place(b + ti(2u * p), (*v)[2], part);
    place(b + ti(3u * p), (*v)[3], part);
    place(b + ti(4u * p), (*v)[4], part);
    place(b + ti(5u * p), (*v)[5], part);
    place(b + ti(6u * p), (*v)[6], part);
    place(b + ti(7u * p), (*v)[7], part);
    place(b + ti(8u * p), (*v)[8], part);
    place(b + ti(9u * p), (*v)[9], part);
    place(b + ti(10u * p), (*v)[10], part);
    place(b + ti(11u * p), (*v)[11], part);
    place(b + ti(12u * p), (*v)[12], part);
    place(b + ti(13u * p), (*v)[13], part);
    place(b + ti(14u * p), (*v)[14], part);
    place(b + ti(15u * p), (*v)[15], part);
    place(b + ti(16u * p), (*v)[16], part);
    place(b + ti(17u * p), (*v)[17], part);
    place(b + ti(18u * p), (*v)[18], part);
    place(b + ti(19u * p), (*v)[19], part);
    place(b + ti(20u * p), (*v)[20], part);
    place(b + ti(21u * p), (*v)[21], part);
    place(b + ti(22u * p), (*v)[22], part);
    place(b + ti(23u * p), (*v)[23], part);
    place(b + ti(24u * p), (*v)[24], part);
    place(b + ti(25u * p), (*v)[25], part);
    place(b + ti(26u * p), (*v)[26], part);
    place(b + ti(27u * p), (*v)[27], part);
    place(b + ti(28u * p), (*v)[28], part);
    place(b + ti(29u * p), (*v)[29], part);
    place(b + ti(30u * p), (*v)[30], part);
    place(b + ti(31u * p), (*v)[31], part);
}

// Reads v[m] = tile[lid + m·WG] (parts as in place).
fn get32(v: ptr<function, array<vec2<f32>, 32>>, lid: u32, part: u32) {
    let b = ti(lid);
    (*v)[0] = take(b + ti(0u * WG), (*v)[0], part);
    (*v)[1] = take(b + ti(1u * WG), (*v)[1], part);
    (*v)[2] = take(b + ti(2u * WG), (*v)[2], part);
    (*v)[3] = take(b + ti(3u * WG), (*v)[3], part);
    (*v)[4] = take(b + ti(4u * WG), (*v)[4], part);
    (*v)[5] = take(b + ti(5u * WG), (*v)[5], part);
    (*v)[6] = take(b + ti(6u * WG), (*v)[6], part);
    (*v)[7] = take(b + ti(7u * WG), (*v)[7], part);
    (*v)[8] = take(b + ti(8u * WG), (*v)[8], part);
    (*v)[9] = take(b + ti(9u * WG), (*v)[9], part);
    (*v)[10] = take(b + ti(10u * WG), (*v)[10], part);
    (*v)[11] = take(b + ti(11u * WG), (*v)[11], part);
    (*v)[12] = take(b + ti(12u * WG), (*v)[12], part);
    (*v)[13] = take(b + ti(13u * WG), (*v)[13], part);
    (*v)[14] = take(b + ti(14u * WG), (*v)[14], part);
    (*v)[15] = take(b + ti(15u * WG), (*v)[15], part);
    (*v)[16] = take(b + ti(16u * WG), (*v)[16], part);
    (*v)[17] = take(b + ti(17u * WG), (*v)[17], part);
    (*v)[18] = take(b + ti(18u * WG), (*v)[18], part);
    (*v)[19] = take(b + ti(19u * WG), (*v)[19], part);
    (*v)[20] = take(b + ti(20u * WG), (*v)[20], part);
    (*v)[21] = take(b + ti(21u * WG), (*v)[21], part);
    (*v)[22] = take(b + ti(22u * WG), (*v)[22], part);
    (*v)[23] = take(b + ti(23u * WG), (*v)[23], part);
    (*v)[24] = take(b + ti(24u * WG), (*v)[24], part);
    (*v)[25] = take(b + ti(25u * WG), (*v)[25], part);
    (*v)[26] = take(b + ti(26u * WG), (*v)[26], part);
    (*v)[27] = take(b + ti(27u * WG), (*v)[27], part);
    (*v)[28] = take(b + ti(28u * WG), (*v)[28], part);
    (*v)[29] = take(b + ti(29u * WG), (*v)[29], part);
    (*v)[30] = take(b + ti(30u * WG), (*v)[30], part);
    (*v)[31] = take(b + ti(31u * WG), (*v)[31], part);
}

fn exchange32(v: ptr<function, array<vec2<f32>, 32>>, o: u32, p: u32, lid: u32) {
    put32(v, o, p, 0u);
    workgroupBarrier();
    get32(v, lid, 0u);
    workgroupBarrier();
    if HALVES {
        put32(v, o, p, 1u);
        workgroupBarrier();
        get32(v, lid, 1u);
        workgroupBarrier();
    }
}

// Pair b of the split: z = Z[t], w = Z[(M − t) mod M] for t = lid + b·WG, b = 0..16 (parts as in
// place), read after put32 published Z.
fn pair32(z: ptr<function, array<vec2<f32>, 16>>, w: ptr<function, array<vec2<f32>, 16>>, lid: u32, part: u32) {
    let b = ti(lid);
    (*z)[0] = take(b, (*z)[0], part);
    (*w)[0] = take(ti((M - lid) & (M - 1u)), (*w)[0], part);
    (*z)[1] = take(b + ti(1u * WG), (*z)[1], part);
    (*w)[1] = take(ti(M - lid - 1u * WG), (*w)[1], part);
    (*z)[2] = take(b + ti(2u * WG), (*z)[2], part);
    (*w)[2] = take(ti(M - lid - 2u * WG), (*w)[2], part);
    (*z)[3] = take(b + ti(3u * WG), (*z)[3], part);
    (*w)[3] = take(ti(M - lid - 3u * WG), (*w)[3], part);
    (*z)[4] = take(b + ti(4u * WG), (*z)[4], part);
    (*w)[4] = take(ti(M - lid - 4u * WG), (*w)[4], part);
    (*z)[5] = take(b + ti(5u * WG), (*z)[5], part);
    (*w)[5] = take(ti(M - lid - 5u * WG), (*w)[5], part);
    (*z)[6] = take(b + ti(6u * WG), (*z)[6], part);
    (*w)[6] = take(ti(M - lid - 6u * WG), (*w)[6], part);
    (*z)[7] = take(b + ti(7u * WG), (*z)[7], part);
    (*w)[7] = take(ti(M - lid - 7u * WG), (*w)[7], part);
    (*z)[8] = take(b + ti(8u * WG), (*z)[8], part);
    (*w)[8] = take(ti(M - lid - 8u * WG), (*w)[8], part);
    (*z)[9] = take(b + ti(9u * WG), (*z)[9], part);
    (*w)[9] = take(ti(M - lid - 9u * WG), (*w)[9], part);
    (*z)[10] = take(b + ti(10u * WG), (*z)[10], part);
    (*w)[10] = take(ti(M - lid - 10u * WG), (*w)[10], part);
    (*z)[11] = take(b + ti(11u * WG), (*z)[11], part);
    (*w)[11] = take(ti(M - lid - 11u * WG), (*w)[11], part);
    (*z)[12] = take(b + ti(12u * WG), (*z)[12], part);
    (*w)[12] = take(ti(M - lid - 12u * WG), (*w)[12], part);
    (*z)[13] = take(b + ti(13u * WG), (*z)[13], part);
    (*w)[13] = take(ti(M - lid - 13u * WG), (*w)[13], part);
    (*z)[14] = take(b + ti(14u * WG), (*z)[14], part);
    (*w)[14] = take(ti(M - lid - 14u * WG), (*w)[14], part);
    (*z)[15] = take(b + ti(15u * WG), (*z)[15], part);
    (*w)[15] = take(ti(M - lid - 15u * WG), (*w)[15], part);
}

// main32's last radix-8 stage fused with the split (LAST_R = 8; see main16's tail, h = M/8 = 4·WG
// butterflies): slot b < 2 of thread lid holds butterfly k = lid + b·WG at v[16b + l] and its
// mirror k' = h − k at v[16b + 8 + l], l < 8 (slot 0 of thread 0: k' = h/2; slot 1's mirror is
// (WG − lid) + 2·WG).
fn get_tail32(v: ptr<function, array<vec2<f32>, 32>>, lid: u32, part: u32) {
    let h = M / 8u;
    let a = ti(lid);
    let q = WG - lid;
    let k0 = tail_mirror0(lid);
    (*v)[0] = take(a + ti(0u * h), (*v)[0], part);
    (*v)[1] = take(a + ti(1u * h), (*v)[1], part);
    (*v)[2] = take(a + ti(2u * h), (*v)[2], part);
    (*v)[3] = take(a + ti(3u * h), (*v)[3], part);
    (*v)[4] = take(a + ti(4u * h), (*v)[4], part);
    (*v)[5] = take(a + ti(5u * h), (*v)[5], part);
    (*v)[6] = take(a + ti(6u * h), (*v)[6], part);
    (*v)[7] = take(a + ti(7u * h), (*v)[7], part);
    (*v)[8] = take(ti(k0 + 0u * h), (*v)[8], part);
    (*v)[9] = take(ti(k0 + 1u * h), (*v)[9], part);
    (*v)[10] = take(ti(k0 + 2u * h), (*v)[10], part);
    (*v)[11] = take(ti(k0 + 3u * h), (*v)[11], part);
    (*v)[12] = take(ti(k0 + 4u * h), (*v)[12], part);
    (*v)[13] = take(ti(k0 + 5u * h), (*v)[13], part);
    (*v)[14] = take(ti(k0 + 6u * h), (*v)[14], part);
    (*v)[15] = take(ti(k0 + 7u * h), (*v)[15], part);
    (*v)[16] = take(a + ti(WG + 0u * h), (*v)[16], part);
    (*v)[17] = take(a + ti(WG + 1u * h), (*v)[17], part);
    (*v)[18] = take(a + ti(WG + 2u * h), (*v)[18], part);
    (*v)[19] = take(a + ti(WG + 3u * h), (*v)[19], part);
    (*v)[20] = take(a + ti(WG + 4u * h), (*v)[20], part);
    (*v)[21] = take(a + ti(WG + 5u * h), (*v)[21], part);
    (*v)[22] = take(a + ti(WG + 6u * h), (*v)[22], part);
    (*v)[23] = take(a + ti(WG + 7u * h), (*v)[23], part);
    (*v)[24] = take(at(q, h - 2u * WG + 0u * h), (*v)[24], part);
    (*v)[25] = take(at(q, h - 2u * WG + 1u * h), (*v)[25], part);
    (*v)[26] = take(at(q, h - 2u * WG + 2u * h), (*v)[26], part);
    (*v)[27] = take(at(q, h - 2u * WG + 3u * h), (*v)[27], part);
    (*v)[28] = take(at(q, h - 2u * WG + 4u * h), (*v)[28], part);
    (*v)[29] = take(at(q, h - 2u * WG + 5u * h), (*v)[29], part);
    (*v)[30] = take(at(q, h - 2u * WG + 6u * h), (*v)[30], part);
    (*v)[31] = take(at(q, h - 2u * WG + 7u * h), (*v)[31], part);
}

// The exchange into main32's tail: as exchange16_tail with 32 values.
fn exchange32_tail(v: ptr<function, array<vec2<f32>, 32>>, o: u32, p: u32, lid: u32) {
    put32(v, o, p, 0u);
    workgroupBarrier();
    get_tail32(v, lid, 0u);
    if HALVES {
        workgroupBarrier();
        put32(v, o, p, 1u);
        workgroupBarrier();
        get_tail32(v, lid, 1u);
    }
}

// main32's tail after get_tail32: both slots' two radix-8 butterflies, then their bins.
fn tail_split32(v: ptr<function, array<vec2<f32>, 32>>, col: u32, lid: u32) {
    let h = M / 8u;
    let k0 = tail_mirror0(lid);
    let k1 = lid + WG;
    let c0 = twiddles[lid];
    let d0 = twiddles[k0];
    let c1 = twiddles[k1];
    let d1 = twiddles[h - k1];
    tail_emit8(
        col, lid, k0,
        bfly8(array<vec2<f32>, 8>((*v)[0], (*v)[1], (*v)[2], (*v)[3], (*v)[4], (*v)[5], (*v)[6], (*v)[7]), c0),
        bfly8(array<vec2<f32>, 8>((*v)[8], (*v)[9], (*v)[10], (*v)[11], (*v)[12], (*v)[13], (*v)[14], (*v)[15]), d0),
        c0, d0, lid == 0u,
    );
    tail_emit8(
        col, k1, h - k1,
        bfly8(array<vec2<f32>, 8>((*v)[16], (*v)[17], (*v)[18], (*v)[19], (*v)[20], (*v)[21], (*v)[22], (*v)[23]), c1),
        bfly8(array<vec2<f32>, 8>((*v)[24], (*v)[25], (*v)[26], (*v)[27], (*v)[28], (*v)[29], (*v)[30], (*v)[31]), d1),
        c1, d1, false,
    );
}

@compute @workgroup_size(WG)
fn main32(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let col = wid.y * nwg.x + wid.x;
    if col >= P.max_batch {
        return;
    }
    var v: array<vec2<f32>, 32>;

    // Window + pack straight into the first stage's layout: v[m] = z[lid + m·WG].
    let base = col * M;
    v[0] = load(base, lid + 0u * WG);
    v[1] = load(base, lid + 1u * WG);
    v[2] = load(base, lid + 2u * WG);
    v[3] = load(base, lid + 3u * WG);
    v[4] = load(base, lid + 4u * WG);
    v[5] = load(base, lid + 5u * WG);
    v[6] = load(base, lid + 6u * WG);
    v[7] = load(base, lid + 7u * WG);
    v[8] = load(base, lid + 8u * WG);
    v[9] = load(base, lid + 9u * WG);
    v[10] = load(base, lid + 10u * WG);
    v[11] = load(base, lid + 11u * WG);
    v[12] = load(base, lid + 12u * WG);
    v[13] = load(base, lid + 13u * WG);
    v[14] = load(base, lid + 14u * WG);
    v[15] = load(base, lid + 15u * WG);
    v[16] = load(base, lid + 16u * WG);
    v[17] = load(base, lid + 17u * WG);
    v[18] = load(base, lid + 18u * WG);
    v[19] = load(base, lid + 19u * WG);
    v[20] = load(base, lid + 20u * WG);
    v[21] = load(base, lid + 21u * WG);
    v[22] = load(base, lid + 22u * WG);
    v[23] = load(base, lid + 23u * WG);
    v[24] = load(base, lid + 24u * WG);
    v[25] = load(base, lid + 25u * WG);
    v[26] = load(base, lid + 26u * WG);
    v[27] = load(base, lid + 27u * WG);
    v[28] = load(base, lid + 28u * WG);
    v[29] = load(base, lid + 29u * WG);
    v[30] = load(base, lid + 30u * WG);
    v[31] = load(base, lid + 31u * WG);

    // Radix-32 stages; this thread's butterfly is i = lid with inputs a_j = v[j].
    v = dft32(v);
    var o = lid * 32u;
    var p = 1u;
    loop {
        if 1024u * p > M {
            break;
        }
        let q = 32u * p;
        let k = lid & (q - 1u);
        let tw = TW32 + 5u * ((q - 1u) / 31u) + 5u * k;
        exchange32(&v, o, p, lid);
        let w1 = twiddles[tw];
        let w2 = twiddles[tw + 1u];
        let w4 = twiddles[tw + 2u];
        let w8 = twiddles[tw + 3u];
        let w16 = twiddles[tw + 4u];
        let w3 = cmul(w1, w2);
        let w5 = cmul(w1, w4);
        let w6 = cmul(w2, w4);
        let w7 = cmul(w3, w4);
        let w24 = cmul(w8, w16);
        p = q;
        v[1] = cmul(v[1], w1);
        v[2] = cmul(v[2], w2);
        v[3] = cmul(v[3], w3);
        v[4] = cmul(v[4], w4);
        v[5] = cmul(v[5], w5);
        v[6] = cmul(v[6], w6);
        v[7] = cmul(v[7], w7);
        v[8] = cmul(v[8], w8);
        v[9] = cmul(v[9], cmul(w1, w8));
        v[10] = cmul(v[10], cmul(w2, w8));
        v[11] = cmul(v[11], cmul(w3, w8));
        v[12] = cmul(v[12], cmul(w4, w8));
        v[13] = cmul(v[13], cmul(w5, w8));
        v[14] = cmul(v[14], cmul(w6, w8));
        v[15] = cmul(v[15], cmul(w7, w8));
        v[16] = cmul(v[16], w16);
        v[17] = cmul(v[17], cmul(w1, w16));
        v[18] = cmul(v[18], cmul(w2, w16));
        v[19] = cmul(v[19], cmul(w3, w16));
        v[20] = cmul(v[20], cmul(w4, w16));
        v[21] = cmul(v[21], cmul(w5, w16));
        v[22] = cmul(v[22], cmul(w6, w16));
        v[23] = cmul(v[23], cmul(w7, w16));
        v[24] = cmul(v[24], w24);
        v[25] = cmul(v[25], cmul(w1, w24));
        v[26] = cmul(v[26], cmul(w2, w24));
        v[27] = cmul(v[27], cmul(w3, w24));
        v[28] = cmul(v[28], cmul(w4, w24));
        v[29] = cmul(v[29], cmul(w5, w24));
        v[30] = cmul(v[30], cmul(w6, w24));
        v[31] = cmul(v[31], cmul(w7, w24));
        v = dft32(v);
        o = (lid - k) * 32u + k;
    }
    p = 32u * p;

    if LAST_R == 8u {
        // The last radix-8 stage fused with the split (get_tail32, tail_split32).
        exchange32_tail(&v, o, p / 32u, lid);
        tail_split32(&v, col, lid);
        return;
    }
    let r = LAST_R;
    if r != 1u {
        // Bring the last stage's input into v[m] = x[lid + m·WG], then the radix-r stage
        // (p now M/r): butterfly i = lid + b·WG (b < 32/r), k = i, inputs
        // a_j = x[i + j·p] = v[b + j·32/r]·T[2jk], outputs back to the same registers.
        exchange32(&v, o, p / 32u, lid);
        if r == 2u {
            let a0 = cmul(v[16], twiddles[2u * lid]);
            let a1 = cmul(v[17], twiddles[2u * (lid + 1u * WG)]);
            let a2 = cmul(v[18], twiddles[2u * (lid + 2u * WG)]);
            let a3 = cmul(v[19], twiddles[2u * (lid + 3u * WG)]);
            let a4 = cmul(v[20], twiddles[2u * (lid + 4u * WG)]);
            let a5 = cmul(v[21], twiddles[2u * (lid + 5u * WG)]);
            let a6 = cmul(v[22], twiddles[2u * (lid + 6u * WG)]);
            let a7 = cmul(v[23], twiddles[2u * (lid + 7u * WG)]);
            let a8 = cmul(v[24], twiddles[2u * (lid + 8u * WG)]);
            let a9 = cmul(v[25], twiddles[2u * (lid + 9u * WG)]);
            let a10 = cmul(v[26], twiddles[2u * (lid + 10u * WG)]);
            let a11 = cmul(v[27], twiddles[2u * (lid + 11u * WG)]);
            let a12 = cmul(v[28], twiddles[2u * (lid + 12u * WG)]);
            let a13 = cmul(v[29], twiddles[2u * (lid + 13u * WG)]);
            let a14 = cmul(v[30], twiddles[2u * (lid + 14u * WG)]);
            let a15 = cmul(v[31], twiddles[2u * (lid + 15u * WG)]);
            let b0 = v[0];
            let b1 = v[1];
            let b2 = v[2];
            let b3 = v[3];
            let b4 = v[4];
            let b5 = v[5];
            let b6 = v[6];
            let b7 = v[7];
            let b8 = v[8];
            let b9 = v[9];
            let b10 = v[10];
            let b11 = v[11];
            let b12 = v[12];
            let b13 = v[13];
            let b14 = v[14];
            let b15 = v[15];
            v[0] = b0 + a0;
            v[16] = b0 - a0;
            v[1] = b1 + a1;
            v[17] = b1 - a1;
            v[2] = b2 + a2;
            v[18] = b2 - a2;
            v[3] = b3 + a3;
            v[19] = b3 - a3;
            v[4] = b4 + a4;
            v[20] = b4 - a4;
            v[5] = b5 + a5;
            v[21] = b5 - a5;
            v[6] = b6 + a6;
            v[22] = b6 - a6;
            v[7] = b7 + a7;
            v[23] = b7 - a7;
            v[8] = b8 + a8;
            v[24] = b8 - a8;
            v[9] = b9 + a9;
            v[25] = b9 - a9;
            v[10] = b10 + a10;
            v[26] = b10 - a10;
            v[11] = b11 + a11;
            v[27] = b11 - a11;
            v[12] = b12 + a12;
            v[28] = b12 - a12;
            v[13] = b13 + a13;
            v[29] = b13 - a13;
            v[14] = b14 + a14;
            v[30] = b14 - a14;
            v[15] = b15 + a15;
            v[31] = b15 - a15;
        } else if r == 4u {
            let y0 = dft4(
                v[0],
                cmul(v[8], twiddles[2u * lid]),
                cmul(v[16], twiddles[4u * lid]),
                cmul(v[24], twiddles[6u * lid]),
            );
            let y1 = dft4(
                v[1],
                cmul(v[9], twiddles[2u * (lid + 1u * WG)]),
                cmul(v[17], twiddles[4u * (lid + 1u * WG)]),
                cmul(v[25], twiddles[6u * (lid + 1u * WG)]),
            );
            let y2 = dft4(
                v[2],
                cmul(v[10], twiddles[2u * (lid + 2u * WG)]),
                cmul(v[18], twiddles[4u * (lid + 2u * WG)]),
                cmul(v[26], twiddles[6u * (lid + 2u * WG)]),
            );
            let y3 = dft4(
                v[3],
                cmul(v[11], twiddles[2u * (lid + 3u * WG)]),
                cmul(v[19], twiddles[4u * (lid + 3u * WG)]),
                cmul(v[27], twiddles[6u * (lid + 3u * WG)]),
            );
            let y4 = dft4(
                v[4],
                cmul(v[12], twiddles[2u * (lid + 4u * WG)]),
                cmul(v[20], twiddles[4u * (lid + 4u * WG)]),
                cmul(v[28], twiddles[6u * (lid + 4u * WG)]),
            );
            let y5 = dft4(
                v[5],
                cmul(v[13], twiddles[2u * (lid + 5u * WG)]),
                cmul(v[21], twiddles[4u * (lid + 5u * WG)]),
                cmul(v[29], twiddles[6u * (lid + 5u * WG)]),
            );
            let y6 = dft4(
                v[6],
                cmul(v[14], twiddles[2u * (lid + 6u * WG)]),
                cmul(v[22], twiddles[4u * (lid + 6u * WG)]),
                cmul(v[30], twiddles[6u * (lid + 6u * WG)]),
            );
            let y7 = dft4(
                v[7],
                cmul(v[15], twiddles[2u * (lid + 7u * WG)]),
                cmul(v[23], twiddles[4u * (lid + 7u * WG)]),
                cmul(v[31], twiddles[6u * (lid + 7u * WG)]),
            );
            v[0] = y0[0];
            v[8] = y0[1];
            v[16] = y0[2];
            v[24] = y0[3];
            v[1] = y1[0];
            v[9] = y1[1];
            v[17] = y1[2];
            v[25] = y1[3];
            v[2] = y2[0];
            v[10] = y2[1];
            v[18] = y2[2];
            v[26] = y2[3];
            v[3] = y3[0];
            v[11] = y3[1];
            v[19] = y3[2];
            v[27] = y3[3];
            v[4] = y4[0];
            v[12] = y4[1];
            v[20] = y4[2];
            v[28] = y4[3];
            v[5] = y5[0];
            v[13] = y5[1];
            v[21] = y5[2];
            v[29] = y5[3];
            v[6] = y6[0];
            v[14] = y6[1];
            v[22] = y6[2];
            v[30] = y6[3];
            v[7] = y7[0];
            v[15] = y7[1];
            v[23] = y7[2];
            v[31] = y7[3];
        } else {
            let y0 = dft16(array<vec2<f32>, 16>(
                v[0],
                cmul(v[2], twiddles[2u * lid]),
                cmul(v[4], twiddles[4u * lid]),
                cmul(v[6], twiddles[6u * lid]),
                cmul(v[8], twiddles[8u * lid]),
                cmul(v[10], twiddles[10u * lid]),
                cmul(v[12], twiddles[12u * lid]),
                cmul(v[14], twiddles[14u * lid]),
                cmul(v[16], twiddles[16u * lid]),
                cmul(v[18], twiddles[18u * lid]),
                cmul(v[20], twiddles[20u * lid]),
                cmul(v[22], twiddles[22u * lid]),
                cmul(v[24], twiddles[24u * lid]),
                cmul(v[26], twiddles[26u * lid]),
                cmul(v[28], twiddles[28u * lid]),
                cmul(v[30], twiddles[30u * lid]),
            ));
            let y1 = dft16(array<vec2<f32>, 16>(
                v[1],
                cmul(v[3], twiddles[2u * (lid + 1u * WG)]),
                cmul(v[5], twiddles[4u * (lid + 1u * WG)]),
                cmul(v[7], twiddles[6u * (lid + 1u * WG)]),
                cmul(v[9], twiddles[8u * (lid + 1u * WG)]),
                cmul(v[11], twiddles[10u * (lid + 1u * WG)]),
                cmul(v[13], twiddles[12u * (lid + 1u * WG)]),
                cmul(v[15], twiddles[14u * (lid + 1u * WG)]),
                cmul(v[17], twiddles[16u * (lid + 1u * WG)]),
                cmul(v[19], twiddles[18u * (lid + 1u * WG)]),
                cmul(v[21], twiddles[20u * (lid + 1u * WG)]),
                cmul(v[23], twiddles[22u * (lid + 1u * WG)]),
                cmul(v[25], twiddles[24u * (lid + 1u * WG)]),
                cmul(v[27], twiddles[26u * (lid + 1u * WG)]),
                cmul(v[29], twiddles[28u * (lid + 1u * WG)]),
                cmul(v[31], twiddles[30u * (lid + 1u * WG)]),
            ));
            v[0] = y0[0];
            v[2] = y0[1];
            v[4] = y0[2];
            v[6] = y0[3];
            v[8] = y0[4];
            v[10] = y0[5];
            v[12] = y0[6];
            v[14] = y0[7];
            v[16] = y0[8];
            v[18] = y0[9];
            v[20] = y0[10];
            v[22] = y0[11];
            v[24] = y0[12];
            v[26] = y0[13];
            v[28] = y0[14];
            v[30] = y0[15];
            v[1] = y1[0];
            v[3] = y1[1];
            v[5] = y1[2];
            v[7] = y1[3];
            v[9] = y1[4];
            v[11] = y1[5];
            v[13] = y1[6];
            v[15] = y1[7];
            v[17] = y1[8];
            v[19] = y1[9];
            v[21] = y1[10];
            v[23] = y1[11];
            v[25] = y1[12];
            v[27] = y1[13];
            v[29] = y1[14];
            v[31] = y1[15];
        }
        o = lid;
        p = WG;
    } else {
        // The last radix-32 stage's outputs are Z: output j is Z[o + j·M/32].
        p = M / 32u;
    }

    // Publish Z and pair: item t = lid + b·WG (b < 16, so t < M/2) takes Z[t] and Z[M − t]
    // (t = 0 also Z[M/2]) and writes bins t and M − t (t = 0: bins 0, M/2 and M).
    var z: array<vec2<f32>, 16>;
    var w: array<vec2<f32>, 16>;
    var zh: vec2<f32>;
    put32(&v, o, p, 0u);
    workgroupBarrier();
    pair32(&z, &w, lid, 0u);
    if HALVES {
        zh.x = tile[ti(M / 2u)];
        workgroupBarrier();
        put32(&v, o, p, 1u);
        workgroupBarrier();
        pair32(&z, &w, lid, 1u);
        zh.y = tile[ti(M / 2u)];
    } else {
        zh = tile_get(ti(M / 2u));
    }

    if lid == 0u {
        emit_ends(col, z[0], zh);
    } else {
        emit_pair(col, lid, z[0], w[0]);
    }
    emit_pair(col, lid + 1u * WG, z[1], w[1]);
    emit_pair(col, lid + 2u * WG, z[2], w[2]);
    emit_pair(col, lid + 3u * WG, z[3], w[3]);
    emit_pair(col, lid + 4u * WG, z[4], w[4]);
    emit_pair(col, lid + 5u * WG, z[5], w[5]);
    emit_pair(col, lid + 6u * WG, z[6], w[6]);
    emit_pair(col, lid + 7u * WG, z[7], w[7]);
    emit_pair(col, lid + 8u * WG, z[8], w[8]);
    emit_pair(col, lid + 9u * WG, z[9], w[9]);
    emit_pair(col, lid + 10u * WG, z[10], w[10]);
    emit_pair(col, lid + 11u * WG, z[11], w[11]);
    emit_pair(col, lid + 12u * WG, z[12], w[12]);
    emit_pair(col, lid + 13u * WG, z[13], w[13]);
    emit_pair(col, lid + 14u * WG, z[14], w[14]);
    emit_pair(col, lid + 15u * WG, z[15], w[15]);
}
