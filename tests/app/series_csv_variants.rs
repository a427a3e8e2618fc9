//! CSV variants: BOM, CRLF, quoted fields, `;` and tab delimiters, no header, NaN/empty/inf as
//! gaps, a half-written last row, and tailing a file that is still being written.

use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use vizdeck::series::{
    Pacing, SeriesSelection, SeriesSource, Store, TimeUnit, parse_time_ns, sniff_delimiter,
};

fn temp(tag: &str, bytes: &[u8]) -> PathBuf {
    let p = std::env::temp_dir().join(format!("vizdeck-csvvar-{}-{tag}.csv", std::process::id()));
    std::fs::write(&p, bytes).unwrap();
    p
}

fn load(bytes: &[u8], tag: &str) -> (SeriesSource, Store) {
    let p = temp(tag, bytes);
    let mut src = SeriesSource::open(&SeriesSelection::Csv(p.clone()), Pacing::WallClock)
        .unwrap_or_else(|e| panic!("{tag}: {e}"));
    let mut store = Store::default();
    let t = Instant::now();
    while !src.is_finished() && t.elapsed() < Duration::from_secs(10) {
        src.drain_into(&mut store);
        std::thread::sleep(Duration::from_millis(1));
    }
    src.drain_into(&mut store);
    std::fs::remove_file(&p).ok();
    (src, store)
}

fn values(store: &Store, name: &str) -> Vec<(f64, f32)> {
    store
        .get(name)
        .unwrap_or_else(|| panic!("no series {name}"))
        .iter()
        .collect()
}

fn same(got: &[(f64, f32)], want: &[(f64, f32)]) {
    assert_eq!(got.len(), want.len(), "{got:?} vs {want:?}");
    for (g, w) in got.iter().zip(want) {
        assert_eq!(g.0, w.0);
        assert!(
            g.1 == w.1 || (g.1.is_nan() && w.1.is_nan()),
            "{got:?} vs {want:?}"
        );
    }
}

#[test]
fn delimiter_sniffing() {
    assert_eq!(sniff_delimiter(b"a,b,c\n1;2"), b',');
    assert_eq!(sniff_delimiter(b"a;b;c\n"), b';');
    assert_eq!(sniff_delimiter(b"a\tb\tc"), b'\t');
    assert_eq!(sniff_delimiter(b"\"x;y;z\",b\n"), b',');
    assert_eq!(sniff_delimiter(b"single"), b',');
}

#[test]
fn bom_crlf_quotes_and_delimiters_load_the_same_rows() {
    let want = [(0.0, 1.5f32), (0.5, -2.25), (1.0, 3.0)];
    let cases: [(&str, &[u8]); 5] = [
        (
            "bom-crlf",
            b"\xEF\xBB\xBFtime,v\r\n0,1.5\r\n0.5,-2.25\r\n1,3\r\n",
        ),
        (
            "quoted",
            b"\"time\",\"v\"\n\"0\",\"1.5\"\n0.5,\"-2.25\"\n\"1\",3\n",
        ),
        (
            "semicolon",
            b"time;v;label\n0;1.5;\"a;b\"\n0.5;-2.25;x\n1;3;y\n",
        ),
        ("tab", b"time\tv\n0\t1.5\n0.5\t-2.25\n1\t3\n"),
        (
            "bom-semicolon-crlf",
            b"\xEF\xBB\xBFtime;v\r\n0;1.5\r\n0.5;-2.25\r\n1;3",
        ),
    ];
    for (tag, bytes) in cases {
        let (src, store) = load(bytes, tag);
        assert_eq!(src.names(), ["v"], "{tag}");
        same(&values(&store, "v"), &want);
        assert_eq!(src.rows_skipped(), 0, "{tag}");
        assert!(src.error().is_none() && src.warning().is_none(), "{tag}");
    }
}

#[test]
fn headerless_file_names_columns() {
    let (src, store) = load(b"0,1,10\n1,2,20\n2,3,30\n", "noheader");
    assert_eq!(src.names(), ["column 2", "column 3"]);
    same(
        &values(&store, "column 3"),
        &[(0.0, 10.0), (1.0, 20.0), (2.0, 30.0)],
    );
}

#[test]
fn nan_empty_and_inf_cells_are_gaps() {
    let (_, store) = load(b"t,v\n0,1\n1,NaN\n2,\n3,inf\n4,-inf\n5,2\n", "gaps");
    let s = store.get("v").unwrap();
    assert_eq!(s.len(), 6);
    assert_eq!(s.gaps(), 4);
    let nan = f32::NAN;
    same(
        &values(&store, "v"),
        &[
            (0.0, 1.0),
            (1.0, nan),
            (2.0, nan),
            (3.0, nan),
            (4.0, nan),
            (5.0, 2.0),
        ],
    );
}

