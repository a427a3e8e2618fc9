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
//!
//! Files: `mod.rs` the record, the options and [`open_or_index`]; `build.rs` the indexing
//! pipeline (steps 1 to 7); `cached.rs` the cache file's name, footer and node table, and
//! [`CachedSource`]; `progress.rs` how far indexing has come.

mod build;
mod cached;
mod progress;

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

use build::{index_into, tempdir};
pub use cached::CachedSource;
use cached::{Fingerprint, cache_file, fingerprint};
pub use progress::Progress;

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
pub(crate) const RECORD: usize = std::mem::size_of::<Record>();
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
