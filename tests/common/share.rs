//! What the `--share` tests share (tests/app/share_particles.rs, tests/app/share_timeseries.rs): the
//! socket path, the deck started with `--share`, frames until a condition, the Vulkan producer
//! thread (tests/common/vk_producer.rs) that writes the bytes it is told to as frame n and waits
//! for vizdeck's release, and its fd and instance helpers.

use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use vizdeck::deck::Deck;
use vizdeck::gpu::Gpu;
use vizdeck::interop::protocol::{self, FrameMessage, ShareDescription};

use super::vk_producer::VkProducer;

/// What the test tells the producer thread.
pub enum Cmd {
    /// Write these bytes into the shared buffer as frame n, say it is complete, wait for the
    /// release.
    Frame(u64, Vec<u8>),
    /// Disconnect.
    Quit,
}

/// What the producer thread tells the test.
#[derive(Debug)]
pub enum Event {
    /// The description checked and the memory imported (or the reason to skip).
    Ready(Result<(), String>),
    /// vizdeck released frame n.
    Released(u64),
}

/// A socket path of this test process, `tag` telling the tests apart.
pub fn sock_path(tag: &str) -> PathBuf {
    std::env::temp_dir().join(format!("vizdeck-share-{tag}-{}.sock", std::process::id()))
}

/// Whether `gpu` can share (Vulkan); says why not.
pub fn vulkan(gpu: &Gpu) -> bool {
    if gpu.summary.backend != "Vulkan" {
        eprintln!("skipped: --share needs Vulkan ({})", gpu.summary.backend);
        return false;
    }
    true
}

/// Whether a scene's failure `e` says this device cannot share (a test skips), not a bug.
pub fn cannot_share(e: &str) -> bool {
    e.contains("lacks") || e.contains("cannot export")
}

/// The headless deck of the flags `args` (after the program name), its overlay off and its
/// scene started, or the scene's failure.
pub fn deck_from_flags(gpu: &Gpu, args: &[&str]) -> Result<Deck, String> {
    let cli = <vizdeck::cli::Cli as clap::Parser>::try_parse_from(
        std::iter::once("vizdeck").chain(args.iter().copied()),
    )
    .expect("flags");
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

/// Renders frames of `size` until `done` or 30 s; returns the last output (RGBA8).
pub fn frames_until(
    gpu: &Gpu,
    deck: &mut Deck,
    size: (u32, u32),
    mut done: impl FnMut(&Deck) -> bool,
) -> Vec<u8> {
    let start = Instant::now();
    loop {
        let rgba = super::render_frames(gpu, deck, vizdeck::headless::OUTPUT_FORMAT, size, 1);
        if done(deck) {
            return rgba;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "timed out; problem {:?}",
            deck.active_problem()
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The Vulkan entry of `gpu`'s instance, for a producer of the test's own.
pub fn vulkan_entry(gpu: &Gpu) -> ash::Entry {
    let hal = unsafe { gpu.device.as_hal::<wgpu::hal::api::Vulkan>() }.expect("Vulkan");
    hal.shared_instance().entry().clone()
}

/// Takes fd `i` out of `fds` (leaving a placeholder so later indices stay).
pub fn take_fd(fds: &mut [OwnedFd], i: usize) -> OwnedFd {
    let placeholder = std::fs::File::open("/dev/null").unwrap().into();
    std::mem::replace(&mut fds[i], placeholder)
}

/// Starts the producer thread on `path` of `gpu`'s Vulkan instance; `check` asserts what the
/// test expects of the description.
pub fn spawn_producer(
    gpu: &Gpu,
    path: &Path,
    check: fn(&ShareDescription),
) -> (mpsc::Sender<Cmd>, mpsc::Receiver<Event>, JoinHandle<()>) {
    let entry = vulkan_entry(gpu);
    let (cmd_tx, cmd_rx) = mpsc::channel();
    let (ev_tx, ev_rx) = mpsc::channel();
    let path = path.to_path_buf();
    let thread = std::thread::spawn(move || producer(entry, path, check, cmd_rx, ev_tx));
    (cmd_tx, ev_rx, thread)
}

/// A producer thread connected to a deck's `--share` socket ([`connect_producer`]).
pub type Producer = (mpsc::Sender<Cmd>, mpsc::Receiver<Event>, JoinHandle<()>);

/// Starts the producer thread on `path` ([`spawn_producer`]) and renders `deck`'s frames of
/// `size` until it has the description (the listener accepts and sends while the deck draws).
/// `None` when the test must skip (said on stderr: the producer's device cannot import).
pub fn connect_producer(
    gpu: &Gpu,
    deck: &mut Deck,
    size: (u32, u32),
    path: &Path,
    check: fn(&ShareDescription),
) -> Option<Producer> {
    let (cmd, events, thread) = spawn_producer(gpu, path, check);
    let mut first = None;
    frames_until(gpu, deck, size, |_| {
        first = events.try_recv().ok();
        first.is_some()
    });
    producer_ready(first).then_some((cmd, events, thread))
}

/// Whether the producer's first event says it is ready; says why a test skips (the producer's
/// device cannot import), panics on anything else.
pub fn producer_ready(first: Option<Event>) -> bool {
    match first {
        Some(Event::Ready(Ok(()))) => true,
        Some(Event::Ready(Err(why))) => {
            eprintln!("skipped: {why}");
            false
        }
        other => panic!("{other:?}"),
    }
}

/// The producer: connects to `path`, checks the description, imports the shared buffer (and
/// the semaphores where there are), then obeys `cmds`.
fn producer(
    entry: ash::Entry,
    path: PathBuf,
    check: fn(&ShareDescription),
    cmds: mpsc::Receiver<Cmd>,
    events: mpsc::Sender<Event>,
) {
    let mut stream = UnixStream::connect(&path).expect("connect to vizdeck");
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let (desc, mut fds) = protocol::recv(&mut stream).expect("the description");
    check(&desc);
    let b = desc.buffers[0].clone();
    let mut vk = match VkProducer::new(&entry, &desc.device_uuid) {
        Ok(p) => p,
        Err(why) => {
            let _ = events.send(Event::Ready(Err(why)));
            return;
        }
    };
    assert_eq!(protocol::uuid_hex(&vk.driver_uuid), desc.driver_uuid);
    let sems = desc.semaphores.as_ref().map(|s| {
        assert!(
            vk.semaphores,
            "vizdeck shares semaphores its device cannot import"
        );
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
            Cmd::Frame(n, bytes) => {
                match sems {
                    // On the GPU: wait for the last frame's release, write, signal ready.
                    Some((ready, released)) => {
                        vk.write_frame(buf, &bytes, &[(released, last)], Some((ready, n)))
                    }
                    None => vk.write(buf, &bytes),
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

/// Waits for `gpu` and asserts it reported no wgpu error.
pub fn assert_no_wgpu_errors(gpu: &Gpu) {
    gpu.wait_idle();
    let errors = gpu.errors.lock().unwrap().clone();
    assert!(errors.is_empty(), "wgpu errors: {errors:?}");
}
