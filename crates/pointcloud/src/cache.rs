//! The octree cache directory seen from the user's side: what it holds and how large it is,
//! clearing one file's cache or all of them, and dropping the caches of files that are gone.
//! The caches themselves are written and read by [`super::index`] (one `<name>-<hash>.vzoct`
//! per indexed file, its footer naming the file it was made from); beside a cache lies its
//! class counts (`….vzoct.classes.json`, [`write_classes`]), counted while the file was
//! indexed, so the class legend lists the classes the file holds without reading it again.
//!
//! Everything here does file I/O: the scene calls it on its own threads, never in the frame.

use std::path::{Path, PathBuf};

use super::index::CachedSource;

/// Extension of a cache file.
pub(crate) const CACHE_EXT: &str = "vzoct";
/// Suffix of a cache's class counts (after the cache's own name).
const CLASSES_SUFFIX: &str = ".classes.json";

/// One cache in the directory.
#[derive(Clone, Debug, PartialEq)]
pub struct CacheEntry {
    /// The cache file.
    pub path: PathBuf,
    /// Bytes on disk: the cache and its class counts.
    pub bytes: u64,
    /// The file it was made from (canonical path, as its footer says); `None` when the cache
    /// cannot be read (damaged, or of another version).
    pub source: Option<PathBuf>,
}

impl CacheEntry {
    /// Whether the file the cache was made from no longer exists (a cache that cannot be read
    /// is not counted as orphaned: another version of vizdeck may use it).
    pub fn orphaned(&self) -> bool {
        self.source.as_ref().is_some_and(|s| !s.exists())
    }
}

/// What the cache directory holds.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CacheSummary {
    /// The directory.
    pub dir: PathBuf,
    /// Its caches, by path.
    pub entries: Vec<CacheEntry>,
    /// Bytes of everything else vizdeck left there (work folders of runs that ended early).
    pub other_bytes: u64,
}

impl CacheSummary {
    /// Bytes of every cache and work folder in the directory.
    pub fn total_bytes(&self) -> u64 {
        self.entries.iter().map(|e| e.bytes).sum::<u64>() + self.other_bytes
    }

    /// The entry of cache file `path`, if listed.
    pub fn entry(&self, path: &Path) -> Option<&CacheEntry> {
        self.entries.iter().find(|e| e.path == path)
    }
}

/// The class counts file of cache `cache`.
pub fn classes_path(cache: &Path) -> PathBuf {
    let mut s = cache.as_os_str().to_owned();
    s.push(CLASSES_SUFFIX);
    PathBuf::from(s)
}

/// Bytes of a file or, recursively, a folder (0 for what cannot be read).
fn bytes_of(path: &Path) -> u64 {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return 0;
    };
    if !meta.is_dir() {
        return meta.len();
    }
    std::fs::read_dir(path).map_or(0, |rd| {
        rd.flatten().map(|e| bytes_of(&e.path())).sum::<u64>()
    })
}

/// A work folder (`.work-<pid>-<n>`) of an indexing run, and the process that made it.
fn work_pid(name: &str) -> Option<u32> {
    name.strip_prefix(".work-")?.split('-').next()?.parse().ok()
}

/// Whether process `pid` still runs (Linux: `/proc/<pid>`; elsewhere it is assumed to, so a
/// work folder is never taken from a running indexer).
fn process_alive(pid: u32) -> bool {
    if pid == std::process::id() {
        return true;
    }
    if cfg!(target_os = "linux") {
        Path::new("/proc").join(pid.to_string()).exists()
    } else {
        true
    }
}

/// Lists the caches in `dir` (an absent directory holds none). Each cache's footer is read for
/// the file it was made from.
pub fn list(dir: &Path) -> CacheSummary {
    let mut s = CacheSummary {
        dir: dir.to_path_buf(),
        ..CacheSummary::default()
    };
    let Ok(rd) = std::fs::read_dir(dir) else {
        return s;
    };
    for e in rd.flatten() {
        let path = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if path.extension().is_some_and(|x| x == CACHE_EXT) {
            let source = CachedSource::open(&path)
                .ok()
                .map(|c| PathBuf::from(c.source_path()));
            s.entries.push(CacheEntry {
                bytes: bytes_of(&path) + bytes_of(&classes_path(&path)),
                path,
                source,
            });
        } else if work_pid(&name).is_some() {
            s.other_bytes += bytes_of(&path);
        }
    }
    s.entries.sort_by(|a, b| a.path.cmp(&b.path));
    s
}

