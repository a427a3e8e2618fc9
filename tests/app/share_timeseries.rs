//! `--share PATH` with the time-series scene (issue 18), on the test GPU (lavapipe in CI): a
//! Vulkan producer in a thread of the test (CUDA's stand-in, tests/common/vk_producer.rs)
//! receives the f32 [S, N] window, writes three known series (a ramp, a sine, a square wave with
//! a NaN gap and an infinity) and says the frame is complete; the chart decimates them on the GPU
//! from vizdeck's own copy, and every pixel column equals the CPU M4 of the same values at the
//! same times, with no value uploaded from the host. A second frame of other values replaces the
//! first; when the producer disconnects the last frame stays. Through the deck (the CLI's flags)
//! the value axis fits the series' finite range, read back from the GPU. Bad shapes are refused
//! in one line.
//!
//! The values are written here from their formulas; the reference is
//! `vizdeck::series::decimate` over a `Series` of those values at times k / rate.

#![allow(clippy::disallowed_methods)] // the test drives the scene with its own submits

use crate::common;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use common::series::{assert_same, cpu};
use common::share::{self, Cmd, Event};
use vizdeck::deck::Deck;
use vizdeck::gpu::Gpu;
use vizdeck::gpu::frame::OwnedFrame;
use vizdeck::gpu::upload::Strategy;
use vizdeck::interop::protocol::{Dtype, ShareDescription};
use vizdeck::scene::timeseries::TimeSeries;
use vizdeck::scene::timeseries::shared::{ShareTarget, WindowShape};
use vizdeck::scene::{FrameCtx, Scene};
use vizdeck::series::store::Series;

/// Series, samples per series (not a power of two, two blocks of the GPU passes), and rate.
const S: usize = 3;
const N: usize = 5000;
const RATE: f64 = 1000.0;
const SIZE: (u32, u32) = (640, 360);

fn sock_path(tag: &str) -> PathBuf {
    share::sock_path(&format!("ts-{tag}"))
}

/// Frame 1: series 0 a ramp from −1 to 1, series 1 five periods of a sine of amplitude 2,
/// series 2 a square wave of ±0.5 (period 1000 samples) with NaN over samples 1000..1100 and
/// +inf at sample 4321.
fn frame1() -> Vec<f32> {
    let mut v = Vec::with_capacity(S * N);
    for k in 0..N {
        v.push((2.0 * k as f64 / (N - 1) as f64 - 1.0) as f32);
    }
    for k in 0..N {
        v.push((2.0 * (std::f64::consts::TAU * 5.0 * k as f64 / N as f64).sin()) as f32);
    }
    for k in 0..N {
        v.push(match k {
            1000..1100 => f32::NAN,
            4321 => f32::INFINITY,
            _ if (k / 500) % 2 == 0 => 0.5,
            _ => -0.5,
        });
    }
    v
}

/// Frame 2: a falling ramp from 10 to 0, a cosine of amplitude 3 and seven periods, and a
/// square wave of 0 / 4 (period 300) with NaN over samples 4090..4110 (across the passes' block
/// edge at 4096) and −inf at sample 7.
fn frame2() -> Vec<f32> {
    let mut v = Vec::with_capacity(S * N);
    for k in 0..N {
        v.push((10.0 * (N - 1 - k) as f64 / (N - 1) as f64) as f32);
    }
    for k in 0..N {
        v.push((3.0 * (std::f64::consts::TAU * 7.0 * k as f64 / N as f64).cos()) as f32);
    }
    for k in 0..N {
        v.push(match k {
            4090..4110 => f32::NAN,
            7 => f32::NEG_INFINITY,
            _ if (k / 150) % 2 == 0 => 0.0,
            _ => 4.0,
        });
    }
    v
}

/// Series `i` of `values` as a store series, sample k at k / RATE seconds.
fn series_of(values: &[f32], i: usize) -> Series {
    let mut s = Series::new(format!("series {i}"), usize::MAX);
    let dt = 1.0 / RATE;
    for (k, &v) in values[i * N..(i + 1) * N].iter().enumerate() {
        s.push(k as f64 * dt, v);
    }
    s
}

