//! The idle window: once nothing changes by itself, the deck asks for no more frames
//! (`Deck::next_redraw` is `OnInput`, or a finite time for a toast), and anything that does
//! change (an animating scene, a recording) keeps it drawing. The window's event loop follows
//! `next_redraw` (`ControlFlow::Wait`); the CPU it saves is measured by `benches/idle.sh`. A
//! scene fed from outside at any time (a live chart) is polled once per display interval and
//! drawn only when its input changed the image.

use crate::common;
use common::gpu;

use std::cell::Cell;
use std::rc::Rc;

use vizdeck::deck::{Deck, Output, Redraw};
use vizdeck::gpu::Gpu;
use vizdeck::gpu::frame::GpuFrame;
use vizdeck::scene::{FrameCtx, Scene, SceneError};

/// A scene that animates while the shared flag says so.
struct Still(Rc<Cell<bool>>);

impl Scene for Still {
    fn id(&self) -> &'static str {
        "still"
    }
    fn animating(&self) -> bool {
        self.0.get()
    }
    fn prepare(&mut self, _gpu: &mut GpuFrame<'_>, _frame: &FrameCtx) {}
    fn paint(&self, _pass: &mut wgpu::RenderPass<'_>, _frame: &FrameCtx) {}
    fn ui(&mut self, ui: &mut egui::Ui) {
        ui.label("still");
    }
    fn metrics(&self) -> serde_json::Value {
        serde_json::Value::Null
    }
    fn recreate_gpu(&mut self, _gpu: &Gpu) -> Result<(), SceneError> {
        Ok(())
    }
}

const SIZE: (u32, u32) = (320, 200);

/// The offscreen output the idle tests draw into.
struct Target(wgpu::Texture, wgpu::TextureView);

impl Target {
    fn new(gpu: &Gpu) -> Target {
        let (texture, view) = vizdeck::headless::offscreen_target(gpu, "test:idle", SIZE);
        Target(texture, view)
    }

    /// Frame `i` of `deck`, waited for; returns when the deck asks to draw next.
    fn frame(&self, gpu: &Gpu, deck: &mut Deck, i: u64) -> Redraw {
        let out = Output {
            view: &self.1,
            texture: Some(&self.0),
            size: SIZE,
            pixels_per_point: 1.0,
        };
        let (times, _) = deck.frame(gpu, &out, vizdeck::headless::raw_input(SIZE, i), 1.0 / 60.0);
        gpu.wait_idle();
        deck.end_frame(gpu, &times, std::time::Instant::now());
        deck.next_redraw()
    }
}

/// A deck showing a [`Still`] scene that animates while `moving` says so, overlay off.
fn still_deck(gpu: &Gpu, moving: Rc<Cell<bool>>) -> Deck {
    let cli = <vizdeck::cli::Cli as clap::Parser>::try_parse_from(["vizdeck", "--headless"])
        .expect("flags");
    let mut deck = Deck::new(gpu, vizdeck::headless::OUTPUT_FORMAT, 0, cli.scene_config());
    deck.set_overlay(false);
    deck.insert_scene(0, Box::new(Still(moving)));
    deck
}

#[test]
fn a_still_scene_waits_for_input_and_a_moving_one_does_not() {
    let gpu = gpu();
    let target = Target::new(&gpu);
    let moving = Rc::new(Cell::new(false));
    let mut deck = still_deck(&gpu, moving.clone());
    let frame = |deck: &mut Deck, i: u64| target.frame(&gpu, deck, i);
    // The first frames always draw (egui lays out twice at start).
    assert_eq!(frame(&mut deck, 0), Redraw::Now);
    let mut last = Redraw::Now;
    for i in 1..8 {
        last = frame(&mut deck, i);
    }
    assert_eq!(last, Redraw::OnInput, "a still scene with nothing pending");

    moving.set(true);
    assert_eq!(frame(&mut deck, 8), Redraw::Now, "an animating scene");
    moving.set(false);
    assert_eq!(frame(&mut deck, 9), Redraw::OnInput);

    // A toast: one more frame when it expires, not a frame loop.
    deck.toast("hello".into());
    match frame(&mut deck, 10) {
        Redraw::At(t) => {
            let left = t.saturating_duration_since(std::time::Instant::now());
            assert!(left.as_secs_f32() <= 4.0, "{left:?}");
        }
        other => panic!("toast: {other:?}"),
    }

    // A recording keeps the loop drawing (recorded frames are drawn frames), until it stops.
    let dir = std::env::temp_dir().join(format!("vizdeck-idle-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    deck.set_record_path(Some(dir.join("idle.csv")));
    deck.start_recording();
    assert!(deck.recording());
    assert_eq!(frame(&mut deck, 11), Redraw::Now, "recording");
    assert!(deck.stop_recording(&gpu).is_some());
    assert_ne!(frame(&mut deck, 12), Redraw::Now, "after the recording");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The interval after the window waited (idle, for input) is left out of the frame-time
/// statistics (the overlay showed "p99.9 12156 ms" after a file was analysed and the window
/// idled): a 300 ms pause after `note_wait` is not a frame time; the same pause without it is.
#[test]
fn idle_time_is_not_frame_time() {
    let gpu = gpu();
    let target = Target::new(&gpu);
    let mut deck = still_deck(&gpu, Rc::new(Cell::new(false)));
    let frame = |deck: &mut Deck, i: u64| {
        target.frame(&gpu, deck, i);
    };
    for i in 0..4 {
        frame(&mut deck, i);
    }
    let pause = std::time::Duration::from_millis(300);
    deck.note_wait();
    std::thread::sleep(pause);
    frame(&mut deck, 4);
    assert_eq!(deck.idle_intervals, 1);
    assert_eq!(deck.run_frame_ms.len(), 4);
    assert!(
        deck.run_frame_ms.iter().all(|&ms| ms < 300.0),
        "{:?}",
        deck.run_frame_ms
    );
    // Without a wait, a slow frame is a frame time.
    std::thread::sleep(pause);
    frame(&mut deck, 5);
    assert_eq!(deck.idle_intervals, 1);
    assert!(deck.run_frame_ms[4] >= 300.0, "{:?}", deck.run_frame_ms);
}

/// A scene fed from outside at any time (a live chart): it does not animate, it polls.
struct Fed {
    /// Whether the input that arrived changes the image.
    changed: Rc<Cell<bool>>,
    /// Polls asked of it.
    polls: Rc<Cell<u32>>,
}

impl Scene for Fed {
    fn id(&self) -> &'static str {
        "fed"
    }
    fn animating(&self) -> bool {
        false
    }
    fn polls_input(&self) -> bool {
        true
    }
    fn poll_input(&mut self) -> bool {
        self.polls.set(self.polls.get() + 1);
        self.changed.get()
    }
    fn prepare(&mut self, _gpu: &mut GpuFrame<'_>, _frame: &FrameCtx) {}
    fn paint(&self, _pass: &mut wgpu::RenderPass<'_>, _frame: &FrameCtx) {}
    fn ui(&mut self, ui: &mut egui::Ui) {
        ui.label("fed");
    }
    fn metrics(&self) -> serde_json::Value {
        serde_json::Value::Null
    }
    fn recreate_gpu(&mut self, _gpu: &Gpu) -> Result<(), SceneError> {
        Ok(())
    }
}

/// A scene that polls for input is looked at once per display interval (60 Hz, then 120 Hz:
/// 1/60 s, 1/120 s ahead), and a frame is due only when the poll says its input changed the
/// image; a toast's end, later than the next poll, does not replace the poll.
#[test]
fn a_polling_scene_is_looked_at_each_display_interval_and_drawn_on_change() {
    let gpu = gpu();
    let target = Target::new(&gpu);
    let changed = Rc::new(Cell::new(false));
    let polls = Rc::new(Cell::new(0));
    let cli = <vizdeck::cli::Cli as clap::Parser>::try_parse_from(["vizdeck", "--headless"])
        .expect("flags");
    let mut deck = Deck::new(
        &gpu,
        vizdeck::headless::OUTPUT_FORMAT,
        0,
        cli.scene_config(),
    );
    deck.set_overlay(false);
    deck.insert_scene(
        0,
        Box::new(Fed {
            changed: changed.clone(),
            polls: polls.clone(),
        }),
    );
    let mut last = Redraw::Now;
    for i in 0..8 {
        last = target.frame(&gpu, &mut deck, i);
    }
    for (hz, interval) in [(60.0, 1.0 / 60.0), (120.0, 1.0 / 120.0)] {
        deck.set_display_rate(hz);
        let before = std::time::Instant::now();
        let next = deck.next_redraw();
        let after = std::time::Instant::now();
        let Redraw::Poll(t) = next else {
            panic!("{hz} Hz: {next:?} (after {last:?})");
        };
        let ahead = std::time::Duration::from_secs_f64(interval);
        assert!((before + ahead..=after + ahead).contains(&t), "{hz} Hz");
    }
    assert!(!deck.poll_input(), "nothing changed");
    changed.set(true);
    assert!(deck.poll_input(), "input that changes the image");
    assert_eq!(polls.get(), 2);
    changed.set(false);
    deck.toast("hello".into());
    let next = target.frame(&gpu, &mut deck, 8);
    assert!(matches!(next, Redraw::Poll(_)), "{next:?}");
}
