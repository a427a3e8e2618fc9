//! Batched real-input STFT magnitude on the GPU: `B` columns of `N` samples → `B × (N/2 + 1)` dBFS.
//!
//! # Algorithm
//!
//! The `N` real samples of a column are packed as `M = N/2` complex values
//! `z[n] = w[2n]·x[2n] + i·w[2n+1]·x[2n+1]` (window applied on the way), transformed by a
//! Stockham auto-sort FFT of length `M` (decimation in time, natural-order output, no bit
//! reversal; radix-4 stages, plus one final radix-2 stage when `log2 M` is odd), and split into
//! the real spectrum (the "two-for-one" trick, e.g. Sorensen et al. 1987, "Real-valued fast
//! Fourier transform algorithms", IEEE TASSP 35(6)):
//!
//! ```text
//! X[k] = ½(Z[k] + conj Z[M−k]) − ½i·e^{−2πik/N}·(Z[k] − conj Z[M−k]),  k = 0..=M,  Z[M] ≡ Z[0]
//! ```
//!
//! Stockham stage with radix `r` and current subsequence length `p` (1, 4, 16, …; the product of
//! the earlier radices): thread `i` (0..M/r) of a column, `k = i mod p`, reads
//! `a_j = src[i + j·M/r]`, multiplies `a_j` by `e^{−2πi·j·k/(r·p)}`, takes the `r`-point DFT and
//! writes output `j` to `dst[(i − k)·r + k + j·p]`. The twiddles `T[m] = e^{−2πi·m/N}`,
//! m = 0..N, are computed on the CPU in f64 and stored as f32 (`e^{−2πi·j·k/(r·p)} =
//! T[j·k·N/(r·p)]`, and the split uses `T[k]`).
//!
//! Passes, one compute dispatch each, one WGSL file per kind (`shaders/spectrogram/fft_*.wgsl`):
//! 1. `fft_pack`: window + pack + the first radix-4 stage (p = 1, no twiddles), input → ping;
//! 2. `fft_radix4` for p = 4, 16, … and, if `log2 M` is odd, `fft_radix2` with p = M/2,
//!    alternating between two ping-pong storage buffers;
//! 3. `fft_split`: split, magnitude, dBFS → [`GpuFft::output_db`] (and optionally the complex
//!    spectrum → [`GpuFft::spectrum`]).
//!
//! When the device allows M/8 invocations per workgroup and the tile below, a **fused** kernel
//! (`fft_local`) does all of the above in one dispatch instead (N ≤ 16384 on the H200 and on
//! lavapipe): one workgroup of M/8 threads per column, each thread holding 8 complex values in
//! registers; radix-8 Stockham stages (the same formula with r = 8, the 8-point DFT as two
//! 4-point DFTs and the twiddles `e^{−iπk/4}`), then one radix-4 or radix-2 stage when M is not a
//! power of 8, and the split. Between stages the values go through workgroup memory (the tile:
//! real and imaginary parts one after the other through M f32 words, or side by side in 2·M; see
//! [`FusedLayout`]). The radix-8 stages read their twiddles from per-stage tables appended to
//! `T` (see `twiddle_table`): w, w², w⁴ per butterfly side by side, the other powers multiplied
//! out. From M = [`FUSED16_MIN_M`] up the same kernel runs with 16 values per thread instead
//! (entry point `main16`, M/16 threads, radix-16 stages built from two 8-point DFTs, then one
//! radix-2, 4 or 8 stage): one exchange fewer for M = 8192, which the H200 runs 13 % faster
//! ([`FusedValues`]). The split reads `T[t]` once and takes `T[M − t] = −conj(T[t])`. The
//! global ping-pong buffers are not allocated. [`FftOptions::fused`] turns it off.
//!
//! When the fused kernel does not fit (N = 32768 on both devices) three dispatches are used,
//! if M/4 complex values fit workgroup memory: `fft_dif4` packs and
//! applies one radix-4 **decimation-in-frequency** stage,
//! `u_s[n] = e^{−2πi·n·s/M}·Σ_j z[n + j·M/4]·(−i)^{j·s}`, which leaves 4 independent
//! M/4-point FFTs (`Z[4k' + s] = FFT_{M/4}(u_s)[k']`); `fft_local_sub` runs each in workgroup
//! memory with the same Stockham stages (one workgroup per column and s) and writes `Z` in natural
//! order; `fft_split` finishes as above.
//!
//! Every multi-pass dispatch runs one thread per (column, butterfly) over a flat index. Workgroup
//! counts are folded into `x × y` so that neither exceeds `max_compute_workgroups_per_dimension`,
//! and the shaders bound-check the column against `max_batch`. Each pass has its own uniform buffer,
//! written once at construction (and by [`GpuFft::set_window`] for the split scale); nothing is
//! allocated per frame.
//!
//! # Levels
//!
//! Exactly those of [`crate::audio::stft`]: `amplitude_k = c_k·|X_k| / Σw` (c_0 = c_{N/2} = 1,
//! else 2), `dB_k = max(20·log10(amplitude_k), DB_FLOOR)`; a column with a NaN or infinite sample
//! gives [`DB_FLOOR`](crate::audio::stft::DB_FLOOR) in every bin (the pack pass turns the sample
//! into NaN, which every butterfly propagates, and the split pass floors any non-finite `X_k` or
//! level).

use wgpu::util::DeviceExt;

