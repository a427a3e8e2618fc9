//! Short-time Fourier transform of the mono sample stream, in dBFS.
//!
//! Frames of `N` samples (`fft_size`, a power of two), advanced by `H` samples (`hop`, any value in
//! 1..=N), are multiplied by a **periodic** ("DFT-even") window `w[n]`, n = 0..N−1, chosen with
//! [`WindowKind`] (default [`WindowKind::Hann`]); see [`window_values`] for the formulas and
//! sources. The real FFT (`realfft`, planned once) gives `X_k`, k = 0..=N/2; one pass over it
//! forms |X_k|² and the dB level (see [`levels_db`]).
//!
//! Level of bin k, scaled so that a full-scale sine centred on a bin reads 0 dBFS for **every**
//! window and size (one-sided amplitude spectrum with the window's coherent gain `Σw` compensated;
//! Heinzel, Rüdiger & Schilling 2002, "Spectrum and spectral density estimation by the Discrete
//! Fourier transform (DFT), including a comprehensive list of window functions and some new
//! flat-top windows", Max-Planck-Institut für Gravitationsphysik, §9):
//!
//! ```text
//! amplitude_k = c_k·|X_k| / Σw,   c_k = 2 except c_0 = c_{N/2} = 1
//! dB_k        = max(20·log10(amplitude_k), DB_FLOOR)
//! ```
//!
//! The factor `2/Σw` is folded into the window (so the loop multiplies once per sample), with the
//! DC and Nyquist bins halved afterwards. A frame containing a NaN or infinite sample yields
//! [`DB_FLOOR`] in every bin (never NaN), and only the columns whose window holds that sample are
//! affected; silence yields exactly `DB_FLOOR`; an FFT overflowed by huge finite samples reads
//! [`DB_MAX`]. Every output is finite.
//!
//! A tone between two bins reads lower at its peak bin (scalloping: −1.42 dB at worst for Hann,
//! under 0.01 dB for the flat-top window); [`tone_level_db_with`] sums the power around the peak
//! and divides by the window's equivalent noise bandwidth instead, which does not depend on where
//! the tone falls.

use std::sync::Arc;

use realfft::num_complex::Complex;
use realfft::{RealFftPlanner, RealToComplex};

use super::AudioError;

/// 20·log10(2): the DC and Nyquist bins take `1/Σw`, half the `2/Σw` folded into the window.
const EDGE_DB: f32 = 6.020_6;

/// The highest level reported, dBFS: replaces +∞ when the FFT of huge (finite) samples
/// overflows `f32` (a frame of `f32::MAX` reads ≈ 770 dB before overflowing).
pub const DB_MAX: f32 = 800.0;

/// 10·log10(2): dB per unit of log2 of a power.
const DB_PER_LOG2: f32 = 3.010_3;

/// log2(x) for finite x > 0, branch-free so loops over it vectorize: x = 2^e · m with
/// m ∈ [√½, √2) (found by subtracting the bits of √½ before splitting exponent and mantissa, so
/// no compare or select), log2(m) = (2/ln 2)·atanh(t) with t = (m − 1)/(m + 1), |t| ≤ 0.1716,
/// from the series t + t³/3 + t⁵/5 + t⁷/7 (truncation error < 1e-8; in practice f32 rounding,
/// about 1e-7 relative). x = 0 gives about −127 (far below [`DB_FLOOR`]); subnormals come out
/// below −126; callers clamp. Not for NaN or ±∞ (garbage in, garbage out; the caller checks
/// finiteness).
#[inline(always)]
pub(crate) fn fast_log2(x: f32) -> f32 {
    const C1: f32 = 2.0 / std::f32::consts::LN_2;
    const C3: f32 = C1 / 3.0;
    const C5: f32 = C1 / 5.0;
    const C7: f32 = C1 / 7.0;
    /// Bits of √½ (0.70710677).
    const SQRT_HALF_BITS: u32 = 0x3f35_04f3;
    let off = x.to_bits().wrapping_sub(SQRT_HALF_BITS);
    let e = ((off as i32) >> 23) as f32;
    let m = f32::from_bits((off & 0x007f_ffff).wrapping_add(SQRT_HALF_BITS));
    let t = (m - 1.0) / (m + 1.0);
    let t2 = t * t;
    e + t * (C1 + t2 * (C3 + t2 * (C5 + t2 * C7)))
}

