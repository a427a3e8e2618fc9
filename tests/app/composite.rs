//! The scene image does not change with the way it reaches the output: every scene, drawn by the
//! deck with the scene texture copied into its rect ([`Composite::Copy`], the default), blitted
//! into its viewport ([`Composite::Blit`]) and handed to egui as an image
//! ([`Composite::EguiImage`], how vizdeck drew it before), gives the same pixels over the whole
//! scene rect (the scene and the egui overlays drawn on it) on lavapipe, into an RGBA output and
//! into a BGRA one (the window's format on X11, where the scenes then draw in BGRA so the copy
//! still applies). The side panel is left out: it shows wall-clock latencies.

use crate::common;
use common::gpu;

use vizdeck::deck::{Composite, Deck};
use vizdeck::gpu::Gpu;
use vizdeck::scene::SCENES;

const SIZE: (u32, u32) = (640, 360);
const FRAMES: u64 = 8;

/// The output (read back as RGBA8) of `FRAMES` headless frames of scene `index` composited with
/// `composite` into an output of `format`, and the scene rect (x, y, w, h) in output pixels.
fn render(
    gpu: &Gpu,
    index: usize,
    composite: Composite,
    format: wgpu::TextureFormat,
) -> (Vec<u8>, (u32, u32, u32, u32)) {
    let cli = <vizdeck::cli::Cli as clap::Parser>::try_parse_from([
        "vizdeck",
        "--headless",
        "--audio",
        "synthetic",
        "--particles",
        "4096",
    ])
    .expect("flags");
    let mut deck = Deck::new(gpu, format, index, cli.scene_config());
    deck.set_composite(composite);
    deck.set_overlay(false); // live frame times differ between runs
    let rgba = common::render_frames(gpu, &mut deck, format, SIZE, FRAMES);
    assert_eq!(deck.composite_used(), composite, "no fallback here");
    (rgba, deck.scene_rect_px())
}

/// The most any channel of the scene rect differs between `a` and `b`, and how many pixels
/// differ by more than 1; also the rect's pixels of `a`.
fn compare(a: &[u8], b: &[u8], rect: (u32, u32, u32, u32)) -> (u8, usize, Vec<u8>) {
    let (x0, y0, w, h) = rect;
    let mut region = Vec::new();
    let (mut differ, mut worst) = (0usize, 0u8);
    for y in y0..(y0 + h).min(SIZE.1) {
        for x in x0..(x0 + w).min(SIZE.0) {
            let i = ((y * SIZE.0 + x) * 4) as usize;
            let (p, q) = (&a[i..i + 4], &b[i..i + 4]);
            let d = p
                .iter()
                .zip(q)
                .map(|(u, v)| u.abs_diff(*v))
                .max()
                .unwrap_or(0);
            worst = worst.max(d);
            differ += usize::from(d > 1);
            region.extend_from_slice(p);
        }
    }
    (worst, differ, region)
}

#[test]
fn copy_blit_and_egui_image_give_the_same_scene_rect_in_every_scene() {
    use wgpu::TextureFormat::{Bgra8Unorm, Rgba8Unorm};
    for format in [Rgba8Unorm, Bgra8Unorm] {
        let mut gpu = gpu();
        gpu.set_output_format(format);
        assert_eq!(gpu.scene_format, format);
        for (index, entry) in SCENES.iter().enumerate() {
            let what = format!("{} into {format:?}", entry.id);
            let (copy, rect) = render(&gpu, index, Composite::Copy, format);
            let (blit, rect_blit) = render(&gpu, index, Composite::Blit, format);
            let (image, rect_image) = render(&gpu, index, Composite::EguiImage, format);
            assert_eq!(rect, rect_blit, "{what}");
            assert_eq!(rect, rect_image, "{what}");
            let (_, _, w, h) = rect;
            assert!(
                w > SIZE.0 / 5 && h > SIZE.1 / 2,
                "{what}: scene rect {rect:?}"
            );
            // Copy and blit move texels unchanged: equal to the bit.
            let (worst, _, region) = compare(&copy, &blit, rect);
            assert_eq!(worst, 0, "{what}: copy and blit differ");
            // Around the scene the copy path writes the background by copies: the leftmost
            // column (the side panel's margin, no live text) is the same as the cleared one,
            // and its bottom pixel is egui's dark panel fill.
            for y in 0..SIZE.1 {
                let i = (y * SIZE.0 * 4) as usize + 4;
                assert_eq!(copy[i..i + 4], blit[i..i + 4], "{what}: pixel (1, {y})");
            }
            let fill = egui::Visuals::dark().panel_fill;
            let i = (((SIZE.1 - 2) * SIZE.0 + 1) * 4) as usize;
            assert_eq!(
                copy[i..i + 4],
                [fill.r(), fill.g(), fill.b(), 255],
                "{what}"
            );
            // egui's image samples and blends: within one level.
            let (worst, differ, _) = compare(&blit, &image, rect);
            assert!(
                differ == 0,
                "{what}: {differ} pixels of the scene rect {rect:?} differ by more than 1 \
                 (worst {worst})"
            );
            // The scene is really there (not equally empty images).
            let drawn = common::non_background_fraction(&region);
            assert!(drawn > 0.01, "{what}: {drawn}");
        }
        assert!(
            gpu.error_messages().is_empty(),
            "{:?}",
            gpu.error_messages()
        );
    }
}
