//! The spectrogram under `--publish` and `--follow` (the `vizdeck-protocols` crate's `publish`).
//!
//! **What is sent: the dB columns**, as the publisher's history holds them (the values its panel
//! shows and its `--export-spectrogram` writes), by written index, each column once, with the
//! stream position of its first sample; never its audio. A follower then shows and exports the
//! publisher's very values and times, whichever FFT path either side would use. Audio would be
//! smaller whenever the hop is below N/2 + 1 (1 value a sample against N/2 + 1 a hop: half at
//! the default N = 2048, hop 512), but the follower would have to repeat the analysis exactly
//! (the same FFT path and order of floating-point operations, the STFT's carried samples, the
//! gaps and skipped backlog) to show the same values, and a late joiner would need the
//! scrollback's audio analysed at once; see [`SpectrogramColumns`].
//!
//! Publishing ([`Spectrogram::publish_body`]): a column goes out once its levels are final: at
//! once for the CPU path and the hatched gap columns (they are in the history when `ingest`
//! ends), 1–3 frames later for the GPU path (when its readback arrives). An empty slot below
//! the newest levels that came back, or written [`SETTLE_FRAMES`] frames ago, will never be
//! filled (its readback was refused): it goes out as NaN. A keyframe carries the analysis, the
//! view and every final column the history holds (the scrollback, at most
//! [`SPECTROGRAM_MAX_VALUES`] values: the newest that fit); a delta the columns final since the
//! last message and the view when it changed. A history started again (new analysis settings,
//! a file analysed again) is a new epoch, announced by a keyframe at once.
//!
//! Following ([`Spectrogram::follow_body`], applied by `prepare`, which has the GPU): the scene
//! opens no audio input and analyses nothing; it adopts the publisher's analysis settings and
//! sample rate from a keyframe (rebuilding its analysis when they differ), places each column
//! received at the publisher's written index in its history and its stream position in its
//! timeline, and writes it into the ring texture through the CPU FFT path's upload (consecutive
//! columns, up to [`MAX_BATCH`] a frame), or redraws the ring from the history (a keyframe to
//! start from, columns missing before the ones received, more than a batch in one frame).
//! Attached, it shows the publisher's view. A message it cannot use (another bin count, an
//! analysis it cannot build) is refused with one line in the log, counted in the report.
//!
//! [`SpectrogramColumns`]: vizdeck_protocols::publish::SpectrogramColumns

use std::collections::VecDeque;

use super::axis::FreqScale;
use super::{COLORMAPS, FftOn, MAX_BATCH, Settings, Spectrogram};
use crate::SceneError;
use crate::audio::stft::WindowKind;
use crate::audio::{AudioOptions, AudioSource};
use crate::gpu::Gpu;
use vizdeck_protocols::publish::{
    Body, Bytes, SPECTROGRAM_MAX_COLUMNS, SPECTROGRAM_MAX_VALUES, SpectrogramAnalysis,
    SpectrogramColumns, SpectrogramDelta, SpectrogramKeyframe, SpectrogramView,
};

/// Frames after its frame after which a column written into the ring counts as final even
/// without levels (its readback was refused): well past the 1–3 frames a readback takes.
pub const SETTLE_FRAMES: usize = 8;

/// The spectrogram's publish and follow state.
#[derive(Debug, Default)]
pub(super) struct Share {
    /// The history's number, +1 each time its written index starts again at 0.
    pub(super) epoch: u64,
    /// Publishing: the epoch of the last message sent.
    sent_epoch: Option<u64>,
    /// Publishing: the written index after the last column sent.
    sent_to: u64,
    /// Publishing: the view last sent.
    sent_view: Option<SpectrogramView>,
    /// Publishing: `written` at the last [`SETTLE_FRAMES`] + 1 publish calls, oldest first.
    written_seen: VecDeque<u64>,
    /// One past the newest column whose GPU levels came back (readbacks arrive in order, so an
    /// empty slot below it stays empty).
    pub(super) levels_end: u64,
    /// Publishing: columns sent, and the columns and values of the last keyframe.
    columns_sent: u64,
    key_columns: u64,
    key_values: u64,
    /// Following: the scene shows a publisher's columns, not its own input.
    pub(super) following: bool,
    /// Following: bodies received since the last `prepare` (publisher, body, attached).
    inbox: Vec<(u64, Body, bool)>,
    /// Following: the publisher and its epoch the history holds.
    followed: Option<(u64, u64)>,
    /// Following: the written index after the last column received.
    end: u64,
    /// Following: the ring is to be redrawn from the history by the next `prepare`.
    refill: bool,
    /// Following, attached: the publisher's frozen view (its written index one past the newest
    /// column shown).
    frozen_at: Option<u64>,
    keyframes: u64,
    deltas: u64,
    /// Following: deltas of another publisher or epoch than the history's (before its keyframe).
    ignored: u64,
    columns_from_keyframes: u64,
    columns_from_deltas: u64,
    refused: u64,
    last_refusal: Option<String>,
}

