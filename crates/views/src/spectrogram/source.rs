//! The scene's audio source: the changes the side panel asked for, applied by `prepare` (another
//! input, a file decoded on its own thread, a seek, new settings), a file started over or
//! analysed whole with the view fitted to it, and what the panel and the report say about the
//! source (its label, the short- and long-file notices).

use super::{RING_SAMPLES, Spectrogram, loading};
use crate::audio::stft;
use crate::audio::{AudioOptions, AudioSelection, AudioSource};
use crate::gpu::Gpu;

impl Spectrogram {
    /// Starts a file source over from its beginning, with a new timeline (time 0 = the file's
    /// start) and history; `whole`: analysed whole at once with the view fitted to it
    /// ([`Spectrogram::open_file_whole`]), else played at real-time rate.
    fn restart_file(&mut self, whole: bool) {
        if self.source.file_samples().is_none() {
            return;
        }
        self.source.seek(0.0);
        self.source.set_paused(false);
        self.source.set_stop_at(None);
        self.source.set_fast(false);
        self.reset_stream();
        self.restart_history();
        if whole {
            self.open_file_whole();
        }
    }

    /// For a file source (not looping): analyse it whole from here, as fast as the analysis
    /// goes (fast mode), and fit the view to it, as Spek, Audacity and Sonic Visualiser show a
    /// file whole the moment it opens. A file longer than the ring holds (the scrollback) is
    /// analysed up to what the ring holds, then pauses there (Play goes on at real-time rate).
    pub(super) fn open_file_whole(&mut self) {
        let Some(len) = self.source.file_samples() else {
            return;
        };
        // A placeholder while a file decodes has nothing to analyse.
        if self.source.looping() || len == 0 {
            return;
        }
        let (n, hop) = (self.a.settings.fft_size, self.a.settings.hop);
        let fit = whole_file_samples(self.a.ring_width, n, hop);
        let start = (self.source.position_s().unwrap_or(0.0) * f64::from(self.source.sample_rate()))
            .round() as usize;
        let left = len.saturating_sub(start);
        let take = left.min(fit);
        self.source
            .set_stop_at((left > fit).then_some((start + fit) as u64));
        self.source.set_fast(true);
        self.whole_file = true;
        self.view.fit_cols = Some(file_columns(take, n, hop).max(1));
    }

    /// The notice of a file longer than the scrollback, while its analysis waits at the end of
    /// what the ring holds.
    fn long_file_notice(&self) -> Option<String> {
        let dur = self.source.duration_s()?;
        let pos = self.source.position_s()?;
        if !self.source.paused() || pos >= dur || self.source.looping() {
            return None;
        }
        let held = self.a.ring_width as f64 / self.columns_per_second();
        (self.view.fit_cols.is_some() && pos > 0.0).then(|| {
            format!(
                "showing {pos:.1} s of the file's {dur:.1} s (the scrollback holds {held:.0} s); \
                 Play goes on at real-time rate"
            )
        })
    }

    /// Applies, in `prepare` (which has the GPU), what was asked for since the last frame: a
    /// source change or a seek from the side panel, a new sample rate after a reconnection, and
    /// new analysis settings from the side panel (errors are shown, the old settings kept).
    pub(super) fn apply_requests(&mut self, gpu: &Gpu) {
        if let Some((sel, opts)) = self.panel.reopen_request.take() {
            // Another source chosen: a file still decoding is no longer wanted.
            self.loading = None;
            match &sel {
                AudioSelection::File(path)
                    if loading::in_background(path, self.simulated_clock) =>
                {
                    match loading::FileLoad::start(path, opts) {
                        Ok(l) => self.loading = Some(l),
                        Err(e) => self.error = Some(e.to_string()),
                    }
                }
                _ => match self.source.reopen_with(&sel, &opts) {
                    Ok(()) => self.source_replaced(gpu, opts),
                    Err(e) => self.error = Some(e.to_string()),
                },
            }
        }
        if let Some(result) = self.loading.as_ref().and_then(loading::FileLoad::poll) {
            let Some(load) = self.loading.take() else {
                return;
            };
            let opts = load.options();
            match result.and_then(|f| AudioSource::from_mono_file(f, RING_SAMPLES, &opts)) {
                Ok(source) => {
                    self.source = source;
                    self.source_replaced(gpu, opts);
                }
                Err(e) => {
                    log::error!("{e}");
                    self.error = Some(e.to_string());
                    if self.source.file_samples() == Some(0) {
                        self.source = AudioSource::pending_file(
                            load.path(),
                            "could not be decoded",
                            RING_SAMPLES,
                            &opts,
                        );
                    }
                }
            }
        }
        if self.source.take_rate_changed() {
            // A reconnection opened the device at another rate: the analysis follows it.
            let settings = self.a.settings.clone();
            if let Err(e) = self.apply_settings(gpu, settings) {
                self.error = Some(e.to_string());
            }
        }
        if let Some(s) = self.panel.seek_ui.take() {
            self.source.seek(s);
            self.source.set_stop_at(None);
            self.a.cpu.reset();
            self.a.tail.clear();
            // What was in the ring is gone: holes counted against it no longer apply.
            self.tl.holes.clear();
            self.tl.next_start = self.tl.drained_total + self.tl.gap_total;
        }
        if self.panel.settings_ui != self.a.settings {
            let wanted = self.panel.settings_ui.clone();
            match self.apply_settings(gpu, wanted) {
                Ok(()) => {
                    self.error = None;
                    // A file is analysed whole again with the new settings.
                    if self.source.file_samples().is_some() && !self.source.looping() {
                        self.restart_file(true);
                    }
                }
                Err(e) => {
                    self.error = Some(e.to_string());
                    self.panel.settings_ui = self.a.settings.clone();
                }
            }
        }
        if let Some(whole) = self.panel.replay_request.take() {
            self.restart_file(whole);
        }
    }

