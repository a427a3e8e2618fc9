//! The spectrogram's view controls on the real deck (headless, lavapipe), with egui input events
//! as a window sends them: ctrl+wheel zooms the time axis around the pointer (it did nothing:
//! egui turns ctrl+wheel into a zoom gesture, not a scroll), and Space freezes the view while the
//! analysis goes on. What the view shows is read from the scene's report (`view`: columns across,
//! centre times of the oldest and newest column shown).

use crate::common;

use vizdeck::deck::Deck;
use vizdeck::scene::spectrogram::layout::Frame;

const SIZE: (u32, u32) = (1280, 720);

fn deck(gpu: &vizdeck::gpu::Gpu, args: &[&str]) -> Deck {
    let mut all = vec![
        "vizdeck",
        "--headless",
        "--scene",
        "spectrogram",
        "--fft-on",
        "cpu",
    ];
    all.extend_from_slice(args);
    let cli = <vizdeck::cli::Cli as clap::Parser>::try_parse_from(all).expect("flags");
    let mut deck = Deck::new(
        gpu,
        vizdeck::headless::OUTPUT_FORMAT,
        cli.scene_index(),
        cli.scene_config(),
    );
    deck.set_overlay(false);
    deck
}

/// The scene's `view` report.
fn view(deck: &Deck) -> serde_json::Value {
    deck.metrics()["spectrogram"]["view"].clone()
}

/// The point at fraction `fx` across the image (half way down it), in window points.
fn over_image(deck: &Deck, fx: f32) -> egui::Pos2 {
    let (x, y, w, h) = deck.scene_rect_px();
    let plot = Frame::for_pixels((w, h), 1.0, true).plot;
    egui::pos2(
        x as f32 + plot.left() + fx * plot.width(),
        y as f32 + plot.center().y,
    )
}

fn ctrl_wheel(at: egui::Pos2, points: f32) -> Vec<egui::Event> {
    let ctrl = egui::Modifiers {
        ctrl: true,
        command: true,
        ..Default::default()
    };
    vec![
        egui::Event::PointerMoved(at),
        egui::Event::MouseWheel {
            unit: egui::MouseWheelUnit::Point,
            delta: egui::vec2(0.0, points),
            phase: egui::TouchPhase::Move,
            source: egui::MouseWheelSource::Wheel,
            modifiers: ctrl,
        },
    ]
}

/// Time (s) at fraction `fx` across a view from `first` to `last` (column centres) of `columns`
/// columns: the image spans `columns` columns, the first centred half a column in.
fn time_at(v: &serde_json::Value, fx: f64) -> f64 {
    let (first, last) = (
        v["first_s"].as_f64().unwrap(),
        v["last_s"].as_f64().unwrap(),
    );
    let cols = v["columns"].as_f64().unwrap();
    let per_col = (last - first) / (cols - 1.0);
    first - per_col / 2.0 + fx * cols * per_col
}

