//! The scenes' side panels scroll: with the pointer over a panel taller than the window, the
//! mouse wheel brings its last row into view (the particle panel's auto-rotate row was cut off
//! at 720 px before). Checked for every scene whose panel the deck lays out here — particles,
//! spectrogram, point cloud (the time series has its own work under way) — at 1280×720 and at
//! 1280×400, where every one of them is taller than the window. Each scene keeps its own scroll
//! position. Runs the real deck on the test GPU, with egui input events as a window sends them.

use crate::common;

use vizdeck::deck::{Deck, PanelScroll};

/// Over the side panel (default width 270 points), below the menu bar.
const OVER_PANEL: egui::Pos2 = egui::pos2(120.0, 300.0);

fn deck(gpu: &vizdeck::gpu::Gpu, scene: &str) -> Deck {
    let cli = <vizdeck::cli::Cli as clap::Parser>::try_parse_from([
        "vizdeck",
        "--headless",
        "--scene",
        scene,
        "--audio",
        "synthetic",
        "--particles",
        "4096",
        "--pointcloud",
        "synthetic:20k",
    ])
    .expect("flags");
    let mut deck = Deck::new(
        gpu,
        vizdeck::headless::OUTPUT_FORMAT,
        cli.scene_index(),
        cli.scene_config(),
    );
    deck.set_overlay(false);
    deck
}

/// The wheel turned down by `points` with the pointer over the side panel.
fn wheel_down(points: f32) -> Vec<egui::Event> {
    vec![
        egui::Event::PointerMoved(OVER_PANEL),
        egui::Event::MouseWheel {
            unit: egui::MouseWheelUnit::Point,
            delta: egui::vec2(0.0, -points),
            phase: egui::TouchPhase::Move,
            source: egui::MouseWheelSource::Wheel,
            modifiers: egui::Modifiers::default(),
        },
    ]
}

/// Draws 4 frames, then 16 with the wheel turned 400 points each, then 30 more for egui's smooth
/// scrolling to settle. Returns the panel's scroll state before and after.
fn scroll_down(
    gpu: &vizdeck::gpu::Gpu,
    deck: &mut Deck,
    size: (u32, u32),
) -> (PanelScroll, PanelScroll) {
    common::render_frames(gpu, deck, vizdeck::headless::OUTPUT_FORMAT, size, 4);
    let before = deck.side_panel_scroll().expect("a panel was laid out");
    common::render_frames_with(
        gpu,
        deck,
        vizdeck::headless::OUTPUT_FORMAT,
        size,
        50,
        |i, _| {
            if i < 16 {
                wheel_down(400.0)
            } else {
                Vec::new()
            }
        },
    );
    let after = deck.side_panel_scroll().expect("a panel was laid out");
    (before, after)
}

/// The panel is taller than its window (else there is nothing to check), starts at the top, and
/// after the wheel shows its last row: offset + shown height reaches the content's height.
fn assert_scrolled_to_the_end(
    scene: &str,
    size: (u32, u32),
    before: PanelScroll,
    after: PanelScroll,
) {
    assert!(
        before.content_height > before.viewport_height,
        "{scene} at {size:?}: the panel fits ({before:?}); nothing to scroll"
    );
    assert_eq!(before.offset, 0.0, "{scene}: starts at the top");
    assert!(
        after.offset > 0.0 && after.offset + after.viewport_height >= after.content_height - 1.0,
        "{scene} at {size:?}: the last row is not reachable: {after:?}"
    );
}

#[test]
fn particle_panel_scrolls_to_its_last_row_at_720_px() {
    let gpu = common::gpu();
    let mut d = deck(&gpu, "particles");
    let (before, after) = scroll_down(&gpu, &mut d, (1280, 720));
    assert_scrolled_to_the_end("particles", (1280, 720), before, after);
}

#[test]
fn every_scene_panel_scrolls_in_a_short_window() {
    let gpu = common::gpu();
    for scene in ["particles", "spectrogram", "pointcloud"] {
        let mut d = deck(&gpu, scene);
        let (before, after) = scroll_down(&gpu, &mut d, (1280, 400));
        assert_scrolled_to_the_end(scene, (1280, 400), before, after);
    }
}

#[test]
fn each_scene_keeps_its_own_scroll_position() {
    let gpu = common::gpu();
    let size = (1280, 400);
    let mut d = deck(&gpu, "particles");
    let (_, particles) = scroll_down(&gpu, &mut d, size);
    assert!(particles.offset > 0.0, "{particles:?}");
    let spectrogram = vizdeck::scene::index_of("spectrogram").expect("scene");
    let back = d.active;
    d.switch_to(spectrogram);
    common::render_frames(&gpu, &mut d, vizdeck::headless::OUTPUT_FORMAT, size, 4);
    let other = d.side_panel_scroll().expect("laid out");
    assert_eq!(
        other.offset, 0.0,
        "the spectrogram's panel starts at its top: {other:?}"
    );
    d.switch_to(back);
    common::render_frames(&gpu, &mut d, vizdeck::headless::OUTPUT_FORMAT, size, 4);
    let again = d.side_panel_scroll().expect("laid out");
    assert_eq!(
        again.offset, particles.offset,
        "the particle panel is where it was left"
    );
}
