//! The time-series scene tells what it changed in the data it draws: values clamped to the f32
//! range, samples out of time order, and it marks points a line would not show (lavapipe).

use crate::common;
use common::gpu;

use vizdeck::gpu::Gpu;

use vizdeck::gpu::upload::Strategy;
use vizdeck::scene::timeseries::{Marker, TimeSeries};
use vizdeck::scene::{FrameCtx, Scene};
use vizdeck::series::{Pacing, SeriesSelection, SeriesSource};

fn frame(size: (u32, u32)) -> FrameCtx {
    FrameCtx {
        frame: 0,
        steps: 1,
        dt: 1.0 / 60.0,
        alpha: 0.0,
        advanced_s: 1.0 / 60.0,
        elapsed_s: 1.0 / 60.0,
        size,
    }
}

/// A scene over a CSV with `contents` (at most 100 rows: read whole while opening), after one
/// ingested and prepared frame of 200 × 100 pixels.
fn scene_of(gpu: &Gpu, tag: &str, contents: &str) -> TimeSeries {
    scene_sized(gpu, tag, contents, (200, 100))
}

fn scene_sized(gpu: &Gpu, tag: &str, contents: &str, size: (u32, u32)) -> TimeSeries {
    let path =
        std::env::temp_dir().join(format!("vizdeck-notices-{}-{tag}.csv", std::process::id()));
    std::fs::write(&path, contents).unwrap();
    let src = SeriesSource::open(&SeriesSelection::Csv(path.clone()), Pacing::Driven).unwrap();
    std::fs::remove_file(&path).ok();
    let mut scene = TimeSeries::new(gpu, src);
    scene.ingest(&frame(size));
    vizdeck::scene::prepare_standalone(gpu, &mut scene, &frame(size), Strategy::WriteBuffer);
    scene
}

#[test]
fn clamped_values_are_noticed_and_the_axis_spans_them() {
    let gpu = gpu();
    let scene = scene_of(&gpu, "huge", "t,v\n0,1\n1,1e308\n2,-1e308\n3,2\n");
    let problem = scene.problem().expect("a notice on the chart");
    assert!(
        problem.contains("2 value(s) beyond the f32 range"),
        "{problem}"
    );
    let m = scene.metrics();
    assert_eq!(m["values_clamped"], 2);
    assert_eq!(m["notices"].as_array().map(Vec::len), Some(1));
    // The axis spans ±f32::MAX (not a fallback of −1…1).
    let v = scene.view().unwrap();
    assert!(
        v.lo <= -(f32::MAX as f64) && v.hi >= f32::MAX as f64,
        "{v:?}"
    );
    assert!(v.lo.is_finite() && v.hi.is_finite());
}

/// A CSV of 60 s with one bad row (the first rows, read while opening): a notice naming its
/// line, the other rows charted, and the whole file in view.
#[test]
fn a_bad_row_is_noticed_and_the_rest_charted_whole() {
    let gpu = gpu();
    let mut text = String::from("t,v\n");
    for i in 0..=60 {
        if i == 30 {
            text.push_str("thirty,1\n"); // line 32
        } else {
            text.push_str(&format!("{i},{i}\n"));
        }
    }
    let scene = scene_of(&gpu, "badrow", &text);
    let problem = scene.problem().expect("a notice on the chart");
    assert!(
        problem.starts_with("1 row(s) not read, the others charted; first: series file")
            && problem.contains("line 32: time 'thirty' is not a number (row skipped)"),
        "{problem}"
    );
    let m = scene.metrics();
    assert_eq!(m["rows_skipped"], 1);
    assert_eq!(m["points_ingested"], 60);
    let v = scene.view().unwrap();
    assert!(v.t0 <= 0.0 && v.t1 >= 60.0, "whole file in view: {v:?}");
    // The window field reads the width in view: 60 s and 1 % either side.
    let w = m["window_s"].as_f64().unwrap();
    assert!((w - 61.2).abs() < 1e-9, "window_s {w}");
    assert!((v.t1 - v.t0 - w).abs() < 1e-9, "{v:?}");
}

#[test]
fn out_of_order_rows_are_noticed() {
    let gpu = gpu();
    let scene = scene_of(&gpu, "order", "t,v\n0,1\n2,2\n1,3\n3,4\n2.5,5\n");
    let problem = scene.problem().expect("a notice on the chart");
    // Rows 1 and 2.5 came after a later row.
    assert!(
        problem.contains("2 row(s) earlier than the row before them: sorted into place"),
        "{problem}"
    );
    assert_eq!(scene.metrics()["notices"].as_array().map(Vec::len), Some(1));
    assert_eq!(scene.metrics()["rows_sorted"], 2);
    assert!(scene.store().get("v").unwrap().is_ordered());
    // In order: no notice.
    let scene = scene_of(&gpu, "inorder", "t,v\n0,1\n1,2\n2,3\n");
    assert_eq!(scene.problem(), None);
    assert_eq!(scene.metrics()["notices"].as_array().map(Vec::len), Some(0));
}

#[test]
fn rows_late_across_batches_are_noticed_as_drawn_in_time_order() {
    let gpu = gpu();
    // Row 100 (the first row after the 100 read while opening) is 5 rows late: it reaches the
    // store after t = 99, in another batch.
    let mut csv = String::from("t,v\n");
    for k in 0..200 {
        let t = if k == 100 { 95 } else { k };
        csv += &format!("{t}e-2,{k}\n");
    }
    let path =
        std::env::temp_dir().join(format!("vizdeck-notices-{}-late.csv", std::process::id()));
    std::fs::write(&path, &csv).unwrap();
    let src = SeriesSource::open(&SeriesSelection::Csv(path.clone()), Pacing::Driven).unwrap();
    let mut scene = TimeSeries::new(&gpu, src);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while scene.store().points_ingested() < 200 {
        assert!(std::time::Instant::now() < deadline, "rows did not arrive");
        scene.ingest(&frame((200, 100)));
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    std::fs::remove_file(&path).ok();
    vizdeck::scene::prepare_standalone(&gpu, &mut scene, &frame((200, 100)), Strategy::WriteBuffer);
    let problem = scene.problem().expect("a notice on the chart");
    assert!(
        problem.contains("1 sample(s) earlier than the sample before them in 'v'")
            && problem.contains("drawn in time order"),
        "{problem}"
    );
}

#[test]
fn a_single_row_is_drawn_as_a_marker() {
    let gpu = gpu();
    let scene = scene_of(&gpu, "one", "t,v\n1700000000.5,42\n");
    // The chart origin is the sample itself: chart-relative time 0.
    assert_eq!(
        scene.markers(),
        &[Marker {
            series: 0,
            t: 0.0,
            value: 42.0
        }]
    );
    assert_eq!(scene.metrics()["markers"], 1);
    // Two series, 100 rows 10 ms apart, all in the 10 s window across 50 pixels: dense, no
    // gaps, no markers.
    let mut csv = String::from("t,a,b\n");
    for k in 0..100 {
        csv += &format!("{k}e-2,{},{}\n", k % 5, k % 7);
    }
    let scene = scene_sized(&gpu, "dense", &csv, (50, 50));
    assert!(scene.markers().is_empty(), "{:?}", scene.markers());
}
