//! The spectrogram's bodies (analysis, view, dB columns) and their bounds checks.

use serde::{Deserialize, Serialize};

use super::{Body, Bytes};

/// Most dB values one spectrogram message carries (48 MiB of levels, under [`MAX_BODY`](super::MAX_BODY) with
/// the rest of the message): a scrollback larger than this at the chosen settings is sent as
/// its newest columns that fit (at the defaults, N = 2048 and hop 512 at 48 kHz, the whole
/// scrollback is 6,563 columns × 1,025 bins = 6.7 M values, 26.9 MB before compression).
pub const SPECTROGRAM_MAX_VALUES: usize = 12 << 20;
/// Most columns one spectrogram message carries (more than the widest ring, 16,384 columns).
pub const SPECTROGRAM_MAX_COLUMNS: usize = 1 << 16;
/// Largest stream position or written index a spectrogram message may carry (2⁴⁷, beyond any
/// run: 2⁴⁷ samples at 1 MHz are 4.4 years), so a follower's arithmetic on them (an index
/// difference times a hop of at most 2¹⁵) cannot overflow and each converts to f64 exactly.
pub const SPECTROGRAM_MAX_INDEX: u64 = 1 << 47;
/// Highest sample rate a spectrogram message may carry, Hz.
pub const SPECTROGRAM_MAX_RATE: u32 = 1_000_000;

/// The spectrogram's analysis settings: what a follower needs to label the rows (bin
/// frequencies `k · sample_rate / fft_size`) and to place the columns in time (a column's
/// centre is `(start + fft_size / 2) / sample_rate`). A follower whose own settings differ adopts
/// these (and starts its history again).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpectrogramAnalysis {
    /// Sample rate of the analysed (mono) stream, Hz (1..=[`SPECTROGRAM_MAX_RATE`]).
    pub sample_rate: u32,
    /// FFT size N, a power of two in [`MIN_ANALYSIS_FFT_SIZE`]..=[`MAX_ANALYSIS_FFT_SIZE`].
    ///
    /// [`MIN_ANALYSIS_FFT_SIZE`]: vizdeck_audio::stft::MIN_ANALYSIS_FFT_SIZE
    /// [`MAX_ANALYSIS_FFT_SIZE`]: vizdeck_audio::stft::MAX_ANALYSIS_FFT_SIZE
    pub fft_size: u32,
    /// Hop between columns, samples (1..=N).
    pub hop: u32,
    /// Analysis window, by name (`hann`, `hamming`, `blackman-harris`, `flat-top`,
    /// `rectangular`).
    pub window: String,
    /// Bins per column: N/2 + 1.
    pub bins: u32,
}

/// The spectrogram's view: what a follower attached to the publisher's view shows.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SpectrogramView {
    /// Level drawn with the colormap's first colour, dBFS.
    pub db_floor: f32,
    /// Level drawn with its last colour, dBFS (above the floor).
    pub db_ceil: f32,
    /// Colormap, by name (the spectrogram view's `COLORMAPS`).
    pub colormap: String,
    /// Frequency axis: `linear`, `log` or `mel`.
    pub frequency_axis: String,
    /// The spectrum strip beside the image is shown.
    pub spectrum_strip: bool,
    /// Columns across the image (the time zoom; the follower shows as many, whatever its
    /// width).
    pub columns: u32,
    /// A frozen view: the publisher's written index one past the newest column shown; `None`:
    /// the view follows the newest column.
    pub frozen_at: Option<u64>,
}

/// Consecutive spectrogram columns, by the publisher's written index (the ring's column count:
/// 0, 1, … from the start of its history, see [`SpectrogramKeyframe::epoch`]).
///
/// What goes on the wire are the dB columns the publisher shows (its history: the CPU or the
/// GPU FFT's levels, exactly as its export writes them), not its audio: a follower then shows
/// the publisher's values bit for bit, whichever FFT path either side would use. Audio would be
/// 1 value per sample against N/2 + 1 per hop, smaller whenever hop < N/2 + 1 (half at the
/// default N = 2048, hop 512), but a follower would have to run the very same analysis (the
/// same FFT path and floating-point order, the STFT's state across messages, the gaps and the
/// skipped backlog) to show the same values, and a keyframe would still need the scrollback's
/// columns or its 70 s of audio and an analysis of all of it on joining.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SpectrogramColumns {
    /// Written index of the first column.
    pub first: u64,
    /// Values per column (the analysis' bins).
    pub bins: u32,
    /// Stream position of each column's first sample (samples since the publisher's source
    /// started, gaps counted as the time they lasted): one per column.
    pub starts: Vec<u64>,
    /// The columns' levels, dBFS: `starts.len() × bins` little-endian f32, column after column,
    /// bin 0 first. A column of the publisher's hatched gap (no input) holds
    /// the spectrogram view's `GAP_DB` in every bin; a column whose levels the
    /// publisher never got back from its GPU holds NaN in every bin (it has no values: the
    /// export writes NaN).
    pub levels: Bytes,
}

impl SpectrogramColumns {
    /// Columns carried.
    pub fn len(&self) -> usize {
        self.starts.len()
    }

    /// Whether it carries no column.
    pub fn is_empty(&self) -> bool {
        self.starts.is_empty()
    }

