//! Per-frame records, their CSV file, and reading captures back (vizdeck's own CSVs and
//! PresentMon-style CSVs).
//!
//! The CSV file has one header row, [`CSV_HEADER`], then one row per frame. Column names follow
//! PresentMon where the meaning is the same, so tools that read PresentMon captures (CapFrameX,
//! FrameView-style scripts) read these too; vizdeck's own columns have their own names:
//!
//! | column | unit | meaning |
//! | --- | --- | --- |
//! | `Application` | | always `vizdeck` (PresentMon: process name) |
//! | `FrameId` | | frame index since the program started |
//! | `Scene` | | id of the active scene |
//! | `TimeInMs` | ms | when the frame started, since the recording started |
//! | `MsBetweenPresents` | ms | time since the previous present: **the frame time** every summary uses (first frame of a run: its own CPU time) |
//! | `MsCPUBusy` | ms | CPU time of the frame up to submit: ingest + update + UI + upload + encode + submit |
//! | `MsGPUTime` | ms | sum of the GPU pass times below; empty when not measured |
//! | `MsInPresentAPI` | ms | time inside `queue.present` (headless: 0) |
//! | `MsAcquireWait` | ms | time waiting in `surface.get_current_texture` (headless: 0) |
//! | `MsIngest` | ms | draining input rings (audio, series) |
//! | `MsUpdate` | ms | fixed simulation steps |
//! | `MsUI` | ms | egui layout |
//! | `MsUpload` | ms | the scene's uploads (`Scene::prepare`) |
//! | `MsEncode` | ms | command encoding (compute, scene, egui passes) |
//! | `MsSubmit` | ms | `queue.submit` |
//! | `MsGPUCompute`, `MsGPURender`, `MsGPUUI` | ms | GPU time of the scene's compute pass, its render pass and the egui pass (timestamp queries; empty when unknown) |
//! | `SimSteps` | | fixed steps run this frame |
//! | `DroppedSteps` | | steps dropped by the step cap |
//! | `DroppedSimMs` | ms | simulation time dropped: `DroppedSteps × dt` |
//! | `BytesUploaded` | bytes | bytes the scene wrote through the frame's uploader this frame (egui's own uploads are counted apart: report `upload_ui`) |
//! | `BytesReadBack` | bytes | bytes mapped by `vizdeck::gpu::readback` this frame |
//! | `DeviceReset` | | 1 on the first frame drawn on a new GPU device after the previous one was lost (and recreated), else 0 |
//!
//! Numbers are written in Rust's shortest round-trip form.

use std::fmt::Write as _;
use std::fs::File;
use std::path::{Path, PathBuf};

use super::summary::Summary;

/// Column names of the frame-stats CSV, in order (see the module docs).
pub const CSV_HEADER: &[&str] = &[
    "Application",
    "FrameId",
    "Scene",
    "TimeInMs",
    "MsBetweenPresents",
    "MsCPUBusy",
    "MsGPUTime",
    "MsInPresentAPI",
    "MsAcquireWait",
    "MsIngest",
    "MsUpdate",
    "MsUI",
    "MsUpload",
    "MsEncode",
    "MsSubmit",
    "MsGPUCompute",
    "MsGPURender",
    "MsGPUUI",
    "SimSteps",
    "DroppedSteps",
    "DroppedSimMs",
    "BytesUploaded",
    "BytesReadBack",
    "DeviceReset",
];

/// What the frame loop measured for one frame (one CSV row; see the module docs for the columns).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct FrameRecord {
    /// `FrameId`.
    pub frame: u64,
    /// `Scene`.
    pub scene: &'static str,
    /// `TimeInMs`: frame start since the recording started, ms.
    pub time_ms: f64,
    /// `MsBetweenPresents`: the frame time, ms.
    pub ms_between_presents: f64,
    /// `MsCPUBusy`, ms.
    pub cpu_busy_ms: f64,
    /// `MsInPresentAPI`, ms.
    pub present_ms: f64,
    /// `MsAcquireWait`, ms.
    pub acquire_wait_ms: f64,
    /// `MsIngest`, ms.
    pub ingest_ms: f64,
    /// `MsUpdate`, ms.
    pub update_ms: f64,
    /// `MsUI`, ms.
    pub ui_ms: f64,
    /// `MsUpload`, ms.
    pub upload_ms: f64,
    /// `MsEncode`, ms.
    pub encode_ms: f64,
    /// `MsSubmit`, ms.
    pub submit_ms: f64,
    /// `MsGPUCompute`, ms.
    pub gpu_compute_ms: Option<f64>,
    /// `MsGPURender`, ms.
    pub gpu_render_ms: Option<f64>,
    /// `MsGPUUI`, ms.
    pub gpu_ui_ms: Option<f64>,
    /// `SimSteps`.
    pub steps: u32,
    /// `DroppedSteps`.
    pub dropped_steps: u32,
    /// `DroppedSimMs`, ms.
    pub dropped_sim_ms: f64,
    /// `BytesUploaded`.
    pub bytes_uploaded: u64,
    /// `BytesReadBack`.
    pub bytes_read_back: u64,
    /// The first frame drawn on a new device after the previous one was lost.
    pub device_reset: bool,
}

