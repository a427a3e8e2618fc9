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

mod common;

use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::series::{assert_same, cpu};
use common::vk_producer::VkProducer;
use vizdeck::deck::Deck;
use vizdeck::gpu::Gpu;
use vizdeck::gpu::frame::OwnedFrame;
use vizdeck::gpu::upload::Strategy;
use vizdeck::interop::protocol::{self, Dtype, FrameMessage};
use vizdeck::scene::timeseries::TimeSeries;
use vizdeck::scene::timeseries::shared::{ShareTarget, WindowShape};
use vizdeck::scene::{FrameCtx, Scene};
use vizdeck::series::store::Series;

/// Series, samples per series (not a power of two, two blocks of the GPU passes), and rate.
const S: usize = 3;
const N: usize = 5000;
const RATE: f64 = 1000.0;
const SIZE: (u32, u32) = (640, 360);

enum Cmd {
    /// Write these values (S × N, row-major) as frame n, say it is complete, wait for the
    /// release.
    Frame(u64, Vec<f32>),
    Quit,
}

#[derive(Debug)]
enum Event {
    Ready(Result<(), String>),
    Released(u64),
}

fn sock_path(tag: &str) -> PathBuf {
    std::env::temp_dir().join(format!(
        "vizdeck-share-ts-{tag}-{}.sock",
        std::process::id()
    ))
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

/// Takes fd `i` out of `fds` (leaving a placeholder so later indices stay).
fn take_fd(fds: &mut [std::os::fd::OwnedFd], i: usize) -> std::os::fd::OwnedFd {
    let placeholder = std::fs::File::open("/dev/null").unwrap().into();
    std::mem::replace(&mut fds[i], placeholder)
}

/// The producer: connects to `path`, checks the description, imports the shared buffer (and
/// the semaphores where there are), then obeys `cmds`.
fn producer(
    entry: ash::Entry,
    path: PathBuf,
    cmds: mpsc::Receiver<Cmd>,
    events: mpsc::Sender<Event>,
) {
    let mut stream = UnixStream::connect(&path).expect("connect to vizdeck");
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let (desc, mut fds) = protocol::recv(&mut stream).expect("the description");
    assert_eq!(desc.scene, "timeseries");
    let b = desc.buffers[0].clone();
    assert_eq!(b.dtype, Dtype::F32);
    assert_eq!(b.shape, [S as u64, N as u64]);
    assert_eq!(b.strides, [4 * N as u64, 4]);
    assert_eq!(b.size, (S * N * 4) as u64);
    assert_eq!(
        desc.buffers[1].shape,
        [S as u64, N as u64],
        "the host memfd"
    );
    let mut vk = match VkProducer::new(&entry, &desc.device_uuid) {
        Ok(p) => p,
        Err(why) => {
            let _ = events.send(Event::Ready(Err(why)));
            return;
        }
    };
    let sems = desc.semaphores.as_ref().map(|s| {
        let ready = vk.import_timeline(take_fd(&mut fds, s.ready.fd_index));
        let released = vk.import_timeline(take_fd(&mut fds, s.released.fd_index));
        (ready, released)
    });
    let buf = vk.import(
        take_fd(&mut fds, b.fd_index),
        b.size,
        b.allocation_size,
        b.memory_type_index,
        b.dedicated,
    );
    events.send(Event::Ready(Ok(()))).unwrap();
    let mut last = 0;
    while let Ok(cmd) = cmds.recv() {
        match cmd {
            Cmd::Frame(n, values) => {
                let bytes: &[u8] = bytemuck::cast_slice(&values);
                match sems {
                    Some((ready, released)) => {
                        vk.write_frame(buf, bytes, &[(released, last)], Some((ready, n)))
                    }
                    None => vk.write(buf, bytes),
                }
                last = n;
                FrameMessage::Complete(n).write(&stream).unwrap();
                let m = FrameMessage::read(&stream).expect("the release");
                assert_eq!(m, FrameMessage::Released(n));
                events.send(Event::Released(n)).unwrap();
            }
            Cmd::Quit => break,
        }
    }
    drop(stream);
    drop(vk);
}

/// Starts the producer thread on `path` of `gpu`'s Vulkan instance.
fn spawn_producer(
    gpu: &Gpu,
    path: &std::path::Path,
) -> (
    mpsc::Sender<Cmd>,
    mpsc::Receiver<Event>,
    std::thread::JoinHandle<()>,
) {
    let entry = {
        let hal = unsafe { gpu.device.as_hal::<wgpu::hal::api::Vulkan>() }.expect("Vulkan");
        hal.shared_instance().entry().clone()
    };
    let (cmd_tx, cmd_rx) = mpsc::channel();
    let (ev_tx, ev_rx) = mpsc::channel();
    let path = path.to_path_buf();
    let thread = std::thread::spawn(move || producer(entry, path, cmd_rx, ev_tx));
    (cmd_tx, ev_rx, thread)
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
    if gpu.summary.backend != "Vulkan" {
        eprintln!("skipped: --share needs Vulkan ({})", gpu.summary.backend);
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
        Err(e) if e.contains("lacks") || e.contains("cannot export") => {
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

    let (cmd, events, thread) = spawn_producer(&gpu, &path);
    let mut ready = None;
    steps_until(&gpu, &mut scene, &mut index, |_| {
        ready = events.try_recv().ok();
        ready.is_some()
    });
    match ready {
        Some(Event::Ready(Ok(()))) => {}
        Some(Event::Ready(Err(why))) => {
            eprintln!("skipped: {why}");
            return;
        }
        other => panic!("{other:?}"),
    }

    // Frame 1, decimated exactly; no value crosses the host.
    let one = frame1();
    cmd.send(Cmd::Frame(1, one.clone())).unwrap();
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
    cmd.send(Cmd::Frame(2, two.clone())).unwrap();
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
    gpu.wait_idle();
    let errors = gpu.errors.lock().unwrap().clone();
    assert!(errors.is_empty(), "wgpu errors: {errors:?}");
}

/// The deck of `--headless --scene timeseries --share PATH` with `extra` flags, or the reason
/// it cannot share here.
fn deck_with(gpu: &Gpu, path: &std::path::Path, extra: &[&str]) -> Result<Deck, String> {
    let mut args = vec![
        "vizdeck",
        "--headless",
        "--scene",
        "timeseries",
        "--share",
        path.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let cli = <vizdeck::cli::Cli as clap::Parser>::try_parse_from(args).expect("flags");
    let mut deck = Deck::new(
        gpu,
        vizdeck::headless::OUTPUT_FORMAT,
        cli.scene_index(),
        cli.scene_config(),
    );
    deck.set_overlay(false);
    deck.ensure_active(gpu);
    match deck.active_failure() {
        Some(e) => Err(e.to_string()),
        None => Ok(deck),
    }
}

fn deck_frames_until(gpu: &Gpu, deck: &mut Deck, mut done: impl FnMut(&Deck) -> bool) -> Vec<u8> {
    let start = Instant::now();
    loop {
        let rgba = common::render_frames(gpu, deck, vizdeck::headless::OUTPUT_FORMAT, SIZE, 1);
        if done(deck) {
            return rgba;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "timed out; problem {:?}",
            deck.active_problem()
        );
        std::thread::sleep(Duration::from_millis(2));
    }
}

fn ts_metrics(deck: &Deck) -> serde_json::Value {
    deck.metrics()["timeseries"].clone()
}

#[test]
fn the_deck_charts_a_producer_window_and_fits_its_value_axis() {
    let gpu = common::gpu();
    if gpu.summary.backend != "Vulkan" {
        eprintln!("skipped: --share needs Vulkan ({})", gpu.summary.backend);
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
        Err(e) if e.contains("lacks") || e.contains("cannot export") => {
            eprintln!("skipped: {e}");
            return;
        }
        Err(e) => panic!("{e}"),
    };
    let p = deck.active_problem().unwrap_or_default();
    assert!(p.contains("waiting for a producer on"), "{p}");

    let (cmd, events, thread) = spawn_producer(&gpu, &path);
    let mut ready = None;
    deck_frames_until(&gpu, &mut deck, |_| {
        ready = events.try_recv().ok();
        ready.is_some()
    });
    match ready {
        Some(Event::Ready(Ok(()))) => {}
        Some(Event::Ready(Err(why))) => {
            eprintln!("skipped: {why}");
            return;
        }
        other => panic!("{other:?}"),
    }
    let before = common::render_frames(&gpu, &mut deck, vizdeck::headless::OUTPUT_FORMAT, SIZE, 1);
    let one = frame1();
    let uploaded_before = deck.upload_counters().bytes;
    let frames_before = deck.frames();
    cmd.send(Cmd::Frame(1, one.clone())).unwrap();
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
    gpu.wait_idle();
    let errors = gpu.errors.lock().unwrap().clone();
    assert!(errors.is_empty(), "wgpu errors: {errors:?}");
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
