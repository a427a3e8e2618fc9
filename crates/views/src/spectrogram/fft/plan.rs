//! What a [`GpuFft`] is built from: its options ([`FftOptions`], [`FusedValues`],
//! [`FusedLayout`]), the shape of the fused kernel for a device ([`FusedPlan`]), and the tables
//! computed on the CPU (the Hann window, the level scale, the twiddles) and dispatch folding.
//!
//! [`GpuFft`]: super::GpuFft

/// The periodic Hann window `0.5 − 0.5·cos(2πn/N)` of [`crate::audio::stft::Stft`], in f64.
pub(super) fn periodic_hann(n: usize) -> Vec<f32> {
    (0..n)
        .map(|i| (0.5 - 0.5 * (std::f64::consts::TAU * i as f64 / n as f64).cos()) as f32)
        .collect()
}

/// `1/|Σw|` summed in f64; 0 when the sum is 0 or not finite (every level then reads the floor).
pub(super) fn level_scale(window: &[f32]) -> f32 {
    let sum: f64 = window.iter().map(|&w| f64::from(w)).sum();
    if sum.is_finite() && sum != 0.0 {
        (1.0 / sum.abs()) as f32
    } else {
        0.0
    }
}

/// Workgroup counts `(x, y)` covering `threads` threads in workgroups of `group` threads, with
/// `x, y ≤ max_per_dim` and `x·y − ceil(threads/group) < y` (folded into y).
pub(super) fn fold_dispatch(threads: u64, group: u32, max_per_dim: u32) -> (u32, u32) {
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
/// `+ 4(p − 1)/15` are `w, w², w⁴, w⁸` with `w = e^{−2πi·k/(16p)}`; then, at
/// [`radix32_twiddle_offset`], the radix-32 stages (`main32`) with p = 1, 32, 1024, … < N/2:
/// entries `5k..5k + 5` at offset `+ 5(p − 1)/31` are `w, w², w⁴, w⁸, w¹⁶` with
/// `w = e^{−2πi·k/(32p)}`.
pub(super) fn twiddle_table(fft_size: usize) -> Vec<[f32; 2]> {
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
    debug_assert_eq!(t.len(), radix32_twiddle_offset(fft_size));
    let mut p = 1;
    while p < m {
        for k in 0..p {
            for j in [1, 2, 4, 8, 16] {
                t.push(cis((j * k) as f64, (32 * p) as f64));
            }
        }
        p *= 32;
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

/// Where the radix-32 stage tables start in [`twiddle_table`]: after the radix-16 tables (4
/// entries per k for p = 1, 16, 256, … < N/2).
fn radix32_twiddle_offset(fft_size: usize) -> usize {
    let mut len = radix16_twiddle_offset(fft_size);
    let mut p = 1;
    while p < fft_size / 2 {
        len += 4 * p;
        p *= 16;
    }
    len
}

/// Construction options of [`GpuFft`].
///
/// [`GpuFft`]: super::GpuFft
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FftOptions {
    /// Also write the complex spectrum to [`GpuFft::spectrum`] (tests, debugging). Default off.
    ///
    /// [`GpuFft::spectrum`]: super::GpuFft::spectrum
    pub spectrum: bool,
    /// Use the workgroup-memory kernels when the device's workgroup limits allow them: the
    /// fused single pass (`fft_local.wgsl`) when N/(2·values) invocations per workgroup
    /// ([`FusedValues`]) and its tile fit
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
    /// Build the fused kernel's module without wgpu's runtime checks (clamps on workgroup-array
    /// indices, loop bounding, division guards: `Device::create_shader_module_trusted` with
    /// `ShaderRuntimeChecks::unchecked()`). Sound because every index of `fft_local.wgsl` is in
    /// range by construction: columns below `max_batch` (the buffers' size), samples and
    /// twiddles below the tables' lengths, tile words below `TILE_F32` (the plan's layout), and
    /// every loop ends after log32 M, log16 M or log8 M iterations (tests/app/gpu_fft.rs checks
    /// both builds against the f64 reference at every size). Default on: 1–4 % faster on the
    /// H200 at every N (BENCHMARKS.md, the fft bench's checked and unchecked rows).
    pub unchecked: bool,
    /// Columns a workgroup of the fused kernel with 16 values per thread takes in turn
    /// (tests and benchmarks); default [`FusedColumns::Auto`].
    pub columns: FusedColumns,
}

impl Default for FftOptions {
    fn default() -> Self {
        FftOptions {
            spectrum: false,
            fused: true,
            layout: FusedLayout::Auto,
            values: FusedValues::Auto,
            unchecked: true,
            columns: FusedColumns::Auto,
        }
    }
}

/// How many columns a workgroup of the fused kernel's `main16` entry point takes, one after
/// the other, loading the next column's samples while it splits one (the loads' latency hidden
/// behind the split's exchange and the dB epilogue, where one column a workgroup leaves the
/// memory idle while it computes and the arithmetic idle while it loads). Entry points `main`
/// and `main32` always take one (so `Many` with [`FusedValues::Auto`] at N = 16384, where
/// `Auto` takes 32 values, runs one column a workgroup).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FusedColumns {
    /// [`FUSED_COLUMNS`] a workgroup from M = N/2 = [`FUSED_COLUMNS_MIN_M`] up, for batches of
    /// at least [`FUSED_COLUMNS_MIN_GROUPS`] × that many columns; else one.
    #[default]
    Auto,
    /// One column a workgroup.
    One,
    /// `cols` (≥ 1) columns a workgroup for batches of at least `min_batch` columns, else one.
    Many {
        /// Columns a workgroup.
        cols: u32,
        /// Smallest batch that takes `cols` columns a workgroup.
        min_batch: u32,
    },
}

/// Columns a workgroup of [`FusedColumns::Auto`] where it takes several. On the H200 at
/// 4096-column batches of N = 16384 (one workgroup a multiprocessor): 2 columns 7 % faster than
/// one, 4 columns 12 %, 8 columns 14 %; 3 % once every load of a column was issued together
/// (BENCHMARKS.md, runs U and Z).
pub const FUSED_COLUMNS: u32 = 8;

/// Smallest M = N/2 at which [`FusedColumns::Auto`] takes [`FUSED_COLUMNS`] columns a
/// workgroup: at N = 4096 and 8192 the H200 ran 2, 4 or 8 columns within 4 % of one (two or
/// more workgroups a multiprocessor already overlap one's loads with another's arithmetic), and
/// at N = 2048 8 columns were 18 % slower. Several columns need 16 values a thread, and
/// [`FusedValues::Auto`] takes 32 from this M up (faster still), so by default they are
/// [`FusedValues::Sixteen`]'s alone.
pub const FUSED_COLUMNS_MIN_M: u32 = 8192;

/// Workgroups a batch must fill with [`FUSED_COLUMNS`] columns each before
/// [`FusedColumns::Auto`] takes them (twice the H200's 132 multiprocessors, one workgroup each
/// at N = 16384, rounded down to a power of two): a smaller batch keeps one column a workgroup,
/// so that it spreads over the device.
pub const FUSED_COLUMNS_MIN_GROUPS: u32 = 256;

impl FusedColumns {
    /// `(cols, min_batch)` for a fused kernel of M = N/2 with `values` per thread whose buffers
    /// hold `max_batch` columns: `cols` is 1 unless `values` is 16, and where no batch can reach
    /// `min_batch` (`max_batch` below it).
    pub(super) fn resolve(self, m: u32, values: u32, max_batch: u32) -> (u32, u32) {
        let (cols, min_batch) = match self {
            _ if values != 16 => (1, 1),
            FusedColumns::Auto if m >= FUSED_COLUMNS_MIN_M => {
                (FUSED_COLUMNS, FUSED_COLUMNS_MIN_GROUPS * FUSED_COLUMNS)
            }
            FusedColumns::Auto | FusedColumns::One => (1, 1),
            FusedColumns::Many { cols, min_batch } => (cols.max(1), min_batch),
        };
        if max_batch < min_batch {
            (1, min_batch)
        } else {
            (cols, min_batch)
        }
    }
}

/// Complex values each thread of the fused kernel holds in registers, which sets its radix.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FusedValues {
    /// [`ThirtyTwo`](Self::ThirtyTwo) from M = N/2 = [`FUSED32_AUTO_M`] up,
    /// [`Sixteen`](Self::Sixteen) from [`FUSED16_MIN_M`] up, else [`Eight`](Self::Eight)
    /// (BENCHMARKS.md, H200).
    #[default]
    Auto,
    /// Entry point `main`: M/8 threads, radix-8 stages (⌈log8 M⌉ − 1 exchanges + the split's).
    Eight,
    /// Entry point `main16`: M/16 threads, radix-16 stages (⌈log16 M⌉ − 1 exchanges, + the
    /// split's unless the last stage has radix 4 or 8, which is fused with the split).
    Sixteen,
    /// Entry point `main32`: M/32 threads, radix-32 stages (⌈log32 M⌉ − 1 exchanges, + the
    /// split's unless the last stage has radix 8, fused with the split: 2 at M = 8192), from
    /// M = [`FUSED32_MIN_M`] up. `Auto` picks it from [`FUSED32_AUTO_M`] up.
    ThirtyTwo,
}

/// Smallest M = N/2 for which [`FusedValues::Auto`] picks 16 values per thread, up to
/// [`FUSED32_AUTO_M`] (N = 2048 to 8192: at 4096-column batches on the H200 2–4 % faster than
/// 8 values from N = 2048 on; BENCHMARKS.md).
pub const FUSED16_MIN_M: u64 = 1024;

/// Smallest M = N/2 for which [`FusedValues::Auto`] picks 32 values per thread (N = 16384, the
/// largest fused size): on the H200 at 4096-column batches `main32`, its last radix-8 stage fused
/// with the split, took 0.207 ms where 16 values took 0.224 with 8 columns a workgroup and 0.227
/// with one; at N = 4096 and 8192 it was 14–24 % slower than 16 values (BENCHMARKS.md, session 7).
pub const FUSED32_AUTO_M: u64 = 8192;

/// Smallest M = N/2 that [`FusedValues::ThirtyTwo`] accepts (4 threads of 32 values): that of
/// the smallest GPU FFT, N = [`GPU_MIN_FFT_SIZE`](super::GPU_MIN_FFT_SIZE), the smallest M the
/// tests check it at.
pub const FUSED32_MIN_M: u64 = 128;

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
/// `wg = M/values` threads per workgroup holding `values` (8, 16 or 32) complex values each, and
/// a workgroup-memory tile of `tile_f32` words: planar re/im (`halves` false) or re and im
/// exchanged one after the other through M words (`halves` true), with one padding word per 32
/// when `pad`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct FusedPlan {
    pub(super) m: u32,
    pub(super) wg: u32,
    /// Complex values per thread: 8 (`main`), 16 (`main16`) or 32 (`main32`).
    pub(super) values: u32,
    /// Offset of the radix-16 twiddle tables.
    pub(super) tw16: u32,
    /// Offset of the radix-32 twiddle tables.
    pub(super) tw32: u32,
    pub(super) halves: bool,
    pub(super) pad: bool,
    pub(super) tile_f32: u32,
    /// The module was built without runtime checks ([`FftOptions::unchecked`]).
    pub(super) unchecked: bool,
    /// The kernel also writes the complex spectrum ([`FftOptions::spectrum`]): the override
    /// `SPECTRUM`, so that a kernel without it has no store and no test in its epilogue (on the
    /// H200 the flag tested per bin cost 3–4 % at every N ≥ 4096, BENCHMARKS.md session 7).
    pub(super) spectrum: bool,
    /// Columns a workgroup for batches of at least [`cols_min_batch`](Self::cols_min_batch)
    /// ([`FusedColumns`]; 1 unless `values` is 16).
    pub(super) cols: u32,
    /// See [`cols`](Self::cols).
    pub(super) cols_min_batch: u32,
}

