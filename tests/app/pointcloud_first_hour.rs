//! What a new user of the point-cloud scene met in the first hour (issue 34), each from a file
//! written here:
//!
//! - a LAS whose RGB colours are all 0 is drawn by elevation, with one notice naming the file
//!   (a file with colours keeps RGB);
//! - the class legend lists the classes the file holds with their points, counted while it is
//!   indexed and kept beside the cache (the counts written into the file are the reference);
//! - the octree cache: its size as the scene reports it is the files' size on disk, caches of
//!   deleted files are dropped, clearing all empties the directory;
//! - the camera fitted to one viewport is fitted again when the viewport changes size, until
//!   the user moves it.

use crate::common;
use common::{gpu, raster};

use std::path::{Path, PathBuf};
use std::sync::Arc;

use vizdeck::deck::Deck;
use vizdeck::gpu::Gpu;
use vizdeck::gpu::frame::OwnedFrame;
use vizdeck::gpu::upload::Strategy;
use vizdeck::pointcloud::cache;
use vizdeck::pointcloud::camera::{Camera, ViewPreset};
use vizdeck::pointcloud::index::{IndexOptions, Progress, open_or_index};
use vizdeck::pointcloud::source::NodeSource;
use vizdeck::pointcloud::synthetic::Synthetic;
use vizdeck::scene::SCENES;
use vizdeck::scene::pointcloud::record_frame;
use vizdeck::scene::pointcloud::{CloudSource, PointCloud, Settings};

const SIZE: (u32, u32) = (640, 400);

