//! Replays the committed fuzz corpus (`fuzz/corpus/<target>/`) through the same checks the fuzz
//! targets run (`vizdeck::fuzzing`), so every input the fuzzers kept, crashes that were fixed
//! included, is a regression test in plain `cargo test`. See docs/development.md, "Fuzzing".

use std::path::{Path, PathBuf};

/// A `vizdeck::fuzzing` check: runs a loader on the bytes and panics on a broken invariant.
type Check = fn(&[u8]);

/// Each fuzz target and the check it runs.
const TARGETS: &[(&str, Check)] = &[
    ("audio_file", vizdeck::fuzzing::audio_file),
    ("wav_header", vizdeck::fuzzing::wav_header),
    ("series_csv", vizdeck::fuzzing::series_csv),
    ("stats_csv", vizdeck::fuzzing::stats_csv),
    // Series payloads and columnar files
    ("parquet_file", vizdeck::fuzzing::parquet_file),
    ("arrow_ipc", vizdeck::fuzzing::arrow_ipc),
    ("series_payload", vizdeck::fuzzing::series_payload),
    // Point clouds.
    ("las_file", vizdeck::fuzzing::las_file),
    ("copc_hierarchy", vizdeck::fuzzing::copc_hierarchy),
    ("ply_file", vizdeck::fuzzing::ply_file),
];

fn corpus_files(target: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus")
        .join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("corpus {}: {e}", dir.display()))
        .map(|e| e.expect("corpus entry").path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
}

fn replay(target: &str, check: Check) {
    let files = corpus_files(target);
    assert!(!files.is_empty(), "the corpus of {target} is empty");
    let mut failed = Vec::new();
    for f in &files {
        let bytes = std::fs::read(f).unwrap();
        if std::panic::catch_unwind(|| check(&bytes)).is_err() {
            failed.push(f.display().to_string());
        }
    }
    assert!(
        failed.is_empty(),
        "{target}: {} of {} corpus files fail (the panic messages are above):\n{}",
        failed.len(),
        files.len(),
        failed.join("\n")
    );
    eprintln!("{target}: {} corpus files pass", files.len());
}

#[test]
fn every_target_has_a_corpus_and_a_test() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/fuzz_targets");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| {
            e.unwrap()
                .path()
                .file_stem()
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    names.sort();
    let mut ours: Vec<String> = TARGETS.iter().map(|(n, _)| n.to_string()).collect();
    ours.sort();
    assert_eq!(names, ours, "fuzz targets and the replayed corpora differ");
}

#[test]
fn audio_file_corpus() {
    replay(TARGETS[0].0, TARGETS[0].1);
}

#[test]
fn wav_header_corpus() {
    replay(TARGETS[1].0, TARGETS[1].1);
}

#[test]
fn series_csv_corpus() {
    replay(TARGETS[2].0, TARGETS[2].1);
}

#[test]
fn stats_csv_corpus() {
    replay(TARGETS[3].0, TARGETS[3].1);
}

// Point clouds.

/// The replayed check of `target`.
fn check_of(target: &str) -> Check {
    TARGETS
        .iter()
        .find(|(n, _)| *n == target)
        .map(|&(_, c)| c)
        .unwrap_or_else(|| panic!("no target {target}"))
}

#[test]
fn las_file_corpus() {
    replay("las_file", check_of("las_file"));
}

#[test]
fn copc_hierarchy_corpus() {
    replay("copc_hierarchy", check_of("copc_hierarchy"));
}

#[test]
fn ply_file_corpus() {
    replay("ply_file", check_of("ply_file"));
}

/// The point-cloud byte entry points are the path loaders' own code: on every corpus file the
/// path loader gives the same result (LAS/LAZ header and points, COPC nodes, PLY records).
#[test]
fn point_cloud_byte_and_path_loaders_agree_on_the_corpus() {
    use vizdeck::pointcloud::copc::CopcFile;
    use vizdeck::pointcloud::index::Progress;
    use vizdeck::pointcloud::{LasFile, ply};
    let batches = |f: Result<LasFile, vizdeck::pointcloud::PointCloudError>| -> String {
        let mut f = match f {
            Ok(f) => f,
            Err(e) => return e.to_string(),
        };
        let mut out = format!("{:?}", f.info());
        for _ in 0..64 {
            match f.next_batch(4096) {
                Ok(Some(b)) => out += &format!("{b:?}"),
                Ok(None) => break,
                Err(e) => {
                    out += &e.to_string();
                    break;
                }
            }
        }
        out
    };
    for f in corpus_files("las_file") {
        let bytes = std::fs::read(&f).unwrap();
        let t = TempFile::new("cloud.las", &bytes);
        let by_path = batches(LasFile::open(&t.0));
        let cursor = std::io::Cursor::new(bytes.clone());
        let by_bytes = batches(LasFile::from_reader(cursor, &t.0, false));
        assert_eq!(by_path, by_bytes, "{}", f.display());
        let nodes = |c: Result<CopcFile, vizdeck::pointcloud::PointCloudError>| match c {
            Ok(c) => format!("{:?}", c.nodes()),
            Err(e) => e.to_string(),
        };
        let cursor = Box::new(std::io::Cursor::new(bytes.clone()));
        assert_eq!(
            nodes(CopcFile::open(&t.0)),
            nodes(CopcFile::from_reader(cursor, bytes.len() as u64, &t.0)),
            "{}",
            f.display()
        );
    }
    for f in corpus_files("ply_file") {
        let bytes = std::fs::read(&f).unwrap();
        let t = TempFile::new("cloud.ply", &bytes);
        let run = |by_path: bool| -> String {
            let p = std::sync::Arc::new(Progress::default());
            let mut records = Vec::new();
            let mut sink = |r: &[vizdeck::pointcloud::index::Record]| {
                records.extend_from_slice(r);
                Ok(())
            };
            let r = if by_path {
                ply::decode(&t.0, &p, &mut sink)
            } else {
                ply::decode_from(&bytes[..], &t.0, &p, &mut sink)
            };
            let count = if by_path {
                ply::vertex_count(&t.0)
            } else {
                ply::vertex_count_from(&bytes[..], &t.0)
            };
            format!(
                "{:?} {:?} {records:?}",
                r.map(|i| format!("{i:?}")).map_err(|e| e.to_string()),
                count.map_err(|e| e.to_string())
            )
        };
        assert_eq!(run(true), run(false), "{}", f.display());
    }
}

