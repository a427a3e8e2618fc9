//! The time-series chart's view (lavapipe): a new source opens fitted to its own data whatever
//! an earlier source's zoom was (settings keep only the following window of each live source),
//! Home fits all after a zoom, the axis labels lie in margins outside the plot, a Parquet
//! timestamp's crosshair readout is its date-time, and a chart that does not move by itself is
//! drawn only when samples arrive in its view (the redraw decision on real UDP arrivals, and the
//! frames a deck draws over 20 messages).

use crate::common;
use common::gpu;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use vizdeck::deck::{Deck, Redraw};
use vizdeck::gpu::Gpu;
use vizdeck::gpu::upload::Strategy;
use vizdeck::scene::timeseries::{DEFAULT_WINDOW_S, TimeSeries, fitted_range};
use vizdeck::scene::{FrameCtx, Scene};
use vizdeck::series::source::net::NetOptions;
use vizdeck::series::source::payload::{PayloadFormat, PayloadOptions};
use vizdeck::series::{Pacing, SeriesSelection, SeriesSource};

fn frame(i: u64, size: (u32, u32)) -> FrameCtx {
    FrameCtx {
        frame: i,
        steps: 1,
        dt: 1.0 / 60.0,
        alpha: 0.0,
        advanced_s: 1.0 / 60.0,
        elapsed_s: 1.0 / 60.0,
        size,
    }
}

/// A CSV in the temp directory: `t,v` rows at times `times`.
fn csv(tag: &str, times: impl Iterator<Item = f64>) -> PathBuf {
    let path = std::env::temp_dir().join(format!("vizdeck-view-{}-{tag}.csv", std::process::id()));
    let mut text = String::from("t,v\n");
    for (k, t) in times.enumerate() {
        text.push_str(&format!("{t},{}\n", k % 7));
    }
    std::fs::write(&path, text).expect("write csv");
    path
}

/// A scene showing file `path` (opened as the side panel opens files), with `saved` settings
/// restored, after frames until the file is read and fitted (panics after 20 s).
fn file_scene(gpu: &Gpu, path: &std::path::Path, saved: Option<&serde_json::Value>) -> TimeSeries {
    let synth = SeriesSelection::Synthetic {
        series: 1,
        rate_hz: 1.0,
        seed: 1,
        kind: vizdeck::series::SynthKind::Walk,
    };
    let mut scene = TimeSeries::new(gpu, SeriesSource::open(&synth, Pacing::Driven).unwrap());
    scene
        .reopen(SeriesSelection::of_file(
            path.to_path_buf(),
            vizdeck::series::source::CsvOptions::default(),
        ))
        .expect("open the file");
    if let Some(saved) = saved {
        assert!(scene.restore_settings(saved).is_empty());
    }
    let start = Instant::now();
    let mut i = 0;
    while !scene.source().is_finished() || scene.follow {
        assert!(start.elapsed() < Duration::from_secs(20), "file not read");
        scene.ingest(&frame(i, (400, 200)));
        vizdeck::scene::prepare_standalone(
            gpu,
            &mut scene,
            &frame(i, (400, 200)),
            Strategy::WriteBuffer,
        );
        i += 1;
        std::thread::sleep(Duration::from_millis(2));
    }
    vizdeck::scene::prepare_standalone(
        gpu,
        &mut scene,
        &frame(i, (400, 200)),
        Strategy::WriteBuffer,
    );
    scene
}

/// A scene of the synthetic signals opened as a selection (so its window is kept by name).
fn synthetic_scene(gpu: &Gpu) -> TimeSeries {
    let sel = SeriesSelection::Synthetic {
        series: 1,
        rate_hz: 100.0,
        seed: 1,
        kind: vizdeck::series::SynthKind::Walk,
    };
    let mut scene = TimeSeries::new(gpu, SeriesSource::open(&sel, Pacing::Driven).unwrap());
    scene.reopen(sel).expect("synthetic");
    scene
}

