//! The out-of-core octree of a file without a hierarchy (LAS, LAZ, PLY), built as
//! PotreeConverter 2.0 builds it (Schütz, Ohrhallinger, Wimmer: "Fast Out-of-Core Octree
//! Generation for Massive Point Clouds", CGF 39(7), 2020), and cached on disk so a second open
//! is instant:
//!
//! 1. **decode**: the file is read once in batches; each point becomes a 40-byte [`Record`]
//!    appended to a spill file, the bounds taken from the points;
//! 2. **count**: a counting pass over the spill file fills a 64³ grid over the bounding cube;
//! 3. **chunks**: the grid's count pyramid is split top-down into octree cells of at most
//!    [`IndexOptions::chunk_points`] points (a counting sort: each chunk a cube of the octree);
//! 4. **distribute**: a second pass over the spill file appends each point to its chunk's file;
//! 5. **index**: chunks are indexed in parallel on worker threads, each in memory with
//!    [`octree::build_in`] under its own cube (inner nodes keep one point per cell of a 128³
//!    grid, leaves at most 20,000 points); every node but the chunk's root goes to the cache;
//! 6. **upper levels**: the nodes above the chunks take, level by level from the deepest, one
//!    point per grid cell from their children's own points (which then leave the children):
//!    every point stays in exactly one node, every inner node is a spatially even subsample;
//! 7. **write**: the node table and a JSON footer naming the file (canonical path, size,
//!    modification time) close the cache file, written under a temporary name and renamed, so
//!    a cache is whole or absent. A file whose size or modification time changed is indexed
//!    again.
//!
//! [`CachedSource`] then serves nodes straight from the cache file (positioned reads, any
//! thread): memory holds the node table only.

use std::collections::HashMap;
use std::io::{BufWriter, Read, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::PointCloudError;
use super::octree::{self, Node, OctreeConfig};
use super::source::{Hierarchy, NodeData, NodeMeta, NodeSource, SourceInfo};

/// One point in the spill, chunk and cache files (little endian, 40 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct Record {
    /// File coordinates.
    pub xyz: [f64; 3],
    /// GPS time (0 where the file has none).
    pub gps_time: f64,
    /// Attribute word ([`super::source::attribute_word`]).
    pub word: u32,
    /// Colour, RGBA8.
    pub rgba: u32,
}

/// Bytes of a [`Record`].
pub const RECORD: usize = std::mem::size_of::<Record>();
/// Cells per axis of the counting grid.
const COUNT_GRID: u32 = 64;
/// Cache format version (in the file name's magic and the footer).
const MAGIC: &[u8; 8] = b"VZOCT001";

/// How to index.
#[derive(Clone, Debug)]
pub struct IndexOptions {
    /// Where caches live (created when missing).
    pub cache_dir: PathBuf,
    /// Worker threads of the chunk indexing (at least 1).
    pub threads: usize,
    /// Most points a chunk holds (what a worker holds in memory at once).
    pub chunk_points: u64,
    /// The octree's limits.
    pub octree: OctreeConfig,
}

impl IndexOptions {
    /// The defaults: `cache_dir`, one worker per core (up to 8), chunks of 4M points.
    pub fn new(cache_dir: PathBuf) -> IndexOptions {
        IndexOptions {
            cache_dir,
            threads: std::thread::available_parallelism()
                .map_or(2, |n| n.get())
                .clamp(1, 8),
            chunk_points: 4_000_000,
            octree: OctreeConfig::default(),
        }
    }
}

/// The default cache directory: `$XDG_CACHE_HOME/vizdeck/pointcloud`, else
/// `~/.cache/vizdeck/pointcloud`, else the temporary directory's `vizdeck-pointcloud`.
pub fn default_cache_dir() -> PathBuf {
    if let Some(x) = std::env::var_os("XDG_CACHE_HOME").filter(|v| !v.is_empty()) {
        return PathBuf::from(x).join("vizdeck/pointcloud");
    }
    if let Some(h) = std::env::var_os("HOME").filter(|v| !v.is_empty()) {
        return PathBuf::from(h).join(".cache/vizdeck/pointcloud");
    }
    std::env::temp_dir().join("vizdeck-pointcloud")
}