/// `frame[n] = src[n]·w[n]` over the shortest of the three slices; `false` if a sample is NaN or
/// infinite.
fn window_frame(frame: &mut [f32], src: &[f32], w: &[f32]) -> bool {
    let mut finite = true;
    for ((f, &x), &w) in frame.iter_mut().zip(src).zip(w) {
        finite &= x.is_finite();
        *f = x * w;
    }
    finite
}

/// The levels of the spectrum `x` (bins k = 0..=N/2, the window scaled by 2/Σw) into `out` (same
/// length): `clamp(10·log10(|X_k|²) + offset_db, DB_FLOOR, DB_MAX)` through [`fast_log2`], DC and
/// Nyquist another 6.02 dB lower (their one-sided factor is 1, not the 2 folded into the
/// window). Returns `false` if some power was not finite (f32 overflow or non-finite FFT
/// output): the caller rescales and redoes the column.
fn levels_db(out: &mut [f32], x: &[Complex<f32>], offset_db: f32) -> bool {
    let mut finite = true;
    for (o, x) in out.iter_mut().zip(x) {
        let p = x.norm_sqr();
        finite &= p.is_finite();
        *o = level_db(p, offset_db);
    }
    let last = out.len() - 1;
    for k in [0, last] {
        out[k] = level_db(x[k].norm_sqr(), offset_db - EDGE_DB);
    }
    finite
}

/// `clamp(10·log10(p) + offset_db, DB_FLOOR, DB_MAX)` through [`fast_log2`].
#[inline(always)]
fn level_db(p: f32, offset_db: f32) -> f32 {
    (DB_PER_LOG2 * fast_log2(p) + offset_db).clamp(DB_FLOOR, DB_MAX)
}

/// 2^−100: a frame whose power overflows f32 is redone with its samples scaled by this (exact),
/// its levels raised by [`RESCALE_DB`]. Enough for any finite samples: |x·w| < 2^128 becomes
/// < 2^28, and over 32768 bins the power stays below 2^118.
const RESCALE: f32 = 7.888_609e-31;
/// 20·log10(2^100), dB.
const RESCALE_DB: f32 = 602.06;

/// The lowest level reported, dBFS (amplitude 1e-8). Replaces −∞ (silence) and NaN.
pub const DB_FLOOR: f32 = -160.0;

/// Equivalent noise bandwidth of the periodic Hann window, in bins: `N·Σw²/(Σw)² = 1.5` exactly.
pub const HANN_ENBW_BINS: f32 = 1.5;

/// Smallest accepted FFT size.
pub const MIN_FFT_SIZE: usize = 16;
/// Largest accepted FFT size.
pub const MAX_FFT_SIZE: usize = 65_536;
/// Default FFT size.
pub const DEFAULT_FFT_SIZE: usize = 2048;
/// Default hop.
pub const DEFAULT_HOP: usize = 512;
/// Smallest FFT size the UI and the command line offer (the issue's analysis range).
pub const MIN_ANALYSIS_FFT_SIZE: usize = 256;
/// Largest FFT size the UI and the command line offer (16 385 bins).
pub const MAX_ANALYSIS_FFT_SIZE: usize = 32_768;

/// The analysis window. Every window is the *periodic* form of a cosine sum,
/// `w[n] = Σ_j (−1)^j a_j·cos(2π j n / N)`, n = 0..N−1 (see [`WindowKind::coefficients`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum WindowKind {
    /// Hann: `a = [0.5, 0.5]` (Harris 1978, "On the use of windows for harmonic analysis with the
    /// discrete Fourier transform", Proc. IEEE 66(1), §V.C). ENBW 1.5 bins, sidelobes −31.5 dB.
    #[default]
    Hann,
    /// Hamming: `a = [0.54, 0.46]` (Harris 1978 §V.D). ENBW 1.3628 bins, sidelobes −43 dB.
    Hamming,
    /// 4-term Blackman-Harris ("minimum 4-term", −92 dB): `a = [0.35875, 0.48829, 0.14128,
    /// 0.01168]` (Harris 1978 §V.F, Table I). ENBW 2.0044 bins.
    BlackmanHarris,
    /// Flat-top HFT95 of Heinzel, Rüdiger & Schilling 2002 (§D.3.1 / Appendix D, "HFT95"):
    /// `a = [1, 1.9383379, 1.3045202, 0.4028270, 0.0350665]`. Sidelobes −95 dB, amplitude
    /// flatness (worst scalloping) 0.0044 dB, ENBW 3.8112 bins: for reading tone amplitudes.
    FlatTop,
    /// Rectangular (no window): `a = [1]`. ENBW 1 bin, sidelobes −13.3 dB.
    Rectangular,
}