#[test]
fn a_new_source_opens_fitted_to_its_own_data_not_the_saved_zoom() {
    let gpu = gpu();
    // Ten years of seconds (3.1536e8 s), then the settings an end of run saves.
    let ten_years = csv("years", (0..=40).map(|k| f64::from(k) * 7_884_000.0));
    let first = file_scene(&gpu, &ten_years, None);
    let v = first.view().unwrap();
    assert_eq!((v.t0, v.t1), fitted_range(0.0, 315_360_000.0));
    let saved = first.saved_settings();
    // The next run opens a 200 s file: fitted to 0 … 200 s (2 s either side), not 10 years.
    let short = csv("short", (0..=400).map(|k| f64::from(k) * 0.5));
    let second = file_scene(&gpu, &short, Some(&saved));
    let v = second.view().unwrap();
    assert_eq!((v.t0, v.t1), (-2.0, 202.0));
    assert!(!second.follow);
    // The one window of earlier versions, for every source, is not applied either.
    let old = serde_json::json!({"window_s": 315_360_000.0});
    let third = file_scene(&gpu, &short, Some(&old));
    let v = third.view().unwrap();
    assert_eq!((v.t0, v.t1), (-2.0, 202.0));
    // A live source after the file: its own default window, following.
    let mut live = synthetic_scene(&gpu);
    assert!(live.restore_settings(&saved).is_empty());
    assert_eq!(live.window_s, DEFAULT_WINDOW_S);
    assert!(live.follow);
    // A window chosen for the synthetic signals comes back for them (and only them).
    live.window_s = 30.0;
    let saved = live.saved_settings();
    assert_eq!(saved["windows"]["synthetic"], 30.0);
    let mut again = synthetic_scene(&gpu);
    assert!(again.restore_settings(&saved).is_empty());
    assert_eq!(again.window_s, 30.0);
    let fourth = file_scene(&gpu, &short, Some(&saved));
    let v = fourth.view().unwrap();
    assert_eq!((v.t0, v.t1), (-2.0, 202.0));
    // Out of range: skipped with a note.
    let bad = serde_json::json!({"windows": {"synthetic": -1.0}});
    let notes = again.restore_settings(&bad);
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert_eq!(again.window_s, 30.0);
    for p in [ten_years, short] {
        std::fs::remove_file(p).ok();
    }
}

#[test]
fn axis_labels_lie_outside_the_plot() {
    let gpu = gpu();
    let short = csv("labels", (0..=400).map(|k| f64::from(k) * 0.5));
    let scene = file_scene(&gpu, &short, None);
    std::fs::remove_file(&short).ok();
    let ctx = egui::Context::default();
    let area = egui::Rect::from_min_size(egui::pos2(270.0, 24.0), egui::vec2(600.0, 360.0));
    let mut checked = false;
    for _ in 0..2 {
        // The second pass has the fonts loaded.
        let mut out = ctx.run_ui(egui::RawInput::default(), |_| {
            let (plot, labels) = scene.axis_label_rects(&ctx, area).expect("a view");
            assert!(area.contains_rect(plot), "{plot:?} in {area:?}");
            // Margins: the value labels' column on the left, the time labels' row below.
            assert!(plot.left() >= area.left() + 24.0 && plot.bottom() <= area.bottom() - 12.0);
            assert!(labels.len() >= 4, "{labels:?}");
            for r in &labels {
                assert!(!r.intersects(plot), "label {r:?} over the plot {plot:?}");
                assert!(area.contains_rect(*r), "label {r:?} outside {area:?}");
            }
            checked = true;
        });
        // Nothing is painted here: the font atlas's upload is dropped (epaint asks for that).
        out.textures_delta.clear();
    }
    assert!(checked);
}

/// Home after a wheel zoom fits all again; the chart in a deck, as a user drives it.
#[test]
#[ignore = "needs a GPU (lavapipe): run through `cargo xtask test`"]
fn home_fits_all_after_a_zoom() {
    let gpu = gpu();
    let short = csv("home", (0..=400).map(|k| f64::from(k) * 0.5));
    let cli = <vizdeck::cli::Cli as clap::Parser>::try_parse_from([
        "vizdeck".to_string(),
        "--headless".into(),
        "--scene".into(),
        "timeseries".into(),
        "--series-file".into(),
        short.display().to_string(),
    ])
    .expect("flags");
    let mut deck = Deck::new(
        &gpu,
        vizdeck::headless::OUTPUT_FORMAT,
        cli.scene_index(),
        cli.scene_config(),
    );
    deck.set_overlay(false);
    let size = (800, 400);
    let view = |deck: &Deck| {
        let v = &deck.metrics()["timeseries"]["view"];
        (v["t0"].as_f64().unwrap(), v["t1"].as_f64().unwrap())
    };
    let mut fitted = false;
    for _ in 0..200 {
        common::render_frames(&gpu, &mut deck, vizdeck::headless::OUTPUT_FORMAT, size, 1);
        if deck.metrics()["timeseries"]["follow"] == false {
            fitted = true;
            break;
        }
    }
    assert!(fitted, "the file was not fitted");
    common::render_frames(&gpu, &mut deck, vizdeck::headless::OUTPUT_FORMAT, size, 1);
    assert_eq!(view(&deck), (-2.0, 202.0));
    // The wheel turned up over the chart: zoomed in around the pointer.
    common::render_frames_with(
        &gpu,
        &mut deck,
        vizdeck::headless::OUTPUT_FORMAT,
        size,
        30,
        |i, _| {
            let mut events = vec![egui::Event::PointerMoved(egui::pos2(600.0, 200.0))];
            if i < 10 {
                events.push(egui::Event::MouseWheel {
                    unit: egui::MouseWheelUnit::Point,
                    delta: egui::vec2(0.0, 100.0),
                    phase: egui::TouchPhase::Move,
                    source: egui::MouseWheelSource::Wheel,
                    modifiers: egui::Modifiers::default(),
                });
            }
            events
        },
    );
    let (a, b) = view(&deck);
    assert!(b - a < 100.0, "not zoomed: {a} … {b}");
    // Home: the whole file again.
    common::render_frames_with(
        &gpu,
        &mut deck,
        vizdeck::headless::OUTPUT_FORMAT,
        size,
        2,
        |i, _| {
            if i == 0 {
                [true, false]
                    .into_iter()
                    .map(|pressed| egui::Event::Key {
                        key: egui::Key::Home,
                        physical_key: None,
                        pressed,
                        repeat: false,
                        modifiers: egui::Modifiers::NONE,
                    })
                    .collect()
            } else {
                Vec::new()
            }
        },
    );
    assert_eq!(view(&deck), (-2.0, 202.0));
    std::fs::remove_file(&short).ok();
}

