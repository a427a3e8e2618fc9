// Point-cloud compute rasterizer, the resolve: every pixel of the visibility buffer
// (raster_depth.wgsl, raster_id.wgsl) takes the colour of its point, or the background where no
// point landed. With RADIUS r > 0 a pixel takes the nearest point within r pixels (points drawn
// as discs of radius r, nearest in front). With EDL, eye-dome lighting darkens a pixel by how
// much nearer its neighbours are (Boucheny, "Interactive scientific visualization of large
// datasets", PhD thesis 2009; the formulation of Potree's EDL shader: shade = exp(−300 · s ·
// mean over 4 neighbours of max(0, log2 d − log2 d_n))).
//
// A compute pass, one invocation per pixel in 8 × 8 workgroups, writing the colour as RGBA8
// (BGRA8 with SWAP_RB) into `image`, rows of `rp.pitch` words (a multiple of 64: the row pitch
// of a buffer-to-texture copy, which then brings it into the scene texture). Not a draw: on a
// compute GPU such as the H200 only a few multiprocessors run fragment work (a full-screen
// draw of this shader took 1.4 ms at 1920 × 1080 there), while a dispatch runs on all of them.
//
// The mode, radius and EDL are override constants: one pipeline per choice, no branch per pixel.
//
// A target over the device's binding limits is in pieces of whole rows (`Piece`): one dispatch
// per piece covers its core rows, writing its own piece of `image` (row 0 = its `core0`) and
// reading depth keys and ids from its own buffers, whose halo rows hold what the neighbouring
// piece holds there: the radius and eye-dome lighting read across the edge as in one buffer.
//
// A cloud spread over several bindings is resolved by one dispatch per binding (`chunk`: the
// ids it holds); a pixel whose point is in another binding is left as it is (not written). The
// entry point `cs_dual` resolves a quantized chunk and a pool of 16-byte points in one dispatch
// (see there).
// Only the visible points' attributes are read. With QUANT (quantized points, raster*.wgsl `main_q`) binding 3
// holds one attribute word (u32) per point, read as vec4<u32> (word i = points[i / 4][i % 4]);
// without it, the 16-byte points whose `w` is the word.
//
// Preludes prepended by the registry (src/shaders.rs): common/pointcloud.wgsl.

// Resolve parameters (mirror: src/pointcloud/raster/params.rs `ResolveParams`).
struct ResolveParams {
    width: u32,
    height: u32,
    pitch: u32,           // words per row of `image`
    _pad: u32,
    background: vec4<f32>,
    near: f32,            // planes, file units
    far: f32,
    ortho: f32,           // 1: orthographic projection (depth linear in ndc)
    edl_strength: f32,
    intensity_scale: f32, // intensity → [0, 1]
    elev_min: f32,        // elevation → colormap: (e − elev_min) · elev_scale
    elev_scale: f32,
    _pad1: f32,
    class_colors: array<vec4<u32>, 8>, // RGBA8 per ASPRS class 0–31
    lut: array<vec4<u32>, 64>,         // RGBA8 colormap, 256 entries
}

// 0 RGB, 1 intensity, 2 elevation, 3 classification, 4 return number.
override MODE: u32 = 0u;
// Point radius in pixels.
override RADIUS: i32 = 0;
// Eye-dome lighting.
override EDL: bool = false;
// Binding 3 holds packed attribute words (quantized clouds) rather than 16-byte points.
override QUANT: bool = false;
// `image` holds BGRA8 (a Bgra8Unorm scene texture) rather than RGBA8.
override SWAP_RB: bool = false;

// The ids one dispatch colours (mirror: src/pointcloud/raster/params.rs `ResolveChunk`): point id
// `first + k` is element k of bindings 3 and 4, for k < count.
struct ResolveChunk {
    first: u32,
    count: u32,
    _pad: vec2<u32>,
}