impl FusedPlan {
    /// The shape for `layout` and `values` that the limits allow, or `None`: M/8 (M/16, M/32)
    /// must not exceed the invocation and size-x limits (with 32 values, M ≥ [`FUSED32_MIN_M`]),
    /// and the tile takes the first layout that fits
    /// `max_compute_workgroup_storage_size`, in the order halves+pad, halves, planar+pad, planar
    /// (restricted to one kind unless `layout` is `Auto`).
    pub(super) fn choose(
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
            FusedValues::ThirtyTwo if m < FUSED32_MIN_M => return None,
            FusedValues::ThirtyTwo => 32,
            FusedValues::Auto if m >= FUSED32_AUTO_M => 32,
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
            tw32: radix32_twiddle_offset(2 * m as usize) as u32,
            halves,
            pad,
            tile_f32: (if halves { half } else { 2 * half }) as u32,
            unchecked: false,
            spectrum: false,
            cols: 1,
            cols_min_batch: 1,
        })
    }

    /// The pipeline-overridable constants of `fft_local.wgsl`.
    pub(super) fn constants(&self) -> [(&'static str, f64); 10] {
        // M / R^⌊log_R M⌋ for the entry point's radix R = values (unused by `main`).
        let mut last_r = self.m;
        while last_r >= self.values {
            last_r /= self.values;
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
            ("TW32", f64::from(self.tw32)),
            ("LAST_R", f64::from(last_r)),
            ("SPECTRUM", f64::from(u8::from(self.spectrum))),
        ]
    }

    /// The entry point of `fft_local.wgsl` for [`values`](Self::values).
    pub(super) fn entry_point(&self) -> &'static str {
        match self.values {
            32 => "main32",
            16 => "main16",
            _ => "main",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The radix-32 stage tables hold w, w², w⁴, w⁸, w¹⁶ (w = e^{−2πi·k/(32p)}) at
    /// `radix32_twiddle_offset + 5(p − 1)/31 + 5k`, and end the table.
    #[test]
    fn radix32_twiddles_at_their_offsets() {
        for n in [256usize, 2048, 16_384, 32_768] {
            let t = twiddle_table(n);
            let base = radix32_twiddle_offset(n);
            let mut p = 1;
            let mut end = base;
            while p < n / 2 {
                for k in 0..p {
                    for (s, j) in [1usize, 2, 4, 8, 16].into_iter().enumerate() {
                        let a = -std::f64::consts::TAU * (j * k) as f64 / (32 * p) as f64;
                        let got = t[base + 5 * (p - 1) / 31 + 5 * k + s];
                        assert!(
                            (f64::from(got[0]) - a.cos()).abs() < 1e-7
                                && (f64::from(got[1]) - a.sin()).abs() < 1e-7,
                            "N {n}, p {p}, k {k}, w^{j}: {got:?}"
                        );
                    }
                }
                end = base + 5 * (32 * p - 1) / 31;
                p *= 32;
            }
            assert_eq!(t.len(), end, "N {n}");
        }
    }

    /// `main32`'s constants: M/32 threads, LAST_R = M / 32^⌊log32 M⌋, TW32 = the tables' offset;
    /// M below FUSED32_MIN_M is refused.
    #[test]
    fn thirty_two_values_plan() {
        let limits = wgpu::Limits {
            max_compute_workgroup_storage_size: 1 << 16,
            ..wgpu::Limits::default()
        };
        for (m, last_r) in [
            (128u64, 4.0),
            (256, 8.0),
            (512, 16.0),
            (1024, 1.0),
            (2048, 2.0),
            (4096, 4.0),
            (8192, 8.0),
        ] {
            let plan = FusedPlan::choose(m, &limits, FusedLayout::Halves, FusedValues::ThirtyTwo)
                .expect("plan");
            assert_eq!((plan.wg, plan.values), (m as u32 / 32, 32));
            assert_eq!(plan.entry_point(), "main32");
            let c = plan.constants();
            let get = |name: &str| c.iter().find(|(k, _)| *k == name).expect(name).1;
            assert_eq!(get("LAST_R"), last_r, "M {m}");
            assert_eq!(get("TW32"), radix32_twiddle_offset(2 * m as usize) as f64);
        }
        let small = FusedPlan::choose(64, &limits, FusedLayout::Auto, FusedValues::ThirtyTwo);
        assert_eq!(small, None);
    }
}
