//! LAS and LAZ files, read in batches through the `las` crate (LAZ through its `laz` feature,
//! pure Rust).
//!
//! Coordinates stay exact: every point keeps the file's integers (X, Y, Z) and their file
//! coordinates `X·scale + offset` in f64, the formula of the LAS specification (ASPRS LAS 1.4
//! R15, §2.2 "X, Y, and Z"); survey coordinates of 10⁶–10⁸ m at millimetre scale need the f64.
//! Bad input gives one [`PointCloudError`] naming the file and the problem, never a panic.

use std::path::{Path, PathBuf};

use super::laz_guard::guarded;

/// Why a point-cloud file cannot be read. Every message names the file.
#[derive(Debug, thiserror::Error)]
pub enum PointCloudError {
    /// The file cannot be opened or read.
    #[error("point cloud '{path}': {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// Not a LAS/LAZ file the reader accepts (wrong signature, unknown version or point
    /// format, a header that does not parse).
    #[error("point cloud '{path}': not a LAS/LAZ file this reader accepts: {reason}")]
    NotLas {
        /// The file.
        path: PathBuf,
        /// What the reader said.
        reason: String,
    },
    /// The file ends before its header, variable-length records or LAZ chunk table do (a
    /// truncated download or copy).
    #[error("point cloud '{path}': the file ends early (truncated?): {reason}")]
    EndsEarly {
        /// The file.
        path: PathBuf,
        /// What the reader said.
        reason: String,
    },
    /// A COPC file whose hierarchy does not hold together (a broken page: keys outside the
    /// octree, negative counts, data outside the file, counts that do not add up).
    #[error("point cloud '{path}': broken COPC hierarchy: {reason}")]
    BrokenHierarchy {
        /// The file.
        path: PathBuf,
        /// What is wrong, naming the node.
        reason: String,
    },
    /// A file over HTTP(S) that cannot be read with range requests (unreachable, an error
    /// status, a server without range support).
    #[error("point cloud '{url}': {reason}")]
    Http {
        /// The URL.
        url: String,
        /// What went wrong.
        reason: String,
    },
    /// Not a PLY file the reader accepts (a header or data that does not parse).
    #[error("point cloud '{path}': not a PLY file this reader accepts: {reason}")]
    NotPly {
        /// The file.
        path: PathBuf,
        /// What the reader said.
        reason: String,
    },
    /// A header field whose value makes the coordinates meaningless: a scale factor that is 0,
    /// negative, NaN or infinite, an offset that is not finite, or a scale and offset that put
    /// the integers' range beyond f64 (LAS 1.4 R15, §2.4: coordinate = integer · scale + offset).
    #[error("point cloud '{path}': the header's {field} is {value:?} ({expected})")]
    BadHeaderField {
        /// The file.
        path: PathBuf,
        /// The field, as the specification names it ("x scale factor", "z offset").
        field: String,
        /// Its value.
        value: f64,
        /// What it must be.
        expected: &'static str,
    },
    /// The octree cache of a file cannot be written or read back (a cache that cannot be read
    /// back is removed; the next open indexes the file again).
    #[error("point cloud '{path}': octree cache: {reason}")]
    Cache {
        /// The input file (not the cache).
        path: PathBuf,
        /// What went wrong, naming the cache file where there is one.
        reason: String,
    },
    /// The file holds no point (its header may say 0, or announce points that are not there).
    #[error("point cloud '{path}': the file holds no points")]
    NoPoints {
        /// The file.
        path: PathBuf,
    },
    /// Decoding stopped part-way (a truncated or corrupt file): `read` points came before.
    #[error(
        "point cloud '{path}': the data ends or breaks after {read} of {expected} points: {reason}"
    )]
    Truncated {
        /// The file.
        path: PathBuf,
        /// Points decoded before the failure.
        read: u64,
        /// Points the header announces.
        expected: u64,
        /// What the decoder said.
        reason: String,
    },
}

/// What the header of a LAS/LAZ file says.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct LasInfo {
    /// The file.
    pub path: PathBuf,
    /// LAS version (major, minor).
    pub version: (u8, u8),
    /// Point data record format, 0–10.
    pub point_format: u8,
    /// Point count in the header (the data may hold fewer: see [`Summary::points`]).
    pub header_points: u64,
    /// Scale per axis (x, y, z): file coordinate = integer · scale + offset.
    pub scale: [f64; 3],
    /// Offset per axis.
    pub offset: [f64; 3],
    /// Bounds the header states (min, max), file coordinates.
    pub header_min: [f64; 3],
    /// See `header_min`.
    pub header_max: [f64; 3],
    /// LAZ-compressed.
    pub compressed: bool,
    /// Extra bytes per point record (kept by the reader, not decoded here).
    pub extra_bytes: u16,
    /// The format has RGB colour / GPS time.
    pub has_color: bool,
    /// See `has_color`.
    pub has_gps_time: bool,
    /// The file carries the COPC info record (a `.copc.laz`: read it node by node).
    pub copc: bool,
}

