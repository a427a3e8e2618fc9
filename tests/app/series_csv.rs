//! CSV series source: valid files stream every point into the store; bad files give one clear line.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use vizdeck::series::{Pacing, SeriesError, SeriesSelection, SeriesSource, Store};

fn temp_csv(tag: &str, contents: &str) -> PathBuf {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let path = std::env::temp_dir().join(format!(
        "vizdeck_series_csv_{}_{n}_{tag}.csv",
        std::process::id()
    ));
    std::fs::write(&path, contents).unwrap();
    path
}

fn open(path: &Path) -> Result<SeriesSource, SeriesError> {
    SeriesSource::open(&SeriesSelection::Csv(path.to_path_buf()), Pacing::WallClock)
}

/// Opens `path` and drains it whole into a fresh store.
fn read(path: &Path) -> (SeriesSource, Store) {
    let mut src = open(path).unwrap();
    let mut store = Store::default();
    drain_all(&mut src, &mut store);
    (src, store)
}

/// Drains until the source has delivered everything (at most 5 s).
fn drain_all(src: &mut SeriesSource, store: &mut Store) {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        src.drain_into(store);
        if src.is_finished() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "CSV source did not finish within 5 s"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
}

#[test]
fn valid_file_streams_all_points_and_counts_gaps() {
    let path = temp_csv(
        "valid",
        "t,a,b,label\n\
         0.0,1.0,10.0,x\n\
         0.5,2.0,,y\n\
         1.0,3.0,30.0,z\n\
         1.5,4.0,40.0,w\n\
         2.0,5.0,50.0,v\n",
    );
    let mut src = open(&path).unwrap();
    assert_eq!(src.names(), ["a".to_string(), "b".to_string()]);
    assert_eq!(src.label(), format!("csv: {}", path.display()));
    let mut store = Store::default();
    drain_all(&mut src, &mut store);
    assert_eq!(src.error(), None);
    assert_eq!(store.series().len(), 2);
    assert_eq!(store.points_ingested(), 10);

    let a: Vec<(f64, f32)> = store.get("a").unwrap().iter().collect();
    assert_eq!(
        a,
        vec![(0.0, 1.0), (0.5, 2.0), (1.0, 3.0), (1.5, 4.0), (2.0, 5.0)]
    );
    let b = store.get("b").unwrap();
    assert_eq!(b.len(), 5);
    assert_eq!(b.gaps(), 1);
    assert_eq!(store.get("a").unwrap().gaps(), 0);
    let bv: Vec<f32> = b.iter().map(|(_, v)| v).collect();
    assert_eq!(bv[0], 10.0);
    assert!(bv[1].is_nan());
    assert_eq!(&bv[2..], &[30.0, 40.0, 50.0]);
    assert_eq!(b.time_range(), Some((0.0, 2.0)));
    assert!(store.get("label").is_none());

    // Draining again adds nothing.
    src.drain_into(&mut store);
    assert_eq!(store.points_ingested(), 10);
    std::fs::remove_file(&path).ok();
}

#[test]
fn large_file_streams_through_the_thread_exactly() {
    // More rows than the synchronous prefix and than one batch; epoch times stay exact.
    let rows = 20_000;
    let mut text = String::from("time,x,y\n");
    for i in 0..rows {
        let t = 1.7e9 + i as f64 / 1024.0;
        text.push_str(&format!("{t},{},{}\n", i, -(i as i64)));
    }
    let path = temp_csv("large", &text);
    let (src, store) = read(&path);
    assert_eq!(src.error(), None);
    assert_eq!(store.points_ingested(), 2 * rows as u64);
    let x = store.get("x").unwrap();
    for (i, (t, v)) in x.iter().enumerate() {
        assert_eq!(t, 1.7e9 + i as f64 / 1024.0);
        assert_eq!(v, i as f32);
    }
    assert_eq!(x.out_of_order(), 0);
    let y: Vec<f32> = store.get("y").unwrap().iter().map(|(_, v)| v).collect();
    assert_eq!(y[rows - 1], -((rows - 1) as f32));
    std::fs::remove_file(&path).ok();
}