impl WindowKind {
    /// Every window, in the order the UI lists them.
    pub const ALL: &'static [WindowKind] = &[
        WindowKind::Hann,
        WindowKind::Hamming,
        WindowKind::BlackmanHarris,
        WindowKind::FlatTop,
        WindowKind::Rectangular,
    ];

    /// The name used on the command line and in reports: `hann`, `hamming`, `blackman-harris`,
    /// `flat-top`, `rectangular`.
    pub fn name(self) -> &'static str {
        match self {
            WindowKind::Hann => "hann",
            WindowKind::Hamming => "hamming",
            WindowKind::BlackmanHarris => "blackman-harris",
            WindowKind::FlatTop => "flat-top",
            WindowKind::Rectangular => "rectangular",
        }
    }

    /// Parses a [`name`](Self::name), case-insensitively; also accepts `blackmanharris`,
    /// `flattop`, `rect` and `none`. `None` for anything else.
    pub fn from_name(s: &str) -> Option<WindowKind> {
        let v = s.trim().to_ascii_lowercase().replace('_', "-");
        Some(match v.as_str() {
            "hann" | "hanning" => WindowKind::Hann,
            "hamming" => WindowKind::Hamming,
            "blackman-harris" | "blackmanharris" => WindowKind::BlackmanHarris,
            "flat-top" | "flattop" => WindowKind::FlatTop,
            "rectangular" | "rect" | "none" => WindowKind::Rectangular,
            _ => return None,
        })
    }

    /// Cosine-sum coefficients `a_j` (all positive; the signs alternate in the sum).
    pub fn coefficients(self) -> &'static [f64] {
        match self {
            WindowKind::Hann => &[0.5, 0.5],
            WindowKind::Hamming => &[0.54, 0.46],
            WindowKind::BlackmanHarris => &[0.35875, 0.48829, 0.14128, 0.01168],
            WindowKind::FlatTop => &[1.0, 1.938_337_9, 1.304_520_2, 0.402_827_0, 0.035_066_5],
            WindowKind::Rectangular => &[1.0],
        }
    }

    /// Equivalent noise bandwidth in bins, `N·Σw²/(Σw)²`, in closed form for the periodic window
    /// (valid for N > 2·terms, i.e. every accepted size): `(a_0² + ½·Σ_{j≥1} a_j²)/a_0²`.
    /// Hann 1.5, Hamming 1.3628, Blackman-Harris 2.0044, flat-top 3.8112, rectangular 1.
    pub fn enbw_bins(self) -> f64 {
        let a = self.coefficients();
        let rest: f64 = a[1..].iter().map(|c| c * c).sum();
        (a[0] * a[0] + 0.5 * rest) / (a[0] * a[0])
    }

    /// Half-width in bins of the neighbourhood [`tone_level_db_with`] sums around a peak: wide
    /// enough to hold the main lobe plus the first sidelobes (rectangular: 16 bins, its sinc
    /// sidelobes decay slowly; still ≈ −0.03 dB short for a tone half-way between bins).
    pub fn tone_half_width(self) -> usize {
        match self {
            WindowKind::Hann | WindowKind::Hamming => 3,
            WindowKind::BlackmanHarris => 4,
            WindowKind::FlatTop => 6,
            WindowKind::Rectangular => 16,
        }
    }
}

impl std::fmt::Display for WindowKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for WindowKind {
    type Err = String;
    /// See [`WindowKind::from_name`]; the error lists the accepted names.
    fn from_str(s: &str) -> Result<WindowKind, String> {
        WindowKind::from_name(s).ok_or_else(|| {
            format!(
                "unknown window '{s}'; windows: hann, hamming, blackman-harris, flat-top, rectangular"
            )
        })
    }
}

