//! The `--share PATH` listener: a Unix socket at `PATH`, served by the `vizdeck-share` thread,
//! one producer at a time.
//!
//! For each producer that connects, the thread asks the scene's [`Offer`] for the description,
//! fresh fds (one `vkGetMemoryFdKHR` reference per producer) and, where the device can share
//! them, two new timeline semaphores ([`ProducerSemaphores`]); it sends them
//! ([`protocol::send`]), then reads the producer's [`FrameMessage::Complete`]s until it
//! disconnects. Complete frames queue in order ([`ShareListener::take_next`]; at most
//! [`MAX_QUEUED`]) for the frame thread, which answers [`FrameMessage::Released`] once its GPU
//! copy of a frame is done ([`ShareListener::release`], never blocking: a `Released` the
//! producer does not read is dropped). A second producer that connects meanwhile waits in the
//! socket's backlog until the first is gone. The frame thread never blocks on the socket: it only
//! takes the mutex, held for a few field copies.
//!
//! With semaphores the thread also watches the frame vizdeck's queue waits for
//! ([`ShareListener::note_wait`]): when the producer disconnects, or has not signalled `ready`
//! for it within [`SIGNAL_TIMEOUT_S`], the producer is given up ([`GivenUp`]): the counter's
//! genuine value is recorded first, then vizdeck signals `ready` itself from the host so its
//! queue goes on; frames above the genuine value are never shown.
//!
//! Dropping the listener stops the thread (the current producer's socket shut down, `accept`
//! woken by a connection of its own), joins it and removes the socket file.

use std::collections::VecDeque;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::fs::FileTypeExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::protocol::{
    self, FRAME_MSG_LEN, FrameMessage, Memory, SIGNAL_TIMEOUT_S, ShareDescription,
};
use crate::gpu::external::ExternalSemaphore;

/// The most complete frames queued for the frame thread; a producer that runs further ahead is
/// disconnected with an error.
pub(crate) const MAX_QUEUED: usize = 1024;

/// A producer's two timeline semaphores ([`protocol::FrameSemaphores`]): vizdeck's queue waits
/// on `ready` and signals `released`. Made afresh for each producer (counters from 0).
#[derive(Debug)]
pub struct ProducerSemaphores {
    /// The producer signals frame `n` written.
    pub ready: ExternalSemaphore,
    /// vizdeck signals frame `n` copied.
    pub released: ExternalSemaphore,
}

/// What a connecting producer is handed: the description, its fds in `fd_index` order, and the
/// semaphores when the description has them, made afresh for each producer (on the
/// `vizdeck-share` thread). `Err` is one line, kept as the listener's last error; the producer's
/// connection is then closed.
pub(crate) type Offer = Box<dyn FnMut() -> Result<Handover, String> + Send>;

/// What [`Offer`] makes for one producer.
pub struct Handover {
    /// The description sent.
    pub description: ShareDescription,
    /// Its fds, in `fd_index` order.
    pub fds: Vec<OwnedFd>,
    /// The semaphores (`description.semaphores` describes their fds), or `None` for the socket
    /// handshake alone.
    pub semaphores: Option<Arc<ProducerSemaphores>>,
}

/// Why `--share PATH` cannot listen. One line each.
#[derive(Debug, thiserror::Error)]
pub enum ListenError {
    /// Something other than a socket is at the path (vizdeck never removes it).
    #[error("--share {0}: the path exists and is not a socket")]
    NotSocket(PathBuf),
    /// A socket at the path accepts connections: another process listens there.
    #[error("--share {0}: another process is listening on this socket")]
    InUse(PathBuf),
    /// The path cannot be checked, bound or listened on.
    #[error("--share {path}: {err}")]
    Io {
        /// The socket path.
        path: PathBuf,
        /// The error.
        err: std::io::Error,
    },
}

/// Checks `path` for `--share`: nothing there, or a stale socket (one nobody accepts on) is
/// fine; a file, directory or other non-socket, or a socket in use, is refused.
///
/// # Errors
///
/// [`ListenError::NotSocket`], [`ListenError::InUse`], or [`ListenError::Io`] when the path
/// cannot be inspected.
pub fn check_path(path: &Path) -> Result<(), ListenError> {
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(err) => Err(ListenError::Io {
            path: path.to_path_buf(),
            err,
        }),
        Ok(m) if !m.file_type().is_socket() => Err(ListenError::NotSocket(path.to_path_buf())),
        Ok(_) => match UnixStream::connect(path) {
            Ok(_) => Err(ListenError::InUse(path.to_path_buf())),
            Err(_) => Ok(()),
        },
    }
}

