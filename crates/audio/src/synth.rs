//! The built-in synthetic signals: deterministic, at 48 kHz, useful with no sound card.
//!
//! [`SynthSignal`] selects one of: the default mix below ([`SynthSignal::ChirpTones`]), a sine, a
//! two-tone, the chirp alone, white noise or pink noise. Every sample of every signal is a
//! closed-form function of its index `n` (and of the seed, for the noises), so the output never
//! depends on how it is cut into buffers and seeking is exact.
//!
//! The default mix, [`SynthSignal::ChirpTones`]:
//!
//! `x[n] = Σ_i a_i·sin(2π f_i n / fs) + a_c·sin(φ_c(n mod L))` with
//! - steady tones 440 Hz at amplitude 0.25 and 3000 Hz at amplitude 0.1 ([`TONES`]);
//! - a linear chirp from [`CHIRP_START_HZ`] (100 Hz) to [`CHIRP_END_HZ`] (8 kHz) over
//!   [`CHIRP_PERIOD_S`] (5 s), repeating, at amplitude [`CHIRP_AMPLITUDE`] (0.3). Its phase is the
//!   integral of the instantaneous frequency `f(t) = f0 + (f1 − f0)·t/T`:
//!   `φ_c(t) = 2π (f0 t + (f1 − f0) t² / (2T))` for `t = (n mod L)/fs ∈ [0, T)`, `L = T·fs`.
//!   Over one sweep the phase advances by `2π T (f0 + f1)/2 = 2π · 20250` whole cycles, so the
//!   phase is continuous (mod 2π) where the sweep restarts; the frequency jumps back to f0 there.
//!
//! Every sample is a closed-form function of its index `n` (tone phases use `n mod fs`, exact
//! because the tone frequencies are whole hertz), so the output does not depend on how it is cut
//! into buffers and [`Synth::seek`] is exact. Peak amplitude ≤ 0.25 + 0.1 + 0.3 = 0.65.

use std::f64::consts::TAU;

/// Sample rate of the synthetic source, in Hz.
pub const SYNTH_SAMPLE_RATE: u32 = 48_000;

/// Steady tones `(frequency in Hz (whole hertz), amplitude)`.
pub(crate) const TONES: [(f64, f64); 2] = [(440.0, 0.25), (3000.0, 0.1)];

/// Chirp start frequency, Hz.
pub(crate) const CHIRP_START_HZ: f64 = 100.0;
/// Chirp end frequency, Hz.
pub(crate) const CHIRP_END_HZ: f64 = 8000.0;
/// Chirp period (duration of one sweep), seconds; a whole number of seconds.
pub(crate) const CHIRP_PERIOD_S: f64 = 5.0;
/// Chirp amplitude (full scale = 1).
pub(crate) const CHIRP_AMPLITUDE: f64 = 0.3;

/// Frequency of [`SynthSignal::Sine`], Hz.
pub(crate) const SINE_HZ: f64 = 1000.0;
/// Amplitude of [`SynthSignal::Sine`] (−6.02 dBFS).
pub(crate) const SINE_AMPLITUDE: f64 = 0.5;
/// The two tones of [`SynthSignal::TwoTone`]: `(Hz, amplitude)`, each −12.04 dBFS.
pub(crate) const TWO_TONES: [(f64, f64); 2] = [(1000.0, 0.25), (3000.0, 0.25)];
/// Amplitude of [`SynthSignal::Chirp`] (the chirp alone).
pub(crate) const CHIRP_ALONE_AMPLITUDE: f64 = 0.5;
/// Peak amplitude of [`SynthSignal::WhiteNoise`]: uniform in `[−0.5, 0.5)`, RMS `0.5/√3`.
pub(crate) const WHITE_AMPLITUDE: f64 = 0.5;
/// Rows of the Voss-McCartney pink-noise generator (pink from about `fs / 2^ROWS` = 0.7 Hz up).
pub(crate) const PINK_ROWS: u32 = 16;

