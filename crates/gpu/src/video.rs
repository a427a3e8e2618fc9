//! Video files from readback frames: [`VideoWriter`] pipes raw frames into an `ffmpeg` child
//! process from a writer thread (`vizdeck-video`), so the frame loop never waits for encoding or
//! for the pipe. Frames are lent, still-mapped readback buffers ([`MappedReadback`], as the PNG
//! workers get them), handed over through a bounded queue; the thread writes their rows straight
//! from the mapped memory into ffmpeg's stdin (no copy on the frame loop) and drops them, which
//! gives the buffers back to the ring.
//!
//! ffmpeg reads `-f rawvideo -pix_fmt rgba|bgra -s WxH -r FPS -i -` and writes H.264 (libx264,
//! yuv420p) into `.mp4`, `.mkv` and `.mov`, VP9 (libvpx-vp9, yuv420p) into `.webm`
//! ([`Codec::for_path`]), as Debian 12's `ffmpeg` package offers them; colours are tagged BT.709.
//! MP4 and MOV are written fragmented (a fragment per keyframe, one every 2 s), so a file cut
//! short (ffmpeg or vizdeck killed) still plays up to its last fragment. ffmpeg runs in its own
//! process group: a Ctrl-C in the terminal reaches vizdeck only, which then ends the file
//! properly (stdin closed, ffmpeg waited for, [`VideoWriter::close`]).

use std::collections::VecDeque;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, SyncSender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::readback::MappedReadback;

/// The message when ffmpeg cannot be found.
pub(crate) const NEEDS_FFMPEG: &str =
    "video recording needs ffmpeg on PATH: apt-get install ffmpeg";

/// Frames queued for the writer thread (each holds a mapped readback buffer of the ring).
pub const QUEUE_DEPTH: usize = 3;

/// How long ffmpeg may take to end the file once its input is closed before it is killed.
pub const FINISH_TIMEOUT: Duration = Duration::from_secs(10);

/// Errors of starting a video recording. Each is one line.
#[derive(Debug, thiserror::Error)]
pub enum VideoError {
    /// No `ffmpeg` executable on `PATH`.
    #[error("{NEEDS_FFMPEG}")]
    NoFfmpeg,
    /// The file name's extension names no format vizdeck writes.
    #[error(
        "{0}: unknown video format; use a name ending in .mp4, .mkv or .mov (H.264) or .webm (VP9)"
    )]
    Extension(String),
    /// The file's directory does not exist.
    #[error("{path}: the directory {dir} does not exist")]
    NoDir {
        /// The video's path.
        path: String,
        /// Its directory.
        dir: String,
    },
    /// The image is smaller than 2×2 pixels (yuv420p needs even sides of at least 2).
    #[error("the scene panel is {0}x{1} px: too small for a video (at least 2x2)")]
    TooSmall(u32, u32),
    /// ffmpeg could not be started.
    #[error("cannot start ffmpeg ({ffmpeg}): {reason}")]
    Spawn {
        /// The executable.
        ffmpeg: String,
        /// The OS's reason.
        reason: String,
    },
}

/// The video codec, chosen by the output file's extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Codec {
    /// H.264 through libx264 (`.mp4`, `.mkv`, `.mov`).
    H264,
    /// VP9 through libvpx-vp9 (`.webm`).
    Vp9,
}

impl Codec {
    /// The codec for `path`'s extension (case-insensitive): `.mp4`, `.mkv`, `.mov` → H.264,
    /// `.webm` → VP9.
    ///
    /// # Errors
    ///
    /// [`VideoError::Extension`] for any other extension, or none.
    pub fn for_path(path: &Path) -> Result<Codec, VideoError> {
        let ext = path
            .extension()
            .map(|e| e.to_string_lossy().to_lowercase())
            .unwrap_or_default();
        match ext.as_str() {
            "mp4" | "mkv" | "mov" => Ok(Codec::H264),
            "webm" => Ok(Codec::Vp9),
            _ => Err(VideoError::Extension(path.display().to_string())),
        }
    }