#[test]
fn ctrl_wheel_zooms_the_time_axis_around_the_pointer() {
    let gpu = common::gpu();
    // A 10 s file at 48 kHz, shown whole: ⌊(480000 − 2048) / 512⌋ + 1 = 934 columns.
    let wav = std::env::temp_dir().join(format!("vizdeck-zoom-{}.wav", std::process::id()));
    let spec = hound::WavSpec {
        channels: 1,
        sample_rate: 48_000,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    };
    let mut w = hound::WavWriter::create(&wav, spec).unwrap();
    for i in 0..480_000 {
        let t = i as f64 / 48_000.0;
        w.write_sample(((0.3 * (std::f64::consts::TAU * 440.0 * t).sin()) * 32767.0) as i16)
            .unwrap();
    }
    w.finalize().unwrap();
    let mut d = deck(&gpu, &["--audio-file", wav.to_str().unwrap()]);
    let f = vizdeck::headless::OUTPUT_FORMAT;
    common::render_frames(&gpu, &mut d, f, SIZE, 10);
    let before = view(&d);
    assert_eq!(before["columns"], 934, "{before}");
    assert_eq!(before["fitted_to_file"], true);
    let at = over_image(&d, 0.25);
    // The wheel turned up (zoom in) with ctrl, 4 notches of 50 points, then frames for egui's
    // smoothing to settle. The side panel may change its width by a few points meanwhile (its
    // scroll bar), moving the image under the pointer: the pointer's place on the image is
    // taken from the layout of each frame.
    let mut rect_first = None;
    common::render_frames_with(&gpu, &mut d, f, SIZE, 40, |i, d| {
        if i == 1 {
            rect_first = Some(d.scene_rect_px());
        }
        if i < 4 {
            ctrl_wheel(at, 50.0)
        } else {
            vec![egui::Event::PointerMoved(at)]
        }
    });
    let after = view(&d);
    let fx_of = |rect: (u32, u32, u32, u32)| {
        let plot = Frame::for_pixels((rect.2, rect.3), 1.0, true).plot;
        f64::from((at.x - rect.0 as f32 - plot.left()) / plot.width())
    };
    let t_before = time_at(&before, fx_of(rect_first.expect("frames ran")));
    let t_after = time_at(&after, fx_of(d.scene_rect_px()));
    let _ = std::fs::remove_file(&wav);
    eprintln!("before {before}\nafter {after}");
    let cols = after["columns"].as_u64().unwrap();
    assert!(cols < 934 * 3 / 4, "zoomed in: {after}");
    assert_eq!(after["fitted_to_file"], false);
    // The time under the pointer stayed under it (within two columns: whole columns).
    let column = 512.0 / 48_000.0;
    assert!(
        (t_after - t_before).abs() <= 2.0 * column,
        "under the pointer: {t_before:.4} s before, {t_after:.4} s after"
    );
    // The view no longer reaches the file's end: it zoomed around the pointer, not the edge.
    assert!(after["last_s"].as_f64().unwrap() < before["last_s"].as_f64().unwrap() - 1.0);
    assert_eq!(
        after["frozen"], false,
        "a file that stands still is not frozen by a zoom"
    );
}

#[test]
fn space_freezes_the_view_and_the_analysis_goes_on() {
    let gpu = common::gpu();
    let mut d = deck(&gpu, &["--audio", "synthetic"]);
    let f = vizdeck::headless::OUTPUT_FORMAT;
    common::render_frames(&gpu, &mut d, f, SIZE, 30);
    let space = || egui::Event::Key {
        key: egui::Key::Space,
        physical_key: None,
        pressed: true,
        repeat: false,
        modifiers: egui::Modifiers::default(),
    };
    common::render_frames_with(&gpu, &mut d, f, SIZE, 1, |_, _| vec![space()]);
    let frozen = view(&d);
    let columns_at_freeze = d.metrics()["spectrogram"]["columns"].as_u64().unwrap();
    assert_eq!(frozen["frozen"], true, "{frozen}");
    // 60 frames (1 s of the synthetic signal at 48 kHz: 93.75 columns) while frozen.
    common::render_frames(&gpu, &mut d, f, SIZE, 60);
    let still = view(&d);
    let columns = d.metrics()["spectrogram"]["columns"].as_u64().unwrap();
    assert!(
        columns >= columns_at_freeze + 93,
        "analysed while frozen: {columns}"
    );
    assert_eq!(still["last_s"], frozen["last_s"], "the view stood still");
    assert_eq!(still["first_s"], frozen["first_s"]);
    common::render_frames_with(&gpu, &mut d, f, SIZE, 1, |_, _| vec![space()]);
    common::render_frames(&gpu, &mut d, f, SIZE, 2);
    let resumed = view(&d);
    assert_eq!(resumed["frozen"], false);
    assert_eq!(resumed["freezes"], 1);
    // Resumed: the newest column again, 1 s and more on from where the view stood.
    let gained = resumed["last_s"].as_f64().unwrap() - frozen["last_s"].as_f64().unwrap();
    assert!(gained >= 1.0, "{gained}");
}