@group(0) @binding(0) var<uniform> rp: ResolveParams;
@group(0) @binding(1) var<storage, read> depth: array<u32>;       // depth keys, 0 = none
@group(0) @binding(2) var<storage, read> ids: array<u32>;         // ~pool index, 0 = none
@group(0) @binding(3) var<storage, read> points: array<vec4<u32>>; // w: attribute word
@group(0) @binding(4) var<storage, read> attrs: array<vec2<u32>>;  // RGBA8, elevation f32 bits
@group(0) @binding(5) var<uniform> chunk: ResolveChunk;
@group(0) @binding(9) var<uniform> piece: Piece;                   // the piece of bindings 1, 2 and `image`
@group(1) @binding(0) var<storage, read_write> image: array<u32>; // RGBA8 per pixel of the piece's core rows

// Colours of return numbers 1–5 and later.
const RETURN_COLORS: array<u32, 6> = array<u32, 6>(
    0xff808080u, 0xff3c3cf0u, 0xff3cc83cu, 0xfff0a03cu, 0xffc83cc8u, 0xff3cdcdcu,
);

// Writes `color` (components in [0, 1]) to pixel `p` (target coordinates, a core row of the
// piece) of `image`, rounded to 8 bits each.
fn store(p: vec2<i32>, color: vec4<f32>) {
    var c = color;
    if SWAP_RB {
        c = color.bgra;
    }
    image[(u32(p.y) - piece.core0) * rp.pitch + u32(p.x)] = pack4x8unorm(c);
}

// Element of pixel (x, y) of the target, clamped to it, in the piece's buffers (within its rows:
// the pixels read lie within MAX_PICK_RADIUS rows of a core row).
fn slot_at(x: i32, y: i32) -> u32 {
    let cx = clamp(x, 0, i32(rp.width) - 1);
    let cy = clamp(y, 0, i32(rp.height) - 1);
    return (u32(cy) - piece.row0) * rp.width + u32(cx);
}

// Distance to the eye (file units) of a depth key.
fn linear_depth(key: u32) -> f32 {
    let ndc = bitcast<f32>(~key);
    let persp = rp.near * rp.far / max(rp.far - ndc * (rp.far - rp.near), 1e-30);
    let ortho = 1.0 + ndc * (rp.far - rp.near);
    return mix(persp, ortho, rp.ortho);
}

fn key_at(x: i32, y: i32) -> u32 {
    return depth[depth_slot(slot_at(x, y))];
}


// Colour of element `i` of this dispatch's bindings.
fn point_color(i: u32) -> vec4<f32> {
    var word: u32;
    if QUANT {
        word = points[i >> 2u][i & 3u];
    } else {
        word = points[i].w;
    }
    return color_of(word, attrs[i]);
}

// Colour of a point of attribute word `word` and attributes `a` (RGBA8, elevation f32 bits).
fn color_of(word: u32, a: vec2<u32>) -> vec4<f32> {
    if MODE == 0u {
        return unpack4x8unorm(a.x);
    }
    if MODE == 1u {
        let v = sqrt(clamp(f32(word >> 16u) * rp.intensity_scale, 0.0, 1.0));
        return vec4<f32>(v, v, v, 1.0);
    }
    if MODE == 2u {
        let t = clamp((bitcast<f32>(a.y) - rp.elev_min) * rp.elev_scale, 0.0, 1.0);
        let k = min(u32(t * 255.0 + 0.5), 255u);
        return unpack4x8unorm(rp.lut[k >> 2u][k & 3u]);
    }
    if MODE == 3u {
        let c = word & 31u;
        return unpack4x8unorm(rp.class_colors[c >> 2u][c & 3u]);
    }
    let r = min((word >> 8u) & 15u, 5u);
    return unpack4x8unorm(RETURN_COLORS[r]);
}

// What the disc of RADIUS around a pixel holds: the nearest depth key (`best`, 0: none), where
// (`at`), and with EDL the 4 neighbours' keys (right, left, below, above).
struct Nearest {
    best: u32,
    at: vec2<i32>,
    around: vec4<u32>,
}