/// How far indexing has come, shared with the frame thread.
#[derive(Debug, Default)]
pub struct Progress {
    /// Points decoded so far, and the count the file announces.
    pub decoded: AtomicU64,
    /// See `decoded`.
    pub expected: AtomicU64,
    /// Chunks indexed so far, and their number (0 until known).
    pub chunks_done: AtomicU64,
    /// See `chunks_done`.
    pub chunks: AtomicU64,
}

impl Progress {
    /// Fraction done in [0, 1]: decoding is the first half, the chunks the second.
    pub fn fraction(&self) -> f32 {
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed) as f32;
        let d = (get(&self.decoded) / get(&self.expected).max(1.0)).min(1.0);
        let c = get(&self.chunks_done) / get(&self.chunks).max(1.0);
        0.5 * d + 0.5 * c.min(1.0)
    }

    /// Where indexing stands `elapsed_s` seconds after it started: the estimate of the whole
    /// ([`Progress::fraction`], the time left at the rate so far, points decoded a second while
    /// decoding) and one line for a bar: `"decoding 2.00 M of 8.00 M points · 12 % · 1.00 M
    /// points/s · 0:14 left"`, then `"indexing chunk 3 of 12 · 62 % · 0:06 left"`.
    pub fn describe(&self, elapsed_s: f64) -> (vizdeck_base::progress::Estimate, String) {
        use vizdeck_base::progress::{Estimate, amount_text};
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let (decoded, expected) = (get(&self.decoded), get(&self.expected));
        let (done, chunks) = (get(&self.chunks_done), get(&self.chunks));
        let decoding = chunks == 0;
        let per_s =
            (decoding && decoded > 0 && elapsed_s > 0.0).then(|| decoded as f64 / elapsed_s);
        let e = Estimate::from_fraction(f64::from(self.fraction()), elapsed_s, per_s);
        let stage = if !decoding {
            format!("indexing chunk {} of {chunks}", (done + 1).min(chunks))
        } else if expected > 0 {
            format!(
                "decoding {} of {}",
                vizdeck_base::progress::count_text(decoded as f64),
                amount_text(expected as f64, "points")
            )
        } else {
            "opening".to_string()
        };
        (e, format!("{stage} · {}", e.text("points")))
    }
}

/// The identity of a file for its cache: canonical path, size, modification time (ns).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
struct Fingerprint {
    path: String,
    size: u64,
    mtime_ns: i128,
}

fn fingerprint(path: &Path) -> Result<Fingerprint, PointCloudError> {
    let io = |source| PointCloudError::Io {
        path: path.to_path_buf(),
        source,
    };
    let canonical = std::fs::canonicalize(path).map_err(io)?;
    let meta = std::fs::metadata(&canonical).map_err(io)?;
    let mtime_ns = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos() as i128);
    Ok(Fingerprint {
        path: canonical.display().to_string(),
        size: meta.len(),
        mtime_ns,
    })
}

/// The cache file of `fp` in `dir` (named by a hash of the canonical path).
fn cache_file(dir: &Path, fp: &Fingerprint) -> PathBuf {
    // FNV-1a, 64 bits: a stable name, not a security boundary.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in fp.path.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    let stem = Path::new(&fp.path)
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    dir.join(format!("{stem}-{h:016x}.vzoct"))
}

/// The footer of a cache file.
#[derive(serde::Serialize, serde::Deserialize)]
struct Footer {
    fingerprint: Fingerprint,
    name: String,
    kind: String,
    scale: [f64; 3],
    has_color: bool,
    has_gps_time: bool,
    intensity_max: u16,
    warning: Option<String>,
    bounds: ([f64; 3], [f64; 3]),
    spacing_grid: u32,
    decode_rate: Option<f64>,
    build_rate: Option<f64>,
}