/// A file in the temp dir holding `bytes`, removed on drop.
struct TempFile(PathBuf);

impl TempFile {
    fn new(name: &str, bytes: &[u8]) -> TempFile {
        let path =
            std::env::temp_dir().join(format!("vizdeck-fuzz-corpus-{}-{name}", std::process::id()));
        std::fs::write(&path, bytes).unwrap();
        TempFile(path)
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Everything a CSV series source delivered: per series its samples (bits, so NaN compares),
/// then the warning, the late error, the counters.
fn drain_all(mut source: vizdeck::series::SeriesSource) -> String {
    let mut store = vizdeck::series::Store::new(vizdeck::series::DEFAULT_CAP_SAMPLES);
    let start = std::time::Instant::now();
    loop {
        source.drain_into(&mut store);
        if source.is_finished() {
            break;
        }
        assert!(
            start.elapsed().as_secs() < 20,
            "the CSV source never finished"
        );
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    let mut out = String::new();
    for name in source.names() {
        let s = store.get(name).unwrap();
        let samples: Vec<(u64, u32)> = s.iter().map(|(t, v)| (t.to_bits(), v.to_bits())).collect();
        out += &format!("{name}: {samples:?} ooo {}\n", s.out_of_order());
    }
    out += &format!(
        "{:?} {:?} {:?} {} {} {} {:?}",
        source.warning(),
        source.error(),
        source.clamp_note(),
        source.rows_skipped(),
        source.values_clamped(),
        source.rows_sorted(),
        source.time_unit()
    );
    out
}

/// The byte entry points the fuzzers use are the path loaders' own code: on every corpus file
/// both give the same result (messages name the path in both).
#[test]
fn byte_and_path_loaders_agree_on_the_corpus() {
    use vizdeck::audio::file::{decode_bytes, decode_file};
    use vizdeck::series::{open_csv_bytes, open_csv_with};
    use vizdeck::stats::Capture;
    for f in corpus_files("audio_file") {
        let bytes = std::fs::read(&f).unwrap();
        let ext = f.extension().and_then(|e| e.to_str()).unwrap_or("bin");
        let t = TempFile::new(&format!("audio.{ext}"), &bytes);
        let by_path = decode_file(&t.0).map_err(|e| e.to_string());
        let by_bytes = decode_bytes(&bytes, &t.0, Some(ext)).map_err(|e| e.to_string());
        // Debug text, so that NaN samples (float files) compare equal.
        assert_eq!(
            format!("{by_path:?}"),
            format!("{by_bytes:?}"),
            "{}",
            f.display()
        );
    }
    for f in corpus_files("stats_csv") {
        let bytes = std::fs::read(&f).unwrap();
        let t = TempFile::new("stats.csv", &bytes);
        let by_path = Capture::read(&t.0).map_err(|e| e.to_string());
        let by_bytes = Capture::parse(&bytes[..], &t.0).map_err(|e| e.to_string());
        assert_eq!(by_path, by_bytes, "{}", f.display());
    }
    for f in corpus_files("series_csv") {
        let bytes = std::fs::read(&f).unwrap();
        let t = TempFile::new("series.csv", &bytes);
        let name = t.0.display().to_string();
        let by_path = open_csv_with(&t.0, false)
            .map(drain_all)
            .map_err(|e| e.to_string());
        let by_bytes = open_csv_bytes(&bytes, &name)
            .map(drain_all)
            .map_err(|e| e.to_string());
        assert_eq!(by_path, by_bytes, "{}", f.display());
    }
}

// Series payloads and columnar files

#[test]
fn parquet_file_corpus() {
    replay("parquet_file", vizdeck::fuzzing::parquet_file);
}

#[test]
fn arrow_ipc_corpus() {
    replay("arrow_ipc", vizdeck::fuzzing::arrow_ipc);
}

#[test]
fn series_payload_corpus() {
    replay("series_payload", vizdeck::fuzzing::series_payload);
}

/// `open_columnar_bytes` (the fuzzers') and `open_columnar` (the app's, on a file and its
/// thread) give the same result on every columnar corpus file that starts as a file would.
#[test]
fn columnar_byte_and_path_loaders_agree_on_the_corpus() {
    use vizdeck::series::open_columnar_bytes;
    use vizdeck::series::source::open_columnar;
    for target in ["parquet_file", "arrow_ipc"] {
        for f in corpus_files(target) {
            let bytes = std::fs::read(&f).unwrap();
            if !(bytes.starts_with(b"PAR1")
                || bytes.starts_with(b"ARROW1")
                || bytes.starts_with(&[0xFF; 4]))
            {
                continue;
            }
            let t = TempFile::new(&format!("{target}.bin"), &bytes);
            let name = t.0.display().to_string();
            let by_path = open_columnar(&t.0)
                .map(drain_all)
                .map_err(|e| e.to_string());
            let by_bytes = open_columnar_bytes(&bytes, &name)
                .map(drain_all)
                .map_err(|e| e.to_string());
            assert_eq!(by_path, by_bytes, "{}", f.display());
        }
    }
}
