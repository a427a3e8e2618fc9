//! The stream timeline: where every drained sample and every column sits in the audio stream.
//!
//! Stream positions count samples since the source started, with gaps (the input had no data)
//! and dropped samples (the source's ring overflowed) counted as the time they lasted, so every
//! column keeps its true time across them. Here: what `ingest` does with the drained audio (gaps,
//! the backlog skipped after a pause, hops cut into columns for the CPU or the GPU FFT, the
//! capture instant of the newest column), how `prepare` moves the written-column count on,
//! [`ColumnStarts`] (written index → stream position) and [`Spectrogram::column_time`]. The
//! arithmetic is in pure functions, unit-tested below with hand-worked values.

use std::collections::VecDeque;

use super::{FftOn, GAP_DB, MAX_BATCH, Spectrogram};
use crate::FrameCtx;

/// The scene's stream timeline: where the drained samples and the written columns sit in the
/// stream (gaps, holes, column starts), and the totals counted for the report.
#[derive(Default)]
pub(super) struct Timeline {
    pub(super) scene_time: f64,
    // Totals
    pub(super) columns_total: u64,
    /// Columns written into the ring (the display's clock).
    pub(super) written: u64,
    pub(super) samples_total: u64,
    pub(super) samples_skipped: u64,
    pub(super) columns_skipped: u64,
    /// Samples drained from the source so far (analysed or skipped).
    pub(super) drained_total: u64,
    /// Samples of missing input (gaps) counted into the timeline so far: the stream position of
    /// drained sample j is `j + gap_total` (for the samples drained since the last hole).
    pub(super) gap_total: u64,
    /// Holes in the stream not reached yet: dropped samples (the ring overflowed) and time
    /// without input, each after a given number of drained samples ([`Hole`]).
    pub(super) holes: VecDeque<Hole>,
    /// Hatched columns still to be written for a hole reached: (stream position of the first,
    /// how many); up to [`MAX_BATCH`] a frame.
    pub(super) gap_fill: Option<(u64, u64)>,
    /// Dropped samples of the holes passed (the source's sample clock counts them).
    pub(super) dropped_passed: u64,
    /// Stream position (samples) of the first sample of the next column the STFT will produce.
    pub(super) next_start: u64,
    /// The source's dropped-sample count (ring overflow) last seen: new drops are a hole after
    /// the samples in the ring when they are seen.
    pub(super) dropped_seen: u64,
    /// Stream position of the first column in `pending` / this frame's GPU batch (consecutive
    /// columns, one hop apart).
    pub(super) pending_start: u64,
    /// Written-column index → stream position wherever the timeline jumps ([`ColumnStarts`]).
    pub(super) starts: ColumnStarts,
}

/// Samples skipped, oldest first, of `drained` new samples so that at most [`MAX_BATCH`]
/// columns of FFT size `n` are analysed in one frame: all but the newest `(MAX_BATCH − 1)·hop + n`.
pub(super) fn backlog_skip(drained: usize, n: usize, hop: usize) -> usize {
    let keep = (MAX_BATCH as usize - 1) * hop + n;
    drained.saturating_sub(keep)
}

/// Columns an uninterrupted STFT would have started between `next_start` (the next column's
/// stream position) and `restart` (where the STFT starts again), leaving out the `gap` samples
/// just before the restart (the gap's own columns are drawn as gap columns): one per hop begun.
pub(super) fn columns_skipped_before(restart: u64, gap: u64, next_start: u64, hop: u64) -> u64 {
    restart
        .saturating_sub(gap)
        .saturating_sub(next_start)
        .div_ceil(hop)
}

/// Index, on the source's sample clock (which counts dropped samples too), of the last sample of
/// the newest column: `drained + dropped + n − pending − hop − 1`, where `pending` counts the
/// samples drained but kept for the next column (0 if that would be negative).
pub(super) fn newest_column_end(drained: u64, dropped: u64, n: u64, pending: u64, hop: u64) -> u64 {
    (drained + dropped + n).saturating_sub(pending + hop + 1)
}

