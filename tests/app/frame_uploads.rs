//! The frame contract on lavapipe: every upload of a frame goes through the deck's uploader, so a
//! frame's `BytesUploaded` is exactly what its scene asked to upload, under every upload
//! strategy; the bytes arrive; and the real scenes upload the same bytes whatever the strategy.

#![allow(clippy::disallowed_methods)] // the tests read buffers back with their own submits

use crate::common;
use common::gpu;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::common::payload;
use vizdeck::deck::{Deck, Output};
use vizdeck::gpu::Gpu;
use vizdeck::gpu::frame::GpuFrame;
use vizdeck::gpu::upload::{PingPong, Strategy};
use vizdeck::scene::{FrameCtx, Scene, SceneError};

/// Sizes each frame of [`Counting`] uploads: odd (padded), small, large; plus a ping-pong write.
const WRITES: [usize; 3] = [7, 1000, 65_536 + 12];
const PINGPONG: usize = 3001;

/// A scene that uploads payloads of known sizes every frame and counts what it asked for itself,
/// apart from the uploader.
struct Counting {
    buffers: Vec<wgpu::Buffer>,
    pingpong: PingPong,
    asked: Arc<AtomicU64>,
    last: Vec<Vec<u8>>,
}

impl Counting {
    fn new(gpu: &Gpu, asked: Arc<AtomicU64>) -> Counting {
        let buffers = WRITES
            .iter()
            .map(|&n| {
                gpu.device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("test:counting"),
                    size: (n as u64).next_multiple_of(4) + 64,
                    usage: wgpu::BufferUsages::STORAGE
                        | wgpu::BufferUsages::COPY_DST
                        | wgpu::BufferUsages::COPY_SRC,
                    mapped_at_creation: false,
                })
            })
            .collect();
        Counting {
            buffers,
            pingpong: PingPong::new(
                &gpu.device,
                "test:counting:pingpong",
                wgpu::BufferUsages::COPY_SRC,
                256,
            ),
            asked,
            last: Vec::new(),
        }
    }
}

impl Scene for Counting {
    fn id(&self) -> &'static str {
        "counting"
    }
    fn prepare(&mut self, gpu: &mut GpuFrame<'_>, frame: &FrameCtx) {
        self.last.clear();
        for (i, (&n, buffer)) in WRITES.iter().zip(&self.buffers).enumerate() {
            let bytes = payload(n, frame.frame as u32 * 31 + i as u32);
            // At offset 16: the copies land where asked, not at 0.
            assert!(gpu.write(buffer, 16, &bytes));
            self.asked.fetch_add(n as u64, Ordering::Relaxed);
            self.last.push(bytes);
        }
        let bytes = payload(PINGPONG, frame.frame as u32 + 1000);
        self.pingpong.write(gpu, &bytes);
        self.asked.fetch_add(PINGPONG as u64, Ordering::Relaxed);
        self.last.push(bytes);
    }
    fn paint(&self, _pass: &mut wgpu::RenderPass<'_>, _frame: &FrameCtx) {}
    fn ui(&mut self, _ui: &mut egui::Ui) {}
    fn metrics(&self) -> serde_json::Value {
        serde_json::Value::Null
    }
    fn recreate_gpu(&mut self, _gpu: &Gpu) -> Result<(), SceneError> {
        Ok(())
    }
}

fn output(gpu: &Gpu, size: (u32, u32)) -> (wgpu::Texture, wgpu::TextureView) {
    vizdeck::headless::offscreen_target(gpu, "test:output", size)
}

/// Frame `i` of `deck` into `target` as headless mode runs it (1/60 s, then waits for the GPU).
fn run_frame(
    gpu: &Gpu,
    deck: &mut Deck,
    target: &(wgpu::Texture, wgpu::TextureView),
    size: (u32, u32),
    i: u64,
) -> vizdeck::deck::FrameTimes {
    let out = Output {
        view: &target.1,
        texture: Some(&target.0),
        size,
        pixels_per_point: 1.0,
    };
    let (times, _) = deck.frame(gpu, &out, vizdeck::headless::raw_input(size, i), 1.0 / 60.0);
    gpu.wait_idle();
    deck.end_frame(gpu, &times, std::time::Instant::now());
    times
}

fn cli(args: &[&str]) -> vizdeck::cli::Cli {
    let mut all = vec!["vizdeck", "--headless"];
    all.extend_from_slice(args);
    <vizdeck::cli::Cli as clap::Parser>::try_parse_from(all).expect("flags")
}

#[test]
fn bytes_uploaded_is_what_the_scene_asked_for_under_every_strategy() {
    let gpu = gpu();
    let size = (96, 64);
    let target = output(&gpu, size);
    for strategy in Strategy::ALL {
        let c = cli(&["--scene", "timeseries"]);
        let mut deck = Deck::new(&gpu, vizdeck::headless::OUTPUT_FORMAT, 0, c.scene_config());
        deck.set_upload_strategy(strategy);
        let asked = Arc::new(AtomicU64::new(0));
        let index = vizdeck::scene::index_of("timeseries").unwrap();
        deck.insert_scene(index, Box::new(Counting::new(&gpu, asked.clone())));
        for i in 0..4 {
            let before = asked.load(Ordering::Relaxed);
            let times = run_frame(&gpu, &mut deck, &target, size, i);
            let want = asked.load(Ordering::Relaxed) - before;
            assert_eq!(want, (WRITES.iter().sum::<usize>() + PINGPONG) as u64);
            assert_eq!(times.bytes_uploaded, want, "{}: frame {i}", strategy.name());
        }
        assert_eq!(
            deck.upload_counters().bytes,
            asked.load(Ordering::Relaxed),
            "{}",
            strategy.name()
        );
        assert!(
            gpu.error_messages().is_empty(),
            "{}: {:?}",
            strategy.name(),
            gpu.error_messages()
        );
    }
}

