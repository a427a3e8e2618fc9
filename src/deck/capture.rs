//! Frame-time recording: the capture plan (a delayed start and a fixed duration on the run
//! clock, `--record-stats`/`--capture-*`, the Record menu, F9), the CSV recording itself with its
//! rows held a few frames for their GPU times, and the file names of later recordings.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::time::Instant;

use super::Deck;
use crate::gpu::Gpu;
use crate::gpu::timing::PassTimes;
use crate::stats::{FrameRecord, Recorder, Summary};

/// Capture control: a delayed start and a fixed duration (Record menu, `--capture-*`), on the
/// deck's run clock.
#[derive(Clone, Debug, Default)]
pub struct CapturePlan {
    /// Seconds to wait before recording starts (the menu's value).
    pub delay_s: f64,
    /// Seconds to record; 0 = until stopped.
    pub duration_s: f64,
    /// When an armed delayed start fires, on the deck's run clock (s).
    pub(crate) start_at: Option<f64>,
    /// When the running recording stops by itself, on the deck's run clock (s).
    pub(crate) stop_at: Option<f64>,
}

/// Recording state: the CSV writer and rows waiting (a few frames) for their GPU times.
pub(super) struct Recording {
    pub(super) path: PathBuf,
    pub(super) recorder: Recorder,
    pub(super) start: Instant,
    pub(super) pending: VecDeque<FrameRecord>,
}

/// How many frames a row waits for its GPU times before it is written without them.
pub(super) const GPU_TIME_WAIT_FRAMES: u64 = 6;

impl Deck {
    /// The recording plan of the command line: `--record-stats` (`record_path`, also the base
    /// name of later recordings), `--capture-delay` and `--capture-duration` (also the Record
    /// menu's and F9's values). With any of them set, a capture is armed now: recording starts
    /// after the delay (at once without one; into `record_path` or the next
    /// `vizdeck-stats-*.csv`) and stops by itself after the duration, both on the run clock (wall
    /// clock in a window, simulated time headless, so a headless capture covers the same frames
    /// every run).
    pub fn plan_capture(&mut self, record_path: Option<PathBuf>, delay_s: f64, duration_s: f64) {
        self.capture.delay_s = delay_s.max(0.0);
        self.capture.duration_s = duration_s.max(0.0);
        let armed = record_path.is_some() || delay_s > 0.0 || duration_s > 0.0;
        if record_path.is_some() {
            self.set_record_path(record_path);
        }
        if armed {
            self.arm_capture();
        }
    }

    /// Empties the overlay's statistics (window and HDR histogram) and the GPU bars.
    pub fn reset_stats(&mut self) {
        self.live.reset();
        self.gpu_live = [0.0; 3];
    }

    /// Arms a capture: starts recording after `capture.delay_s` (at once when 0); it stops by
    /// itself after `capture.duration_s` when that is positive.
    pub fn arm_capture(&mut self) {
        if self.files.recording.is_some() {
            return;
        }
        let delay = self.capture.delay_s.max(0.0);
        if delay > 0.0 {
            self.capture.start_at = Some(self.pacing.run_s + delay.min(86_400.0));
            self.toast(format!("recording starts in {delay:.1} s"));
        } else {
            self.start_recording();
        }
    }

    /// Seconds until an armed capture starts, if one is armed.
    pub fn capture_countdown(&self) -> Option<f64> {
        self.capture
            .start_at
            .map(|t| (t - self.pacing.run_s).max(0.0))
    }

    /// Starts or stops a capture whose time has come.
    pub(super) fn capture_tick(&mut self, gpu: &Gpu) {
        let now = self.pacing.run_s;
        if self.capture.start_at.is_some_and(|t| now >= t) {
            self.capture.start_at = None;
            self.start_recording();
        }
        if self.capture.stop_at.is_some_and(|t| now >= t) {
            self.capture.stop_at = None;
            self.stop_recording(gpu);
        }
    }