/// Time in seconds of the centre of a column of FFT size `fft_size` whose first sample is at
/// stream position `start`: (start + N/2) / sample rate.
pub(super) fn column_centre_s(start: u64, fft_size: usize, sample_rate: u32) -> f64 {
    (start as f64 + fft_size as f64 / 2.0) / sample_rate as f64
}

/// Written-column index → stream position, as (first written index, start of that column)
/// wherever the timeline jumps (the first frame, skipped columns, gaps, restarts); columns
/// between entries are one hop apart. Entries older than the ring holds are dropped.
#[derive(Debug, Default)]
pub(super) struct ColumnStarts {
    entries: VecDeque<(u64, u64)>,
}

impl ColumnStarts {
    /// Forgets every entry (new analysis settings: written indices start again at 0).
    pub(super) fn clear(&mut self) {
        self.entries.clear();
    }

    /// Stream position of the first sample of written column `w`: `hop` samples per column on
    /// from the last entry at or before `w`; before the oldest entry, extrapolated back from it
    /// (not below 0); `w·hop` while there is no entry.
    pub(super) fn start_of(&self, w: u64, hop: u64) -> u64 {
        // The last frame entry at or before w.
        let at = self.entries.partition_point(|(first, _)| *first <= w);
        match at.checked_sub(1).and_then(|i| self.entries.get(i)) {
            Some(&(first, start)) => start + (w - first) * hop,
            None => match self.entries.front() {
                Some(&(first, start)) => start.saturating_sub((first - w) * hop),
                None => w * hop,
            },
        }
    }

    /// Columns written from index `written` on, the first of them starting at stream position
    /// `start`: a new entry only where they do not continue one hop on from the last one.
    pub(super) fn record(&mut self, written: u64, start: u64, hop: u64) {
        let continues = self
            .entries
            .back()
            .is_some_and(|&(first, first_start)| first_start + (written - first) * hop == start);
        if !continues {
            self.entries.push_back((written, start));
        }
    }

    /// Drops the entries that only place columns older than written index `oldest` (the newest
    /// entry is always kept).
    pub(super) fn forget_before(&mut self, oldest: u64) {
        while self.entries.len() > 1 && self.entries[1].0 <= oldest {
            self.entries.pop_front();
        }
    }
}

/// A hole in the stream: `samples` of time with no data (the source's ring overflowed and
/// dropped them, or the input delivered nothing), lying after the first `at` samples drained.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Hole {
    /// Drained samples before the hole.
    pub(super) at: u64,
    /// Samples of time it lasted.
    pub(super) samples: u64,
    /// Dropped samples (on the source's sample clock), rather than time without input.
    pub(super) dropped: bool,
}

/// Samples the analysis takes from the source in one frame: at most what makes [`MAX_BATCH`]
/// columns of FFT size `n` and hop `hop` with `pending` samples already held
/// (`(MAX_BATCH − 1)·hop + n − pending`, at least one hop), so a backlog (the scene was in the
/// background, the window stalled, a file opened whole) is caught up a batch a frame and
/// nothing is skipped; unbounded when a source paced in real time brings more than a batch of
/// hops a frame (`realtime` samples > `MAX_BATCH·hop`: the analysis cannot keep up, so the
/// newest are analysed and the rest skipped and counted). `realtime` is 0 for a file analysed as
/// fast as it goes.
pub(super) fn drain_limit(n: usize, hop: usize, pending: usize, realtime: f64) -> usize {
    if realtime > (MAX_BATCH as usize * hop) as f64 {
        return usize::MAX;
    }
    ((MAX_BATCH as usize - 1) * hop + n)
        .saturating_sub(pending)
        .max(hop)
}