/// A Parquet column of `timestamp[ms, UTC]`: the crosshair reads the sample's date-time to the
/// millisecond (1_614_859_200_123 ms = 2021-03-04 12:00:00.123 UTC: 18,690 days after
/// 1970-01-01, 43,200.123 s into the day), not the column's type.
#[test]
fn a_parquet_timestamp_reads_as_its_date_time() {
    use arrow_array::{ArrayRef, Float64Array, RecordBatch, TimestampMillisecondArray};
    use std::sync::Arc;
    let gpu = gpu();
    let path = std::env::temp_dir().join(format!("vizdeck-view-{}.parquet", std::process::id()));
    let t: ArrayRef = Arc::new(
        TimestampMillisecondArray::from(vec![1_614_859_200_123, 1_614_859_260_123])
            .with_timezone("UTC"),
    );
    let v: ArrayRef = Arc::new(Float64Array::from(vec![1.0, 2.0]));
    let batch = RecordBatch::try_from_iter([("time", t), ("level", v)]).unwrap();
    let file = std::fs::File::create(&path).unwrap();
    let mut w = parquet::arrow::ArrowWriter::try_new(file, batch.schema(), None).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    let scene = file_scene(&gpu, &path, None);
    std::fs::remove_file(&path).ok();
    assert_eq!(
        scene.readout_time(0, 0.0),
        "2021-03-04 12:00:00.123 (1614859200123000000 ns)"
    );
    assert_eq!(
        scene.readout_time(0, 60.0),
        "2021-03-04 12:01:00.123 (1614859260123000000 ns)"
    );
}

/// A scene of a UDP source of JSON `{"t": seconds, "v": value}` messages.
fn udp_scene(gpu: &Gpu) -> (TimeSeries, std::net::UdpSocket, u16) {
    let port = std::net::UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let sel = SeriesSelection::Net(NetOptions {
        url: format!("udp://127.0.0.1:{port}"),
        payload: PayloadOptions {
            format: PayloadFormat::Json,
            time_field: Some("t".into()),
        },
    });
    let scene = TimeSeries::new(gpu, SeriesSource::open(&sel, Pacing::WallClock).unwrap());
    let tx = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    (scene, tx, port)
}

