//! Recording the scene panel to a video file (`--record-video PATH`, View ▸ Record video, F10):
//! the same crop of the output that F12 saves (the scene with what is drawn on it: its axes and
//! labels, the stats overlay when shown, notices), copied every frame into the readback ring in
//! the frame's one encoder, after the egui pass, and piped by the `vizdeck-video` writer thread
//! into `ffmpeg` ([`crate::gpu::video`]). Nothing here waits in the frame loop: a full ring or a
//! writer that is behind drops the frame (counted), and ending a file (ffmpeg finishing it) is
//! waited for by the writer thread, the toast coming when it is done. Only the end of a run
//! waits, for the file to be complete.
//!
//! **Time.** The file has a constant [`VIDEO_FPS`] frames per second. With
//! [`VideoClock::PerFrame`] (headless runs, whose simulated clock advances 1/60 s a frame) every
//! drawn frame is one video frame, and the frame loop waits for the writer rather than drop one.
//! With [`VideoClock::RealTime`] (the window, whose frames come at a varying rate) the video's
//! time follows the wall clock, as OBS does: video frame k stands for the instant k / 60 s after
//! the recording started and shows the first frame drawn at or after it. A frame drawn when no
//! video frame is due (drawing faster than 60 fps) is not copied at all; one drawn after a gap
//! (a slow frame, a dropped one) is written as many times as video frames fell due meanwhile. A
//! gap longer than [`MAX_GAP_S`] (a minimized window draws nothing) is cut to that length.
//!
//! The crop's size is fixed when the first frame is recorded (made even for yuv420p by leaving
//! out the last column or row); if the scene panel changes size (the window or the side panel is
//! resized) the recording ends there, the file finished properly, and the toast says why.

use std::path::{Path, PathBuf};
use std::time::Instant;

use super::Deck;
use crate::gpu::Gpu;
use crate::gpu::readback::{Arrived, Consumer};
use crate::gpu::video::{
    Codec, FINISH_TIMEOUT, Finishing, VideoError, VideoOutcome, VideoSpec, VideoWriter,
};

/// Frames per second of every video file.
pub const VIDEO_FPS: u32 = 60;

/// The longest gap between two drawn frames the video holds (seconds); the rest of a longer gap
/// is left out of the file.
pub const MAX_GAP_S: u32 = 10;

/// Readback buffers the video may hold at once: the writer's queue, the frame being written,
/// and the frame in flight on the GPU.
pub(super) const RING_BUFFERS: usize = crate::gpu::video::QUEUE_DEPTH + 2;

/// How the video's time relates to the frames drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VideoClock {
    /// Every frame drawn is one video frame; the frame loop waits for the writer instead of
    /// dropping a frame (headless runs: every frame advances 1/60 s of simulated time).
    PerFrame,
    /// The video follows the wall clock at a constant [`VIDEO_FPS`], frames repeated or left out
    /// against it; nothing waits, a frame the ring or writer cannot take is dropped (the window).
    RealTime,
}

/// One video file of the run, for the report (`videos` in `--report`) and the toasts.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct VideoSummary {
    /// The file (absolute).
    pub path: PathBuf,
    /// The encoder's codec.
    pub codec: Codec,
    /// Width and height in pixels (the scene panel's, made even); 0 × 0 when no frame was drawn.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// Frames per second of the file.
    pub fps: u32,
    /// Video frames written into ffmpeg, repeats included: the file's frame count.
    pub frames_written: u64,
    /// Video frames that repeat the frame before them, holding real time over a slow frame.
    pub frames_repeated: u64,
    /// Frames drawn while recording that the video should have had and did not get: the
    /// readback ring or the writer was full, or ffmpeg had failed.
    pub frames_dropped: u64,
    /// The file's length in seconds (`frames_written / fps`).
    pub seconds: f64,
    /// Why the recording ended before it was stopped (the scene panel changed size, ffmpeg
    /// failed), if it did.
    pub stopped_because: Option<String>,
    /// Why the file may be incomplete (ffmpeg failed or was killed), if it may.
    pub error: Option<String>,
}

/// The payload of a video readback.
#[derive(Clone, Copy, Debug)]
struct VideoFrame {
    /// The recording it belongs to.
    recording: u64,
    /// Video frames it stands for.
    repeat: u64,
}