use crate::gpu::Gpu;
use crate::gpu::frame::OwnedFrame;
use crate::gpu::shaders;

/// Smallest FFT size the GPU path supports.
pub const GPU_MIN_FFT_SIZE: usize = 256;
/// Largest FFT size the GPU path supports.
pub const GPU_MAX_FFT_SIZE: usize = 32_768;
/// Threads per workgroup of every FFT pass (matches `@workgroup_size(64)` in the shaders).
const WORKGROUP: u32 = 64;

/// Errors of [`GpuFft`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FftError {
    /// `fft_size` is not a power of two in 256..=32768.
    #[error("GPU FFT size {fft_size} is not a power of two in 256..=32768")]
    InvalidSize {
        /// The rejected size.
        fft_size: usize,
    },
    /// `max_batch` is 0.
    #[error("GPU FFT max_batch must be at least 1")]
    ZeroBatch,
    /// A buffer (or the dispatch of `max_batch` columns) exceeds the device limits.
    #[error("GPU FFT of {fft_size} points × {max_batch} columns exceeds the device limits: {what}")]
    TooLarge {
        /// FFT size asked for.
        fft_size: usize,
        /// Batch asked for.
        max_batch: u32,
        /// Which limit.
        what: String,
    },
    /// [`GpuFft::set_window`] got a window whose length is not the FFT size.
    #[error("window of {got} samples given to a {fft_size}-point GPU FFT")]
    WindowLength {
        /// The window length given.
        got: usize,
        /// The FFT size.
        fft_size: usize,
    },
}

/// The uniform block of every FFT pass (same layout in all four shaders).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    /// Current Stockham subsequence length.
    p: u32,
    /// Threads per column.
    per_col: u32,
    /// Complex FFT length M = N/2.
    m: u32,
    /// Twiddle-table step N/(r·p).
    tw_stride: u32,
    /// Columns the buffers hold.
    max_batch: u32,
    /// Split pass: bit 0 = write the complex spectrum.
    flags: u32,
    /// Split pass: 1/Σw.
    scale: f32,
    pad: u32,
}

/// The WGSL mirror of [`Params`] (`FftParams` in `shaders/common/fft.wgsl`), for the layout test.
pub(crate) fn wgsl_mirrors() -> Vec<super::mirror::Mirror> {
    vec![super::mirror::wgsl_mirror!(Params => "FftParams" {
        p, per_col, m, tw_stride, max_batch, flags, scale, pad
    })]
}

/// One recorded dispatch.
struct Pass {
    pipeline: wgpu::ComputePipeline,
    bind_group: wgpu::BindGroup,
    /// Threads per column.
    per_col: u32,
    /// Threads per workgroup.
    group: u32,
}

/// A batched real-input FFT → dBFS pipeline for one FFT size, with every buffer sized for
/// `max_batch` columns. See the module docs for the algorithm and the level definition.
pub struct GpuFft {
    fft_size: usize,
    max_batch: u32,
    max_wg_per_dim: u32,
    fused: bool,
    plan: Option<FusedPlan>,
    input: wgpu::Buffer,
    output_db: wgpu::Buffer,
    spectrum: Option<wgpu::Buffer>,
    window: wgpu::Buffer,
    split_params: wgpu::Buffer,
    split_params_value: Params,
    passes: Vec<Pass>,
    // Kept alive for the bind groups (wgpu keeps them alive too; this documents ownership).
    _ping: Vec<wgpu::Buffer>,
    _twiddles: wgpu::Buffer,
    _params: Vec<wgpu::Buffer>,
}

impl std::fmt::Debug for GpuFft {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuFft")
            .field("fft_size", &self.fft_size)
            .field("max_batch", &self.max_batch)
            .field("passes", &self.passes.len())
            .field("fused", &self.fused)
            .field("spectrum", &self.spectrum.is_some())
            .finish_non_exhaustive()
    }
}

/// The periodic Hann window `0.5 − 0.5·cos(2πn/N)` of [`crate::audio::stft::Stft`], in f64.
fn periodic_hann(n: usize) -> Vec<f32> {
    (0..n)
        .map(|i| (0.5 - 0.5 * (std::f64::consts::TAU * i as f64 / n as f64).cos()) as f32)
        .collect()
}

/// `1/|Σw|` summed in f64; 0 when the sum is 0 or not finite (every level then reads the floor).
fn level_scale(window: &[f32]) -> f32 {
    let sum: f64 = window.iter().map(|&w| f64::from(w)).sum();
    if sum.is_finite() && sum != 0.0 {
        (1.0 / sum.abs()) as f32
    } else {
        0.0
    }
}

/// Workgroup counts `(x, y)` covering `threads` threads in workgroups of `group` threads, with
/// `x, y ≤ max_per_dim` and `x·y − ceil(threads/group) < y` (folded into y).
fn fold_dispatch(threads: u64, group: u32, max_per_dim: u32) -> (u32, u32) {
    let groups = threads.div_ceil(u64::from(group.max(1))).max(1);
    let max = u64::from(max_per_dim.max(1));
    let y = groups.div_ceil(max);
    let x = groups.div_ceil(y);
    (x as u32, y.min(u64::from(u32::MAX)) as u32)
}