/// The periodic window of `n` points: `w[i] = Σ_j (−1)^j a_j·cos(2π j i / n)` with the
/// coefficients of [`WindowKind::coefficients`], evaluated in `f64` and rounded to `f32`.
/// Unscaled (Hann peaks at 1.0, the flat-top at ≈ 4.64 and dips below 0 near its ends).
/// `n == 0` gives an empty vector, `n == 1` gives `[Σ_j (−1)^j a_j]`.
pub fn window_values(kind: WindowKind, n: usize) -> Vec<f32> {
    window_f64(kind, n).into_iter().map(|w| w as f32).collect()
}

fn window_f64(kind: WindowKind, n: usize) -> Vec<f64> {
    let a = kind.coefficients();
    let nf = n as f64;
    (0..n)
        .map(|i| {
            let z = std::f64::consts::TAU * i as f64 / nf;
            a.iter()
                .enumerate()
                .map(|(j, c)| {
                    let sign = if j % 2 == 0 { 1.0 } else { -1.0 };
                    sign * c * (j as f64 * z).cos()
                })
                .sum()
        })
        .collect()
}

/// Streaming STFT: push samples in any amounts, pop one dB column per hop.
pub struct Stft {
    fft_size: usize,
    hop: usize,
    window: WindowKind,
    /// Real FFT of size N.
    fft: Arc<dyn RealToComplex<f32>>,
    /// Periodic window times 2/Σw (coherent gain and one-sided factor folded in).
    window_scaled: Vec<f32>,
    /// FFT input: the windowed frame; used as scratch by the FFT.
    frame: Vec<f32>,
    /// FFT output X_k, k = 0..=N/2.
    spectrum: Vec<Complex<f32>>,
    scratch: Vec<Complex<f32>>,
    /// Levels of one column, for callers whose output slice is shorter than `bins()`.
    column: Vec<f32>,
    /// Pending samples are `pending[start..]`.
    pending: Vec<f32>,
    start: usize,
}

impl std::fmt::Debug for Stft {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stft")
            .field("fft_size", &self.fft_size)
            .field("hop", &self.hop)
            .field("window", &self.window)
            .field("pending", &self.pending())
            .finish_non_exhaustive()
    }
}

impl Stft {
    /// Plans an STFT of `fft_size` samples (a power of two in 16..=65536) advancing by `hop`
    /// samples (1..=fft_size) with the periodic Hann window. Allocates the window, FFT buffers and
    /// a pending-sample buffer.
    ///
    /// # Errors
    ///
    /// [`AudioError::InvalidFftSize`], [`AudioError::InvalidHop`].
    pub fn new(fft_size: usize, hop: usize) -> Result<Stft, AudioError> {
        Self::with_window(fft_size, hop, WindowKind::Hann)
    }

    /// As [`new`](Self::new) with the window `window`.
    ///
    /// # Errors
    ///
    /// [`AudioError::InvalidFftSize`], [`AudioError::InvalidHop`].
    pub fn with_window(
        fft_size: usize,
        hop: usize,
        window: WindowKind,
    ) -> Result<Stft, AudioError> {
        if !fft_size.is_power_of_two() || !(MIN_FFT_SIZE..=MAX_FFT_SIZE).contains(&fft_size) {
            return Err(AudioError::InvalidFftSize { fft_size });
        }
        if hop == 0 || hop > fft_size {
            return Err(AudioError::InvalidHop { hop, fft_size });
        }
        let fft = RealFftPlanner::<f32>::new().plan_fft_forward(fft_size);
        let w = window_f64(window, fft_size);
        let sum: f64 = w.iter().sum();
        let window_scaled = w.iter().map(|w| (2.0 * w / sum) as f32).collect();
        let frame = fft.make_input_vec();
        let spectrum = fft.make_output_vec();
        let scratch = fft.make_scratch_vec();
        // Room for several frames so that typical pushes between pops never reallocate.
        let pending = Vec::with_capacity(4 * fft_size.max(16_384));
        Ok(Stft {
            fft_size,
            hop,
            window,
            fft,
            window_scaled,
            frame,
            spectrum,
            scratch,
            column: vec![0.0; fft_size / 2 + 1],
            pending,
            start: 0,
        })
    }

