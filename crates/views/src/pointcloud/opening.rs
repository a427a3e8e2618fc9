//! Opening a cloud: a synthetic cloud or a COPC file at once, a LAS/LAZ/PLY file's index and a
//! remote COPC file's hierarchy on `vizdeck-pointcloud-index` ([`Opened`]), and the octree cache
//! it was served from.

use std::path::PathBuf;
use std::sync::Arc;

use super::CloudSource;
use super::stream::Stream;
use super::{ClassCounts, Phase};
use crate::SceneError;
use vizdeck_pointcloud::index::{CachedSource, IndexOptions, Progress};
use vizdeck_pointcloud::source::NodeSource;
use vizdeck_pointcloud::{PointCloudError, copc::CopcSource, synthetic::Synthetic};

/// A cloud opened off the frame thread: the source, and the cache or remote file behind it.
pub(super) struct Opened {
    pub(super) source: Arc<dyn NodeSource>,
    pub(super) cache: Option<CacheUse>,
    pub(super) http: Option<Arc<vizdeck_pointcloud::http::HttpFile>>,
    /// The file's class counts, where indexing counted them.
    pub(super) classes: Option<ClassCounts>,
}

impl Opened {
    /// A LAS/LAZ/PLY file's cached octree (`hit`: the cache was there).
    fn cached(source: CachedSource, hit: bool, classes: Option<ClassCounts>) -> Opened {
        let cache = CacheUse {
            path: source.path.clone(),
            hit,
        };
        Opened {
            source: Arc::new(source),
            cache: Some(cache),
            http: None,
            classes,
        }
    }

    /// A COPC file over HTTP(S).
    fn remote(url: &str) -> Result<Opened, PointCloudError> {
        let file =
            vizdeck_pointcloud::http::HttpFile::open(url, vizdeck_pointcloud::http::CACHE_BYTES)?;
        let s = CopcSource::open_origin(vizdeck_pointcloud::copc::Origin::Http(file.clone()))
            .map_err(|e| match e {
                PointCloudError::NotLas { .. } => PointCloudError::Http {
                    url: url.to_string(),
                    reason: format!(
                        "only COPC files (.copc.laz) stream over HTTP; this one is not ({e})"
                    ),
                },
                e => e,
            })?;
        Ok(Opened {
            source: Arc::new(s),
            cache: None,
            http: Some(file),
            classes: None,
        })
    }
}

/// The octree cache a file was served from, and whether it existed (else it was built).
#[derive(Clone, Debug)]
pub(super) struct CacheUse {
    pub(super) path: PathBuf,
    pub(super) hit: bool,
}

/// Opens `source`: a synthetic cloud or a local COPC file at once (header and hierarchy), a
/// LAS/LAZ or PLY file's header at once (so a bad file fails here) and its index on a thread,
/// a COPC URL on a thread (network I/O never runs on the frame thread).
pub(super) fn open(
    source: &CloudSource,
    seed: u64,
    cache_dir: &Option<PathBuf>,
) -> Result<Phase, SceneError> {
    match source {
        CloudSource::Synthetic(n) => {
            let s = Synthetic::new(*n, seed).map_err(SceneError::Other)?;
            Ok(Phase::Ready(Box::new(Stream::new(Arc::new(s)))))
        }
        CloudSource::Url(url) => {
            // Network I/O: off the frame thread, like indexing.
            let (tx, rx) = std::sync::mpsc::channel();
            let url = url.clone();
            std::thread::Builder::new()
                .name("vizdeck-pointcloud-index".into())
                .spawn(move || {
                    let _ = tx.send(Opened::remote(&url));
                })
                .map_err(|e| {
                    SceneError::Other(format!("point cloud: cannot start opening: {e}"))
                })?;
            Ok(Phase::Indexing {
                progress: Arc::new(Progress::default()),
                started: std::time::Instant::now(),
                done: rx,
            })
        }
        CloudSource::File(path) => {
            let ply = is_ply(path);
            if ply {
                vizdeck_pointcloud::ply::vertex_count(path)
                    .map_err(|e| SceneError::Other(e.to_string()))?;
            } else {
                // One header read decides: COPC (read node by node, nothing indexed) or not.
                let file = vizdeck_pointcloud::LasFile::open(path)
                    .map_err(|e| SceneError::Other(e.to_string()))?;
                if file.info().copc {
                    drop(file);
                    let s = CopcSource::open(path).map_err(|e| SceneError::Other(e.to_string()))?;
                    return Ok(Phase::Ready(Box::new(Stream::new(Arc::new(s)))));
                }
                if file.info().header_points == 0 {
                    return Err(SceneError::Other(
                        PointCloudError::NoPoints { path: path.clone() }.to_string(),
                    ));
                }
            }
            let progress = Arc::new(Progress::default());
            let (tx, rx) = std::sync::mpsc::channel();
            let (p, path) = (progress.clone(), path.clone());
            let opts = IndexOptions::new(
                cache_dir
                    .clone()
                    .unwrap_or_else(vizdeck_pointcloud::index::default_cache_dir),
            );
            std::thread::Builder::new()
                .name("vizdeck-pointcloud-index".into())
                .spawn(move || {
                    let _ = tx.send(index_file(&path, ply, &opts, &p));
                })
                .map_err(|e| {
                    SceneError::Other(format!("point cloud: cannot start indexing: {e}"))
                })?;
            Ok(Phase::Indexing {
                progress,
                started: std::time::Instant::now(),
                done: rx,
            })
        }
    }
}

/// Opens a LAS/LAZ/PLY file's cached octree, or indexes the file (counting its points per
/// class as they pass, kept beside the cache). Caches of files that are gone are dropped
/// first. Runs on `vizdeck-pointcloud-index`.
fn index_file(
    path: &std::path::Path,
    ply: bool,
    opts: &IndexOptions,
    p: &Arc<Progress>,
) -> Result<Opened, PointCloudError> {
    let dropped = vizdeck_pointcloud::cache::drop_orphans(&opts.cache_dir);
    if dropped.bytes > 0 {
        log::info!(
            "point cloud: dropped {} cache(s) of files that are gone, {} freed",
            dropped.caches,
            vizdeck_pointcloud::cache::human_bytes(dropped.bytes)
        );
    }
    let mut counts = [0u64; 256];
    let (source, hit) = vizdeck_pointcloud::index::open_or_index(path, opts, p, |sink| {
        let mut counting = |records: &[vizdeck_pointcloud::index::Record]| {
            for r in records {
                counts[(r.word & 0xff) as usize] += 1;
            }
            sink(records)
        };
        if ply {
            vizdeck_pointcloud::ply::decode(path, p, &mut counting)
        } else {
            vizdeck_pointcloud::decode::decode_las(path, p, &mut counting)
        }
    })?;
    let classes = if hit {
        vizdeck_pointcloud::cache::read_classes(&source.path).map(|c| ClassCounts::of_file(&c))
    } else {
        if let Err(e) = vizdeck_pointcloud::cache::write_classes(&source.path, &counts) {
            log::warn!(
                "point cloud: {}: class counts not kept: {e}",
                source.path.display()
            );
        }
        let pairs: Vec<(u8, u64)> = (0..=255u8)
            .map(|c| (c, counts[usize::from(c)]))
            .filter(|&(_, n)| n > 0)
            .collect();
        Some(ClassCounts::of_file(&pairs))
    };
    Ok(Opened::cached(source, hit, classes))
}

/// Whether `path` names a PLY file (by its extension).
fn is_ply(path: &std::path::Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("ply"))
}