/// One node of the table: level, cell, cube, points and where they are.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
struct TableEntry {
    min: [f64; 3],
    side: f64,
    offset: u64,
    points: u64,
    level: u32,
    cell: [u32; 3],
}

type Key = (u32, [u32; 3]);

/// A node on its way into the cache: its key, cube, and records.
struct Pending {
    key: Key,
    min: [f64; 3],
    side: f64,
    records: Vec<Record>,
}

/// Appends nodes' records to the cache file being written.
struct DataWriter {
    file: BufWriter<std::fs::File>,
    at: u64,
    table: Vec<TableEntry>,
}

impl DataWriter {
    fn put(
        &mut self,
        key: Key,
        min: [f64; 3],
        side: f64,
        records: &[Record],
    ) -> std::io::Result<()> {
        self.file.write_all(bytemuck::cast_slice(records))?;
        self.table.push(TableEntry {
            min,
            side,
            offset: self.at,
            points: records.len() as u64,
            level: key.0,
            cell: key.1,
        });
        self.at += (records.len() * RECORD) as u64;
        Ok(())
    }
}

/// Opens the cache of `path` in `opts.cache_dir` if it is current, else indexes the file:
/// `decode` is called once with a sink for its records (in batches) and returns the file's
/// facts, the bounds of its points among them (the index's cube; the rates in it are replaced
/// by the index's). Returns the source and whether it came from the cache.
///
/// # Errors
///
/// What `decode` returns; [`PointCloudError::NoPoints`] for a file without points;
/// [`PointCloudError::Io`] naming the cache when it cannot be written;
/// [`PointCloudError::Cache`] naming the input when the points' bounds are not finite (no
/// cache is written) or the cache written cannot be read back (it is removed). A cache that
/// does not open is removed and the file indexed again.
pub fn open_or_index(
    path: &Path,
    opts: &IndexOptions,
    progress: &Arc<Progress>,
    decode: impl FnOnce(
        &mut dyn FnMut(&[Record]) -> std::io::Result<()>,
    ) -> Result<SourceInfo, PointCloudError>,
) -> Result<(CachedSource, bool), PointCloudError> {
    let fp = fingerprint(path)?;
    let target = cache_file(&opts.cache_dir, &fp);
    match CachedSource::open(&target) {
        Ok(source) if source.fingerprint == fp => return Ok((source, true)),
        // Stale (the file changed): indexed again below, the new cache replaces it.
        Ok(_) => {}
        // Damaged or of another version: removed, so it never stands in for the file.
        Err(_) => {
            let _ = std::fs::remove_file(&target);
        }
    }
    let cache_io = |source| PointCloudError::Io {
        path: target.clone(),
        source,
    };
    std::fs::create_dir_all(&opts.cache_dir).map_err(cache_io)?;
    let work = tempdir(&opts.cache_dir).map_err(cache_io)?;
    let result = index_into(path, &fp, &target, &work, opts, progress, decode);
    let _ = std::fs::remove_dir_all(&work);
    result?;
    // A cache that cannot be read back is removed, and the error names the input: what the
    // user opened, not a file they never saw.
    match CachedSource::open(&target) {
        Ok(source) => Ok((source, false)),
        Err(e) => {
            let _ = std::fs::remove_file(&target);
            Err(PointCloudError::Cache {
                path: path.to_path_buf(),
                reason: format!("it could not be read back (removed): {e}"),
            })
        }
    }
}

