//! The point-cloud scene, run through the deck as the headless app runs it (the frame waits for
//! the nodes it asks for, so runs are deterministic):
//!
//! - a top view of a real file covers the pixels of a CPU orthographic projection of its
//!   points (read here with the `las` crate), intersection over union ≥ 0.95;
//! - the report's counts and bounds equal laspy's (tests/data/pointcloud/reference.json), for
//!   a LAS/LAZ file indexed in memory and for a COPC file streamed node by node;
//! - coordinates near 6e5 m and 8e8 m at 1 mm scale: the read-out point equals a point of the
//!   file to the last bit, the point lies under the probed pixel, and the image covers the
//!   points' pixels (no precision collapse);
//! - the synthetic cloud: the same seed gives the same image, another seed another, and the
//!   budget bounds the points drawn.

use crate::common;
use common::gpu;

use std::path::{Path, PathBuf};

use vizdeck::deck::Deck;
use vizdeck::gpu::Gpu;
use vizdeck::scene::SCENES;

const SIZE: (u32, u32) = (960, 600);

/// Runs the point-cloud scene for `frames` frames with the app's flags `args` (after
/// `--headless --scene pointcloud`); returns the output's RGBA, the scene rect (x, y, w, h) and
/// the scene's metrics.
fn run(
    gpu: &Gpu,
    args: &[&str],
    frames: u64,
) -> (Vec<u8>, (u32, u32, u32, u32), serde_json::Value) {
    let mut all = vec![
        "vizdeck",
        "--headless",
        "--scene",
        "pointcloud",
        "--no-overlay",
    ];
    all.extend_from_slice(args);
    let cli = <vizdeck::cli::Cli as clap::Parser>::try_parse_from(all).expect("flags");
    let index = SCENES.iter().position(|s| s.id == "pointcloud").unwrap();
    let mut deck = Deck::new(gpu, gpu.scene_format, index, cli.scene_config());
    deck.set_overlay(false);
    let rgba = common::render_frames(gpu, &mut deck, gpu.scene_format, SIZE, frames);
    let metrics = deck.metrics()["pointcloud"].clone();
    assert!(
        gpu.error_messages().is_empty(),
        "{:?}",
        gpu.error_messages()
    );
    (rgba, deck.scene_rect_px(), metrics)
}

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/pointcloud")
        .join(name)
}

fn reference() -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(data("reference.json")).unwrap()).unwrap()
}

/// Every point of `path` in file coordinates (`X·scale + offset`), read with the `las` crate.
fn points_of(path: &Path) -> Vec<[f64; 3]> {
    let d = las::Reader::from_path(path).unwrap().read_all().unwrap();
    d.x()
        .zip(d.y())
        .zip(d.z())
        .map(|((x, y), z)| [x, y, z])
        .collect()
}

/// Pixels of the scene rect that are not the background (the resolve's clear colour).
fn covered(rgba: &[u8], rect: (u32, u32, u32, u32)) -> Vec<bool> {
    let (x0, y0, w, h) = rect;
    let bg = [5u8, 5, 8];
    let mut c = vec![false; (w * h) as usize];
    for y in 0..h {
        for x in 0..w {
            let i = (((y0 + y) * SIZE.0 + x0 + x) * 4) as usize;
            let px = &rgba[i..i + 3];
            c[(y * w + x) as usize] = px.iter().zip(bg).any(|(a, b)| a.abs_diff(b) > 2);
        }
    }
    c
}

