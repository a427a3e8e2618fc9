//! The shaders of the spectrogram (`crates/views/shaders/spectrogram/`, one file per pass, each with
//! the `common/` preludes it names); [`ALL`] is this view's entry in the registry
//! ([`crate::shaders`]) and its line of [`crate::SCENES`].

use crate::gpu::shader;
pub use crate::gpu::shaders::{RenderOptions, ShaderSource};

/// Spectrogram: new dB columns → max-pooled rows of the scrolling ring texture (compute).
pub(crate) const SPECTROGRAM_RING_WRITE: ShaderSource = shader!("spectrogram/ring_write.wgsl");

/// Spectrogram: ring texture → image with a linear/log/mel axis and a colormap (render).
pub(crate) const SPECTROGRAM_DRAW: ShaderSource = shader!("spectrogram/draw.wgsl");

/// Spectrogram FFT pass 1: window, pack N reals as N/2 complex, first radix-4 stage (compute).
pub(crate) const SPECTROGRAM_FFT_PACK: ShaderSource = shader!(
    "spectrogram/fft_pack.wgsl",
    "common/math.wgsl",
    "common/fft.wgsl"
);

/// Spectrogram FFT: one radix-4 Stockham stage (compute).
pub(crate) const SPECTROGRAM_FFT_RADIX4: ShaderSource = shader!(
    "spectrogram/fft_radix4.wgsl",
    "common/math.wgsl",
    "common/fft.wgsl"
);

/// Spectrogram FFT: the final radix-2 Stockham stage when log2(N/2) is odd (compute).
pub(crate) const SPECTROGRAM_FFT_RADIX2: ShaderSource = shader!(
    "spectrogram/fft_radix2.wgsl",
    "common/math.wgsl",
    "common/fft.wgsl"
);

/// Spectrogram FFT last pass: real-spectrum split, magnitude, dBFS (compute).
pub(crate) const SPECTROGRAM_FFT_SPLIT: ShaderSource = shader!(
    "spectrogram/fft_split.wgsl",
    "common/math.wgsl",
    "common/fft.wgsl"
);

/// Spectrogram FFT, fused single pass (8, 16 or 32 values a thread in registers, radix-8, 16 or
/// 32 stages, exchanges through workgroup memory)
/// when its workgroup fits the device (N ≤ 16384 on the H200 and lavapipe) (compute).
pub(crate) const SPECTROGRAM_FFT_LOCAL: ShaderSource = shader!(
    "spectrogram/fft_local.wgsl",
    "common/math.wgsl",
    "common/fft.wgsl"
);

/// Spectrogram FFT when the fused pass does not fit (N = 32768): pack + one radix-4 DIF stage into
/// 4 sub-FFTs (compute).
pub(crate) const SPECTROGRAM_FFT_DIF4: ShaderSource = shader!(
    "spectrogram/fft_dif4.wgsl",
    "common/math.wgsl",
    "common/fft.wgsl"
);

/// Spectrogram FFT when the fused pass does not fit (N = 32768): the 4 sub-FFTs in workgroup
/// memory (compute).
pub(crate) const SPECTROGRAM_FFT_LOCAL_SUB: ShaderSource = shader!(
    "spectrogram/fft_local_sub.wgsl",
    "common/math.wgsl",
    "common/fft.wgsl"
);

/// Every shader of this view.
pub const ALL: &[ShaderSource] = &[
    SPECTROGRAM_RING_WRITE,
    SPECTROGRAM_DRAW,
    SPECTROGRAM_FFT_PACK,
    SPECTROGRAM_FFT_RADIX4,
    SPECTROGRAM_FFT_RADIX2,
    SPECTROGRAM_FFT_SPLIT,
    SPECTROGRAM_FFT_LOCAL,
    SPECTROGRAM_FFT_DIF4,
    SPECTROGRAM_FFT_LOCAL_SUB,
];
