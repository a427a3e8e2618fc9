//! Short-time Fourier transform of the mono sample stream, in dBFS.
//!
//! Frames of `N` samples (`fft_size`, a power of two), advanced by `H` samples (`hop`), are
//! multiplied by a **periodic** ("DFT-even") Hann window `w[n] = 0.5 − 0.5·cos(2πn/N)`,
//! n = 0..N−1 (Harris 1978, "On the use of windows for harmonic analysis with the discrete Fourier
//! transform", Proc. IEEE 66(1)); its sum is exactly `Σw = N/2` and its equivalent noise bandwidth
//! is exactly 1.5 bins ([`HANN_ENBW_BINS`]). The real FFT (`realfft`, planned once) gives
//! `X_k`, k = 0..=N/2.
//!
//! Level of bin k, scaled so that a full-scale sine centred on a bin reads 0 dBFS
//! (one-sided amplitude spectrum with the window's coherent gain compensated; Heinzel, Rüdiger &
//! Schilling 2002, "Spectrum and spectral density estimation by the DFT", §9):
//!
//! ```text
//! amplitude_k = c_k·|X_k| / Σw,   c_k = 2 except c_0 = c_{N/2} = 1
//! dB_k        = max(20·log10(amplitude_k), DB_FLOOR)
//! ```
//!
//! The factor `c_k/Σw` is folded into the window (so the loop multiplies once per sample), with the
//! DC and Nyquist bins halved afterwards. A frame containing a NaN or infinite sample yields
//! [`DB_FLOOR`] in every bin (never NaN); silence yields exactly `DB_FLOOR`.
//!
//! A tone between two bins reads lower at its peak bin (scalloping: −1.42 dB at worst for Hann,
//! −0.63 dB at a third of a bin); [`tone_level_db`] sums the power around the peak instead and is
//! independent of where the tone falls.

use std::sync::Arc;

use realfft::num_complex::Complex;
use realfft::{RealFftPlanner, RealToComplex};

use super::AudioError;

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

/// Streaming STFT: push samples in any amounts, pop one dB column per hop.
pub struct Stft {
    fft_size: usize,
    hop: usize,
    fft: Arc<dyn RealToComplex<f32>>,
    /// Periodic Hann window times 2/Σw (coherent gain and one-sided factor folded in).
    window_scaled: Vec<f32>,
    /// FFT input (windowed frame); used as scratch by the FFT.
    frame: Vec<f32>,
    spectrum: Vec<Complex<f32>>,
    scratch: Vec<Complex<f32>>,
    /// Pending samples are `pending[start..]`.
    pending: Vec<f32>,
    start: usize,
}

impl std::fmt::Debug for Stft {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stft")
            .field("fft_size", &self.fft_size)
            .field("hop", &self.hop)
            .field("pending", &self.pending())
            .finish_non_exhaustive()
    }
}

impl Stft {
    /// Plans an STFT of `fft_size` samples (a power of two in 16..=65536) advancing by `hop`
    /// samples (1..=fft_size). Allocates the window, FFT buffers and a pending-sample buffer.
    ///
    /// # Errors
    ///
    /// [`AudioError::InvalidFftSize`], [`AudioError::InvalidHop`].
    pub fn new(fft_size: usize, hop: usize) -> Result<Stft, AudioError> {
        if !fft_size.is_power_of_two() || !(MIN_FFT_SIZE..=MAX_FFT_SIZE).contains(&fft_size) {
            return Err(AudioError::InvalidFftSize { fft_size });
        }
        if hop == 0 || hop > fft_size {
            return Err(AudioError::InvalidHop { hop, fft_size });
        }
        let fft = RealFftPlanner::<f32>::new().plan_fft_forward(fft_size);
        let n = fft_size as f64;
        let window: Vec<f64> = (0..fft_size)
            .map(|i| 0.5 - 0.5 * (std::f64::consts::TAU * i as f64 / n).cos())
            .collect();
        let sum: f64 = window.iter().sum();
        let window_scaled = window.iter().map(|w| (2.0 * w / sum) as f32).collect();
        let frame = fft.make_input_vec();
        let spectrum = fft.make_output_vec();
        let scratch = fft.make_scratch_vec();
        // Room for several frames so that typical pushes between pops never reallocate.
        let pending = Vec::with_capacity(4 * fft_size.max(16_384));
        Ok(Stft {
            fft_size,
            hop,
            fft,
            window_scaled,
            frame,
            spectrum,
            scratch,
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
        let bins = self.bins();
        let n_out = out_db.len().min(bins);
        let src = &self.pending[self.start..self.start + self.fft_size];
        let mut finite = true;
        for ((f, &x), &w) in self.frame.iter_mut().zip(src).zip(&self.window_scaled) {
            finite &= x.is_finite();
            *f = x * w;
        }
        let ok = finite
            && self
                .fft
                .process_with_scratch(&mut self.frame, &mut self.spectrum, &mut self.scratch)
                .is_ok();
        if ok {
            for (k, (o, x)) in out_db[..n_out].iter_mut().zip(&self.spectrum).enumerate() {
                // window_scaled carries 2/Σw; DC and Nyquist take 1/Σw.
                let edge = k == 0 || k == bins - 1;
                let amp = if edge { 0.5 * x.norm() } else { x.norm() };
                let db = 20.0 * amp.log10();
                *o = if db > DB_FLOOR { db } else { DB_FLOOR };
            }
        } else {
            out_db[..n_out].fill(DB_FLOOR);
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

/// Level of a steady tone near bin `peak`, dBFS, independent of where the tone falls between bins:
/// the power of bins `peak−3..=peak+3` (clipped to the column) divided by the Hann window's
/// equivalent noise bandwidth, `A² = Σ_k amplitude_k² / 1.5` (Parseval; Heinzel et al. 2002 §10).
/// Meant for tones at least 4 bins away from 0 Hz and Nyquist (where the c_k = 1 bins and the
/// mirrored lobe break the sum). Floored at [`DB_FLOOR`]; NaN entries count as silence.
pub fn tone_level_db(column_db: &[f32], peak: usize) -> f32 {
    if column_db.is_empty() {
        return DB_FLOOR;
    }
    let lo = peak.saturating_sub(3).min(column_db.len() - 1);
    let hi = (peak + 3).min(column_db.len() - 1);
    let mut power = 0.0f64;
    for &db in &column_db[lo..=hi] {
        if db > DB_FLOOR {
            power += 10f64.powf(f64::from(db) / 10.0);
        }
    }
    let db = (10.0 * (power / f64::from(HANN_ENBW_BINS)).log10()) as f32;
    if db > DB_FLOOR { db } else { DB_FLOOR }
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