/// The twiddle buffer of every pass, f64-computed and stored as f32 `[re, im]`:
/// entries 0..N are `T[m] = e^{−2πi·m/N}`; then, for the fused kernel's radix-8 stages with
/// p = 1, 8, 64, … < N/2, a per-stage table at offset `N + 3(p − 1)/7` (the sizes 3p before it
/// sum to that) whose entries `3k, 3k + 1, 3k + 2` are `w, w², w⁴` with `w = e^{−2πi·k/(8p)}`,
/// k = 0..p: one butterfly's loads side by side, so a warp reads them contiguously (the kernel
/// multiplies out w³, w⁵, w⁶, w⁷); then, at [`radix16_twiddle_offset`], the same for the
/// radix-16 stages (`main16`) with p = 1, 16, 256, … < N/2: entries `4k..4k + 4` at offset
/// `+ 4(p − 1)/15` are `w, w², w⁴, w⁸` with `w = e^{−2πi·k/(16p)}`.
fn twiddle_table(fft_size: usize) -> Vec<[f32; 2]> {
    let cis = |num: f64, den: f64| {
        let a = -std::f64::consts::TAU * num / den;
        [a.cos() as f32, a.sin() as f32]
    };
    let mut t: Vec<[f32; 2]> = (0..fft_size)
        .map(|i| cis(i as f64, fft_size as f64))
        .collect();
    let m = fft_size / 2;
    let mut p = 1;
    while p < m {
        debug_assert_eq!(t.len(), fft_size + 3 * (p - 1) / 7);
        for k in 0..p {
            for j in [1, 2, 4] {
                t.push(cis((j * k) as f64, (8 * p) as f64));
            }
        }
        p *= 8;
    }
    debug_assert_eq!(t.len(), radix16_twiddle_offset(fft_size));
    let mut p = 1;
    while p < m {
        for k in 0..p {
            for j in [1, 2, 4, 8] {
                t.push(cis((j * k) as f64, (16 * p) as f64));
            }
        }
        p *= 16;
    }
    t
}

/// Where the radix-16 stage tables start in [`twiddle_table`]: after the N entries of `T` and
/// the radix-8 tables (3 entries per k for p = 1, 8, 64, … < N/2).
fn radix16_twiddle_offset(fft_size: usize) -> usize {
    let mut len = fft_size;
    let mut p = 1;
    while p < fft_size / 2 {
        len += 3 * p;
        p *= 8;
    }
    len
}

/// Construction options of [`GpuFft`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FftOptions {
    /// Also write the complex spectrum to [`GpuFft::spectrum`] (tests, debugging). Default off.
    pub spectrum: bool,
    /// Use the workgroup-memory kernels when the device's workgroup limits allow them: the
    /// fused single pass (`fft_local.wgsl`) when N/16 invocations per workgroup and its tile fit
    /// (N ≤ 16384 on the H200 and on lavapipe), else, for larger N, three passes (`fft_dif4` →
    /// `fft_local_sub` → `fft_split`). Otherwise, or when false, the multi-pass path (one
    /// dispatch per Stockham stage through global ping-pong buffers). Default on. All paths
    /// agree to f32 rounding (see the module docs).
    pub fused: bool,
    /// Tile layout of the fused kernel (tests and benchmarks); default [`FusedLayout::Auto`].
    pub layout: FusedLayout,
    /// Complex values per thread of the fused kernel (tests and benchmarks); default
    /// [`FusedValues::Auto`].
    pub values: FusedValues,
}

impl Default for FftOptions {
    fn default() -> Self {
        FftOptions {
            spectrum: false,
            fused: true,
            layout: FusedLayout::Auto,
            values: FusedValues::Auto,
        }
    }
}

/// Complex values each thread of the fused kernel holds in registers, which sets its radix.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FusedValues {
    /// [`Sixteen`](Self::Sixteen) from M = N/2 = [`FUSED16_MIN_M`] up, else
    /// [`Eight`](Self::Eight) (BENCHMARKS.md, H200).
    #[default]
    Auto,
    /// Entry point `main`: M/8 threads, radix-8 stages (log8 M exchanges + the split's).
    Eight,
    /// Entry point `main16`: M/16 threads, radix-16 stages (log16 M exchanges + the split's).
    Sixteen,
}

/// Smallest M = N/2 for which [`FusedValues::Auto`] picks 16 values per thread.
pub const FUSED16_MIN_M: u64 = 4096;

/// Workgroup-memory layout of the fused kernel's exchanges between stages.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FusedLayout {
    /// `Halves` when it fits, else `Planar`: the smaller tile leaves room for more workgroups
    /// per multiprocessor, which measured faster on the H200 (BENCHMARKS.md).
    #[default]
    Auto,
    /// Real and imaginary parts side by side: 2·M words, one barrier pair per exchange.
    Planar,
    /// Real parts, then imaginary parts, through one M-word tile: two barrier pairs per exchange.
    Halves,
}

/// Shape of the fused single-pass kernel (`fft_local.wgsl`) for one M = N/2 on one device:
/// `wg = M/values` threads per workgroup holding `values` (8 or 16) complex values each, and a
/// workgroup-memory tile of
/// `tile_f32` words: planar re/im (`halves` false) or re and im exchanged one after the other
/// through M words (`halves` true), with one padding word per 32 when `pad`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct FusedPlan {
    m: u32,
    wg: u32,
    /// Complex values per thread: 8 (`main`) or 16 (`main16`).
    values: u32,
    /// Offset of the radix-16 twiddle tables.
    tw16: u32,
    halves: bool,
    pad: bool,
    tile_f32: u32,
}

