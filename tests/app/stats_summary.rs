//! Frame-time summary: nearest-rank percentiles and mean FPS, worked out by hand.

use vizdeck::stats::{Live, Summary, percentile_nearest_rank};

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

#[test]
fn one_to_hundred() {
    let ms: Vec<f64> = (1..=100).map(f64::from).collect();
    let s = Summary::from_frame_times(&ms);
    assert_eq!(s.frames, 100);
    // rank = ceil(p/100 · 100) = p.
    assert_eq!(s.p50_ms, 50.0);
    assert_eq!(s.p95_ms, 95.0);
    assert_eq!(s.p99_ms, 99.0);
    assert_eq!(s.max_ms, 100.0);
    // Total 5050 ms → 100 frames / 5.05 s.
    assert!(close(s.duration_s, 5.05));
    assert!(close(s.mean_fps.unwrap(), 100.0 / 5.05));
    // Order of the input does not matter.
    let mut rev = ms.clone();
    rev.reverse();
    assert_eq!(Summary::from_frame_times(&rev), s);
}

#[test]
fn single_frame() {
    let s = Summary::from_frame_times(&[10.0]);
    assert_eq!(s.frames, 1);
    assert_eq!(
        (s.p50_ms, s.p95_ms, s.p99_ms, s.max_ms),
        (10.0, 10.0, 10.0, 10.0)
    );
    assert!(close(s.duration_s, 0.01));
    assert!(close(s.mean_fps.unwrap(), 100.0));
}

#[test]
fn no_frames_all_zero() {
    let s = Summary::from_frame_times(&[]);
    assert_eq!(s.frames, 0);
    assert_eq!(s.mean_fps, None);
    for x in [s.duration_s, s.p50_ms, s.p95_ms, s.p99_ms, s.max_ms] {
        assert_eq!(x, 0.0);
    }
    let text = s.to_string();
    assert!(!text.contains("NaN") && !text.contains("inf"), "{text}");
    // Zero-length frames: no division by zero either (and no made-up rate: see below).
    let z = Summary::from_frame_times(&[0.0, 0.0]);
    assert_eq!(z.frames, 2);
    assert_eq!(z.mean_fps, None);
}

/// A capture whose frames all last 0 ms (issue 34): the times are real (0 ms, 0 s), but a rate over
/// no time is undefined, so the average FPS and the lows as FPS are n/a (never "0.00 FPS") in the
/// struct, the table, the text and the JSON (`null`).
#[test]
fn zero_duration_frames_fps_na() {
    let s = Summary::from_frame_times(&[0.0; 120]);
    assert_eq!(s.frames, 120);
    assert!(!s.is_empty());
    assert_eq!(
        (s.duration_s, s.mean_ms, s.p99_ms, s.max_ms),
        (0.0, 0.0, 0.0, 0.0)
    );
    assert_eq!((s.low_1_ms, s.low_01_ms), (0.0, 0.0));
    assert_eq!((s.mean_fps, s.low_1_fps, s.low_01_fps), (None, None, None));
    let rows = s.table_rows();
    let row = |label: &str| rows.iter().find(|(l, _)| *l == label).unwrap().1.clone();
    assert_eq!(row("average FPS"), "n/a");
    assert_eq!(row("1% low (FPS)"), "n/a");
    // 120 frames < 1000: the 0.1 % low is marked, but n/a all the same.
    assert_eq!(row("0.1% low (FPS)"), "n/a");
    assert_eq!(row("1% low (ms)"), "0.000");
    assert_eq!(row("frames"), "120");
    let text = s.to_string();
    assert!(text.contains("mean n/a FPS"), "{text}");
    assert!(text.contains("(n/a FPS)"), "{text}");
    assert!(!text.contains("0.0 FPS") && !text.contains("inf"), "{text}");
    let v = serde_json::to_value(&s).unwrap();
    for key in ["mean_fps", "low_1_fps", "low_01_fps"] {
        assert!(v[key].is_null(), "{key}: {}", v[key]);
    }
    assert_eq!(v["p99_ms"], 0.0);
    assert_eq!(v["frames"], 120);

    // Some 0 ms frames among real ones: a rate again. 0 + 0 + 10 + 30 ms = 40 ms for 4 frames.
    let m = Summary::from_frame_times(&[0.0, 30.0, 0.0, 10.0]);
    assert!(close(m.mean_fps.unwrap(), 4.0 / 0.040));
    // 1 % low: the slowest ceil(0.04) = 1 frame, 30 ms.
    assert!(close(m.low_1_fps.unwrap(), 1000.0 / 30.0));
    // Frames of the smallest subnormal ms: the rate overflows f64; n/a rather than inf.
    let tiny = Summary::from_frame_times(&[5e-324; 3]);
    assert_eq!(tiny.mean_fps, None);
    assert!(!tiny.to_string().contains("inf"));
}

