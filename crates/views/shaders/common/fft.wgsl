// Shared prelude of the spectrogram FFT passes (fft_*.wgsl): their one uniform block and the dB
// constants. Mirrored in Rust by `gpu::fft::Params` (checked by tests/shader_layout.rs).

// The uniform block of every FFT pass; each pass reads the fields it needs.
struct FftParams {
    p: u32,          // current Stockham subsequence length (radix-2/4 stages)
    per_col: u32,    // threads per column
    m: u32,          // complex FFT length M = N/2
    tw_stride: u32,  // twiddle-table step N/(r·p) (radix-2/4 stages)
    max_batch: u32,  // columns the buffers hold
    flags: u32,      // split: bit 0 = write the complex spectrum
    scale: f32,      // split: 1/Σw
    cols: u32,       // fused main16: consecutive columns a workgroup (≥ 1)
}

const DB_FLOOR: f32 = -160.0;
const DB_PER_LOG2: f32 = 6.020599913279624;  // 20·log10(2)

