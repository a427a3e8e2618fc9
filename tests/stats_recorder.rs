//! Frame-stats CSV recorder: header, rows read back with the csv crate, summary, complete lines.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use vizdeck::stats::{CSV_HEADER, FrameRecord, Recorder, StatsError};

fn temp_path(tag: &str) -> PathBuf {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    std::env::temp_dir().join(format!(
        "vizdeck_stats_{}_{n}_{tag}.csv",
        std::process::id()
    ))
}

fn records() -> [FrameRecord; 3] {
    [
        FrameRecord {
            frame: 0,
            time_s: 0.0,
            scene: "particles",
            cpu_frame_ms: 1.5,
            update_ms: 0.25,
            encode_ms: 0.125,
            present_interval_ms: 0.0,
            steps: 1,
            dropped_steps: 0,
            gpu_compute_ms: Some(0.5),
            gpu_render_ms: Some(0.75),
        },
        FrameRecord {
            frame: 1,
            time_s: 0.016,
            scene: "time series, M4",
            cpu_frame_ms: 2.0,
            update_ms: 0.5,
            encode_ms: 0.3,
            present_interval_ms: 16.0,
            steps: 2,
            dropped_steps: 0,
            gpu_compute_ms: None,
            gpu_render_ms: Some(1.25),
        },
        FrameRecord {
            frame: 2,
            time_s: 0.036,
            scene: "spectrogram",
            cpu_frame_ms: 3.0,
            update_ms: 1.0,
            encode_ms: 0.5,
            present_interval_ms: 20.0,
            steps: 8,
            dropped_steps: 3,
            gpu_compute_ms: None,
            gpu_render_ms: None,
        },
    ]
}

#[test]
fn header_and_three_rows_read_back() {
    let path = temp_path("three");
    let mut rec = Recorder::create(&path).unwrap();
    for r in &records() {
        rec.push(r).unwrap();
    }
    let summary = rec.finish().unwrap();

    let mut rdr = csv::Reader::from_path(&path).unwrap();
    let header: Vec<String> = rdr.headers().unwrap().iter().map(String::from).collect();
    assert_eq!(header, CSV_HEADER);
    assert_eq!(
        CSV_HEADER.join(","),
        "frame,time_s,scene,cpu_frame_ms,update_ms,encode_ms,present_interval_ms,steps,dropped_steps,gpu_compute_ms,gpu_render_ms"
    );
    let rows: Vec<Vec<String>> = rdr
        .records()
        .map(|r| r.unwrap().iter().map(String::from).collect())
        .collect();
    let expected = [
        vec![
            "0",
            "0",
            "particles",
            "1.5",
            "0.25",
            "0.125",
            "0",
            "1",
            "0",
            "0.5",
            "0.75",
        ],
        vec![
            "1",
            "0.016",
            "time series, M4",
            "2",
            "0.5",
            "0.3",
            "16",
            "2",
            "0",
            "",
            "1.25",
        ],
        vec![
            "2",
            "0.036",
            "spectrogram",
            "3",
            "1",
            "0.5",
            "20",
            "8",
            "3",
            "",
            "",
        ],
    ];
    assert_eq!(rows.len(), 3);
    for (got, want) in rows.iter().zip(&expected) {
        assert_eq!(got, want);
    }
    // Numbers read back exactly.
    assert_eq!(rows[1][1].parse::<f64>().unwrap(), 0.016);
    assert_eq!(rows[1][5].parse::<f64>().unwrap(), 0.3);

    // Frame times: cpu 1.5 for the first frame (no present interval yet), then 16 and 20.
    assert_eq!(summary.frames, 3);
    assert_eq!(summary.p50_ms, 16.0);
    assert_eq!(summary.max_ms, 20.0);
    assert!((summary.duration_s - 0.0375).abs() < 1e-12);
    assert!((summary.mean_fps - 3.0 / 0.0375).abs() < 1e-9);
    std::fs::remove_file(&path).ok();
}

#[test]
fn rows_are_on_disk_after_each_push_and_after_drop() {
    let path = temp_path("flush");
    let mut rec = Recorder::create(&path).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text, format!("{}\n", CSV_HEADER.join(",")));
    let [a, b, _] = records();
    rec.push(&a).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.lines().count(), 2);
    assert!(text.ends_with('\n'));
    rec.push(&b).unwrap();
    assert_eq!(rec.frames(), 2);
    assert_eq!(rec.frame_times(), &[1.5, 16.0]);
    drop(rec);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.ends_with('\n'));
    assert_eq!(text.lines().count(), 3);
    assert_eq!(csv::Reader::from_path(&path).unwrap().records().count(), 2);
    std::fs::remove_file(&path).ok();
}

#[test]
fn empty_recording_summary_is_zero() {
    let path = temp_path("empty");
    let rec = Recorder::create(&path).unwrap();
    let s = rec.finish().unwrap();
    assert_eq!(s.frames, 0);
    assert_eq!(s.mean_fps, 0.0);
    std::fs::remove_file(&path).ok();
}

#[test]
fn create_in_missing_directory_is_an_error() {
    let path = std::env::temp_dir()
        .join("vizdeck_no_such_dir_for_stats")
        .join("frames.csv");
    let err = Recorder::create(&path).err().expect("must fail");
    assert!(matches!(err, StatsError::Create { .. }));
    let msg = err.to_string();
    assert!(
        msg.starts_with(&format!("stats file '{}': cannot create", path.display())),
        "{msg}"
    );
}
