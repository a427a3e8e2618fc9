//! Rows per second from a Parquet file into vizdeck's store, against pyarrow.
//!
//! Writes a Parquet file (snappy; a `timestamp[ns, UTC]` column and four float64 random walks,
//! `GROUP` rows per row group) to the temp directory, then:
//! - vizdeck: opens it as a series source ([`SeriesSource`], [`SeriesSelection::Columnar`]) and
//!   drains it into a [`Store`] until the source is finished: decode (one row group at a time on
//!   the producer thread), conversion to ns times and f32 values, the ring, and the store's
//!   ingest on this thread; best of `REPS` runs, wall time from open to finished;
//! - arrow-rs alone: the same file decoded to Arrow record batches on one thread (the decode
//!   share of the above);
//! - pyarrow: `pyarrow.parquet.read_table` of the same file, with `use_threads=False` and with
//!   threads (best of `REPS`), run by `$VIZDECK_PYTHON`, else `/usr/bin/python3` if it has
//!   pyarrow, else `target/pyarrow-venv/bin/python` (make it with
//!   `python3 -m venv target/pyarrow-venv && target/pyarrow-venv/bin/pip install pyarrow`).
//!
//! pyarrow's figure is decode to an Arrow table only; vizdeck's also converts and stores.
//! Prints a table: rows, MB, rows/s of each, and the ratio of vizdeck to each.
//!
//! Usage: `cargo run --release -p vizdeck-lab --example parquet_rows -- [ROWS [GROUP [REPS]]]` (default
//! 10,000,000 rows, 1,000,000 rows per row group, 3 reps).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow_array::{ArrayRef, Float64Array, RecordBatch, TimestampNanosecondArray};
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;
use vizdeck::series::{Pacing, SeriesSelection, SeriesSource, Store};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize, default: usize| {
        args.get(i)
            .and_then(|s| s.replace('_', "").parse().ok())
            .unwrap_or(default)
    };
    let rows = arg(0, 10_000_000).max(1);
    let group = arg(1, 1_000_000).max(1);
    let reps = arg(2, 3).max(1);
    let path = std::env::temp_dir().join(format!("vizdeck_parquet_rows_{}.parquet", rows));
    let t = Instant::now();
    write(&path, rows, group);
    let bytes = std::fs::metadata(&path).unwrap().len();
    let mb = bytes as f64 / 1e6;
    eprintln!(
        "wrote {} ({rows} rows, {mb:.1} MB, row groups of {group}) in {:.1} s",
        path.display(),
        t.elapsed().as_secs_f64()
    );

    let runs: Vec<(f64, f64)> = (0..reps).map(|_| read_vizdeck(&path, rows)).collect();
    let vizdeck = runs.iter().map(|r| r.0).fold(f64::INFINITY, f64::min);
    let drain_cpu = runs.iter().map(|r| r.1).fold(f64::INFINITY, f64::min);
    let decode = best(reps, || decode_arrow(&path, rows));
    let py = pyarrow(&path, rows, reps);

    println!();
    println!(
        "| reader | rows | MB | rows/s | MB/s | vizdeck ÷ it |\n|---|---:|---:|---:|---:|---:|"
    );
    let line = |name: &str, s: f64| {
        println!(
            "| {name} | {rows} | {mb:.1} | {:.2} M | {:.0} | {:.2} |",
            rows as f64 / s / 1e6,
            mb / s,
            s / vizdeck
        );
    };
    line("vizdeck SeriesSource → Store", vizdeck);
    line("arrow-rs decode only, 1 thread", decode);
    match py {
        Ok((one, many, version)) => {
            line(
                &format!("pyarrow {version} read_table, use_threads=False"),
                one,
            );
            line(
                &format!("pyarrow {version} read_table, use_threads=True"),
                many,
            );
        }
        Err(e) => println!("\npyarrow: {e}"),
    }
    println!(
        "\nvizdeck's draining thread (the frame thread in the app: ingest into the store) used \
         {:.1} ns of CPU a row (least of {reps}); the wall time is {:.1} ns a row.",
        drain_cpu * 1e9 / rows as f64,
        vizdeck * 1e9 / rows as f64
    );
    println!(
        "\n(vizdeck ÷ it: its time over vizdeck's, so > 1 means vizdeck is faster; {} cores)",
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    std::fs::remove_file(&path).ok();
}

/// The least of `reps` timings, seconds.
fn best(reps: usize, mut f: impl FnMut() -> f64) -> f64 {
    (0..reps).map(|_| f()).fold(f64::INFINITY, f64::min)
}

