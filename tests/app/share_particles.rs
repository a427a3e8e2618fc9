//! `--share PATH` with the particle scene (issue 18), in process with the deck on the test GPU
//! (lavapipe in CI): a headless deck started as `--scene particles --particles 1024 --share
//! SOCK` listens; a Vulkan producer in a thread of the test (CUDA's stand-in,
//! tests/common/vk_producer.rs) connects, receives the fd and the description, imports the
//! memory, writes every particle at one known point and says the frame is complete; the deck
//! draws exactly there (the scene's centre for the origin, above it for (0, 0.5, 0)) and nowhere
//! else, with no bytes of the particles uploaded from the host. The producer disconnects: the
//! last frame stays and the scene says "producer disconnected"; a second producer is accepted.
//! A path that is not a socket is refused in one line.
//!
//! Synchronisation is the socket handshake on lavapipe (no timeline semaphore: Mesa 22's lacks
//! `VK_KHR_external_semaphore_fd`); where the device shares semaphores (the NVIDIA driver) the
//! same test runs with the producer ordering its writes on its GPU queue (it waits for
//! `released`, signals `ready`, and never waits on its CPU), and
//! `semaphores_order_frames_on_the_gpu` checks what only semaphores do: vizdeck's copy waits on
//! the GPU for a write that has not run yet, frames sent back to back are shown in order, and a
//! producer that never signals a frame it announced is given up (the last signalled frame stays).

use crate::common;

use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::{Duration, Instant};

use common::share::{self, Cmd, Event, sock_path, take_fd};
use common::vk_producer::VkProducer;
use vizdeck::deck::Deck;
use vizdeck::gpu::Gpu;
use vizdeck::interop::protocol::{self, Dtype, FrameMessage, ShareDescription};
use vizdeck::scene::particles::Particle;

const COUNT: usize = 1024;
const SIZE: (u32, u32) = (640, 400);
/// Pixels at the top of the scene rect holding the scene's notice (30 px down, 15 px text
/// wrapped to the scene's width: up to 3 lines of 18 px here).
const NOTICE_BAND: u32 = 100;

/// The producer's checks of the description: one buffer of `COUNT` particles.
fn check(desc: &ShareDescription) {
    assert_eq!(desc.scene, "particles");
    let b = &desc.buffers[0];
    assert_eq!(b.dtype, Dtype::F32);
    assert_eq!(b.shape, [COUNT as u64, 8]);
    assert_eq!(b.strides, [32, 4]);
    assert_eq!(b.size, (COUNT * 32) as u64);
}

/// `COUNT` particles all at `p`, as bytes.
fn at(p: [f32; 3]) -> Vec<u8> {
    let particles = vec![
        Particle {
            pos: [p[0], p[1], p[2], 0.0],
            vel: [0.0; 4],
        };
        COUNT
    ];
    bytemuck::cast_slice(&particles).to_vec()
}

/// Renders one frame; returns the output (RGBA8).
fn frame(gpu: &Gpu, deck: &mut Deck) -> Vec<u8> {
    common::render_frames(gpu, deck, vizdeck::headless::OUTPUT_FORMAT, SIZE, 1)
}

/// Renders frames until `done` or 30 s; returns the last output.
fn frames_until(gpu: &Gpu, deck: &mut Deck, done: impl FnMut(&Deck) -> bool) -> Vec<u8> {
    share::frames_until(gpu, deck, SIZE, done)
}

/// The pixels of the scene rect that differ from its corner (the background), as (x, y) in
/// output pixels, and the scene rect's centre. The top [`NOTICE_BAND`] pixels are left out:
/// the scene's notice is written there.
fn lit(deck: &Deck, rgba: &[u8]) -> (Vec<(u32, u32)>, (u32, u32)) {
    let (x0, y0, w, h) = deck.scene_rect_px();
    let px = |x: u32, y: u32| {
        let i = ((y * SIZE.0 + x) * 4) as usize;
        [rgba[i], rgba[i + 1], rgba[i + 2]]
    };
    let bg = px(x0 + 2, y0 + 2);
    let mut out = Vec::new();
    for y in y0 + NOTICE_BAND..y0 + h {
        for x in x0..x0 + w {
            if px(x, y) != bg {
                out.push((x, y));
            }
        }
    }
    (out, (x0 + w / 2, y0 + h / 2))
}

fn shared_metrics(deck: &Deck) -> serde_json::Value {
    deck.metrics()["particles"]["shared"].clone()
}