    /// `Stft::new(DEFAULT_FFT_SIZE, DEFAULT_HOP)`: N = 2048, H = 512.
    ///
    /// # Panics
    ///
    /// Never: the default parameters are valid.
    pub fn with_defaults() -> Stft {
        Self::new(DEFAULT_FFT_SIZE, DEFAULT_HOP).expect("default STFT parameters are valid")
    }

    /// FFT size N, samples.
    pub fn fft_size(&self) -> usize {
        self.fft_size
    }

    /// Hop H, samples.
    pub fn hop(&self) -> usize {
        self.hop
    }

    /// The analysis window.
    pub fn window(&self) -> WindowKind {
        self.window
    }

    /// [`tone_level_db_with`] for this STFT's window.
    pub fn tone_level_db(&self, column_db: &[f32], peak: usize) -> f32 {
        tone_level_db_with(column_db, peak, self.window)
    }

    /// Bins per column: N/2 + 1 (0 Hz to the Nyquist frequency inclusive).
    pub fn bins(&self) -> usize {
        self.fft_size / 2 + 1
    }

    /// Centre frequency of bin `k` in Hz: `k · sample_rate / N`.
    pub fn bin_hz(&self, sample_rate: u32, k: usize) -> f32 {
        (k as f64 * f64::from(sample_rate) / self.fft_size as f64) as f32
    }

    /// Samples pushed and not yet consumed by `pop_column`.
    pub fn pending(&self) -> usize {
        self.pending.len() - self.start
    }

    /// Columns `pop_column` would return now: `floor((pending − N)/H) + 1` when `pending ≥ N`,
    /// else 0.
    pub fn columns_ready(&self) -> usize {
        let p = self.pending();
        if p < self.fft_size {
            0
        } else {
            (p - self.fft_size) / self.hop + 1
        }
    }

    /// Discards pending samples (e.g. when the source changes).
    pub fn reset(&mut self) {
        self.pending.clear();
        self.start = 0;
    }

    /// Appends samples. Does not allocate while the pending samples fit the capacity reserved at
    /// construction (4·max(N, 16384)); consumed samples are compacted away first.
    pub fn push(&mut self, samples: &[f32]) {
        if self.start > 0 && self.pending.len() + samples.len() > self.pending.capacity() {
            self.pending.copy_within(self.start.., 0);
            self.pending.truncate(self.pending.len() - self.start);
            self.start = 0;
        }
        self.pending.extend_from_slice(samples);
    }

    /// Computes the column of the oldest N pending samples into `out_db` (dBFS, see the module
    /// docs) and consumes one hop. Returns `false` (and leaves `out_db` alone) when fewer than N
    /// samples are pending. `out_db` should hold [`bins`](Self::bins) values; if it is shorter,
    /// only its first `out_db.len()` bins are written, if longer the rest is left untouched.
    /// Allocation-free.
    pub fn pop_column(&mut self, out_db: &mut [f32]) -> bool {
        if self.pending() < self.fft_size {
            return false;
        }
        let n_out = out_db.len().min(self.bins());
        let Stft {
            fft,
            window_scaled,
            frame,
            spectrum,
            scratch,
            column,
            pending,
            start,
            fft_size,
            ..
        } = self;
        let src = &pending[*start..*start + *fft_size];
        // Write straight into the caller's slice when it holds the whole column.
        let whole = out_db.len() >= column.len();
        let out = if whole {
            &mut out_db[..column.len()]
        } else {
            &mut column[..]
        };
        // The buffers have the planned sizes, so the FFT cannot fail.
        let mut fft_into = |frame: &mut Vec<f32>, spectrum: &mut Vec<Complex<f32>>| {
            fft.process_with_scratch(frame, spectrum, scratch)
                .expect("buffers of the planned sizes");
        };
        if window_frame(frame, src, window_scaled) {
            fft_into(frame, spectrum);
            if !levels_db(out, spectrum, 0.0) {
                // Some |X_k|² overflowed f32 (samples far beyond full scale): redo the column
                // with the samples scaled by 2^−100 (exact), levels raised to match.
                window_frame(frame, src, window_scaled);
                for x in frame.iter_mut() {
                    *x *= RESCALE;
                }
                fft_into(frame, spectrum);
                levels_db(out, spectrum, RESCALE_DB);
            }
        } else {
            out.fill(DB_FLOOR);
        }
        if !whole {
            out_db[..n_out].copy_from_slice(&column[..n_out]);
        }
        self.start += self.hop;
        if self.start == self.pending.len() {
            self.pending.clear();
            self.start = 0;
        }
        true
    }
}

