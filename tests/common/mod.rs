//! What the GPU tests and benches share: the test GPU, and for runs of the binary its output as
//! text and its PNGs decoded. Included with `mod common;` by tests and
//! `#[path = "../tests/common/mod.rs"] mod common;` by benches. Blocking buffer reads are
//! [`vizdeck::gpu::Gpu::read_buffer_blocking`].

#[allow(dead_code)]
pub mod follower;
pub mod http_server;
#[allow(dead_code)]
pub mod mosquitto;
#[allow(dead_code)]
pub mod particles;
#[allow(dead_code)]
pub mod raster;
#[allow(dead_code)]
pub mod series;
#[allow(dead_code)]
pub mod share;
#[allow(dead_code)]
pub mod vk_producer;

use std::path::Path;
use std::process::Output;

use vizdeck::gpu::{BackendChoice, Gpu};

/// The test GPU: Vulkan (lavapipe on a machine without a GPU: `cargo xtask services`), else
/// whatever wgpu finds. Panics when there is no adapter at all.
#[allow(dead_code)] // not every includer uses every item
pub fn gpu() -> Gpu {
    try_gpu().expect("a GPU adapter (lavapipe: apt-get install mesa-vulkan-drivers)")
}

/// [`gpu`], or the reason there is none.
#[allow(dead_code)]
pub fn try_gpu() -> Result<Gpu, String> {
    Gpu::new(BackendChoice::Vulkan, None, None)
        .or_else(|_| Gpu::new(BackendChoice::Auto, None, None))
        .map(|(gpu, _)| gpu)
        .map_err(|e| e.to_string())
}

/// Asserts that `gpu` has reported no wgpu error (validation, out of memory) so far.
#[allow(dead_code)]
pub fn assert_no_gpu_errors(gpu: &Gpu) {
    let errors = gpu.error_messages();
    assert!(errors.is_empty(), "{errors:?}");
}

/// Runs `frames` headless frames of `deck` (simulated 1/60 s each, the headless app's input)
/// into an output texture of `format` and `size`, waiting for the GPU after each, and returns
/// the output read back as RGBA8. Panics when the active scene failed.
#[allow(dead_code)]
pub fn render_frames(
    gpu: &Gpu,
    deck: &mut vizdeck::deck::Deck,
    format: wgpu::TextureFormat,
    size: (u32, u32),
    frames: u64,
) -> Vec<u8> {
    render_frames_with(gpu, deck, format, size, frames, |_, _| Vec::new())
}

/// [`render_frames`], with `events(i, &mut deck)` called before frame `i`; it returns the input
/// events of that frame (pointer, wheel, keys) and may act on the deck.
#[allow(dead_code)]
pub fn render_frames_with(
    gpu: &Gpu,
    deck: &mut vizdeck::deck::Deck,
    format: wgpu::TextureFormat,
    size: (u32, u32),
    frames: u64,
    mut events: impl FnMut(u64, &mut vizdeck::deck::Deck) -> Vec<egui::Event>,
) -> Vec<u8> {
    let texture = gpu.device.create_texture(&wgpu::TextureDescriptor {
        label: Some("test:output"),
        size: wgpu::Extent3d {
            width: size.0,
            height: size.1,
            depth_or_array_layers: 1,
        },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format,
        usage: wgpu::TextureUsages::RENDER_ATTACHMENT
            | wgpu::TextureUsages::COPY_SRC
            | wgpu::TextureUsages::COPY_DST,
        view_formats: &[],
    });
    let view = texture.create_view(&Default::default());
    let out = vizdeck::deck::Output {
        view: &view,
        texture: Some(&texture),
        size,
        pixels_per_point: 1.0,
    };
    for i in 0..frames {
        let mut raw = vizdeck::headless::raw_input(size, i);
        raw.events = events(i, deck);
        let (times, _) = deck.frame(gpu, &out, raw, 1.0 / 60.0);
        gpu.wait_idle();
        deck.end_frame(gpu, &times, std::time::Instant::now());
    }
    assert!(
        deck.active_failure().is_none(),
        "{:?}",
        deck.active_failure()
    );
    vizdeck::gpu::readback::read_texture_rgba(&gpu.device, &gpu.queue, &texture)
        .expect("read the output")
}

/// A finished run of the binary as text: its exit status, stdout and stderr.
#[allow(dead_code)]
pub fn text(o: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Decodes a PNG (png crate) into (width, height, RGBA8).
#[allow(dead_code)]
pub fn read_png(path: &Path) -> (u32, u32, Vec<u8>) {
    let decoder = png::Decoder::new(std::io::BufReader::new(
        std::fs::File::open(path).expect("png exists"),
    ));
    let mut reader = decoder.read_info().expect("png header");
    let mut buf = vec![0; reader.output_buffer_size().expect("size")];
    let info = reader.next_frame(&mut buf).expect("png data");
    assert_eq!(info.color_type, png::ColorType::Rgba);
    assert_eq!(info.bit_depth, png::BitDepth::Eight);
    buf.truncate(info.buffer_size());
    (info.width, info.height, buf)
}

/// Fraction of pixels that differ from the most common colour.
#[allow(dead_code)]
pub fn non_background_fraction(rgba: &[u8]) -> f64 {
    let mut counts = std::collections::HashMap::new();
    for px in rgba.chunks_exact(4) {
        *counts.entry([px[0], px[1], px[2]]).or_insert(0usize) += 1;
    }
    let total = rgba.len() / 4;
    let most = counts.values().copied().max().unwrap_or(0);
    (total - most) as f64 / total.max(1) as f64
}

/// The lock every test of `tests/live/` holds for its whole run: one at a time on the shared
/// screen, keyboard and sound sink (a test that panicked leaves it usable).
#[allow(dead_code)]
pub fn live() -> std::sync::MutexGuard<'static, ()> {
    static LIVE: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LIVE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Payload of `len` bytes for frame `frame`, distinct per frame so stale data is detected (the
/// pattern of the lab's transfer tables, `vizdeck_lab::transfer::payload`).
#[allow(dead_code)]
pub fn payload(len: usize, frame: u32) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u32).wrapping_mul(2_654_435_761).wrapping_add(frame) as u8 ^ (i >> 12) as u8)
        .collect()
}