/// A fresh folder for one test.
fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("vizdeck-pcfh-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Writes a LAS 1.2 of point format 2 (with RGB): a 60 × 40 grid 1 m apart on a slope (z from
/// 100 to 159), every point of colour `rgb`, the classes cycling through `classes` (class,
/// points) in order. Returns the points per class written.
fn write_las(path: &Path, rgb: [u16; 3], classes: &[(u8, usize)]) -> Vec<(u8, u64)> {
    let mut b = las::Builder::from((1, 2));
    b.point_format = las::point::Format::new(2).unwrap();
    let t = |offset| las::Transform {
        scale: 0.001,
        offset,
    };
    b.transforms = las::Vector {
        x: t(500_000.0),
        y: t(4_000_000.0),
        z: t(0.0),
    };
    let mut w = las::Writer::from_path(path, b.into_header().unwrap()).unwrap();
    let mut labels: Vec<u8> = classes
        .iter()
        .flat_map(|&(c, n)| std::iter::repeat_n(c, n))
        .collect();
    assert_eq!(labels.len(), 2400, "a class for every point of the grid");
    // Spread the classes over the grid (a fixed shuffle), so each is everywhere.
    labels.sort_unstable();
    for i in 0..labels.len() {
        labels.swap(i, (i * 7919) % 2400);
    }
    for j in 0..40 {
        for i in 0..60 {
            let k = j * 60 + i;
            w.write_point(las::Point {
                x: 500_000.0 + i as f64,
                y: 4_000_000.0 + j as f64,
                z: 100.0 + i as f64,
                classification: las::point::Classification::new(labels[k]).unwrap(),
                color: Some(las::Color::new(rgb[0], rgb[1], rgb[2])),
                ..Default::default()
            })
            .unwrap();
        }
    }
    w.close().unwrap();
    let mut counts: Vec<(u8, u64)> = classes.iter().map(|&(c, n)| (c, n as u64)).collect();
    counts.sort_unstable();
    counts
}

/// Runs the point-cloud scene headless on `file` with octree caches in `cache_dir` for a few
/// frames; returns the output's RGBA, the scene rect and the scene's metrics.
fn run(
    gpu: &Gpu,
    file: &Path,
    cache_dir: &Path,
    extra: &[&str],
) -> (Vec<u8>, (u32, u32, u32, u32), serde_json::Value) {
    let mut args = vec![
        "vizdeck",
        "--headless",
        "--scene",
        "pointcloud",
        "--no-overlay",
        "--pointcloud-file",
        file.to_str().unwrap(),
        "--pointcloud-cache",
        cache_dir.to_str().unwrap(),
        "--view",
        "top",
        "--edl",
        "0",
    ];
    args.extend_from_slice(extra);
    let cli = <vizdeck::cli::Cli as clap::Parser>::try_parse_from(args).expect("flags");
    let index = SCENES.iter().position(|s| s.id == "pointcloud").unwrap();
    let mut deck = Deck::new(gpu, gpu.scene_format, index, cli.scene_config());
    deck.set_overlay(false);
    let rgba = common::render_frames(gpu, &mut deck, gpu.scene_format, SIZE, 4);
    common::assert_no_gpu_errors(gpu);
    (
        rgba,
        deck.scene_rect_px(),
        deck.metrics()["pointcloud"].clone(),
    )
}

/// Pixels of the scene rect in a saturated colour (max − min channel ≥ 30, as every viridis
/// colour is; black points, the background, and the overlays' grey boxes and white text are
/// not).
fn coloured(rgba: &[u8], rect: (u32, u32, u32, u32)) -> usize {
    let (x0, y0, w, h) = rect;
    let mut n = 0;
    for y in y0..y0 + h {
        for x in x0..x0 + w {
            let i = ((y * SIZE.0 + x) * 4) as usize;
            let px = &rgba[i..i + 3];
            let (lo, hi) = (px.iter().min().unwrap(), px.iter().max().unwrap());
            n += usize::from(hi - lo >= 30);
        }
    }
    n
}

#[test]
fn all_black_rgb_is_drawn_by_elevation_with_a_notice() {
    let gpu = gpu();
    let dir = temp_dir("black");
    let black = dir.join("plane.las");
    write_las(&black, [0, 0, 0], &[(2, 2400)]);
    let (rgba, rect, m) = run(&gpu, &black, &dir.join("cache"), &[]);
    assert_eq!(m["color"], "elevation", "{m}");
    let notice = m["color_notice"].as_str().expect("a notice");
    assert!(
        notice.contains("plane.las") && notice.contains("elevation"),
        "{notice}"
    );
    // The 2400 points are drawn in colour (about 3 × 3 pixels each at radius 1).
    let n = coloured(&rgba, rect);
    assert!(n > 10_000, "{n} pixels coloured");

    // The same grid in colour keeps RGB, without a notice.
    let red = dir.join("red.las");
    write_las(&red, [60_000, 5_000, 5_000], &[(2, 2400)]);
    let (_, _, m) = run(&gpu, &red, &dir.join("cache"), &[]);
    assert_eq!(m["color"], "RGB", "{m}");
    assert!(m["color_notice"].is_null(), "{m}");

    // Asked for by the flag, RGB stays even when black (the user chose it).
    let (rgba, rect, m) = run(
        &gpu,
        &black,
        &dir.join("cache"),
        &["--pointcloud-color", "rgb"],
    );
    assert_eq!(m["color"], "RGB", "{m}");
    // Black on black: next to nothing coloured.
    let n = coloured(&rgba, rect);
    assert!(n < 500, "{n} pixels coloured");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The scene's class counts as (class, points), by class.
fn classes_of(m: &serde_json::Value) -> (bool, Vec<(u8, u64)>) {
    let c = &m["classes"];
    let mut v: Vec<(u8, u64)> = c["counts"]
        .as_object()
        .unwrap_or_else(|| panic!("no class counts: {m}"))
        .iter()
        .map(|(k, n)| (k.parse().unwrap(), n.as_u64().unwrap()))
        .collect();
    v.sort_unstable();
    (c["exact"].as_bool().unwrap(), v)
}

#[test]
fn the_class_legend_lists_the_files_classes_with_their_points() {
    let gpu = gpu();
    let dir = temp_dir("classes");
    let cache_dir = dir.join("cache");
    let file = dir.join("classes.las");
    let want = write_las(&file, [1000, 2000, 3000], &[(6, 700), (2, 1693), (9, 7)]);
    let color = ["--pointcloud-color", "classification"];
    // Indexed: counted as the points pass.
    let (_, _, m) = run(&gpu, &file, &cache_dir, &color);
    assert_eq!(m["cache"]["hit"], false);
    assert_eq!(classes_of(&m), (true, want.clone()));
    // From the cache: the counts kept beside it.
    let (_, _, m) = run(&gpu, &file, &cache_dir, &color);
    assert_eq!(m["cache"]["hit"], true);
    assert_eq!(classes_of(&m), (true, want.clone()));
    // Without the kept counts (a cache of an older vizdeck): the nodes read, here all.
    let cache_file = PathBuf::from(m["cache"]["path"].as_str().unwrap());
    std::fs::remove_file(cache::classes_path(&cache_file)).unwrap();
    let (_, _, m) = run(&gpu, &file, &cache_dir, &color);
    assert_eq!(m["points_drawn"], m["points_total"]);
    assert_eq!(classes_of(&m), (false, want));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Bytes of every file under `dir`, walked here.
fn du(dir: &Path) -> u64 {
    std::fs::read_dir(dir).map_or(0, |rd| {
        rd.flatten()
            .map(|e| {
                let m = e.metadata().unwrap();
                if m.is_dir() { du(&e.path()) } else { m.len() }
            })
            .sum()
    })
}

/// Indexes `file` into `cache_dir` as the scene does (without class counts).
fn index(file: &Path, cache_dir: &Path) -> PathBuf {
    let p = Arc::new(Progress::default());
    let opts = IndexOptions::new(cache_dir.to_path_buf());
    let (source, hit) = open_or_index(file, &opts, &p, |sink| {
        vizdeck::pointcloud::decode::decode_las(file, &p, sink)
    })
    .unwrap();
    assert!(!hit);
    source.path.clone()
}

#[test]
fn caches_of_deleted_files_are_dropped_and_sizes_are_the_files_on_disk() {
    let dir = temp_dir("cache");
    let cache_dir = dir.join("cache");
    let (a, b) = (dir.join("a.las"), dir.join("b.las"));
    write_las(&a, [0, 0, 0], &[(2, 2400)]);
    write_las(&b, [0, 0, 0], &[(1, 1200), (2, 1200)]);
    let (ca, cb) = (index(&a, &cache_dir), index(&b, &cache_dir));
    // Class counts beside b's cache, and a work folder of a run that died (no such process).
    cache::write_classes(&cb, &[5; 256]).unwrap();
    let work = cache_dir.join(".work-4294000000-0");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(work.join("spill.bin"), vec![0u8; 4096]).unwrap();

    let s = cache::list(&cache_dir);
    assert_eq!(s.entries.len(), 2);
    assert_eq!(s.total_bytes(), du(&cache_dir));
    let size = |p: &Path| std::fs::metadata(p).unwrap().len();
    assert_eq!(s.entry(&ca).unwrap().bytes, size(&ca));
    assert_eq!(
        s.entry(&cb).unwrap().bytes,
        size(&cb) + size(&cache::classes_path(&cb))
    );
    assert_eq!(
        s.entry(&ca).unwrap().source.as_deref(),
        Some(std::fs::canonicalize(&a).unwrap().as_path())
    );
    assert!(s.entries.iter().all(|e| !e.orphaned()));

    // a.las deleted: its cache (and the dead run's work folder) go, b's stays.
    let a_bytes = size(&ca);
    std::fs::remove_file(&a).unwrap();
    assert!(cache::list(&cache_dir).entry(&ca).unwrap().orphaned());
    let dropped = cache::drop_orphans(&cache_dir);
    assert_eq!(dropped.caches, 1);
    assert_eq!(dropped.bytes, a_bytes + 4096);
    assert!(!ca.exists() && !work.exists() && cb.exists());
    let s = cache::list(&cache_dir);
    assert_eq!(s.entries.len(), 1);
    assert_eq!(s.total_bytes(), du(&cache_dir));

    // Clear all: nothing left.
    let c = cache::clear_all(&cache_dir);
    assert_eq!(c.caches, 1);
    assert_eq!(du(&cache_dir), 0);
    assert!(c.error.is_none());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_scene_reports_its_cache_size_and_drops_caches_of_files_gone_at_start() {
    let gpu = gpu();
    let dir = temp_dir("scene-cache");
    let cache_dir = dir.join("cache");
    let (gone, kept) = (dir.join("gone.las"), dir.join("kept.las"));
    write_las(&gone, [0, 0, 0], &[(2, 2400)]);
    write_las(&kept, [0, 0, 0], &[(2, 2400)]);
    let gone_cache = index(&gone, &cache_dir);
    std::fs::remove_file(&gone).unwrap();
    let (_, _, m) = run(&gpu, &kept, &cache_dir, &[]);
    assert!(
        !gone_cache.exists(),
        "the cache of a deleted file is dropped"
    );
    let cache_file = PathBuf::from(m["cache"]["path"].as_str().unwrap());
    let want = std::fs::metadata(&cache_file).unwrap().len()
        + std::fs::metadata(cache::classes_path(&cache_file))
            .unwrap()
            .len();
    assert_eq!(m["cache_bytes"].as_u64(), Some(want), "{m}");
    assert_eq!(m["cache_dir_bytes"].as_u64(), Some(du(&cache_dir)), "{m}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_fitted_camera_follows_the_viewport_until_the_user_moves_it() {
    let gpu = gpu();
    let settings = Settings {
        source: CloudSource::Synthetic(20_000),
        view: ViewPreset::Top,
        wait_for_nodes: Some(true),
        ..Settings::default()
    };
    let bounds = Synthetic::new(20_000, 5).unwrap().info().bounds;
    let mut scene = PointCloud::new(&gpu, &settings, 5, true).expect("scene");
    let frame = |scene: &mut PointCloud, i: u64, size: (u32, u32)| {
        let image = raster::resolve_image(&gpu.device, "test:fit", size);
        let mut f = OwnedFrame::new(&gpu, Strategy::WriteBuffer);
        record_frame(&mut f, scene, &image, i, size);
        f.submit();
    };
    frame(&mut scene, 0, (640, 400));
    let fitted = |size| Camera::fitted(bounds.0, bounds.1, ViewPreset::Top, size);
    assert_eq!(scene.camera(), Some(fitted((640, 400))));
    // A narrow, tall viewport (a side-by-side panel): fitted to it.
    frame(&mut scene, 1, (200, 600));
    assert_eq!(scene.camera(), Some(fitted((200, 600))));
    // Moved by the user: kept as it is through a resize.
    let mut moved = scene.camera().unwrap();
    moved.orbit(30.0, 10.0);
    scene.set_camera(moved);
    frame(&mut scene, 2, (640, 400));
    assert_eq!(scene.camera(), Some(moved));
}