impl LasInfo {
    /// The facts of header `h` of the file at `path`, after [`check_transforms`].
    ///
    /// # Errors
    ///
    /// [`PointCloudError::BadHeaderField`] as [`check_transforms`].
    pub(super) fn from_header(path: &Path, h: &las::Header) -> Result<LasInfo, PointCloudError> {
        check_transforms(path, h.transforms())?;
        Ok(LasInfo::from_checked_header(path, h))
    }

    fn from_checked_header(path: &Path, h: &las::Header) -> LasInfo {
        let format = h.point_format();
        let t = h.transforms();
        let b = h.bounds();
        LasInfo {
            path: path.to_path_buf(),
            version: (h.version().major, h.version().minor),
            point_format: format.to_u8().unwrap_or(u8::MAX),
            header_points: h.number_of_points(),
            scale: [t.x.scale, t.y.scale, t.z.scale],
            offset: [t.x.offset, t.y.offset, t.z.offset],
            header_min: [b.min.x, b.min.y, b.min.z],
            header_max: [b.max.x, b.max.y, b.max.z],
            compressed: format.is_compressed,
            extra_bytes: format.extra_bytes,
            has_color: format.has_color,
            has_gps_time: format.has_gps_time,
            copc: h.copc_info_vlr().is_some(),
        }
    }
}

/// Refuses a header whose scale or offset makes coordinates meaningless: every scale factor
/// must be finite and above 0, every offset finite, and `i32::MIN · scale + offset` finite
/// (the file's integers then all map to finite f64 coordinates). Scale 0 would put every point
/// on the offset; NaN, infinite or negative values have no meaning in LAS 1.4 R15 §2.4.
///
/// # Errors
///
/// [`PointCloudError::BadHeaderField`] naming the file and the first bad field.
pub(crate) fn check_transforms(
    path: &Path,
    t: &las::Vector<las::Transform>,
) -> Result<(), PointCloudError> {
    let bad = |field: String, value: f64, expected: &'static str| {
        Err(PointCloudError::BadHeaderField {
            path: path.to_path_buf(),
            field,
            value,
            expected,
        })
    };
    for (axis, tr) in [("x", &t.x), ("y", &t.y), ("z", &t.z)] {
        if !(tr.scale.is_finite() && tr.scale > 0.0) {
            let field = format!("{axis} scale factor");
            return bad(
                field,
                tr.scale,
                "a scale factor must be a finite number above 0",
            );
        }
        if !tr.offset.is_finite() {
            let field = format!("{axis} offset");
            return bad(field, tr.offset, "an offset must be a finite number");
        }
        if !(f64::from(i32::MIN) * tr.scale - tr.offset.abs()).is_finite() {
            let field = format!("{axis} scale factor");
            return bad(
                field,
                tr.scale,
                "with its offset it puts coordinates beyond f64",
            );
        }
    }
    Ok(())
}

/// A batch of decoded points, as arrays of one attribute each (all of the same length).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PointBatch {
    /// The file's integers (X, Y, Z), exact.
    pub raw: Vec<[i32; 3]>,
    /// File coordinates: `raw · scale + offset` per axis, f64.
    pub xyz: Vec<[f64; 3]>,
    /// Pulse return magnitude.
    pub intensity: Vec<u16>,
    /// ASPRS classification (0–255; formats 0–5 hold 0–31).
    pub classification: Vec<u8>,
    /// Return number (1-based).
    pub return_number: Vec<u8>,
    /// RGB colour (16 bits a channel) where the point format has it.
    pub rgb: Option<Vec<[u16; 3]>>,
    /// GPS time where the point format has it.
    pub gps_time: Option<Vec<f64>>,
}