/// The pixel of `p` in the top view of a `w`×`h` image of points whose x, y bounds are
/// `lo`, `hi`, worked out from the bounds alone: centre of the bounds at the centre of the
/// image, the larger of the two extents (against the aspect) filling it with a 2 % margin
/// (`Camera::fit`).
fn top_pixel(p: [f64; 3], lo: [f64; 2], hi: [f64; 2], w: u32, h: u32) -> Option<(u32, u32)> {
    let aspect = f64::from(w) / f64::from(h);
    let half_h = ((hi[1] - lo[1]) / 2.0).max((hi[0] - lo[0]) / 2.0 / aspect) * 1.02;
    let (cx, cy) = ((lo[0] + hi[0]) / 2.0, (lo[1] + hi[1]) / 2.0);
    let nx = (p[0] - cx) / (half_h * aspect);
    let ny = (p[1] - cy) / half_h;
    let col = ((nx * 0.5 + 0.5) * f64::from(w)).floor();
    let row = ((0.5 - ny * 0.5) * f64::from(h)).floor();
    ((0.0..f64::from(w)).contains(&col) && (0.0..f64::from(h)).contains(&row))
        .then_some((col as u32, row as u32))
}

/// x, y bounds of `points`.
fn bounds_xy(points: &[[f64; 3]]) -> ([f64; 2], [f64; 2]) {
    let (mut lo, mut hi) = ([f64::INFINITY; 2], [f64::NEG_INFINITY; 2]);
    for p in points {
        for k in 0..2 {
            lo[k] = lo[k].min(p[k]);
            hi[k] = hi[k].max(p[k]);
        }
    }
    (lo, hi)
}

/// The pixels of a `w`×`h` top view that [`top_pixel`] puts a point of `points` in.
fn cpu_top_view(points: &[[f64; 3]], w: u32, h: u32) -> Vec<bool> {
    let (lo, hi) = bounds_xy(points);
    let mut c = vec![false; (w * h) as usize];
    for p in points {
        if let Some((x, y)) = top_pixel(*p, lo, hi, w, h) {
            c[(y * w + x) as usize] = true;
        }
    }
    c
}

fn dump(name: &str, c: &[bool], w: u32) {
    if let Ok(dir) = std::env::var("VIZDECK_TEST_DUMP") {
        let h = c.len() as u32 / w;
        let mut s = format!("P2\n{w} {h}\n1\n").into_bytes();
        for v in c {
            s.extend_from_slice(if *v { b"1 " } else { b"0 " });
        }
        std::fs::write(Path::new(&dir).join(format!("{name}.pgm")), s).unwrap();
    }
}

/// Intersection over union of two `w`-pixel-wide coverage masks, outside the scene's
/// bottom-right corner, where the scale bar is drawn over the image (at most 140 points long
/// plus its label and backdrop, 12 points from the edges; one point is one pixel here).
fn iou(a: &[bool], b: &[bool], w: u32) -> f64 {
    let h = a.len() as u32 / w;
    let outside_bar = |i: usize| {
        let (x, y) = (i as u32 % w, i as u32 / w);
        x + 180 < w || y + 50 < h
    };
    let pairs = || {
        a.iter()
            .zip(b)
            .enumerate()
            .filter(|(i, _)| outside_bar(*i))
            .map(|(_, p)| p)
    };
    let inter = pairs().filter(|(x, y)| **x && **y).count();
    let union = pairs().filter(|(x, y)| **x || **y).count();
    inter as f64 / union.max(1) as f64
}

#[test]
fn a_top_view_covers_the_pixels_of_the_points() {
    let gpu = gpu();
    let path = data("autzen_trim.laz");
    let args = [
        "--pointcloud-file",
        path.to_str().unwrap(),
        "--view",
        "top",
        "--point-radius",
        "0",
        "--edl",
        "0",
        "--pointcloud-color",
        "classification",
    ];
    let (rgba, rect, m) = run(&gpu, &args, 4);
    let got = covered(&rgba, rect);
    let want = cpu_top_view(&points_of(&path), rect.2, rect.3);
    dump("autzen_got", &got, rect.2);
    dump("autzen_want", &want, rect.2);
    let score = iou(&got, &want, rect.2);
    let n = want.iter().filter(|c| **c).count();
    assert!(n > 20_000, "{n} pixels covered by the projection");
    assert!(score >= 0.95, "IoU {score:.4} over {n} pixels");
    assert_eq!(m["points_drawn"], m["points_total"]);
}

