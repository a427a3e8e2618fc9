//! PNG writing: [`PngWriter`] encodes screenshots on worker threads so the frame loop never
//! waits for compression (from tightly packed RGBA, or straight from a lent, still-mapped
//! readback buffer), and [`write_png`] writes one PNG on the calling thread.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;

use super::readback::{MappedReadback, ReadbackError};

/// The pixels of one PNG job.
enum PngPixels {
    /// Tightly packed RGBA8, `width × height × 4` bytes.
    Rgba(Vec<u8>),
    /// A texture readback still mapped: rows padded to `padded_bpr`, maybe BGRA.
    Mapped(MappedReadback),
}

/// One PNG job: path, width, height, pixels, and whether its outcome is reported
/// ([`PngWriter::reports`]).
type PngJob = (PathBuf, u32, u32, PngPixels, bool);

/// The outcome of a reported PNG job: its path, and the error when it could not be written.
pub type PngReport = (PathBuf, Result<(), String>);

/// Writes PNGs on worker threads so the frame loop never waits for compression: frames are
/// handed over through a queue of `depth` entries shared by the workers; when it is full the frame
/// is dropped (counted) rather than waited for. PNGs use fast compression. Mapped readbacks
/// ([`submit_mapped`](PngWriter::submit_mapped)) are read by the worker straight from the mapped
/// buffer: the frame loop copies nothing.
pub struct PngWriter {
    tx: Option<std::sync::mpsc::SyncSender<PngJob>>,
    workers: Vec<std::thread::JoinHandle<(u64, Vec<String>)>>,
    dropped: u64,
    /// Jobs queued or being written.
    busy: Arc<std::sync::atomic::AtomicUsize>,
    capacity: usize,
    /// Spare pixel buffers handed back by the workers (no allocation per frame once warm).
    spare: std::sync::mpsc::Receiver<Vec<u8>>,
    /// Outcomes of the jobs queued with [`submit_reported`](PngWriter::submit_reported).
    reports: std::sync::mpsc::Receiver<PngReport>,
    /// Reported jobs queued whose outcome has not been taken yet.
    reports_pending: usize,
}

impl PngWriter {
    /// Starts one worker with a queue of `depth` frames.
    pub fn new(depth: usize) -> PngWriter {
        Self::with_workers(depth, 1)
    }

    /// Starts `workers` worker threads (at least 1) sharing a queue of `depth` frames.
    pub fn with_workers(depth: usize, workers: usize) -> PngWriter {
        let depth = depth.max(1);
        let (tx, rx) = std::sync::mpsc::sync_channel::<PngJob>(depth);
        let rx = Arc::new(std::sync::Mutex::new(rx));
        let (spare_tx, spare) = std::sync::mpsc::channel();
        let (report_tx, reports) = std::sync::mpsc::channel::<PngReport>();
        let busy = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let workers: Vec<_> = (0..workers.max(1))
            .filter_map(|w| {
                let rx = rx.clone();
                let spare_tx = spare_tx.clone();
                let report_tx = report_tx.clone();
                let busy = busy.clone();
                std::thread::Builder::new()
                    .name(format!("vizdeck-png-{w}"))
                    .spawn(move || {
                        let mut written = 0u64;
                        let mut errors = Vec::new();
                        loop {
                            // The lock is held only while waiting for the next job.
                            let job = rx.lock().ok().and_then(|r| r.recv().ok());
                            let Some((path, w, h, pixels, report)) = job else {
                                break;
                            };
                            let result = match &pixels {
                                PngPixels::Rgba(rgba) => {
                                    write_png_with(&path, w, h, rgba, png::Compression::Fast)
                                }
                                PngPixels::Mapped(m) => write_png_mapped(&path, m),
                            };
                            match &result {
                                Ok(()) => written += 1,
                                Err(e) => {
                                    if errors.len() < 8 {
                                        errors.push(e.to_string());
                                    }
                                }
                            }
                            if report {
                                let _ = report_tx.send((path, result.map_err(|e| e.to_string())));
                            }
                            if let PngPixels::Rgba(rgba) = pixels {
                                let _ = spare_tx.send(rgba);
                            }
                            busy.fetch_sub(1, Ordering::AcqRel);
                        }
                        (written, errors)
                    })
                    .ok()
            })
            .collect();
        let capacity = depth + workers.len();
        PngWriter {
            tx: Some(tx),
            workers,
            dropped: 0,
            busy,
            capacity,
            spare,
            reports,
            reports_pending: 0,
        }
    }

    /// A pixel buffer to fill (recycled when one came back from a worker).
    pub fn buffer(&mut self) -> Vec<u8> {
        self.spare.try_recv().unwrap_or_default()
    }

    /// Whether every worker is busy and the queue is full: a frame handed over now would be
    /// dropped, so it is not worth reading back.
    pub fn is_full(&self) -> bool {
        self.busy.load(Ordering::Acquire) >= self.capacity
    }

