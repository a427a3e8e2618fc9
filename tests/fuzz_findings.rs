//! What the fuzzers found (see README.md, "Fuzzing"), each shrunk to a focused test with the
//! expected result worked out by hand. The crashing inputs themselves are in `fuzz/corpus/`.

use vizdeck::series::{SeriesSource, Store, open_csv_bytes};
use vizdeck::stats::Capture;

fn drain(mut source: SeriesSource) -> SeriesSource {
    let mut store = Store::new(1 << 16);
    source.drain_into(&mut store);
    assert!(source.is_finished());
    source
}

/// series_csv, crash 1: a quoted header cell holding a line break was quoted as is in the
/// error, so the one-line message had two lines. Control characters are now escaped.
#[test]
fn series_header_with_a_line_break_gives_a_one_line_error() {
    let err = open_csv_bytes(b"\"a\nb\",c\nx,y\n", "x.csv")
        .err()
        .expect("no numeric column");
    assert_eq!(
        err.to_string(),
        "series file 'x.csv': no numeric value column (header: a\\nb, c)"
    );
}

/// Same for a value cell and a time cell past the first 100 rows (late errors).
#[test]
fn series_cells_with_line_breaks_give_one_line_errors() {
    let good: String = (0..101).map(|i| format!("{i},1\n")).collect();
    let csv = format!("time,v\n{good}200,\"x\ny\"\n201,1\n");
    let source = drain(open_csv_bytes(csv.as_bytes(), "x.csv").unwrap());
    assert_eq!(
        source.error().as_deref(),
        Some("series file 'x.csv' line 103: column 'v': 'x\\ny' is not a number")
    );
    let csv = format!("time,v\n{good}\"1\r\n2\",5\n201,1\n");
    let source = drain(open_csv_bytes(csv.as_bytes(), "x.csv").unwrap());
    assert_eq!(
        source.error().as_deref(),
        Some("series file 'x.csv' line 103: time '1\\r\\n2' is not a number")
    );
}

/// stats_csv: the same for a frame-time cell.
#[test]
fn stats_cell_with_a_line_break_gives_a_one_line_error() {
    let err = Capture::parse(&b"MsBetweenPresents\n\"1\n2\"\n"[..], "x.csv").unwrap_err();
    assert_eq!(
        err.to_string(),
        "stats file 'x.csv': line 2: MsBetweenPresents '1\\n2' is not a number"
    );
}
