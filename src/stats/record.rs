//! Per-frame records and their CSV file.
//!
//! The CSV file has one header row, [`CSV_HEADER`]:
//!
//! ```text
//! frame,time_s,scene,cpu_frame_ms,update_ms,encode_ms,present_interval_ms,steps,dropped_steps,gpu_compute_ms,gpu_render_ms
//! ```
//!
//! then one row per frame. Numbers are written in Rust's shortest round-trip form; the GPU columns
//! are empty when the GPU time is unknown (timestamp queries unsupported or not yet resolved).

use std::fmt::Write as _;
use std::fs::File;
use std::path::{Path, PathBuf};

use super::summary::Summary;

/// Column names of the frame-stats CSV, in order.
pub const CSV_HEADER: &[&str] = &[
    "frame",
    "time_s",
    "scene",
    "cpu_frame_ms",
    "update_ms",
    "encode_ms",
    "present_interval_ms",
    "steps",
    "dropped_steps",
    "gpu_compute_ms",
    "gpu_render_ms",
];

/// What the frame loop measured for one frame.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct FrameRecord {
    pub frame: u64,
    /// Seconds since the recording started.
    pub time_s: f64,
    pub scene: &'static str,
    /// The whole frame on the CPU.
    pub cpu_frame_ms: f64,
    /// The fixed update steps.
    pub update_ms: f64,
    pub encode_ms: f64,
    /// Time since the previous present (0 for the first frame).
    pub present_interval_ms: f64,
    pub steps: u32,
    pub dropped_steps: u32,
    pub gpu_compute_ms: Option<f64>,
    pub gpu_render_ms: Option<f64>,
}

impl FrameRecord {
    /// The frame time the summaries use: the present interval (the period the viewer sees) when it
    /// is known (positive), else the CPU frame time (first frame, headless runs that do not present).
    pub fn frame_time_ms(&self) -> f64 {
        if self.present_interval_ms.is_finite() && self.present_interval_ms > 0.0 {
            self.present_interval_ms
        } else {
            self.cpu_frame_ms
        }
    }
}

/// Errors of the stats file; each is one line naming the file.
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
            writer: csv::Writer::from_writer(file),
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
        field(&r.frame)?;
        field(&r.time_s)?;
        field(&r.scene)?;
        field(&r.cpu_frame_ms)?;
        field(&r.update_ms)?;
        field(&r.encode_ms)?;
        field(&r.present_interval_ms)?;
        field(&r.steps)?;
        field(&r.dropped_steps)?;
        for gpu in [r.gpu_compute_ms, r.gpu_render_ms] {
            match gpu {
                Some(ms) => field(&ms)?,
                None => field(&"")?,
            }
        }
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