/// Hatched columns drawn for a hole from stream position `from` (where the next column would
/// have started) to `restart` (where columns start again): one per hop begun, so the column at
/// `restart` comes at most one hop after the last of them; at most `cap` (the ring's width).
pub(super) fn hole_columns(from: u64, restart: u64, hop: u64, cap: u64) -> u64 {
    restart.saturating_sub(from).div_ceil(hop.max(1)).min(cap)
}

impl Spectrogram {
    /// `ingest`: moves a clocked source on, notes new holes (dropped samples after what the ring
    /// holds now), then either writes hatched columns still owed for a hole (up to a batch; no
    /// samples that frame) or drains up to a batch of samples, no further than the next hole,
    /// and cuts them into this frame's columns: STFT columns on the CPU path (`pending`), FFT
    /// frames on the GPU path (`a.frames`). Reaching a hole restarts the STFT after it and owes
    /// its hatched columns. The CPU path's and gap columns go into the history here, the GPU
    /// path's when their levels come back. All of it whether the view is frozen or not.
    pub(super) fn ingest_audio(&mut self, frame: &FrameCtx) {
        self.tl.scene_time += frame.elapsed_s;
        self.source.advance_to(self.tl.scene_time);
        let n = self.a.settings.fft_size;
        let hop = self.a.settings.hop;
        let hop64 = hop as u64;
        self.rec.gap_cols = 0;
        self.rec.frame_capture = None;
        self.a.batch = 0;
        self.a.frames.clear();
        // Samples dropped since the last frame (the ring was full) came after everything the
        // ring held when they were dropped, and nothing got in since (it is full until drained):
        // a hole after what it holds now. (Read the count first, then what the ring holds.)
        let dropped = self.source.dropped();
        let lost = dropped.saturating_sub(self.tl.dropped_seen);
        self.tl.dropped_seen = dropped;
        if lost > 0 {
            let at = self.tl.drained_total + self.source.available() as u64;
            self.tl.holes.push_back(Hole {
                at,
                samples: lost,
                dropped: true,
            });
        }
        if self.tl.gap_fill.is_some() {
            self.write_gap_columns();
            self.finish_whole_file();
            return;
        }
        // Drain up to a batch, and no further than the next hole.
        let pending = match self.a.fft_on {
            FftOn::Cpu => self.a.cpu.pending(),
            FftOn::Gpu | FftOn::Auto => self.a.tail.len(),
        };
        let sr = self.source.sample_rate().max(1) as f64;
        let realtime = if self.source.fast() {
            0.0
        } else {
            frame.elapsed_s * sr
        };
        let mut limit = drain_limit(n, hop, pending, realtime);
        if let Some(h) = self.tl.holes.front() {
            limit = limit.min(
                usize::try_from(h.at.saturating_sub(self.tl.drained_total)).unwrap_or(usize::MAX),
            );
        }
        self.rec.scratch.clear();
        self.source.drain_at_most(&mut self.rec.scratch, limit);
        let drained_before = self.tl.drained_total;
        self.tl.drained_total += self.rec.scratch.len() as u64;
        // Time without input (a device gone or silent) lies after what the ring holds now.
        let gap = self.source.gap_samples();
        if gap > 0 {
            let at = self.tl.drained_total + self.source.available() as u64;
            self.tl.holes.push_back(Hole {
                at,
                samples: gap,
                dropped: false,
            });
        }
        // When the analysis cannot keep up, only the newest MAX_BATCH columns' worth is analysed.
        let skip = backlog_skip(self.rec.scratch.len(), n, hop);
        self.tl.samples_skipped += skip as u64;
        self.tl.samples_total += self.rec.scratch.len() as u64;
        if skip > 0 {
            // The STFT restarts at the first sample analysed (stream position base + skip);
            // the columns an uninterrupted STFT would have started before it are skipped.
            let restart = drained_before + self.tl.gap_total + skip as u64;
            self.tl.columns_skipped +=
                columns_skipped_before(restart, 0, self.tl.next_start, hop64);
            self.a.cpu.reset();
            self.a.tail.clear();
            self.tl.next_start = restart;
        }
        let bins = self.a.bins;
        match self.a.fft_on {
            FftOn::Cpu => {
                self.a.cpu.push(&self.rec.scratch[skip..]);
                while self.a.cpu.pop_column(&mut self.rec.column) {
                    self.tl.columns_total += 1;
                    if self.rec.pending_cols == 0 {
                        self.tl.pending_start = self.tl.next_start;
                    }
                    self.tl.next_start += hop64;
                    if self.rec.pending_cols >= MAX_BATCH {
                        self.rec.pending.drain(..bins);
                        self.rec.pending_cols -= 1;
                        self.tl.pending_start += hop64;
                        self.tl.columns_skipped += 1;
                    }
                    self.rec.pending.extend_from_slice(&self.rec.column);
                    self.rec.pending_cols += 1;
                }
            }
            // `fft_on` is resolved (never Auto); Auto here would be the GPU path.
            FftOn::Gpu | FftOn::Auto => {
                let a = &mut self.a;
                a.tail.extend_from_slice(&self.rec.scratch[skip..]);
                let mut start = 0;
                while start + n <= a.tail.len() {
                    if a.batch == 0 {
                        self.tl.pending_start = self.tl.next_start;
                    }
                    if a.batch >= MAX_BATCH {
                        // Drop the oldest frame of this batch: keep the newest MAX_BATCH.
                        a.frames.drain(..n);
                        a.batch -= 1;
                        self.tl.pending_start += hop64;
                        self.tl.columns_skipped += 1;
                    }
                    a.frames.extend_from_slice(&a.tail[start..start + n]);
                    a.batch += 1;
                    start += hop;
                    self.tl.next_start += hop64;
                    self.tl.columns_total += 1;
                }
                a.tail.drain(..start.min(a.tail.len()));
                self.rec.pending_cols = a.batch;
            }
        }
        // The newest column this frame ends at sample drained − pending − hop + N − 1 (pending =
        // samples kept for the next column); its capture instant comes from the source's clock,
        // which counts dropped samples too (those of the holes passed). Not for files: they are
        // analysed ahead of any clock (whole at open), so capture-to-present says nothing.
        if self.rec.pending_cols > 0
            && self.source.kind() != "file"
            && let Some((delivered, at)) = self.source.sample_clock()
        {
            let pending = match self.a.fft_on {
                FftOn::Cpu => self.a.cpu.pending() as u64,
                FftOn::Gpu | FftOn::Auto => self.a.tail.len() as u64,
            };
            let end = newest_column_end(
                self.tl.drained_total,
                self.tl.dropped_passed,
                n as u64,
                pending,
                hop64,
            );
            let behind = delivered.saturating_sub(end + 1);
            self.rec.frame_capture =
                at.checked_sub(std::time::Duration::from_secs_f64(behind as f64 / sr));
        }
        // Holes reached: the timeline steps over them, the STFT restarts after them (the samples
        // it held are dropped), and their hatched columns are owed from where the next column
        // would have started.
        while let Some(h) = self
            .tl
            .holes
            .front()
            .copied()
            .filter(|h| h.at <= self.tl.drained_total)
        {
            self.tl.holes.pop_front();
            self.tl.gap_total += h.samples;
            if h.dropped {
                self.tl.dropped_passed += h.samples;
            }
            let restart = self.tl.drained_total + self.tl.gap_total;
            let from = self
                .tl
                .gap_fill
                .map_or(self.tl.next_start, |(first, _)| first);
            let cols = hole_columns(from, restart, hop64, u64::from(self.a.ring_width));
            self.tl.gap_fill = (cols > 0).then_some((from, cols));
            self.a.cpu.reset();
            self.a.tail.clear();
            self.tl.next_start = restart;
        }
        if self.a.fft_on == FftOn::Cpu {
            // The history holds what the panel shows: the columns kept for this frame (the GPU
            // path's arrive through the readback).
            let pending = std::mem::take(&mut self.rec.pending);
            for (j, col) in (0u64..).zip(pending.chunks_exact(bins)) {
                self.push_history(col, Some(self.tl.written + j));
            }
            self.rec.pending = pending;
        }
        if self.rec.pending_cols == 0 && self.tl.gap_fill.is_some() {
            // No data columns this frame: the hatched ones go now.
            self.write_gap_columns();
        }
        self.finish_whole_file();
    }