    /// Column `j`'s levels (dBFS, `bins` values); `None` past the end.
    pub fn column(&self, j: usize) -> Option<Vec<f32>> {
        let b = self.bins as usize * 4;
        let bytes = self.levels.0.get(j * b..(j + 1) * b)?;
        Some(
            bytes
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect(),
        )
    }
}

/// A spectrogram keyframe: the analysis, the view, and the scrollback (every column the
/// publisher's history holds whose levels are final, at most [`SPECTROGRAM_MAX_VALUES`]
/// values: the newest that fit), so that a follower joining late shows what the publisher
/// shows.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SpectrogramKeyframe {
    /// The publisher's history number, +1 each time its written index starts again at 0 (new
    /// analysis settings, a file analysed again): a follower holding another one starts again
    /// from this keyframe.
    pub epoch: u64,
    /// The analysis the columns come from.
    pub analysis: SpectrogramAnalysis,
    /// The view when it was sent.
    pub view: SpectrogramView,
    /// The scrollback.
    pub columns: SpectrogramColumns,
}

/// The spectrogram columns whose levels became final since the last message (each column is
/// sent once, in written order: the GPU path's levels come back 1–3 frames after their frame),
/// and the view when it changed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SpectrogramDelta {
    /// The publisher's history number ([`SpectrogramKeyframe::epoch`]) the columns belong to.
    pub epoch: u64,
    /// The new columns (possibly none).
    pub columns: SpectrogramColumns,
    /// The view, when it changed since the previous message.
    pub view: Option<SpectrogramView>,
}

/// The shapes a spectrogram body carries: a known analysis (FFT size, hop, window, rate, bins =
/// N/2 + 1), columns whose levels are `columns × bins` values within the bounds
/// ([`SPECTROGRAM_MAX_VALUES`], [`SPECTROGRAM_MAX_COLUMNS`], [`SPECTROGRAM_MAX_INDEX`]), a
/// keyframe's columns of its analysis' bins, a view with finite levels.
pub(super) fn check_spectrogram(b: &Body) -> Result<(), String> {
    use vizdeck_audio::stft::{MAX_ANALYSIS_FFT_SIZE, MIN_ANALYSIS_FFT_SIZE, WindowKind};
    let columns = |c: &SpectrogramColumns| {
        let n = c.starts.len();
        let bins = c.bins as usize;
        if bins == 0 || bins > MAX_ANALYSIS_FFT_SIZE / 2 + 1 {
            return Err(format!("spectrogram: columns of {bins} bins"));
        }
        if n > SPECTROGRAM_MAX_COLUMNS || n * bins > SPECTROGRAM_MAX_VALUES {
            return Err(format!(
                "spectrogram: {n} columns of {bins} bins (at most {SPECTROGRAM_MAX_COLUMNS} \
                 columns and {SPECTROGRAM_MAX_VALUES} values)"
            ));
        }
        if c.levels.0.len() != n * bins * 4 {
            return Err(format!(
                "spectrogram: {} bytes of levels for {n} columns of {bins} bins ({} expected)",
                c.levels.0.len(),
                n * bins * 4
            ));
        }
        let last = c.first.checked_add(n as u64);
        if last.is_none_or(|l| l > SPECTROGRAM_MAX_INDEX)
            || c.starts.iter().any(|&s| s > SPECTROGRAM_MAX_INDEX)
        {
            return Err("spectrogram: a column index or stream position out of range".into());
        }
        Ok(())
    };
    let view = |v: &SpectrogramView| {
        if !(v.db_floor.is_finite() && v.db_ceil.is_finite() && v.db_floor < v.db_ceil) {
            return Err(format!(
                "spectrogram: a view from {} to {} dB",
                v.db_floor, v.db_ceil
            ));
        }
        if v.frozen_at.is_some_and(|w| w > SPECTROGRAM_MAX_INDEX) {
            return Err("spectrogram: a frozen view out of range".into());
        }
        Ok(())
    };
    match b {
        Body::SpectrogramKey(k) => {
            let a = &k.analysis;
            let n = a.fft_size as usize;
            if !n.is_power_of_two() || !(MIN_ANALYSIS_FFT_SIZE..=MAX_ANALYSIS_FFT_SIZE).contains(&n)
            {
                return Err(format!("spectrogram: an FFT size of {n}"));
            }
            if a.hop == 0 || a.hop > a.fft_size {
                return Err(format!("spectrogram: a hop of {} at N = {n}", a.hop));
            }
            if a.sample_rate == 0 || a.sample_rate > SPECTROGRAM_MAX_RATE {
                return Err(format!(
                    "spectrogram: a sample rate of {} Hz",
                    a.sample_rate
                ));
            }
            if WindowKind::from_name(&a.window).is_none() {
                return Err(format!("spectrogram: unknown window {:?}", a.window));
            }
            if a.bins as usize != n / 2 + 1 || k.columns.bins != a.bins {
                return Err(format!(
                    "spectrogram: {} bins at N = {n}, columns of {} ({} expected)",
                    a.bins,
                    k.columns.bins,
                    n / 2 + 1
                ));
            }
            view(&k.view)?;
            columns(&k.columns)
        }
        Body::SpectrogramDelta(d) => {
            if let Some(v) = &d.view {
                view(v)?;
            }
            columns(&d.columns)
        }
        _ => Ok(()),
    }
}