/// Sends `{"t": t, "v": 1}` and polls `scene` until the message is stored; returns what the
/// last poll said (a frame due or not).
fn arrive(scene: &mut TimeSeries, tx: &std::net::UdpSocket, port: u16, t: f64) -> bool {
    let before = scene.store().points_ingested();
    tx.send_to(
        format!("{{\"t\": {t}, \"v\": 1}}").as_bytes(),
        ("127.0.0.1", port),
    )
    .unwrap();
    let start = Instant::now();
    loop {
        let due = scene.poll_input();
        if scene.store().points_ingested() > before {
            return due;
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "message t = {t} not received"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
}

#[test]
fn a_still_chart_is_drawn_only_when_samples_arrive_in_view() {
    let gpu = gpu();
    let (mut scene, tx, port) = udp_scene(&gpu);
    let draw = |scene: &mut TimeSeries, i: u64| {
        scene.ingest(&frame(i, (400, 200)));
        vizdeck::scene::prepare_standalone(
            &gpu,
            scene,
            &frame(i, (400, 200)),
            Strategy::WriteBuffer,
        );
    };
    assert!(scene.polls_input() && !scene.animating());
    // The first sample is drawn; the chart then follows 0 … 10 s.
    assert!(arrive(&mut scene, &tx, port, 0.0));
    draw(&mut scene, 0);
    let v = scene.view().unwrap();
    assert_eq!((v.t0, v.t1), (0.0, DEFAULT_WINDOW_S));
    assert!(!scene.animating());
    // Nothing arrives: nothing to draw.
    for _ in 0..5 {
        assert!(!scene.poll_input());
    }
    // Following: a newer sample moves the view; a late one left of it does not.
    assert!(arrive(&mut scene, &tx, port, 30.0));
    draw(&mut scene, 1);
    let v = scene.view().unwrap();
    assert_eq!(v.t1, 30.0 + DEFAULT_WINDOW_S * 1e-9);
    assert!(!arrive(&mut scene, &tx, port, 5.0));
    assert!(!scene.animating());
    // Paused on 0 … 10 s: a sample inside is drawn, after it is not.
    scene.follow = false;
    draw(&mut scene, 2);
    let v = scene.view().unwrap();
    assert_eq!((v.t0, v.t1), (0.0, DEFAULT_WINDOW_S));
    assert!(!arrive(&mut scene, &tx, port, 40.0));
    assert!(!arrive(&mut scene, &tx, port, 10.5));
    assert!(arrive(&mut scene, &tx, port, 9.5));
    // Drawn: due no more.
    draw(&mut scene, 3);
    assert!(!scene.poll_input());
}

/// The window's loop (`app.rs`) over 20 messages sent 50 ms apart: frames come from the
/// arrivals (at most one per message, plus a few for egui), not continuously.
#[test]
#[ignore = "needs a GPU (lavapipe): run through `cargo xtask test`"]
fn a_live_chart_draws_a_frame_per_arrival_not_continuously() {
    let gpu = gpu();
    let port = std::net::UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let cli = <vizdeck::cli::Cli as clap::Parser>::try_parse_from([
        "vizdeck".to_string(),
        "--headless".into(),
        "--scene".into(),
        "timeseries".into(),
        "--series-source".into(),
        format!("udp://127.0.0.1:{port}"),
        "--payload".into(),
        "json".into(),
        "--time-field".into(),
        "t".into(),
    ])
    .expect("flags");
    let mut deck = Deck::new(
        &gpu,
        vizdeck::headless::OUTPUT_FORMAT,
        cli.scene_index(),
        cli.scene_config(),
    );
    deck.set_overlay(false);
    let size = (640, 360);
    // Frames with egui's clock moving on (its animations end), as the window's.
    let (texture, view) = vizdeck::headless::offscreen_target(&gpu, "test:live", size);
    let mut k = 0u64;
    let mut draw = |deck: &mut Deck| {
        let out = vizdeck::deck::Output {
            view: &view,
            texture: Some(&texture),
            size,
            pixels_per_point: 1.0,
        };
        let raw = vizdeck::headless::raw_input(size, k);
        let (times, _) = deck.frame(&gpu, &out, raw, 1.0 / 60.0);
        gpu.wait_idle();
        deck.end_frame(&gpu, &times, Instant::now());
        k += 1;
    };
    // The first frames (egui lays out twice), and until the deck waits.
    for _ in 0..6 {
        draw(&mut deck);
    }
    const N: usize = 20;
    let sender = std::thread::spawn(move || {
        let tx = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        for k in 0..N {
            let msg = format!("{{\"t\": {}, \"v\": {k}}}", k as f64 * 0.05);
            tx.send_to(msg.as_bytes(), ("127.0.0.1", port)).unwrap();
            std::thread::sleep(Duration::from_millis(50));
        }
    });
    let mut frames = 0;
    let mut polls = 0;
    // Frames by why they were drawn: now, after a poll, at a time.
    let mut why = [0usize; 3];
    let start = Instant::now();
    while start.elapsed() < Duration::from_millis(50 * N as u64 + 500) {
        match deck.next_redraw() {
            Redraw::Now => {
                draw(&mut deck);
                frames += 1;
                why[0] += 1;
            }
            Redraw::Poll(t) => {
                std::thread::sleep(t.saturating_duration_since(Instant::now()));
                polls += 1;
                if deck.poll_input() {
                    draw(&mut deck);
                    frames += 1;
                    why[1] += 1;
                }
            }
            Redraw::At(t) => {
                std::thread::sleep(t.saturating_duration_since(Instant::now()));
                draw(&mut deck);
                frames += 1;
                why[2] += 1;
            }
            Redraw::OnInput => panic!("a live source is polled, not left to input"),
        }
    }
    sender.join().unwrap();
    let ingested = deck.metrics()["timeseries"]["points_ingested"]
        .as_u64()
        .unwrap();
    assert_eq!(ingested, N as u64);
    assert!(
        (1..=N + 6).contains(&frames),
        "{frames} frames for {N} messages (now, polled, at: {why:?}; problem {:?}, metrics {})",
        deck.active_problem(),
        deck.metrics()["timeseries"]
    );
    assert!(polls > frames, "{polls} polls, {frames} frames");
}
