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
//! When the device allows M/values invocations per workgroup (values = 8, 16 or 32, below) and
//! the tile below, a **fused** kernel (`fft_local`) does all of the above in one dispatch instead
//! (N ≤ 16384 on the H200 and on lavapipe). Its first form: one workgroup of M/8 threads per
//! column, each thread holding 8 complex values in registers; radix-8 Stockham stages (the same formula with r = 8, the
//! 8-point DFT as two 4-point DFTs and the twiddles `e^{−iπk/4}`), then one radix-4 or radix-2
//! stage when M is not a power of 8, and the split. Between stages the values go through workgroup
//! memory (the tile: real and imaginary parts one after the other through M f32 words, or side by
//! side in 2·M; see [`FusedLayout`]). The radix-8 stages read their twiddles from per-stage tables
//! appended to `T` (see `twiddle_table`): w, w², w⁴ per butterfly side by side, the other powers
//! multiplied out. From M = [`FUSED16_MIN_M`] up to [`FUSED32_AUTO_M`] the same kernel runs with 16 values per thread
//! instead (entry point `main16`, M/16 threads, radix-16 stages built from two 8-point DFTs, then
//! one radix-2, 4 or 8 stage): one exchange fewer for M = 8192, which the H200 runs 13 % faster,
//! and 2–4 % faster from M = 1024 ([`FusedValues`]). Where `main16`'s last stage has radix 4 or 8
//! (N = 2048 and 4096) that stage and the split are one step: butterfly k's outputs
//! `Z[k + j·M/r]` have their split partners in butterfly M/r − k, so each thread reads its
//! butterflies in mirror pairs and splits them itself. Elsewhere every thread ends the stages
//! holding `Z[t]` for t = lid + m·M/16, so the split's partners `Z[M − t]` sit in one other thread
//! (M/16 − lid): a mirror exchange of half the values through one barrier. From M =
//! [`FUSED_COLUMNS_MIN_M`] up and for large batches a `main16` workgroup takes several consecutive
//! columns, the next one's samples loaded during the split ([`FusedColumns`]; `Auto` now runs
//! that size with 32 values, so only [`FusedValues::Sixteen`] takes it). The module is built
//! without wgpu's runtime checks by default ([`FftOptions::unchecked`]: its indices are in range by
//! construction). A third entry point, `main32` (M/32 threads of 32 values, radix-32 stages built
//! from two 16-point DFTs, then one radix-2, 4, 8 or 16 stage; the radix-8 one fused with the
//! split as `main16`'s), runs N = 16384 from M = [`FUSED32_AUTO_M`] up: two exchanges there where
//! `main16` takes four, 8 % faster on the H200 than `main16` with several columns. The split
//! reads `T[t]` once and takes `T[M − t] = −conj(T[t])`. The global ping-pong buffers are not allocated. [`FftOptions::fused`] turns it
//! off.
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
//! gives [`DB_FLOOR`](crate::audio::stft::DB_FLOOR) in every bin (the multi-pass pack turns the
//! sample into NaN, the fused kernel multiplies it by its window value into an infinity or a NaN;
//! the butterflies carry either into every bin of the column, and the split floors any
//! non-finite `X_k` or level).
//!
//! # Files
//!
//! This one holds the errors, the uniform parameters and the [`GpuFft`] type with its accessors
//! and `encode`; `plan.rs` the options, the fused kernel's shape and the CPU-side tables
//! (window, twiddles); `build.rs` the constructors (limits, buffers, pipelines and passes of
//! each path). The tables that compare the paths are the lab's (`crates/lab/src/fft.rs`).

mod build;
mod plan;

pub use plan::{
    FUSED_COLUMNS, FUSED_COLUMNS_MIN_GROUPS, FUSED_COLUMNS_MIN_M, FUSED16_MIN_M, FUSED32_AUTO_M,
    FUSED32_MIN_M, FftOptions, FusedColumns, FusedLayout, FusedValues,
};

use plan::{FusedPlan, fold_dispatch, level_scale};

/// Smallest FFT size the GPU path supports.
pub(crate) const GPU_MIN_FFT_SIZE: usize = 256;
/// Largest FFT size the GPU path supports.
pub(crate) const GPU_MAX_FFT_SIZE: usize = 32_768;
/// Threads per workgroup of every FFT pass (matches `@workgroup_size(64)` in the shaders).
const WORKGROUP: u32 = 64;