/// The recording running now.
struct Recording {
    id: u64,
    path: PathBuf,
    codec: Codec,
    clock: VideoClock,
    ffmpeg: PathBuf,
    /// Started at the first frame recorded, when the crop's size is known.
    writer: Option<VideoWriter>,
    /// When the first frame was recorded (the video's time 0).
    started: Option<Instant>,
    /// Video frames asked for so far (copies recorded, each standing for its repeats).
    ticks: u64,
    /// Video frames of frames dropped on arrival, added to the next frame handed over.
    owed: u64,
    dropped: u64,
}

/// The deck's video recording: the one running, the files being finished by their writer
/// threads, and every file of the run.
#[derive(Default)]
pub(super) struct Video {
    rec: Option<Recording>,
    next_id: u64,
    /// Files ended and being finished by their writer threads: the file, its summary so far,
    /// and its clock.
    finishing: Vec<(Finishing, VideoSummary, VideoClock)>,
    /// Every file of the run that has ended.
    done: Vec<VideoSummary>,
    /// The first problem of a recording with [`VideoClock::PerFrame`] (headless): said once, by
    /// [`Deck::finish_video`]'s error, not in the log as well.
    first_error: Option<String>,
}

impl Deck {
    /// Starts recording the scene panel into `path` (`None`: `vizdeck-<scene>-<unix time>.mp4`
    /// in the directory PNGs go to), from the next frame on; `clock` says how its time follows
    /// the frames ([`VideoClock`]). A recording already running is stopped first. Returns the
    /// file's absolute path.
    ///
    /// # Errors
    ///
    /// [`VideoError::NoFfmpeg`] (no `ffmpeg` on `PATH`), [`VideoError::Extension`] (not `.mp4`,
    /// `.mkv`, `.mov` or `.webm`), [`VideoError::NoDir`].
    pub fn start_video(
        &mut self,
        path: Option<PathBuf>,
        clock: VideoClock,
    ) -> Result<PathBuf, VideoError> {
        let path = match path {
            Some(p) => p,
            None => self.next_video_path(),
        };
        let (ffmpeg, codec) = check_video_path(&path)?;
        let path = std::path::absolute(&path).unwrap_or(path);
        self.stop_video(None);
        self.files.video.next_id += 1;
        self.files.video.rec = Some(Recording {
            id: self.files.video.next_id,
            path: path.clone(),
            codec,
            clock,
            ffmpeg,
            writer: None,
            started: None,
            ticks: 0,
            owed: 0,
            dropped: 0,
        });
        Ok(path)
    }

    /// Stops the recording running (if any) without waiting: copies in flight are dropped, the
    /// writer thread writes what it holds and has ffmpeg finish the file; a toast gives the
    /// file's full path when it is done (and `why`, when the recording ended by itself).
    pub fn stop_video(&mut self, why: Option<String>) {
        let Some(rec) = self.files.video.rec.take() else {
            return;
        };
        self.readback.invalidate(Consumer::Video);
        let mut summary = VideoSummary {
            path: rec.path.clone(),
            codec: rec.codec,
            width: 0,
            height: 0,
            fps: VIDEO_FPS,
            frames_written: 0,
            frames_repeated: 0,
            frames_dropped: rec.dropped,
            seconds: 0.0,
            stopped_because: why,
            error: None,
        };
        match rec.writer {
            Some(writer) => {
                summary.width = writer.spec().width;
                summary.height = writer.spec().height;
                self.files
                    .video
                    .finishing
                    .push((writer.close(), summary, rec.clock));
            }
            None => {
                // Stopped before a frame (by the user), or its first frame could not be
                // recorded (why: nothing was recorded, which is an error).
                summary.error = summary.stopped_because.take();
                let outcome = VideoOutcome {
                    path: rec.path,
                    frames_out: 0,
                    frames_in: 0,
                    frames_lost: 0,
                    error: summary.error.clone(),
                };
                self.video_finished(outcome, summary, rec.clock);
            }
        }
    }

    /// Whether a video is being recorded.
    pub fn video_recording(&self) -> bool {
        self.files.video.rec.is_some()
    }