    /// ffmpeg's name of the encoder.
    pub fn encoder(self) -> &'static str {
        match self {
            Codec::H264 => "libx264",
            Codec::Vp9 => "libvpx-vp9",
        }
    }
}

/// What one video file holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VideoSpec {
    /// The output file.
    pub path: PathBuf,
    /// Width in pixels (even, at least 2).
    pub width: u32,
    /// Height in pixels (even, at least 2).
    pub height: u32,
    /// Frames per second of the file (constant).
    pub fps: u32,
    /// Whether the frames are handed over as BGRA (a BGRA window surface) instead of RGBA.
    pub bgra: bool,
    /// The encoder ([`Codec::for_path`]).
    pub codec: Codec,
}

/// The `ffmpeg` executable on `PATH`, if there is one.
pub fn find_ffmpeg() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join("ffmpeg"))
        .find(|f| is_executable(f))
}

fn is_executable(file: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        file.metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        file.is_file()
    }
}

/// ffmpeg's arguments for `spec`: raw frames on stdin, the file overwritten.
pub(crate) fn ffmpeg_args(spec: &VideoSpec) -> Vec<String> {
    let mut a: Vec<String> = [
        "-hide_banner",
        "-nostdin",
        "-loglevel",
        "error",
        "-y",
        "-f",
        "rawvideo",
        "-pix_fmt",
        if spec.bgra { "bgra" } else { "rgba" },
        "-s",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    a.push(format!("{}x{}", spec.width, spec.height));
    a.extend(["-r".to_string(), spec.fps.to_string()]);
    a.extend(["-i", "-", "-c:v", spec.codec.encoder()].map(String::from));
    match spec.codec {
        Codec::H264 => a.extend(["-preset", "veryfast", "-crf", "20"].map(String::from)),
        Codec::Vp9 => a.extend(
            [
                "-deadline",
                "realtime",
                "-cpu-used",
                "8",
                "-row-mt",
                "1",
                "-crf",
                "32",
                "-b:v",
                "0",
            ]
            .map(String::from),
        ),
    }
    a.extend(["-g".to_string(), (spec.fps * 2).to_string()]);
    a.extend(
        [
            "-pix_fmt",
            "yuv420p",
            "-vf",
            "scale=out_color_matrix=bt709:out_range=tv",
            "-colorspace",
            "bt709",
            "-color_primaries",
            "bt709",
            "-color_trc",
            "bt709",
        ]
        .map(String::from),
    );
    let ext = spec
        .path
        .extension()
        .map(|e| e.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    if ext == "mp4" || ext == "mov" {
        a.extend(["-movflags", "+frag_keyframe+empty_moov+default_base_moof"].map(String::from));
    }
    a.push(spec.path.to_string_lossy().into_owned());
    a
}

/// One frame for the writer thread: a mapped texture readback, written `repeat` times.
struct Job {
    frame: MappedReadback,
    repeat: u64,
}

/// What the writer thread and the frame loop share.
#[derive(Default)]
struct Shared {
    /// Jobs queued or being written.
    busy: AtomicUsize,
    /// Video frames written into the pipe, repeats included.
    frames_out: AtomicU64,
    /// Distinct frames written (each once, however often repeated).
    frames_in: AtomicU64,
    /// Frames handed over but not written (the buffer was no longer mapped, ffmpeg had failed).
    lost: AtomicU64,
    /// Why the writer stopped taking frames (ffmpeg died, the pipe broke), once it has.
    failure: Mutex<Option<String>>,
}

/// How a video file ended ([`Finishing`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VideoOutcome {
    /// The file.
    pub path: PathBuf,
    /// Video frames written into ffmpeg, repeats included (the file's frame count when it
    /// succeeded).
    pub frames_out: u64,
    /// Distinct frames written.
    pub frames_in: u64,
    /// Frames handed to the writer that did not reach ffmpeg.
    pub frames_lost: u64,
    /// Why the file may be incomplete: ffmpeg failed, exited with an error or had to be killed.
    pub error: Option<String>,
}

/// Pipes frames into one `ffmpeg` child process from the `vizdeck-video` thread, through a queue
/// of [`QUEUE_DEPTH`] frames: [`submit`](VideoWriter::submit) never waits unless asked to (a full
/// queue drops the frame, the caller counts it). A write that fails (ffmpeg died: a broken pipe)
/// stops the writing, keeps what ffmpeg wrote, and is said once by
/// [`failure`](VideoWriter::failure). [`close`](VideoWriter::close) ends the file.
pub struct VideoWriter {
    tx: Option<SyncSender<Job>>,
    shared: Arc<Shared>,
    done: Receiver<VideoOutcome>,
    child: Arc<Mutex<Child>>,
    thread: Option<std::thread::JoinHandle<()>>,
    spec: VideoSpec,
}

impl VideoWriter {
    /// Starts `ffmpeg` (the executable at `ffmpeg`) writing `spec.path`, and the writer thread.
    ///
    /// # Errors
    ///
    /// [`VideoError::TooSmall`] for sides below 2 or odd, [`VideoError::Spawn`] when the
    /// process or the thread cannot be started. ffmpeg refusing its arguments (an encoder it
    /// lacks, a file it cannot create) shows later, as a [`failure`](VideoWriter::failure).
    pub fn start(ffmpeg: &Path, spec: VideoSpec) -> Result<VideoWriter, VideoError> {
        if spec.width < 2 || spec.height < 2 || spec.width % 2 == 1 || spec.height % 2 == 1 {
            return Err(VideoError::TooSmall(spec.width, spec.height));
        }
        let spawn_err = |reason: String| VideoError::Spawn {
            ffmpeg: ffmpeg.display().to_string(),
            reason,
        };
        let mut cmd = Command::new(ffmpeg);
        cmd.args(ffmpeg_args(&spec))
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        #[cfg(unix)]
        {
            // Its own process group: a terminal's Ctrl-C goes to vizdeck, which ends the file.
            use std::os::unix::process::CommandExt;
            cmd.process_group(0);
        }
        let mut child = cmd.spawn().map_err(|e| spawn_err(e.to_string()))?;
        let stdin = child.stdin.take();
        let stderr = child.stderr.take();
        let child = Arc::new(Mutex::new(child));
        let kill = |child: &Arc<Mutex<Child>>| {
            if let Ok(mut c) = child.lock() {
                let _ = c.kill();
                let _ = c.wait();
            }
        };
        let Some(stdin) = stdin else {
            kill(&child);
            return Err(spawn_err("no pipe to its input".into()));
        };
        // ffmpeg's last lines of stderr, for the message when it fails.
        let log: Arc<Mutex<VecDeque<String>>> = Arc::default();
        let log_thread = stderr.and_then(|stderr| {
            let log = log.clone();
            std::thread::Builder::new()
                .name("vizdeck-video-log".into())
                .spawn(move || {
                    for line in std::io::BufReader::new(stderr).lines() {
                        let Ok(line) = line else { break };
                        let line = line.trim().to_string();
                        if line.is_empty() {
                            continue;
                        }
                        log::debug!("ffmpeg: {line}");
                        if let Ok(mut l) = log.lock() {
                            if l.len() == 4 {
                                l.pop_front();
                            }
                            l.push_back(line);
                        }
                    }
                })
                .ok()
        });
        let (tx, rx) = std::sync::mpsc::sync_channel::<Job>(QUEUE_DEPTH);
        let (done_tx, done) = std::sync::mpsc::channel();
        let shared = Arc::new(Shared::default());
        let thread = {
            let shared = shared.clone();
            let child = child.clone();
            let spec = spec.clone();
            std::thread::Builder::new()
                .name("vizdeck-video".into())
                .spawn(move || {
                    let ends = Ends {
                        child,
                        log,
                        log_thread,
                    };
                    let outcome = write_all_frames(&spec, stdin, &rx, &shared, ends);
                    let _ = done_tx.send(outcome);
                })
        };
        let thread = match thread {
            Ok(t) => t,
            Err(e) => {
                kill(&child);
                return Err(spawn_err(format!("no writer thread: {e}")));
            }
        };
        log::info!(
            "recording video to {} ({}x{}, {} fps, {})",
            spec.path.display(),
            spec.width,
            spec.height,
            spec.fps,
            spec.codec.encoder()
        );
        Ok(VideoWriter {
            tx: Some(tx),
            shared,
            done,
            child,
            thread: Some(thread),
            spec,
        })
    }

    /// What the file holds.
    pub fn spec(&self) -> &VideoSpec {
        &self.spec
    }

    /// Frames the writer holds at most: the queue and the one being written.
    pub fn capacity(&self) -> usize {
        QUEUE_DEPTH + 1
    }

    /// Whether a frame handed over now would be dropped (the queue is full and a frame is being
    /// written): not worth reading back.
    pub fn is_full(&self) -> bool {
        self.shared.busy.load(Ordering::Acquire) >= self.capacity()
    }

    /// Hands `frame` (a texture readback of `spec`'s size) to the writer, to be written `repeat`
    /// times. With `wait` false it never blocks: returns false (the frame dropped, its buffer
    /// given back) when the queue is full; with `wait` it waits for room (headless runs, whose
    /// clock is simulated: waiting changes no frame). Also false once the writer has failed.
    pub fn submit(&self, frame: MappedReadback, repeat: u64, wait: bool) -> bool {
        let Some(tx) = &self.tx else { return false };
        if repeat == 0 || self.failure().is_some() {
            return false;
        }
        self.shared.busy.fetch_add(1, Ordering::AcqRel);
        let job = Job { frame, repeat };
        let sent = if wait {
            tx.send(job).is_ok()
        } else {
            tx.try_send(job).is_ok()
        };
        if !sent {
            self.shared.busy.fetch_sub(1, Ordering::AcqRel);
        }
        sent
    }

    /// Why the writer stopped taking frames (ffmpeg exited or the pipe broke), once it has.
    /// Never waits.
    pub fn failure(&self) -> Option<String> {
        self.shared.failure.lock().ok().and_then(|f| f.clone())
    }

    /// Video frames written into the pipe so far, repeats included.
    pub fn frames_out(&self) -> u64 {
        self.shared.frames_out.load(Ordering::Acquire)
    }

    /// Ends the file without waiting: the writer thread writes the frames queued, closes
    /// ffmpeg's input and waits for it to finish (at most [`FINISH_TIMEOUT`], then kills it);
    /// the [`Finishing`] says when and how it ended.
    pub fn close(mut self) -> Finishing {
        self.tx = None;
        Finishing {
            done: std::mem::replace(&mut self.done, std::sync::mpsc::channel().1),
            child: self.child.clone(),
            thread: self.thread.take(),
            path: self.spec.path.clone(),
        }
    }
}

/// A video file being ended by its writer thread ([`VideoWriter::close`]).
pub struct Finishing {
    done: Receiver<VideoOutcome>,
    child: Arc<Mutex<Child>>,
    thread: Option<std::thread::JoinHandle<()>>,
    path: PathBuf,
}

impl Finishing {
    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// How the file ended, once it has. Never waits.
    pub fn try_outcome(&mut self) -> Option<VideoOutcome> {
        let outcome = self.done.try_recv().ok()?;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        Some(outcome)
    }

    /// Waits for the file to end, at most `timeout` (then ffmpeg is killed, which ends a writer
    /// stuck on a full pipe, and the thread is given another second).
    pub fn wait(mut self, timeout: Duration) -> VideoOutcome {
        let outcome = self.done.recv_timeout(timeout).ok().or_else(|| {
            log::error!(
                "video {}: ffmpeg did not finish within {} s; killing it",
                self.path.display(),
                timeout.as_secs()
            );
            if let Ok(mut c) = self.child.lock() {
                let _ = c.kill();
            }
            self.done.recv_timeout(Duration::from_secs(1)).ok()
        });
        if let Some(t) = self.thread.take()
            && outcome.is_some()
        {
            let _ = t.join();
        }
        outcome.unwrap_or_else(|| VideoOutcome {
            path: self.path.clone(),
            frames_out: 0,
            frames_in: 0,
            frames_lost: 0,
            error: Some("the video writer did not finish".into()),
        })
    }
}

/// The ffmpeg process and its stderr reader, as the writer thread ends them.
struct Ends {
    child: Arc<Mutex<Child>>,
    log: Arc<Mutex<VecDeque<String>>>,
    log_thread: Option<std::thread::JoinHandle<()>>,
}

impl Ends {
    /// Waits for ffmpeg to exit (at most `timeout`, then kills it). Returns why the file may
    /// be incomplete, if it may.
    fn wait(&mut self, timeout: Duration) -> Option<String> {
        let start = Instant::now();
        let status = loop {
            let polled = match self.child.lock() {
                Ok(mut c) => c.try_wait(),
                Err(_) => return Some("the ffmpeg process handle was poisoned".into()),
            };
            match polled {
                Ok(Some(status)) => break Ok(status),
                Ok(None) if start.elapsed() < timeout => {
                    std::thread::sleep(Duration::from_millis(10));
                }
                Ok(None) => {
                    if let Ok(mut c) = self.child.lock() {
                        let _ = c.kill();
                        let _ = c.wait();
                    }
                    break Err(format!(
                        "ffmpeg did not finish within {} s and was killed",
                        timeout.as_secs()
                    ));
                }
                Err(e) => break Err(format!("waiting for ffmpeg: {e}")),
            }
        };
        // stderr ends with the process: its last lines are all there now.
        if let Some(t) = self.log_thread.take() {
            let _ = t.join();
        }
        let last = self
            .log
            .lock()
            .ok()
            .and_then(|l| l.back().cloned())
            .map(|l| format!(": {}", vizdeck_base::text::one_line(&l)))
            .unwrap_or_default();
        match status {
            Ok(s) if s.success() => None,
            Ok(s) => Some(format!("ffmpeg failed ({s}){last}")),
            Err(e) => Some(format!("{e}{last}")),
        }
    }
}

/// The writer thread: every job's rows into ffmpeg's stdin, `repeat` times; after the channel
/// closes, the input closed and ffmpeg waited for.
fn write_all_frames(
    spec: &VideoSpec,
    stdin: ChildStdin,
    rx: &Receiver<Job>,
    shared: &Shared,
    mut ends: Ends,
) -> VideoOutcome {
    let mut pipe = std::io::BufWriter::with_capacity(1 << 20, stdin);
    let mut row = Vec::with_capacity(spec.width as usize * 4);
    let mut error: Option<String> = None;
    while let Ok(job) = rx.recv() {
        if error.is_none() {
            match write_frame(&mut pipe, spec, &job, &mut row) {
                Some(Ok(())) => {
                    shared.frames_in.fetch_add(1, Ordering::AcqRel);
                    shared.frames_out.fetch_add(job.repeat, Ordering::AcqRel);
                }
                Some(Err(e)) => {
                    // ffmpeg is gone or stuck: say why (its exit and last words), once.
                    shared.lost.fetch_add(1, Ordering::AcqRel);
                    let msg = ends
                        .wait(Duration::from_secs(2))
                        .unwrap_or_else(|| format!("ffmpeg stopped taking frames: {e}"));
                    if let Ok(mut f) = shared.failure.lock() {
                        *f = Some(msg.clone());
                    }
                    error = Some(msg);
                }
                None => {
                    // The buffer is not mapped any more (the device was lost).
                    shared.lost.fetch_add(1, Ordering::AcqRel);
                }
            }
        } else {
            shared.lost.fetch_add(1, Ordering::AcqRel);
        }
        drop(job);
        shared.busy.fetch_sub(1, Ordering::AcqRel);
    }
    if error.is_none() {
        let flushed = pipe.flush();
        drop(pipe);
        error = ends.wait(FINISH_TIMEOUT);
        if let (Err(e), None) = (flushed, &error) {
            error = Some(format!("writing to ffmpeg: {e}"));
        }
    } else {
        drop(pipe);
    }
    VideoOutcome {
        path: spec.path.clone(),
        frames_out: shared.frames_out.load(Ordering::Acquire),
        frames_in: shared.frames_in.load(Ordering::Acquire),
        frames_lost: shared.lost.load(Ordering::Acquire),
        error,
    }
}

/// Writes one job's frame `repeat` times from the mapped rows (padding left out, red and blue
/// swapped where the copy's order is not the file's). `None` when the buffer cannot be read.
fn write_frame(
    pipe: &mut impl Write,
    spec: &VideoSpec,
    job: &Job,
    row: &mut Vec<u8>,
) -> Option<std::io::Result<()>> {
    let t = job.frame.texture?;
    if (t.width, t.height) != (spec.width, spec.height) {
        return Some(Err(std::io::Error::other(format!(
            "a {}x{} frame in a {}x{} video",
            t.width, t.height, spec.width, spec.height
        ))));
    }
    let swap = t.bgra != spec.bgra;
    job.frame.with_data(|data| -> std::io::Result<()> {
        let bytes = t.width as usize * 4;
        for _ in 0..job.repeat {
            for y in 0..t.height as usize {
                let start = y * t.padded_bpr as usize;
                let Some(src) = data.get(start..start + bytes) else {
                    return Err(std::io::Error::other("readback shorter than its rows"));
                };
                if swap {
                    row.clear();
                    row.extend_from_slice(src);
                    for px in row.chunks_exact_mut(4) {
                        px.swap(0, 2);
                    }
                    pipe.write_all(row)?;
                } else {
                    pipe.write_all(src)?;
                }
            }
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(path: &str) -> VideoSpec {
        VideoSpec {
            path: PathBuf::from(path),
            width: 640,
            height: 360,
            fps: 60,
            bgra: false,
            codec: Codec::for_path(Path::new(path)).expect("codec"),
        }
    }

    #[test]
    fn codec_follows_the_extension() {
        assert_eq!(Codec::for_path(Path::new("a.MP4")).ok(), Some(Codec::H264));
        assert_eq!(Codec::for_path(Path::new("a.mkv")).ok(), Some(Codec::H264));
        assert_eq!(Codec::for_path(Path::new("a.mov")).ok(), Some(Codec::H264));
        assert_eq!(Codec::for_path(Path::new("a.webm")).ok(), Some(Codec::Vp9));
        let e = Codec::for_path(Path::new("a.avi")).unwrap_err().to_string();
        assert!(e.contains("a.avi") && e.contains(".webm"), "{e}");
        assert!(Codec::for_path(Path::new("noext")).is_err());
    }

    #[test]
    fn arguments_name_input_encoder_and_output() {
        let a = ffmpeg_args(&spec("/tmp/x.mp4"));
        let s = a.join(" ");
        assert!(
            s.contains("-f rawvideo -pix_fmt rgba -s 640x360 -r 60 -i -"),
            "{s}"
        );
        assert!(
            s.contains("-c:v libx264") && s.contains("-pix_fmt yuv420p"),
            "{s}"
        );
        assert!(s.contains("frag_keyframe"), "{s}");
        assert_eq!(a.last().map(String::as_str), Some("/tmp/x.mp4"));
        let s = ffmpeg_args(&spec("/tmp/x.webm")).join(" ");
        assert!(
            s.contains("-c:v libvpx-vp9") && !s.contains("movflags"),
            "{s}"
        );
        let mut bgra = spec("/tmp/x.mkv");
        bgra.bgra = true;
        let s = ffmpeg_args(&bgra).join(" ");
        assert!(
            s.contains("-pix_fmt bgra") && !s.contains("movflags"),
            "{s}"
        );
    }

    #[test]
    fn odd_or_tiny_sizes_are_refused() {
        let mut s = spec("/tmp/x.mp4");
        s.width = 641;
        assert!(matches!(
            VideoWriter::start(Path::new("/nonexistent/ffmpeg"), s),
            Err(VideoError::TooSmall(641, 360))
        ));
        let mut s = spec("/tmp/x.mp4");
        s.height = 0;
        assert!(VideoWriter::start(Path::new("/nonexistent/ffmpeg"), s).is_err());
        let e = VideoWriter::start(Path::new("/nonexistent/ffmpeg"), spec("/tmp/x.mp4"))
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains("cannot start ffmpeg"), "{e}");
    }
}
