//! CSV time columns holding dates and date-times (issue 15): the formats of real public CSVs
//! (hourly `2010/01/01 00:00`, daily `2012-01-01` with a text column, monthly `Jan 1 2000`,
//! `01/02/2003 13:45:00.123`, ISO 8601 with zones) stream with their exact UTC times, worked
//! out here by Howard Hinnant's days-from-civil algorithm; an ambiguous day/month order is said;
//! a later date that does not read names its line.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use vizdeck::series::source::CsvOptions;
use vizdeck::series::{Pacing, SeriesSelection, SeriesSource, Store, TimeUnit};

fn temp_csv(tag: &str, contents: &str) -> PathBuf {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let path = std::env::temp_dir().join(format!(
        "vizdeck_csv_dates_{}_{n}_{tag}.csv",
        std::process::id()
    ));
    std::fs::write(&path, contents).unwrap();
    path
}

/// Opens `contents` as a CSV and drains it into a store (at most 5 s).
fn read(tag: &str, contents: &str) -> (SeriesSource, Store) {
    let path = temp_csv(tag, contents);
    let mut src = SeriesSource::open(&SeriesSelection::Csv(path.clone()), Pacing::WallClock)
        .unwrap_or_else(|e| panic!("{e}"));
    let mut store = Store::default();
    let deadline = Instant::now() + Duration::from_secs(5);
    while !src.is_finished() {
        src.drain_into(&mut store);
        assert!(Instant::now() < deadline, "the CSV did not finish");
        std::thread::sleep(Duration::from_millis(2));
    }
    src.drain_into(&mut store);
    std::fs::remove_file(&path).ok();
    (src, store)
}

/// Seconds since 1970-01-01T00:00:00 UTC of a civil date and time (days from civil).
fn epoch(y: i64, m: i64, d: i64, hh: i64, mm: i64, ss: f64) -> f64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * ((m + 9) % 12) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    (days * 86_400 + hh * 3600 + mm * 60) as f64 + ss
}

#[test]
fn hourly_dates_with_a_text_column() {
    let mut text = String::from("Date Time,Temperature,Station\n");
    for h in 0..48 {
        text.push_str(&format!(
            "2010/01/{:02} {:02}:00,{}.5,KSEA\n",
            1 + h / 24,
            h % 24,
            h
        ));
    }
    let (src, store) = read("hourly", &text);
    assert_eq!(src.names(), ["Temperature"]);
    let s = store.get("Temperature").unwrap();
    assert_eq!(s.len(), 48);
    assert_eq!(
        s.time_range(),
        Some((epoch(2010, 1, 1, 0, 0, 0.0), epoch(2010, 1, 2, 23, 0, 0.0)))
    );
    assert!(src.warning().is_none(), "{:?}", src.warning());
    assert_eq!(src.time_format(), Some("%Y/%m/%d %H:%M"));
}

#[test]
fn daily_monthly_and_iso_dates() {
    let (_, store) = read(
        "daily",
        "date,precipitation,weather\n2012-01-01,0.0,drizzle\n2012-01-02,10.9,rain\n2012-03-01,0.8,sun\n",
    );
    let s = store.get("precipitation").unwrap();
    assert_eq!(
        s.time_range(),
        Some((epoch(2012, 1, 1, 0, 0, 0.0), epoch(2012, 3, 1, 0, 0, 0.0)))
    );
    let (_, store) = read(
        "monthly",
        "date,price,symbol\nJan 1 2000,39.81,MSFT\nFeb 1 2000,36.35,MSFT\nDec 1 2000,21.69,MSFT\n",
    );
    let s = store.get("price").unwrap();
    assert_eq!(
        s.time_range(),
        Some((epoch(2000, 1, 1, 0, 0, 0.0), epoch(2000, 12, 1, 0, 0, 0.0)))
    );
    let (_, store) = read(
        "iso",
        "t,v\n2020-01-01T12:00:00+02:00,1\n2020-01-01T10:00:01Z,2\n2020-01-01T10:00:02.250Z,3\n",
    );
    let s = store.get("v").unwrap();
    assert_eq!(
        s.time_range(),
        Some((
            epoch(2020, 1, 1, 10, 0, 0.0),
            epoch(2020, 1, 1, 10, 0, 2.25)
        ))
    );
}