/// Finite min and max of series `i` of `values`.
fn finite_range(values: &[f32], i: usize) -> (f32, f32) {
    values[i * N..(i + 1) * N]
        .iter()
        .filter(|v| v.is_finite())
        .fold((f32::INFINITY, f32::NEG_INFINITY), |(a, b), &v| {
            (a.min(v), b.max(v))
        })
}

/// The producer's checks of the description: the f32 [S, N] window, on the device and in the
/// host memfd.
fn check(desc: &ShareDescription) {
    assert_eq!(desc.scene, "timeseries");
    let b = &desc.buffers[0];
    assert_eq!(b.dtype, Dtype::F32);
    assert_eq!(b.shape, [S as u64, N as u64]);
    assert_eq!(b.strides, [4 * N as u64, 4]);
    assert_eq!(b.size, (S * N * 4) as u64);
    assert_eq!(
        desc.buffers[1].shape,
        [S as u64, N as u64],
        "the host memfd"
    );
}

/// Frame n of `values` (S × N, row-major) for the producer.
fn frame_of(n: u64, values: &[f32]) -> Cmd {
    Cmd::Frame(n, bytemuck::cast_slice(values).to_vec())
}

/// One frame of the scene outside a deck (as the deck runs it: prepare, compute, submit),
/// waiting for the GPU after; returns the bytes it uploaded.
fn step(gpu: &Gpu, scene: &mut TimeSeries, index: &mut u64) -> u64 {
    let fc = FrameCtx {
        frame: *index,
        steps: 1,
        dt: 1.0 / 60.0,
        alpha: 0.0,
        advanced_s: 1.0 / 60.0,
        elapsed_s: 1.0 / 60.0,
        size: SIZE,
    };
    *index += 1;
    scene.ingest(&fc);
    let mut f = OwnedFrame::new(gpu, Strategy::WriteBuffer);
    f.set_index(fc.frame);
    scene.prepare(&mut f.frame(), &fc);
    {
        let mut pass = f
            .encoder()
            .begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("test:share_timeseries:compute"),
                timestamp_writes: None,
            });
        scene.compute(&mut pass, &fc);
    }
    let bytes = f.counters().bytes;
    f.submit();
    gpu.wait_idle();
    bytes
}