impl FusedPlan {
    /// The shape for `layout` and `values` that the limits allow, or `None`: M/8 (M/16) must not
    /// exceed the
    /// invocation and size-x limits, and the tile takes the first layout that fits
    /// `max_compute_workgroup_storage_size`, in the order halves+pad, halves, planar+pad, planar
    /// (restricted to one kind unless `layout` is `Auto`).
    fn choose(
        m: u64,
        limits: &wgpu::Limits,
        layout: FusedLayout,
        values: FusedValues,
    ) -> Option<FusedPlan> {
        let max_wg = u64::from(
            limits
                .max_compute_invocations_per_workgroup
                .min(limits.max_compute_workgroup_size_x),
        );
        let values = match values {
            FusedValues::Eight => 8,
            FusedValues::Sixteen => 16,
            FusedValues::Auto if m >= FUSED16_MIN_M => 16,
            FusedValues::Auto => 8,
        };
        let wg = m / values;
        if wg == 0 || wg > max_wg {
            return None;
        }
        let padded = |words: u64| words + words / 32;
        let bytes = u64::from(limits.max_compute_workgroup_storage_size);
        let (halves, pad) = [(true, true), (true, false), (false, true), (false, false)]
            .into_iter()
            .filter(|&(halves, _)| match layout {
                FusedLayout::Auto => true,
                FusedLayout::Planar => !halves,
                FusedLayout::Halves => halves,
            })
            .find(|&(halves, pad)| {
                let words = if pad { padded(m) } else { m };
                let words = if halves { words } else { 2 * words };
                words * 4 <= bytes
            })?;
        let half = if pad { padded(m) } else { m };
        Some(FusedPlan {
            m: m as u32,
            wg: wg as u32,
            values: values as u32,
            tw16: radix16_twiddle_offset(2 * m as usize) as u32,
            halves,
            pad,
            tile_f32: (if halves { half } else { 2 * half }) as u32,
        })
    }

    /// The pipeline-overridable constants of `fft_local.wgsl`.
    fn constants(&self) -> [(&'static str, f64); 8] {
        let mut last_r = self.m;
        while last_r >= 16 {
            last_r /= 16;
        }
        let im_off = if self.halves { 0 } else { self.tile_f32 / 2 };
        [
            ("M", f64::from(self.m)),
            ("WG", f64::from(self.wg)),
            ("HALVES", f64::from(u8::from(self.halves))),
            ("PAD", f64::from(u8::from(self.pad))),
            ("IM_OFF", f64::from(im_off)),
            ("TILE_F32", f64::from(self.tile_f32)),
            ("TW16", f64::from(self.tw16)),
            ("LAST_R", f64::from(last_r)),
        ]
    }

    /// The entry point of `fft_local.wgsl` for [`values`](Self::values).
    fn entry_point(&self) -> &'static str {
        if self.values == 16 { "main16" } else { "main" }
    }
}

/// Largest M = N/2 of the DIF sub-FFT kernel `fft_local_sub` (its register array holds 16 complex values per thread:
/// 4·BPT with BPT = M/(4·256) ≤ 4).
const FUSED_MAX_M: u64 = 4096;

impl GpuFft {
    /// `with_options(device, fft_size, max_batch, FftOptions::default())`: builds the pipelines,
    /// twiddles, window (the periodic Hann window of [`crate::audio::stft::Stft`] until
    /// [`set_window`](Self::set_window)) and buffers for `fft_size`-point transforms of up to
    /// `max_batch` columns, without complex-spectrum output.
    ///
    /// # Errors
    ///
    /// [`FftError::InvalidSize`] unless `fft_size` is a power of two in 256..=32768;
    /// [`FftError::ZeroBatch`] if `max_batch == 0`; [`FftError::TooLarge`] if a buffer exceeds
    /// `max_buffer_size` / `max_storage_buffer_binding_size` or the dispatch of `max_batch`
    /// columns cannot be expressed within `max_compute_workgroups_per_dimension`.
    pub fn new(device: &wgpu::Device, fft_size: usize, max_batch: u32) -> Result<GpuFft, FftError> {
        Self::with_options(device, fft_size, max_batch, FftOptions::default())
    }

    /// As [`new`](Self::new), and every [`encode`](Self::encode) also writes the complex spectrum
    /// `X[0..=N/2]` of each column to [`spectrum`](Self::spectrum) (for tests and debugging).
    ///
    /// # Errors
    ///
    /// As [`new`](Self::new), counting the spectrum buffer too.
    pub fn with_spectrum(
        device: &wgpu::Device,
        fft_size: usize,
        max_batch: u32,
    ) -> Result<GpuFft, FftError> {
        let options = FftOptions {
            spectrum: true,
            ..FftOptions::default()
        };
        Self::with_options(device, fft_size, max_batch, options)
    }