    /// The stream counters and the analysis' carried state back to the start of a stream
    /// (time 0, nothing drained, no gaps), unfrozen and not fitted to a file.
    fn reset_stream(&mut self) {
        self.tl.drained_total = 0;
        self.tl.gap_total = 0;
        self.tl.holes.clear();
        self.tl.dropped_passed = 0;
        self.tl.dropped_seen = self.source.dropped();
        self.tl.next_start = 0;
        self.a.cpu.reset();
        self.a.tail.clear();
        self.view.fit_cols = None;
        self.whole_file = false;
        self.view.frozen = false;
    }

    /// A new source took the place of the old one (opened with `opts`): a new timeline from
    /// time 0, the analysis rebuilt for its rate, a file analysed whole.
    fn source_replaced(&mut self, gpu: &Gpu, opts: AudioOptions) {
        self.options = opts;
        self.error = None;
        self.tl.scene_time = 0.0;
        self.reset_stream();
        let settings = self.a.settings.clone();
        if let Err(e) = self.apply_settings(gpu, settings) {
            self.error = Some(e.to_string());
        }
        self.open_file_whole();
    }

    /// A file shorter than the FFT never makes a column: said once in the log (the panel,
    /// the overlay and the report show it while it holds).
    pub(super) fn log_short_file_notice(&mut self) {
        let short = self.short_file_notice();
        if short != self.short_notice_logged {
            if let Some(n) = &short {
                log::warn!("{n}");
            }
            self.short_notice_logged = short;
        }
    }

    /// Set while the source is a file (not looping) with fewer samples per channel than the FFT
    /// size N, so no column can ever be made: "the audio file has K samples and the FFT needs
    /// N: no spectrogram column can be made (loop the file, or choose an FFT size of P or
    /// less)", P being the largest FFT size ≤ K (that part left out when K < the smallest size).
    fn short_file_notice(&self) -> Option<String> {
        let k = self.source.file_samples()?;
        let n = self.a.settings.fft_size;
        // Only a placeholder has no samples (a file is decoded while it stands in; an empty
        // file does not open).
        if k >= n || k == 0 || self.source.looping() {
            return None;
        }
        let samples = if k == 1 { "sample" } else { "samples" };
        let fix = if k >= stft::MIN_FFT_SIZE {
            let p = 1usize << k.ilog2();
            format!("loop the file, or choose an FFT size of {p} or less")
        } else {
            "loop the file".to_string()
        };
        Some(format!(
            "the audio file has {k} {samples} and the FFT needs {n}: no spectrogram column can \
             be made ({fix})"
        ))
    }

    /// The source as the panel and the report name it (a follower: the publisher's stream).
    pub(super) fn source_label(&self) -> String {
        if self.share.following && self.share.followed_publisher().is_none() {
            "a publisher's columns (none yet)".to_string()
        } else if self.share.following {
            format!("a publisher's columns ({} Hz)", self.source.sample_rate())
        } else {
            self.source.label().to_string()
        }
    }

    /// The source's notice ([`AudioSource::notice`]), the short-file and the long-file notices,
    /// joined by "; ".
    pub(super) fn notice(&self) -> Option<String> {
        let parts: Vec<String> = [
            self.source.notice().map(str::to_string),
            self.short_file_notice(),
            self.long_file_notice(),
        ]
        .into_iter()
        .flatten()
        .collect();
        (!parts.is_empty()).then(|| parts.join("; "))
    }
}

/// Samples of a file whose columns the ring of `ring_width` columns holds at FFT size `n` and
/// hop `hop`: `(ring_width − 1)·hop + n`.
pub fn whole_file_samples(ring_width: u32, n: usize, hop: usize) -> usize {
    (ring_width.max(1) as usize - 1) * hop + n
}

/// Columns an STFT of size `n`, hop `hop` makes of `len` samples: `⌊(len − n)/hop⌋ + 1`, 0 when
/// `len < n`.
pub fn file_columns(len: usize, n: usize, hop: usize) -> u64 {
    if len < n || hop == 0 {
        0
    } else {
        ((len - n) / hop + 1) as u64
    }
}