impl PointBatch {
    /// The points of `d` (decoded records of the file `info` describes, e.g. from
    /// [`LasFile::next_records`]).
    pub fn from_data(d: &las::PointData, info: &LasInfo) -> PointBatch {
        let raw: Vec<[i32; 3]> = d
            .x_raw()
            .zip(d.y_raw())
            .zip(d.z_raw())
            .map(|((x, y), z)| [x, y, z])
            .collect();
        let (s, o) = (info.scale, info.offset);
        let xyz = raw
            .iter()
            .map(|r| std::array::from_fn(|k| f64::from(r[k]) * s[k] + o[k]))
            .collect();
        PointBatch {
            raw,
            xyz,
            intensity: d.intensity().collect(),
            classification: d.classification().collect(),
            return_number: d.return_number().collect(),
            rgb: d.rgb().map(|it| it.map(|(r, g, b)| [r, g, b]).collect()),
            gps_time: d.gps_time().map(|it| it.collect()),
        }
    }

    /// Points in the batch.
    pub fn len(&self) -> usize {
        self.xyz.len()
    }

    /// Whether the batch holds no point.
    pub fn is_empty(&self) -> bool {
        self.xyz.is_empty()
    }

    /// Moves the points of `more` (a batch of the same file) to the end of this one.
    pub fn append(&mut self, mut more: PointBatch) {
        self.raw.append(&mut more.raw);
        self.xyz.append(&mut more.xyz);
        self.intensity.append(&mut more.intensity);
        self.classification.append(&mut more.classification);
        self.return_number.append(&mut more.return_number);
        if let (Some(a), Some(b)) = (&mut self.rgb, &mut more.rgb) {
            a.append(b);
        }
        if let (Some(a), Some(b)) = (&mut self.gps_time, &mut more.gps_time) {
            a.append(b);
        }
    }
}

/// An open LAS/LAZ file read front to back in batches.
pub struct LasFile {
    info: LasInfo,
    reader: las::Reader,
    data: las::PointData,
    read: u64,
    /// Point records the data holds ([`super::held::points_held`]), when known.
    held: Option<u64>,
    failed: bool,
}

impl LasFile {
    /// Opens `path` and reads its header.
    ///
    /// # Errors
    ///
    /// [`PointCloudError::Io`] when the file cannot be opened, [`PointCloudError::NotLas`] when
    /// it is not a LAS/LAZ file the reader accepts.
    pub fn open(path: &Path) -> Result<LasFile, PointCloudError> {
        LasFile::open_with(path, false)
    }