/// Which synthetic signal to generate.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum SynthSignal {
    /// The default mix: tones 440 Hz (0.25) and 3 kHz (0.1) plus the 100 Hz → 8 kHz chirp (0.3).
    #[default]
    ChirpTones,
    /// [`SINE_HZ`] at [`SINE_AMPLITUDE`].
    Sine,
    /// The two tones of [`TWO_TONES`].
    TwoTone,
    /// The linear chirp alone, [`CHIRP_START_HZ`] → [`CHIRP_END_HZ`] over [`CHIRP_PERIOD_S`],
    /// at [`CHIRP_ALONE_AMPLITUDE`].
    Chirp,
    /// White noise: independent uniform samples in `[−0.5, 0.5)` from a counter-based hash
    /// (SplitMix64 finaliser, Steele, Lea & Flood 2014) of `(seed, n)`.
    WhiteNoise,
    /// Pink noise (−3 dB/octave), Voss-McCartney algorithm (R. F. Voss & J. Clarke 1978, "1/f
    /// noise in music"; J. McCartney's variant that updates one row per sample, the row given by
    /// the number of trailing zeros of `n`, as described by Phil Burk, "Generation of pink noise",
    /// 1999): the sum of [`PINK_ROWS`] uniform random rows, row `j` redrawn every `2^(j+1)`
    /// samples with offset `2^j`, plus one fresh white value per sample, divided by
    /// `PINK_ROWS + 1` (so |x| < 1, RMS ≈ 0.14). Row `j`'s value at `n` is the hash of
    /// `(seed, j, (n + 2^j) >> (j+1))`, which makes it a closed form of `n`.
    PinkNoise,
}

impl SynthSignal {
    /// Every signal, in the order the UI lists them.
    pub const ALL: &'static [SynthSignal] = &[
        SynthSignal::ChirpTones,
        SynthSignal::Sine,
        SynthSignal::TwoTone,
        SynthSignal::Chirp,
        SynthSignal::WhiteNoise,
        SynthSignal::PinkNoise,
    ];

    /// The name used after `--audio synthetic:`: `chirp-tones`, `sine`, `two-tone`, `chirp`,
    /// `white`, `pink`.
    pub fn name(self) -> &'static str {
        match self {
            SynthSignal::ChirpTones => "chirp-tones",
            SynthSignal::Sine => "sine",
            SynthSignal::TwoTone => "two-tone",
            SynthSignal::Chirp => "chirp",
            SynthSignal::WhiteNoise => "white",
            SynthSignal::PinkNoise => "pink",
        }
    }

    /// Parses a [`name`](Self::name) case-insensitively; `default`, `white-noise`, `pink-noise`,
    /// `twotone` and `noise` (white) are accepted too.
    pub fn from_name(s: &str) -> Option<SynthSignal> {
        let v = s.trim().to_ascii_lowercase().replace('_', "-");
        Some(match v.as_str() {
            "chirp-tones" | "default" | "" => SynthSignal::ChirpTones,
            "sine" => SynthSignal::Sine,
            "two-tone" | "twotone" => SynthSignal::TwoTone,
            "chirp" => SynthSignal::Chirp,
            "white" | "white-noise" | "noise" => SynthSignal::WhiteNoise,
            "pink" | "pink-noise" => SynthSignal::PinkNoise,
            _ => return None,
        })
    }
}

impl std::fmt::Display for SynthSignal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// SplitMix64 finaliser (Steele, Lea & Flood 2014, "Fast splittable pseudorandom number
/// generators"): a bijective 64-bit mix.
fn mix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Uniform in `[−1, 1)` from `(seed, stream, index)`, 53 random bits.
fn uniform(seed: u64, stream: u64, index: u64) -> f64 {
    let h = mix64(mix64(seed ^ stream.wrapping_mul(0xD1B5_4A32_D192_ED03)) ^ index);
    (h >> 11) as f64 * (2.0 / (1u64 << 53) as f64) - 1.0
}

/// The synthetic generator: a signal, a seed (noises only), a position (sample index) and
/// closed-form formulas.
#[derive(Clone, Debug, Default)]
pub struct Synth {
    /// Index of the next sample `fill` produces.
    n: u64,
    signal: SynthSignal,
    seed: u64,
}

impl Synth {
    /// The default mix ([`SynthSignal::ChirpTones`]) positioned at sample 0.
    pub fn new() -> Synth {
        Synth::default()
    }

    /// `signal` with `seed` (used by the noises only) positioned at sample 0.
    pub fn with_signal(signal: SynthSignal, seed: u64) -> Synth {
        Synth { n: 0, signal, seed }
    }

    /// The signal generated.
    pub fn signal(&self) -> SynthSignal {
        self.signal
    }