#[test]
fn two_frames() {
    let s = Summary::from_frame_times(&[30.0, 10.0]);
    // p50: rank ceil(1.0) = 1 → 10; p95: ceil(1.9) = 2 → 30; p99: ceil(1.98) = 2 → 30.
    assert_eq!(s.p50_ms, 10.0);
    assert_eq!(s.p95_ms, 30.0);
    assert_eq!(s.p99_ms, 30.0);
    assert_eq!(s.max_ms, 30.0);
    // 2 frames in 40 ms = 50 FPS.
    assert!(close(s.mean_fps.unwrap(), 50.0));
    assert_eq!(
        s.to_string(),
        "frames 2, 0.0 s, mean 50.0 FPS, p50 10.00 ms, p90 30.00* ms, p95 30.00* ms, \
         p99 30.00* ms, p99.9 30.00* ms, 1% low 30.00* ms (33.3 FPS), 0.1% low 30.00* ms \
         (33.3 FPS), stutters 1, max 30.00 ms"
    );
}

#[test]
fn mean_fps_known_inputs() {
    // 60 frames of 16 ms: 0.96 s → 62.5 FPS.
    let s = Summary::from_frame_times(&[16.0; 60]);
    assert!(close(s.mean_fps.unwrap(), 62.5));
    assert!(close(s.duration_s, 0.96));
    // 3 frames of 10, 20, 70 ms: 0.1 s → 30 FPS (not the mean of per-frame FPS, 100/50/14.3).
    let s = Summary::from_frame_times(&[10.0, 20.0, 70.0]);
    assert!(close(s.mean_fps.unwrap(), 30.0));
    // Non-finite entries are ignored.
    let s = Summary::from_frame_times(&[10.0, f64::NAN, f64::INFINITY, 30.0]);
    assert_eq!(s.frames, 2);
    assert!(close(s.mean_fps.unwrap(), 50.0));
}

#[test]
fn twenty_frames_p95_is_the_19th() {
    // n = 20: p95 rank ceil(19.0) = 19; p99 rank ceil(19.8) = 20; p50 rank 10.
    let ms: Vec<f64> = (1..=20).map(|i| f64::from(i) * 2.0).collect();
    let s = Summary::from_frame_times(&ms);
    assert_eq!(s.p50_ms, 20.0);
    assert_eq!(s.p95_ms, 38.0);
    assert_eq!(s.p99_ms, 40.0);
    assert_eq!(percentile_nearest_rank(&ms, 5.0), 2.0);
    assert_eq!(percentile_nearest_rank(&ms, 5.1), 4.0);
}

#[test]
fn summary_serializes_to_json() {
    let s = Summary::from_frame_times(&[10.0, 30.0]);
    let v = serde_json::to_value(&s).unwrap();
    assert_eq!(v["frames"], 2);
    assert_eq!(v["p95_ms"], 30.0);
    assert_eq!(v["max_ms"], 30.0);
}

#[test]
fn live_window_keeps_the_last_frames() {
    let mut live = Live::new(240);
    for i in 1..=100 {
        live.push(f64::from(i));
    }
    assert_eq!(live.percentile(50.0), 50.0);
    assert_eq!(live.percentile(95.0), 95.0);
    assert!(close(live.fps(), 100.0 / 5.05));
    // 300 more frames of 5 ms push everything else out.
    for _ in 0..300 {
        live.push(5.0);
    }
    assert_eq!(live.len(), 240);
    assert!(live.history().all(|x| x == 5.0));
    assert!(close(live.fps(), 200.0));
    assert_eq!(live.percentile(99.0), 5.0);
    // Order oldest → newest.
    let mut live = Live::new(4);
    for x in [1.0, 2.0, 3.0, 4.0, 5.0, 6.0] {
        live.push(x);
    }
    assert_eq!(live.history().collect::<Vec<_>>(), vec![3.0, 4.0, 5.0, 6.0]);
}

// ---- Full summary definitions (docs/recording.md, "Frame-time statistics"), values worked out by hand. ----

fn all_finite(s: &Summary) -> bool {
    let v = serde_json::to_value(s).unwrap();
    v.as_object()
        .unwrap()
        .values()
        .filter_map(|x| x.as_f64())
        .all(f64::is_finite)
}

