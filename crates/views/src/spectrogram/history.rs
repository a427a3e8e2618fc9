//! The scene's CPU copy of what it shows: [`ColumnHistory`] (the columns the panel shows, at
//! full resolution by written index, for the hover readout, the spectrum view and the export),
//! the last second of columns and the peak hold behind the metrics ([`Spectrogram::dominant`]),
//! and the CSV export of the history ([`Spectrogram::export_csv`]).

use std::collections::VecDeque;

use super::{GAP_DB, HISTORY_VALUES, Spectrogram};
use crate::SceneError;
use crate::audio::stft;

/// What the CPU keeps of the analysis' output: the columns shown (the history), the recent
/// columns and the peak hold behind the readouts and metrics, and the latencies.
pub(super) struct Levels {
    /// CPU copy of what is shown: full-resolution columns by written index.
    pub(super) history: ColumnHistory,
    pub(super) recent: VecDeque<Vec<f32>>,
    pub(super) peak_hold: Vec<f32>,
    /// [`Spectrogram::dominant`] of the current `recent` columns, once computed.
    pub(super) dominant_cache: std::cell::Cell<Option<Option<(f64, f64)>>>,
    /// Capture-to-present latencies (ms), newest last.
    pub(super) latencies: VecDeque<f64>,
}

impl Levels {
    /// Nothing kept yet, `bins` bins a column.
    pub(super) fn new(bins: usize) -> Levels {
        Levels {
            history: ColumnHistory::new(0, 1),
            recent: VecDeque::new(),
            peak_hold: vec![stft::DB_FLOOR; bins],
            dominant_cache: std::cell::Cell::new(None),
            latencies: VecDeque::new(),
        }
    }
}

impl Spectrogram {
    /// Starts a new history at the current written index (after new analysis settings): older
    /// GPU readbacks become stale; the metrics and the peak hold start again.
    ///
    /// The history's memory is allocated and written here, for as many columns as the source
    /// will fill (the whole scrollback for live input and the synthetic signals, a file's own
    /// columns for a file), so the process's memory stays flat while the scrollback fills
    /// (70 s at the default hop) instead of growing with it.
    pub(super) fn reset_history(&mut self) {
        self.rec.readbacks_stale = true;
        let cap = (self.a.ring_width as usize)
            .min(HISTORY_VALUES / self.a.bins.max(1))
            .max(1);
        let expected = match self.source.file_samples() {
            Some(len) if !self.source.looping() => {
                super::file_columns(len, self.a.settings.fft_size, self.a.settings.hop) as usize
            }
            _ => cap,
        };
        let old = std::mem::take(&mut self.levels.history);
        self.levels.history =
            ColumnHistory::with_room(self.tl.written, cap, expected, self.a.bins, old);
        self.levels.recent.clear();
        self.levels.dominant_cache.set(None);
        self.levels.peak_hold = vec![stft::DB_FLOOR; self.a.bins];
        self.rec.column = vec![stft::DB_FLOOR; self.a.bins];
    }

    /// The dominant frequency of the last second, Hz: the bin of the largest mean power, placed
    /// between bins by the window's own transform ([`crate::audio::peak::interpolate_peak`]: a
    /// steady tone reads within 1 Hz, not at the bin centre), and the tone level around it from
    /// the power-averaged column
    /// ([`stft::tone_level_db_with`]: the window's ENBW compensated, so it does not depend on
    /// where the tone falls between bins). `None` before the first column.
    pub fn dominant(&self) -> Option<(f64, f64)> {
        // The side panel asks every frame; recompute only after new columns arrived.
        if let Some(d) = self.levels.dominant_cache.get() {
            return d;
        }
        let d = self.compute_dominant();
        self.levels.dominant_cache.set(Some(d));
        d
    }

    fn compute_dominant(&self) -> Option<(f64, f64)> {
        if self.levels.recent.is_empty() {
            return None;
        }
        let mut mean = vec![0f64; self.a.bins];
        for col in &self.levels.recent {
            for (m, db) in mean.iter_mut().zip(col) {
                *m += 10f64.powf(*db as f64 / 10.0);
            }
        }
        let n = self.levels.recent.len() as f64;
        let mean_db: Vec<f32> = mean
            .iter()
            .map(|p| ((10.0 * (p / n).log10()) as f32).max(stft::DB_FLOOR))
            .collect();
        let (k, _) = stft::dominant(&mean_db);
        // Between bins, from the window's own transform (within 1 Hz for a steady tone).
        let bin = crate::audio::peak::interpolate_peak(&mean_db, k, self.a.settings.window);
        let hz = bin * self.source.sample_rate() as f64 / self.a.settings.fft_size as f64;
        Some((
            hz,
            stft::tone_level_db_with(&mean_db, k, self.a.settings.window) as f64,
        ))
    }