    /// This frame's columns are hatched ones owed for a hole: up to [`MAX_BATCH`] of them,
    /// one hop apart from where the hole began, into `pending` and the history.
    fn write_gap_columns(&mut self) {
        let Some((first, left)) = self.tl.gap_fill else {
            return;
        };
        let k = left.min(u64::from(MAX_BATCH));
        let bins = self.a.bins;
        let hop = self.a.settings.hop as u64;
        self.a.batch = 0;
        self.a.frames.clear();
        self.rec.gap_cols = k as u32;
        self.rec.pending.clear();
        self.rec.pending.resize(k as usize * bins, GAP_DB);
        self.rec.pending_cols = k as u32;
        self.tl.pending_start = first;
        let gap_col = vec![GAP_DB; bins];
        for j in 0..k {
            self.push_history(&gap_col, Some(self.tl.written + j));
        }
        self.tl.gap_fill = (left > k).then_some((first + k * hop, left - k));
    }

    /// A file analysed whole: once all of it (or all the ring holds) is analysed, fast mode
    /// ends, so that Play goes on at real-time rate.
    fn finish_whole_file(&mut self) {
        if self.whole_file
            && (self.source.finished() || self.source.paused())
            && self.source.available() == 0
        {
            self.source.set_fast(false);
            self.whole_file = false;
        }
    }

