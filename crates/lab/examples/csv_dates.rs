//! What date parsing costs the CSV path (issue 15's figure): the same rows (a time column and
//! three value columns, `ROWS` rows) written twice, once with the time as Unix seconds with a
//! fraction (`1262304000.250`) and once as an ISO 8601 date-time (`2010-01-01 00:00:00.250`),
//! each read whole by vizdeck's CSV reader from memory ([`vizdeck::series::open_csv_bytes`]:
//! the same parser, batches and checks as a file, on one thread), `REPS` times; prints the
//! median MB/s and rows/s of each and the ratio (goal: the dates cost at most 1.5×).
//!
//! Usage: `csv_dates [ROWS [REPS]]` (default 1,000,000 rows, 5 reps).

use std::time::Instant;

use vizdeck::series::{Store, open_csv_bytes};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rows: usize = args
        .first()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    let reps: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(5).max(1);
    let mut numbers = String::from("t,a,b,c\n");
    let mut dates = String::from("time,a,b,c\n");
    for i in 0..rows {
        let ms = i as u64 * 250;
        let (s, frac) = (ms / 1000, ms % 1000);
        let vals = format!("{:.3},{:.2},{}", (i as f64 * 0.01).sin(), i % 977, i % 13);
        numbers.push_str(&format!("{}.{frac:03},{vals}\n", 1_262_304_000 + s));
        let (d, rem) = (s / 86_400, s % 86_400);
        // 2010-01-01 plus d days: the rows span under a year of 365 days from January.
        let (month, day) = month_day(d as u32);
        dates.push_str(&format!(
            "2010-{month:02}-{day:02} {:02}:{:02}:{:02}.{frac:03},{vals}\n",
            rem / 3600,
            rem / 60 % 60,
            rem % 60
        ));
    }
    let time = |text: &str, name: &str| -> (f64, u64) {
        let mut times = Vec::new();
        let mut points = 0;
        for _ in 0..reps {
            let t = Instant::now();
            let mut src = open_csv_bytes(text.as_bytes(), name).expect("the CSV reads");
            let mut store = Store::default();
            src.drain_into(&mut store);
            points = store.points_ingested();
            times.push(t.elapsed().as_secs_f64());
        }
        times.sort_by(f64::total_cmp);
        (times[times.len() / 2], points)
    };
    let (tn, pn) = time(&numbers, "numbers.csv");
    let (td, pd) = time(&dates, "dates.csv");
    assert_eq!(pn, pd, "both files give the same points");
    let mb = |text: &str, s: f64| text.len() as f64 / s / 1e6;
    println!(
        "numbers: {rows} rows, {:.1} MB, median {:.1} ms: {:.1} MB/s, {:.2} M rows/s",
        numbers.len() as f64 / 1e6,
        tn * 1e3,
        mb(&numbers, tn),
        rows as f64 / tn / 1e6
    );
    println!(
        "ISO dates: {rows} rows, {:.1} MB, median {:.1} ms: {:.1} MB/s, {:.2} M rows/s",
        dates.len() as f64 / 1e6,
        td * 1e3,
        mb(&dates, td),
        rows as f64 / td / 1e6
    );
    println!(
        "time per row, dates / numbers: {:.2}x (goal ≤ 1.5x)",
        td / tn
    );
}

/// Month and day of day `d` (0-based) of 2010 (not a leap year); beyond the year, December 31.
fn month_day(d: u32) -> (u32, u32) {
    const DAYS: [u32; 12] = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    let mut left = d.min(364);
    for (m, &n) in DAYS.iter().enumerate() {
        if left < n {
            return (m as u32 + 1, left + 1);
        }
        left -= n;
    }
    (12, 31)
}