#[test]
fn ambiguous_day_month_is_read_month_first_and_said() {
    let (src, store) = read(
        "ambiguous",
        "when,v\n01/02/2003 13:45:00.123,1\n01/03/2003 13:45:00.500,2\n",
    );
    let s = store.get("v").unwrap();
    let (a, b) = s.time_range().unwrap();
    assert!((a - epoch(2003, 1, 2, 13, 45, 0.123)).abs() < 1e-6, "{a}");
    assert!((b - epoch(2003, 1, 3, 13, 45, 0.5)).abs() < 1e-6, "{b}");
    let w = src.warning().expect("the ambiguity is said");
    assert!(w.contains("month first") && w.contains("01/02/2003"), "{w}");
    // A day above 12 settles it: day first, nothing to say.
    let (src, store) = read("dayfirst", "when,v\n13/02/2003,1\n14/02/2003,2\n");
    assert!(src.warning().is_none(), "{:?}", src.warning());
    assert_eq!(
        store.get("v").unwrap().time_range(),
        Some((epoch(2003, 2, 13, 0, 0, 0.0), epoch(2003, 2, 14, 0, 0, 0.0)))
    );
}

#[test]
fn a_later_date_that_does_not_read_is_skipped_naming_its_line() {
    let mut text = String::from("date,v\n");
    for d in 0..300 {
        text.push_str(&format!("2012-01-01 00:{:02}:{:02},{d}\n", d / 60, d % 60));
    }
    text.push_str("2012-13-01 00:00:00,1\n"); // data row 301 → line 302
    text.push_str("2012-01-01 00:05:00,1\n"); // (a bad last row would be taken as half-written)
    let (src, store) = read("bad", &text);
    assert_eq!(src.error(), None);
    let w = src.warning().expect("the bad date is reported");
    assert!(
        w.contains("line 302") && w.contains("'2012-13-01 00:00:00'") && w.contains("date"),
        "{w}"
    );
    assert!(w.ends_with("(row skipped)"), "{w}");
    assert_eq!(src.rows_skipped(), 1);
    // The rows around it are charted.
    assert_eq!(store.get("v").unwrap().len(), 301);
}