    /// Every column kept in the history (what the panel shows; full resolution), oldest first,
    /// with the centre time of each in seconds. An empty slice is a column shown whose levels
    /// have not come back (yet) from the GPU.
    pub fn history(&self) -> impl Iterator<Item = (f64, &[f32])> + '_ {
        self.levels
            .history
            .iter()
            .map(move |(w, c)| (self.column_time(w), c))
    }

    /// Writes the history as CSV: header `time_s,<bin Hz>...`, one row per column with its centre
    /// time and the dBFS of every bin, exactly the values the panel shows.
    pub fn export_csv(&self, path: &std::path::Path) -> Result<usize, SceneError> {
        let err =
            |e: String| SceneError::Other(format!("spectrogram export '{}': {e}", path.display()));
        let mut w = csv::Writer::from_path(path).map_err(|e| err(e.to_string()))?;
        let sr = self.source.sample_rate() as f64;
        let n = self.a.settings.fft_size as f64;
        let mut header = vec!["time_s".to_string()];
        header.extend((0..self.a.bins).map(|k| format!("{}", k as f64 * sr / n)));
        w.write_record(&header).map_err(|e| err(e.to_string()))?;
        let mut rows = 0;
        let bins = self.a.bins;
        for (t, col) in self.history() {
            let mut rec = Vec::with_capacity(bins + 1);
            rec.push(format!("{t}"));
            if col.is_empty() {
                // A column shown but whose levels never came back (readback ring full).
                rec.extend(std::iter::repeat_n("NaN".to_string(), bins));
            }
            rec.extend(col.iter().map(|v| {
                if *v <= GAP_DB {
                    "NaN".to_string()
                } else {
                    format!("{v}")
                }
            }));
            w.write_record(&rec).map_err(|e| err(e.to_string()))?;
            rows += 1;
        }
        w.flush().map_err(|e| err(e.to_string()))?;
        Ok(rows)
    }

    /// Feeds one analysed column to the metrics (last second, peak hold) and, when it was
    /// written to the ring as column `written`, puts it into the history at that index. Columns
    /// may arrive out of order (the GPU path's readbacks land 1–3 frames late, after gap columns
    /// of later frames): missing ones are held by empty placeholders until they arrive (export:
    /// NaN rows if they never do).
    pub(super) fn push_history(&mut self, col: &[f32], written: Option<u64>) {
        // Metrics: the last second.
        let keep_recent = self.columns_per_second().ceil().max(1.0) as usize;
        push_recycled(&mut self.levels.recent, keep_recent, col);
        self.levels.dominant_cache.set(None);
        for (p, v) in self.levels.peak_hold.iter_mut().zip(col) {
            *p = p.max(*v);
        }
        if let Some(w) = written {
            self.levels.history.place(w, col);
        }
    }
}

/// The columns the panel shows, kept on the CPU at full resolution for the readout, the spectrum
/// view and the export, by written (ring) index: slots `first..first + len`, at most `cap`, the
/// oldest dropped first. Columns may arrive out of order (the GPU path's levels come back 1–3
/// frames late, after gap columns of later frames were placed): a slot not filled yet is empty.
#[derive(Debug, Default)]
pub(super) struct ColumnHistory {
    slots: VecDeque<Vec<f32>>,
    first: u64,
    cap: usize,
    /// Columns allocated (and written) up front, taken before any new allocation.
    spare: Vec<Vec<f32>>,
}

impl ColumnHistory {
    /// Empty, starting at written index `first`, holding at most `cap` (≥ 1) columns.
    pub(super) fn new(first: u64, cap: usize) -> ColumnHistory {
        ColumnHistory {
            slots: VecDeque::new(),
            first,
            cap: cap.max(1),
            spare: Vec::new(),
        }
    }

    /// [`ColumnHistory::new`] with room made now for `columns` (at most `cap`) columns of
    /// `bins` values: allocated and written once, so their pages are resident before the first
    /// column arrives. The columns of `old` (a history replaced) are reused first.
    pub(super) fn with_room(
        first: u64,
        cap: usize,
        columns: usize,
        bins: usize,
        old: ColumnHistory,
    ) -> ColumnHistory {
        let mut h = ColumnHistory::new(first, cap);
        let want = columns.min(h.cap);
        h.slots = VecDeque::with_capacity(want);
        h.spare = old.spare;
        h.spare.extend(old.slots);
        h.spare.truncate(want);
        h.spare.reserve_exact(want - h.spare.len());
        for v in &mut h.spare {
            if v.capacity() < bins {
                *v = Vec::new();
            }
        }
        h.spare.resize_with(want, Vec::new);
        for v in &mut h.spare {
            if v.capacity() < bins {
                v.reserve_exact(bins);
                // Written, not just reserved: untouched pages would be faulted in one by one
                // as columns arrive.
                v.resize(bins, 0.0);
            }
            v.clear();
        }
        h
    }

    /// Written index of the oldest slot.
    pub(super) fn first(&self) -> u64 {
        self.first
    }