    /// The general constructor; see [`new`](Self::new) and [`FftOptions`].
    ///
    /// # Errors
    ///
    /// As [`new`](Self::new).
    pub fn with_options(
        device: &wgpu::Device,
        fft_size: usize,
        max_batch: u32,
        options: FftOptions,
    ) -> Result<GpuFft, FftError> {
        if !fft_size.is_power_of_two() || !(GPU_MIN_FFT_SIZE..=GPU_MAX_FFT_SIZE).contains(&fft_size)
        {
            return Err(FftError::InvalidSize { fft_size });
        }
        if max_batch == 0 {
            return Err(FftError::ZeroBatch);
        }
        let with_spectrum = options.spectrum;
        let n = fft_size as u64;
        let m = n / 2;
        let bins = m + 1;
        let batch = u64::from(max_batch);
        let limits = device.limits();
        let too_large = |what: String| FftError::TooLarge {
            fft_size,
            max_batch,
            what,
        };
        // Workgroup-memory kernels: `len` complex f32 per workgroup of min(256, len/4) threads.
        let local_wg = |len: u64| (len / 4).min(256) as u32;
        let local_ok = |len: u64| {
            len <= FUSED_MAX_M
                && len * 8 <= u64::from(limits.max_compute_workgroup_storage_size)
                && local_wg(len) <= limits.max_compute_invocations_per_workgroup
                && local_wg(len) <= limits.max_compute_workgroup_size_x
        };
        let fused_plan = options
            .fused
            .then(|| FusedPlan::choose(m, &limits, options.layout, options.values))
            .flatten();
        let fused = fused_plan.is_some();
        let dif4 = options.fused && !fused && m > FUSED_MAX_M && local_ok(m / 4);
        let complex_bytes = batch * m * 8;
        let mut sizes = vec![
            ("input/ping-pong", complex_bytes),
            ("dB output", batch * bins * 4),
        ];
        if with_spectrum {
            sizes.push(("spectrum", batch * bins * 8));
        }
        for (what, bytes) in sizes {
            let cap = limits
                .max_buffer_size
                .min(limits.max_storage_buffer_binding_size);
            if bytes > cap {
                return Err(too_large(format!(
                    "{what} buffer of {bytes} bytes > {cap} bytes"
                )));
            }
        }
        // Largest dispatch: the split pass (M/2 threads per column) or, fused, one workgroup per
        // column.
        let max_threads = batch * m / 2;
        let max_wg_per_dim = limits.max_compute_workgroups_per_dimension;
        let (_, y) = fold_dispatch(max_threads, WORKGROUP, max_wg_per_dim);
        // The shaders compute a u32 flat thread index.
        if y > max_wg_per_dim
            || max_threads + u64::from(WORKGROUP) * u64::from(y) > u64::from(u32::MAX)
        {
            return Err(too_large(format!(
                "dispatch of {max_threads} threads exceeds the workgroup limits"
            )));
        }

        let storage = wgpu::BufferUsages::STORAGE;
        let make = |label: &str, size: u64, usage: wgpu::BufferUsages| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size,
                usage,
                mapped_at_creation: false,
            })
        };
        let input = make(
            "spectrogram:fft:input",
            complex_bytes,
            storage | wgpu::BufferUsages::COPY_DST,
        );
        let output_db = make(
            "spectrogram:fft:output_db",
            batch * bins * 4,
            storage | wgpu::BufferUsages::COPY_SRC,
        );
        // The split shader always binds a spectrum buffer; without the option it is one element
        // that is never written (flags bit 0 clear).
        let spectrum_buf = make(
            "spectrogram:fft:spectrum",
            if with_spectrum { batch * bins * 8 } else { 8 },
            storage | wgpu::BufferUsages::COPY_SRC,
        );

        // T[m] = e^{−2πi·m/N}, m = 0..N, in f64, stored as f32.
        let twiddle_data = twiddle_table(fft_size);
        let init = |label: &str, contents: &[u8], usage: wgpu::BufferUsages| {
            device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(label),
                contents,
                usage,
            })
        };
        let twiddles = init(
            "spectrogram:fft:twiddles",
            bytemuck::cast_slice(&twiddle_data),
            storage,
        );
        let hann = periodic_hann(fft_size);
        let window = init(
            "spectrogram:fft:window",
            bytemuck::cast_slice(&hann),
            storage | wgpu::BufferUsages::COPY_DST,
        );
        let uniform = |label: &str, value: &Params| {
            init(
                label,
                bytemuck::bytes_of(value),
                wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            )
        };
        // A bind group of `buffers` at bindings 0, 1, 2, … of the pipeline's group 0.
        let bind = |label: &str, pl: &wgpu::ComputePipeline, buffers: &[&wgpu::Buffer]| {
            crate::gpu::layout::buffers_group(device, label, &pl.get_bind_group_layout(0), buffers)
        };
        let pipeline_at =
            |src: &shaders::ShaderSource, entry: &str, label: &str, constants: &[(&str, f64)]| {
                let module = src.module(device);
                device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                    label: Some(label),
                    layout: None,
                    module: &module,
                    entry_point: Some(entry),
                    compilation_options: wgpu::PipelineCompilationOptions {
                        constants,
                        // Every shader writes before it reads its workgroup memory.
                        zero_initialize_workgroup_memory: false,
                    },
                    cache: None,
                })
            };
        let pipeline = |src: &shaders::ShaderSource, label: &str, constants: &[(&str, f64)]| {
            pipeline_at(src, "main", label, constants)
        };

        let m32 = m as u32;
        let n32 = n as u32;
        let split_value = Params {
            per_col: m32 / 2,
            m: m32,
            max_batch,
            flags: u32::from(with_spectrum),
            scale: level_scale(&hann),
            ..Params::default()
        };
        let split_params = uniform("spectrogram:fft:split:params", &split_value);
        let mut params_bufs = Vec::new();
        let mut passes = Vec::new();
        let mut ping = Vec::new();

        if let Some(plan) = fused_plan {
            let pl = pipeline_at(
                &shaders::SPECTROGRAM_FFT_LOCAL,
                plan.entry_point(),
                "spectrogram:fft:local",
                &plan.constants(),
            );
            let bind_group = bind(
                "spectrogram:fft:local:bind_group",
                &pl,
                &[
                    &split_params,
                    &input,
                    &window,
                    &twiddles,
                    &output_db,
                    &spectrum_buf,
                ],
            );
            passes.push(Pass {
                pipeline: pl,
                bind_group,
                per_col: plan.wg,
                group: plan.wg,
            });
        } else if dif4 {
            ping.push(make("spectrogram:fft:ping", complex_bytes, storage));
            ping.push(make("spectrogram:fft:pong", complex_bytes, storage));
            let l = m32 / 4;
            let wg = local_wg(m / 4);
            let dif_pl = pipeline(&shaders::SPECTROGRAM_FFT_DIF4, "spectrogram:fft:dif4", &[]);
            let sub_pl = pipeline(
                &shaders::SPECTROGRAM_FFT_LOCAL_SUB,
                "spectrogram:fft:local_sub",
                &[
                    ("TILE", f64::from(l)),
                    ("WG", f64::from(wg)),
                    ("BPT", f64::from(l / (4 * wg))),
                ],
            );
            let split_pl = pipeline(
                &shaders::SPECTROGRAM_FFT_SPLIT,
                "spectrogram:fft:split",
                &[],
            );
            let dif_value = Params {
                per_col: l,
                m: m32,
                max_batch,
                ..Params::default()
            };
            let dif_params = uniform("spectrogram:fft:dif4:params", &dif_value);
            let dif_bg = bind(
                "spectrogram:fft:dif4:bind_group",
                &dif_pl,
                &[&dif_params, &input, &window, &twiddles, &ping[0]],
            );
            passes.push(Pass {
                pipeline: dif_pl,
                bind_group: dif_bg,
                per_col: l,
                group: WORKGROUP,
            });
            let sub_value = Params {
                per_col: 4 * wg,
                m: m32,
                max_batch,
                ..Params::default()
            };
            let sub_params = uniform("spectrogram:fft:local_sub:params", &sub_value);
            let sub_bg = bind(
                "spectrogram:fft:local_sub:bind_group",
                &sub_pl,
                &[&sub_params, &twiddles, &ping[0], &ping[1]],
            );
            passes.push(Pass {
                pipeline: sub_pl,
                bind_group: sub_bg,
                per_col: 4 * wg,
                group: wg,
            });
            let split_bg = bind(
                "spectrogram:fft:split:bind_group",
                &split_pl,
                &[
                    &split_params,
                    &twiddles,
                    &ping[1],
                    &output_db,
                    &spectrum_buf,
                ],
            );
            passes.push(Pass {
                pipeline: split_pl,
                bind_group: split_bg,
                per_col: split_value.per_col,
                group: WORKGROUP,
            });
            params_bufs.push(dif_params);
            params_bufs.push(sub_params);
        } else {
            ping.push(make("spectrogram:fft:ping", complex_bytes, storage));
            ping.push(make("spectrogram:fft:pong", complex_bytes, storage));
            let pack_pl = pipeline(&shaders::SPECTROGRAM_FFT_PACK, "spectrogram:fft:pack", &[]);
            let radix4_pl = pipeline(
                &shaders::SPECTROGRAM_FFT_RADIX4,
                "spectrogram:fft:radix4",
                &[],
            );
            let radix2_pl = pipeline(
                &shaders::SPECTROGRAM_FFT_RADIX2,
                "spectrogram:fft:radix2",
                &[],
            );
            let split_pl = pipeline(
                &shaders::SPECTROGRAM_FFT_SPLIT,
                "spectrogram:fft:split",
                &[],
            );

            // Stages: (radix, p). The first radix-4 stage is the pack pass.
            let log2m = m32.trailing_zeros();
            let mut stages = Vec::new();
            let mut p = 1u32;
            for _ in 0..log2m / 2 {
                stages.push((4u32, p));
                p *= 4;
            }
            if log2m % 2 == 1 {
                stages.push((2u32, p));
            }
            for (s, &(radix, p)) in stages.iter().enumerate() {
                let value = Params {
                    p,
                    per_col: m32 / radix,
                    m: m32,
                    tw_stride: n32 / (radix * p),
                    max_batch,
                    ..Params::default()
                };
                let params = uniform(&format!("spectrogram:fft:stage{s}:params"), &value);
                let dst = &ping[s % 2];
                let (pl, bind_group) = if s == 0 {
                    let bg = bind(
                        "spectrogram:fft:pack:bind_group",
                        &pack_pl,
                        &[&params, &input, &window, dst],
                    );
                    (&pack_pl, bg)
                } else {
                    let pl = if radix == 4 { &radix4_pl } else { &radix2_pl };
                    let bg = bind(
                        &format!("spectrogram:fft:stage{s}:bind_group"),
                        pl,
                        &[&params, &twiddles, &ping[(s + 1) % 2], dst],
                    );
                    (pl, bg)
                };
                passes.push(Pass {
                    pipeline: pl.clone(),
                    bind_group,
                    per_col: value.per_col,
                    group: WORKGROUP,
                });
                params_bufs.push(params);
            }
            let last = &ping[(stages.len() - 1) % 2];
            let split_bg = bind(
                "spectrogram:fft:split:bind_group",
                &split_pl,
                &[&split_params, &twiddles, last, &output_db, &spectrum_buf],
            );
            passes.push(Pass {
                pipeline: split_pl,
                bind_group: split_bg,
                per_col: split_value.per_col,
                group: WORKGROUP,
            });
        }
        params_bufs.push(split_params.clone());

        Ok(GpuFft {
            fft_size,
            max_batch,
            max_wg_per_dim,
            fused: fused || dif4,
            plan: fused_plan,
            input,
            output_db,
            spectrum: with_spectrum.then_some(spectrum_buf),
            window,
            split_params,
            split_params_value: split_value,
            passes,
            _ping: ping,
            _twiddles: twiddles,
            _params: params_bufs,
        })
    }

    /// Whether the workgroup-memory kernels are in use (see [`FftOptions::fused`]).
    pub fn is_fused(&self) -> bool {
        self.fused
    }

    /// The path in use, for reports: `"fused"` (1 dispatch), `"dif4+local"` (3) or
    /// `"multi-pass"`.
    pub fn path_name(&self) -> &'static str {
        match (self.fused, self.passes.len()) {
            (true, 1) => "fused",
            (true, _) => "dif4+local",
            _ => "multi-pass",
        }
    }

    /// [`path_name`](Self::path_name) plus, for the fused kernel, its shape: threads per
    /// workgroup × complex values per thread, and the tile layout (`planar` or `halves`: re and
    /// im exchanged in turn; `+pad`: one padding word per 32), e.g. `fused 1024×8 halves+pad`.
    pub fn path_detail(&self) -> String {
        match self.plan {
            Some(p) => format!(
                "fused {}×{} {}{}",
                p.wg,
                p.values,
                if p.halves { "halves" } else { "planar" },
                if p.pad { "+pad" } else { "" }
            ),
            None => self.path_name().to_string(),
        }
    }

    /// FFT size N, samples per column.
    pub fn fft_size(&self) -> usize {
        self.fft_size
    }

    /// Bins per column: N/2 + 1 (0 Hz to Nyquist inclusive).
    pub fn bins(&self) -> usize {
        self.fft_size / 2 + 1
    }

    /// The largest `batch` [`encode`](Self::encode) accepts.
    pub fn max_batch(&self) -> u32 {
        self.max_batch
    }

    /// Compute dispatches per [`encode`](Self::encode): 1 fused, 3 with the DIF split
    /// (when the fused pass does not fit), multi-pass 1 pack + ⌊log2(N/2)/2⌋ − 1 radix-4 (+ 1 radix-2 when log2(N/2)
    /// is odd) + 1 split.
    pub fn pass_count(&self) -> usize {
        self.passes.len()
    }

    /// Sets the analysis window `w[n]`, n = 0..N (the default is the periodic Hann window of
    /// [`crate::audio::stft::Stft`]). Levels use `1/Σw` with Σw summed in f64 (see the module
    /// docs); a window summing to 0 or to a non-finite value makes every level
    /// [`DB_FLOOR`](crate::audio::stft::DB_FLOOR).
    /// Uploaded through the frame `gpu`: takes effect for the work recorded after it.
    ///
    /// # Errors
    ///
    /// [`FftError::WindowLength`] if `window.len() != N` (nothing is changed).
    pub fn set_window(
        &mut self,
        gpu: &mut crate::gpu::frame::GpuFrame<'_>,
        window: &[f32],
    ) -> Result<(), FftError> {
        if window.len() != self.fft_size {
            return Err(FftError::WindowLength {
                got: window.len(),
                fft_size: self.fft_size,
            });
        }
        gpu.write_slice(&self.window, 0, window);
        self.split_params_value.scale = level_scale(window);
        gpu.write_pod(&self.split_params, 0, &self.split_params_value);
        Ok(())
    }

    /// The input buffer: `max_batch × N` f32 raw (unwindowed) time-domain samples, column-major
    /// (column c = elements c·N..(c+1)·N); [`encode`](Self::encode) reads the first `batch`
    /// columns. Usage `STORAGE | COPY_DST`.
    pub fn input(&self) -> &wgpu::Buffer {
        &self.input
    }

    /// The output: `max_batch × bins` f32 dBFS, column-major (column c = elements
    /// c·bins..(c+1)·bins, bin k at k·sample_rate/N Hz). After [`encode`](Self::encode) of
    /// `batch` columns, columns `0..batch` hold the levels; later columns are unspecified.
    /// Usage `STORAGE | COPY_SRC`.
    pub fn output_db(&self) -> &wgpu::Buffer {
        &self.output_db
    }

    /// With [`with_spectrum`](Self::with_spectrum): `max_batch × bins` complex f32 values
    /// (interleaved re, im; 8 bytes per bin), column-major, the unscaled spectrum
    /// `X[k] = Σ_n w[n]·x[n]·e^{−2πikn/N}`, k = 0..=N/2 (realfft's convention).
    /// Usage `STORAGE | COPY_SRC`. `None` when built by [`new`](Self::new).
    pub fn spectrum(&self) -> Option<&wgpu::Buffer> {
        self.spectrum.as_ref()
    }

    /// Records every pass for the first `batch` columns of [`input`](Self::input) into `pass`
    /// (`batch` is clamped to 1..=max_batch; 0 records nothing). wgpu orders the dispatches
    /// (storage read-after-write) within the pass.
    pub fn encode(&self, pass: &mut wgpu::ComputePass<'_>, batch: u32) {
        if batch == 0 {
            return;
        }
        let batch = batch.min(self.max_batch);
        for p in &self.passes {
            let (x, y) = fold_dispatch(
                u64::from(batch) * u64::from(p.per_col),
                p.group,
                self.max_wg_per_dim,
            );
            pass.set_pipeline(&p.pipeline);
            pass.set_bind_group(0, &p.bind_group, &[]);
            pass.dispatch_workgroups(x, y, 1);
        }
    }
}

