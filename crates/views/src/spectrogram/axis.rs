//! Pure helpers of the spectrogram view: frequency-axis mappings (linear, logarithmic, mel),
//! note names, tick steps and label formats. Shared by the draw shader's maths (mirrored in
//! `shaders/spectrogram/draw.wgsl`), the hover readout, the spectrum view and the axes.

/// Frequency axis of the spectrogram and of the spectrum view.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum FreqScale {
    /// f = t · Nyquist.
    #[default]
    Linear,
    /// f = f_lo · (Nyquist / f_lo)^t, f_lo = max(20 Hz, one bin).
    Log,
    /// Mel: m = 2595 · log10(1 + f/700) (O'Shaughnessy 1987), linear in m.
    Mel,
}

impl FreqScale {
    /// Shader code: 0 linear, 1 log, 2 mel.
    pub fn code(self) -> u32 {
        match self {
            FreqScale::Linear => 0,
            FreqScale::Log => 1,
            FreqScale::Mel => 2,
        }
    }

    /// Name shown in the UI.
    pub fn name(self) -> &'static str {
        match self {
            FreqScale::Linear => "linear",
            FreqScale::Log => "log",
            FreqScale::Mel => "mel",
        }
    }
}

/// Mel of a frequency in Hz: 2595 · log10(1 + f/700).
pub fn mel(hz: f64) -> f64 {
    2595.0 * (1.0 + hz / 700.0).log10()
}

/// Inverse of [`mel`].
pub(crate) fn mel_inv(m: f64) -> f64 {
    700.0 * (10f64.powf(m / 2595.0) - 1.0)
}

/// The frequency axis: scale, Nyquist frequency and the low end of the log axis.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct FreqAxis {
    /// Mapping.
    pub scale: FreqScale,
    /// Top of the axis (Hz): sample rate / 2.
    pub nyquist: f64,
    /// Bottom of the log axis (Hz).
    pub f_lo: f64,
}

impl FreqAxis {
    /// The axis for `sample_rate` and FFT size `n`: the log axis starts at max(20 Hz, one bin).
    pub fn new(scale: FreqScale, sample_rate: u32, n: usize) -> FreqAxis {
        let nyquist = (sample_rate.max(1) as f64) / 2.0;
        let bin = sample_rate.max(1) as f64 / n.max(2) as f64;
        FreqAxis {
            scale,
            nyquist,
            f_lo: bin.max(20.0).min(nyquist / 2.0),
        }
    }

    /// Frequency (Hz) at height `t` ∈ [0, 1] (0 = bottom).
    pub fn freq_at(&self, t: f64) -> f64 {
        let t = t.clamp(0.0, 1.0);
        match self.scale {
            FreqScale::Linear => t * self.nyquist,
            FreqScale::Log => self.f_lo * (self.nyquist / self.f_lo).powf(t),
            FreqScale::Mel => mel_inv(t * mel(self.nyquist)),
        }
    }

    /// Height `t` ∈ [0, 1] of frequency `hz` (inverse of [`FreqAxis::freq_at`]; clamped).
    pub fn t_of(&self, hz: f64) -> f64 {
        let t = match self.scale {
            FreqScale::Linear => hz / self.nyquist,
            FreqScale::Log => {
                if hz <= self.f_lo {
                    0.0
                } else {
                    (hz / self.f_lo).ln() / (self.nyquist / self.f_lo).ln()
                }
            }
            FreqScale::Mel => mel(hz.max(0.0)) / mel(self.nyquist),
        };
        t.clamp(0.0, 1.0)
    }

    /// Tick frequencies for about `target` labels.
    pub fn ticks(&self, target: f64) -> Vec<f64> {
        match self.scale {
            FreqScale::Log => {
                let mut out = Vec::new();
                let mut decade = 10f64.powf(self.f_lo.log10().floor());
                while decade <= self.nyquist {
                    for m in [1.0, 2.0, 5.0] {
                        let f = decade * m;
                        if f >= self.f_lo && f <= self.nyquist {
                            out.push(f);
                        }
                    }
                    decade *= 10.0;
                }
                out
            }
            _ => {
                // Nice steps in the axis' own units, mapped back to Hz.
                let step = nice_step(self.nyquist, target);
                let mut out = Vec::new();
                let mut f = 0.0;
                while f <= self.nyquist + 1e-9 {
                    out.push(f);
                    f += step;
                }
                if self.scale == FreqScale::Mel {
                    // Mel ticks: nice frequencies spread evenly in mel.
                    let m_step = mel(self.nyquist) / target.max(2.0);
                    out = (0..=(target as usize))
                        .map(|i| round_nice(mel_inv(i as f64 * m_step)))
                        .filter(|f| *f <= self.nyquist)
                        .collect();
                    out.dedup();
                }
                out
            }
        }
    }
}

