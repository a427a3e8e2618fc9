// Spectrogram: draws the panel in one full-screen triangle: the ring texture (dBFS per column ×
// row) into the image's rect, newest shown column at its right edge, frequency axis linear,
// logarithmic or mel, colour from a 256-entry colormap between the dB floor and ceiling (each
// pixel shows the maximum of the texels it covers, sampled with at most 8 × 8 loads, so peaks
// survive any zoom); the spectrum strip beside it; the colour bar; the margins' background.
// Mel scale: m = 2595·log10(1 + f/700) (O'Shaughnessy 1987).

struct DrawParams {
    ring_width: u32, // texture width in columns
    newest: u32,     // ring column just after the newest shown column
    visible: u32,    // columns across the image's width
    rows: u32,       // texture rows
    bins: u32,       // FFT bins (N/2 + 1); row r covers bins ⌊r·B/R⌋..⌊(r+1)·B/R⌋
    scale: u32,      // 0 linear, 1 log, 2 mel
    filled: u32,     // columns written so far (older ones show the floor colour)
    _pad0: u32,
    nyquist: f32,    // Hz
    f_lo: f32,       // lowest frequency of the log axis, Hz
    db_floor: f32,   // colormap entry 0
    db_ceil: f32,    // colormap entry 255
    // The panel's parts in pixels [x0, y0, x1, y1) (x1 = 0: not shown): the image; the spectrum
    // strip beside it (same rows; texel y − y0 of `inset`: peak-hold span min/max x,
    // newest-column span min/max x); the colour bar (the colormap, floor at the bottom).
    plot: vec4<u32>,
    strip: vec4<u32>,
    bar: vec4<u32>,
}

@group(0) @binding(0) var<uniform> params: DrawParams;
@group(0) @binding(1) var ring: texture_2d<f32>;
@group(0) @binding(2) var<storage, read> lut: array<u32>; // 256 × RGBA8 (R in the low byte)
@group(0) @binding(3) var inset: texture_2d<f32>;        // rgba32float, one texel per strip row

struct VsOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) uv: vec2<f32>,
}

@vertex
fn vs_main(@builtin(vertex_index) vi: u32) -> VsOut {
    let x = f32((vi << 1u) & 2u);
    let y = f32(vi & 2u);
    var out: VsOut;
    out.clip = vec4<f32>(x * 2.0 - 1.0, 1.0 - y * 2.0, 0.0, 1.0);
    out.uv = vec2<f32>(x, y);
    return out;
}

fn mel(f: f32) -> f32 {
    return 2595.0 * log(1.0 + f / 700.0) / log(10.0);
}

fn mel_inv(m: f32) -> f32 {
    return 700.0 * (pow(10.0, m / 2595.0) - 1.0);
}

// Frequency (Hz) at height t in [0, 1] (0 = bottom).
fn freq_at(t: f32) -> f32 {
    if params.scale == 1u {
        return params.f_lo * pow(params.nyquist / params.f_lo, t);
    }
    if params.scale == 2u {
        return mel_inv(t * mel(params.nyquist));
    }
    return t * params.nyquist;
}

// Whether pixel p lies in r = [x0, y0, x1, y1).
fn inside(p: vec2<u32>, r: vec4<u32>) -> bool {
    return p.x >= r.x && p.x < r.z && p.y >= r.y && p.y < r.w;
}

// The spectrum strip (the same pixels as the 1-pixel column spans egui drew before,
// `ui/column_line.rs`, turned a quarter: one span per pixel row): a pixel whose centre lies in
// [min − ½, max + ½) of a line's span in its row takes the line's colour (newest column over
// peak hold); the rest is the strip's dark background.
fn strip_color(p: vec2<u32>, clip: vec4<f32>) -> vec4<f32> {
    let texel = min(p.y - params.strip.y, textureDimensions(inset, 0).x - 1u);
    let s = textureLoad(inset, vec2<u32>(texel, 0u), 0);
    let x = clip.x;
    var out = vec4<f32>(0.06, 0.06, 0.08, 1.0);
    out = select(out, vec4<f32>(255.0, 170.0, 60.0, 255.0) / 255.0, x >= s.x - 0.5 && x < s.y + 0.5);
    return select(out, vec4<f32>(120.0, 220.0, 255.0, 255.0) / 255.0, x >= s.z - 0.5 && x < s.w + 0.5);
}