#[test]
fn half_written_last_row_is_skipped_with_a_warning() {
    // Small file (all rows read at open) and a large one (last row read by the thread).
    for rows in [3usize, 5000] {
        let mut text = String::from("t,a,b\n");
        for i in 0..rows {
            text += &format!("{i},{i},{}\n", 2 * i);
        }
        text += &format!("{rows},1."); // cut mid-row: 2 fields of 3, no newline
        let (src, store) = load(text.as_bytes(), &format!("half{rows}"));
        assert_eq!(store.get("a").unwrap().len(), rows, "rows {rows}");
        assert_eq!(src.rows_skipped(), 1);
        let w = src.warning().expect("a warning");
        assert!(w.contains("incomplete last row skipped"), "{w}");
        assert!(w.contains(&format!("line {}", rows + 2)), "{w}");
        assert!(src.error().is_none());
    }
}

#[test]
fn duplicate_and_out_of_order_rows_are_all_kept_in_time_order() {
    let (src, store) = load(b"t,v\n0,1\n1,2\n1,3\n0.5,4\n2,5\n0.25,6\n", "order");
    let s = store.get("v").unwrap();
    assert_eq!(s.len(), 6);
    // Rows 0.5 and 0.25 came earlier than the row before them; sorted into place, stably
    // (the two rows at t = 1 keep their file order).
    assert_eq!(src.rows_sorted(), 2);
    assert_eq!(s.out_of_order(), 0);
    assert!(s.is_ordered());
    same(
        &values(&store, "v"),
        &[
            (0.0, 1.0),
            (0.25, 6.0),
            (0.5, 4.0),
            (1.0, 2.0),
            (1.0, 3.0),
            (2.0, 5.0),
        ],
    );
}

#[test]
fn out_of_order_rows_past_the_first_batch_are_sorted_too() {
    // 100 rows go in the first batch, the rest stream through the thread in batches of 4096;
    // from row 110 on every tenth row is 5 rows late (times in ms), never across a batch
    // boundary (rows 100 and 4196 start batches).
    let mut csv = String::from("time_ms,v\n");
    for k in 0..5000i64 {
        let t = if k >= 110 && k % 10 == 0 { k - 5 } else { k };
        csv += &format!("{t},{k}\n");
    }
    let (src, store) = load(csv.as_bytes(), "order-big");
    let s = store.get("v").unwrap();
    assert_eq!(s.len(), 5000);
    assert!(s.is_ordered());
    // Each late row t = k − 5 (k = 110, 120, …, 4990: 489 rows) follows k − 1 > k − 5.
    assert_eq!(src.rows_sorted(), 489);
    assert_eq!(s.out_of_order(), 0);
    let times: Vec<f64> = s.iter().map(|(t, _)| t).collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]));
}

#[test]
fn tail_follows_a_growing_file() {
    let p = temp("tail", b"t,v\n0,0\n");
    let mut src =
        SeriesSource::open(&SeriesSelection::CsvTail(p.clone()), Pacing::WallClock).unwrap();
    let mut store = Store::default();
    let mut f = std::fs::OpenOptions::new().append(true).open(&p).unwrap();
    for i in 1..=20 {
        writeln!(f, "{i},{}", i * 10).unwrap();
        // A row written in two pieces is taken only once complete.
        if i == 10 {
            write!(f, "10.5,").unwrap();
            f.flush().unwrap();
            std::thread::sleep(Duration::from_millis(60));
            writeln!(f, "105").unwrap();
        }
    }
    f.flush().unwrap();
    let t = Instant::now();
    while store.get("v").map_or(0, |s| s.len()) < 22 && t.elapsed() < Duration::from_secs(10) {
        src.drain_into(&mut store);
        std::thread::sleep(Duration::from_millis(5));
    }
    let got = values(&store, "v");
    assert_eq!(got.len(), 22);
    assert_eq!(got[11], (10.5, 105.0));
    assert!(!src.is_finished());
    drop(src); // stops the tail thread
    std::fs::remove_file(&p).ok();
}

#[test]
fn epoch_seconds_with_microsecond_steps_keep_their_spacing() {
    let mut csv = String::from("time,v\n");
    for k in 0..12 {
        csv += &format!("1700000000.{k:06},{k}\n");
    }
    let (src, store) = load(csv.as_bytes(), "epoch-us");
    assert_eq!(src.time_unit(), Some(TimeUnit::Seconds));
    let s = store.get("v").unwrap();
    assert_eq!(s.len(), 12);
    for k in 0..12u64 {
        let (rel, v) = s.get_index(s.first_index() + k).unwrap();
        // k µs after the first row: the f64 nearest to k·10⁻⁶, which `k / 1e6` is (IEEE
        // division of exact operands is correctly rounded). Through f64 epoch seconds the
        // steps would be multiples of 2⁻²² s ≈ 0.24 µs instead.
        assert_eq!(rel, k as f64 / 1e6, "row {k}");
        assert_eq!(v, k as f32);
    }
    assert_eq!(s.origin_ns(), Some(1_700_000_000_000_000_000));
}