impl FrameRecord {
    /// The frame time the summaries use: `MsBetweenPresents`.
    pub fn frame_time_ms(&self) -> f64 {
        self.ms_between_presents
    }

    /// `MsGPUTime`: the sum of the known pass times; `None` when none is known.
    pub fn gpu_time_ms(&self) -> Option<f64> {
        let parts = [self.gpu_compute_ms, self.gpu_render_ms, self.gpu_ui_ms];
        if parts.iter().all(Option::is_none) {
            None
        } else {
            Some(parts.iter().flatten().sum())
        }
    }
}

/// Errors of stats files; each is one line naming the file.
#[derive(Debug, thiserror::Error)]
pub enum StatsError {
    #[error("stats file '{path}': cannot create: {source}")]
    Create {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("stats file '{path}': cannot write: {source}")]
    Write {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("stats file '{path}': cannot read: {reason}")]
    Read { path: String, reason: String },
    #[error("stats file '{path}': {reason}")]
    Format { path: String, reason: String },
}

/// Writes [`FrameRecord`]s to a CSV file and keeps the frame times for the [`Summary`].
///
/// Every [`push`](Recorder::push) writes one complete row and flushes it: the row is formatted into
/// the csv writer's buffer (empty after the previous flush, and larger than any row) and handed to
/// the file in one `write_all`, so the file only ever holds complete rows, whenever the process
/// stops. [`finish`](Recorder::finish) and `Drop` flush too.
pub struct Recorder {
    path: PathBuf,
    writer: csv::Writer<File>,
    frame_times: Vec<f64>,
    scratch: String,
}

impl Recorder {
    /// Creates (truncates) the file at `path` and writes the header row.
    pub fn create(path: impl AsRef<Path>) -> Result<Recorder, StatsError> {
        let path = path.as_ref().to_path_buf();
        let file = File::create(&path).map_err(|source| StatsError::Create {
            path: path.display().to_string(),
            source,
        })?;
        let mut rec = Recorder {
            writer: csv::WriterBuilder::new()
                .buffer_capacity(16 * 1024)
                .from_writer(file),
            path,
            frame_times: Vec::with_capacity(4096),
            scratch: String::with_capacity(32),
        };
        let res = rec.writer.write_record(CSV_HEADER);
        rec.check(res)?;
        rec.flush()?;
        Ok(rec)
    }

    /// The file being written.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Frames recorded so far.
    pub fn frames(&self) -> u64 {
        self.frame_times.len() as u64
    }

    /// Frame times recorded so far, ms (see [`FrameRecord::frame_time_ms`]).
    pub fn frame_times(&self) -> &[f64] {
        &self.frame_times
    }

    /// Summary of the frames recorded so far.
    pub fn summary(&self) -> Summary {
        Summary::from_frame_times(&self.frame_times)
    }

    /// Writes one row and flushes it. The frame time is kept for the summary even when writing
    /// fails.
    pub fn push(&mut self, r: &FrameRecord) -> Result<(), StatsError> {
        self.frame_times.push(r.frame_time_ms());
        let res = self.write_row(r);
        self.check(res)?;
        self.flush()
    }

    /// Flushes and returns the summary of every frame pushed.
    pub fn finish(mut self) -> Result<Summary, StatsError> {
        self.flush()?;
        Ok(self.summary())
    }

    fn write_row(&mut self, r: &FrameRecord) -> csv::Result<()> {
        let Recorder {
            writer, scratch, ..
        } = self;
        let mut field = |value: &dyn std::fmt::Display| -> csv::Result<()> {
            scratch.clear();
            let _ = write!(scratch, "{value}");
            writer.write_field(scratch.as_bytes())
        };
        let opt = |v: Option<f64>| -> String { v.map(|x| x.to_string()).unwrap_or_default() };
        field(&"vizdeck")?;
        field(&r.frame)?;
        field(&r.scene)?;
        field(&r.time_ms)?;
        field(&r.ms_between_presents)?;
        field(&r.cpu_busy_ms)?;
        field(&opt(r.gpu_time_ms()))?;
        field(&r.present_ms)?;
        field(&r.acquire_wait_ms)?;
        field(&r.ingest_ms)?;
        field(&r.update_ms)?;
        field(&r.ui_ms)?;
        field(&r.upload_ms)?;
        field(&r.encode_ms)?;
        field(&r.submit_ms)?;
        field(&opt(r.gpu_compute_ms))?;
        field(&opt(r.gpu_render_ms))?;
        field(&opt(r.gpu_ui_ms))?;
        field(&r.steps)?;
        field(&r.dropped_steps)?;
        field(&r.dropped_sim_ms)?;
        field(&r.bytes_uploaded)?;
        field(&r.bytes_read_back)?;
        field(&u8::from(r.device_reset))?;
        writer.write_record(None::<&[u8]>)
    }

