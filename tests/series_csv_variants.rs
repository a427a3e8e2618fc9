//! CSV variants: BOM, CRLF, quoted fields, `;` and tab delimiters, no header, NaN/empty/inf as
//! gaps, a half-written last row, and tailing a file that is still being written.

use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use vizdeck::series::{Pacing, SeriesSelection, SeriesSource, Store, sniff_delimiter};

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
fn duplicate_and_out_of_order_rows_are_all_kept() {
    let (_, store) = load(b"t,v\n0,1\n1,2\n1,3\n0.5,4\n2,5\n", "order");
    let s = store.get("v").unwrap();
    assert_eq!(s.len(), 5);
    assert_eq!(s.out_of_order(), 1);
    same(
        &values(&store, "v"),
        &[(0.0, 1.0), (1.0, 2.0), (1.0, 3.0), (0.5, 4.0), (2.0, 5.0)],
    );
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