#[test]
fn time_cells_parse_exactly_to_nanoseconds() {
    use TimeUnit::*;
    let cases: &[(&str, TimeUnit, Option<i64>)] = &[
        (
            "1700000000.000001",
            Seconds,
            Some(1_700_000_000_000_001_000),
        ),
        (
            "1700000000.123456789",
            Seconds,
            Some(1_700_000_000_123_456_789),
        ),
        ("-2.5", Seconds, Some(-2_500_000_000)),
        ("+1.5e3", Millis, Some(1_500_000_000)),
        ("17E8", Seconds, Some(1_700_000_000_000_000_000)),
        (".5", Seconds, Some(500_000_000)),
        ("5.", Seconds, Some(5_000_000_000)),
        ("12", Micros, Some(12_000)),
        ("12", Nanos, Some(12)),
        ("0", Seconds, Some(0)),
        // 1.5 ns and 1.49 ns: to the nearest nanosecond, ties away from zero.
        ("0.0000000015", Seconds, Some(2)),
        ("-0.0000000015", Seconds, Some(-2)),
        ("0.00000000149", Seconds, Some(1)),
        ("1e-30", Seconds, Some(0)),
        ("9223372036854775807", Nanos, Some(i64::MAX)),
        ("9223372036854775808", Nanos, None),
        ("1e300", Seconds, None),
        ("", Seconds, None),
        ("-", Seconds, None),
        (".", Seconds, None),
        ("e5", Seconds, None),
        ("1e", Seconds, None),
        ("inf", Seconds, None),
        ("NaN", Seconds, None),
        ("0x10", Seconds, None),
        ("1.2.3", Seconds, None),
        ("1,5", Seconds, None),
    ];
    for &(cell, unit, want) in cases {
        assert_eq!(parse_time_ns(cell, unit), want, "'{cell}' in {unit:?}");
    }
}

#[test]
fn time_column_unit_comes_from_the_header_suffix() {
    // The same two instants, 1 µs and 2.5 µs after 0, written in each unit.
    for (header, a, b, unit) in [
        ("t_ns", "1000", "2500", TimeUnit::Nanos),
        ("T_US", "1", "2.5", TimeUnit::Micros),
        ("time_ms", "0.001", "0.0025", TimeUnit::Millis),
        ("t_s", "0.000001", "0.0000025", TimeUnit::Seconds),
    ] {
        let csv = format!("{header},v\n{a},1\n{b},2\n");
        let (src, store) = load(csv.as_bytes(), header);
        assert_eq!(src.time_unit(), Some(unit), "{header}");
        let s = store.get("v").unwrap();
        assert_eq!(s.origin_ns(), Some(1000), "{header}");
        assert_eq!(s.origin(), Some(1e-6), "{header}");
        let (rel, v) = s.get_index(s.first_index() + 1).unwrap();
        assert_eq!((rel, v), (1.5e-6, 2.0), "{header}");
    }
    assert_eq!(TimeUnit::from_header("timestamp"), TimeUnit::Seconds);
    assert_eq!(TimeUnit::from_header("t_µs"), TimeUnit::Micros);
    assert_eq!(TimeUnit::from_header("ns"), TimeUnit::Seconds);
}

#[test]
fn values_beyond_f32_are_clamped_and_counted() {
    let (src, store) = load(
        b"t,v,w\n0,1,1e308\n1,-1e39,2\n2,3.4e38,-3.5e38\n3,2,4\n4,-1e400,inf\n",
        "huge",
    );
    // f32::MAX = 3.4028235e38: 3.4e38 fits, 1e308, -1e39, -3.5e38 and -1e400 do not.
    same(
        &values(&store, "v"),
        &[
            (0.0, 1.0),
            (1.0, -f32::MAX),
            (2.0, 3.4e38),
            (3.0, 2.0),
            (4.0, -f32::MAX),
        ],
    );
    // `inf` written as such stays a gap; `-1e400` (beyond f64 too) is a huge number.
    same(
        &values(&store, "w"),
        &[
            (0.0, f32::MAX),
            (1.0, 2.0),
            (2.0, -f32::MAX),
            (3.0, 4.0),
            (4.0, f32::NAN),
        ],
    );
    assert_eq!(src.values_clamped(), 4);
    let note = src.clamp_note().expect("a note on the first clamped cell");
    assert!(
        note.contains("line 2") && note.contains("'w'") && note.contains("1e308"),
        "{note}"
    );
    assert!(src.error().is_none());
}