impl Share {
    /// Following: the publisher whose columns the history holds (`None` before its first
    /// keyframe).
    pub(super) fn followed_publisher(&self) -> Option<u64> {
        self.followed.map(|(p, _)| p)
    }

    /// The history started again at written index 0: a new epoch (announced by a keyframe).
    pub(super) fn restarted(&mut self) {
        self.epoch += 1;
        self.levels_end = 0;
        self.written_seen.clear();
    }
}

/// A source for a follower: no samples, paused, at `sample_rate` (the publisher's), so the
/// scene's rate-dependent parts (bin frequencies, column times, the scrollback) are the
/// publisher's. It never produces a sample.
pub(super) fn placeholder(sample_rate: u32) -> Result<AudioSource, SceneError> {
    let options = AudioOptions::default();
    let mut s = AudioSource::from_mono_file(
        crate::audio::file::MonoFile {
            path: "publisher".into(),
            samples: Vec::new(),
            sample_rate: sample_rate.max(1),
            channels: 1,
            channel: options.channel,
            warning: None,
        },
        1,
        &options,
    )?;
    s.set_paused(true);
    Ok(s)
}

/// Levels as little-endian f32 bytes ([`SpectrogramColumns::levels`]).
fn put_levels(out: &mut Vec<u8>, col: &[f32]) {
    if cfg!(target_endian = "little") {
        out.extend_from_slice(bytemuck::cast_slice(col));
    } else {
        for v in col {
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
}

impl Spectrogram {
    /// The view as a follower shows it.
    fn shared_view(&self) -> SpectrogramView {
        SpectrogramView {
            db_floor: self.view.db_floor,
            db_ceil: self.view.db_ceil,
            colormap: COLORMAPS[self.view.colormap].0.to_string(),
            frequency_axis: self.view.scale.name().to_string(),
            spectrum_strip: self.view.show_spectrum,
            columns: self.visible(),
            frozen_at: self
                .view
                .frozen
                .then(|| self.tl.written.saturating_sub(self.view.view_back)),
        }
    }

    /// The analysis as a follower adopts it.
    fn shared_analysis(&self) -> SpectrogramAnalysis {
        let s = &self.a.settings;
        SpectrogramAnalysis {
            sample_rate: self.source.sample_rate(),
            fft_size: s.fft_size as u32,
            hop: s.hop as u32,
            window: s.window.name().to_string(),
            bins: self.a.bins as u32,
        }
    }

    /// Stream position of written column `w`'s first sample: this frame's CPU columns (in the
    /// history since `ingest`, placed in the timeline only by `prepare`) one hop apart from the
    /// frame's first; older ones from the timeline.
    fn column_start(&self, w: u64) -> u64 {
        let hop = self.a.settings.hop as u64;
        let pending = self.tl.written..self.tl.written + u64::from(self.rec.pending_cols);
        if pending.contains(&w) {
            self.tl.pending_start + (w - self.tl.written) * hop
        } else {
            self.tl.starts.start_of(w, hop)
        }
    }

    /// One past the last column, from `from` on, whose levels are final: filled slots, and
    /// empty ones that will stay empty (below the newest GPU levels that came back, or written
    /// [`SETTLE_FRAMES`] frames ago).
    fn settled_end(&self, from: u64) -> u64 {
        let aged = if self.share.written_seen.len() > SETTLE_FRAMES {
            self.share.written_seen.front().copied().unwrap_or(0)
        } else {
            0
        };
        let lost_below = self.share.levels_end.max(aged).min(self.tl.written);
        let limit = self.levels.history.end().max(lost_below);
        let mut end = from;
        while end < limit && (end < lost_below || self.levels.history.get(end).is_some()) {
            end += 1;
        }
        end
    }

    /// Columns `from..end` of the history as a message's columns (a column without levels as
    /// NaN).
    fn columns_between(&self, from: u64, end: u64) -> SpectrogramColumns {
        let bins = self.a.bins;
        let n = end.saturating_sub(from) as usize;
        let mut starts = Vec::with_capacity(n);
        let mut levels = Vec::with_capacity(n * bins * 4);
        let lost = vec![f32::NAN; bins];
        for w in from..end {
            starts.push(self.column_start(w));
            match self.levels.history.get(w) {
                Some(col) if col.len() == bins => put_levels(&mut levels, col),
                _ => put_levels(&mut levels, &lost),
            }
        }
        SpectrogramColumns {
            first: from,
            bins: bins as u32,
            starts,
            levels: Bytes(levels),
        }
    }

    /// [`Scene::publish`](crate::Scene::publish) for the spectrogram: a keyframe when
    /// asked or when the history started again since the last message, else the columns final
    /// since the last message and the view when it changed (`None`: neither).
    pub(super) fn publish_body(&mut self, keyframe: bool) -> Option<Body> {
        if self.share.following {
            return None;
        }
        self.share.written_seen.push_back(self.tl.written);
        while self.share.written_seen.len() > SETTLE_FRAMES + 1 {
            self.share.written_seen.pop_front();
        }
        let new_epoch = self.share.sent_epoch != Some(self.share.epoch);
        let keyframe = keyframe || new_epoch;
        if new_epoch {
            self.share.sent_to = 0;
        }
        let oldest = self.levels.history.first();
        let max_cols =
            (SPECTROGRAM_MAX_VALUES / self.a.bins.max(1)).clamp(1, SPECTROGRAM_MAX_COLUMNS) as u64;
        let from = self.share.sent_to.max(oldest);
        let mut end = self.settled_end(from);
        let view = self.shared_view();
        let view_changed = self.share.sent_view.as_ref() != Some(&view);
        self.share.sent_epoch = Some(self.share.epoch);
        self.share.sent_view = Some(view.clone());
        if keyframe {
            let first = oldest.max(end.saturating_sub(max_cols)).min(end);
            let columns = self.columns_between(first, end);
            self.share.sent_to = end;
            self.share.columns_sent += end - from;
            self.share.key_columns = columns.len() as u64;
            self.share.key_values = (columns.len() * self.a.bins) as u64;
            return Some(Body::SpectrogramKey(SpectrogramKeyframe {
                epoch: self.share.epoch,
                analysis: self.shared_analysis(),
                view,
                columns,
            }));
        }
        end = end.min(from + max_cols);
        if end == from && !view_changed {
            return None;
        }
        let columns = self.columns_between(from, end);
        self.share.sent_to = end;
        self.share.columns_sent += end - from;
        Some(Body::SpectrogramDelta(SpectrogramDelta {
            epoch: self.share.epoch,
            columns,
            view: view_changed.then_some(view),
        }))
    }

    /// [`Scene::follow`](crate::Scene::follow) for the spectrogram: the body is kept for
    /// the next `prepare` (which has the GPU a new analysis needs).
    pub(super) fn follow_body(&mut self, publisher: u64, body: Body, attached: bool) {
        if self.share.following
            && matches!(body, Body::SpectrogramKey(_) | Body::SpectrogramDelta(_))
        {
            self.share.inbox.push((publisher, body, attached));
        }
    }

    /// `prepare`, first thing, while following: the bodies received applied in order, then the
    /// ring redrawn from the history where columns could not go through the upload, and an
    /// attached frozen view placed. The side panel's analysis settings are the publisher's.
    pub(super) fn apply_followed(&mut self, gpu: &Gpu) {
        if !self.share.following {
            return;
        }
        self.panel.settings_ui = self.a.settings.clone();
        for (publisher, body, attached) in std::mem::take(&mut self.share.inbox) {
            match body {
                Body::SpectrogramKey(k) => self.follow_key(gpu, publisher, k, attached),
                Body::SpectrogramDelta(d) => self.follow_delta(publisher, d, attached),
                _ => {}
            }
        }
        if std::mem::take(&mut self.share.refill) {
            self.rec.pending.clear();
            self.rec.pending_cols = 0;
            self.tl.written = self.share.end;
            self.rec.refill_pending = true;
            self.tl
                .starts
                .forget_before(self.tl.written.saturating_sub(u64::from(self.a.ring_width)));
        }
        if self.view.frozen
            && let Some(at) = self.share.frozen_at
        {
            let max_back = self.max_back(f64::from(self.visible()));
            self.view.view_back = self.tl.written.saturating_sub(at).min(max_back);
        }
    }

    /// One line in the log (the first of each kind), counted: a message the follower cannot use.
    fn refuse(&mut self, why: String) {
        self.share.refused += 1;
        if self.share.last_refusal.as_ref() != Some(&why) {
            log::warn!("--follow: spectrogram message refused: {why}");
        }
        self.share.last_refusal = Some(why);
    }

    /// Whether the scene analyses with `a` (the same columns, bins and times).
    fn analysis_is(&self, a: &SpectrogramAnalysis) -> bool {
        let s = &self.a.settings;
        self.source.sample_rate() == a.sample_rate
            && s.fft_size == a.fft_size as usize
            && s.hop == a.hop as usize
            && Some(s.window) == WindowKind::from_name(&a.window)
            && self.a.bins == a.bins as usize
    }

    /// Adopts the publisher's analysis: a source at its rate, its FFT size, hop and window (the
    /// history starts again).
    fn adopt(&mut self, gpu: &Gpu, a: &SpectrogramAnalysis) -> Result<(), String> {
        let window = WindowKind::from_name(&a.window)
            .ok_or_else(|| format!("unknown window {:?}", a.window))?;
        if self.source.sample_rate() != a.sample_rate {
            self.source = placeholder(a.sample_rate).map_err(|e| e.to_string())?;
        }
        let settings = Settings {
            fft_size: a.fft_size as usize,
            hop: a.hop as usize,
            window,
            // No FFT runs here: the CPU path's upload takes the columns received.
            fft_on: FftOn::Cpu,
            export_csv: self.a.settings.export_csv.clone(),
        };
        self.apply_settings(gpu, settings.clone())
            .map_err(|e| format!("the publisher's analysis (N = {}): {e}", a.fft_size))?;
        self.panel.settings_ui = settings;
        if self.a.bins != a.bins as usize {
            return Err(format!(
                "{} bins from the publisher, {} here",
                a.bins, self.a.bins
            ));
        }
        log::info!(
            "--follow: spectrogram analysis of the publisher: N = {}, hop {}, {} window, {} Hz",
            a.fft_size,
            a.hop,
            a.window,
            a.sample_rate
        );
        Ok(())
    }

    fn follow_key(&mut self, gpu: &Gpu, publisher: u64, k: SpectrogramKeyframe, attached: bool) {
        let same_analysis = self.analysis_is(&k.analysis);
        if !same_analysis && let Err(e) = self.adopt(gpu, &k.analysis) {
            self.share.followed = None;
            self.refuse(e);
            return;
        }
        if !same_analysis || self.share.followed != Some((publisher, k.epoch)) {
            // Another publisher, epoch or analysis: the history starts again from this keyframe.
            self.share.followed = Some((publisher, k.epoch));
            self.tl.written = k.columns.first;
            self.share.end = k.columns.first;
            self.tl.starts.clear();
            self.rec.pending.clear();
            self.rec.pending_cols = 0;
            self.view.view_back = 0;
            self.reset_history();
            self.share.refill = true;
        }
        self.share.keyframes += 1;
        let n = self.take_columns(&k.columns);
        self.share.columns_from_keyframes += n;
        if attached {
            self.apply_view(&k.view);
        }
    }

    fn follow_delta(&mut self, publisher: u64, d: SpectrogramDelta, attached: bool) {
        if self.share.followed != Some((publisher, d.epoch)) {
            // Before the keyframe of this publisher and epoch: nothing to place it after.
            self.share.ignored += 1;
            return;
        }
        self.share.deltas += 1;
        let n = self.take_columns(&d.columns);
        self.share.columns_from_deltas += n;
        if attached && let Some(v) = &d.view {
            self.apply_view(v);
        }
    }

    /// Places the columns of `c` not held yet (from the last one received on) into the
    /// history and the timeline, and queues them for the ring; returns how many.
    fn take_columns(&mut self, c: &SpectrogramColumns) -> u64 {
        let bins = self.a.bins;
        if c.bins as usize != bins {
            self.refuse(format!(
                "columns of {} bins; the publisher's analysis has {bins}",
                c.bins
            ));
            return 0;
        }
        let end = c.first + c.len() as u64;
        if end <= self.share.end {
            return 0;
        }
        let from = c.first.max(self.share.end);
        let new = end - from;
        // Consecutive columns go up through the CPU path's upload, a batch a frame at most;
        // anything else redraws the ring from the history.
        let upload = c.first <= self.share.end
            && !self.share.refill
            && u64::from(self.rec.pending_cols) + new <= u64::from(MAX_BATCH);
        if !upload {
            self.share.refill = true;
            self.rec.pending.clear();
            self.rec.pending_cols = 0;
        }
        let hop = self.a.settings.hop as u64;
        for w in from..end {
            let j = (w - c.first) as usize;
            let (Some(&start), Some(col)) = (c.starts.get(j), c.column(j)) else {
                break;
            };
            self.tl.starts.record(w, start, hop);
            if col.iter().all(|v| v.is_nan()) {
                // The publisher has no levels for it.
                self.levels.history.place(w, &[]);
            } else {
                self.push_history(&col, Some(w));
            }
            if upload {
                if self.rec.pending_cols == 0 {
                    self.tl.pending_start = start;
                }
                self.rec.pending.extend_from_slice(&col);
                self.rec.pending_cols += 1;
            }
        }
        self.tl.columns_total += new;
        self.share.end = end;
        new
    }

    /// The publisher's view, shown by an attached follower (names it does not know are left
    /// as they are).
    fn apply_view(&mut self, v: &SpectrogramView) {
        self.view.db_floor = v.db_floor;
        self.view.db_ceil = v.db_ceil;
        if let Some(i) = COLORMAPS.iter().position(|(n, _)| *n == v.colormap)
            && i != self.view.colormap
        {
            self.view.colormap = i;
            self.view.lut_dirty = true;
        }
        if let Some(sc) = [FreqScale::Linear, FreqScale::Log, FreqScale::Mel]
            .into_iter()
            .find(|sc| sc.name() == v.frequency_axis)
        {
            self.view.scale = sc;
        }
        self.view.show_spectrum = v.spectrum_strip;
        self.view.fit_cols = Some(u64::from(v.columns.max(1)));
        self.share.frozen_at = v.frozen_at;
        self.view.frozen = v.frozen_at.is_some();
        if !self.view.frozen {
            self.view.view_back = 0;
        }
    }

    /// Whether this scene follows a publisher.
    pub(super) fn following(&self) -> bool {
        self.share.following
    }

    /// The report's `share` object: what was published (columns sent, the last keyframe's
    /// columns and values) or followed (the publisher and epoch held, keyframes and deltas
    /// applied, columns from each, messages ignored or refused); `null` when neither.
    pub(super) fn share_metrics(&self) -> serde_json::Value {
        let s = &self.share;
        if s.following {
            serde_json::json!({
                "following": true,
                "publisher": s.followed.map(|f| format!("{:016x}", f.0)),
                "epoch": s.followed.map(|f| f.1),
                "keyframes": s.keyframes,
                "deltas": s.deltas,
                "ignored": s.ignored,
                "columns_from_keyframes": s.columns_from_keyframes,
                "columns_from_deltas": s.columns_from_deltas,
                "refused": s.refused,
                "last_refusal": s.last_refusal,
            })
        } else if s.sent_epoch.is_some() {
            serde_json::json!({
                "following": false,
                "epoch": s.epoch,
                "columns_sent": s.columns_sent,
                "last_keyframe_columns": s.key_columns,
                "last_keyframe_values": s.key_values,
            })
        } else {
            serde_json::Value::Null
        }
    }
}