    /// `prepare`, once this frame's columns are uploaded: they are written into the ring, so the
    /// written-column count (the display's clock) moves on and [`ColumnStarts`] places them. A
    /// frozen view keeps showing the same columns (it moves back by as many as were written,
    /// while the ring holds them); a view that follows shows the newest.
    pub(super) fn advance_written(&mut self) {
        if self.rec.write_cols == 0 {
            return;
        }
        // A new entry only where the columns do not continue one hop on from the last one (a
        // follower placed each column received already, `share.rs`).
        let hop = self.a.settings.hop as u64;
        if !self.following() {
            self.tl
                .starts
                .record(self.tl.written, self.tl.pending_start, hop);
        }
        self.tl.written += self.rec.write_cols as u64;
        // Keep the entries the ring still shows (the newest one always).
        self.tl
            .starts
            .forget_before(self.tl.written.saturating_sub(self.a.ring_width as u64));
        if self.view.frozen {
            let max_back = self.max_back(f64::from(self.visible()));
            self.view.view_back = (self.view.view_back + self.rec.write_cols as u64).min(max_back);
        } else {
            self.view.view_back = 0;
        }
    }

    /// Columns per second of audio: sample rate / hop.
    pub(super) fn columns_per_second(&self) -> f64 {
        self.source.sample_rate() as f64 / self.a.settings.hop as f64
    }

