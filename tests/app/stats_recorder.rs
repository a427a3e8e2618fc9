//! Frame-stats CSV recorder: header, rows read back with the csv crate, summary, complete lines.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use vizdeck::stats::{CSV_HEADER, Capture, CaptureFormat, FrameRecord, Recorder, StatsError};

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
            scene: "particles",
            time_ms: 0.0,
            ms_between_presents: 1.5,
            cpu_busy_ms: 1.25,
            ingest_ms: 0.25,
            encode_ms: 0.125,
            steps: 1,
            gpu_compute_ms: Some(0.5),
            gpu_render_ms: Some(0.75),
            bytes_uploaded: 65536,
            ..Default::default()
        },
        FrameRecord {
            frame: 1,
            scene: "time series, M4",
            time_ms: 16.0,
            ms_between_presents: 16.0,
            cpu_busy_ms: 2.0,
            present_ms: 0.3,
            acquire_wait_ms: 4.5,
            update_ms: 0.5,
            steps: 2,
            gpu_render_ms: Some(1.25),
            gpu_ui_ms: Some(0.25),
            ..Default::default()
        },
        FrameRecord {
            frame: 2,
            scene: "spectrogram",
            time_ms: 36.0,
            ms_between_presents: 20.0,
            cpu_busy_ms: 3.0,
            ui_ms: 1.0,
            upload_ms: 0.5,
            submit_ms: 0.0625,
            steps: 8,
            dropped_steps: 3,
            dropped_sim_ms: 25.0,
            bytes_read_back: 48,
            device_reset: true,
            ..Default::default()
        },
    ]
}

fn temp_dir_file(tag: &str, text: &str) -> PathBuf {
    let p = temp_path(tag);
    std::fs::write(&p, text).unwrap();
    p
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
        "Application,FrameId,Scene,TimeInMs,MsBetweenPresents,MsCPUBusy,MsGPUTime,MsInPresentAPI,\
         MsAcquireWait,MsIngest,MsUpdate,MsUI,MsUpload,MsEncode,MsSubmit,MsGPUCompute,MsGPURender,\
         MsGPUUI,SimSteps,DroppedSteps,DroppedSimMs,BytesUploaded,BytesReadBack,DeviceReset"
    );
    let rows: Vec<Vec<String>> = rdr
        .records()
        .map(|r| r.unwrap().iter().map(String::from).collect())
        .collect();
    let expected = [
        [
            "vizdeck",
            "0",
            "particles",
            "0",
            "1.5",
            "1.25",
            "1.25",
            "0",
            "0",
            "0.25",
            "0",
            "0",
            "0",
            "0.125",
            "0",
            "0.5",
            "0.75",
            "",
            "1",
            "0",
            "0",
            "65536",
            "0",
            "0",
        ],
        [
            "vizdeck",
            "1",
            "time series, M4",
            "16",
            "16",
            "2",
            "1.5",
            "0.3",
            "4.5",
            "0",
            "0.5",
            "0",
            "0",
            "0",
            "0",
            "",
            "1.25",
            "0.25",
            "2",
            "0",
            "0",
            "0",
            "0",
            "0",
        ],
        [
            "vizdeck",
            "2",
            "spectrogram",
            "36",
            "20",
            "3",
            "",
            "0",
            "0",
            "0",
            "0",
            "1",
            "0.5",
            "0",
            "0.0625",
            "",
            "",
            "",
            "8",
            "3",
            "25",
            "0",
            "48",
            "1",
        ],
    ];
    assert_eq!(rows.len(), 3);
    for (got, want) in rows.iter().zip(&expected) {
        assert_eq!(got, want);
    }
    // Numbers read back exactly.
    assert_eq!(rows[1][7].parse::<f64>().unwrap(), 0.3);

    // Frame times (MsBetweenPresents): 1.5, 16, 20.
    assert_eq!(summary.frames, 3);
    assert_eq!(summary.p50_ms, 16.0);
    assert_eq!(summary.max_ms, 20.0);
    assert!((summary.duration_s - 0.0375).abs() < 1e-12);
    assert!((summary.mean_fps.unwrap() - 3.0 / 0.0375).abs() < 1e-9);

    // Round trip: the capture reads back as vizdeck's format with the same frame times.
    let cap = Capture::read(&path).unwrap();
    assert_eq!(cap.format, CaptureFormat::Vizdeck);
    assert_eq!(cap.frame_times_ms, [1.5, 16.0, 20.0]);
    assert_eq!(cap.summary(), summary);
    std::fs::remove_file(&path).ok();
}

#[test]
fn presentmon_csv_imports_ms_between_presents() {
    // PresentMon 1.x style columns, an NA row (skipped) and quoted application names.
    let text = "Application,ProcessID,SwapChainAddress,Runtime,SyncInterval,PresentFlags,\
                AllowsTearing,PresentMode,Dropped,TimeInSeconds,MsInPresentAPI,MsBetweenPresents,\
                MsBetweenDisplayChange,MsUntilRenderComplete,MsUntilDisplayed\n\
                \"game.exe\",1234,0x1,DXGI,1,0,0,Hardware: Legacy Flip,0,0.5,0.1,16.5,16.6,2.0,20.0\n\
                \"game.exe\",1234,0x1,DXGI,1,0,0,Hardware: Legacy Flip,1,0.52,0.1,NA,NA,2.0,NA\n\
                \"game.exe\",1234,0x1,DXGI,1,0,0,Hardware: Legacy Flip,0,0.53,0.1,33.25,33.3,2.0,20.0\n\
                \"game.exe\",1234,0x1,DXGI,1,0,0,Hardware: Legacy Flip,0,0.55,0.1,10,16.6,2.0,20.0\n";
    let path = temp_dir_file("presentmon", text);
    let cap = Capture::read(&path).unwrap();
    assert_eq!(cap.format, CaptureFormat::PresentMon);
    assert_eq!(cap.frame_times_ms, [16.5, 33.25, 10.0]);
    assert_eq!(cap.skipped_rows, 1);
    let s = cap.summary();
    assert_eq!(s.frames, 3);
    assert_eq!(s.p50_ms, 16.5);
    assert_eq!(s.max_ms, 33.25);
    std::fs::remove_file(&path).ok();
}

#[test]
fn bad_captures_name_the_file() {
    let missing = temp_path("missing");
    let e = Capture::read(&missing).unwrap_err().to_string();
    assert!(
        e.starts_with(&format!("stats file '{}'", missing.display())),
        "{e}"
    );
    assert_eq!(e.lines().count(), 1);
    let no_col = temp_dir_file("nocol", "a,b\n1,2\n");
    let e = Capture::read(&no_col).unwrap_err().to_string();
    assert!(e.contains("MsBetweenPresents"), "{e}");
    let bad = temp_dir_file("badnum", "MsBetweenPresents\n16\nfast\n");
    let e = Capture::read(&bad).unwrap_err().to_string();
    assert!(e.contains("line 3") && e.contains("'fast'"), "{e}");
    std::fs::remove_file(&no_col).ok();
    std::fs::remove_file(&bad).ok();
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
    assert_eq!(s.mean_fps, None);
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