    /// Sample `n` of this generator's signal (the position is not used or changed).
    pub fn value_at(&self, n: u64) -> f32 {
        signal_at(self.signal, self.seed, n)
    }

    /// Sample rate in Hz ([`SYNTH_SAMPLE_RATE`]).
    pub fn sample_rate(&self) -> u32 {
        SYNTH_SAMPLE_RATE
    }

    /// Index of the next sample [`fill`](Self::fill) produces.
    pub fn position(&self) -> u64 {
        self.n
    }

    /// Moves to sample index `n` (the next `fill` starts there).
    pub fn seek(&mut self, n: u64) {
        self.n = n;
    }

    /// Sample number `n` of the default mix (mono, in [-0.65, 0.65]).
    pub fn sample_at(n: u64) -> f32 {
        let fs = u64::from(SYNTH_SAMPLE_RATE);
        let fs_f = fs as f64;
        // Tones: whole-hertz frequencies complete whole cycles every second.
        let within_second = (n % fs) as f64;
        let mut x = 0.0f64;
        for (f, a) in TONES {
            x += a * (TAU * f * within_second / fs_f).sin();
        }
        // Chirp: closed-form integral of the linear instantaneous frequency.
        x += CHIRP_AMPLITUDE * chirp_unit(n);
        x as f32
    }

    /// Instantaneous chirp frequency at sample `n`, Hz: `f0 + (f1 − f0)·t/T`, `t = (n mod L)/fs`.
    pub fn chirp_hz_at(n: u64) -> f64 {
        let fs_f = f64::from(SYNTH_SAMPLE_RATE);
        let period = (CHIRP_PERIOD_S * fs_f) as u64;
        let t = (n % period) as f64 / fs_f;
        CHIRP_START_HZ + (CHIRP_END_HZ - CHIRP_START_HZ) * t / CHIRP_PERIOD_S
    }

    /// Writes the next `out.len()` samples and advances the position by as many. Never allocates.
    pub fn fill(&mut self, out: &mut [f32]) {
        for (i, o) in out.iter_mut().enumerate() {
            *o = signal_at(self.signal, self.seed, self.n + i as u64);
        }
        self.n += out.len() as u64;
    }
}

/// Sample `n` of `signal` (seed used by the noises only).
pub fn signal_at(signal: SynthSignal, seed: u64, n: u64) -> f32 {
    let fs = u64::from(SYNTH_SAMPLE_RATE);
    let fs_f = fs as f64;
    // Whole-hertz tones complete whole cycles every second: phase from n mod fs is exact.
    let tone = |f: f64, a: f64| a * (TAU * f * (n % fs) as f64 / fs_f).sin();
    match signal {
        SynthSignal::ChirpTones => Synth::sample_at(n),
        SynthSignal::Sine => tone(SINE_HZ, SINE_AMPLITUDE) as f32,
        SynthSignal::TwoTone => TWO_TONES.iter().map(|&(f, a)| tone(f, a)).sum::<f64>() as f32,
        SynthSignal::Chirp => (CHIRP_ALONE_AMPLITUDE * chirp_unit(n)) as f32,
        SynthSignal::WhiteNoise => (WHITE_AMPLITUDE * uniform(seed, u64::MAX, n)) as f32,
        SynthSignal::PinkNoise => {
            let mut sum = uniform(seed, u64::MAX, n);
            for j in 0..PINK_ROWS {
                let epoch = (n + (1u64 << j)) >> (j + 1);
                sum += uniform(seed, u64::from(j), epoch);
            }
            (sum / f64::from(PINK_ROWS + 1)) as f32
        }
    }
}