fn tempdir(parent: &Path) -> std::io::Result<PathBuf> {
    static N: AtomicU64 = AtomicU64::new(0);
    let dir = parent.join(format!(
        ".work-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

#[allow(clippy::too_many_arguments)]
fn index_into(
    path: &Path,
    fp: &Fingerprint,
    target: &Path,
    work: &Path,
    opts: &IndexOptions,
    progress: &Arc<Progress>,
    decode: impl FnOnce(
        &mut dyn FnMut(&[Record]) -> std::io::Result<()>,
    ) -> Result<SourceInfo, PointCloudError>,
) -> Result<(), PointCloudError> {
    let io_at = |p: &Path| {
        let p = p.to_path_buf();
        move |source| PointCloudError::Io {
            path: p.clone(),
            source,
        }
    };
    // 1. Decode into the spill file.
    let spill_path = work.join("spill.bin");
    let mut spill = BufWriter::new(std::fs::File::create(&spill_path).map_err(io_at(&spill_path))?);
    let mut count = 0u64;
    let decode_start = Instant::now();
    let info = decode(&mut |records: &[Record]| {
        count += records.len() as u64;
        progress.decoded.store(count, Ordering::Relaxed);
        spill.write_all(bytemuck::cast_slice(records))
    })?;
    spill.flush().map_err(io_at(&spill_path))?;
    drop(spill);
    let decode_s = decode_start.elapsed().as_secs_f64();
    if count == 0 {
        return Err(PointCloudError::NoPoints {
            path: path.to_path_buf(),
        });
    }
    let build_start = Instant::now();
    let (lo, hi) = info.bounds;
    // JSON has no NaN or infinity: refused here, before any cache is written.
    let finite = |v: &[f64; 3]| v.iter().all(|x| x.is_finite());
    if !(finite(&lo) && finite(&hi) && finite(&info.scale)) {
        return Err(PointCloudError::Cache {
            path: path.to_path_buf(),
            reason: format!(
                "not written: the points' bounds {lo:?}..{hi:?} or scale {:?} are not finite",
                info.scale
            ),
        });
    }
    let side = (0..3).map(|k| hi[k] - lo[k]).fold(1e-9, f64::max);
    let cube = (lo, side);
    // 2. Count.
    let g = COUNT_GRID as usize;
    let cell_of = |p: [f64; 3]| -> usize {
        let c: [usize; 3] =
            std::array::from_fn(|k| (((p[k] - lo[k]) / side * g as f64) as usize).min(g - 1));
        (c[2] * g + c[1]) * g + c[0]
    };
    let mut counts = vec![0u64; g * g * g];
    for_each_record(&spill_path, |r| counts[cell_of(r.xyz)] += 1).map_err(io_at(&spill_path))?;
    // 3. Chunks: split the count pyramid top-down.
    let depth = COUNT_GRID.trailing_zeros();
    let mut chunks: Vec<Key> = Vec::new();
    split(&counts, depth, (0, [0; 3]), opts.chunk_points, &mut chunks);
    let mut cell_chunk = vec![u32::MAX; g * g * g];
    for (i, &(level, c)) in chunks.iter().enumerate() {
        let span = 1usize << (depth - level);
        for z in 0..span {
            for y in 0..span {
                for x in 0..span {
                    let (cx, cy, cz) = (
                        c[0] as usize * span + x,
                        c[1] as usize * span + y,
                        c[2] as usize * span + z,
                    );
                    cell_chunk[(cz * g + cy) * g + cx] = i as u32;
                }
            }
        }
    }
    progress
        .chunks
        .store(chunks.len() as u64, Ordering::Relaxed);
    // 4. Distribute.
    let chunk_path = |i: usize| work.join(format!("chunk-{i}.bin"));
    {
        let mut writers: Vec<BufWriter<std::fs::File>> = (0..chunks.len())
            .map(|i| {
                std::fs::File::create(chunk_path(i)).map(|f| BufWriter::with_capacity(64 << 10, f))
            })
            .collect::<std::io::Result<_>>()
            .map_err(io_at(work))?;
        let mut failed = None;
        for_each_record(&spill_path, |r| {
            let i = cell_chunk[cell_of(r.xyz)] as usize;
            if let Some(w) = writers.get_mut(i)
                && let Err(e) = w.write_all(bytemuck::bytes_of(r))
            {
                failed.get_or_insert(e);
            }
        })
        .map_err(io_at(&spill_path))?;
        if let Some(e) = failed {
            return Err(io_at(work)(e));
        }
        for mut w in writers {
            w.flush().map_err(io_at(work))?;
        }
    }
    let _ = std::fs::remove_file(&spill_path);
    // 5. Index the chunks in parallel; every node but a chunk's root goes to the cache.
    let tmp_target = target.with_extension(format!("tmp{}", std::process::id()));
    let mut file = std::fs::File::create(&tmp_target).map_err(io_at(&tmp_target))?;
    file.write_all(MAGIC).map_err(io_at(&tmp_target))?;
    let writer = Mutex::new(DataWriter {
        file: BufWriter::with_capacity(1 << 20, file),
        at: MAGIC.len() as u64,
        table: Vec::new(),
    });
    let roots: Mutex<Vec<Pending>> = Mutex::new(Vec::new());
    let next = AtomicU64::new(0);
    let failure: Mutex<Option<std::io::Error>> = Mutex::new(None);
    std::thread::scope(|scope| {
        for t in 0..opts.threads.max(1) {
            let (chunks, writer, roots, next, failure) =
                (&chunks, &writer, &roots, &next, &failure);
            let chunk_path = &chunk_path;
            let cfg = opts.octree;
            let spawned = std::thread::Builder::new()
                .name(format!("vizdeck-pointcloud-index-{t}"))
                .spawn_scoped(scope, move || {
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed) as usize;
                        let Some(&(level, c)) = chunks.get(i) else {
                            return;
                        };
                        let r = index_chunk(&chunk_path(i), (level, c), cube, &cfg, writer);
                        match r {
                            Ok(root) => {
                                if let Ok(mut v) = roots.lock() {
                                    v.push(root);
                                }
                            }
                            Err(e) => {
                                if let Ok(mut f) = failure.lock() {
                                    f.get_or_insert(e);
                                }
                                return;
                            }
                        }
                        let _ = std::fs::remove_file(chunk_path(i));
                        progress.chunks_done.fetch_add(1, Ordering::Relaxed);
                    }
                });
            if let Err(e) = spawned
                && let Ok(mut f) = failure.lock()
            {
                f.get_or_insert(e);
            }
        }
    });
    if let Some(e) = failure.into_inner().ok().flatten() {
        let _ = std::fs::remove_file(&tmp_target);
        return Err(io_at(work)(e));
    }
    // 6. Upper levels.
    let mut nodes: HashMap<Key, Pending> = roots
        .into_inner()
        .unwrap_or_default()
        .into_iter()
        .map(|p| (p.key, p))
        .collect();
    let deepest = nodes.keys().map(|k| k.0).max().unwrap_or(0);
    for level in (0..deepest).rev() {
        // Upper nodes of this level: parents of the nodes one level down.
        let mut parents: Vec<Key> = nodes
            .keys()
            .filter(|k| k.0 == level + 1)
            .map(|k| (level, k.1.map(|v| v / 2)))
            .collect();
        parents.sort_unstable();
        parents.dedup();
        for key in parents {
            if nodes.contains_key(&key) {
                continue; // a chunk root already (cannot happen: chunks partition space)
            }
            let node_side = side / f64::from(1u32 << level);
            let min: [f64; 3] = std::array::from_fn(|k| lo[k] + f64::from(key.1[k]) * node_side);
            let grid = opts.octree.sample_grid.max(1) as usize;
            let mut claimed = vec![false; grid * grid * grid];
            let mut keep = Vec::new();
            for o in 0..8u32 {
                let child: Key = (
                    level + 1,
                    std::array::from_fn(|k| key.1[k] * 2 + ((o >> k) & 1)),
                );
                let Some(c) = nodes.get_mut(&child) else {
                    continue;
                };
                let mut stay = Vec::with_capacity(c.records.len());
                for r in c.records.drain(..) {
                    let cell: [usize; 3] = std::array::from_fn(|k| {
                        (((r.xyz[k] - min[k]) / node_side * grid as f64).max(0.0) as usize)
                            .min(grid - 1)
                    });
                    let slot = (cell[2] * grid + cell[1]) * grid + cell[0];
                    if claimed[slot] {
                        stay.push(r);
                    } else {
                        claimed[slot] = true;
                        keep.push(r);
                    }
                }
                c.records = stay;
            }
            nodes.insert(
                key,
                Pending {
                    key,
                    min,
                    side: node_side,
                    records: keep,
                },
            );
        }
    }
    // 7. Write the roots and upper nodes, the table and the footer.
    let mut w = writer
        .into_inner()
        .map_err(|_| io_at(&tmp_target)(std::io::Error::other("index writer poisoned")))?;
    let mut rest: Vec<Pending> = nodes.into_values().collect();
    rest.sort_by_key(|p| (p.key.0, p.key.1[2], p.key.1[1], p.key.1[0]));
    for p in &rest {
        w.put(p.key, p.min, p.side, &p.records)
            .map_err(io_at(&tmp_target))?;
    }
    w.table
        .sort_by_key(|e| (e.level, e.cell[2], e.cell[1], e.cell[0]));
    let table_at = w.at;
    w.file
        .write_all(bytemuck::cast_slice(&w.table))
        .map_err(io_at(&tmp_target))?;
    let build_s = build_start.elapsed().as_secs_f64();
    let footer = Footer {
        fingerprint: fp.clone(),
        name: info.name,
        kind: info.kind.to_string(),
        scale: info.scale,
        has_color: info.has_color,
        has_gps_time: info.has_gps_time,
        intensity_max: info.intensity_max,
        warning: info.warning,
        bounds: (lo, hi),
        spacing_grid: opts.octree.sample_grid,
        decode_rate: Some(count as f64 / decode_s.max(1e-9)),
        build_rate: Some(count as f64 / build_s.max(1e-9)),
    };
    let json =
        serde_json::to_vec(&footer).map_err(|e| io_at(&tmp_target)(std::io::Error::other(e)))?;
    let json_at = table_at + std::mem::size_of_val(w.table.as_slice()) as u64;
    w.file.write_all(&json).map_err(io_at(&tmp_target))?;
    w.file
        .write_all(&table_at.to_le_bytes())
        .map_err(io_at(&tmp_target))?;
    w.file
        .write_all(&json_at.to_le_bytes())
        .map_err(io_at(&tmp_target))?;
    w.file.write_all(MAGIC).map_err(io_at(&tmp_target))?;
    w.file.flush().map_err(io_at(&tmp_target))?;
    drop(w);
    std::fs::rename(&tmp_target, target).map_err(io_at(target))?;
    Ok(())
}

/// Splits the count pyramid at `key` (level, cell of a 2^level grid) into chunks of at most
/// `max` points (or cells of the counting grid itself).
fn split(counts: &[u64], depth: u32, key: Key, max: u64, out: &mut Vec<Key>) {
    let (level, c) = key;
    let g = 1usize << depth;
    let span = 1usize << (depth - level);
    let mut n = 0u64;
    for z in 0..span {
        for y in 0..span {
            let row = ((c[2] as usize * span + z) * g + c[1] as usize * span + y) * g
                + c[0] as usize * span;
            n += counts[row..row + span].iter().sum::<u64>();
        }
    }
    if n == 0 {
        return;
    }
    if n <= max || level == depth {
        out.push(key);
        return;
    }
    for o in 0..8u32 {
        let child = std::array::from_fn(|k| c[k] * 2 + ((o >> k) & 1));
        split(counts, depth, (level + 1, child), max, out);
    }
}

/// Calls `f` for every record of the file at `path`, in order.
fn for_each_record(path: &Path, mut f: impl FnMut(&Record)) -> std::io::Result<()> {
    let mut file = std::io::BufReader::with_capacity(1 << 20, std::fs::File::open(path)?);
    let mut buf = vec![Record::default(); 16_384];
    loop {
        let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut buf);
        let total = bytes.len();
        let mut n = 0;
        while n < total {
            let got = file.read(&mut bytes[n..])?;
            if got == 0 {
                break;
            }
            n += got;
        }
        for r in &buf[..n / RECORD] {
            f(r);
        }
        if n < total {
            return Ok(());
        }
    }
}

