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
use crate::scene::FrameCtx;

/// Gap columns drawn for `gap` samples of missing input: one per hop begun, at most
/// [`MAX_BATCH`].
pub(super) fn gap_columns(gap: u64, hop: usize) -> u32 {
    (gap.div_ceil(hop as u64)).min(MAX_BATCH as u64) as u32
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

impl Spectrogram {
    /// `ingest`: drains the source, puts the new samples, gaps and dropped samples on the
    /// timeline, and cuts the samples into this frame's columns: STFT columns on the CPU path
    /// (`pending`), FFT frames on the GPU path (`a.frames`), or gap columns; the CPU path's and
    /// gap columns go into the history here, the GPU path's when their levels come back.
    pub(super) fn ingest_audio(&mut self, frame: &FrameCtx) {
        self.scene_time += frame.elapsed_s;
        self.source.advance_to(self.scene_time);
        self.scratch.clear();
        self.source.drain_into(&mut self.scratch);
        let drained_before = self.drained_total;
        self.drained_total += self.scratch.len() as u64;
        let n = self.a.settings.fft_size;
        let hop = self.a.settings.hop;
        // No data for a while (device gone or silent): a gap, not silence; frames restart after.
        let gap = self.source.gap_samples();
        self.gap_cols = 0;
        let gap_start = self.next_start;
        if gap > 0 {
            self.gap_cols = gap_columns(gap, hop);
            self.gap_total += gap;
            self.pending.clear();
            self.pending_cols = 0;
        }
        self.frame_capture = None;
        // After a long pause (scene hidden), analyse only the newest MAX_BATCH columns' worth.
        let skip = backlog_skip(self.scratch.len(), n, hop);
        self.samples_skipped += skip as u64;
        self.samples_total += self.scratch.len() as u64;
        if gap > 0 || skip > 0 {
            // The STFT restarts at the first sample analysed (stream position base + skip).
            let restart = drained_before + self.gap_total + skip as u64;
            if skip > 0 {
                // Columns an uninterrupted STFT would have started between the next column's
                // position and the restart (the gap's own columns are drawn as gap columns).
                self.columns_skipped +=
                    columns_skipped_before(restart, gap, self.next_start, hop as u64);
            }
            self.a.cpu.reset();
            self.a.tail.clear();
            self.next_start = restart;
        }
        let bins = self.a.bins;
        let hop64 = hop as u64;
        match self.a.fft_on {
            FftOn::Cpu => {
                self.a.cpu.push(&self.scratch[skip..]);
                while self.a.cpu.pop_column(&mut self.column) {
                    self.columns_total += 1;
                    if self.pending_cols == 0 {
                        self.pending_start = self.next_start;
                    }
                    self.next_start += hop64;
                    if self.pending_cols >= MAX_BATCH {
                        self.pending.drain(..bins);
                        self.pending_cols -= 1;
                        self.pending_start += hop64;
                        self.columns_skipped += 1;
                    }
                    self.pending.extend_from_slice(&self.column);
                    self.pending_cols += 1;
                }
            }
            // `fft_on` is resolved (never Auto); Auto here would be the GPU path.
            FftOn::Gpu | FftOn::Auto => {
                let a = &mut self.a;
                a.tail.extend_from_slice(&self.scratch[skip..]);
                a.frames.clear();
                a.batch = 0;
                let mut start = 0;
                while start + n <= a.tail.len() {
                    if a.batch == 0 {
                        self.pending_start = self.next_start;
                    }
                    if a.batch >= MAX_BATCH {
                        // Drop the oldest frame of this batch: keep the newest MAX_BATCH.
                        a.frames.drain(..n);
                        a.batch -= 1;
                        self.pending_start += hop64;
                        self.columns_skipped += 1;
                    }
                    a.frames.extend_from_slice(&a.tail[start..start + n]);
                    a.batch += 1;
                    start += hop;
                    self.next_start += hop64;
                    self.columns_total += 1;
                }
                a.tail.drain(..start.min(a.tail.len()));
                self.pending_cols = a.batch;
            }
        }
        // The newest column this frame ends at sample drained − pending − hop + N − 1 (pending =
        // samples kept for the next column); its capture instant comes from the source's clock,
        // which counts dropped samples too (those before this frame's).
        if self.pending_cols > 0
            && let Some((delivered, at)) = self.source.sample_clock()
        {
            let pending = match self.a.fft_on {
                FftOn::Cpu => self.a.cpu.pending() as u64,
                FftOn::Gpu | FftOn::Auto => self.a.tail.len() as u64,
            };
            let end = newest_column_end(
                self.drained_total,
                self.dropped_seen,
                n as u64,
                pending,
                hop as u64,
            );
            let behind = delivered.saturating_sub(end + 1);
            let sr = self.source.sample_rate().max(1) as f64;
            self.frame_capture =
                at.checked_sub(std::time::Duration::from_secs_f64(behind as f64 / sr));
        }
        // Samples the source dropped (its ring overflowed, e.g. while the scene was hidden) are
        // newer than the ones drained: a hole after them. The timeline steps over it and the STFT
        // restarts after it, so later columns keep their true times.
        let dropped = self.source.dropped();
        let lost = dropped.saturating_sub(self.dropped_seen);
        self.dropped_seen = dropped;
        if lost > 0 {
            self.gap_total += lost;
            self.a.cpu.reset();
            self.a.tail.clear();
            self.next_start = self.drained_total + self.gap_total;
        }
        if self.gap_cols > 0 {
            // Gap columns replace this frame's columns (data resuming right after a gap is rare).
            let bins = self.a.bins;
            self.columns_skipped += self.pending_cols as u64;
            self.a.batch = 0;
            self.pending.clear();
            self.pending.resize(self.gap_cols as usize * bins, GAP_DB);
            self.pending_cols = self.gap_cols;
            self.pending_start = gap_start;
            let gap_col = vec![GAP_DB; bins];
            for j in 0..u64::from(self.gap_cols) {
                let w = (!self.frozen).then_some(self.written + j);
                self.push_history(&gap_col, w);
            }
        } else if self.a.fft_on == FftOn::Cpu {
            // The history holds what the panel shows: the columns kept for this frame (the GPU
            // path's arrive through the readback).
            let pending = std::mem::take(&mut self.pending);
            for (j, col) in (0u64..).zip(pending.chunks_exact(bins)) {
                let w = (!self.frozen).then_some(self.written + j);
                self.push_history(col, w);
            }
            self.pending = pending;
        }
    }

    /// `prepare`, once this frame's columns are uploaded: they are written into the ring, so the
    /// written-column count (the display's clock) moves on and [`ColumnStarts`] places them.
    pub(super) fn advance_written(&mut self) {
        if self.write_cols == 0 {
            return;
        }
        // A new entry only where the columns do not continue one hop on from the last one.
        let hop = self.a.settings.hop as u64;
        self.starts.record(self.written, self.pending_start, hop);
        self.written += self.write_cols as u64;
        // Keep the entries the ring still shows (the newest one always).
        self.starts
            .forget_before(self.written.saturating_sub(self.a.ring_width as u64));
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
        let start = self.starts.start_of(w, self.a.settings.hop as u64);
        column_centre_s(start, self.a.settings.fft_size, self.source.sample_rate())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gap_columns_one_per_hop_begun_at_most_a_batch() {
        assert_eq!(gap_columns(0, 512), 0);
        assert_eq!(gap_columns(1, 512), 1);
        assert_eq!(gap_columns(512, 512), 1);
        assert_eq!(gap_columns(513, 512), 2);
        // 1000 samples at hop 512: hops begin at 0 and 512.
        assert_eq!(gap_columns(1000, 512), 2);
        // 10 s at 48 kHz, hop 480: 1000 columns, capped at MAX_BATCH = 512.
        assert_eq!(gap_columns(480_000, 480), 512);
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