/// Steps until `done` (30 s at most).
fn steps_until(
    gpu: &Gpu,
    scene: &mut TimeSeries,
    index: &mut u64,
    mut done: impl FnMut(&TimeSeries) -> bool,
) {
    let start = Instant::now();
    while !done(scene) {
        step(gpu, scene, index);
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "timed out; problem {:?}",
            scene.problem()
        );
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// Every shown series' GPU columns equal the CPU M4 of `values` over the scene's view.
fn assert_columns(gpu: &Gpu, scene: &TimeSeries, values: &[f32], what: &str) {
    let v = scene.view().expect("a view");
    assert_eq!(
        (v.t0, v.t1),
        (0.0, N as f64 / RATE),
        "{what}: the whole window"
    );
    for i in 0..S {
        let got = scene.read_columns(gpu, i).expect("the columns");
        let want = cpu(&series_of(values, i), v.t0, v.t1, SIZE.0 as usize);
        assert_same(&got, &want, &format!("{what}: series {i}"));
    }
}

fn shared_frames_shown(scene: &TimeSeries) -> u64 {
    scene.metrics()["shared"]["frames_shown"]
        .as_u64()
        .unwrap_or(0)
}

#[test]
fn a_producer_streams_series_the_chart_decimates_exactly() {
    let gpu = common::gpu();
    if !share::vulkan(&gpu) {
        return;
    }
    let path = sock_path("exact");
    let _ = std::fs::remove_file(&path);
    let target = ShareTarget {
        path: path.clone(),
        shape: WindowShape {
            series: S as u32,
            samples: N as u64,
            rate: Some(RATE),
        },
    };
    let mut scene = match TimeSeries::shared(&gpu, target, 1) {
        Ok(s) => s,
        Err(e) if share::cannot_share(&e) => {
            eprintln!("skipped: {e}");
            return;
        }
        Err(e) => panic!("{e}"),
    };
    scene.set_keep_columns(true);
    let mut index = 0;
    step(&gpu, &mut scene, &mut index);
    assert!(scene.view().is_none(), "nothing to draw before a producer");
    let p = scene.problem().unwrap_or_default();
    assert!(p.contains("waiting for a producer on"), "{p}");

    let (cmd, events, thread) = share::spawn_producer(&gpu, &path, check);
    let mut ready = None;
    steps_until(&gpu, &mut scene, &mut index, |_| {
        ready = events.try_recv().ok();
        ready.is_some()
    });
    if !share::producer_ready(ready) {
        return;
    }

    // Frame 1, decimated exactly; no value crosses the host.
    let one = frame1();
    cmd.send(frame_of(1, &one)).unwrap();
    steps_until(&gpu, &mut scene, &mut index, |s| {
        shared_frames_shown(s) == 1
    });
    let uploaded = step(&gpu, &mut scene, &mut index);
    assert_columns(&gpu, &scene, &one, "frame 1");
    assert_eq!(scene.staged_bytes(), 0, "no sample staged from the host");
    eprintln!(
        "a frame uploads {uploaded} bytes (column bounds and parameters; one series' values: {})",
        N * 4
    );
    assert!(
        (uploaded as usize) < N * 4,
        "{uploaded} bytes uploaded a frame: the values never cross the host"
    );
    assert_eq!(scene.problem(), None);
    let m = scene.metrics();
    assert_eq!(m["shared"]["series"], S, "{m}");
    assert_eq!(m["shared"]["samples"], N, "{m}");
    assert_eq!(m["points_drawn"], S * N, "{m}");

    // Frame 2 replaces it.
    let two = frame2();
    cmd.send(frame_of(2, &two)).unwrap();
    steps_until(&gpu, &mut scene, &mut index, |s| {
        shared_frames_shown(s) == 2
    });
    step(&gpu, &mut scene, &mut index);
    assert_columns(&gpu, &scene, &two, "frame 2");
    let Some(Event::Released(2)) = events.iter().find(|e| matches!(e, Event::Released(2))) else {
        panic!("frame 2 released");
    };

    // The producer goes: the last complete frame stays, the scene says so.
    cmd.send(Cmd::Quit).unwrap();
    thread.join().expect("the producer thread");
    steps_until(&gpu, &mut scene, &mut index, |s| {
        s.problem()
            .is_some_and(|p| p.contains("producer disconnected (showing its last complete frame)"))
    });
    step(&gpu, &mut scene, &mut index);
    assert_columns(&gpu, &scene, &two, "after the producer left");

    drop(scene);
    assert!(!path.exists(), "the socket file is removed at the end");
    share::assert_no_wgpu_errors(&gpu);
}

/// The deck of `--headless --scene timeseries --share PATH` with `extra` flags, or the reason
/// it cannot share here.
fn deck_with(gpu: &Gpu, path: &std::path::Path, extra: &[&str]) -> Result<Deck, String> {
    let p = path.to_str().unwrap();
    let flags = ["--headless", "--scene", "timeseries", "--share", p];
    share::deck_from_flags(gpu, &[&flags[..], extra].concat())
}

fn deck_frames_until(gpu: &Gpu, deck: &mut Deck, done: impl FnMut(&Deck) -> bool) -> Vec<u8> {
    share::frames_until(gpu, deck, SIZE, done)
}

fn ts_metrics(deck: &Deck) -> serde_json::Value {
    deck.metrics()["timeseries"].clone()
}

#[test]
fn the_deck_charts_a_producer_window_and_fits_its_value_axis() {
    let gpu = common::gpu();
    if !share::vulkan(&gpu) {
        return;
    }
    let path = sock_path("deck");
    let _ = std::fs::remove_file(&path);
    let mut deck = match deck_with(
        &gpu,
        &path,
        &[
            "--share-series",
            "3",
            "--share-samples",
            "5000",
            "--share-rate",
            "1k",
        ],
    ) {
        Ok(d) => d,
        Err(e) if share::cannot_share(&e) => {
            eprintln!("skipped: {e}");
            return;
        }
        Err(e) => panic!("{e}"),
    };
    let p = deck.active_problem().unwrap_or_default();
    assert!(p.contains("waiting for a producer on"), "{p}");

    let Some((cmd, _events, thread)) = share::connect_producer(&gpu, &mut deck, SIZE, &path, check)
    else {
        return;
    };
    let before = common::render_frames(&gpu, &mut deck, vizdeck::headless::OUTPUT_FORMAT, SIZE, 1);
    let one = frame1();
    let uploaded_before = deck.upload_counters().bytes;
    let frames_before = deck.frames();
    cmd.send(frame_of(1, &one)).unwrap();
    // The ranges come back a frame or two after the frame is drawn.
    let rgba = deck_frames_until(&gpu, &mut deck, |d| {
        let m = ts_metrics(d);
        m["shared"]["frames_shown"] == 1
            && m["shared"]["value_ranges"]
                .as_array()
                .is_some_and(|r| r.iter().all(|x| !x.is_null()))
            && m["view"]["hi"].as_f64().is_some_and(|hi| hi > 2.0)
    });
    let frames = deck.frames() - frames_before;
    let per_frame = (deck.upload_counters().bytes - uploaded_before) / frames.max(1);
    assert!(
        (per_frame as usize) < N * 4,
        "{per_frame} bytes uploaded a frame: the values never cross the host"
    );
    let m = ts_metrics(&deck);
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for i in 0..S {
        let (a, b) = finite_range(&one, i);
        assert_eq!(
            m["shared"]["value_ranges"][i],
            serde_json::json!([a, b]),
            "series {i}: {m}"
        );
        lo = lo.min(a as f64);
        hi = hi.max(b as f64);
    }
    // Padded by a tenth of half the range on each side, as the chart's automatic range is.
    let pad = (hi / 2.0 - lo / 2.0) * 0.1;
    assert_eq!(m["view"]["lo"].as_f64(), Some(lo - pad), "{m}");
    assert_eq!(m["view"]["hi"].as_f64(), Some(hi + pad), "{m}");
    assert_eq!(m["view"]["t1"].as_f64(), Some(N as f64 / RATE), "{m}");
    let (x0, y0, w, h) = deck.scene_rect_px();
    let changed = (y0..y0 + h)
        .flat_map(|y| (x0..x0 + w).map(move |x| ((y * SIZE.0 + x) * 4) as usize))
        .filter(|&i| rgba[i..i + 3] != before[i..i + 3])
        .count();
    assert!(
        changed > 2000,
        "the series are drawn: {changed} pixels changed"
    );
    assert_eq!(deck.active_problem(), None);

    cmd.send(Cmd::Quit).unwrap();
    thread.join().expect("the producer thread");
    deck_frames_until(&gpu, &mut deck, |d| {
        d.active_problem()
            .is_some_and(|p| p.contains("producer disconnected"))
    });
    drop(deck);
    share::assert_no_wgpu_errors(&gpu);
}

#[test]
fn bad_window_shapes_are_refused_in_one_line() {
    let path = sock_path("bad");
    let _ = std::fs::remove_file(&path);
    let parse = |extra: &[&str]| {
        let mut args = vec!["vizdeck", "--headless", "--scene", "timeseries"];
        args.extend_from_slice(extra);
        <vizdeck::cli::Cli as clap::Parser>::try_parse_from(args)
    };
    let p = path.to_str().unwrap();
    for (flags, says) in [
        (vec!["--share", p, "--share-series", "0"], "0 series"),
        (vec!["--share", p, "--share-series", "1025"], "1024"),
        (vec!["--share", p, "--share-samples", "0"], "'0'"),
        (vec!["--share", p, "--share-rate", "-5"], "'-5'"),
    ] {
        let e = parse(&flags).expect_err("refused").to_string();
        let first = e.lines().next().unwrap_or_default();
        assert!(first.contains(says), "{flags:?}: {e}");
    }
    // The window's flags without --share: clap names what is missing.
    let e = parse(&["--share-series", "4"])
        .expect_err("refused")
        .to_string();
    assert!(e.contains("--share <PATH>"), "{e}");

    // A window larger than the device's largest buffer: refused when the scene starts, in one
    // line naming the flags, before a socket is made.
    let gpu = common::gpu();
    let e = match deck_with(
        &gpu,
        &path,
        &["--share-series", "1024", "--share-samples", "2G"],
    ) {
        Err(e) => e,
        Ok(_) => panic!("8 TB of f32 accepted"),
    };
    assert!(
        e.contains("--share-series 1024") && e.contains("--share-samples 2000000000"),
        "{e}"
    );
    assert!(!e.contains('\n'), "{e}");
    assert!(!path.exists(), "no socket for a refused shape");
}

#[test]
fn sharing_starts_again_on_a_new_device_after_a_loss() {
    let gpu = common::gpu();
    if !share::vulkan(&gpu) {
        return;
    }
    let path = sock_path("loss");
    let _ = std::fs::remove_file(&path);
    let flags = ["--share-series", "3", "--share-samples", "5000"];
    let mut deck = match deck_with(&gpu, &path, &flags) {
        Ok(d) => d,
        Err(e) if share::cannot_share(&e) => {
            eprintln!("skipped: {e}");
            return;
        }
        Err(e) => panic!("{e}"),
    };
    // A producer on the first device.
    let mut first = std::os::unix::net::UnixStream::connect(&path).expect("connect");
    first
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let (_, fds) = vizdeck::interop::protocol::recv(&mut first).expect("the description");
    deck_frames_until(&gpu, &mut deck, |d| {
        ts_metrics(d)["shared"]["connected"] == true
    });

    // The device is lost and replaced: the old producer's socket ends, the scene asks for a new
    // producer on the same path.
    gpu.destroy_device();
    let gpu2 = common::gpu();
    deck.replace_gpu(&gpu2, "test", Instant::now());
    let mut byte = [0u8; 1];
    let n = std::io::Read::read(&mut first, &mut byte).expect("a clean end of the socket");
    assert_eq!(n, 0, "the old producer sees vizdeck's end of the socket");
    drop(fds);
    deck_frames_until(&gpu2, &mut deck, |_| true);
    let p = deck.active_problem().unwrap_or_default();
    assert!(p.contains("must connect again"), "{p}");

    // A producer on the new device: its window is charted, its ranges read back exactly.
    let (cmd, events, thread) =
        share::connect_producer(&gpu2, &mut deck, SIZE, &path, check).expect("the producer");
    let one = frame1();
    cmd.send(frame_of(1, &one)).unwrap();
    let mut released = false;
    deck_frames_until(&gpu2, &mut deck, |d| {
        released |= matches!(events.try_recv(), Ok(Event::Released(1)));
        let m = ts_metrics(d);
        released
            && m["shared"]["frames_shown"] == 1
            && m["shared"]["value_ranges"]
                .as_array()
                .is_some_and(|r| r.iter().all(|x| !x.is_null()))
    });
    let m = ts_metrics(&deck);
    for i in 0..S {
        let (a, b) = finite_range(&one, i);
        assert_eq!(
            m["shared"]["value_ranges"][i],
            serde_json::json!([a, b]),
            "{m}"
        );
    }
    assert_eq!(deck.active_problem(), None, "connected again: no notice");
    cmd.send(Cmd::Quit).unwrap();
    thread.join().expect("the producer thread");
    drop(deck);
    share::assert_no_wgpu_errors(&gpu2);
}