/// The unit-amplitude chirp at sample `n` (see the module docs).
fn chirp_unit(n: u64) -> f64 {
    let fs_f = f64::from(SYNTH_SAMPLE_RATE);
    let period = (CHIRP_PERIOD_S * fs_f) as u64;
    let t = (n % period) as f64 / fs_f;
    let k = (CHIRP_END_HZ - CHIRP_START_HZ) / CHIRP_PERIOD_S;
    let cycles = CHIRP_START_HZ * t + 0.5 * k * t * t;
    (TAU * cycles.fract()).sin()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stft::{Stft, dominant};

    #[test]
    fn chunking_does_not_change_the_signal() {
        let mut one = vec![0.0; 10_000];
        Synth::new().fill(&mut one);
        let mut s = Synth::new();
        let mut pieces = Vec::new();
        for len in [1usize, 7, 1000, 4096, 4896] {
            let mut buf = vec![0.0; len];
            s.fill(&mut buf);
            pieces.extend_from_slice(&buf);
        }
        assert_eq!(pieces, one);
        assert_eq!(s.position(), 10_000);
    }

    #[test]
    fn bounded_and_phase_continuous_including_sweep_restart() {
        // |x[n+1] − x[n]| ≤ Σ a_i·2π f_i/fs (max slope of each sine times one sample) — a jump in
        // phase would break this. Checked over the first second and across the 5 s restart.
        let fs = 48_000.0;
        let bound = TONES.iter().map(|(f, a)| a * TAU * f / fs).sum::<f64>()
            + CHIRP_AMPLITUDE * TAU * CHIRP_END_HZ / fs;
        let bound = bound as f32 + 1e-5;
        for start in [0u64, 5 * 48_000 - 24_000, 10 * 48_000 - 10] {
            let mut s = Synth::new();
            s.seek(start);
            let mut x = vec![0.0; 48_000];
            s.fill(&mut x);
            for w in x.windows(2) {
                assert!(
                    (w[1] - w[0]).abs() <= bound,
                    "jump {} > {bound}",
                    w[1] - w[0]
                );
            }
            assert!(x.iter().all(|v| v.abs() <= 0.65 + 1e-6));
        }
    }

    #[test]
    fn first_samples_match_the_formula() {
        // n = 0: all phases 0. n = 12: tones at 440·12/48000 = 0.11 and 3000·12/48000 = 0.75
        // cycles; chirp t = 0.00025 s, cycles = 100·t + 790·t² = 0.025 + 4.9375e-5.
        assert_eq!(Synth::sample_at(0), 0.0);
        let expect = 0.25 * (TAU * 0.11).sin()
            + 0.1 * (TAU * 0.75).sin()
            + 0.3 * (TAU * (0.025 + 4.9375e-5)).sin();
        assert!((Synth::sample_at(12) as f64 - expect).abs() < 1e-6);
        assert_eq!(Synth::chirp_hz_at(0), 100.0);
        assert_eq!(Synth::chirp_hz_at(120_000), 4050.0);
        assert_eq!(Synth::chirp_hz_at(240_000), 100.0);
    }

    #[test]
    fn dominant_frequency_is_a_tone_or_the_chirp() {
        let fs = 48_000u32;
        let mut x = vec![0.0; 48_000 * 5];
        Synth::new().fill(&mut x);
        let mut stft = Stft::new(2048, 512).unwrap();
        stft.push(&x);
        let mut col = vec![0.0; stft.bins()];
        let bin_hz = fs as f64 / 2048.0;
        let mut column = 0u64;
        let mut seen = [0usize; 3];
        while stft.pop_column(&mut col) {
            let (k, db) = dominant(&col);
            let hz = k as f64 * bin_hz;
            // Chirp frequency at the window centre; it sweeps ~67 Hz (~3 bins) per window.
            let centre = column * 512 + 1024;
            let chirp = Synth::chirp_hz_at(centre);
            if (hz - 440.0).abs() <= bin_hz {
                seen[0] += 1;
            } else if (hz - 3000.0).abs() <= bin_hz {
                seen[1] += 1;
            } else if (hz - chirp).abs() <= 3.0 * bin_hz {
                seen[2] += 1;
            } else {
                panic!("column {column}: dominant {hz} Hz ({db} dB), chirp at {chirp} Hz");
            }
            // The weakest component, the 3 kHz tone (bin-centred: 3000 Hz = 128 · 23.4375 Hz),
            // reads 20·log10(0.1) = −20 dBFS; it wins where the chirp cancels the 440 Hz tone.
            assert!(db > -20.01 && db < 0.0, "column {column}: level {db}");
            column += 1;
        }
        // The chirp (0.3) smears over a few bins, the 440 Hz tone (0.25) does not: both win at
        // times; the 3 kHz tone (0.1) is weaker than either.
        eprintln!("dominant columns (440 Hz, 3 kHz, chirp): {seen:?}");
        assert!(seen[0] > 0 && seen[2] > 0, "{seen:?}");
    }
}