#[test]
fn late_bad_row_is_skipped_with_its_line_and_the_others_kept() {
    let mut text = String::from("t,v\n");
    for i in 0..5000 {
        text.push_str(&format!("{i},{i}\n"));
    }
    text.push_str("oops,1\n"); // data row 5001 → line 5002
    text.push_str("5001,1\n");
    let path = temp_csv("late", &text);
    let (src, store) = read(&path);
    assert_eq!(src.error(), None);
    assert_eq!(
        src.warning().unwrap(),
        format!(
            "series file '{}' line 5002: time 'oops' is not a number (row skipped)",
            path.display()
        )
    );
    assert_eq!(src.rows_skipped(), 1);
    // Every row but the bad one arrives, the one after it included.
    let v = store.get("v").unwrap();
    assert_eq!(v.len(), 5001);
    assert_eq!(v.time_range(), Some((0.0, 5001.0)));
    std::fs::remove_file(&path).ok();
}

#[test]
fn no_numeric_column_is_an_error_naming_the_path() {
    let path = temp_csv("nonumeric", "t,label\n0,x\n1,y\n");
    let err = open(&path).err().expect("no numeric column must fail");
    let msg = err.to_string();
    assert!(matches!(err, SeriesError::NoNumericColumn { .. }), "{msg}");
    assert!(msg.contains(&path.display().to_string()), "{msg}");
    assert!(msg.contains("numeric"), "{msg}");
    assert_eq!(
        msg,
        format!(
            "series file '{}': no numeric value column (header: t, label)",
            path.display()
        )
    );
    std::fs::remove_file(&path).ok();
}

#[test]
fn missing_file_is_an_error() {
    let path = std::env::temp_dir().join("vizdeck_series_csv_definitely_missing_file.csv");
    let err = open(&path).err().expect("missing file must fail");
    assert!(matches!(err, SeriesError::NotFound { .. }));
    assert_eq!(
        err.to_string(),
        format!("series file '{}': no such file", path.display())
    );
}

#[test]
fn bad_time_cell_in_the_first_rows_is_skipped_with_its_line() {
    let path = temp_csv("badtime", "t,a\n0,1\n1,2\nabc,3\n4,5\n");
    let (src, store) = read(&path);
    assert_eq!(
        src.warning().unwrap(),
        format!(
            "series file '{}' line 4: time 'abc' is not a number (row skipped)",
            path.display()
        )
    );
    assert_eq!(src.rows_skipped(), 1);
    let a: Vec<(f64, f32)> = store.get("a").unwrap().iter().collect();
    assert_eq!(a, vec![(0.0, 1.0), (1.0, 2.0), (4.0, 5.0)]);
    std::fs::remove_file(&path).ok();

    // No row reads at all: refused, naming the first.
    let path = temp_csv("badtimes", "t,a\nabc,1\ndef,2\n");
    let err = open(&path).err().expect("no readable row must fail");
    assert!(matches!(err, SeriesError::Row { line: 2, .. }), "{err}");
    assert_eq!(
        err.to_string(),
        format!(
            "series file '{}' line 2: time 'abc' is not a number",
            path.display()
        )
    );
    std::fs::remove_file(&path).ok();
}

#[test]
fn empty_and_header_only_files_are_errors() {
    let path = temp_csv("empty", "");
    let err = open(&path).err().expect("empty must fail");
    assert_eq!(
        err.to_string(),
        format!("series file '{}': empty (no header)", path.display())
    );
    std::fs::remove_file(&path).ok();

    let path = temp_csv("headeronly", "t,a\n");
    let err = open(&path).err().expect("header only must fail");
    assert!(matches!(err, SeriesError::NoRows { .. }), "{err}");
    std::fs::remove_file(&path).ok();
}