/// Writes `rows` rows: `time` (ns, UTC, 1 ms steps from 2024-01-01) and four random walks.
fn write(path: &Path, rows: usize, group: usize) {
    let props = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_max_row_group_row_count(Some(group))
        .build();
    let t0: i64 = 1_704_067_200_000_000_000;
    let mut rng = 0x9E37_79B9_7F4A_7C15u64;
    let mut walk = [0f64; 4];
    let chunk = 1 << 20;
    let mut writer = None;
    let file = std::fs::File::create(path).unwrap();
    let mut file = Some(file);
    let mut start = 0;
    while start < rows {
        let n = chunk.min(rows - start);
        let times: Vec<i64> = (start..start + n)
            .map(|k| t0 + k as i64 * 1_000_000)
            .collect();
        let mut cols: Vec<(String, ArrayRef)> = vec![(
            "time".into(),
            Arc::new(TimestampNanosecondArray::from(times).with_timezone("UTC")),
        )];
        for (c, w) in walk.iter_mut().enumerate() {
            let v: Vec<f64> = (0..n)
                .map(|_| {
                    rng ^= rng << 13;
                    rng ^= rng >> 7;
                    rng ^= rng << 17;
                    *w += (rng >> 11) as f64 / (1u64 << 53) as f64 - 0.5;
                    *w
                })
                .collect();
            cols.push((format!("s{c}"), Arc::new(Float64Array::from(v))));
        }
        let batch = RecordBatch::try_from_iter(cols).unwrap();
        let w = writer.get_or_insert_with(|| {
            ArrowWriter::try_new(file.take().unwrap(), batch.schema(), Some(props.clone())).unwrap()
        });
        w.write(&batch).unwrap();
        start += n;
    }
    writer.unwrap().close().unwrap();
}

/// Seconds from open to finished, draining `path` into a store that holds every row, and the
/// CPU seconds this (draining) thread used meanwhile.
fn read_vizdeck(path: &Path, rows: usize) -> (f64, f64) {
    let mut store = Store::new(rows);
    let t = Instant::now();
    let mut src = SeriesSource::open(&SeriesSelection::Columnar(path.into()), Pacing::WallClock)
        .unwrap_or_else(|e| panic!("{e}"));
    let cpu0 = thread_cpu_s();
    while !src.is_finished() {
        let before = store.points_ingested();
        src.drain_into(&mut store);
        if store.points_ingested() == before {
            std::thread::sleep(Duration::from_micros(50));
        }
    }
    src.drain_into(&mut store);
    let s = t.elapsed().as_secs_f64();
    let cpu = thread_cpu_s() - cpu0;
    assert_eq!(src.error(), None);
    assert_eq!(store.points_ingested(), 4 * rows as u64);
    (s, cpu)
}

/// Seconds to decode `path` into Arrow record batches (all columns) on this thread.
fn decode_arrow(path: &Path, rows: usize) -> f64 {
    let t = Instant::now();
    let file = std::fs::File::open(path).unwrap();
    let reader = ParquetRecordBatchReaderBuilder::try_new(file)
        .unwrap()
        .with_batch_size(64 * 1024)
        .build()
        .unwrap();
    let mut n = 0;
    for b in reader {
        n += b.unwrap().num_rows();
    }
    assert_eq!(n, rows);
    t.elapsed().as_secs_f64()
}

/// A Python with pyarrow: `$VIZDECK_PYTHON`, `/usr/bin/python3`, or the venv under target/.
fn python() -> Option<PathBuf> {
    let has = |p: &Path| {
        Command::new(p)
            .args(["-c", "import pyarrow"])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/pyarrow-venv/bin/python");
    std::env::var_os("VIZDECK_PYTHON")
        .map(PathBuf::from)
        .into_iter()
        .chain([PathBuf::from("/usr/bin/python3"), venv])
        .find(|p| has(p))
}

/// pyarrow's best `read_table` seconds without and with threads, and its version.
fn pyarrow(path: &Path, rows: usize, reps: usize) -> Result<(f64, f64, String), String> {
    let py = python().ok_or(
        "not found (VIZDECK_PYTHON, /usr/bin/python3, target/pyarrow-venv): \
         python3 -m venv target/pyarrow-venv && target/pyarrow-venv/bin/pip install pyarrow",
    )?;
    let script = format!(
        "import sys, time, pyarrow, pyarrow.parquet as pq\n\
         p = sys.argv[1]\n\
         for threads in (False, True):\n\
         \x20   best = 1e9\n\
         \x20   for _ in range({reps}):\n\
         \x20       t = time.perf_counter()\n\
         \x20       tab = pq.read_table(p, use_threads=threads)\n\
         \x20       best = min(best, time.perf_counter() - t)\n\
         \x20       assert tab.num_rows == {rows}\n\
         \x20       del tab\n\
         \x20   print(best)\n\
         print(pyarrow.__version__)\n"
    );
    let out = Command::new(&py)
        .arg("-c")
        .arg(script)
        .arg(path)
        .output()
        .map_err(|e| format!("{}: {e}", py.display()))?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines = text.lines();
    let mut num = || -> Result<f64, String> {
        lines
            .next()
            .and_then(|l| l.trim().parse().ok())
            .ok_or_else(|| format!("unexpected output: {text}"))
    };
    let one = num()?;
    let many = num()?;
    let version = text.lines().nth(2).unwrap_or("?").trim().to_string();
    Ok((one, many, version))
}

/// CPU time this thread has used, seconds (`CLOCK_THREAD_CPUTIME_ID`).
fn thread_cpu_s() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the call.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}
