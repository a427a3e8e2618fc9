//! Vizdeck's own signals charted beside a synthetic source: the audio input's level, a point per
//! block ([`block_level_db`]), and the names of the series of the level and of the frame times
//! (added by [`Scene::presented`](crate::Scene::presented)).

use super::TimeSeries;
use crate::audio::{AudioOptions, AudioSelection, AudioSource};

/// Name of the series of vizdeck's own frame times (see [`TimeSeries::own_signals`]).
pub const OWN_FRAME_SERIES: &str = "vizdeck frame time (ms)";

/// Name of the series of the audio input's level (see [`TimeSeries::own_audio`]).
pub const OWN_AUDIO_SERIES: &str = "audio level (dB RMS)";

/// Length of one audio-level block, seconds (10 ms: 480 samples at 48 kHz).
pub const AUDIO_LEVEL_BLOCK_S: f64 = 0.01;

/// Level charted for a block of digital silence, dB.
pub const AUDIO_LEVEL_FLOOR_DB: f64 = -120.0;

/// The audio input opened for [`TimeSeries::own_audio`], and where its blocks stand.
pub(super) struct AudioLevel {
    source: AudioSource,
    /// Scene time at which the source started, seconds.
    start: f64,
    /// Samples already turned into blocks (or skipped as gaps) since the start.
    samples: u64,
    /// Samples per block.
    block: usize,
    /// Samples drained but not yet a whole block.
    pending: Vec<f32>,
}

/// The audio input charted by [`TimeSeries::own_audio`]: which one, the opened source and
/// why it could not open.
pub(super) struct OwnAudio {
    pub(super) input: (AudioSelection, AudioOptions),
    pub(super) level: Option<AudioLevel>,
    pub(super) note: Option<String>,
}

/// Level of one block of samples in [-1, 1]: `10·log10(mean(x²))` dB (RMS relative to full
/// scale, so a full-scale sine reads −3.01 dB), [`AUDIO_LEVEL_FLOOR_DB`] for silence.
pub fn block_level_db(block: &[f32]) -> f64 {
    let ms = block.iter().map(|&x| x as f64 * x as f64).sum::<f64>() / block.len().max(1) as f64;
    if ms > 0.0 {
        (10.0 * ms.log10()).max(AUDIO_LEVEL_FLOOR_DB)
    } else {
        AUDIO_LEVEL_FLOOR_DB
    }
}

impl TimeSeries {
    /// The audio input charted by [`own_audio`](Self::own_audio) (default: the default input
    /// device); takes effect the next time it is switched on.
    pub fn set_audio_input(&mut self, sel: AudioSelection, options: AudioOptions) {
        self.audio.input = (sel, options);
        self.audio.level = None;
    }

    /// Opens, advances and drains the audio input of [`own_audio`](Self::own_audio) and stores
    /// the level of every whole block.
    pub(super) fn ingest_audio(&mut self) {
        if !(self.own_audio && self.source.is_clocked()) {
            self.audio.level = None;
            return;
        }
        if self.audio.level.is_none() {
            let (sel, options) = &self.audio.input;
            match AudioSource::open_with(sel, crate::audio::DEFAULT_RING_CAPACITY, options) {
                Ok(source) => {
                    let rate = source.sample_rate().max(1) as f64;
                    self.audio.level = Some(AudioLevel {
                        source,
                        start: self.scene_time,
                        samples: 0,
                        block: ((rate * AUDIO_LEVEL_BLOCK_S).round() as usize).max(1),
                        pending: Vec::new(),
                    });
                    self.audio.note = None;
                }
                Err(e) => {
                    self.audio.note = Some(format!("audio level: {e}"));
                    self.own_audio = false;
                    return;
                }
            }
        }
        let Some(a) = &mut self.audio.level else {
            return;
        };
        a.source.advance_to(self.scene_time - a.start);
        a.source.drain_into(&mut a.pending);
        let gap = a.source.gap_samples();
        if gap > 0 {
            // Samples before a gap that do not fill a block are dropped with it.
            a.samples += gap + a.pending.len() as u64;
            a.pending.clear();
        }
        let rate = a.source.sample_rate().max(1) as f64;
        let index = self.store.ensure(OWN_AUDIO_SERIES);
        let whole = a.pending.len() / a.block * a.block;
        for block in a.pending[..whole].chunks_exact(a.block) {
            let t = a.start + a.samples as f64 / rate;
            self.store.push(index, t, block_level_db(block) as f32);
            a.samples += a.block as u64;
        }
        a.pending.drain(..whole);
    }
}
