//! The out-of-core octree index of a LAS/LAZ file and its cache (`pointcloud::index`), on the
//! real `autzen_trim.laz` (110,000 points) cut into many small chunks indexed by two workers:
//! every point of the file (read here with the `las` crate) is in exactly one node, bit for bit;
//! each node's points lie in its cube; inner nodes hold at most one point per cell of their
//! subsample grid (the chunk roots' and the upper levels' subsamples too); children are octants
//! of their parent; a second open comes from the cache without decoding; a changed file is
//! indexed again.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use vizdeck::pointcloud::index::{IndexOptions, Progress, open_or_index};
use vizdeck::pointcloud::octree::OctreeConfig;
use vizdeck::pointcloud::source::NodeSource;

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("vizdeck-index-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn autzen() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/pointcloud/autzen_trim.laz")
}

fn options(cache: &Path) -> IndexOptions {
    IndexOptions {
        cache_dir: cache.to_path_buf(),
        threads: 2,
        chunk_points: 8_000,
        octree: OctreeConfig {
            max_leaf_points: 2_000,
            sample_grid: 32,
            max_depth: 16,
        },
    }
}

/// Opens (or indexes) `file`; returns the source, whether it came from the cache, and whether
/// the file was decoded.
fn open(
    file: &Path,
    opts: &IndexOptions,
) -> (vizdeck::pointcloud::index::CachedSource, bool, bool) {
    let progress = Arc::new(Progress::default());
    let mut decoded = false;
    let p = progress.clone();
    let (source, hit) = open_or_index(file, opts, &progress, |sink| {
        decoded = true;
        vizdeck::pointcloud::decode::decode_las(file, &p, sink)
    })
    .unwrap_or_else(|e| panic!("{e}"));
    (source, hit, decoded)
}

#[test]
fn the_index_holds_every_point_once_in_its_place() {
    let cache = temp("every");
    let opts = options(&cache);
    let (source, hit, decoded) = open(&autzen(), &opts);
    assert!(!hit && decoded);
    let h = source.hierarchy();
    // The file's points, read with the las crate.
    let d = las::Reader::from_path(autzen())
        .unwrap()
        .read_all()
        .unwrap();
    let mut want: Vec<[u64; 3]> = d
        .x()
        .zip(d.y())
        .zip(d.z())
        .map(|((x, y), z)| [x.to_bits(), y.to_bits(), z.to_bits()])
        .collect();
    want.sort_unstable();
    let mut got = Vec::new();
    let g = opts.octree.sample_grid as usize;
    let mut inner = 0;
    for (i, n) in h.nodes.iter().enumerate() {
        let data = source.load(i as u32).unwrap();
        assert_eq!(data.len() as u64, n.points);
        let side = n.max[0] - n.min[0];
        for p in &data.xyz {
            for k in 0..3 {
                assert!(
                    p[k] >= n.min[k] - 1e-9 && p[k] <= n.max[k] + 1e-9,
                    "node {} holds {p:?} outside its cube",
                    n.name()
                );
            }
            got.push([p[0].to_bits(), p[1].to_bits(), p[2].to_bits()]);
        }
        if !n.children.is_empty() {
            inner += 1;
            let mut cells = std::collections::HashSet::new();
            for p in &data.xyz {
                let c: [usize; 3] = std::array::from_fn(|k| {
                    (((p[k] - n.min[k]) / side * g as f64) as usize).min(g - 1)
                });
                assert!(
                    cells.insert(c),
                    "inner node {} holds two points in one cell",
                    n.name()
                );
            }
        }
        for &c in &n.children {
            let child = &h.nodes[c as usize];
            assert_eq!(child.level, n.level + 1);
            for k in 0..3 {
                assert_eq!(
                    child.cell[k] / 2,
                    n.cell[k],
                    "{} under {}",
                    child.name(),
                    n.name()
                );
                assert!(child.min[k] >= n.min[k] - 1e-9 && child.max[k] <= n.max[k] + 1e-9);
            }
        }
    }
    got.sort_unstable();
    assert_eq!(got.len(), want.len(), "points in the index");
    assert!(got == want, "the index's points are not the file's");
    assert!(
        inner >= 8,
        "{inner} inner nodes: the chunks' upper levels were not exercised"
    );
    assert!(h.depth() >= 4, "depth {}", h.depth());
    assert_eq!(
        h.nodes.iter().filter(|n| n.parent.is_none()).count(),
        1,
        "one root"
    );
    let info = source.info();
    assert_eq!(info.bounds_from, "points");
    assert!(info.build_rate.is_some() && info.decode_rate.is_some());
}

#[test]
fn a_second_open_comes_from_the_cache_and_a_changed_file_is_indexed_again() {
    let cache = temp("cache");
    let dir = temp("file");
    let file = dir.join("autzen.laz");
    std::fs::copy(autzen(), &file).unwrap();
    let opts = options(&cache);
    let (first, hit, _) = open(&file, &opts);
    assert!(!hit);
    let (second, hit, decoded) = open(&file, &opts);
    assert!(hit && !decoded, "the second open decoded the file again");
    assert_eq!(first.hierarchy(), second.hierarchy());
    assert_eq!(first.load(0).unwrap(), second.load(0).unwrap());
    // The same bytes under a new modification time: indexed again.
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(5);
    std::fs::File::options()
        .write(true)
        .open(&file)
        .unwrap()
        .set_modified(later)
        .unwrap();
    let (_, hit, decoded) = open(&file, &opts);
    assert!(
        !hit && decoded,
        "a changed file was served from the old cache"
    );
    // One cache file per source file, no work files left behind.
    let names: Vec<String> = std::fs::read_dir(&cache)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
    assert!(names[0].ends_with(".vzoct"), "{names:?}");
}

