//! Long-format CSVs (issue 15): rows that each carry a key column (`symbol`, `sensor`) split into
//! one series per key value, the key found from the first rows or named by `--series-key`;
//! columns that could be keys offered; the series cap. Expected times come from Howard
//! Hinnant's days-from-civil algorithm, values from the rows the test writes.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use vizdeck::series::source::{CsvOptions, MAX_SERIES};
use vizdeck::series::{Pacing, SeriesSelection, SeriesSource, Store};

fn temp_csv(tag: &str, contents: &str) -> PathBuf {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let path =
        std::env::temp_dir().join(format!("vizdeck_long_{}_{n}_{tag}.csv", std::process::id()));
    std::fs::write(&path, contents).unwrap();
    path
}

fn open(tag: &str, contents: &str, key: Option<&str>) -> Result<SeriesSource, String> {
    let path = temp_csv(tag, contents);
    let opts = CsvOptions {
        series_key: key.map(str::to_string),
        ..CsvOptions::default()
    };
    let r = SeriesSource::open(
        &SeriesSelection::CsvWith(path.clone(), opts),
        Pacing::WallClock,
    )
    .map_err(|e| e.to_string());
    std::fs::remove_file(&path).ok();
    r
}

/// Drains `src` to its end (at most 10 s).
fn drain(mut src: SeriesSource) -> (SeriesSource, Store) {
    let mut store = Store::default();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !src.is_finished() {
        src.drain_into(&mut store);
        assert!(Instant::now() < deadline, "the CSV did not finish");
        std::thread::sleep(Duration::from_millis(2));
    }
    src.drain_into(&mut store);
    assert_eq!(src.error(), None);
    (src, store)
}

/// Seconds since 1970-01-01 UTC of midnight on a civil date (days from civil).
fn epoch_day(y: i64, m: i64, d: i64) -> f64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * ((m + 9) % 12) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    ((era * 146_097 + doe - 719_468) * 86_400) as f64
}

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// The monthly-prices layout of a public stocks CSV: `symbol,date,price`, grouped by symbol,
/// dates like `Jan 1 2000`; 150 months each, so most rows stream after the first 100.
#[test]
fn stocks_split_by_their_first_column() {
    let symbols = ["MSFT", "AMZN", "IBM"];
    let price = |s: usize, k: usize| 10.0 * (s + 1) as f64 + k as f64 * 0.25;
    let mut text = String::from("symbol,date,price\n");
    for (s, sym) in symbols.iter().enumerate() {
        for k in 0..150 {
            let (y, m) = (2000 + k / 12, k % 12);
            text.push_str(&format!("{sym},{} 1 {y},{}\n", MONTHS[m], price(s, k)));
        }
    }
    let src = open("stocks", &text, None).unwrap();
    assert_eq!(src.series_key(), Some("symbol"));
    assert!(
        src.warning().unwrap_or_default().contains("'symbol'"),
        "{:?}",
        src.warning()
    );
    let (src, store) = drain(src);
    assert_eq!(src.names(), symbols);
    for (s, sym) in symbols.iter().enumerate() {
        let series = store.get(sym).unwrap();
        let got: Vec<(f64, f32)> = series.iter().collect();
        assert_eq!(got.len(), 150, "{sym}");
        for (k, &(t, v)) in got.iter().enumerate() {
            let want_t = epoch_day(2000 + (k / 12) as i64, (k % 12) as i64 + 1, 1);
            assert_eq!(t, want_t, "{sym} row {k}");
            assert_eq!(v, price(s, k) as f32, "{sym} row {k}");
        }
    }
}

/// A key in the middle, named by `--series-key`, two value columns, rows interleaved: series
/// `key/column`, each holding its own rows in order.
#[test]
fn named_key_with_two_value_columns() {
    let mut text = String::from("t,sensor,temp,hum\n");
    for k in 0..300 {
        let sensor = ["a", "b", "c"][k % 3];
        text.push_str(&format!("{},{sensor},{},{}\n", k as f64 * 0.5, k, 1000 + k));
    }
    let (src, store) = drain(open("named", &text, Some("sensor")).unwrap());
    assert_eq!(
        src.names(),
        ["a/temp", "a/hum", "b/temp", "b/hum", "c/temp", "c/hum"]
    );
    for (j, sensor) in ["a", "b", "c"].iter().enumerate() {
        let temp: Vec<(f64, f32)> = store
            .get(&format!("{sensor}/temp"))
            .unwrap()
            .iter()
            .collect();
        let hum: Vec<(f64, f32)> = store
            .get(&format!("{sensor}/hum"))
            .unwrap()
            .iter()
            .collect();
        assert_eq!(temp.len(), 100);
        assert_eq!(hum.len(), 100);
        for i in 0..100 {
            let k = 3 * i + j;
            assert_eq!(temp[i].0, k as f64 * 0.5);
            assert_eq!(hum[i].0, k as f64 * 0.5);
            assert_eq!(temp[i].1, k as f32);
            assert_eq!(hum[i].1, (1000 + k) as f32);
        }
    }
}

