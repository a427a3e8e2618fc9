//! Shortcuts count with the modifiers held when their key went down: a quick Ctrl+Q (or
//! Shift+F12) whose modifier is released within the same frame still quits (or saves the window
//! PNG). The trial that found it: `xdotool key ctrl+q` on lavapipe at 20–40 FPS did nothing.
//! Runs the real deck on the test GPU with the events a window sends.

use crate::common;

use vizdeck::deck::Deck;

fn deck(gpu: &vizdeck::gpu::Gpu) -> Deck {
    let cli = <vizdeck::cli::Cli as clap::Parser>::try_parse_from([
        "vizdeck",
        "--headless",
        "--scene",
        "timeseries",
        "--series-count",
        "1",
    ])
    .expect("flags");
    Deck::new(
        gpu,
        vizdeck::headless::OUTPUT_FORMAT,
        cli.scene_index(),
        cli.scene_config(),
    )
}

/// Key `key` pressed and released with `modifiers`, both in one frame whose input's own
/// modifiers are already none (released).
fn tap(key: egui::Key, modifiers: egui::Modifiers) -> Vec<egui::Event> {
    [true, false]
        .into_iter()
        .map(|pressed| egui::Event::Key {
            key,
            physical_key: None,
            pressed,
            repeat: false,
            modifiers,
        })
        .collect()
}

/// Four frames of `d`, with `key` tapped with `modifiers` in the third.
fn frames_with_tap(
    gpu: &vizdeck::gpu::Gpu,
    d: &mut Deck,
    key: egui::Key,
    modifiers: egui::Modifiers,
) {
    common::render_frames_with(
        gpu,
        d,
        vizdeck::headless::OUTPUT_FORMAT,
        (320, 200),
        4,
        |i, _| {
            if i == 2 {
                tap(key, modifiers)
            } else {
                Vec::new()
            }
        },
    );
}

#[test]
#[ignore = "needs a GPU (lavapipe): run through `cargo xtask test`"]
fn a_quick_ctrl_q_quits_and_a_plain_q_does_not() {
    let _live = crate::common::live();
    let gpu = common::gpu();
    let mut d = deck(&gpu);
    frames_with_tap(&gpu, &mut d, egui::Key::Q, egui::Modifiers::NONE);
    assert!(!d.quit_requested());
    frames_with_tap(&gpu, &mut d, egui::Key::Q, egui::Modifiers::COMMAND);
    assert!(d.quit_requested());
}
