// Spectrogram: writes this frame's new STFT columns (dBFS, one f32 per bin, from the CPU path's
// upload or the GPU FFT's output) into the scrolling ring texture (r32float, one texel per
// column × row). When there are more bins than texture rows, each row keeps the maximum of the
// bins it covers (row r covers bins ⌊r·B/R⌋ .. ⌊(r+1)·B/R⌋), so no peak is lost.

struct WriteParams {
    bins: u32,        // FFT size / 2 + 1
    rows: u32,        // texture rows (≤ bins)
    new_cols: u32,    // columns in `columns` this frame
    write_start: u32, // ring column of the first new column
    ring_width: u32,  // texture width in columns
    first_col: u32,   // index of the first column to write within `columns`
    _pad0: u32,
    _pad1: u32,
}

@group(0) @binding(0) var<uniform> params: WriteParams;
@group(0) @binding(1) var<storage, read> columns: array<f32>; // n × bins, column-major
@group(0) @binding(2) var ring: texture_storage_2d<r32float, write>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let row = gid.x;
    let col = gid.y;
    if row >= params.rows || col >= params.new_cols {
        return;
    }
    let b0 = row * params.bins / params.rows;
    let b1 = max((row + 1u) * params.bins / params.rows, b0 + 1u);
    let base = (params.first_col + col) * params.bins;
    var m = -3.4e38;
    for (var b = b0; b < b1; b++) {
        let v = columns[base + b];
        if v == v && v > m { // NaN is skipped
            m = v;
        }
    }
    let x = (params.write_start + col) % params.ring_width;
    textureStore(ring, vec2<u32>(x, row), vec4<f32>(m, 0.0, 0.0, 1.0));
}