    /// [`open`](LasFile::open), decoding LAZ chunks on all cores when `parallel` (the `laz`
    /// crate's parallel decompressor: worth it for batches of many chunks, ~50,000 points each).
    ///
    /// # Errors
    ///
    /// As [`open`](LasFile::open).
    pub fn open_with(path: &Path, parallel: bool) -> Result<LasFile, PointCloudError> {
        let file = std::fs::File::open(path).map_err(|source| PointCloudError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        LasFile::from_reader(std::io::BufReader::new(file), path, parallel)
    }

    /// Reads a LAS/LAZ file from `read` (a file, or bytes in a [`std::io::Cursor`]), naming it
    /// `path` in messages: what [`open_with`](LasFile::open_with) runs on the opened file.
    ///
    /// # Errors
    ///
    /// As [`open`](LasFile::open); [`PointCloudError::BadHeaderField`] as
    /// [`check_transforms`].
    pub fn from_reader<R>(read: R, path: &Path, parallel: bool) -> Result<LasFile, PointCloudError>
    where
        R: std::io::Read + std::io::Seek + Send + Sync + 'static,
    {
        let laz = if parallel {
            las::LazParallelism::Yes
        } else {
            las::LazParallelism::No
        };
        let io = |source| PointCloudError::Io {
            path: path.to_path_buf(),
            source,
        };
        // Seeks a stranger's header asks for are checked alike for files and bytes.
        let mut read = super::seek_within::SeekWithin::new(read).map_err(io)?;
        let file_len = std::io::Seek::seek(&mut read, std::io::SeekFrom::End(0)).map_err(io)?;
        check_layout(&mut read, file_len, path)?;
        std::io::Seek::seek(&mut read, std::io::SeekFrom::Start(0)).map_err(io)?;
        let header = las::Header::new(&mut read).map_err(|e| open_error(path, e))?;
        let info = LasInfo::from_header(path, &header)?;
        let held = super::held::points_held(&mut read, &header, file_len).map_err(|reason| {
            PointCloudError::NotLas {
                path: path.to_path_buf(),
                reason: vizdeck_base::text::one_line(&reason),
            }
        })?;
        std::io::Seek::seek(&mut read, std::io::SeekFrom::Start(0)).map_err(io)?;
        let options = las::ReaderOptions::default().with_laz_parallelism(laz);
        let reader = guarded(|| las::Reader::with_options(read, options))
            .map_err(|reason| PointCloudError::NotLas {
                path: path.to_path_buf(),
                reason,
            })?
            .map_err(|e| open_error(path, e))?;
        let data = las::PointDataBuilder::new()
            .for_header(reader.header())
            .build();
        Ok(LasFile {
            info,
            reader,
            data,
            read: 0,
            held,
            failed: false,
        })
    }

    /// The header's facts.
    pub fn info(&self) -> &LasInfo {
        &self.info
    }

    /// The next batch of at most `max` points (at least 1), or `None` at the end of the data.
    ///
    /// # Errors
    ///
    /// [`PointCloudError::Truncated`] when the data ends or breaks before the header's count,
    /// naming both counts (the batches before it stay valid; later calls return `None`). A
    /// header that claims more points than the data holds ([`super::held`]) gives the points
    /// held, then this error.
    pub fn next_batch(&mut self, max: usize) -> Result<Option<PointBatch>, PointCloudError> {
        Ok(self
            .fill(max)?
            .then(|| PointBatch::from_data(&self.data, &self.info)))
    }

    /// [`next_batch`](LasFile::next_batch) as the decoder's records, not yet converted (so a
    /// caller can convert one batch while the next decodes); convert with
    /// [`PointBatch::from_data`].
    ///
    /// # Errors
    ///
    /// As [`next_batch`](LasFile::next_batch).
    pub fn next_records(&mut self, max: usize) -> Result<Option<las::PointData>, PointCloudError> {
        if !self.fill(max)? {
            return Ok(None);
        }
        let fresh = las::PointDataBuilder::new()
            .for_header(self.reader.header())
            .build();
        Ok(Some(std::mem::replace(&mut self.data, fresh)))
    }

    /// Decodes the next batch of at most `max` points into `self.data`; false at the end.
    fn fill(&mut self, max: usize) -> Result<bool, PointCloudError> {
        let limit = self
            .held
            .map_or(self.info.header_points, |h| h.min(self.info.header_points));
        let left = limit.saturating_sub(self.read);
        if self.failed {
            return Ok(false);
        }
        if left == 0 {
            if self.read >= self.info.header_points {
                return Ok(false);
            }
            // The header claims more than the data holds: the points read are all there is.
            self.failed = true;
            let what = if self.info.compressed {
                "its LAZ chunks"
            } else {
                "its point records"
            };
            return Err(self.truncated(format!(
                "{what} hold {limit}, the header claims {}",
                self.info.header_points
            )));
        }
        let n = left.min(batch_points(max, self.reader.header().point_format().len()));
        let (reader, data) = (&mut self.reader, &mut self.data);
        let filled =
            guarded(|| reader.fill_points(n, data)).and_then(|r| r.map_err(|e| one_line(&e)));
        let got = match filled {
            Ok(got) => got,
            // A batch that breaks part-way is read again point by point from its start (one
            // seek), so every point before the break is kept; the break itself is reported by
            // the next call.
            Err(e) => match self.read_up_to_break(n) {
                Some(got) => got,
                None => {
                    self.failed = true;
                    return Err(self.truncated(e));
                }
            },
        };
        if got == 0 {
            self.failed = true;
            return Err(self.truncated("no more point records in the file".to_string()));
        }
        self.read += got;
        Ok(true)
    }

    /// After a batch of `n` broke: seeks back to the batch's start and decodes one point at a
    /// time until the break, leaving the points before it in `self.data`. `None` when the seek
    /// fails or the first point is already broken.
    fn read_up_to_break(&mut self, n: u64) -> Option<u64> {
        let reader = &mut self.reader;
        guarded(|| reader.seek(self.read)).ok()?.ok()?;
        let builder = las::PointDataBuilder::new().for_header(reader.header());
        let mut one = builder.clone().build();
        let mut bytes = Vec::new();
        let mut got = 0;
        while got < n {
            match guarded(|| reader.fill_points(1, &mut one)) {
                Ok(Ok(1)) => bytes.extend_from_slice(one.raw_bytes()),
                _ => break,
            }
            got += 1;
        }
        if got == 0 {
            return None;
        }
        self.data = builder.build_from_bytes(bytes).ok()?;
        Some(got)
    }

    fn truncated(&self, reason: String) -> PointCloudError {
        PointCloudError::Truncated {
            path: self.info.path.clone(),
            read: self.read,
            expected: self.info.header_points,
            reason,
        }
    }
}

/// The most bytes one decoded batch may hold: the decoder allocates and zero-fills
/// `points × record length` before reading, and a record may be 65,535 bytes long (the LAS
/// header's field is a u16), so 65,536 such points would be 4.3 GB. 8 MiB holds 65,536 points
/// of records up to 128 bytes (the app's batch; the core formats are 20–67 bytes), and 128 of
/// the longest.
pub const MAX_BATCH_BYTES: u64 = 8 << 20;

/// The points of one batch: `max` (at least 1) capped so the batch holds at most
/// [`MAX_BATCH_BYTES`] of `record_len`-byte records, and never fewer than one point.
pub fn batch_points(max: usize, record_len: u16) -> u64 {
    let cap = (MAX_BATCH_BYTES / u64::from(record_len.max(1))).max(1);
    (max.max(1) as u64).min(cap)
}

/// [`super::held::check_layout`] as the error to show: the file ends before what its header
/// describes.
pub(super) fn check_layout<R: std::io::Read + std::io::Seek>(
    read: &mut R,
    file_len: u64,
    path: &Path,
) -> Result<(), PointCloudError> {
    super::held::check_layout(read, file_len).map_err(|reason| PointCloudError::EndsEarly {
        path: path.to_path_buf(),
        reason: vizdeck_base::text::one_line(&reason),
    })
}

/// `e`, from opening `path`, as the error to show: the data ran out, an I/O error, or not a file
/// this reader accepts.
pub(super) fn open_error(path: &Path, e: las::Error) -> PointCloudError {
    let path = path.to_path_buf();
    if ends_early(&e) {
        return PointCloudError::EndsEarly {
            path,
            reason: one_line(&e),
        };
    }
    match e {
        las::Error::Io(source) => PointCloudError::Io { path, source },
        e => PointCloudError::NotLas {
            path,
            reason: one_line(&e),
        },
    }
}

/// Whether `e` says the data ran out (an I/O "unexpected end of file", also when the LAZ decoder
/// wraps it).
fn ends_early(e: &las::Error) -> bool {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(c) = cause {
        if c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::UnexpectedEof)
        {
            return true;
        }
        cause = c.source();
    }
    // The LAZ decoder's error wraps the I/O error without exposing it as a source.
    format!("{e:?}").contains("UnexpectedEof")
}