/// No frames: no statistic (n/a, JSON `null`), and nothing "marked" as the slowest frame.
#[test]
fn zero_frames_are_na() {
    let s = Summary::from_frame_times(&[]);
    assert!(all_finite(&s));
    assert!(s.is_empty());
    assert!(s.needs_more_frames.is_empty());
    let v = serde_json::to_value(&s).unwrap();
    assert_eq!(v["frames"], 0);
    assert_eq!(v["duration_s"], 0.0);
    for key in [
        "mean_fps",
        "mean_ms",
        "min_ms",
        "p50_ms",
        "p90_ms",
        "p95_ms",
        "p99_ms",
        "p999_ms",
        "low_1_ms",
        "low_1_fps",
        "low_01_ms",
        "low_01_fps",
        "stutters",
        "max_ms",
    ] {
        assert!(v[key].is_null(), "{key}: {}", v[key]);
    }
    assert_eq!(s.to_string(), "frames 0, statistics n/a");
    assert!(!s.to_string().contains("NaN"));
    // +0, not −0 (an empty f64 sum is −0.0, which would print as "-0.0 s").
    assert!(s.duration_s == 0.0 && s.duration_s.is_sign_positive());
    assert!(!s.to_string().contains("-0.0"), "{s}");
}

#[test]
fn one_frame() {
    let s = Summary::from_frame_times(&[10.0]);
    assert_eq!(s.frames, 1);
    assert!(close(s.mean_fps.unwrap(), 100.0));
    for v in [
        s.p50_ms,
        s.p90_ms,
        s.p99_ms,
        s.p999_ms,
        s.low_1_ms,
        s.low_01_ms,
    ] {
        assert_eq!(v, 10.0);
    }
    assert!(close(s.low_1_fps.unwrap(), 100.0));
    assert_eq!(s.stutters, 0);
    assert!(s.is_marked("p50") && s.is_marked("low_0.1"));
    assert!(all_finite(&s));
}

#[test]
fn two_frames_full_summary() {
    let s = Summary::from_frame_times(&[30.0, 10.0]);
    // Sorted [10, 30]: p50 rank ceil(1.0) = 1, p90 rank ceil(1.8) = 2.
    assert_eq!(s.p50_ms, 10.0);
    assert_eq!(s.p90_ms, 30.0);
    assert_eq!(s.p999_ms, 30.0);
    // 1% low: k = ceil(2/100) = 1 slowest frame.
    assert_eq!(s.low_1_ms, 30.0);
    assert!(close(s.low_1_fps.unwrap(), 1000.0 / 30.0));
    // 2 × median = 20 ms; 30 > 20.
    assert_eq!(s.stutter_threshold_ms, 20.0);
    assert_eq!(s.stutters, 1);
    assert!(close(s.mean_fps.unwrap(), 50.0));
    assert!(!s.is_marked("p50"));
    assert!(s.is_marked("p90"));
    assert!(close(s.mean_ms, 20.0));
    assert_eq!(s.min_ms, 10.0);
}

#[test]
fn five_frames() {
    let s = Summary::from_frame_times(&[5.0, 1.0, 4.0, 2.0, 3.0]);
    assert_eq!(s.p50_ms, 3.0); // rank ceil(2.5) = 3
    assert_eq!(s.p90_ms, 5.0); // rank ceil(4.5) = 5
    assert!(close(s.mean_fps.unwrap(), 5.0 / 0.015));
    assert_eq!(s.stutters, 0); // threshold 6
    assert_eq!(s.low_1_ms, 5.0);
    assert!(s.is_marked("p90") && !s.is_marked("p50"));
}

#[test]
fn twenty_frames_marks() {
    let ms: Vec<f64> = (1..=20).map(|i| f64::from(i) * 2.0).collect();
    let s = Summary::from_frame_times(&ms);
    assert_eq!(s.p90_ms, 36.0); // rank 18
    assert_eq!(s.p95_ms, 38.0); // rank 19
    assert_eq!(s.p99_ms, 40.0); // rank ceil(19.8) = 20 = n: marked
    assert!(!s.is_marked("p95"));
    assert!(s.is_marked("p99"));
    assert_eq!(s.low_1_ms, 40.0);
}

#[test]
fn hundred_frames() {
    let ms: Vec<f64> = (1..=100).map(f64::from).collect();
    let s = Summary::from_frame_times(&ms);
    assert_eq!(
        (s.p50_ms, s.p90_ms, s.p95_ms, s.p99_ms),
        (50.0, 90.0, 95.0, 99.0)
    );
    assert_eq!(s.p999_ms, 100.0); // rank ceil(99.9) = 100
    assert_eq!(s.low_1_ms, 100.0); // k = 1
    assert_eq!(s.needs_more_frames, ["p99.9", "low_0.1"]);
    assert_eq!(s.stutters, 0);
}