    /// Frames the writer can hold at once: queue depth + workers.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    fn send(&mut self, job: PngJob) -> bool {
        self.busy.fetch_add(1, Ordering::AcqRel);
        let sent = self.tx.as_ref().is_some_and(|tx| tx.try_send(job).is_ok());
        if !sent {
            self.busy.fetch_sub(1, Ordering::AcqRel);
            self.dropped += 1;
        }
        sent
    }

    /// Queues one PNG of tightly packed RGBA8 pixels; returns false (dropped) when the workers
    /// are behind.
    pub fn submit(&mut self, path: PathBuf, width: u32, height: u32, rgba: Vec<u8>) -> bool {
        self.send((path, width, height, PngPixels::Rgba(rgba), false))
    }

    /// [`submit`](PngWriter::submit), with the outcome (written, or the error) reported through
    /// [`reports`](PngWriter::reports) once the worker is done.
    pub fn submit_reported(
        &mut self,
        path: PathBuf,
        width: u32,
        height: u32,
        rgba: Vec<u8>,
    ) -> bool {
        let sent = self.send((path, width, height, PngPixels::Rgba(rgba), true));
        if sent {
            self.reports_pending += 1;
        }
        sent
    }

    /// The outcomes of reported jobs finished since the last call, in the order they finished.
    /// Never waits.
    pub fn reports(&mut self) -> Vec<PngReport> {
        let done: Vec<PngReport> = self.reports.try_iter().collect();
        self.reports_pending = self.reports_pending.saturating_sub(done.len());
        done
    }

    /// Whether a reported job is still queued or being written.
    pub fn reports_pending(&self) -> bool {
        self.reports_pending > 0
    }

    /// Queues one PNG of a mapped texture readback (its [`TextureLayout`](super::readback::TextureLayout) gives the size), read
    /// by the worker without a copy on this thread. Returns false (dropped, the buffer given back
    /// to its ring) when the workers are behind or it is not a texture readback.
    pub fn submit_mapped(&mut self, path: PathBuf, mapped: MappedReadback) -> bool {
        let Some(t) = mapped.texture else {
            self.dropped += 1;
            return false;
        };
        self.send((path, t.width, t.height, PngPixels::Mapped(mapped), false))
    }

    /// Counts a frame the caller dropped itself (e.g. when [`is_full`](PngWriter::is_full)).
    pub fn count_dropped(&mut self) {
        self.dropped += 1;
    }

    /// Frames dropped because the workers were behind.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// Waits for the queue to drain; returns (PNGs written, first errors). The outcomes of
    /// reported jobs not taken yet are dropped: take them with [`finish_reported`](PngWriter::finish_reported).
    pub fn finish(self) -> (u64, Vec<String>) {
        self.finish_reported().0
    }

    /// [`finish`](PngWriter::finish), also returning the outcomes of the reported jobs not taken
    /// yet.
    pub fn finish_reported(mut self) -> ((u64, Vec<String>), Vec<PngReport>) {
        self.tx = None;
        let mut written = 0;
        let mut errors = Vec::new();
        for w in self.workers.drain(..) {
            if let Ok((n, e)) = w.join() {
                written += n;
                errors.extend(e);
            }
        }
        errors.truncate(8);
        let reports = self.reports.try_iter().collect();
        ((written, errors), reports)
    }
}

/// Writes a mapped texture readback as a PNG, row by row from the padded rows (BGRA swapped to
/// RGBA per row), with fast compression.
fn write_png_mapped(path: &Path, m: &MappedReadback) -> Result<(), ReadbackError> {
    let err = |reason: String| ReadbackError::png(path, reason);
    let t = m
        .texture
        .ok_or_else(|| err("not a texture readback".to_string()))?;
    let result = m.with_data(|data| -> Result<(), ReadbackError> {
        let mut writer = png_writer(path, t.width, t.height, png::Compression::Fast)?;
        let mut stream = writer.stream_writer().map_err(|e| err(e.to_string()))?;
        let mut row = Vec::with_capacity(t.width as usize * 4);
        for y in 0..t.height {
            row.clear();
            if !t.push_rgba_row(data, y, &mut row) {
                return Err(err("readback shorter than its rows".to_string()));
            }
            std::io::Write::write_all(&mut stream, &row).map_err(|e| err(e.to_string()))?;
        }
        stream.finish().map_err(|e| err(e.to_string()))?;
        writer.finish().map_err(|e| err(e.to_string()))
    });
    result.unwrap_or_else(|| Err(err("the readback buffer is no longer mapped".to_string())))
}

/// Writes tightly packed RGBA8 pixels as a PNG (8-bit RGBA, no gamma chunk).
pub fn write_png(path: &Path, width: u32, height: u32, rgba: &[u8]) -> Result<(), ReadbackError> {
    write_png_with(path, width, height, rgba, png::Compression::Balanced)
}

/// [`write_png`] with a chosen compression level.
pub fn write_png_with(
    path: &Path,
    width: u32,
    height: u32,
    rgba: &[u8],
    compression: png::Compression,
) -> Result<(), ReadbackError> {
    let err = |reason: String| ReadbackError::png(path, reason);
    let mut writer = png_writer(path, width, height, compression)?;
    writer
        .write_image_data(rgba)
        .map_err(|e| err(e.to_string()))?;
    writer.finish().map_err(|e| err(e.to_string()))
}

/// Creates `path` and writes the header of an 8-bit RGBA PNG of `width × height`.
fn png_writer(
    path: &Path,
    width: u32,
    height: u32,
    compression: png::Compression,
) -> Result<png::Writer<std::io::BufWriter<std::fs::File>>, ReadbackError> {
    let err = |reason: String| ReadbackError::png(path, reason);
    let file = std::fs::File::create(path).map_err(|e| err(e.to_string()))?;
    let mut enc = png::Encoder::new(std::io::BufWriter::new(file), width, height);
    enc.set_color(png::ColorType::Rgba);
    enc.set_depth(png::BitDepth::Eight);
    enc.set_compression(compression);
    enc.write_header().map_err(|e| err(e.to_string()))
}