/// The bytes a [`Counting`] scene wrote through the deck's uploader arrive, under every strategy.
#[test]
fn uploads_through_the_frame_arrive_under_every_strategy() {
    let gpu = gpu();
    for strategy in Strategy::ALL {
        let asked = Arc::new(AtomicU64::new(0));
        let mut scene = Counting::new(&gpu, asked.clone());
        for frame in 0..3u64 {
            let ctx = FrameCtx {
                frame,
                steps: 1,
                dt: 1.0 / 120.0,
                alpha: 0.0,
                advanced_s: 1.0 / 120.0,
                elapsed_s: 1.0 / 60.0,
                size: (8, 8),
            };
            let counted = vizdeck::scene::prepare_standalone(&gpu, &mut scene, &ctx, strategy);
            assert_eq!(
                counted.bytes,
                (WRITES.iter().sum::<usize>() + PINGPONG) as u64
            );
            for (i, buffer) in scene.buffers.iter().enumerate() {
                let back = gpu
                    .read_buffer_blocking(buffer, 0, buffer.size())
                    .expect("readback");
                let want = &scene.last[i];
                assert!(
                    back[16..16 + want.len()] == want[..],
                    "{} frame {frame}: buffer {i} differs",
                    strategy.name()
                );
            }
            let slot = (frame % 2) as usize;
            let back = gpu
                .read_buffer_blocking(scene.pingpong.buffer(slot), 0, PINGPONG as u64 + 3)
                .expect("readback");
            assert!(back[..PINGPONG] == scene.last[3][..], "{}", strategy.name());
        }
    }
    assert!(
        gpu.error_messages().is_empty(),
        "{:?}",
        gpu.error_messages()
    );
}

/// Each real scene uploads the same bytes every frame whatever the strategy (the strategy only
/// changes how they travel), and more than nothing.
#[test]
fn real_scenes_upload_the_same_bytes_under_every_strategy() {
    let gpu = gpu();
    let size = (160, 100);
    let target = output(&gpu, size);
    for scene in ["spectrogram", "particles", "timeseries"] {
        let mut per_strategy = Vec::new();
        for strategy in Strategy::ALL {
            let c = cli(&[
                "--scene",
                scene,
                "--audio",
                "synthetic",
                "--particles",
                "5000",
            ]);
            let index = vizdeck::scene::index_of(scene).unwrap();
            let mut deck = Deck::new(
                &gpu,
                vizdeck::headless::OUTPUT_FORMAT,
                index,
                c.scene_config(),
            );
            deck.set_upload_strategy(strategy);
            let mut bytes = Vec::new();
            for i in 0..12 {
                bytes.push(run_frame(&gpu, &mut deck, &target, size, i).bytes_uploaded);
            }
            assert!(
                bytes.iter().all(|&b| b > 0),
                "{scene} {}: {bytes:?}",
                strategy.name()
            );
            assert_eq!(deck.upload_counters().bytes, bytes.iter().sum::<u64>());
            per_strategy.push((strategy, bytes));
        }
        let (first, want) = &per_strategy[0];
        for (s, got) in &per_strategy[1..] {
            assert_eq!(
                got,
                want,
                "{scene}: {} uploads differ from {}",
                s.name(),
                first.name()
            );
        }
        eprintln!("{scene}: bytes uploaded per frame {want:?}");
    }
    assert!(
        gpu.error_messages().is_empty(),
        "{:?}",
        gpu.error_messages()
    );
}

/// The time series' pyramid builds and M4 pass run inside the frame's timed compute pass:
/// `MsGPUCompute` is measured and above zero on lavapipe (it read about 0 while the scene
/// submitted them itself).
#[test]
fn timeseries_compute_is_in_the_timed_pass() {
    let dir = std::env::temp_dir().join(format!("vizdeck-frame-uploads-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let csv = dir.join("timeseries-stats.csv");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_vizdeck"))
        .args(["--headless", "--scene", "timeseries", "--frames", "40"])
        .args([
            "--size",
            "640x360",
            "--series-count",
            "32",
            "--series-rate",
            "2M",
        ])
        .arg("--record-stats")
        .arg(&csv)
        .env("RUST_LOG", "warn")
        .output()
        .expect("run vizdeck");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut reader = csv::Reader::from_path(&csv).unwrap();
    let col = reader
        .headers()
        .unwrap()
        .iter()
        .position(|h| h == "MsGPUCompute")
        .expect("MsGPUCompute column");
    let mut ms: Vec<f64> = reader
        .records()
        .filter_map(|r| r.unwrap()[col].parse().ok())
        .collect();
    assert!(ms.len() >= 30, "GPU times measured for {} frames", ms.len());
    ms.sort_by(f64::total_cmp);
    let median = ms[ms.len() / 2];
    eprintln!("timeseries MsGPUCompute median {median} ms");
    assert!(median > 0.0, "MsGPUCompute median {median}");
}