#[test]
fn wrong_field_count_and_bad_value_rows_are_skipped() {
    let path = temp_csv("fields", "t,a,b\n0,1,2\n1,2\n2,3,4\n");
    let (src, store) = read(&path);
    assert_eq!(
        src.warning().unwrap(),
        format!(
            "series file '{}' line 3: 2 fields, the header has 3 (row skipped)",
            path.display()
        )
    );
    let b: Vec<(f64, f32)> = store.get("b").unwrap().iter().collect();
    assert_eq!(b, vec![(0.0, 2.0), (2.0, 4.0)]);
    std::fs::remove_file(&path).ok();

    // A value column that turns non-numeric after the first rows: the row is skipped (no
    // partial row: the other column keeps nothing of it either), the column named.
    let mut text = String::from("t,a,b\n");
    for i in 0..300 {
        text.push_str(&format!("{i},{i},{i}\n"));
    }
    text.push_str("300,300,n/a\n"); // line 302
    text.push_str("301,301,301\n"); // a row after it: not a half-written last row
    let path = temp_csv("badvalue", &text);
    let (src, store) = read(&path);
    assert_eq!(src.error(), None);
    assert_eq!(
        src.warning().unwrap(),
        format!(
            "series file '{}' line 302: column 'b': 'n/a' is not a number (row skipped)",
            path.display()
        )
    );
    assert_eq!(src.rows_skipped(), 1);
    for name in ["a", "b"] {
        let s = store.get(name).unwrap();
        assert_eq!(s.len(), 301, "{name}");
        assert!(s.iter().all(|(t, _)| t != 300.0), "{name}");
    }
    std::fs::remove_file(&path).ok();
}

#[test]
fn nan_cells_whitespace_and_duplicate_names() {
    let path = temp_csv("nan", "t, v ,v\n0, 1 ,NaN\n1,,2\n");
    let mut src = open(&path).unwrap();
    assert_eq!(src.names(), ["v".to_string(), "v #2".to_string()]);
    let mut store = Store::default();
    drain_all(&mut src, &mut store);
    assert_eq!(store.get("v").unwrap().gaps(), 1);
    assert_eq!(store.get("v #2").unwrap().gaps(), 1);
    assert_eq!(store.points_ingested(), 4);
    std::fs::remove_file(&path).ok();
}

#[test]
fn dropping_mid_stream_stops_the_thread() {
    let mut text = String::from("t,a\n");
    for i in 0..200_000 {
        text.push_str(&format!("{i},{i}\n"));
    }
    let path = temp_csv("drop", &text);
    let src = open(&path).unwrap();
    std::thread::sleep(Duration::from_millis(20)); // the ring fills; the thread waits
    let start = Instant::now();
    drop(src);
    assert!(start.elapsed() < Duration::from_secs(1));
    std::fs::remove_file(&path).ok();
}

/// Issue 34: 100 rows `t,level` with t = k / 10 and level = 2k, row 57 `5.7,abc`: the file is
/// read, the one row is skipped (its line, column and cell said, counted), the 99 others land.
#[test]
fn one_bad_cell_costs_its_row_not_the_file() {
    let mut text = String::from("t,level\n");
    for k in 1..=100 {
        if k == 57 {
            text.push_str("5.7,abc\n");
        } else {
            text.push_str(&format!("{}.{},{}\n", k / 10, k % 10, 2 * k));
        }
    }
    let path = temp_csv("onebadcell", &text);
    let (src, store) = read(&path);
    assert_eq!(src.error(), None);
    assert_eq!(src.names(), ["level".to_string()]);
    assert_eq!(src.rows_skipped(), 1);
    // Data row 57 is line 58 (the header is line 1).
    assert_eq!(
        src.warning().unwrap(),
        format!(
            "series file '{}' line 58: column 'level': 'abc' is not a number (row skipped)",
            path.display()
        )
    );
    let got: Vec<(f64, f32)> = store.get("level").unwrap().iter().collect();
    let want: Vec<(f64, f32)> = (1..=100)
        .filter(|&k| k != 57)
        .map(|k| (f64::from(k) / 10.0, 2.0 * k as f32))
        .collect();
    assert_eq!(got.len(), 99);
    for ((t, v), (wt, wv)) in got.iter().zip(&want) {
        assert!(
            (t - wt).abs() < 1e-9 && v == wv,
            "({t}, {v}) against ({wt}, {wv})"
        );
    }
    let (t0, t1) = store.get("level").unwrap().time_range().unwrap();
    assert!(
        (t0 - 0.1).abs() < 1e-9 && (t1 - 10.0).abs() < 1e-9,
        "{t0}..{t1}"
    );
    std::fs::remove_file(&path).ok();
}