#[test]
fn hundred_and_one_frames() {
    let ms: Vec<f64> = (1..=101).map(f64::from).collect();
    let s = Summary::from_frame_times(&ms);
    assert_eq!(s.p50_ms, 51.0); // rank ceil(50.5)
    assert_eq!(s.p90_ms, 91.0); // rank ceil(90.9)
    assert_eq!(s.p95_ms, 96.0); // rank ceil(95.95)
    assert_eq!(s.p99_ms, 100.0); // rank ceil(99.99)
    assert_eq!(s.p999_ms, 101.0); // rank ceil(100.899)
    assert_eq!(s.low_1_ms, 100.5); // k = ceil(1.01) = 2: (100 + 101) / 2
    assert!(close(
        s.mean_fps.unwrap(),
        101.0 / (101.0 * 102.0 / 2.0 / 1000.0)
    ));
}

#[test]
fn one_long_frame_among_short_ones() {
    let mut ms = vec![10.0; 999];
    ms.insert(500, 100.0);
    let s = Summary::from_frame_times(&ms);
    assert_eq!(s.frames, 1000);
    assert_eq!(
        (s.p50_ms, s.p99_ms, s.p999_ms, s.max_ms),
        (10.0, 10.0, 10.0, 100.0)
    );
    // 1% low: the slowest 10 frames: 100 + 9 × 10 = 190 → 19 ms; 0.1% low: the slowest one.
    assert!(close(s.low_1_ms, 19.0));
    assert!(close(s.low_1_fps.unwrap(), 1000.0 / 19.0));
    assert_eq!(s.low_01_ms, 100.0);
    assert!(close(s.low_01_fps.unwrap(), 10.0));
    assert_eq!(s.stutters, 1);
    assert!(close(s.duration_s, 10.09));
    assert!(close(s.mean_fps.unwrap(), 1000.0 / 10.09));
    assert!(s.needs_more_frames.is_empty());
}

#[test]
fn lows_on_1000_and_10_frames() {
    let ms: Vec<f64> = (1..=1000).map(f64::from).collect();
    let s = Summary::from_frame_times(&ms);
    assert!(close(s.low_1_ms, 995.5)); // mean of 991..=1000
    assert_eq!(s.low_01_ms, 1000.0);
    assert_eq!(s.p999_ms, 999.0); // rank 999
    let ms: Vec<f64> = (1..=10).map(f64::from).collect();
    let s = Summary::from_frame_times(&ms);
    assert_eq!((s.low_1_ms, s.low_01_ms), (10.0, 10.0));
    assert!(s.is_marked("low_1") && s.is_marked("low_0.1"));
    assert_eq!(s.p90_ms, 9.0);
    assert!(!s.is_marked("p90"));
}

#[test]
fn ties() {
    let s = Summary::from_frame_times(&[5.0, 10.0, 5.0, 10.0, 5.0, 10.0, 5.0, 10.0]);
    assert_eq!(s.p50_ms, 5.0); // rank 4
    assert_eq!(s.p90_ms, 10.0); // rank ceil(7.2) = 8
    assert_eq!(s.stutters, 0); // 10 is not over 2 × 5
    let s = Summary::from_frame_times(&[10.0, 10.0, 25.0, 10.0]);
    assert_eq!(s.p50_ms, 10.0);
    assert_eq!(s.stutters, 1);
}

#[test]
fn live_hdr_percentiles() {
    let mut live = Live::new(8);
    for i in 1..=1000 {
        live.push(f64::from(i) / 10.0); // 0.1 … 100 ms
    }
    assert_eq!(live.hdr_len(), 1000);
    // Nearest rank within the histogram's 3 significant digits.
    let within = |a: f64, b: f64| (a - b).abs() <= b * 1e-3 + 1e-3;
    assert!(
        within(live.hdr_percentile(50.0), 50.0),
        "{}",
        live.hdr_percentile(50.0)
    );
    assert!(within(live.hdr_percentile(99.0), 99.0));
    assert!(within(live.hdr_max(), 100.0));
    assert_eq!(live.len(), 8); // the window is separate
    live.reset();
    assert_eq!(
        (live.hdr_len(), live.hdr_percentile(50.0), live.len()),
        (0, 0.0, 0)
    );
}