/// Names of the files in `dir`.
fn files_in(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|d| {
            d.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// A LAS whose scale is NaN is refused on decoding, naming the file and the field, and no cache
/// is written (it used to be indexed into a cache whose JSON held `null`, and the error then
/// named the cache).
#[test]
fn a_nan_scale_is_refused_before_any_cache_is_written() {
    let cache = temp("nan-cache");
    let dir = temp("nan-file");
    let mut b = std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/pointcloud/simple.las"),
    )
    .unwrap();
    // LAS header: the y scale factor, f64 at byte 139.
    b[139..147].copy_from_slice(&f64::NAN.to_le_bytes());
    let file = dir.join("nan.las");
    std::fs::write(&file, b).unwrap();
    let progress = Arc::new(Progress::default());
    let p = progress.clone();
    let e = open_or_index(&file, &options(&cache), &progress, |sink| {
        vizdeck::pointcloud::decode::decode_las(&file, &p, sink)
    })
    .err()
    .expect("refused");
    assert_eq!(
        e.to_string(),
        format!(
            "point cloud '{}': the header's y scale factor is NaN (a scale factor must be a finite number above 0)",
            file.display()
        )
    );
    assert!(
        files_in(&cache).iter().all(|n| !n.ends_with(".vzoct")),
        "{:?}",
        files_in(&cache)
    );
}

/// A decoder that hands back non-finite bounds (JSON cannot hold them) gets an error naming the
/// input, and no cache is written.
#[test]
fn non_finite_bounds_are_never_written_to_a_cache() {
    let cache = temp("inf-cache");
    let progress = Arc::new(Progress::default());
    let p = progress.clone();
    let file = autzen();
    let e = open_or_index(&file, &options(&cache), &progress, |sink| {
        let mut info = vizdeck::pointcloud::decode::decode_las(&file, &p, sink)?;
        info.bounds.1[2] = f64::INFINITY;
        Ok(info)
    })
    .err()
    .expect("refused");
    let text = e.to_string();
    assert!(
        text.starts_with(&format!(
            "point cloud '{}': octree cache: not written",
            file.display()
        )),
        "{text}"
    );
    assert!(!text.contains(".vzoct"), "{text}");
    assert!(
        files_in(&cache).iter().all(|n| !n.ends_with(".vzoct")),
        "{:?}",
        files_in(&cache)
    );
}

/// A cache whose footer holds `null` where a number belongs (what a NaN scale used to write) is
/// removed and the file indexed again: the open succeeds, from the file, and the new cache
/// opens.
#[test]
fn a_broken_cache_is_replaced_not_reported() {
    let cache = temp("broken-cache");
    let dir = temp("broken-file");
    let file = dir.join("autzen.laz");
    std::fs::copy(autzen(), &file).unwrap();
    let opts = options(&cache);
    let (first, _, _) = open(&file, &opts);
    let cache_file = first.path.clone();
    drop(first);
    // Footer: JSON, then table offset, JSON offset (u64 each) and the 8-byte magic.
    let bytes = std::fs::read(&cache_file).unwrap();
    let n = bytes.len();
    let table_at = u64::from_le_bytes(bytes[n - 24..n - 16].try_into().unwrap());
    let json_at = u64::from_le_bytes(bytes[n - 16..n - 8].try_into().unwrap()) as usize;
    let mut footer: serde_json::Value = serde_json::from_slice(&bytes[json_at..n - 24]).unwrap();
    footer["scale"] = serde_json::json!([null, null, null]);
    let mut broken = bytes[..json_at].to_vec();
    broken.extend_from_slice(&serde_json::to_vec(&footer).unwrap());
    broken.extend_from_slice(&table_at.to_le_bytes());
    broken.extend_from_slice(&(json_at as u64).to_le_bytes());
    broken.extend_from_slice(&bytes[n - 8..]);
    std::fs::write(&cache_file, &broken).unwrap();
    assert!(
        vizdeck::pointcloud::index::CachedSource::open(&cache_file)
            .err()
            .expect("broken")
            .to_string()
            .contains("invalid type: null")
    );
    let (second, hit, decoded) = open(&file, &opts);
    assert!(!hit && decoded, "the broken cache was not indexed again");
    assert_eq!(second.hierarchy().total_points(), 110_000);
    assert!(vizdeck::pointcloud::index::CachedSource::open(&cache_file).is_ok());
}

/// The index of a LAZ whose header claims 120,000 points but holds 110,000 holds the 110,000
/// points of the true file (none at the origin) and warns naming both counts.
#[test]
fn the_index_of_a_laz_claiming_more_points_holds_what_it_holds() {
    let cache = temp("more-cache");
    let dir = temp("more-file");
    let mut b = std::fs::read(autzen()).unwrap();
    // LAS 1.2: the point count, u32 at header byte 107.
    b[107..111].copy_from_slice(&120_000u32.to_le_bytes());
    let file = dir.join("more.laz");
    std::fs::write(&file, b).unwrap();
    let (source, _, _) = open(&file, &options(&cache));
    assert_eq!(source.hierarchy().total_points(), 110_000);
    let (lo, _) = source.info().bounds;
    // The file's points (las crate, the true file) all lie far from the origin.
    let d = las::Reader::from_path(autzen())
        .unwrap()
        .read_all()
        .unwrap();
    let min_x = d.x().fold(f64::INFINITY, f64::min);
    assert_eq!(lo[0], min_x);
    let w = source.info().warning.clone().expect("a warning");
    assert!(w.contains(&file.display().to_string()), "{w}");
    assert!(w.contains("after 110000 of 120000 points"), "{w}");
}