/// Indexes one chunk: its octree under its cube; every node but the root is written; the root
/// (with its records) is returned for the upper levels.
fn index_chunk(
    path: &Path,
    key: Key,
    (lo, side): ([f64; 3], f64),
    cfg: &OctreeConfig,
    writer: &Mutex<DataWriter>,
) -> std::io::Result<Pending> {
    let bytes = std::fs::read(path)?;
    let n = bytes.len() / RECORD;
    let mut records = vec![Record::default(); n];
    bytemuck::cast_slice_mut::<Record, u8>(&mut records).copy_from_slice(&bytes[..n * RECORD]);
    drop(bytes);
    let xyz: Vec<[f64; 3]> = records.iter().map(|r| r.xyz).collect();
    let node_side = side / f64::from(1u32 << key.0);
    let min: [f64; 3] = std::array::from_fn(|k| lo[k] + f64::from(key.1[k]) * node_side);
    let tree = octree::build_in(
        &xyz,
        cfg,
        Node {
            level: key.0,
            cell: key.1,
            min,
            side: node_side,
            points: Vec::new(),
            children: [None; 8],
        },
    );
    let mut root = None;
    for (i, n) in tree.nodes.into_iter().enumerate() {
        let recs: Vec<Record> = n.points.iter().map(|&p| records[p as usize]).collect();
        if i == octree::Octree::ROOT {
            root = Some(Pending {
                key,
                min: n.min,
                side: n.side,
                records: recs,
            });
            continue;
        }
        let mut w = writer
            .lock()
            .map_err(|_| std::io::Error::other("index writer poisoned"))?;
        w.put((n.level, n.cell), n.min, n.side, &recs)?;
    }
    root.ok_or_else(|| std::io::Error::other("chunk without a root"))
}