/// A complete frame of one producer: the producer's number (1 for the first that connected)
/// and its frame number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Ticket {
    /// Which producer (1, 2, … in the order they connected).
    pub producer: u64,
    /// The producer's frame number (from its [`FrameMessage::Complete`]).
    pub frame: u64,
    /// Which memory holds the frame ([`FrameMessage::CompleteHost`]: host).
    pub memory: Memory,
}

/// A frame taken by the frame thread ([`ShareListener::take_next`]): its ticket, and its
/// producer's semaphores when it has them.
#[derive(Clone, Debug)]
pub struct Taken {
    /// Which frame.
    pub ticket: Ticket,
    /// Its producer's semaphores (`None`: the socket handshake).
    pub semaphores: Option<Arc<ProducerSemaphores>>,
}

/// A producer given up with a frame it did not signal: frames of `producer` above `genuine`
/// (the `ready` counter's value before vizdeck signalled it from the host) are not real.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct GivenUp {
    /// Which producer.
    pub producer: u64,
    /// Its last frame actually signalled.
    pub genuine: u64,
    /// The frame vizdeck's queue waited for.
    pub waited: u64,
}

impl GivenUp {
    /// Whether `ticket` is a frame `given_up` says was never signalled.
    fn covers(given_up: Option<GivenUp>, ticket: &Ticket) -> bool {
        given_up.is_some_and(|g| g.producer == ticket.producer && ticket.frame > g.genuine)
    }
}

/// What the listener has seen, for the scene's notice and report.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Status {
    /// A producer is connected now.
    pub connected: bool,
    /// Producers that connected so far (the description was sent to each).
    pub producers: u64,
    /// `Complete` messages received, all producers together.
    pub frames_complete: u64,
    /// The last connection's failure (an offer that failed, a bad message), one line.
    pub last_error: Option<String>,
    /// Whether the current (or last) producer got semaphores.
    pub semaphores: bool,
    /// `Released` messages dropped because the producer did not read them.
    pub released_dropped: u64,
    /// The last producer given up with an unsignalled frame.
    pub given_up: Option<GivenUp>,
}

#[derive(Default)]
struct State {
    status: Status,
    /// The current producer's number (0 before the first).
    producer: u64,
    /// A clone of the current producer's socket, for `Released`.
    writer: Option<UnixStream>,
    /// Complete frames not taken yet, oldest first.
    queue: VecDeque<Ticket>,
    /// The current producer's semaphores.
    semaphores: Option<Arc<ProducerSemaphores>>,
    /// The frames vizdeck's queue waits for (with semaphores), and since when.
    awaited: Vec<(Ticket, Instant)>,
}

struct Shared {
    state: Mutex<State>,
    stop: AtomicBool,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The `--share` socket and its `vizdeck-share` thread (see the module docs).
pub struct ShareListener {
    path: PathBuf,
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for ShareListener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShareListener")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl ShareListener {
    /// Listens on `path` ([`check_path`] first; a stale socket is replaced) and starts the
    /// `vizdeck-share` thread, which hands each producer what `offer` makes.
    ///
    /// # Errors
    ///
    /// One-line [`ListenError`]s: a non-socket or a socket in use at `path`, or the bind failed
    /// (no such directory, no permission, a path over 107 bytes).
    pub fn bind(path: &Path, offer: Offer) -> Result<ShareListener, ListenError> {
        check_path(path)?;
        let io = |err| ListenError::Io {
            path: path.to_path_buf(),
            err,
        };
        if std::fs::symlink_metadata(path).is_ok() {
            std::fs::remove_file(path).map_err(io)?; // a stale socket (checked above)
        }
        let listener = UnixListener::bind(path).map_err(io)?;
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            stop: AtomicBool::new(false),
        });
        let thread_shared = shared.clone();
        let thread = std::thread::Builder::new()
            .name("vizdeck-share".into())
            .spawn(move || serve(listener, &thread_shared, offer))
            .map_err(io)?;
        Ok(ShareListener {
            path: path.to_path_buf(),
            shared,
            thread: Some(thread),
        })
    }

    /// The socket path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The oldest complete frame not taken yet, if one came and `accept` says yes to it (left
    /// queued otherwise). Frames of a producer given up above its genuine value are skipped.
    ///
    /// A device frame with semaphores is taken to be waited for in vizdeck's next submit: from
    /// then on the thread gives the producer up (signalling `ready` itself) if it disconnects or
    /// does not signal the frame within [`SIGNAL_TIMEOUT_S`]; taking and that watch are one step
    /// under the lock, so a producer that leaves meanwhile is always caught.
    pub fn take_next(&self, accept: impl FnOnce(&Ticket) -> bool) -> Option<Taken> {
        let mut state = self.shared.lock();
        while let Some(t) = state.queue.front() {
            if !GivenUp::covers(state.status.given_up, t) {
                break;
            }
            state.queue.pop_front();
        }
        let t = *state.queue.front()?;
        if !accept(&t) {
            return None;
        }
        state.queue.pop_front();
        let semaphores = if state.producer == t.producer {
            state.semaphores.clone()
        } else {
            None
        };
        if semaphores.is_some() && t.memory == Memory::Device {
            state.awaited.push((t, Instant::now()));
        }
        Some(Taken {
            ticket: t,
            semaphores,
        })
    }

    /// Whether frame `ticket` of a producer with semaphores was really signalled: the `ready`
    /// counter `value` (read *before* this call) reached it, and the producer was not given up
    /// with a genuine value below it.
    pub fn signalled(&self, ticket: Ticket, value: u64) -> bool {
        value >= ticket.frame && !self.given_up(ticket)
    }

    /// Whether `ticket`'s producer was given up before signalling it ([`GivenUp`]).
    pub fn given_up(&self, ticket: Ticket) -> bool {
        GivenUp::covers(self.shared.lock().status.given_up, &ticket)
    }

    /// Tells the producer of `ticket` that its frame is copied ([`FrameMessage::Released`]); a
    /// producer gone since is skipped. Never blocks for long: 16 bytes on a socket the producer
    /// reads (a failed write is left to the reader, which sees the disconnect).
    pub fn release(&self, ticket: Ticket) {
        self.releaser().release(ticket);
    }

    /// A handle that releases frames from elsewhere (a `Queue::on_submitted_work_done`
    /// callback).
    pub fn releaser(&self) -> Releaser {
        Releaser(self.shared.clone())
    }

    /// What the listener has seen so far.
    pub fn status(&self) -> Status {
        self.shared.lock().status.clone()
    }
}