/// Issue 34: `ERR` in column `b` at data rows 2 and 5 (among the first rows, which decide the
/// columns) and at row 150 (read by the thread): the column stays, each of the three rows is
/// skipped and counted, the first one is named.
#[test]
fn bad_cells_in_the_first_rows_keep_the_column_and_are_counted() {
    let mut text = String::from("t,a,b\n");
    for k in 1..=300 {
        let b = if [2, 5, 150].contains(&k) {
            "ERR".to_string()
        } else {
            format!("{}", k + 1000)
        };
        text.push_str(&format!("{k},{k},{b}\n"));
    }
    let path = temp_csv("errcells", &text);
    let (src, store) = read(&path);
    assert_eq!(src.error(), None);
    assert_eq!(src.names(), ["a".to_string(), "b".to_string()]);
    assert_eq!(src.rows_skipped(), 3);
    assert_eq!(
        src.warning().unwrap(),
        format!(
            "series file '{}' line 3: column 'b': 'ERR' is not a number (row skipped)",
            path.display()
        )
    );
    let kept: Vec<i32> = (1..=300).filter(|k| ![2, 5, 150].contains(k)).collect();
    let a: Vec<(f64, f32)> = store.get("a").unwrap().iter().collect();
    let b: Vec<(f64, f32)> = store.get("b").unwrap().iter().collect();
    let want_a: Vec<(f64, f32)> = kept.iter().map(|&k| (f64::from(k), k as f32)).collect();
    let want_b: Vec<(f64, f32)> = kept
        .iter()
        .map(|&k| (f64::from(k), (k + 1000) as f32))
        .collect();
    assert_eq!(a, want_a);
    assert_eq!(b, want_b);
    std::fs::remove_file(&path).ok();

    // A column of mostly text is still text (not a series), its numbers no reason to skip rows.
    let path = temp_csv("mostlytext", "t,v,note\n1,1,ok\n2,2,ok\n3,3,7\n4,4,ok\n");
    let (src, store) = read(&path);
    assert_eq!(src.names(), ["v".to_string()]);
    assert_eq!(src.rows_skipped(), 0);
    assert_eq!(store.get("v").unwrap().len(), 4);
    std::fs::remove_file(&path).ok();
}

/// Issue 34: a file still being written whose last line is cut (`999.5,`, no line break): the
/// row is dropped with a warning, the time range is the whole rows'; a last line with all its
/// fields but no line break is kept. Both for a file read at once (≤ 100 rows) and one read by
/// the thread (300 rows).
#[test]
fn a_cut_last_line_is_dropped_with_a_warning() {
    for rows in [10, 300] {
        let mut text = String::from("t,level\n");
        for k in 0..rows {
            text.push_str(&format!("{k},{}\n", k % 7));
        }
        for (tail, kept, skipped) in [
            ("999.5,", rows, 1),
            ("999.5", rows, 1),
            ("999.5,3", rows + 1, 0),
        ] {
            let path = temp_csv("cut", &format!("{text}{tail}"));
            let (src, store) = read(&path);
            let s = store.get("level").unwrap();
            assert_eq!(s.len(), kept, "{rows} rows + {tail:?}");
            assert_eq!(src.rows_skipped(), skipped, "{rows} rows + {tail:?}");
            let last = if skipped == 0 {
                999.5
            } else {
                (rows - 1) as f64
            };
            assert_eq!(s.time_range(), Some((0.0, last)), "{rows} rows + {tail:?}");
            // No gap point: every value is a number.
            assert!(
                s.iter().all(|(_, v)| v.is_finite()),
                "{rows} rows + {tail:?}"
            );
            if skipped == 1 {
                let w = src.warning().unwrap();
                let line = rows + 2;
                assert!(
                    w.starts_with(&format!("series file '{}' line {line}: ", path.display()))
                        && w.ends_with("(incomplete last row skipped)"),
                    "{w}"
                );
                if tail.ends_with(',') {
                    assert!(w.contains("cut short"), "{w}");
                }
            } else {
                assert_eq!(src.warning(), None);
            }
            std::fs::remove_file(&path).ok();
        }
    }
}