#[test]
fn a_producer_writes_the_particles_vizdeck_draws() {
    let gpu = common::gpu();
    let path = sock_path("draw");
    let Some(mut deck) = sharing_deck(&gpu, &path) else {
        return;
    };
    assert!(path.exists(), "the socket is there");

    // Before a producer: nothing drawn, the scene says what it waits for.
    let rgba = frame(&gpu, &mut deck);
    assert!(lit(&deck, &rgba).0.is_empty(), "nothing drawn yet");
    let p = deck.active_problem().unwrap_or_default();
    assert!(p.contains("waiting for a producer"), "{p}");

    let Some((cmd_tx, ev_rx, thread)) =
        share::connect_producer(&gpu, &mut deck, SIZE, &path, check)
    else {
        return;
    };

    // Frame 1: every particle at the origin, which the camera looks at: the scene's centre.
    let uploaded_before = deck.upload_counters().bytes;
    let frames_before = deck.frames();
    cmd_tx.send(Cmd::Frame(1, at([0.0, 0.0, 0.0]))).unwrap();
    frames_until(&gpu, &mut deck, |_| {
        matches!(ev_rx.try_recv(), Ok(Event::Released(1)))
    });
    let rgba = frame(&gpu, &mut deck);
    let uploaded = deck.upload_counters().bytes - uploaded_before;
    let frames = deck.frames() - frames_before;
    let per_frame = uploaded / frames.max(1);
    eprintln!(
        "uploaded {uploaded} bytes in {frames} frames (the particles: {} bytes)",
        COUNT * 32
    );
    assert!(
        per_frame < 1024,
        "the particles never cross the host: {per_frame} bytes a frame uploaded (uniforms only)"
    );
    let (spots, (cx, cy)) = lit(&deck, &rgba);
    eprintln!("frame 1: lit {spots:?}, centre ({cx}, {cy})");
    assert!(!spots.is_empty(), "the producer's particles are drawn");
    for &(x, y) in &spots {
        assert!(
            x.abs_diff(cx) <= 2 && y.abs_diff(cy) <= 2,
            "lit ({x}, {y}) away from the centre ({cx}, {cy})"
        );
    }
    assert_eq!(deck.active_problem(), None);
    let m = shared_metrics(&deck);
    assert_eq!(m["connected"], true, "{m}");
    assert_eq!(m["frames_shown"], 1, "{m}");
    assert_eq!(m["shown"]["frame"], 1, "{m}");

    // Frame 2: the newest complete frame replaces it: every particle half a unit up.
    cmd_tx.send(Cmd::Frame(2, at([0.0, 0.5, 0.0]))).unwrap();
    frames_until(&gpu, &mut deck, |_| {
        matches!(ev_rx.try_recv(), Ok(Event::Released(2)))
    });
    let rgba = frame(&gpu, &mut deck);
    let (spots2, _) = lit(&deck, &rgba);
    eprintln!("frame 2: lit {spots2:?}");
    assert!(!spots2.is_empty());
    for &(x, y) in &spots2 {
        assert!(x.abs_diff(cx) <= 2, "({x}, {y}) straight above the centre");
        assert!(y + 10 < cy, "({x}, {y}) above the centre ({cx}, {cy})");
    }

    // The producer goes: the last complete frame stays, the scene says so.
    cmd_tx.send(Cmd::Quit).unwrap();
    thread.join().expect("the producer thread");
    let rgba = frames_until(&gpu, &mut deck, |d| {
        d.active_problem()
            .is_some_and(|p| p.contains("producer disconnected"))
    });
    assert_eq!(
        lit(&deck, &rgba).0,
        spots2,
        "the last complete frame is kept"
    );
    let m = shared_metrics(&deck);
    assert_eq!(m["connected"], false, "{m}");
    assert!(
        m["notice"]
            .as_str()
            .is_some_and(|n| n.contains("producer disconnected")),
        "{m}"
    );

    // A new producer is accepted and handed the buffer again.
    let mut again = UnixStream::connect(&path).expect("connect again");
    again
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let (desc, fds) = protocol::recv(&mut again).expect("a second description");
    let sem_fds = if desc.semaphores.is_some() { 2 } else { 0 };
    assert_eq!(
        fds.len(),
        2 + sem_fds,
        "the device buffer's fd and the host memory's (and the semaphores')"
    );
    assert_eq!(desc.buffers[0].shape, [COUNT as u64, 8]);
    frames_until(&gpu, &mut deck, |d| shared_metrics(d)["producers"] == 2);
    assert_eq!(deck.active_problem(), None, "connected again");
    drop(again);
    drop(fds);

    drop(deck);
    assert!(!path.exists(), "the socket file is removed at the end");
    share::assert_no_wgpu_errors(&gpu);
}

