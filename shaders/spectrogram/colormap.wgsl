// Spectrogram: maps this frame's new STFT columns (dBFS, one f32 per bin) through a 256-entry
// colormap and writes them into the scrolling ring texture. Row 0 of the texture is the Nyquist
// bin, the last row is DC, so the image reads low frequencies at the bottom.

struct Params {
    bins: u32,        // FFT size / 2 + 1
    new_cols: u32,    // columns in `columns` this frame
    write_start: u32, // ring column of the first new column
    ring_width: u32,  // texture width in columns
    db_floor: f32,    // maps to colormap entry 0
    db_ceil: f32,     // maps to colormap entry 255
    _pad0: f32,
    _pad1: f32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> columns: array<f32>;   // new_cols × bins, column-major
@group(0) @binding(2) var<storage, read> lut: array<u32>;       // 256 × RGBA8 packed (R in low byte)
@group(0) @binding(3) var ring: texture_storage_2d<rgba8unorm, write>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let bin = gid.x;
    let col = gid.y;
    if bin >= params.bins || col >= params.new_cols {
        return;
    }
    let db = columns[col * params.bins + bin];
    let span = max(params.db_ceil - params.db_floor, 1e-6);
    var t = (db - params.db_floor) / span;
    if !(t >= 0.0) { // also catches NaN
        t = 0.0;
    }
    let idx = u32(clamp(t, 0.0, 1.0) * 255.0 + 0.5);
    let color = unpack4x8unorm(lut[idx]);
    let x = (params.write_start + col) % params.ring_width;
    let y = params.bins - 1u - bin;
    textureStore(ring, vec2<u32>(x, y), vec4<f32>(color.rgb, 1.0));
}