/// The loudest bin of a column: `(bin index, level in dB)`. NaN entries are ignored; ties go to
/// the lowest bin; an empty (or all-NaN) column gives `(0, DB_FLOOR)`.
pub fn dominant(column_db: &[f32]) -> (usize, f32) {
    let mut best = (0usize, f32::NEG_INFINITY);
    for (k, &v) in column_db.iter().enumerate() {
        if v > best.1 {
            best = (k, v);
        }
    }
    if best.1 == f32::NEG_INFINITY {
        (0, DB_FLOOR)
    } else {
        best
    }
}

/// Level of a steady tone near bin `peak` for the Hann window: `tone_level_db_with(column_db,
/// peak, WindowKind::Hann)`.
pub fn tone_level_db(column_db: &[f32], peak: usize) -> f32 {
    tone_level_db_with(column_db, peak, WindowKind::Hann)
}

/// Level of a steady tone near bin `peak`, dBFS, independent of where the tone falls between bins:
/// the power of bins `peak−h..=peak+h` (`h` = [`WindowKind::tone_half_width`], clipped to the
/// column) divided by the window's equivalent noise bandwidth,
/// `A² = Σ_k amplitude_k² / ENBW` (Parseval; Heinzel et al. 2002 §10). Meant for tones at least
/// `h + 1` bins away from 0 Hz and Nyquist (where the c_k = 1 bins and the mirrored lobe break
/// the sum). Floored at [`DB_FLOOR`]; NaN entries count as silence.
pub fn tone_level_db_with(column_db: &[f32], peak: usize, window: WindowKind) -> f32 {
    if column_db.is_empty() {
        return DB_FLOOR;
    }
    let h = window.tone_half_width();
    let lo = peak.saturating_sub(h).min(column_db.len() - 1);
    let hi = peak.saturating_add(h).min(column_db.len() - 1);
    let mut power = 0.0f64;
    for &db in &column_db[lo..=hi] {
        if db > DB_FLOOR {
            power += 10f64.powf(f64::from(db) / 10.0);
        }
    }
    let db = (10.0 * (power / window.enbw_bins()).log10()) as f32;
    if db > DB_FLOOR { db } else { DB_FLOOR }
}

#[cfg(test)]
mod fast_log_tests {
    use super::fast_log2;