/// Rounds to 2 significant digits (for mel tick labels).
fn round_nice(f: f64) -> f64 {
    if f <= 0.0 {
        return 0.0;
    }
    let mag = 10f64.powf(f.log10().floor() - 1.0);
    (f / mag).round() * mag
}

/// A "nice" tick step (1, 2 or 5 × 10ⁿ) so that `span` holds about `target` ticks.
pub(crate) fn nice_step(span: f64, target: f64) -> f64 {
    if span.is_nan() || span <= 0.0 || !span.is_finite() {
        return 1.0;
    }
    let raw = span / target.max(1.0);
    let mag = 10f64.powf(raw.log10().floor());
    let norm = raw / mag;
    let m = if norm <= 1.0 {
        1.0
    } else if norm <= 2.0 {
        2.0
    } else if norm <= 5.0 {
        5.0
    } else {
        10.0
    };
    m * mag
}

/// "440 Hz", "1.5 kHz", "20 kHz".
pub(crate) fn format_hz(hz: f64) -> String {
    if hz >= 1000.0 {
        let k = hz / 1000.0;
        if (k - k.round()).abs() < 1e-9 {
            format!("{k:.0} kHz")
        } else {
            format!("{k:.1} kHz")
        }
    } else {
        format!("{hz:.0} Hz")
    }
}

/// Nearest note in 12-tone equal temperament with A4 = 440 Hz, and the offset in cents:
/// n = 69 + 12·log2(f/440) (MIDI note number), name = NAMES[n mod 12], octave = ⌊n/12⌋ − 1.
/// `None` below 8 Hz or for non-finite input.
pub(crate) fn note_name(hz: f64) -> Option<(String, f64)> {
    if !hz.is_finite() || hz < 8.0 {
        return None;
    }
    const NAMES: [&str; 12] = [
        "C", "C#", "D", "D#", "E", "F", "F#", "G", "G#", "A", "A#", "B",
    ];
    let n = 69.0 + 12.0 * (hz / 440.0).log2();
    let nearest = n.round();
    let cents = (n - nearest) * 100.0;
    let idx = (nearest as i64).rem_euclid(12) as usize;
    let octave = (nearest as i64).div_euclid(12) - 1;
    Some((format!("{}{}", NAMES[idx], octave), cents))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mel_round_trip_and_reference_points() {
        // 1000 Hz ≈ 1000 mel by construction of the 2595/700 formula.
        assert!((mel(1000.0) - 999.99).abs() < 0.1);
        for f in [0.0, 50.0, 440.0, 8000.0, 24000.0] {
            assert!((mel_inv(mel(f)) - f).abs() < 1e-6 * f.max(1.0));
        }
    }

    #[test]
    fn axes_map_both_ways() {
        for scale in [FreqScale::Linear, FreqScale::Log, FreqScale::Mel] {
            let a = FreqAxis::new(scale, 48_000, 2048);
            assert!((a.freq_at(1.0) - 24_000.0).abs() < 1e-6);
            for t in [0.1, 0.5, 0.9] {
                assert!((a.t_of(a.freq_at(t)) - t).abs() < 1e-9, "{scale:?} {t}");
            }
        }
        let log = FreqAxis::new(FreqScale::Log, 48_000, 2048);
        assert!((log.f_lo - 23.4375).abs() < 1e-9);
        // Log: equal ratios are equal distances.
        let d1 = log.t_of(200.0) - log.t_of(100.0);
        let d2 = log.t_of(4000.0) - log.t_of(2000.0);
        assert!((d1 - d2).abs() < 1e-12);
        assert_eq!(
            FreqAxis::new(FreqScale::Linear, 48_000, 2048).freq_at(0.5),
            12_000.0
        );
    }

    #[test]
    fn notes() {
        assert_eq!(note_name(440.0).unwrap().0, "A4");
        assert_eq!(note_name(261.6256).unwrap().0, "C4");
        let (n, c) = note_name(446.0).unwrap();
        assert_eq!(n, "A4");
        // 1200·log2(446/440) = 23.45 cents.
        assert!((c - 23.45).abs() < 0.01);
        assert_eq!(note_name(27.5).unwrap().0, "A0");
        assert!(note_name(f64::NAN).is_none());
        assert!(note_name(1.0).is_none());
    }

    #[test]
    fn ticks_and_formats() {
        assert_eq!(nice_step(10.0, 5.0), 2.0);
        assert_eq!(nice_step(24_000.0, 6.0), 5000.0);
        assert_eq!(format_hz(440.0), "440 Hz");
        assert_eq!(format_hz(1500.0), "1.5 kHz");
        assert_eq!(format_hz(20_000.0), "20 kHz");
        let log = FreqAxis::new(FreqScale::Log, 48_000, 2048);
        let t = log.ticks(8.0);
        assert!(t.contains(&100.0) && t.contains(&1000.0) && t.contains(&10_000.0));
    }
}