    /// The running video's file and its length so far in seconds (video frames asked for ÷
    /// [`VIDEO_FPS`]: wall-clock time in the window, 1/60 s a frame headless).
    pub fn video_status(&self) -> Option<(&Path, f64)> {
        let rec = self.files.video.rec.as_ref()?;
        Some((&rec.path, rec.ticks as f64 / f64::from(VIDEO_FPS)))
    }

    /// Every video file of the run that has ended (the report's `videos`).
    pub fn videos(&self) -> &[VideoSummary] {
        &self.files.video.done
    }

    /// View ▸ Record video / Stop recording and F10: stops the recording running, or starts one
    /// into the next file name, following real time; a problem (no ffmpeg) is a toast.
    pub(super) fn toggle_video(&mut self) {
        if self.files.video.rec.is_some() {
            self.stop_video(None);
            return;
        }
        if let Err(e) = self.start_video(None, VideoClock::RealTime) {
            log::error!("{e}");
            self.toast(e.to_string());
        }
    }

    /// Ends the run's video: every frame still in flight written (waits for the GPU), the file
    /// finished by ffmpeg (waits, at most [`FINISH_TIMEOUT`] after its input is closed), and
    /// every file being finished waited for.
    ///
    /// # Errors
    ///
    /// The first problem of a [`VideoClock::PerFrame`] recording (headless: ffmpeg failed, the
    /// file may be incomplete, or nothing could be recorded), one line, said nowhere else.
    /// Those of [`VideoClock::RealTime`] recordings (the window) were said by a toast and the log
    /// when they happened.
    pub fn finish_video(&mut self, gpu: &Gpu) -> Result<(), String> {
        if self.files.video.rec.is_some() {
            self.drain_readbacks(gpu, true);
            self.stop_video(None);
        }
        for (finishing, summary, clock) in std::mem::take(&mut self.files.video.finishing) {
            let outcome = finishing.wait(FINISH_TIMEOUT + FINISH_TIMEOUT);
            self.video_finished(outcome, summary, clock);
        }
        match self.files.video.first_error.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Whether a video is being recorded or finished (the window keeps drawing, for the toast).
    pub(super) fn video_busy(&self) -> bool {
        self.files.video.rec.is_some() || !self.files.video.finishing.is_empty()
    }

    /// Records this frame's video copy of `output` into the frame's `encoder`, after the egui
    /// pass (and the screenshots): the scene panel's crop, when a video frame is due
    /// ([`VideoClock`]). Starts ffmpeg at the first frame, ends the recording when the crop
    /// changed size or the output cannot be read back. Never waits.
    pub(super) fn record_video(
        &mut self,
        gpu: &Gpu,
        encoder: &mut wgpu::CommandEncoder,
        output: Option<&wgpu::Texture>,
    ) {
        if self.files.video.rec.is_none() {
            return;
        }
        let Some(output) = output.filter(|t| t.usage().contains(wgpu::TextureUsages::COPY_SRC))
        else {
            self.stop_video(Some("this window's surface cannot be read back".into()));
            return;
        };
        // The scene's whole area (a chart's axis labels included), whose size holds while the
        // plot rect inside it changes.
        let (x, y, w, h) = self.ui_state.scene_area_px;
        let w = w.min(output.width().saturating_sub(x));
        let h = h.min(output.height().saturating_sub(y));
        let size = (w & !1, h & !1);
        if let Err(why) = self.files.video.ensure_writer(size, output.format()) {
            self.stop_video(Some(why));
            return;
        }
        let busy = self.readback.busy(Consumer::Video);
        let Some(rec) = self.files.video.rec.as_mut() else {
            return;
        };
        let Some(repeat) = rec.due(Instant::now()) else {
            return;
        };
        let wait = rec.clock == VideoClock::PerFrame;
        let full = rec
            .writer
            .as_ref()
            .is_none_or(|w| w.is_full() || busy >= w.capacity());
        if full && !wait {
            // The writer could not take this frame by the time it arrived: not copied, counted;
            // the next frame copied stands for the video frames due meanwhile.
            rec.dropped += 1;
            return;
        }
        let payload = VideoFrame {
            recording: rec.id,
            repeat,
        };
        let copied = self.readback.copy_texture_region(
            &gpu.device,
            encoder,
            output,
            (x, y, size.0, size.1),
            Consumer::Video,
            payload,
        );
        match copied {
            Ok(true) => rec.ticks += repeat,
            Ok(false) => rec.dropped += 1,
            Err(e) => self.stop_video(Some(e.to_string())),
        }
    }

    /// After the readbacks of a frame: ends the recording when ffmpeg failed (one notice), and
    /// toasts the files whose writer threads finished them. Never waits.
    pub(super) fn poll_video(&mut self) {
        let failure = self
            .files
            .video
            .rec
            .as_ref()
            .and_then(|r| r.writer.as_ref())
            .and_then(|w| w.failure());
        if let Some(why) = failure {
            self.stop_video(Some(why));
        }
        let mut i = 0;
        while i < self.files.video.finishing.len() {
            match self.files.video.finishing[i].0.try_outcome() {
                Some(outcome) => {
                    let (_, summary, clock) = self.files.video.finishing.swap_remove(i);
                    self.video_finished(outcome, summary, clock);
                }
                None => i += 1,
            }
        }
    }

    /// A file is finished: its summary completed and kept, and a toast with its full path, why
    /// it ended early and what went wrong; problems go to the log too ([`VideoClock::RealTime`])
    /// or to [`finish_video`](Deck::finish_video)'s error ([`VideoClock::PerFrame`]), once.
    fn video_finished(
        &mut self,
        outcome: VideoOutcome,
        mut summary: VideoSummary,
        clock: VideoClock,
    ) {
        summary.frames_written = outcome.frames_out;
        summary.frames_repeated = outcome.frames_out.saturating_sub(outcome.frames_in);
        summary.frames_dropped += outcome.frames_lost;
        summary.seconds = outcome.frames_out as f64 / f64::from(summary.fps);
        summary.error = outcome.error;
        let what = format!(
            "{} ({:.1} s, {} frames{})",
            summary.path.display(),
            summary.seconds,
            summary.frames_written,
            match summary.frames_dropped {
                0 => String::new(),
                n => format!(", {n} dropped"),
            }
        );
        let msg = match (&summary.error, &summary.stopped_because) {
            (Some(e), _) if summary.frames_written == 0 => format!(
                "video recording to {} stopped: {e}; nothing was recorded",
                summary.path.display()
            ),
            (Some(e), _) => {
                format!("video recording stopped: {e}; what was written is kept in {what}")
            }
            (None, _) if summary.width == 0 => {
                "video recording stopped before a frame was drawn; nothing was recorded".into()
            }
            (None, Some(why)) => format!("video recording stopped ({why}): saved {what}"),
            (None, None) => format!("saved video {what}"),
        };
        let problem = summary.error.is_some() || summary.stopped_because.is_some();
        match (clock, &summary.error) {
            _ if !problem => log::info!("{msg}"),
            (_, None) => log::warn!("{msg}"),
            (VideoClock::RealTime, Some(_)) => log::error!("{msg}"),
            (VideoClock::PerFrame, Some(_)) => {
                if self.files.video.first_error.is_none() {
                    self.files.video.first_error = Some(msg.clone());
                }
            }
        }
        self.toast(msg);
        self.files.video.done.push(summary);
    }

    /// `vizdeck-<scene>-<unix time>.mp4` in the directory PNGs go to (the working directory by
    /// default), `-2`, `-3`… when taken.
    fn next_video_path(&self) -> PathBuf {
        let secs = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        let dir = self
            .files
            .screenshots
            .png_dir
            .clone()
            .unwrap_or_else(|| PathBuf::from("."));
        let name = crate::scene::SCENES[self.active].id;
        let taken = |p: &PathBuf| {
            p.exists()
                || self.files.video.rec.as_ref().is_some_and(|r| &r.path == p)
                || self.files.video.finishing.iter().any(|f| f.0.path() == p)
                || self.files.video.done.iter().any(|v| &v.path == p)
        };
        let first = dir.join(format!("vizdeck-{name}-{secs}.mp4"));
        if !taken(&first) {
            return first;
        }
        (2..1000)
            .map(|n| dir.join(format!("vizdeck-{name}-{secs}-{n}.mp4")))
            .find(|p| !taken(p))
            .unwrap_or(first)
    }
}

impl Video {
    /// Starts ffmpeg for the recording's first frame, at the crop's `size` (even), frames in the
    /// order of `format`; a later frame of another size ends the recording. `Err`: why the
    /// recording ends.
    fn ensure_writer(
        &mut self,
        size: (u32, u32),
        format: wgpu::TextureFormat,
    ) -> Result<(), String> {
        let Some(rec) = self.rec.as_mut() else {
            return Ok(());
        };
        if let Some(writer) = &rec.writer {
            let spec = writer.spec();
            if size != (spec.width, spec.height) {
                return Err(format!(
                    "the scene panel changed size, {}x{} to {}x{} px",
                    spec.width, spec.height, size.0, size.1
                ));
            }
            return Ok(());
        }
        let spec = VideoSpec {
            path: rec.path.clone(),
            width: size.0,
            height: size.1,
            fps: VIDEO_FPS,
            bgra: format.remove_srgb_suffix() == wgpu::TextureFormat::Bgra8Unorm,
            codec: rec.codec,
        };
        rec.writer = Some(VideoWriter::start(&rec.ffmpeg, spec).map_err(|e| e.to_string())?);
        Ok(())
    }

