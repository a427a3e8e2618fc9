//! Point markers of the time-series chart: which samples get a dot (isolated samples, sparse
//! series), worked out by hand from the data.

use vizdeck::scene::timeseries::markers::{MARKER_SCAN_MAX, marker_samples};
use vizdeck::series::store::Series;

fn marks(s: &Series, r0: f64, r1: f64, width: u32) -> Vec<(f64, f32)> {
    let mut out = Vec::new();
    marker_samples(s, r0, r1, width, &mut out);
    out
}

#[test]
fn a_single_point_gets_a_marker() {
    let mut s = Series::new("one", 100);
    s.push(5.0, 1.0);
    // The origin is the first sample: it sits at relative time 0.
    assert_eq!(marks(&s, -1.0, 1.0, 800), vec![(0.0, 1.0)]);
    // Out of view, empty or inverted views: none.
    assert!(marks(&s, 1.0, 2.0, 800).is_empty());
    assert!(marks(&s, 1.0, 1.0, 800).is_empty());
    assert!(marks(&s, 1.0, -1.0, 800).is_empty());
    assert!(marks(&s, f64::NAN, 1.0, 800).is_empty());
    assert!(marks(&Series::new("e", 10), 0.0, 1.0, 800).is_empty());
}

#[test]
fn fewer_points_than_pixels_are_all_marked() {
    let mut s = Series::new("sparse", 1000);
    for k in 0..10 {
        let v = match k {
            3 => f32::NAN,
            4 => f32::INFINITY,
            _ => k as f32,
        };
        s.push(k as f64, v);
    }
    // 10 samples in a 100-pixel view: every finite one (not the gap at 3, not +inf at 4).
    let want: Vec<(f64, f32)> = [0, 1, 2, 5, 6, 7, 8, 9]
        .iter()
        .map(|&k| (k as f64, k as f32))
        .collect();
    assert_eq!(marks(&s, 0.0, 10.0, 100), want);
    // The same 10 samples across 10 pixels are dense: no isolated sample (3 and 4 are a gap and
    // an infinity; 2 and 5 each have a finite neighbour on one side).
    assert!(marks(&s, 0.0, 10.0, 10).is_empty());
    // Half-open view [2, 6): samples 2, 5.
    assert_eq!(marks(&s, 2.0, 6.0, 100), vec![(2.0, 2.0), (5.0, 5.0)]);
}

#[test]
fn isolated_samples_between_gaps_are_marked_in_dense_series() {
    let n = 10_000;
    let mut s = Series::new("dense", n);
    let nan_at = [1, 499, 501, 700, 702, 2000, 2002];
    for k in 0..n {
        let v = if nan_at.contains(&k) { f32::NAN } else { 1.0 };
        s.push(k as f64, v);
    }
    // 10 000 samples across 500 pixels. Isolated: 0 (no sample before it, a gap after), 500
    // (gaps on both sides) and 701; 2001 is too, but lies outside the view [0, 2001).
    assert_eq!(
        marks(&s, 0.0, 2001.0, 500),
        vec![(0.0, 1.0), (500.0, 1.0), (701.0, 1.0)]
    );
    // A view starting at 500: the gap before it (outside the view) still counts.
    assert_eq!(
        marks(&s, 500.0, 1500.0, 200),
        vec![(500.0, 1.0), (701.0, 1.0)]
    );
    // A view ending at 701 (exclusive) and one starting just after: neither holds 701.
    assert_eq!(marks(&s, 600.0, 701.0, 50), vec![]);
    assert_eq!(marks(&s, 2001.0, 9000.0, 50), vec![(2001.0, 1.0)]);
}

#[test]
fn dense_series_without_gaps_and_huge_views_have_no_markers() {
    let mut s = Series::new("flat", 100_000);
    for k in 0..100_000 {
        s.push(k as f64, 0.5);
    }
    assert!(marks(&s, 0.0, 100_000.0, 1000).is_empty());
    // With gaps but more samples in view than the scan budget: not scanned.
    let n = MARKER_SCAN_MAX as usize + 10;
    let mut s = Series::new("big", n);
    for k in 0..n {
        s.push(k as f64, if k == 1 { f32::NAN } else { 0.0 });
    }
    assert!(marks(&s, 0.0, n as f64, 1000).is_empty());
    // A narrower view of it is scanned: sample 0 is isolated.
    assert_eq!(marks(&s, 0.0, 5000.0, 1000), vec![(0.0, 0.0)]);
}

#[test]
fn out_of_order_sparse_series_are_marked_by_time_range() {
    let mut s = Series::new("late", 100);
    for t in [0.0, 2.0, 1.0, 4.0, 3.0] {
        s.push(t, t as f32);
    }
    assert!(!s.is_ordered());
    // In storage order, filtered to [1, 4).
    assert_eq!(
        marks(&s, 1.0, 4.0, 100),
        vec![(2.0, 2.0), (1.0, 1.0), (3.0, 3.0)]
    );
    assert!(marks(&s, 0.0, 5.0, 5).is_empty());
}