#[test]
fn a_path_that_is_not_a_socket_is_refused_in_one_line() {
    let file = sock_path("file");
    std::fs::write(&file, b"not a socket").unwrap();
    let dir = std::env::temp_dir();
    for bad in [file.as_path(), dir.as_path()] {
        let e = <vizdeck::cli::Cli as clap::Parser>::try_parse_from([
            "vizdeck",
            "--headless",
            "--share",
            bad.to_str().unwrap(),
        ])
        .expect_err("refused");
        let msg = e.to_string();
        assert!(msg.contains("not a socket"), "{msg}");
        assert!(
            msg.lines().next().unwrap().contains("not a socket"),
            "the reason on the first line: {msg}"
        );
    }
    assert_eq!(std::fs::read(&file).unwrap(), b"not a socket", "left alone");
    std::fs::remove_file(&file).unwrap();

    // A socket path in a missing directory: the listener says why, in one line.
    let missing = Path::new("/nonexistent-vizdeck-dir/share.sock");
    let e = vizdeck::interop::listener::ShareListener::bind(
        missing,
        Box::new(|| Err("unused".to_string())),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.starts_with("--share /nonexistent-vizdeck-dir/share.sock: "),
        "{e}"
    );
    assert!(!e.contains('\n'), "{e}");
}

#[test]
fn frame_messages_round_trip() {
    for m in [FrameMessage::Complete(7), FrameMessage::Released(u64::MAX)] {
        assert_eq!(FrameMessage::decode(&m.encode()).unwrap(), m);
    }
    let mut bad = FrameMessage::Complete(1).encode();
    bad[0] = b'X';
    assert!(FrameMessage::decode(&bad).is_err());
}

/// The deck sharing `COUNT` particles on `path`, or `None` (said) where sharing cannot run.
fn sharing_deck(gpu: &Gpu, path: &Path) -> Option<Deck> {
    if !share::vulkan(gpu) {
        return None;
    }
    let _ = std::fs::remove_file(path);
    let p = path.to_str().unwrap();
    let flags = [
        "--headless",
        "--scene",
        "particles",
        "--particles",
        "1024",
        "--share",
        p,
    ];
    match share::deck_from_flags(gpu, &flags) {
        Ok(deck) => Some(deck),
        Err(e) if share::cannot_share(&e) => {
            eprintln!("skipped: {e}");
            None
        }
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn semaphores_order_frames_on_the_gpu() {
    let gpu = common::gpu();
    let path = sock_path("sem");
    let Some(mut deck) = sharing_deck(&gpu, &path) else {
        return;
    };
    if shared_metrics(&deck)["semaphores"] != true {
        eprintln!(
            "skipped: this device shares no timeline semaphores ({}): the socket handshake \
             orders frames (a_producer_writes_the_particles_vizdeck_draws covers it)",
            shared_metrics(&deck)["sync"]
        );
        return;
    }
    let entry = share::vulkan_entry(&gpu);
    let mut stream = UnixStream::connect(&path).expect("connect");
    let (desc, mut fds) = protocol::recv(&mut stream).expect("the description");
    let s = desc.semaphores.clone().expect("semaphores described");
    assert_eq!((s.ready.initial_value, s.released.initial_value), (0, 0));
    let mut vk = VkProducer::new(&entry, &desc.device_uuid).expect("the producer's device");
    assert!(vk.semaphores);
    let ready = vk.import_timeline(take_fd(&mut fds, s.ready.fd_index));
    let released = vk.import_timeline(take_fd(&mut fds, s.released.fd_index));
    let b = desc.buffers[0].clone();
    let buf = vk.import(
        take_fd(&mut fds, b.fd_index),
        b.size,
        b.allocation_size,
        b.memory_type_index,
        b.dedicated,
    );
    frames_until(&gpu, &mut deck, |d| shared_metrics(d)["connected"] == true);
    let rgba = frame(&gpu, &mut deck);
    let (_, (cx, cy)) = lit(&deck, &rgba);

    // Frame 1 is announced before its write may run: the write waits on a gate the test opens
    // 300 ms later. vizdeck's copy must wait for it on the GPU: the first frame drawn is the
    // written one, never the buffer before it.
    let gate = vk.timeline();
    vk.write_frame(buf, &at([0.0, 0.0, 0.0]), &[(gate, 1)], Some((ready, 1)));
    FrameMessage::Complete(1).write(&stream).unwrap();
    let opened = std::thread::scope(|scope| {
        let vk = &vk;
        let opener = scope.spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            vk.signal_from_host(gate, 1);
            Instant::now()
        });
        let rgba = frames_until(&gpu, &mut deck, |d| shared_metrics(d)["frames_shown"] == 1);
        let shown_at = Instant::now();
        let opened = opener.join().unwrap();
        assert!(opened <= shown_at, "shown only after the write ran");
        let (spots, _) = lit(&deck, &rgba);
        assert!(!spots.is_empty(), "the written frame is drawn");
        for &(x, y) in &spots {
            assert!(
                x.abs_diff(cx) <= 2 && y.abs_diff(cy) <= 2,
                "({x}, {y}) at the centre"
            );
        }
        opened
    });
    eprintln!("frame 1 shown {:?} after the gate opened", opened.elapsed());

    // Frames 2 and 3 back to back, each write waiting on the GPU for the last release: both are
    // taken in order, the last one stays drawn.
    vk.write_frame(
        buf,
        &at([0.0, 0.5, 0.0]),
        &[(released, 1)],
        Some((ready, 2)),
    );
    FrameMessage::Complete(2).write(&stream).unwrap();
    vk.write_frame(
        buf,
        &at([0.5, 0.0, 0.0]),
        &[(released, 2)],
        Some((ready, 3)),
    );
    FrameMessage::Complete(3).write(&stream).unwrap();
    let rgba = frames_until(&gpu, &mut deck, |d| shared_metrics(d)["frames_shown"] == 3);
    let m = shared_metrics(&deck);
    assert_eq!(m["shown"]["frame"], 3, "{m}");
    let (spots3, _) = lit(&deck, &rgba);
    assert!(!spots3.is_empty());
    for &(x, y) in &spots3 {
        assert!(
            x > cx + 10 && y.abs_diff(cy) <= 2,
            "({x}, {y}) right of the centre"
        );
    }

    // Frame 4 is announced and never signalled: vizdeck gives the producer up after the
    // timeout, its queue goes on, frame 4 is not shown and frame 3 stays.
    FrameMessage::Complete(4).write(&stream).unwrap();
    let rgba = frames_until(&gpu, &mut deck, |d| {
        !shared_metrics(d)["given_up"].is_null()
    });
    let rgba = {
        let _ = rgba;
        frame(&gpu, &mut deck)
    };
    let m = shared_metrics(&deck);
    assert_eq!(m["given_up"]["waited"], 4, "{m}");
    assert_eq!(m["given_up"]["genuine"], 3, "{m}");
    assert_eq!(m["shown"]["frame"], 3, "{m}");
    assert_eq!(
        lit(&deck, &rgba).0,
        spots3,
        "the last signalled frame stays"
    );
    let p = deck.active_problem().unwrap_or_default();
    assert!(p.contains("did not signal it within 10 s"), "{p}");
    drop(stream);
    drop(vk);
    drop(deck);
    share::assert_no_wgpu_errors(&gpu);
}