/// A cloud served from its cache file (see the module docs).
pub struct CachedSource {
    file: std::fs::File,
    hierarchy: Hierarchy,
    offsets: Vec<u64>,
    info: SourceInfo,
    fingerprint: Fingerprint,
    /// The cache file.
    pub path: PathBuf,
}

impl CachedSource {
    /// The file this cache was made from (its canonical path when indexed).
    pub fn source_path(&self) -> &str {
        &self.fingerprint.path
    }

    /// Opens a cache file: its footer and node table.
    ///
    /// # Errors
    ///
    /// [`PointCloudError::Io`] or [`PointCloudError::NotLas`] naming the cache when it is
    /// missing, of another version or damaged.
    pub fn open(path: &Path) -> Result<CachedSource, PointCloudError> {
        let io = |source| PointCloudError::Io {
            path: path.to_path_buf(),
            source,
        };
        let bad = |reason: &str| PointCloudError::NotLas {
            path: path.to_path_buf(),
            reason: format!("not a vizdeck octree cache: {reason}"),
        };
        let file = std::fs::File::open(path).map_err(io)?;
        let len = file.metadata().map_err(io)?.len();
        if len < 24 + MAGIC.len() as u64 {
            return Err(bad("too short"));
        }
        let mut tail = [0u8; 24];
        file.read_exact_at(&mut tail, len - 24).map_err(io)?;
        if &tail[16..] != MAGIC {
            return Err(bad("no footer of this version"));
        }
        let table_at = u64::from_le_bytes(tail[0..8].try_into().unwrap_or_default());
        let json_at = u64::from_le_bytes(tail[8..16].try_into().unwrap_or_default());
        if !(table_at <= json_at && json_at <= len - 24) {
            return Err(bad("footer offsets out of range"));
        }
        let mut json = vec![0u8; (len - 24 - json_at) as usize];
        file.read_exact_at(&mut json, json_at).map_err(io)?;
        let footer: Footer = serde_json::from_slice(&json).map_err(|e| bad(&e.to_string()))?;
        let entry = std::mem::size_of::<TableEntry>() as u64;
        if (json_at - table_at) % entry != 0 {
            return Err(bad("node table size"));
        }
        let mut table = vec![TableEntry::default(); ((json_at - table_at) / entry) as usize];
        file.read_exact_at(bytemuck::cast_slice_mut(&mut table), table_at)
            .map_err(io)?;
        let mut nodes = Vec::with_capacity(table.len());
        let mut offsets = Vec::with_capacity(table.len());
        let grid = f64::from(footer.spacing_grid.max(1));
        for e in &table {
            if e.offset + e.points * RECORD as u64 > table_at {
                return Err(bad("a node's data lies outside the data region"));
            }
            nodes.push(NodeMeta {
                level: e.level,
                cell: e.cell,
                min: e.min,
                max: e.min.map(|v| v + e.side),
                points: e.points,
                spacing: e.side / grid,
                parent: None,
                children: Vec::new(),
            });
            offsets.push(e.offset);
        }
        let hierarchy = Hierarchy::from_cells(nodes);
        let kind: &'static str = match footer.kind.as_str() {
            "LAS" => "LAS",
            "LAZ" => "LAZ",
            "PLY" => "PLY",
            _ => "file",
        };
        Ok(CachedSource {
            file,
            hierarchy,
            offsets,
            info: SourceInfo {
                name: footer.name,
                kind,
                scale: footer.scale,
                has_color: footer.has_color,
                has_gps_time: footer.has_gps_time,
                intensity_max: footer.intensity_max,
                warning: footer.warning,
                decode_rate: footer.decode_rate,
                build_rate: footer.build_rate,
                bounds: footer.bounds,
                bounds_from: "points",
            },
            fingerprint: footer.fingerprint,
            path: path.to_path_buf(),
        })
    }
}