    /// Time in seconds of the centre of written (shown) column `w`: (start + N/2) / sample rate,
    /// where start is the stream position of the column's first sample (samples since the source
    /// started, gaps counted as the time they lasted). Columns that were analysed but never
    /// shown (more than [`MAX_BATCH`] in one frame, a backlog after a pause) leave a jump in
    /// time, not a shift. Columns older than the ring are extrapolated one hop apart.
    pub fn column_time(&self, w: u64) -> f64 {
        let start = self.tl.starts.start_of(w, self.a.settings.hop as u64);
        column_centre_s(start, self.a.settings.fft_size, self.source.sample_rate())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hole_columns_one_per_hop_begun_up_to_the_ring() {
        // The next column would start at 10,000; columns restart at 20,000, hop 512: hatched
        // columns at 10,000 + 512·k < 20,000, k = 0..=19 (10,000 + 19·512 = 19,728): 20.
        assert_eq!(hole_columns(10_000, 20_000, 512, 6563), 20);
        // Exactly a hop: one.
        assert_eq!(hole_columns(0, 512, 512, 6563), 1);
        assert_eq!(hole_columns(0, 513, 512, 6563), 2);
        // Nothing between: none.
        assert_eq!(hole_columns(7, 7, 512, 6563), 0);
        // 74 s at 48 kHz, hop 512: 6937.5 → 6938 hops begun, capped at a ring of 6563.
        assert_eq!(hole_columns(0, 74 * 48_000, 512, 6563), 6563);
    }

    #[test]
    fn drain_limit_takes_a_batch_unless_real_time_is_more() {
        // N = 2048, hop 512, nothing pending: (512 − 1)·512 + 2048 = 263,680 samples, which make
        // exactly 512 columns.
        assert_eq!(drain_limit(2048, 512, 0, 800.0), 263_680);
        assert_eq!((263_680 - 2048) / 512 + 1, MAX_BATCH as usize);
        // 1,500 samples already held: that much less.
        assert_eq!(drain_limit(2048, 512, 1500, 800.0), 263_680 - 1500);
        // Hop 1: 512 columns a frame take 512 samples of the stream, less than the 800 a 1/60 s
        // frame brings at 48 kHz: the analysis cannot keep up, so nothing is held back.
        assert_eq!(drain_limit(256, 1, 0, 800.0), usize::MAX);
        // A file analysed as fast as it goes is never skipped: (512 − 1) + 256 − 255 held.
        assert_eq!(drain_limit(256, 1, 255, 0.0), 512);
        assert_eq!(drain_limit(256, 1, 0, 500.0), 767);
    }

    #[test]
    fn backlog_keeps_exactly_a_batch_of_columns() {
        // N = 1024, hop 512: keep (512 − 1)·512 + 1024 = 262,656 samples.
        assert_eq!(backlog_skip(262_656, 1024, 512), 0);
        assert_eq!(backlog_skip(300_000, 1024, 512), 300_000 - 262_656);
        assert_eq!(backlog_skip(100, 1024, 512), 0);
        // What is kept holds columns starting at 0, 512, …, 511·512: 512 of them.
        let kept = 300_000 - backlog_skip(300_000, 1024, 512);
        assert_eq!((kept - 1024) / 512 + 1, MAX_BATCH as usize);
    }

    #[test]
    fn skipped_columns_between_next_start_and_restart() {
        // Next column at 10,000, restart at 20,000, hop 512: columns would have started at
        // 10,000 + 512·k < 20,000, k = 0..=19 (10,000 + 19·512 = 19,728): 20 columns.
        assert_eq!(columns_skipped_before(20_000, 0, 10_000, 512), 20);
        // The 3,000 samples before the restart were a gap: 10,000 + 512·k < 17,000, k = 0..=13
        // (10,000 + 13·512 = 16,656; k = 14 gives 17,168): 14 columns.
        assert_eq!(columns_skipped_before(20_000, 3_000, 10_000, 512), 14);
        // A restart at or before the next column skips nothing.
        assert_eq!(columns_skipped_before(10_000, 0, 10_000, 512), 0);
        assert_eq!(columns_skipped_before(9_000, 0, 10_000, 512), 0);
    }

    #[test]
    fn newest_column_ends_where_its_frame_ends() {
        // 4096 samples, N = 1024, hop 512: columns start at 0, 512, …, 3072 (3072 + 1024 =
        // 4096); the next would start at 3584, so 512 samples are pending. The newest column
        // covers 3072..=4095.
        assert_eq!(newest_column_end(4096, 0, 1024, 512, 512), 4095);
        // 100 samples dropped before this frame's move the source's clock on by 100.
        assert_eq!(newest_column_end(4096, 100, 1024, 512, 512), 4195);
        // Fewer samples than a column: clamped at 0, never below.
        assert_eq!(newest_column_end(10, 0, 1024, 2048, 512), 0);
    }

    #[test]
    fn column_centre_is_half_a_frame_after_its_start() {
        // 48 kHz, N = 960: a column starting at 0 is centred at 480 / 48,000 = 0.01 s.
        assert_eq!(column_centre_s(0, 960, 48_000), 0.01);
        // Starting at 1 s (48,000): 48,480 / 48,000 = 1.01 s.
        assert_eq!(column_centre_s(48_000, 960, 48_000), 48_480.0 / 48_000.0);
    }

    #[test]
    fn starts_place_columns_one_hop_apart_and_jump_at_gaps() {
        let hop = 512;
        let mut s = ColumnStarts::default();
        // No entry yet: w·hop.
        assert_eq!(s.start_of(5, hop), 2560);
        // The first frame: columns 0..4 from stream position 1000.
        s.record(0, 1000, hop);
        assert_eq!(s.start_of(3, hop), 1000 + 3 * 512);
        // The next frame continues one hop on (column 4 at 1000 + 4·512 = 3048): no new entry.
        s.record(4, 3048, hop);
        assert_eq!(s.entries.len(), 1);
        // Column 8 comes after a gap, at 20,000: a jump.
        s.record(8, 20_000, hop);
        assert_eq!(s.entries.len(), 2);
        assert_eq!(s.start_of(7, hop), 1000 + 7 * 512);
        assert_eq!(s.start_of(8, hop), 20_000);
        assert_eq!(s.start_of(10, hop), 20_000 + 2 * 512);
    }

    #[test]
    fn starts_extrapolate_before_the_oldest_entry() {
        let hop = 512;
        let mut s = ColumnStarts::default();
        s.record(100, 60_000, hop);
        assert_eq!(s.start_of(98, hop), 60_000 - 2 * 512);
        assert_eq!(s.start_of(0, hop), 60_000 - 100 * 512);
        // Never before the stream's start.
        let mut s = ColumnStarts::default();
        s.record(100, 1000, hop);
        assert_eq!(s.start_of(0, hop), 0);
    }

    #[test]
    fn starts_forget_entries_older_than_the_ring() {
        let hop = 512;
        let mut s = ColumnStarts::default();
        s.record(0, 1000, hop);
        s.record(8, 20_000, hop);
        s.record(20, 50_000, hop);
        // Columns 7 and on still need the first entry (column 7 is placed by it).
        s.forget_before(7);
        assert_eq!(s.entries.len(), 3);
        // From column 8 on the second entry places everything.
        s.forget_before(8);
        assert_eq!(s.entries.len(), 2);
        assert_eq!(s.start_of(8, hop), 20_000);
        // The newest entry always stays; older columns are extrapolated back from it:
        // 50,000 − (20 − 8)·512 = 43,856.
        s.forget_before(1_000);
        assert_eq!(s.entries.len(), 1);
        assert_eq!(s.start_of(8, hop), 43_856);
        s.clear();
        assert_eq!(s.start_of(3, hop), 3 * 512);
    }

    #[test]
    fn gap_then_resume_gives_true_times() {
        // 48 kHz, N = 960, hop 480: columns 0..=9 from 0, then half a second (24,000 samples)
        // without input, then columns from 10·480 + 24,000 = 28,800.
        let mut s = ColumnStarts::default();
        s.record(0, 0, 480);
        s.record(10, 28_800, 480);
        let t = |w| column_centre_s(s.start_of(w, 480), 960, 48_000);
        // Column 9: (9·480 + 480) / 48,000 = 0.1 s; column 10: (28,800 + 480) / 48,000 = 0.61 s.
        assert!((t(9) - 0.1).abs() < 1e-12);
        assert!((t(10) - 0.61).abs() < 1e-12);
    }
}