#[test]
fn sharing_starts_again_on_a_new_device_after_a_loss() {
    let gpu = common::gpu();
    let path = sock_path("loss");
    let Some(mut deck) = sharing_deck(&gpu, &path) else {
        return;
    };
    // A producer on the first device: it holds the description and fds.
    let mut first = UnixStream::connect(&path).expect("connect");
    first
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let (_, fds) = protocol::recv(&mut first).expect("the description");
    frames_until(&gpu, &mut deck, |d| shared_metrics(d)["connected"] == true);

    // The device is lost and replaced: the old producer's socket closes, the scene says the
    // producer must connect again, and the socket is there again for it.
    gpu.destroy_device();
    let gpu2 = common::gpu();
    deck.replace_gpu(&gpu2, "test", Instant::now());
    let mut byte = [0u8; 1];
    let n = std::io::Read::read(&mut first, &mut byte).expect("a clean end of the socket");
    assert_eq!(n, 0, "the old producer sees vizdeck's end of the socket");
    drop(fds);
    frame(&gpu2, &mut deck);
    let p = deck.active_problem().unwrap_or_default();
    assert!(p.contains("must connect again to"), "{p}");
    assert!(p.contains("waiting for a producer"), "{p}");
    assert!(path.exists(), "listening again");

    // A producer on the new device writes a frame: it is drawn, and the notice goes.
    let (cmd_tx, ev_rx, thread) =
        share::connect_producer(&gpu2, &mut deck, SIZE, &path, check).expect("the producer");
    cmd_tx.send(Cmd::Frame(1, at([0.0, 0.0, 0.0]))).unwrap();
    frames_until(&gpu2, &mut deck, |_| {
        matches!(ev_rx.try_recv(), Ok(Event::Released(1)))
    });
    let rgba = frame(&gpu2, &mut deck);
    let (spots, (cx, cy)) = lit(&deck, &rgba);
    // The deck's toast about the loss is at the bottom: only the middle of the scene counts.
    let spots: Vec<_> = spots
        .into_iter()
        .filter(|&(x, y)| x.abs_diff(cx) < 100 && y.abs_diff(cy) < 100)
        .collect();
    assert!(!spots.is_empty(), "the new producer's frame is drawn");
    for &(x, y) in &spots {
        assert!(
            x.abs_diff(cx) <= 2 && y.abs_diff(cy) <= 2,
            "({x}, {y}) at the centre"
        );
    }
    assert_eq!(deck.active_problem(), None, "connected again: no notice");
    cmd_tx.send(Cmd::Quit).unwrap();
    thread.join().expect("the producer thread");
    drop(deck);
    share::assert_no_wgpu_errors(&gpu2);
}