#[test]
fn counts_and_bounds_equal_laspys_for_las_and_copc() {
    let gpu = gpu();
    let reference = reference();
    for name in [
        "autzen_trim.laz",
        "simple.las",
        "test1_4.las",
        "simple.copc.laz",
    ] {
        let want = &reference[name];
        let path = data(name);
        let (_, _, m) = run(
            &gpu,
            &[
                "--pointcloud-file",
                path.to_str().unwrap(),
                "--pointcloud-budget",
                "10M",
            ],
            6,
        );
        let points = want["points"].as_u64().unwrap();
        assert_eq!(m["points_total"].as_u64(), Some(points), "{name}: {m}");
        // What is drawn: whole nodes, as many as the view's level of detail needs.
        let drawn = m["points_drawn"].as_u64().unwrap();
        assert!(drawn > 0 && drawn <= points, "{name}: {m}");
        assert!(
            m["points_resident"].as_u64().unwrap() >= drawn,
            "{name}: {m}"
        );
        if name.ends_with(".copc.laz") {
            assert_eq!(m["kind"], "COPC");
            assert_eq!(m["bounds_from"], "header");
            continue;
        }
        assert_eq!(m["bounds_from"], "points");
        for (key, field) in [("bounds_min", "min"), ("bounds_max", "max")] {
            for k in 0..3 {
                let got = m[key][k].as_f64().unwrap();
                let w = want[field][k].as_f64().unwrap();
                let scale = want["scale"][k].as_f64().unwrap();
                assert!(
                    (got - w).abs() <= scale * 1e-3,
                    "{name} {key}[{k}]: {got} vs {w}"
                );
            }
        }
    }
}

/// Columns and rows of the precision files' grid: about one point per pixel column.
const GRID: (usize, usize) = (800, 24);