/// Sends [`FrameMessage::Released`] to the current producer ([`ShareListener::releaser`]).
#[derive(Clone)]
pub struct Releaser(Arc<Shared>);

impl Releaser {
    /// See [`ShareListener::release`].
    pub fn release(&self, ticket: Ticket) {
        let mut state = self.0.lock();
        if state.producer == ticket.producer
            && let Some(w) = &state.writer
        {
            let msg = FrameMessage::Released(ticket.frame).encode();
            let flags = rustix::net::SendFlags::DONTWAIT | rustix::net::SendFlags::NOSIGNAL;
            if !matches!(rustix::net::send(w, &msg, flags), Ok(FRAME_MSG_LEN)) {
                // Unread (the buffer is full) or gone: the reader sees a disconnect.
                state.status.released_dropped += 1;
            }
        }
    }
}

impl Drop for ShareListener {
    fn drop(&mut self) {
        {
            let mut state = self.shared.lock();
            self.shared.stop.store(true, Ordering::SeqCst);
            if let Some(w) = state.writer.take() {
                let _ = w.shutdown(std::net::Shutdown::Both);
            }
        }
        // Wakes `accept` (the thread sees `stop` and ends).
        let _ = UnixStream::connect(&self.path);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        let _ = std::fs::remove_file(&self.path);
    }
}

/// How often the thread looks at the frame vizdeck's queue waits for, while the producer is
/// silent.
const POLL: Duration = Duration::from_millis(200);

/// The `vizdeck-share` thread: accept, hand over, read frame messages, until `stop`.
fn serve(listener: UnixListener, shared: &Shared, mut offer: Offer) {
    for conn in listener.incoming() {
        if shared.stop.load(Ordering::SeqCst) {
            break;
        }
        let Ok(mut stream) = conn else { continue };
        let Handover {
            description,
            fds,
            semaphores,
        } = match offer() {
            Ok(o) => o,
            Err(e) => {
                shared.lock().status.last_error = Some(e);
                continue;
            }
        };
        let borrowed: Vec<BorrowedFd<'_>> = fds.iter().map(|f| f.as_fd()).collect();
        let sent = protocol::send(&mut stream, &description, &borrowed);
        drop(fds); // vizdeck's copies; the producer received its own
        if let Err(e) = sent {
            shared.lock().status.last_error = Some(e.to_string());
            continue;
        }
        let producer = {
            let mut state = shared.lock();
            if shared.stop.load(Ordering::SeqCst) {
                break;
            }
            state.writer = stream.try_clone().ok();
            state.producer += 1;
            state.status.producers += 1;
            state.status.connected = true;
            state.status.semaphores = semaphores.is_some();
            state.semaphores = semaphores.clone();
            state.producer
        };
        let error = read_frames(&stream, shared, producer, semaphores.as_deref());
        let mut state = shared.lock();
        state.status.connected = false;
        state.writer = None;
        if let Some(sems) = &semaphores {
            if let Some(why) = give_up(&mut state, sems, producer, None)
                && !shared.stop.load(Ordering::SeqCst)
            {
                state.status.last_error = Some(why);
            }
            // Queued device frames it never signalled would be waited for in vain.
            let signalled = sems.ready.value().unwrap_or(0);
            state.queue.retain(|t| {
                t.producer != producer || t.memory == Memory::Host || t.frame <= signalled
            });
        }
        if !shared.stop.load(Ordering::SeqCst) && error.is_some() {
            state.status.last_error = error;
        }
    }
}