    /// A video readback arrived: handed to the writer (lent, not copied) with the video frames
    /// it stands for. A frame the writer cannot take is dropped (counted) and its video frames
    /// go to the next one, so the file keeps to its clock; headless runs wait for room instead.
    pub(super) fn arrived(&mut self, a: &Arrived<'_>) {
        let Some(&VideoFrame { recording, repeat }) = a.payload::<VideoFrame>() else {
            return;
        };
        let Some(rec) = self.rec.as_mut().filter(|r| r.id == recording) else {
            return;
        };
        let Some(writer) = &rec.writer else { return };
        let repeat = repeat + rec.owed;
        let wait = rec.clock == VideoClock::PerFrame;
        if writer.submit(a.lend(), repeat, wait) {
            rec.owed = 0;
        } else {
            rec.owed = repeat;
            rec.dropped += 1;
        }
    }
}

impl Recording {
    /// How many video frames a frame drawn `now` stands for ([`VideoClock`]); `None` when none
    /// falls due (drawing faster than the video's rate in real time): the frame is not copied.
    fn due(&mut self, now: Instant) -> Option<u64> {
        let started = *self.started.get_or_insert(now);
        if self.clock == VideoClock::PerFrame {
            return Some(1);
        }
        let due =
            (now.duration_since(started).as_secs_f64() * f64::from(VIDEO_FPS)).floor() as u64 + 1;
        let repeat = due.saturating_sub(self.ticks);
        if repeat == 0 {
            return None;
        }
        let max = u64::from(MAX_GAP_S * VIDEO_FPS);
        if repeat > max {
            // A long gap (a minimized window): held for MAX_GAP_S, the rest cut.
            self.ticks = due - max;
        }
        Some(repeat.min(max))
    }
}

/// The one line saying why `--record-video path` cannot be recorded: `--record-video PATH:
/// reason` (the reason names the path itself where it does).
pub fn video_flag_message(path: &Path, e: &VideoError) -> String {
    match e {
        VideoError::Extension(_) | VideoError::NoDir { .. } => format!("--record-video {e}"),
        e => format!("--record-video {}: {e}", path.display()),
    }
}

/// Checks a video path before anything is recorded: `ffmpeg` on `PATH`, an extension vizdeck
/// writes, an existing directory. Returns ffmpeg's path and the codec.
///
/// # Errors
///
/// [`VideoError::NoFfmpeg`], [`VideoError::Extension`], [`VideoError::NoDir`].
pub fn check_video_path(path: &Path) -> Result<(PathBuf, Codec), VideoError> {
    let codec = Codec::for_path(path)?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        return Err(VideoError::NoDir {
            path: path.display().to_string(),
            dir: dir.display().to_string(),
        });
    }
    let ffmpeg = crate::gpu::video::find_ffmpeg().ok_or(VideoError::NoFfmpeg)?;
    Ok((ffmpeg, codec))
}
