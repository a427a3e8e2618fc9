//! Parquet and Arrow IPC files as series sources: files written here with the parquet and arrow
//! writers (snappy and zstd Parquet in row groups of 1000 rows, IPC files and streams in several
//! record batches) stream into the store with exactly the times and values written: timestamps
//! of each unit with and without a time zone, dates, numeric time columns (by name, suffix and
//! magnitude), integer, float, boolean, decimal and dictionary value columns with nulls. Bad
//! files (no numeric column, truncated, text named `.parquet`, a corrupt row group) fail with one
//! line naming the file, never a panic.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use arrow_array::types::Int32Type;
use arrow_array::{
    Array, ArrayRef, BooleanArray, Date32Array, Decimal128Array, DictionaryArray, Float32Array,
    Float64Array, Int32Array, Int64Array, RecordBatch, StringArray, TimestampMicrosecondArray,
    TimestampMillisecondArray, TimestampNanosecondArray, TimestampSecondArray, UInt8Array,
};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;
use vizdeck::series::{Pacing, SeriesSelection, SeriesSource, Store, TimeUnit};

/// A fresh path in the temp directory ending in `.ext`.
fn temp(tag: &str, ext: &str) -> PathBuf {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    std::env::temp_dir().join(format!(
        "vizdeck_columnar_{}_{n}_{tag}.{ext}",
        std::process::id()
    ))
}

/// Writes `batches` as Parquet in row groups of at most `group_rows` rows.
fn write_parquet(
    path: &Path,
    batches: &[RecordBatch],
    compression: Compression,
    group_rows: usize,
) {
    let props = WriterProperties::builder()
        .set_compression(compression)
        .set_max_row_group_row_count(Some(group_rows))
        .build();
    let file = std::fs::File::create(path).unwrap();
    let mut w = ArrowWriter::try_new(file, batches[0].schema(), Some(props)).unwrap();
    for b in batches {
        w.write(b).unwrap();
    }
    w.close().unwrap();
}

/// Writes `batches` as an Arrow IPC file (`stream`: the stream format), LZ4-compressed.
fn write_ipc(path: &Path, batches: &[RecordBatch], stream: bool) {
    use arrow_ipc::writer::{FileWriter, IpcWriteOptions, StreamWriter};
    let opts = IpcWriteOptions::default()
        .try_with_compression(Some(arrow_ipc::CompressionType::LZ4_FRAME))
        .unwrap();
    let file = std::fs::File::create(path).unwrap();
    let schema = batches[0].schema();
    if stream {
        let mut w = StreamWriter::try_new_with_options(file, &schema, opts).unwrap();
        for b in batches {
            w.write(b).unwrap();
        }
        w.finish().unwrap();
    } else {
        let mut w = FileWriter::try_new_with_options(file, &schema, opts).unwrap();
        for b in batches {
            w.write(b).unwrap();
        }
        w.finish().unwrap();
    }
}

fn open(path: &Path) -> Result<SeriesSource, String> {
    SeriesSource::open(
        &SeriesSelection::Columnar(path.to_path_buf()),
        Pacing::WallClock,
    )
    .map_err(|e| e.to_string())
}