/// Reads one producer's frame messages until it disconnects (`None`) or fails (the one-line
/// reason). With semaphores, gives the producer up when vizdeck's queue has waited
/// [`SIGNAL_TIMEOUT_S`] for a frame it has not signalled.
fn read_frames(
    stream: &UnixStream,
    shared: &Shared,
    producer: u64,
    semaphores: Option<&ProducerSemaphores>,
) -> Option<String> {
    use std::io::Read;
    if let Err(e) = stream.set_read_timeout(Some(POLL)) {
        return Some(format!("share socket: {e}"));
    }
    let mut buf = [0u8; FRAME_MSG_LEN];
    let mut have = 0;
    let mut last_frame = 0u64;
    loop {
        if shared.stop.load(Ordering::SeqCst) {
            return None;
        }
        match (&*stream).read(&mut buf[have..]) {
            Ok(0) => {
                return (have > 0).then(|| "the producer closed mid-message".to_string());
            }
            Ok(k) => have += k,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock
                        | std::io::ErrorKind::TimedOut
                        | std::io::ErrorKind::Interrupted
                ) => {}
            Err(e) => return Some(format!("share socket: {e}")),
        }
        if let Some(sems) = semaphores {
            let mut state = shared.lock();
            if let Some(why) = give_up(&mut state, sems, producer, Some(SIGNAL_TIMEOUT_S)) {
                let _ = stream.shutdown(std::net::Shutdown::Both);
                return Some(why);
            }
        }
        if have < FRAME_MSG_LEN {
            continue;
        }
        have = 0;
        let (frame, memory) = match FrameMessage::decode(&buf) {
            Ok(FrameMessage::Complete(n)) => (n, Memory::Device),
            Ok(FrameMessage::CompleteHost(n)) => (n, Memory::Host),
            Ok(other) => return Some(format!("unexpected message from the producer: {other:?}")),
            Err(e) => return Some(e.to_string()),
        };
        if semaphores.is_some() && frame <= last_frame {
            return Some(format!(
                "frame {frame} after frame {last_frame}: frame numbers must increase (they are semaphore values)"
            ));
        }
        last_frame = frame;
        let mut state = shared.lock();
        if state.queue.len() >= MAX_QUEUED {
            return Some(format!(
                "the producer ran {MAX_QUEUED} frames ahead of vizdeck (wait for `released` before writing on)"
            ));
        }
        state.queue.push_back(Ticket {
            producer,
            frame,
            memory,
        });
        state.status.frames_complete += 1;
    }
}

/// With the lock held: if vizdeck's queue waits for frames of `producer` that `sems.ready` has
/// not reached — at all (`timeout` `None`: the producer is gone) or within `timeout` seconds of
/// the oldest wait — records [`GivenUp`] (the genuine value first), signals `ready` from the host
/// to the last frame waited for so the queue goes on, and returns why. Waits that were met are
/// forgotten.
fn give_up(
    state: &mut State,
    sems: &ProducerSemaphores,
    producer: u64,
    timeout: Option<u64>,
) -> Option<String> {
    state.awaited.retain(|(t, _)| t.producer == producer);
    if state.awaited.is_empty() {
        return None;
    }
    let genuine = match sems.ready.value() {
        Ok(v) => v,
        Err(e) => {
            state.awaited.clear();
            return Some(format!("reading the ready semaphore: {e}"));
        }
    };
    state.awaited.retain(|(t, _)| t.frame > genuine);
    let since = state.awaited.iter().map(|&(_, at)| at).min()?;
    if timeout.is_some_and(|s| since.elapsed() < Duration::from_secs(s)) {
        return None;
    }
    let waited = state.awaited.iter().map(|(t, _)| t.frame).max()?;
    state.awaited.clear();
    state.status.given_up = Some(GivenUp {
        producer,
        genuine,
        waited,
    });
    if let Err(e) = sems.ready.signal_from_host(waited) {
        log::error!("--share: signalling frame {waited} from the host: {e}");
    }
    Some(match timeout {
        Some(s) => format!(
            "the producer said frame {waited} complete but did not signal it within {s} s (last signalled: {genuine})"
        ),
        None => format!(
            "the producer left before signalling frame {waited} (last signalled: {genuine})"
        ),
    })
}