/// Removes cache file `cache` and its class counts; returns the bytes freed. A cache already
/// gone frees nothing.
///
/// # Errors
///
/// The I/O error of a cache that exists and cannot be removed.
pub fn remove(cache: &Path) -> std::io::Result<u64> {
    let bytes = bytes_of(cache) + bytes_of(&classes_path(cache));
    for p in [cache.to_path_buf(), classes_path(cache)] {
        match std::fs::remove_file(&p) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
    }
    Ok(bytes)
}

/// What a clean-up did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Cleared {
    /// Caches removed.
    pub caches: usize,
    /// Bytes freed (caches, class counts, work folders).
    pub bytes: u64,
    /// The first failure, naming the path.
    pub error: Option<String>,
}

impl Cleared {
    fn note(&mut self, path: &Path, r: std::io::Result<u64>) {
        match r {
            Ok(b) => {
                self.caches += 1;
                self.bytes += b;
            }
            Err(e) => {
                self.error
                    .get_or_insert_with(|| format!("{}: cannot remove: {e}", path.display()));
            }
        }
    }
}

/// Removes the caches in `dir` whose file is gone, class counts left without their cache, and
/// work folders of indexing runs that ended without cleaning up (on Linux; elsewhere they are
/// left).
pub fn drop_orphans(dir: &Path) -> Cleared {
    let mut c = Cleared::default();
    for e in list(dir).entries {
        if e.orphaned() {
            c.note(&e.path, remove(&e.path));
        }
    }
    let Ok(rd) = std::fs::read_dir(dir) else {
        return c;
    };
    for e in rd.flatten() {
        let path = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if let Some(cache) = name.strip_suffix(CLASSES_SUFFIX) {
            if !dir.join(cache).exists() {
                let bytes = bytes_of(&path);
                if std::fs::remove_file(&path).is_ok() {
                    c.bytes += bytes;
                }
            }
        } else if let Some(pid) = work_pid(&name)
            && !process_alive(pid)
        {
            let bytes = bytes_of(&path);
            if std::fs::remove_dir_all(&path).is_ok() {
                c.bytes += bytes;
            }
        }
    }
    c
}

/// Removes every cache in `dir` (and what [`drop_orphans`] drops).
pub fn clear_all(dir: &Path) -> Cleared {
    let mut c = drop_orphans(dir);
    for e in list(dir).entries {
        c.note(&e.path, remove(&e.path));
    }
    c
}

/// Class counts as kept beside a cache: the cache's length (so counts of an older cache under
/// the same name are not taken for a new one's) and the points per class.
#[derive(serde::Serialize, serde::Deserialize)]
struct ClassFile {
    cache_bytes: u64,
    /// (class, points), classes with points only, by class.
    classes: Vec<(u8, u64)>,
}

/// Keeps `counts` (points per ASPRS class, index = class) beside cache `cache`.
///
/// # Errors
///
/// The I/O error writing the file.
pub fn write_classes(cache: &Path, counts: &[u64; 256]) -> std::io::Result<()> {
    let f = ClassFile {
        cache_bytes: std::fs::metadata(cache)?.len(),
        classes: (0..=255u8)
            .filter(|&c| counts[usize::from(c)] > 0)
            .map(|c| (c, counts[usize::from(c)]))
            .collect(),
    };
    let json = serde_json::to_vec(&f).map_err(std::io::Error::other)?;
    let tmp = classes_path(cache).with_extension("tmp");
    std::fs::write(&tmp, json)?;
    std::fs::rename(&tmp, classes_path(cache))
}

/// The class counts kept beside cache `cache` ((class, points), by class), when they are
/// there and belong to it.
pub fn read_classes(cache: &Path) -> Option<Vec<(u8, u64)>> {
    let f: ClassFile = serde_json::from_slice(&std::fs::read(classes_path(cache)).ok()?).ok()?;
    let len = std::fs::metadata(cache).ok()?.len();
    (f.cache_bytes == len).then_some(f.classes)
}

/// `bytes` for people: B, KiB, MiB or GiB with one decimal.
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KiB", "MiB", "GiB"];
    let mut v = bytes as f64;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{bytes} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_read_as_people_say_them() {
        assert_eq!(human_bytes(512), "512 B");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(human_bytes(1_288_490_189), "1.2 GiB");
    }

    #[test]
    fn work_folders_name_their_process() {
        assert_eq!(work_pid(".work-1234-7"), Some(1234));
        assert_eq!(work_pid("a.vzoct"), None);
        assert!(process_alive(std::process::id()));
    }
}