/// Deterministic noise in [−1, 1) (xorshift64*), for benchmarks.
fn noise(len: usize, seed: u64) -> Vec<f32> {
    let mut s = seed | 1;
    (0..len)
        .map(|_| {
            s ^= s >> 12;
            s ^= s << 25;
            s ^= s >> 27;
            let v = s.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 40; // 24 bits
            v as f32 / (1u64 << 23) as f32 - 1.0
        })
        .collect()
}

/// One row of [`bench_table`]: seconds per batch by wall clock and (if measured) by timestamps.
fn bench_one(gpu: &Gpu, fft: &GpuFft, batch: u32, reps: u32) -> (f64, Option<f64>) {
    crate::gpu::timing::time_compute_pass(gpu, "spectrogram:fft:bench", reps, |pass| {
        fft.encode(pass, batch)
    })
}

/// Benchmarks the batched GPU FFT (window + real FFT + split + dB, i.e. one [`GpuFft::encode`])
/// on `gpu` for each of `sizes` with `batch` columns of noise, and returns a markdown table: one
/// row per size and path (the workgroup-memory path where it applies, with 8 and with 16 values
/// per thread, then the multi-pass one).
///
/// Timing: `reps` encodes of the whole batch are recorded into one compute pass and submitted
/// once; "wall" is (submit → `device.poll(wait)`) / reps, measured after a warm-up submit;
/// "GPU" is the pass's begin/end timestamps / reps when the device has TIMESTAMP_QUERY ("–"
/// otherwise). Throughput: GB/s = batch·N·4 bytes of f32 input / time / 1e9, columns/s =
/// batch / time. The input upload is not timed. Sizes the GPU path rejects appear as a row with
/// the error; never panics.
pub fn bench_table(gpu: &Gpu, sizes: &[usize], batch: u32, reps: u32) -> String {
    let reps = reps.max(1);
    let mut out = format!(
        "GPU FFT (window + real FFT + dB), adapter: {} ({}, {}), batch {batch}, {reps} reps per \
         submit\n\n| N | path | dispatches | wall ms/batch | wall GB/s | wall columns/s | GPU ms/batch \
         | GPU GB/s | GPU columns/s |\n|---:|---|---:|---:|---:|---:|---:|---:|---:|\n",
        gpu.summary.name, gpu.summary.backend, gpu.summary.device_type
    );
    let errors_before = gpu.error_messages().len();
    // Per size: the fused kernel with 8 and with 16 values per thread, then multi-pass.
    let variants = [
        (true, FusedValues::Eight),
        (true, FusedValues::Sixteen),
        (false, FusedValues::Auto),
    ];
    let paths = sizes.iter().flat_map(|&n| variants.map(|(f, v)| (n, f, v)));
    for (n, fused, values) in paths {
        let options = FftOptions {
            fused,
            values,
            ..FftOptions::default()
        };
        let fft = match GpuFft::with_options(&gpu.device, n, batch, options) {
            Ok(f) => f,
            Err(e) => {
                if fused && values == FusedValues::Eight {
                    out.push_str(&format!("| {n} | – | – | error: {e} | | | | | |\n"));
                }
                continue;
            }
        };
        if fused && (!fft.is_fused() || (values == FusedValues::Sixteen && fft.passes.len() > 1)) {
            // The workgroup-memory kernels do not apply: the multi-pass row follows.
            continue;
        }
        let samples = noise(batch as usize * n, 0x5eed_0000 + n as u64);
        let mut upload = OwnedFrame::new(gpu, crate::gpu::upload::Strategy::WriteBuffer);
        upload.frame().write_slice(fft.input(), 0, &samples);
        upload.submit();
        let (wall, gpu_s) = bench_one(gpu, &fft, batch, reps);
        let bytes = f64::from(batch) * n as f64 * 4.0;
        let cols = f64::from(batch);
        let fmt = |s: f64| format!("{:.4} | {:.2} | {:.0}", s * 1e3, bytes / s / 1e9, cols / s);
        let gpu_cells = gpu_s.map_or_else(|| "– | – | –".to_string(), fmt);
        let path = fft.path_detail();
        out.push_str(&format!(
            "| {n} | {path} | {} | {} | {gpu_cells} |\n",
            fft.pass_count(),
            fmt(wall)
        ));
    }
    let errors = gpu.error_messages();
    if errors.len() > errors_before {
        out.push_str(&format!(
            "\nwgpu errors during the run: {}\n",
            errors[errors_before..].join("; ")
        ));
    }
    out
}