/// `e` on one line (the decoder's messages may hold line breaks).
pub(super) fn one_line(e: &dyn std::fmt::Display) -> String {
    vizdeck_base::text::one_line(&e.to_string())
}

/// One pass over a file's points: what its data (not only its header) holds.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Summary {
    /// The header.
    pub info: LasInfo,
    /// Points decoded.
    pub points: u64,
    /// Bounds of the decoded points (min, max), file coordinates; `None` without points.
    pub min: Option<[f64; 3]>,
    /// See `min`.
    pub max: Option<[f64; 3]>,
    /// Sums of the file's integers per axis (a check that every point was read exactly).
    pub sum_raw: [i64; 3],
    /// Points per classification value (index = class).
    pub class_counts: Vec<u64>,
    /// Sum of the intensities.
    pub intensity_sum: u64,
    /// Why decoding stopped early, when it did (the summary covers the points before).
    pub warning: Option<String>,
}

/// Reads every point of `path` in batches of `batch` points and summarises them. A file whose
/// data ends early gives the summary of what it holds with a warning naming the file and the
/// count.
///
/// # Errors
///
/// As [`LasFile::open`].
pub fn summarize(path: &Path, batch: usize) -> Result<Summary, PointCloudError> {
    let mut file = LasFile::open(path)?;
    let mut s = Summary {
        info: file.info().clone(),
        points: 0,
        min: None,
        max: None,
        sum_raw: [0; 3],
        class_counts: vec![0; 256],
        intensity_sum: 0,
        warning: None,
    };
    let (mut lo, mut hi) = ([f64::INFINITY; 3], [f64::NEG_INFINITY; 3]);
    loop {
        match file.next_batch(batch) {
            Ok(Some(b)) => {
                for (p, r) in b.xyz.iter().zip(&b.raw) {
                    for k in 0..3 {
                        lo[k] = lo[k].min(p[k]);
                        hi[k] = hi[k].max(p[k]);
                        s.sum_raw[k] += i64::from(r[k]);
                    }
                }
                for &c in &b.classification {
                    s.class_counts[usize::from(c)] += 1;
                }
                s.intensity_sum += b.intensity.iter().map(|&i| u64::from(i)).sum::<u64>();
                s.points += b.len() as u64;
            }
            Ok(None) => break,
            Err(e) => {
                s.warning = Some(e.to_string());
                break;
            }
        }
    }
    if s.points > 0 {
        s.min = Some(lo);
        s.max = Some(hi);
    }
    Ok(s)
}