// The colour bar: the colormap from the floor (bottom row) to the ceiling (top row).
fn bar_color(p: vec2<u32>) -> vec4<f32> {
    let h = max(params.bar.w - params.bar.y, 2u) - 1u;
    let t = f32(params.bar.w - 1u - p.y) / f32(h);
    let c = unpack4x8unorm(lut[u32(clamp(t, 0.0, 1.0) * 255.0 + 0.5)]);
    return vec4<f32>(c.rgb, 1.0);
}

@fragment
fn fs_main(in: VsOut) -> @location(0) vec4<f32> {
    let p = vec2<u32>(in.clip.xy);
    if inside(p, params.plot) {
        return image_color(p, in.clip);
    }
    if inside(p, params.strip) {
        return strip_color(p, in.clip);
    }
    if inside(p, params.bar) {
        return bar_color(p);
    }
    // The margins: the scene's background (labels are drawn over it by egui).
    return vec4<f32>(0.02, 0.02, 0.03, 1.0);
}

// The spectrogram's colour at pixel p of the image.
fn image_color(p: vec2<u32>, clip: vec4<f32>) -> vec4<f32> {
    let width = f32(params.plot.z - params.plot.x);
    let height = f32(params.plot.w - params.plot.y);
    // Column range of this pixel (0 = oldest visible).
    let vis = f32(max(params.visible, 1u));
    let px = f32(p.x - params.plot.x);
    let c0 = u32(floor(px * vis / width));
    let c1 = max(u32(floor((px + 1.0) * vis / width)), c0 + 1u);
    // Frequency range of this pixel (0 = the bottom row) → bin range → row range.
    let py = f32(params.plot.w - 1u - p.y);
    let f0 = freq_at(py / height);
    let f1 = freq_at((py + 1.0) / height);
    let bins = f32(params.bins - 1u);
    let k0 = clamp(f0 / params.nyquist * bins, 0.0, bins);
    let k1 = clamp(f1 / params.nyquist * bins, 0.0, bins);
    let rows = f32(params.rows);
    let rb = f32(params.bins) / rows; // bins per row
    let r0 = u32(clamp(floor((k0 + 0.5) / rb), 0.0, rows - 1.0));
    let r1 = max(u32(clamp(floor((k1 + 0.5) / rb), 0.0, rows - 1.0)) + 1u, r0 + 1u);
    let cstep = max((c1 - c0 + 7u) / 8u, 1u);
    let rstep = max((r1 - r0 + 7u) / 8u, 1u);
    var m = -3.4e38;
    var any = false;
    for (var c = c0; c < c1; c += cstep) {
        let back = u32(vis) - c; // 1 = newest
        if back > params.filled {
            continue;
        }
        let col = (params.newest + params.ring_width * 2u - back) % params.ring_width;
        for (var r = r0; r < r1; r += rstep) {
            m = max(m, textureLoad(ring, vec2<u32>(col, r), 0).r);
            any = true;
        }
    }
    if !any {
        return vec4<f32>(0.0, 0.0, 0.0, 1.0);
    }
    if m <= -1.0e29 {
        // A gap (no input data): grey hatching, never the colour of silence.
        let stripe = (u32(clip.x + clip.y) / 4u) % 2u;
        return vec4<f32>(vec3<f32>(0.22 + 0.08 * f32(stripe)), 1.0);
    }
    let span = max(params.db_ceil - params.db_floor, 1e-6);
    let t = clamp((m - params.db_floor) / span, 0.0, 1.0);
    let c = unpack4x8unorm(lut[u32(t * 255.0 + 0.5)]);
    return vec4<f32>(c.rgb, 1.0);
}