/// `--time-format` settles what the recognised formats read wrong: the same ambiguous file read
/// day first, with nothing to say; a file that does not read in it names the format; a pattern
/// chrono does not accept is refused by the flag.
#[test]
fn a_given_time_format_reads_as_given() {
    use vizdeck::series::source::dates::DateFormat;
    let path = temp_csv(
        "given",
        "when,v\n01/02/2003 13:45:00.123,1\n01/03/2003 13:45:00.500,2\n",
    );
    let f = DateFormat::from_pattern("%d/%m/%Y %H:%M:%S%.f").unwrap();
    let mut src = SeriesSource::open(
        &SeriesSelection::CsvWith(
            path.clone(),
            CsvOptions {
                time_format: Some(f.clone()),
                time_unit: None,
                series_key: None,
                ..CsvOptions::default()
            },
        ),
        Pacing::WallClock,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let mut store = Store::default();
    let deadline = Instant::now() + Duration::from_secs(5);
    while !src.is_finished() {
        src.drain_into(&mut store);
        assert!(Instant::now() < deadline);
        std::thread::sleep(Duration::from_millis(2));
    }
    src.drain_into(&mut store);
    let (a, b) = store.get("v").unwrap().time_range().unwrap();
    assert!((a - epoch(2003, 2, 1, 13, 45, 0.123)).abs() < 1e-6, "{a}");
    assert!((b - epoch(2003, 3, 1, 13, 45, 0.5)).abs() < 1e-6, "{b}");
    assert!(src.warning().is_none(), "{:?}", src.warning());
    let iso = temp_csv("given-iso", "t,v\n2020-01-01,1\n2020-01-02,2\n");
    let err = SeriesSource::open(
        &SeriesSelection::CsvWith(
            iso,
            CsvOptions {
                time_format: Some(f),
                time_unit: None,
                series_key: None,
                ..CsvOptions::default()
            },
        ),
        Pacing::WallClock,
    )
    .err()
    .expect("an ISO file in a day-first format");
    assert!(err.to_string().contains("%d/%m/%Y %H:%M:%S%.f"), "{err}");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_vizdeck"))
        .args(["--headless", "--time-format", "%Q", "--frames", "1"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--time-format") && stderr.contains("%Q"),
        "{stderr}"
    );
}

/// Numbers in the time column: Unix time in ms (by magnitude) reads as ms; `--time-unit`
/// overrides; small numbers stay seconds.
#[test]
fn unix_times_read_in_the_unit_their_magnitude_says() {
    let (src, store) = read("ms", "timestamp,v\n1262304000000,1\n1262304001500,2\n");
    assert_eq!(src.time_unit(), Some(TimeUnit::Millis));
    assert_eq!(
        store.get("v").unwrap().time_range(),
        Some((epoch(2010, 1, 1, 0, 0, 0.0), epoch(2010, 1, 1, 0, 0, 1.5)))
    );
    let (src, store) = read("ns", "ts,v\n1262304000000000000,1\n1262304000000000250,2\n");
    assert_eq!(src.time_unit(), Some(TimeUnit::Nanos));
    let (a, b) = store.get("v").unwrap().time_range().unwrap();
    assert_eq!(a, epoch(2010, 1, 1, 0, 0, 0.0));
    assert!(b > a, "250 ns apart stay apart");
    let (src, _) = read("small", "t,v\n0,1\n1.5,2\n");
    assert_eq!(src.time_unit(), Some(TimeUnit::Seconds));
    assert_eq!(src.time_format(), None);
    let path = temp_csv("forced", "timestamp,v\n1262304000,1\n1262304001,2\n");
    let src = SeriesSource::open(
        &SeriesSelection::CsvWith(
            path,
            CsvOptions {
                time_format: None,
                time_unit: Some(TimeUnit::Millis),
                series_key: None,
                ..CsvOptions::default()
            },
        ),
        Pacing::WallClock,
    )
    .unwrap();
    assert_eq!(src.time_unit(), Some(TimeUnit::Millis));
}

/// `--time-zone`: dates written without a zone are that zone's wall clock; dates with one keep
/// their instant.
#[test]
fn time_zone_applies_to_dates_without_one() {
    use vizdeck::series::source::dates::Zone;
    let open_tz = |tag: &str, text: &str, zone: Zone| {
        let path = temp_csv(tag, text);
        let mut src = SeriesSource::open(
            &SeriesSelection::CsvWith(
                path.clone(),
                CsvOptions {
                    time_zone: zone,
                    ..CsvOptions::default()
                },
            ),
            Pacing::WallClock,
        )
        .unwrap();
        let mut store = Store::default();
        let deadline = Instant::now() + Duration::from_secs(5);
        while !src.is_finished() {
            src.drain_into(&mut store);
            assert!(Instant::now() < deadline);
            std::thread::sleep(Duration::from_millis(2));
        }
        src.drain_into(&mut store);
        std::fs::remove_file(&path).ok();
        store
            .get("v")
            .unwrap()
            .iter()
            .map(|(t, _)| t)
            .collect::<Vec<f64>>()
    };
    // 2010/01/01 00:00 at UTC+05:30 is 2009-12-31 18:30 UTC.
    let naive = "t,v\n2010/01/01 00:00,1\n2010/01/01 01:00,2\n";
    let got = open_tz("tz_naive", naive, Zone::Fixed(19_800));
    let t0 = epoch(2010, 1, 1, 0, 0, 0.0) - 19_800.0;
    assert_eq!(got, [t0, t0 + 3600.0]);
    assert_eq!(
        open_tz("tz_utc", naive, Zone::Utc),
        [t0 + 19_800.0, t0 + 19_800.0 + 3600.0]
    );
    let zoned = "t,v\n2010-01-01T00:00:00+01:00,1\n";
    assert_eq!(
        open_tz("tz_zoned", zoned, Zone::Fixed(19_800)),
        [epoch(2010, 1, 1, 0, 0, 0.0) - 3600.0]
    );
}