    /// One past the newest slot.
    pub(super) fn end(&self) -> u64 {
        self.first + self.slots.len() as u64
    }

    /// Puts column `w`: fills its slot if held (a late arrival), appends it after empty slots for
    /// any columns between, or ignores it if older than the oldest slot. An empty `col` leaves
    /// the slot empty (a column without levels).
    pub(super) fn place(&mut self, w: u64, col: &[f32]) {
        if w < self.first {
            return;
        }
        if w < self.end() {
            let slot = &mut self.slots[(w - self.first) as usize];
            slot.clear();
            slot.extend_from_slice(col);
            return;
        }
        if w - self.end() >= self.cap as u64 {
            self.spare.extend(self.slots.drain(..));
            self.first = w;
        }
        while self.end() < w {
            self.push(&[]);
        }
        self.push(col);
    }

    fn push(&mut self, col: &[f32]) {
        if self.slots.len() < self.cap
            && let Some(mut v) = self.spare.pop()
        {
            v.clear();
            v.extend_from_slice(col);
            self.slots.push_back(v);
            return;
        }
        if push_recycled(&mut self.slots, self.cap, col) {
            self.first += 1;
        }
    }

    /// Column `w` if held and filled.
    pub(super) fn get(&self, w: u64) -> Option<&[f32]> {
        let i = usize::try_from(w.checked_sub(self.first)?).ok()?;
        self.slots
            .get(i)
            .map(Vec::as_slice)
            .filter(|c| !c.is_empty())
    }

    /// Every slot, oldest first, with its written index (empty = not arrived).
    fn iter(&self) -> impl Iterator<Item = (u64, &[f32])> + '_ {
        (self.first..).zip(self.slots.iter().map(Vec::as_slice))
    }
}

/// Appends a copy of `col` to `queue`, first dropping the oldest entry (its allocation reused)
/// when `queue` already holds `cap`; returns whether one was dropped.
fn push_recycled(queue: &mut VecDeque<Vec<f32>>, cap: usize, col: &[f32]) -> bool {
    let dropped = queue.len() >= cap;
    let mut v = if dropped {
        queue.pop_front().unwrap_or_default()
    } else {
        Vec::with_capacity(col.len())
    };
    v.clear();
    v.extend_from_slice(col);
    queue.push_back(v);
    dropped
}

#[cfg(test)]
mod tests {
    use super::ColumnHistory;

    #[test]
    fn late_columns_fill_their_slots_in_written_order() {
        let mut h = ColumnHistory::new(10, 4);
        // Frame A writes 10..12 (levels arrive late); frame B's gap columns 12..13 come first.
        h.place(12, &[-1.0]);
        h.place(13, &[-1.0]);
        assert_eq!((h.first, h.end()), (10, 14));
        assert_eq!(h.get(10), None);
        h.place(10, &[1.0]);
        h.place(11, &[2.0]);
        let got: Vec<(u64, Vec<f32>)> = h.iter().map(|(w, c)| (w, c.to_vec())).collect();
        assert_eq!(
            got,
            vec![
                (10, vec![1.0]),
                (11, vec![2.0]),
                (12, vec![-1.0]),
                (13, vec![-1.0])
            ]
        );
        // At the cap the oldest goes; older than the oldest is ignored; far ahead restarts.
        h.place(14, &[3.0]);
        assert_eq!((h.first, h.end(), h.get(14)), (11, 15, Some(&[3.0][..])));
        h.place(5, &[9.0]);
        assert_eq!(h.first, 11);
        h.place(100, &[4.0]);
        assert_eq!((h.first, h.end(), h.get(100)), (100, 101, Some(&[4.0][..])));
    }

    #[test]
    fn room_made_up_front_is_used_before_any_allocation() {
        let h = ColumnHistory::with_room(0, 4, 10, 3, ColumnHistory::default());
        // At most `cap` columns, each with room for 3 values.
        assert_eq!(h.spare.len(), 4);
        assert!(h.spare.iter().all(|v| v.is_empty() && v.capacity() >= 3));
        let ptrs: Vec<*const f32> = h.spare.iter().map(|v| v.as_ptr()).collect();
        let mut h = h;
        for w in 0..6 {
            h.place(w, &[w as f32; 3]);
        }
        // Every column lives in one of the allocations made up front (the oldest recycled).
        assert_eq!((h.first, h.end()), (2, 6));
        assert!(h.slots.iter().all(|v| ptrs.contains(&v.as_ptr())));
        assert_eq!(h.get(5), Some(&[5.0; 3][..]));
        // A new history reuses the old one's columns; a short file makes room for its own.
        let h = ColumnHistory::with_room(6, 4, 2, 3, h);
        assert_eq!(h.spare.len(), 2);
        assert!(h.spare.iter().all(|v| ptrs.contains(&v.as_ptr())));
    }
}