fn nearest(p: vec2<i32>) -> Nearest {
    let x = p.x;
    let y = p.y;
    var n = Nearest(0u, vec2<i32>(x, y), vec4<u32>(0u));
    // One load per pixel of the disc of RADIUS and, with EDL, of the 4 neighbours (the two
    // sets overlap from RADIUS 1 on: each pixel is read once).
    let w = max(RADIUS, 1);
    for (var dy = -w; dy <= w; dy++) {
        for (var dx = -w; dx <= w; dx++) {
            let disc = dx * dx + dy * dy <= RADIUS * RADIUS + RADIUS;
            let cross = EDL && abs(dx) + abs(dy) == 1;
            if disc || cross {
                let k = key_at(x + dx, y + dy);
                if disc && k > n.best {
                    n.best = k;
                    n.at = vec2<i32>(x + dx, y + dy);
                }
                if dy == 0 && dx == 1 { n.around.x = k; }
                if dy == 0 && dx == -1 { n.around.y = k; }
                if dx == 0 && dy == 1 { n.around.z = k; }
                if dx == 0 && dy == -1 { n.around.w = k; }
            }
        }
    }
    return n;
}

// The id word (`~id`, 0: none) of the point `n` found (0 when it found none).
fn id_word(n: Nearest) -> u32 {
    if n.best == 0u {
        return 0u;
    }
    return ids[id_slot(slot_at(n.at.x, n.at.y))];
}

// `color` darkened by eye-dome lighting (when EDL) from the keys in `n`.
fn shade(color: vec4<f32>, n: Nearest) -> vec4<f32> {
    if !EDL {
        return color;
    }
    let d = log2(max(linear_depth(n.best), 1e-30));
    var sum = 0.0;
    for (var k = 0; k < 4; k++) {
        let a = n.around[k];
        if a != 0u {
            sum += max(0.0, d - log2(max(linear_depth(a), 1e-30)));
        }
    }
    let s = exp(-300.0 * rp.edl_strength * sum * 0.25);
    return vec4<f32>(color.rgb * s, 1.0);
}

@compute @workgroup_size(8, 8)
fn cs_main(@builtin(global_invocation_id) g: vec3<u32>) {
    if g.x >= rp.width || g.y >= piece.core_rows || piece.core0 + g.y >= rp.height {
        return;
    }
    let p = vec2<i32>(i32(g.x), i32(piece.core0 + g.y));
    let n = nearest(p);
    let v = id_word(n);
    if v == 0u {
        store(p, rp.background);
        return;
    }
    let i = ~v - chunk.first;
    if i < chunk.count {
        store(p, shade(point_color(i), n));
    }
}

// ---- Entry point `cs_dual`: a quantized chunk (QUANT, bindings 3–5) and the 16-byte points of
// a second pool (bindings 6–8, ids `xchunk.first + k`) in one dispatch, for a scene that draws
// through both: each pixel's disc and neighbours are read once instead of once per dispatch.

@group(0) @binding(6) var<storage, read> xpoints: array<vec4<u32>>; // w: attribute word
@group(0) @binding(7) var<storage, read> xattrs: array<vec2<u32>>;
@group(0) @binding(8) var<uniform> xchunk: ResolveChunk;

@compute @workgroup_size(8, 8)
fn cs_dual(@builtin(global_invocation_id) g: vec3<u32>) {
    if g.x >= rp.width || g.y >= piece.core_rows || piece.core0 + g.y >= rp.height {
        return;
    }
    let p = vec2<i32>(i32(g.x), i32(piece.core0 + g.y));
    let n = nearest(p);
    let v = id_word(n);
    if v == 0u {
        store(p, rp.background);
        return;
    }
    let j = ~v - xchunk.first;
    if j < xchunk.count {
        store(p, shade(color_of(xpoints[j].w, xattrs[j]), n));
        return;
    }
    let i = ~v - chunk.first;
    if i < chunk.count {
        store(p, shade(point_color(i), n));
    }
}
