//! The scene image does not change with the way it reaches the output: every scene, drawn by the
//! deck with the scene texture blitted into its viewport ([`Composite::Blit`], the default) and
//! with the scene texture handed to egui as an image ([`Composite::EguiImage`], how vizdeck drew
//! it before), gives the same pixels over the whole scene rect (the scene and the egui overlays
//! drawn on it) on lavapipe. The side panel is left out: it shows wall-clock latencies.

mod common;
use common::gpu;

use vizdeck::deck::{Composite, Deck, Output};
use vizdeck::gpu::Gpu;
use vizdeck::scene::SCENES;

const SIZE: (u32, u32) = (640, 360);
const FRAMES: u64 = 8;

/// The output (RGBA8) of `FRAMES` headless frames of scene `index` composited with `composite`,
/// and the scene rect (x, y, w, h) in output pixels.
fn render(gpu: &Gpu, index: usize, composite: Composite) -> (Vec<u8>, (u32, u32, u32, u32)) {
    let cli = <vizdeck::cli::Cli as clap::Parser>::try_parse_from([
        "vizdeck",
        "--headless",
        "--audio",
        "synthetic",
        "--particles",
        "4096",
    ])
    .expect("flags");
    let mut deck = Deck::new(
        gpu,
        vizdeck::headless::OUTPUT_FORMAT,
        index,
        cli.scene_config(),
    );
    deck.set_composite(composite);
    deck.set_overlay(false); // live frame times differ between runs
    let (texture, view) = vizdeck::headless::offscreen_target(gpu, "test:output", SIZE);
    let out = Output {
        view: &view,
        texture: Some(&texture),
        size: SIZE,
        pixels_per_point: 1.0,
    };
    for i in 0..FRAMES {
        let raw = vizdeck::headless::raw_input(SIZE, i);
        let (times, _) = deck.frame(gpu, &out, raw, 1.0 / 60.0);
        gpu.wait_idle();
        deck.end_frame(gpu, &times, std::time::Instant::now());
    }
    assert!(
        deck.active_failure().is_none(),
        "{:?}",
        deck.active_failure()
    );
    let rgba = vizdeck::gpu::readback::read_texture_rgba(&gpu.device, &gpu.queue, &texture)
        .expect("read the output");
    (rgba, deck.scene_rect_px())
}

#[test]
fn blit_and_egui_image_give_the_same_scene_rect_in_every_scene() {
    let gpu = gpu();
    for (index, entry) in SCENES.iter().enumerate() {
        let (blit, rect) = render(&gpu, index, Composite::Blit);
        let (image, rect_image) = render(&gpu, index, Composite::EguiImage);
        assert_eq!(rect, rect_image, "{}", entry.id);
        let (x0, y0, w, h) = rect;
        assert!(
            w > SIZE.0 / 5 && h > SIZE.1 / 2,
            "{}: scene rect {rect:?}",
            entry.id
        );
        let mut region = Vec::new();
        let (mut differ, mut worst) = (0usize, 0u8);
        for y in y0..(y0 + h).min(SIZE.1) {
            for x in x0..(x0 + w).min(SIZE.0) {
                let i = ((y * SIZE.0 + x) * 4) as usize;
                let (a, b) = (&blit[i..i + 4], &image[i..i + 4]);
                let d = a
                    .iter()
                    .zip(b)
                    .map(|(p, q)| p.abs_diff(*q))
                    .max()
                    .unwrap_or(0);
                worst = worst.max(d);
                differ += usize::from(d > 1);
                region.extend_from_slice(a);
            }
        }
        assert!(
            differ == 0,
            "{}: {differ} pixels of the scene rect {rect:?} differ by more than 1 (worst {worst})",
            entry.id
        );
        // The scene is really there (not two equally empty images).
        let drawn = common::non_background_fraction(&region);
        assert!(drawn > 0.01, "{}: {drawn}", entry.id);
    }
    assert!(
        gpu.error_messages().is_empty(),
        "{:?}",
        gpu.error_messages()
    );
}