    #[test]
    fn fast_log2_matches_std_to_an_f32_ulp() {
        // Powers from 1e-20 to 1e20, dense in the mantissa.
        let mut worst = 0f64;
        let mut x = 1e-20f64;
        while x < 1e20 {
            let got = fast_log2(x as f32) as f64;
            let want = (x as f32 as f64).log2();
            worst = worst.max((got - want).abs());
            x *= 1.000_37;
        }
        // f32 output: at |log2| ≈ 66 one ulp is 7.6e-6, so that is the floor (3e-5 dB).
        assert!(worst < 1e-5, "worst abs error {worst}");
        assert_eq!(fast_log2(1.0), 0.0);
        assert_eq!(fast_log2(2.0), 1.0);
        assert!(fast_log2(0.0) <= -126.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameter_validation() {
        for (n, h) in [
            (0, 1),
            (8, 1),
            (1000, 10),
            (131_072, 512),
            (2048, 0),
            (2048, 2049),
        ] {
            let err = Stft::new(n, h).unwrap_err();
            let msg = err.to_string();
            assert!(msg.starts_with("STFT"), "{msg}");
        }
        assert!(Stft::new(16, 16).is_ok());
        assert!(Stft::new(65_536, 1).is_ok());
        let s = Stft::with_defaults();
        assert_eq!((s.fft_size(), s.hop(), s.bins()), (2048, 512, 1025));
        assert_eq!(s.bin_hz(48_000, 1024), 24_000.0);
        assert_eq!(s.bin_hz(48_000, 1), 23.4375);
    }

    #[test]
    fn window_is_periodic_hann_with_exact_gain() {
        let s = Stft::new(16, 4).unwrap();
        // Periodic Hann of N = 16: w[0] = 0, w[8] = 1 (peak), w[4] = 0.5; Σw = 8; scaled by 2/8.
        assert_eq!(s.window_scaled[0], 0.0);
        assert!((s.window_scaled[8] - 0.25).abs() < 1e-7);
        assert!((s.window_scaled[4] - 0.125).abs() < 1e-7);
        assert!((s.window_scaled[12] - 0.125).abs() < 1e-7);
    }

    #[test]
    fn dc_and_nyquist_read_full_scale() {
        let mut s = Stft::new(64, 64).unwrap();
        let mut col = vec![0.0; s.bins()];
        s.push(&[1.0; 64]);
        assert!(s.pop_column(&mut col));
        assert!(col[0].abs() < 1e-4, "DC {}", col[0]);
        let alt: Vec<f32> = (0..64)
            .map(|i| if i % 2 == 0 { 1.0 } else { -1.0 })
            .collect();
        s.push(&alt);
        assert!(s.pop_column(&mut col));
        assert!(col[32].abs() < 1e-4, "Nyquist {}", col[32]);
    }

    #[test]
    fn dominant_ignores_nan_and_handles_empty() {
        assert_eq!(dominant(&[]), (0, DB_FLOOR));
        assert_eq!(dominant(&[f32::NAN, -3.0, -1.0, -1.0]), (2, -1.0));
        assert_eq!(dominant(&[f32::NAN]), (0, DB_FLOOR));
    }

    #[test]
    fn push_compacts_without_losing_order() {
        let mut s = Stft::new(16, 16).unwrap();
        let cap = s.pending.capacity();
        let ramp: Vec<f32> = (0..cap as u32).map(|i| i as f32).collect();
        s.push(&ramp);
        let mut col = vec![0.0; s.bins()];
        assert!(s.pop_column(&mut col));
        s.push(&[1.0e9; 8]);
        assert_eq!(s.pending.capacity(), cap, "compacted instead of growing");
        assert_eq!(s.pending(), cap - 16 + 8);
        assert_eq!(s.pending[s.start], 16.0);
    }

    /// Columns of the rectangular window against the levels of a naive f64 real DFT,
    /// `20·log10(c_k·|X_k|/N)`.
    #[test]
    fn columns_match_a_naive_real_dft() {
        use std::f64::consts::TAU;
        let mut state = 0x2545_f491u32;
        for n in [16usize, 32, 64, 128, 1024] {
            let x: Vec<f64> = (0..n)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 17;
                    state ^= state << 5;
                    f64::from(state) / f64::from(u32::MAX) - 0.5
                })
                .collect();
            let want: Vec<f64> = (0..=n / 2)
                .map(|k| {
                    let (re, im) = x.iter().enumerate().fold((0.0, 0.0), |(re, im), (j, &v)| {
                        let a = TAU * (k * j) as f64 / n as f64;
                        (re + v * a.cos(), im - v * a.sin())
                    });
                    let c = if k == 0 || k == n / 2 { 1.0 } else { 2.0 };
                    20.0 * (c * (re * re + im * im).sqrt() / n as f64).log10()
                })
                .collect();
            let mut s = Stft::with_window(n, n, WindowKind::Rectangular).unwrap();
            let samples: Vec<f32> = x.iter().map(|&v| v as f32).collect();
            s.push(&samples);
            let mut out = vec![0.0f32; s.bins()];
            assert!(s.pop_column(&mut out));
            for (k, (&g, &w)) in out.iter().zip(&want).enumerate() {
                assert!(
                    (f64::from(g) - w).abs() < 1e-3,
                    "N = {n}, bin {k}: {g} vs {w}"
                );
            }
        }
    }

    #[test]
    fn short_output_slice_does_not_panic() {
        let mut s = Stft::new(16, 8).unwrap();
        s.push(&[0.5; 32]);
        let mut short = [1.0f32; 3];
        assert!(s.pop_column(&mut short));
        let mut empty: [f32; 0] = [];
        assert!(s.pop_column(&mut empty));
    }
}