/// Writes a LAS of a [`GRID`] of points 0.25 m apart (plus a millimetre pattern) at `origin`,
/// 1 mm scale, and returns its path and file coordinates.
fn precision_file(name: &str, origin: [f64; 3]) -> (PathBuf, Vec<[f64; 3]>) {
    let dir = std::env::temp_dir().join(format!("vizdeck-pcscene-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    let mut b = las::Builder::from((1, 2));
    b.transforms = las::Vector {
        x: las::Transform {
            scale: 0.001,
            offset: origin[0],
        },
        y: las::Transform {
            scale: 0.001,
            offset: origin[1],
        },
        z: las::Transform {
            scale: 0.001,
            offset: origin[2],
        },
    };
    let header = b.into_header().unwrap();
    let mut w = las::Writer::from_path(&path, header).unwrap();
    let mut pts = Vec::new();
    for j in 0..GRID.1 as i32 {
        for i in 0..GRID.0 as i32 {
            let raw = [i * 250 + (j * 7) % 13, j * 250 + (i * 3) % 11, (i * j) % 97];
            let p: [f64; 3] = std::array::from_fn(|k| f64::from(raw[k]) * 0.001 + origin[k]);
            let point = las::Point {
                x: p[0],
                y: p[1],
                z: p[2],
                intensity: ((i * 7 + j) % 65536) as u16,
                classification: las::point::Classification::Ground,
                ..Default::default()
            };
            w.write_point(point).unwrap();
            pts.push(p);
        }
    }
    w.close().unwrap();
    // The file's own coordinates: its integers × scale + offset, as any reader computes them.
    (path.clone(), points_of(&path))
}

#[test]
fn the_readout_is_exact_at_6e5_and_8e8_metres() {
    let gpu = gpu();
    for (name, origin) in [
        ("utm.las", [637_000.123, 4_123_000.456, 412.0]),
        ("far.las", [812_345_678.9, 799_999_999.5, 1_000.0]),
    ] {
        let (path, file_points) = precision_file(name, origin);
        let file = path.to_str().unwrap();
        let top = [
            "--pointcloud-file",
            file,
            "--view",
            "top",
            "--point-radius",
            "0",
            "--edl",
            "0",
            "--pointcloud-color",
            "intensity",
        ];
        // The image covers the grid's pixels: no jitter, no collapse of nearby coordinates.
        let (rgba, rect, _) = run(&gpu, &top, 4);
        let got = covered(&rgba, rect);
        let want = cpu_top_view(&file_points, rect.2, rect.3);
        dump(&format!("{name}_got"), &got, rect.2);
        dump(&format!("{name}_want"), &want, rect.2);
        let score = iou(&got, &want, rect.2);
        assert!(score >= 0.95, "{name}: IoU {score:.4}");
        // Probe the covered pixel nearest the centre (covered in both images).
        let (w, h) = (rect.2 as i64, rect.3 as i64);
        let (qx, qy) = (0..w * h)
            .filter(|&i| got[i as usize] && want[i as usize])
            .map(|i| (i % w, i / w))
            .min_by_key(|&(x, y)| (x - w / 2).pow(2) + (y - h / 2).pow(2))
            .expect("a covered pixel");
        let probe = format!("{qx},{qy}");
        let mut args = top.to_vec();
        args.extend(["--pointcloud-probe", probe.as_str()]);
        let (_, _, m) = run(&gpu, &args, 4);
        // The read-out point is one of the file's, bit for bit.
        let hover = &m["hover"];
        assert!(hover.is_object(), "{name}: no readout at {probe}: {m}");
        let xyz: Vec<f64> = (0..3).map(|k| hover["xyz"][k].as_f64().unwrap()).collect();
        let found = file_points
            .iter()
            .position(|p| (0..3).all(|k| p[k].to_bits() == xyz[k].to_bits()));
        let Some(i) = found else {
            panic!("{name}: readout {xyz:?} is not a point of the file");
        };
        // …and it is a point under the probed pixel (its projection within a pixel: f32 on
        // the GPU against f64 here may round a point on a pixel edge either way).
        let (lo, hi) = bounds_xy(&file_points);
        let (px, py) = top_pixel(file_points[i], lo, hi, rect.2, rect.3).expect("on screen");
        let (px, py) = (i64::from(px), i64::from(py));
        assert!(
            (px - qx).abs() <= 1 && (py - qy).abs() <= 1,
            "{name}: point {i} projects to ({px}, {py}), probe ({qx}, {qy})"
        );
        let (col, row) = (i % GRID.0, i / GRID.0);
        assert_eq!(
            hover["intensity"].as_u64(),
            Some(((col * 7 + row) % 65536) as u64)
        );
    }
}

#[test]
fn the_synthetic_cloud_is_deterministic_and_within_its_budget() {
    let gpu = gpu();
    let args = |seed: &'static str| {
        [
            "--pointcloud",
            "synthetic:3M",
            "--pointcloud-budget",
            "300k",
            "--seed",
            seed,
        ]
    };
    let (a, rect, m) = run(&gpu, &args("5"), 5);
    let (b, _, _) = run(&gpu, &args("5"), 5);
    let (c, _, _) = run(&gpu, &args("6"), 5);
    // The scene rect only: the side panel shows live decode rates.
    let crop = |rgba: &[u8]| -> Vec<u8> {
        let (x0, y0, w, h) = rect;
        (y0..y0 + h)
            .flat_map(|y| {
                let i = ((y * SIZE.0 + x0) * 4) as usize;
                rgba[i..i + (w * 4) as usize].to_vec()
            })
            .collect()
    };
    assert!(covered(&a, rect).iter().filter(|c| **c).count() > 10_000);
    assert!(crop(&a) == crop(&b), "same seed, same image");
    assert!(crop(&a) != crop(&c), "another seed, another image");
    let drawn = m["points_drawn"].as_u64().unwrap();
    assert!(drawn <= 300_000 && drawn > 100_000, "{m}");
    assert_eq!(m["points_total"].as_u64(), Some(3_000_000));
    assert!(m["nodes_drawn"].as_u64().unwrap() > 1, "{m}");
}

/// A PLY of `n` vertices on a spiral (x, y, z as `double` or `float`, RGB as `uchar`) and a
/// face element after them, ASCII or binary little endian; returns the path and the
/// coordinates as written.
fn ply_file(name: &str, n: usize, binary: bool) -> (PathBuf, Vec<[f64; 3]>) {
    let dir = std::env::temp_dir().join(format!("vizdeck-pcscene-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    let pts: Vec<[f64; 3]> = (0..n)
        .map(|i| {
            let t = i as f64 * 0.01;
            [
                500_000.0 + 40.0 * t.cos() * (1.0 + t),
                4_000_000.0 + 40.0 * t.sin() * (1.0 + t),
                100.0 + t,
            ]
        })
        .collect();
    let format = if binary {
        "binary_little_endian"
    } else {
        "ascii"
    };
    let mut out = format!(
        "ply\nformat {format} 1.0\ncomment vizdeck test\nelement vertex {n}\nproperty double x\n\
         property double y\nproperty double z\nproperty uchar red\nproperty uchar green\n\
         property uchar blue\nelement face 1\nproperty list uchar int vertex_indices\nend_header\n"
    )
    .into_bytes();
    for (i, p) in pts.iter().enumerate() {
        let rgb = [(i % 256) as u8, 128, 255 - (i % 256) as u8];
        if binary {
            for v in p {
                out.extend_from_slice(&v.to_le_bytes());
            }
            out.extend_from_slice(&rgb);
        } else {
            out.extend_from_slice(
                format!(
                    "{:?} {:?} {:?} {} {} {}\n",
                    p[0], p[1], p[2], rgb[0], rgb[1], rgb[2]
                )
                .as_bytes(),
            );
        }
    }
    if binary {
        out.push(3);
        for v in [0i32, 1, 2] {
            out.extend_from_slice(&v.to_le_bytes());
        }
    } else {
        out.extend_from_slice(b"3 0 1 2\n");
    }
    std::fs::write(&path, out).unwrap();
    (path, pts)
}

/// PLY, ASCII and binary: every vertex is a point (count and bounds as written), the top view
/// covers their pixels, and a probed point reads out as written, bit for bit.
#[test]
fn ply_vertices_are_the_points() {
    let gpu = gpu();
    for binary in [false, true] {
        let (path, pts) = ply_file(&format!("spiral-{binary}.ply"), 20_000, binary);
        let top = [
            "--pointcloud-file",
            path.to_str().unwrap(),
            "--view",
            "top",
            "--point-radius",
            "0",
            "--edl",
            "0",
        ];
        let (rgba, rect, m) = run(&gpu, &top, 4);
        assert_eq!(m["kind"], "PLY", "{m}");
        assert_eq!(m["points_total"].as_u64(), Some(pts.len() as u64), "{m}");
        assert_eq!(m["color"], "RGB", "{m}");
        for k in 0..3 {
            let lo = pts.iter().map(|p| p[k]).fold(f64::INFINITY, f64::min);
            let hi = pts.iter().map(|p| p[k]).fold(f64::NEG_INFINITY, f64::max);
            assert_eq!(m["bounds_min"][k].as_f64(), Some(lo), "{m}");
            assert_eq!(m["bounds_max"][k].as_f64(), Some(hi), "{m}");
        }
        let got = covered(&rgba, rect);
        let want = cpu_top_view(&pts, rect.2, rect.3);
        let score = iou(&got, &want, rect.2);
        assert!(score >= 0.95, "binary {binary}: IoU {score:.4}");
        let at = want.iter().position(|c| *c).unwrap() as u32;
        let probe = format!("{},{}", at % rect.2, at / rect.2);
        let mut args = top.to_vec();
        args.extend(["--pointcloud-probe", probe.as_str()]);
        let (_, _, m) = run(&gpu, &args, 4);
        let xyz: Vec<f64> = (0..3)
            .map(|k| m["hover"]["xyz"][k].as_f64().unwrap())
            .collect();
        assert!(
            pts.iter()
                .any(|p| (0..3).all(|k| p[k].to_bits() == xyz[k].to_bits())),
            "binary {binary}: readout {xyz:?} is not a written vertex"
        );
    }
}

/// COPC over HTTP, from a server in this test that honours `Range`: the same counts and the
/// same image as the local file, read with range requests (fewer bytes than the file when the
/// view does not need every node), and a second open served by the cache.
#[test]
fn copc_streams_over_http_with_range_requests() {
    use common::http_server::{RangeSupport, serve};
    let gpu = gpu();
    let server = serve(data(""), RangeSupport::Honour);
    let url = format!("{}/simple.copc.laz", server.base);
    let local = data("simple.copc.laz");
    let args = |src: &str| {
        vec![
            "--pointcloud-file".to_string(),
            src.to_string(),
            "--view".into(),
            "top".into(),
        ]
    };
    let remote_args = args(&url);
    let local_args = args(local.to_str().unwrap());
    fn as_str(v: &[String]) -> Vec<&str> {
        v.iter().map(String::as_str).collect()
    }
    let (a, rect, m) = run(&gpu, &as_str(&remote_args), 5);
    let (b, _, ml) = run(&gpu, &as_str(&local_args), 5);
    assert_eq!(m["kind"], "COPC");
    assert_eq!(m["points_total"], ml["points_total"], "{m}");
    assert_eq!(m["points_drawn"], ml["points_drawn"], "{m}");
    let crop = |rgba: &[u8]| -> Vec<u8> {
        let (x0, y0, w, h) = rect;
        (y0..y0 + h)
            .flat_map(|y| {
                let i = ((y * SIZE.0 + x0) * 4) as usize;
                rgba[i..i + (w * 4) as usize].to_vec()
            })
            .collect()
    };
    assert!(
        crop(&a) == crop(&b),
        "the remote image differs from the local one"
    );
    let http = &m["http"];
    let file_bytes = std::fs::metadata(&local).unwrap().len();
    assert_eq!(http["file_bytes"].as_u64(), Some(file_bytes), "{http}");
    let requests = http["requests"].as_u64().unwrap();
    assert!(requests >= 2, "{http}");
    assert_eq!(
        requests,
        server.requests.load(std::sync::atomic::Ordering::Relaxed),
        "every request counted: {http}"
    );
    assert!(
        http["bytes_received"].as_u64().unwrap() <= file_bytes,
        "{http}"
    );
    assert!(http["cache_hits"].as_u64().unwrap() > 0, "{http}");
}

/// File ▸ Open (and a drop) of a COPC URL: the point-cloud scene streams it over HTTP.
#[test]
fn opening_a_copc_url_from_the_menu_streams_it() {
    use common::http_server::{RangeSupport, serve};
    let gpu = gpu();
    let server = serve(data(""), RangeSupport::Honour);
    let url = format!("{}/simple.copc.laz", server.base);
    let cli = <vizdeck::cli::Cli as clap::Parser>::try_parse_from([
        "vizdeck",
        "--headless",
        "--scene",
        "spectrogram",
        "--audio",
        "synthetic",
    ])
    .expect("flags");
    let mut deck = Deck::new(&gpu, gpu.scene_format, 0, cli.scene_config());
    deck.open_file(&gpu, PathBuf::from(&url));
    let m = deck.metrics();
    let pc = &m["pointcloud"];
    assert_eq!(pc["kind"], "COPC", "{pc}");
    assert_eq!(pc["source"].as_str(), Some(url.as_str()), "{pc}");
    assert_eq!(pc["points_total"].as_u64(), Some(1065), "{pc}");
    assert!(pc["http"]["requests"].as_u64().unwrap() >= 2, "{pc}");
}