    /// Starts frame-time recording into the next file name.
    pub fn start_recording(&mut self) {
        if self.files.recording.is_some() {
            return;
        }
        let path = self.next_record_path();
        match Recorder::create(&path) {
            Ok(recorder) => {
                log::info!("recording frame times to {}", path.display());
                self.toast(format!("recording to {}", path.display()));
                self.files.recording = Some(Recording {
                    path,
                    recorder,
                    start: Instant::now(),
                    pending: VecDeque::new(),
                });
                self.capture.start_at = None;
                self.capture.stop_at = (self.capture.duration_s > 0.0)
                    .then(|| self.pacing.run_s + self.capture.duration_s.min(86_400.0));
                self.files.recordings_made += 1;
            }
            Err(e) => {
                log::error!("{e}");
                self.toast(e.to_string());
            }
        }
    }

    /// Stops recording: waits for outstanding GPU times (briefly), writes every pending row,
    /// closes the file and prints its summary. Returns the summary.
    pub fn stop_recording(&mut self, gpu: &Gpu) -> Option<Summary> {
        self.capture.start_at = None;
        self.capture.stop_at = None;
        let mut rec = self.files.recording.take()?;
        let gpu_times = self.drain_readbacks(gpu, true);
        attach_gpu_times(&mut rec.pending, &gpu_times);
        for row in rec.pending.drain(..) {
            if let Err(e) = rec.recorder.push(&row) {
                log::error!("recording to {}: {e}", rec.path.display());
                break;
            }
        }
        match rec.recorder.finish() {
            Ok(summary) => {
                // Above a terminal progress bar (`vizdeck bench`), not through it.
                crate::progress::suspend(|| {
                    println!("recorded {}: {summary}", rec.path.display());
                });
                self.toast(format!("saved {}", rec.path.display()));
                self.finished.push((rec.path.clone(), summary.clone()));
                self.ui_state.compare.recorded(&rec.path);
                Some(summary)
            }
            Err(e) => {
                log::error!("recording to {}: {e}", rec.path.display());
                None
            }
        }
    }

    /// Sets the file the next recording goes to (`None`: `vizdeck-stats-<unix time>.csv`); the
    /// numbering of later recordings restarts from it.
    pub fn set_record_path(&mut self, path: Option<PathBuf>) {
        self.files.record_path = path;
        self.files.recordings_made = 0;
    }

    /// The directory recordings go to: that of `--record-stats`, else the working directory.
    pub fn recordings_dir(&self) -> PathBuf {
        match self.next_record_path().parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        }
    }

    /// Opens *Compare captures* with this run's recordings and the captures of
    /// [`recordings_dir`](Deck::recordings_dir) to pick from.
    pub fn open_compare(&mut self) {
        let session: Vec<PathBuf> = self.finished.iter().map(|(p, _)| p.clone()).collect();
        let dir = self.recordings_dir();
        self.ui_state.compare.open_with(&session, Some(dir));
    }

    /// Whether a recording is running.
    pub fn recording(&self) -> bool {
        self.files.recording.is_some()
    }

    pub(super) fn next_record_path(&self) -> PathBuf {
        let base = self.files.record_path.clone().unwrap_or_else(|| {
            let secs = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0);
            PathBuf::from(format!("vizdeck-stats-{secs}.csv"))
        });
        if self.files.recordings_made == 0 && !(self.files.record_path.is_none() && base.exists()) {
            return base;
        }
        let stem = base
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "vizdeck-stats".into());
        let dir = base.parent().map(PathBuf::from).unwrap_or_default();
        (2..)
            .map(|n| dir.join(format!("{stem}-{n}.csv")))
            .find(|p| !p.exists())
            .unwrap_or(base)
    }
}

/// Puts GPU pass times on their rows.
pub(super) fn attach_gpu_times(pending: &mut VecDeque<FrameRecord>, gpu_times: &[PassTimes]) {
    for g in gpu_times {
        if let Some(row) = pending.iter_mut().find(|r| r.frame == g.frame) {
            row.gpu_compute_ms = Some(g.compute_ms);
            row.gpu_render_ms = Some(g.render_ms);
            row.gpu_ui_ms = g.ui_ms;
        }
    }
}
