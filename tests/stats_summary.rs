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
    assert!(close(s.mean_fps, 100.0 / 5.05));
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
    assert!(close(s.mean_fps, 100.0));
}

#[test]
fn no_frames_all_zero() {
    let s = Summary::from_frame_times(&[]);
    assert_eq!(s.frames, 0);
    for x in [
        s.duration_s,
        s.mean_fps,
        s.p50_ms,
        s.p95_ms,
        s.p99_ms,
        s.max_ms,
    ] {
        assert_eq!(x, 0.0);
    }
    let text = s.to_string();
    assert!(!text.contains("NaN") && !text.contains("inf"), "{text}");
    // Zero-length frames: no division by zero either.
    let z = Summary::from_frame_times(&[0.0, 0.0]);
    assert_eq!(z.frames, 2);
    assert_eq!(z.mean_fps, 0.0);
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
    assert!(close(s.mean_fps, 50.0));
    assert_eq!(
        s.to_string(),
        "frames 2, 0.0 s, mean 50.0 FPS, p50 10.00 ms, p95 30.00 ms, p99 30.00 ms, max 30.00 ms"
    );
}

#[test]
fn mean_fps_known_inputs() {
    // 60 frames of 16 ms: 0.96 s → 62.5 FPS.
    let s = Summary::from_frame_times(&[16.0; 60]);
    assert!(close(s.mean_fps, 62.5));
    assert!(close(s.duration_s, 0.96));
    // 3 frames of 10, 20, 70 ms: 0.1 s → 30 FPS (not the mean of per-frame FPS, 100/50/14.3).
    let s = Summary::from_frame_times(&[10.0, 20.0, 70.0]);
    assert!(close(s.mean_fps, 30.0));
    // Non-finite entries are ignored.
    let s = Summary::from_frame_times(&[10.0, f64::NAN, f64::INFINITY, 30.0]);
    assert_eq!(s.frames, 2);
    assert!(close(s.mean_fps, 50.0));
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
