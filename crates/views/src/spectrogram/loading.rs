//! A long sound file decoded off the frame thread, in the window: an hour of audio takes
//! seconds to decode (6 s for a 128 kbit/s MP3, 10 s for a 16-bit stereo WAV on the 2-core
//! machine), which would freeze the window before its first frame or on a file drop. A file of
//! [`BACKGROUND_FROM_BYTES`] or more is decoded on `vizdeck-audio-decode`
//! ([`MonoFile::decode`]) while the scene shows a progress bar (side panel and image: stage,
//! fraction, rate, time left) and the window stays live; when it is done, the frame opens it as
//! if it had been decoded at once (analysed whole, the view fitted to it).
//!
//! Smaller files, and every file in headless runs (simulated clock: each run the same frames),
//! are decoded before the scene opens, as before; a headless run shows a terminal bar while it
//! waits ([`crate::progress::Progress`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, TryRecvError};
use std::time::Instant;

use crate::audio::file::{DecodeStage, MonoFile};
use crate::audio::{AudioError, AudioOptions};
use crate::progress::Estimate;

/// Files of this many bytes or more are decoded on their own thread in the window (4 MiB: a
/// 4-minute MP3 at 128 kbit/s, 24 s of 16-bit stereo WAV; well under half a second to decode).
pub const BACKGROUND_FROM_BYTES: u64 = 4 << 20;

/// Whether `path` is decoded on its own thread: not with a simulated clock (headless), and only
/// files of [`BACKGROUND_FROM_BYTES`] or more (a file that cannot be read is opened at once, so
/// its error is the scene's, as before).
pub fn in_background(path: &Path, simulated_clock: bool) -> bool {
    !simulated_clock
        && std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.len() >= BACKGROUND_FROM_BYTES)
}

/// What the decoding thread publishes.
#[derive(Default)]
struct Shared {
    /// 0 reading, 1 decoding.
    stage: AtomicU64,
    done: AtomicU64,
    total: AtomicU64,
    /// When the current stage started, µs after the load started.
    stage_start_us: AtomicU64,
    /// Set when the load is no longer wanted: the thread stops at its next report.
    cancel: AtomicBool,
}

/// A file being decoded on `vizdeck-audio-decode`.
pub(crate) struct FileLoad {
    path: PathBuf,
    options: AudioOptions,
    started: Instant,
    shared: Arc<Shared>,
    done: Receiver<Result<MonoFile, AudioError>>,
}

impl FileLoad {
    /// Starts decoding `path` (the channel of `options`) on its own thread.
    ///
    /// # Errors
    ///
    /// [`AudioError::FileRead`] when the thread cannot be started.
    pub fn start(path: &Path, options: AudioOptions) -> Result<FileLoad, AudioError> {
        let shared = Arc::new(Shared::default());
        let (tx, rx) = std::sync::mpsc::channel();
        let started = Instant::now();
        let (s, p, channel) = (shared.clone(), path.to_path_buf(), options.channel);
        std::thread::Builder::new()
            .name("vizdeck-audio-decode".into())
            .spawn(move || {
                let result = MonoFile::decode(&p, channel, &mut |stage, done, total| {
                    let stage = match stage {
                        DecodeStage::Reading => 0,
                        DecodeStage::Decoding => 1,
                    };
                    if s.stage.swap(stage, Ordering::Relaxed) != stage {
                        s.stage_start_us
                            .store(started.elapsed().as_micros() as u64, Ordering::Relaxed);
                    }
                    s.done.store(done, Ordering::Relaxed);
                    s.total.store(total, Ordering::Relaxed);
                    !s.cancel.load(Ordering::Relaxed)
                });
                let _ = tx.send(result);
            })
            .map_err(|e| AudioError::FileRead {
                path: path.to_path_buf(),
                reason: format!("cannot start decoding: {e}"),
            })?;
        Ok(FileLoad {
            path: path.to_path_buf(),
            options,
            started,
            shared,
            done: rx,
        })
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The options it opens with.
    pub fn options(&self) -> AudioOptions {
        self.options
    }

    /// The decoded file or the error, once the thread is done; `None` while it works.
    pub fn poll(&self) -> Option<Result<MonoFile, AudioError>> {
        match self.done.try_recv() {
            Ok(r) => Some(r),
            Err(TryRecvError::Empty) => None,
            Err(TryRecvError::Disconnected) => Some(Err(AudioError::Decode {
                path: self.path.clone(),
                reason: "the decoding thread stopped".to_string(),
            })),
        }
    }

    /// The stage (`"reading"` or `"decoding"`) and its estimate: bytes of the stage done, their
    /// rate and the time the stage has left.
    pub fn estimate(&self) -> (&'static str, Estimate) {
        let s = &self.shared;
        let stage = if s.stage.load(Ordering::Relaxed) == 0 {
            "reading"
        } else {
            "decoding"
        };
        let since = self.started.elapsed().as_secs_f64()
            - s.stage_start_us.load(Ordering::Relaxed) as f64 / 1e6;
        (
            stage,
            Estimate::new(
                s.done.load(Ordering::Relaxed) as f64,
                s.total.load(Ordering::Relaxed) as f64,
                since.max(0.0),
            ),
        )
    }

    /// One line for the bar: `"decoding long.mp3: 43 % · 12.3 MB/s · 0:04 left"`.
    pub fn text(&self) -> String {
        let (stage, e) = self.estimate();
        let name = self.path.file_name().map_or_else(
            || self.path.display().to_string(),
            |n| n.to_string_lossy().into(),
        );
        format!("{stage} {name}: {}", e.text("B"))
    }

    /// The bar in the side panel, and its line below it.
    pub fn panel(&self, ui: &mut egui::Ui) {
        let (_, e) = self.estimate();
        ui.add(egui::ProgressBar::new(e.fraction as f32).show_percentage());
        ui.label(self.text());
    }

    /// The bar over the image, and a repaint in 100 ms (the window may be waiting for input).
    pub fn paint(&self, painter: &egui::Painter, rect: egui::Rect) {
        let (_, e) = self.estimate();
        crate::progress_bar::paint_bar(painter, rect, e.fraction as f32, &self.text());
        painter
            .ctx()
            .request_repaint_after(std::time::Duration::from_millis(100));
    }
}

impl Drop for FileLoad {
    /// A load no longer wanted (another source chosen, the scene closed) stops decoding.
    fn drop(&mut self) {
        self.shared.cancel.store(true, Ordering::Relaxed);
    }
}
