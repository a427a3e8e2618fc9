//! PNGs asked for from the View menu (F12, Shift+F12): the scene PNG is the scene panel as the
//! same frame draws it with the stats overlay off — compared pixel for pixel with a second deck
//! that never shows the overlay — while a third deck, overlay on, shows that the overlay would
//! have been in that crop. The window PNG is the whole output as shown. Either way the toast
//! names the file by its full path, and the file is there. Runs the real deck on the test GPU
//! (the spectrogram of the synthetic signal, FFT on the CPU: the same image every run).

use crate::common;
use common::read_png;

use std::path::{Path, PathBuf};

use vizdeck::deck::{Deck, PngKind};
use vizdeck::ui::UiCommand;

const SIZE: (u32, u32) = (640, 360);
/// The PNG is asked for before this frame (in a window: by the frame before's UI), so this frame
/// is drawn for it; it is the last one drawn.
const ASK_AT: u64 = 15;
const FRAMES: u64 = ASK_AT + 1;

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("vizdeck-png-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

fn deck(gpu: &vizdeck::gpu::Gpu, overlay: bool) -> Deck {
    let cli = <vizdeck::cli::Cli as clap::Parser>::try_parse_from([
        "vizdeck",
        "--headless",
        "--scene",
        "spectrogram",
        "--audio",
        "synthetic",
        "--fft-on",
        "cpu",
    ])
    .expect("flags");
    let mut deck = Deck::new(
        gpu,
        vizdeck::headless::OUTPUT_FORMAT,
        cli.scene_index(),
        cli.scene_config(),
    );
    deck.set_overlay(overlay);
    deck
}

/// `FRAMES` frames of `deck`; with `ask`, that PNG is asked for (as the View menu does) before
/// frame `ASK_AT`. Returns the last output (RGBA8).
fn run(gpu: &vizdeck::gpu::Gpu, deck: &mut Deck, ask: Option<PngKind>) -> Vec<u8> {
    common::render_frames_with(
        gpu,
        deck,
        vizdeck::headless::OUTPUT_FORMAT,
        SIZE,
        FRAMES,
        |i, d| {
            if i == ASK_AT
                && let Some(kind) = ask
            {
                d.apply(gpu, UiCommand::SavePng(kind));
            }
            Vec::new()
        },
    )
}

/// The pixels of `rect` (x, y, w, h) of an output of `SIZE`.
fn crop(rgba: &[u8], rect: (u32, u32, u32, u32)) -> Vec<u8> {
    let (x, y, w, h) = rect;
    let mut out = Vec::new();
    for row in y..y + h {
        let start = ((row * SIZE.0 + x) * 4) as usize;
        out.extend_from_slice(&rgba[start..start + (w * 4) as usize]);
    }
    out
}

/// Waits for the PNG workers, then reads the toast: `saved <full path>`. Returns the path.
fn saved_path(gpu: &vizdeck::gpu::Gpu, deck: &mut Deck, in_dir: &Path, prefix: &str) -> PathBuf {
    deck.finish_screenshots(gpu);
    let toast = deck.last_toast().expect("a toast").to_string();
    let path = PathBuf::from(
        toast
            .strip_prefix("saved ")
            .unwrap_or_else(|| panic!("toast: {toast}")),
    );
    assert!(path.is_absolute(), "toast gives the full path: {toast}");
    assert!(path.exists(), "{toast}: no such file");
    assert_eq!(path.parent(), Some(in_dir), "{toast}");
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    assert!(name.starts_with(prefix) && name.ends_with(".png"), "{name}");
    path
}

#[test]
fn scene_png_leaves_out_the_overlay_and_the_toast_gives_its_full_path() {
    let gpu = common::gpu();
    let out_dir = dir("scene");

    let mut shot = deck(&gpu, true);
    shot.set_png_dir(Some(out_dir.clone()));
    let shown = run(&gpu, &mut shot, Some(PngKind::Scene));
    let rect = shot.scene_rect_px();
    let path = saved_path(&gpu, &mut shot, &out_dir, "vizdeck-spectrogram-");
    let (w, h, png) = read_png(&path);
    assert_eq!((w, h), (rect.2, rect.3), "the PNG is the scene rect");

    // The reference: the same frame of a deck that never draws the overlay.
    let mut plain = deck(&gpu, false);
    let reference = crop(&run(&gpu, &mut plain, None), plain.scene_rect_px());
    assert_eq!(plain.scene_rect_px(), rect);
    assert!(
        png == reference,
        "the scene PNG differs from the scene drawn without the overlay"
    );
    // What the deck showed in that frame is what went into the PNG.
    assert!(crop(&shown, rect) == reference);

    // And the overlay would have been in that crop: the same frame with the overlay on differs.
    let mut with_overlay = deck(&gpu, true);
    let overlaid = crop(&run(&gpu, &mut with_overlay, None), rect);
    let differing = overlaid
        .chunks(4)
        .zip(reference.chunks(4))
        .filter(|(a, b)| a != b)
        .count();
    assert!(
        differing > 1000,
        "the overlay covers {differing} pixels of the scene"
    );
    let _ = std::fs::remove_dir_all(&out_dir);
}

/// A deck as made (no `set_overlay` call, as a run without `--overlay` starts) draws no stats
/// overlay: its whole output is that of a deck told to hide it, and differs from one showing it
/// in the overlay's corner (issue 34: the overlay covered data in every scene).
#[test]
fn overlay_is_hidden_by_default() {
    let gpu = common::gpu();
    let cli = <vizdeck::cli::Cli as clap::Parser>::try_parse_from([
        "vizdeck",
        "--headless",
        "--scene",
        "spectrogram",
        "--audio",
        "synthetic",
        "--fft-on",
        "cpu",
    ])
    .expect("flags");
    let mut fresh = Deck::new(
        &gpu,
        vizdeck::headless::OUTPUT_FORMAT,
        cli.scene_index(),
        cli.scene_config(),
    );
    // The scene panel (the side panel's live figures differ from run to run).
    let rect = {
        let _ = run(&gpu, &mut fresh, None);
        fresh.scene_rect_px()
    };
    let mut fresh = Deck::new(
        &gpu,
        vizdeck::headless::OUTPUT_FORMAT,
        cli.scene_index(),
        cli.scene_config(),
    );
    let default_out = crop(&run(&gpu, &mut fresh, None), rect);
    let hidden = crop(&run(&gpu, &mut deck(&gpu, false), None), rect);
    assert!(default_out == hidden, "a new deck draws the overlay");
    let shown = crop(&run(&gpu, &mut deck(&gpu, true), None), rect);
    let differing = shown
        .chunks(4)
        .zip(hidden.chunks(4))
        .filter(|(a, b)| a != b)
        .count();
    assert!(differing > 1000, "the overlay covers {differing} pixels");
}

#[test]
fn window_png_is_the_whole_output_as_shown() {
    let gpu = common::gpu();
    let out_dir = dir("window");
    let mut d = deck(&gpu, true);
    d.set_png_dir(Some(out_dir.clone()));
    let shown = run(&gpu, &mut d, Some(PngKind::Window));
    let path = saved_path(&gpu, &mut d, &out_dir, "vizdeck-window-");
    let (w, h, png) = read_png(&path);
    assert_eq!((w, h), SIZE);
    assert!(
        png == shown,
        "the window PNG is the frame as drawn, overlay included"
    );
    let _ = std::fs::remove_dir_all(&out_dir);
}

#[test]
fn png_names_do_not_overwrite() {
    let d = dir("names");
    let first = vizdeck::deck::png_path(Some(&d), "particles", 1700000000, None);
    assert_eq!(first, d.join("vizdeck-particles-1700000000.png"));
    // Asked for in the same second and not written yet: another name.
    let second = vizdeck::deck::png_path(Some(&d), "particles", 1700000000, Some(&first));
    assert_eq!(second, d.join("vizdeck-particles-1700000000-2.png"));
    std::fs::write(&first, b"x").unwrap();
    std::fs::write(&second, b"x").unwrap();
    let third = vizdeck::deck::png_path(Some(&d), "particles", 1700000000, None);
    assert_eq!(third, d.join("vizdeck-particles-1700000000-3.png"));
    // Relative directories become absolute.
    let rel = vizdeck::deck::png_path(Some(Path::new("some-dir")), "window", 1, None);
    assert!(
        rel.is_absolute() && rel.ends_with("some-dir/vizdeck-window-1.png"),
        "{}",
        rel.display()
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_png_that_cannot_be_written_says_so_with_its_path() {
    let gpu = common::gpu();
    let missing = std::env::temp_dir().join(format!(
        "vizdeck-png-missing-{}/no/such",
        std::process::id()
    ));
    let mut d = deck(&gpu, true);
    d.set_png_dir(Some(missing.clone()));
    run(&gpu, &mut d, Some(PngKind::Scene));
    d.finish_screenshots(&gpu);
    let toast = d.last_toast().expect("a toast").to_string();
    assert!(
        toast.starts_with("PNG export to ")
            && toast.contains("failed")
            && toast.contains(&*missing.to_string_lossy()),
        "{toast}"
    );
}