/// The fused kernel of a [`GpuFft`] as its pipeline was built ([`GpuFft::fused_kernel`]).
#[derive(Clone, Debug, PartialEq)]
pub struct FusedKernel {
    /// The shader's path in `shaders/` (its label).
    pub path: &'static str,
    /// The WGSL text, preludes included.
    pub wgsl: &'static str,
    /// The entry point (`main`, `main16` or `main32`).
    pub entry: &'static str,
    /// The override values the pipeline was built with.
    pub constants: [(&'static str, f64); 10],
    /// Whether wgpu's runtime checks are in (`false`: [`FftOptions::unchecked`]).
    pub checked: bool,
}

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
    /// Fused kernel (`main16`): consecutive columns a workgroup (≥ 1 in its params; unused,
    /// 0, in the other passes').
    cols: u32,
}

impl Params {
    /// These params with `cols` columns a workgroup.
    fn with_cols(self, cols: u32) -> Params {
        Params { cols, ..self }
    }
}

/// The WGSL mirror of [`Params`] (`FftParams` in `shaders/common/fft.wgsl`), for the layout test.
pub(crate) fn wgsl_mirrors() -> Vec<crate::gpu::mirror::Mirror> {
    vec![crate::gpu::mirror::wgsl_mirror!(Params => "FftParams" {
        p, per_col, m, tw_stride, max_batch, flags, scale, cols
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
    /// The fused kernel's bind group with several columns a workgroup, for large batches.
    many: Option<ManyColumns>,
}

/// The fused `main16` pass with [`cols`](Self::cols) consecutive columns a workgroup, the next
/// column's samples loaded while one is split (its params' `cols`): used for batches of at least
/// [`min_batch`](Self::min_batch) columns, where the workgroups still outnumber the
/// multiprocessors of a large GPU; smaller batches take one column a workgroup, so that they
/// spread over the device (a workgroup may compute up to `cols − 1` columns past the batch,
/// within `max_batch`: the unspecified columns of [`GpuFft::output_db`]).
struct ManyColumns {
    bind_group: wgpu::BindGroup,
    /// The split's params with [`cols`](Self::cols) (written again by [`GpuFft::set_window`]).
    params: wgpu::Buffer,
    cols: u32,
    min_batch: u32,
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

impl GpuFft {
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
    /// im exchanged in turn; `+pad`: one padding word per 32), `unchecked` (see
    /// [`FftOptions::unchecked`]) and, with several columns a workgroup ([`FusedColumns`]), how
    /// many and from which batch, e.g. `fused 512×16 halves+pad unchecked, 8 columns from 2048`.
    pub fn path_detail(&self) -> String {
        match self.plan {
            Some(p) => format!(
                "fused {}×{} {}{}{}{}",
                p.wg,
                p.values,
                if p.halves { "halves" } else { "planar" },
                if p.pad { "+pad" } else { "" },
                if p.unchecked { " unchecked" } else { "" },
                if p.cols > 1 {
                    format!(", {} columns from {}", p.cols, p.cols_min_batch)
                } else {
                    String::new()
                }
            ),
            None => self.path_name().to_string(),
        }
    }

    /// The fused kernel as built, for tools that compile it again (the lab's pipeline
    /// statistics): `None` on the multi-pass paths.
    pub fn fused_kernel(&self) -> Option<FusedKernel> {
        let plan = self.plan.filter(|_| self.passes.len() == 1)?;
        let src = &crate::spectrogram::shaders::SPECTROGRAM_FFT_LOCAL;
        Some(FusedKernel {
            path: src.path,
            wgsl: src.source,
            entry: plan.entry_point(),
            constants: plan.constants(),
            checked: !plan.unchecked,
        })
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

    /// Columns one workgroup of the fused kernel takes ([`FusedColumns`]); 0 on the
    /// multi-pass paths.
    pub fn fused_columns(&self) -> u32 {
        self.plan.map_or(0, |p| p.cols)
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
        for many in self.passes.iter().filter_map(|p| p.many.as_ref()) {
            let value = self.split_params_value.with_cols(many.cols);
            gpu.write_pod(&many.params, 0, &value);
        }
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
    /// `X[k] = Σ_n w[n]·x[n]·e^{−2πikn/N}`, k = 0..=N/2 (realfft's convention). After
    /// [`encode`](Self::encode) of `batch` columns, columns `0..batch` hold it; later columns are
    /// unspecified. Usage `STORAGE | COPY_SRC`. `None` when built by [`new`](Self::new).
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
            let (bind_group, cols) = match &p.many {
                Some(many) if batch >= many.min_batch => (&many.bind_group, many.cols),
                _ => (&p.bind_group, 1),
            };
            let (x, y) = fold_dispatch(
                u64::from(batch.div_ceil(cols)) * u64::from(p.per_col),
                p.group,
                self.max_wg_per_dim,
            );
            pass.set_pipeline(&p.pipeline);
            pass.set_bind_group(0, bind_group, &[]);
            pass.dispatch_workgroups(x, y, 1);
        }
    }
}