    fn check(&self, res: csv::Result<()>) -> Result<(), StatsError> {
        res.map_err(|e| {
            let source = match e.into_kind() {
                csv::ErrorKind::Io(io) => io,
                other => std::io::Error::other(format!("{other:?}")),
            };
            StatsError::Write {
                path: self.path.display().to_string(),
                source,
            }
        })
    }

    fn flush(&mut self) -> Result<(), StatsError> {
        self.writer.flush().map_err(|source| StatsError::Write {
            path: self.path.display().to_string(),
            source,
        })
    }
}

/// Which tool wrote a capture file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CaptureFormat {
    /// vizdeck's own CSV ([`CSV_HEADER`]).
    Vizdeck,
    /// A PresentMon-style CSV (any CSV with a `MsBetweenPresents` column).
    PresentMon,
}

/// Frame times read back from a capture file.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Capture {
    /// The file.
    pub path: PathBuf,
    /// Which tool wrote it.
    pub format: CaptureFormat,
    /// `MsBetweenPresents` of every row, in file order, ms.
    pub frame_times_ms: Vec<f64>,
    /// Rows without a usable frame time (`NA`, empty, negative): not counted as frames.
    pub skipped_rows: u64,
}

impl Capture {
    /// Reads a vizdeck or PresentMon-style CSV: the frame time of each row is its
    /// `MsBetweenPresents`. Rows whose value is empty, `NA` or negative are skipped (counted in
    /// [`Capture::skipped_rows`]); any other non-number is an error naming the line. The file is
    /// parsed by [`Capture::parse`].
    ///
    /// # Errors
    ///
    /// [`StatsError::Read`] (missing file, not UTF-8/CSV), [`StatsError::Format`] (no
    /// `MsBetweenPresents` column, a bad number). Each message is one line naming the file.
    pub fn read(path: impl AsRef<Path>) -> Result<Capture, StatsError> {
        let path = path.as_ref();
        let file = File::open(path).map_err(|e| StatsError::Read {
            path: path.display().to_string(),
            reason: one_line(&e),
        })?;
        Capture::parse(std::io::BufReader::new(file), path)
    }

    /// Parses a capture from `input` (the CSV content, as [`Capture::read`] describes it) on the
    /// calling thread; `path` is what messages call it and what [`Capture::path`] holds.
    ///
    /// # Errors
    ///
    /// As [`Capture::read`]: [`StatsError::Read`] (an I/O error, not UTF-8, not CSV),
    /// [`StatsError::Format`] (no `MsBetweenPresents` column, a bad number); one line each,
    /// naming `path`.
    pub fn parse(input: impl std::io::Read, path: impl AsRef<Path>) -> Result<Capture, StatsError> {
        let path = path.as_ref();
        let name = path.display().to_string();
        let read_err = |reason: String| StatsError::Read {
            path: name.clone(),
            reason,
        };
        let format_err = |reason: String| StatsError::Format {
            path: name.clone(),
            reason,
        };
        let mut reader = csv::ReaderBuilder::new()
            .flexible(true)
            .trim(csv::Trim::All)
            .from_reader(input);
        let headers = reader
            .headers()
            .map_err(|e| read_err(one_line(&e)))?
            .clone();
        let col = headers
            .iter()
            .position(|h| h == "MsBetweenPresents")
            .ok_or_else(|| {
                format_err(
                    "no 'MsBetweenPresents' column (not a vizdeck or PresentMon capture)".into(),
                )
            })?;
        let format = if headers.iter().eq(CSV_HEADER.iter().copied()) {
            CaptureFormat::Vizdeck
        } else {
            CaptureFormat::PresentMon
        };
        let mut frame_times_ms = Vec::new();
        let mut skipped_rows = 0;
        for (i, row) in reader.records().enumerate() {
            let line = i + 2;
            let row = row.map_err(|e| read_err(one_line(&e)))?;
            let cell = row.get(col).unwrap_or("");
            if cell.is_empty() || cell.eq_ignore_ascii_case("na") {
                skipped_rows += 1;
                continue;
            }
            let v: f64 = cell.parse().map_err(|_| {
                format_err(format!(
                    "line {line}: MsBetweenPresents '{}' is not a number",
                    crate::text::one_line(cell)
                ))
            })?;
            if !v.is_finite() || v < 0.0 {
                skipped_rows += 1;
                continue;
            }
            frame_times_ms.push(v);
        }
        Ok(Capture {
            path: path.to_path_buf(),
            format,
            frame_times_ms,
            skipped_rows,
        })
    }

    /// Summary of the capture.
    pub fn summary(&self) -> Summary {
        Summary::from_frame_times(&self.frame_times_ms)
    }
}

fn one_line(e: &dyn std::fmt::Display) -> String {
    e.to_string().lines().next().unwrap_or("").to_string()
}