impl NodeSource for CachedSource {
    fn hierarchy(&self) -> &Hierarchy {
        &self.hierarchy
    }

    fn info(&self) -> &SourceInfo {
        &self.info
    }

    fn load(&self, node: u32) -> Result<NodeData, PointCloudError> {
        let (Some(meta), Some(&offset)) = (
            self.hierarchy.nodes.get(node as usize),
            self.offsets.get(node as usize),
        ) else {
            return Ok(NodeData::default());
        };
        let mut records = vec![Record::default(); meta.points as usize];
        self.file
            .read_exact_at(bytemuck::cast_slice_mut(&mut records), offset)
            .map_err(|source| PointCloudError::Io {
                path: self.path.clone(),
                source,
            })?;
        let mut d = NodeData {
            origin: meta.min,
            gps_time: self.info.has_gps_time.then(Vec::new),
            ..NodeData::default()
        };
        for r in &records {
            d.push(r.xyz, r.word, r.rgba);
            if let Some(g) = &mut d.gps_time {
                g.push(r.gps_time);
            }
        }
        Ok(d)
    }
}

#[cfg(test)]
mod progress_tests {
    use super::Progress;
    use std::sync::atomic::Ordering;

    #[test]
    fn indexing_progress_reads_as_worked_by_hand() {
        let p = Progress::default();
        p.decoded.store(2_000_000, Ordering::Relaxed);
        p.expected.store(8_000_000, Ordering::Relaxed);
        // Decoding is the first half: a quarter decoded is 1/8 of the whole; 2 s for 1/8 leaves
        // 14 s; 2 M points in 2 s.
        let (e, text) = p.describe(2.0);
        assert_eq!(e.fraction, 0.125);
        assert_eq!(e.eta_s, Some(14.0));
        assert_eq!(e.per_s, Some(1e6));
        assert_eq!(
            text,
            "decoding 2.00 M of 8.00 M points · 12 % · 1.00 M points/s · 0:14 left"
        );
        // Decoded; 1 of 4 chunks indexed: 1/2 + 1/8 = 5/8 in 10 s leaves 6 s.
        p.decoded.store(8_000_000, Ordering::Relaxed);
        p.chunks.store(4, Ordering::Relaxed);
        p.chunks_done.store(1, Ordering::Relaxed);
        let (e, text) = p.describe(10.0);
        assert_eq!(e.fraction, 0.625);
        assert_eq!(e.eta_s, Some(6.0));
        assert_eq!(e.per_s, None);
        assert_eq!(text, "indexing chunk 2 of 4 · 62 % · 0:06 left");
    }
}