/// Opens `path` and drains it into a store until it finishes (at most 20 s).
fn read(path: &Path) -> (SeriesSource, Store) {
    let mut src = open(path).unwrap_or_else(|e| panic!("{e}"));
    let mut store = Store::default();
    let deadline = Instant::now() + Duration::from_secs(20);
    while !src.is_finished() {
        src.drain_into(&mut store);
        assert!(
            Instant::now() < deadline,
            "{} did not finish",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    src.drain_into(&mut store);
    (src, store)
}

/// Asserts that series `name` holds exactly `expect` (integer ns time, value; NaN a gap), in
/// order: the first time is the origin, the others are stored as seconds after it.
fn assert_series(store: &Store, name: &str, expect: &[(i64, f32)]) {
    let s = store
        .get(name)
        .unwrap_or_else(|| panic!("no series '{name}'"));
    assert_eq!(s.len(), expect.len(), "series '{name}': length");
    let origin = expect[0].0;
    assert_eq!(s.origin_ns(), Some(origin), "series '{name}': origin");
    for (k, &(t, v)) in expect.iter().enumerate() {
        let (rel, got) = s.get_index(s.first_index() + k as u64).unwrap();
        let want = (t as i128 - origin as i128) as f64 / 1e9;
        assert_eq!(rel, want, "series '{name}' row {k}: time");
        assert!(
            got.to_bits() == v.to_bits() || (got.is_nan() && v.is_nan()),
            "series '{name}' row {k}: {got} != {v}"
        );
    }
}

const ROWS: usize = 5000;
/// 2023-11-14T22:13:20Z in seconds.
const T0_S: i64 = 1_700_000_000;

/// Value columns shared by the tests: `f` float64 (null every 7th row), `i` int32, `b` bool,
/// `d` decimal128(12, 3) (null every 5th row), `name` text (skipped); and what each row should
/// read as.
fn value_columns() -> (Vec<(&'static str, ArrayRef)>, Vec<[f32; 4]>) {
    let f: Vec<Option<f64>> = (0..ROWS)
        .map(|i| (i % 7 != 3).then(|| (i as f64 * 0.37).sin() * 1e3))
        .collect();
    let i: Vec<i32> = (0..ROWS as i32).map(|i| i * 3 - 7000).collect();
    let b: Vec<bool> = (0..ROWS).map(|i| i % 3 == 0).collect();
    let d: Vec<Option<i128>> = (0..ROWS)
        .map(|i| (i % 5 != 0).then(|| i as i128 * 1234 - 500_000))
        .collect();
    let name: Vec<String> = (0..ROWS).map(|i| format!("row {i}")).collect();
    let expect = (0..ROWS)
        .map(|k| {
            [
                f[k].map_or(f32::NAN, |v| v as f32),
                i[k] as f32,
                f32::from(u8::from(b[k])),
                d[k].map_or(f32::NAN, |v| (v as f64 / 1e3) as f32),
            ]
        })
        .collect();
    let cols: Vec<(&'static str, ArrayRef)> = vec![
        ("f", Arc::new(Float64Array::from(f))),
        ("i", Arc::new(Int32Array::from(i))),
        ("b", Arc::new(BooleanArray::from(b))),
        (
            "d",
            Arc::new(
                Decimal128Array::from(d)
                    .with_precision_and_scale(12, 3)
                    .unwrap(),
            ),
        ),
        ("name", Arc::new(StringArray::from(name))),
    ];
    (cols, expect)
}

/// One record batch: `time` first, then the value columns.
fn batch_with(time: (&str, ArrayRef), values: Vec<(&'static str, ArrayRef)>) -> RecordBatch {
    let mut cols = vec![(time.0.to_string(), time.1)];
    cols.extend(values.into_iter().map(|(n, a)| (n.to_string(), a)));
    RecordBatch::try_from_iter(cols).unwrap()
}

/// Asserts the four value series of [`value_columns`] at times `times`.
fn assert_values(store: &Store, times: &[i64], expect: &[[f32; 4]]) {
    for (j, name) in ["f", "i", "b", "d"].iter().enumerate() {
        let rows: Vec<(i64, f32)> = times.iter().zip(expect).map(|(&t, e)| (t, e[j])).collect();
        assert_series(store, name, &rows);
    }
    assert!(store.get("name").is_none(), "the text column is skipped");
}

#[test]
fn parquet_timestamps_of_each_unit_with_and_without_a_zone() {
    // (unit symbol, ticks per second, TimeUnit)
    let units = [
        ("s", 1i64, TimeUnit::Seconds),
        ("ms", 1_000, TimeUnit::Millis),
        ("us", 1_000_000, TimeUnit::Micros),
        ("ns", 1_000_000_000, TimeUnit::Nanos),
    ];
    for (u, (sym, per_s, unit)) in units.into_iter().enumerate() {
        for tz in [None, Some("UTC"), Some("+02:00")] {
            // Steps of 1, 2, 3, 4 ticks in turn (s: whole seconds), so every tick counts.
            let ticks: Vec<i64> = (0..ROWS as i64)
                .scan(T0_S * per_s, |t, k| {
                    *t += k % 4 + 1;
                    Some(*t)
                })
                .collect();
            let times: Vec<i64> = ticks.iter().map(|t| t * (1_000_000_000 / per_s)).collect();
            let arr: ArrayRef = match sym {
                "s" => Arc::new(TimestampSecondArray::from(ticks).with_timezone_opt(tz)),
                "ms" => Arc::new(TimestampMillisecondArray::from(ticks).with_timezone_opt(tz)),
                "us" => Arc::new(TimestampMicrosecondArray::from(ticks).with_timezone_opt(tz)),
                _ => Arc::new(TimestampNanosecondArray::from(ticks).with_timezone_opt(tz)),
            };
            let (values, expect) = value_columns();
            let batch = batch_with(("when", arr), values);
            let compression = if u % 2 == 0 {
                Compression::SNAPPY
            } else {
                Compression::ZSTD(ZstdLevel::default())
            };
            let path = temp(&format!("ts_{sym}"), "parquet");
            write_parquet(&path, &[batch], compression, 1000);
            let (src, store) = read(&path);
            let ctx = format!("timestamp[{sym}] tz {tz:?}");
            assert_eq!(src.error(), None, "{ctx}");
            assert_eq!(src.names(), ["f", "i", "b", "d"], "{ctx}");
            assert_eq!(src.time_unit(), Some(unit), "{ctx}");
            let format = src.time_format().unwrap_or_default().to_string();
            assert!(
                format.contains(&format!("timestamp[{sym}")),
                "{ctx}: {format}"
            );
            assert_eq!(
                format.contains("no time zone"),
                tz.is_none(),
                "{ctx}: {format}"
            );
            if let Some(tz) = tz {
                assert!(format.contains(tz), "{ctx}: {format}");
            }
            assert!(src.label().contains("parquet"), "{ctx}");
            assert_values(&store, &times, &expect);
            std::fs::remove_file(&path).ok();
        }
    }
}

#[test]
fn parquet_date32_time_column_with_float32_and_small_ints() {
    let days: Vec<i32> = (0..ROWS as i32).map(|k| 19_000 + k).collect();
    let v: Vec<Option<f32>> = (0..ROWS)
        .map(|k| (k % 11 != 0).then_some(k as f32 * 0.25))
        .collect();
    let small: Vec<u8> = (0..ROWS).map(|k| (k % 251) as u8).collect();
    let batch = RecordBatch::try_from_iter(vec![
        ("v", Arc::new(Float32Array::from(v.clone())) as ArrayRef),
        ("day", Arc::new(Date32Array::from(days.clone())) as ArrayRef),
        (
            "small",
            Arc::new(UInt8Array::from(small.clone())) as ArrayRef,
        ),
    ])
    .unwrap();
    let path = temp("date32", "parquet");
    write_parquet(&path, &[batch], Compression::SNAPPY, 1000);
    let (src, store) = read(&path);
    assert_eq!(
        src.names(),
        ["v", "small"],
        "the date column is the time, not a series"
    );
    assert!(src.time_format().unwrap().contains("date32"));
    let times: Vec<i64> = days
        .iter()
        .map(|&d| d as i64 * 86_400_000_000_000)
        .collect();
    let rows: Vec<(i64, f32)> = times
        .iter()
        .zip(&v)
        .map(|(&t, v)| (t, v.unwrap_or(f32::NAN)))
        .collect();
    assert_series(&store, "v", &rows);
    let rows: Vec<(i64, f32)> = times
        .iter()
        .zip(&small)
        .map(|(&t, &s)| (t, s as f32))
        .collect();
    assert_series(&store, "small", &rows);
    assert_eq!(
        store.get("v").unwrap().gaps() as usize,
        v.iter().filter(|v| v.is_none()).count()
    );
    std::fs::remove_file(&path).ok();
}

#[test]
fn numeric_time_columns_by_name_suffix_and_magnitude() {
    // A text first column, then `timestamp` in epoch ms (the magnitude says ms).
    let ms: Vec<i64> = (0..ROWS as i64).map(|k| T0_S * 1000 + k * 7).collect();
    let (values, expect) = value_columns();
    let mut cols = vec![(
        "label".to_string(),
        Arc::new(StringArray::from_iter_values(
            (0..ROWS).map(|k| format!("{k}")),
        )) as ArrayRef,
    )];
    cols.push((
        "Timestamp".to_string(),
        Arc::new(Int64Array::from(ms.clone())) as ArrayRef,
    ));
    cols.extend(values.into_iter().map(|(n, a)| (n.to_string(), a)));
    let batch = RecordBatch::try_from_iter(cols).unwrap();
    let path = temp("epoch_ms", "parquet");
    write_parquet(
        &path,
        &[batch],
        Compression::ZSTD(ZstdLevel::default()),
        1000,
    );
    let (src, store) = read(&path);
    assert_eq!(src.time_unit(), Some(TimeUnit::Millis));
    assert_eq!(src.time_format(), None, "numbers are not dates");
    let times: Vec<i64> = ms.iter().map(|t| t * 1_000_000).collect();
    assert_values(&store, &times, &expect);
    std::fs::remove_file(&path).ok();

    // A float `t` in seconds (small: not a Unix time), after the values.
    let secs: Vec<f64> = (0..ROWS).map(|k| k as f64 * 0.001 + 0.5).collect();
    let (values, expect) = value_columns();
    let mut cols: Vec<(String, ArrayRef)> = values
        .into_iter()
        .map(|(n, a)| (n.to_string(), a))
        .collect();
    cols.push(("t".into(), Arc::new(Float64Array::from(secs.clone()))));
    let path = temp("float_t", "parquet");
    write_parquet(
        &path,
        &[RecordBatch::try_from_iter(cols).unwrap()],
        Compression::SNAPPY,
        1000,
    );
    let (src, store) = read(&path);
    assert_eq!(src.time_unit(), Some(TimeUnit::Seconds));
    let times: Vec<i64> = secs.iter().map(|s| (s * 1e9).round() as i64).collect();
    assert_values(&store, &times, &expect);
    std::fs::remove_file(&path).ok();

    // `time_us`: the suffix says µs whatever the magnitude.
    let us: Vec<i64> = (0..ROWS as i64).map(|k| k * 250).collect();
    let (values, expect) = value_columns();
    let path = temp("time_us", "parquet");
    write_parquet(
        &path,
        &[batch_with(
            ("time_us", Arc::new(Int64Array::from(us.clone()))),
            values,
        )],
        Compression::SNAPPY,
        1000,
    );
    let (src, store) = read(&path);
    assert_eq!(src.time_unit(), Some(TimeUnit::Micros));
    let times: Vec<i64> = us.iter().map(|t| t * 1000).collect();
    assert_values(&store, &times, &expect);
    std::fs::remove_file(&path).ok();

    // No time name, no time type: the first column, being numeric, is the time.
    let first: Vec<i32> = (0..ROWS as i32).collect();
    let (values, expect) = value_columns();
    let path = temp("first_col", "parquet");
    write_parquet(
        &path,
        &[batch_with(
            ("x", Arc::new(Int32Array::from(first.clone()))),
            values,
        )],
        Compression::SNAPPY,
        1000,
    );
    let (src, store) = read(&path);
    assert_eq!(src.names(), ["f", "i", "b", "d"]);
    let times: Vec<i64> = first.iter().map(|&t| t as i64 * 1_000_000_000).collect();
    assert_values(&store, &times, &expect);
    std::fs::remove_file(&path).ok();
}

#[test]
fn a_large_row_group_arrives_in_small_batches_with_every_row() {
    // One row group of 200 000 rows (several 64 Ki record batches, many 4096-row batches).
    let n = 200_000usize;
    let ns: Vec<i64> = (0..n as i64)
        .map(|k| T0_S * 1_000_000_000 + k * 1_001)
        .collect();
    let v: Vec<f64> = (0..n).map(|k| k as f64).collect();
    let batch = RecordBatch::try_from_iter(vec![
        (
            "ts",
            Arc::new(TimestampNanosecondArray::from(ns.clone())) as ArrayRef,
        ),
        ("v", Arc::new(Float64Array::from(v.clone())) as ArrayRef),
    ])
    .unwrap();
    let path = temp("big_group", "pq");
    write_parquet(&path, &[batch], Compression::SNAPPY, 1 << 20);
    let (src, store) = read(&path);
    assert_eq!(src.error(), None);
    let rows: Vec<(i64, f32)> = ns.iter().zip(&v).map(|(&t, &v)| (t, v as f32)).collect();
    assert_series(&store, "v", &rows);
    assert_eq!(src.rows_sorted(), 0);
    std::fs::remove_file(&path).ok();
}

#[test]
fn arrow_ipc_files_and_streams_in_several_record_batches() {
    for stream in [false, true] {
        let us: Vec<i64> = (0..ROWS as i64).map(|k| T0_S * 1_000_000 + k * 3).collect();
        let (values, expect) = value_columns();
        let full = batch_with(
            (
                "time",
                Arc::new(TimestampMicrosecondArray::from(us.clone()).with_timezone("UTC")),
            ),
            values,
        );
        // Record batches of 1000, 1500, 2500 rows.
        let parts = [
            full.slice(0, 1000),
            full.slice(1000, 1500),
            full.slice(2500, 2500),
        ];
        let ext = if stream { "arrows" } else { "feather" };
        let path = temp("ipc", ext);
        write_ipc(&path, &parts, stream);
        let (src, store) = read(&path);
        assert_eq!(src.error(), None, "stream {stream}");
        assert_eq!(src.names(), ["f", "i", "b", "d"]);
        assert_eq!(src.time_unit(), Some(TimeUnit::Micros));
        assert!(
            src.time_format()
                .unwrap()
                .contains("arrow timestamp[us, UTC]")
        );
        let times: Vec<i64> = us.iter().map(|t| t * 1000).collect();
        assert_values(&store, &times, &expect);
        std::fs::remove_file(&path).ok();
    }
}

#[test]
fn dictionary_encoded_numbers_read_as_values() {
    let keys = Int32Array::from(
        (0..ROWS)
            .map(|k| (k % 13 != 0).then_some((k % 4) as i32))
            .collect::<Vec<_>>(),
    );
    let dict_values = Float64Array::from(vec![0.5, 1.5, -2.0, 1e3]);
    let dict: DictionaryArray<Int32Type> =
        DictionaryArray::try_new(keys.clone(), Arc::new(dict_values.clone())).unwrap();
    let secs: Vec<i64> = (0..ROWS as i64).map(|k| T0_S + k).collect();
    let batch = RecordBatch::try_from_iter(vec![
        (
            "ts",
            Arc::new(TimestampSecondArray::from(secs.clone())) as ArrayRef,
        ),
        ("level", Arc::new(dict) as ArrayRef),
    ])
    .unwrap();
    let expect: Vec<(i64, f32)> = (0..ROWS)
        .map(|k| {
            let v = if keys.is_null(k) {
                f32::NAN
            } else {
                dict_values.value(keys.value(k) as usize) as f32
            };
            (secs[k] * 1_000_000_000, v)
        })
        .collect();
    for ext in ["parquet", "arrow"] {
        let path = temp("dict", ext);
        if ext == "parquet" {
            write_parquet(
                &path,
                std::slice::from_ref(&batch),
                Compression::SNAPPY,
                1000,
            );
        } else {
            write_ipc(&path, std::slice::from_ref(&batch), false);
        }
        let (src, store) = read(&path);
        assert_eq!(src.names(), ["level"], "{ext}");
        assert_series(&store, "level", &expect);
        std::fs::remove_file(&path).ok();
    }
}

#[test]
fn huge_values_are_clamped_and_null_times_skipped() {
    let ms: Vec<Option<i64>> = (0..10i64)
        .map(|k| (k != 4).then_some(T0_S * 1000 + k))
        .collect();
    let v = vec![
        1.0,
        1e300,
        -1e39,
        f64::INFINITY,
        5.0,
        f64::NAN,
        7.0,
        8.0,
        9.0,
        10.0,
    ];
    let batch = RecordBatch::try_from_iter(vec![
        (
            "ts",
            Arc::new(TimestampMillisecondArray::from(ms.clone())) as ArrayRef,
        ),
        ("v", Arc::new(Float64Array::from(v.clone())) as ArrayRef),
    ])
    .unwrap();
    let path = temp("clamp", "parquet");
    write_parquet(&path, &[batch], Compression::SNAPPY, 1000);
    let (src, store) = read(&path);
    assert_eq!(src.values_clamped(), 2);
    let note = src.clamp_note().unwrap();
    assert!(
        note.contains(&path.display().to_string()) && note.contains("'v'"),
        "{note}"
    );
    assert!(note.contains("row 2"), "{note}");
    assert_eq!(src.rows_skipped(), 1);
    let w = src.warning().unwrap();
    assert!(w.contains("row 5") && w.contains("no time"), "{w}");
    let expect: Vec<(i64, f32)> = ms
        .iter()
        .zip(&v)
        .filter_map(|(t, &v)| {
            let t = (*t)? * 1_000_000;
            let f = if !v.is_finite() {
                f32::NAN
            } else if v.abs() > f32::MAX as f64 {
                f32::MAX.copysign(v as f32)
            } else {
                v as f32
            };
            Some((t, f))
        })
        .collect();
    assert_eq!(expect.len(), 9);
    assert_series(&store, "v", &expect);
    std::fs::remove_file(&path).ok();
}

#[test]
fn rows_out_of_order_are_sorted_within_a_batch() {
    let s: Vec<i64> = vec![T0_S + 2, T0_S, T0_S + 1, T0_S + 3];
    let batch = RecordBatch::try_from_iter(vec![
        ("time", Arc::new(TimestampSecondArray::from(s)) as ArrayRef),
        (
            "v",
            Arc::new(Int64Array::from(vec![2, 0, 1, 3])) as ArrayRef,
        ),
    ])
    .unwrap();
    let path = temp("unsorted", "parquet");
    write_parquet(&path, &[batch], Compression::SNAPPY, 1000);
    let (src, store) = read(&path);
    assert_eq!(src.rows_sorted(), 1);
    let expect: Vec<(i64, f32)> = (0..4)
        .map(|k| ((T0_S + k) * 1_000_000_000, k as f32))
        .collect();
    assert_series(&store, "v", &expect);
    std::fs::remove_file(&path).ok();
}

#[test]
fn bad_files_fail_with_one_line_naming_them() {
    let check = |path: &Path, want: &str| {
        let e = open(path)
            .err()
            .unwrap_or_else(|| panic!("{} opened", path.display()));
        eprintln!("{e}");
        assert!(!e.contains('\n'), "one line: {e}");
        assert!(
            e.contains(&path.display().to_string()),
            "names the file: {e}"
        );
        assert!(e.contains(want), "'{want}' in: {e}");
    };

    // No numeric column: a timestamp and text.
    let batch = RecordBatch::try_from_iter(vec![
        (
            "ts",
            Arc::new(TimestampSecondArray::from(vec![T0_S, T0_S + 1])) as ArrayRef,
        ),
        (
            "what",
            Arc::new(StringArray::from(vec!["a", "b"])) as ArrayRef,
        ),
    ])
    .unwrap();
    let path = temp("no_numeric", "parquet");
    write_parquet(&path, &[batch], Compression::SNAPPY, 1000);
    check(&path, "no numeric value column");
    std::fs::remove_file(&path).ok();

    // No time column: text first, no temporal type, no time name.
    let batch = RecordBatch::try_from_iter(vec![
        (
            "what",
            Arc::new(StringArray::from(vec!["a", "b"])) as ArrayRef,
        ),
        (
            "v",
            Arc::new(Float64Array::from(vec![1.0, 2.0])) as ArrayRef,
        ),
    ])
    .unwrap();
    let path = temp("no_time", "parquet");
    write_parquet(&path, &[batch], Compression::SNAPPY, 1000);
    check(&path, "no time column");
    std::fs::remove_file(&path).ok();

    // Truncated: a valid file cut in half (the footer is gone), Parquet and IPC.
    let (values, _) = value_columns();
    let ts: Vec<i64> = (0..ROWS as i64).map(|k| T0_S + k).collect();
    let batch = batch_with(("ts", Arc::new(TimestampSecondArray::from(ts))), values);
    for ext in ["parquet", "arrow"] {
        let path = temp("truncated", ext);
        if ext == "parquet" {
            write_parquet(
                &path,
                std::slice::from_ref(&batch),
                Compression::SNAPPY,
                1000,
            );
        } else {
            write_ipc(&path, std::slice::from_ref(&batch), false);
        }
        let bytes = std::fs::read(&path).unwrap();
        std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
        check(&path, "not a readable");
        std::fs::remove_file(&path).ok();
    }

    // A text file named .parquet, an empty one, a missing one.
    let path = temp("text", "parquet");
    std::fs::write(&path, "time,v\n1,2\n").unwrap();
    check(&path, "not a Parquet or Arrow IPC file");
    std::fs::write(&path, "").unwrap();
    check(&path, "empty");
    std::fs::remove_file(&path).ok();
    check(&path, "no such file");
}

#[test]
fn a_corrupt_row_group_stops_the_source_with_an_error_naming_it() {
    let (values, _) = value_columns();
    let ts: Vec<i64> = (0..ROWS as i64).map(|k| T0_S + k).collect();
    let batch = batch_with(("ts", Arc::new(TimestampSecondArray::from(ts))), values);
    let path = temp("corrupt", "parquet");
    write_parquet(&path, &[batch], Compression::SNAPPY, 1000);
    // Overwrite the third row group's column chunks (pages) with garbage; the footer stays.
    let meta = {
        let file = std::fs::File::open(&path).unwrap();
        parquet::file::metadata::ParquetMetaDataReader::new()
            .parse_and_finish(&file)
            .unwrap()
    };
    let rg = meta.row_group(2);
    let (start, len) = rg.column(0).byte_range();
    let end = (0..rg.num_columns())
        .map(|c| {
            let (s, l) = rg.column(c).byte_range();
            s + l
        })
        .max()
        .unwrap();
    assert!(len > 0);
    let mut bytes = std::fs::read(&path).unwrap();
    for (k, b) in bytes[start as usize..end as usize].iter_mut().enumerate() {
        *b = (k as u8).wrapping_mul(151).wrapping_add(7);
    }
    std::fs::write(&path, &bytes).unwrap();
    let (src, store) = read(&path);
    let e = src.error().expect("a late error");
    assert!(
        e.contains(&path.display().to_string()) && e.contains("row group 3"),
        "{e}"
    );
    // The row groups before it were stored.
    assert_eq!(store.get("i").unwrap().len(), 2000);
    std::fs::remove_file(&path).ok();
}

/// A file written by pandas 3.1.1 through pyarrow 26.0.1 (`tests/data/series/
/// pandas_timeseries.parquet`: snappy, row groups of 300, a `datetime64[ns]` column `t` from
/// 2024-01-01 every 250 ms, `a = k / 2`, `b = k % 7`, a text column `name`), made by
/// `DataFrame({'t': pd.date_range('2024-01-01', periods=1000, freq='250ms'), 'a':
/// np.arange(1000) * 0.5, 'b': np.arange(1000) % 7, 'name': ['x'] * 1000}).to_parquet(path,
/// row_group_size=300)`.
#[test]
fn a_pandas_written_file() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/series/pandas_timeseries.parquet");
    let (src, store) = read(&path);
    assert_eq!(src.names(), ["a", "b"]);
    let t0 = 1_704_067_200_000_000_000i64;
    let a: Vec<(i64, f32)> = (0..1000i64)
        .map(|k| (t0 + k * 250_000_000, k as f32 * 0.5))
        .collect();
    assert_series(&store, "a", &a);
    let b: Vec<(i64, f32)> = (0..1000i64)
        .map(|k| (t0 + k * 250_000_000, (k % 7) as f32))
        .collect();
    assert_series(&store, "b", &b);
}