/// Without a key, a text column that repeats few values is offered; the file opens wide (one
/// series per numeric column).
#[test]
fn repeated_text_column_is_offered_as_key() {
    let mut text = String::from("t,sensor,value,note\n");
    for k in 0..120 {
        let sensor = ["north", "south", "east", "west"][k % 4];
        text.push_str(&format!("{k},{sensor},{k},row {k}\n"));
    }
    let (src, _store) = drain(open("offer", &text, None).unwrap());
    assert_eq!(src.names(), ["value"]);
    assert_eq!(src.series_key(), None);
    let offered: Vec<(&str, usize)> = src
        .key_candidates()
        .iter()
        .map(|k| (k.column.as_str(), k.values))
        .collect();
    // `note` has a different value on every row: not a key.
    assert_eq!(offered, [("sensor", 4)]);
}

#[test]
fn a_key_column_that_is_not_there_names_the_header() {
    let e = open("nokey", "t,value\n0,1\n1,2\n", Some("symbol"))
        .err()
        .unwrap();
    assert!(e.contains("'symbol'") && e.contains("t, value"), "{e}");
}

/// More key values than the series cap: the first MAX_SERIES series stream, the rows of the
/// rest are counted.
#[test]
fn key_values_beyond_the_cap_are_counted() {
    let extra = 76;
    let mut text = String::from("t,id,v\n");
    for k in 0..MAX_SERIES + extra {
        text.push_str(&format!("{k},id{k},{k}\n"));
    }
    // Every row a new id again: the second pass adds points, not series.
    for k in 0..MAX_SERIES + extra {
        text.push_str(&format!("{},id{k},{k}\n", k + 10_000));
    }
    let (src, store) = drain(open("cap", &text, Some("id")).unwrap());
    assert_eq!(src.names().len(), MAX_SERIES);
    assert_eq!(store.series().len(), MAX_SERIES);
    assert_eq!(src.series_refused(), 2 * extra as u64);
    assert_eq!(store.get("id1023").unwrap().len(), 2);
    assert!(store.get("id1024").is_none());
}

/// A long-format file too short to recognise: the error says how to split it.
#[test]
fn a_short_long_format_file_points_to_the_key_flag() {
    let text = "sym,ts,v\nA,2020-01-01T12:00:00Z,1\nB,2020-01-01T12:00:00Z,2\n";
    let e = open("short", text, None).err().unwrap();
    assert!(e.contains("--series-key 'sym'"), "{e}");
    let (src, store) = drain(open("short_key", text, Some("sym")).unwrap());
    assert_eq!(src.names(), ["A", "B"]);
    assert_eq!(store.get("B").unwrap().iter().next().unwrap().1, 2.0);
}

/// Issue 34: the weather file's split button said "4 values" for a column of 5: the count came
/// from the first 100 rows, and `fog` first appears at row 120. Counted over the whole file
/// once it is read: 5 (drizzle, rain, sun, snow, fog).
#[test]
fn the_split_offer_counts_the_values_of_the_whole_file() {
    let names = ["drizzle", "rain", "sun", "snow"];
    let mut text = String::from("date,precipitation,weather\n");
    for k in 0..300 {
        let day = format!("2012-{:02}-{:02}", 1 + k / 28, 1 + k % 28);
        let weather = if k == 119 { "fog" } else { names[k % 4] };
        text.push_str(&format!("{day},{}.{},{weather}\n", k % 11, k % 10));
    }
    let src = open("weather", &text, None).unwrap();
    // While only the first rows are read: the four values they hold.
    assert_eq!(src.key_candidates()[0].values, 4);
    let (src, store) = drain(src);
    let offered: Vec<(&str, usize)> = src
        .key_candidates()
        .iter()
        .map(|k| (k.column.as_str(), k.values))
        .collect();
    assert_eq!(offered, [("weather", 5)]);
    assert_eq!(store.get("precipitation").unwrap().len(), 300);
}
