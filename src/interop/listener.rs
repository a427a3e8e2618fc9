//! The `--share PATH` listener: a Unix socket at `PATH`, served by the `vizdeck-share` thread,
//! one producer at a time.
//!
//! For each producer that connects, the thread asks the scene's [`Offer`] for the description and
//! fresh fds (one `vkGetMemoryFdKHR` reference per producer), sends them
//! ([`protocol::send`]), then reads its [`FrameMessage::Complete`]s until it disconnects; the
//! newest complete frame waits in a mutex for the frame thread ([`ShareListener::take_newest`]),
//! which answers [`FrameMessage::Released`] once its GPU copy of that frame is done
//! ([`ShareListener::release`]). A second producer that connects meanwhile waits in the socket's
//! backlog until the first is gone. The frame thread never blocks on the socket: it only takes
//! the mutex, held for a few field copies (and for the 16-byte `Released` write, on a socket the
//! producer reads).
//!
//! Dropping the listener stops the thread (the current producer's socket shut down, `accept`
//! woken by a connection of its own), joins it and removes the socket file.

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::fs::FileTypeExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;

use super::protocol::{self, FrameMessage, Memory, ShareDescription};

/// What a connecting producer is handed: the description and its fds in `fd_index` order, made
/// afresh for each producer (on the `vizdeck-share` thread). `Err` is one line, kept as the
/// listener's last error; the producer's connection is then closed.
pub type Offer = Box<dyn FnMut() -> Result<(ShareDescription, Vec<OwnedFd>), String> + Send>;

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
}

#[derive(Default)]
struct State {
    status: Status,
    /// The current producer's number (0 before the first).
    producer: u64,
    /// A clone of the current producer's socket, for `Released`.
    writer: Option<UnixStream>,
    /// The newest complete frame not taken yet.
    newest: Option<Ticket>,
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

    /// The newest complete frame not taken before, if one came (older ones are skipped).
    pub fn take_newest(&self) -> Option<Ticket> {
        self.shared.lock().newest.take()
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
        let state = self.0.lock();
        if state.producer == ticket.producer
            && let Some(w) = &state.writer
        {
            let _ = FrameMessage::Released(ticket.frame).write(w);
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

/// The `vizdeck-share` thread: accept, hand over, read frame messages, until `stop`.
fn serve(listener: UnixListener, shared: &Shared, mut offer: Offer) {
    for conn in listener.incoming() {
        if shared.stop.load(Ordering::SeqCst) {
            break;
        }
        let Ok(mut stream) = conn else { continue };
        let (desc, fds) = match offer() {
            Ok(o) => o,
            Err(e) => {
                shared.lock().status.last_error = Some(e);
                continue;
            }
        };
        let borrowed: Vec<BorrowedFd<'_>> = fds.iter().map(|f| f.as_fd()).collect();
        let sent = protocol::send(&mut stream, &desc, &borrowed);
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
            state.producer
        };
        let error = loop {
            match FrameMessage::read(&stream) {
                Ok(m @ (FrameMessage::Complete(frame) | FrameMessage::CompleteHost(frame))) => {
                    let memory = match m {
                        FrameMessage::CompleteHost(_) => Memory::Host,
                        _ => Memory::Device,
                    };
                    let mut state = shared.lock();
                    state.newest = Some(Ticket {
                        producer,
                        frame,
                        memory,
                    });
                    state.status.frames_complete += 1;
                }
                Ok(other) => {
                    break Some(format!("unexpected message from the producer: {other:?}"));
                }
                Err(protocol::ShareError::Io(e))
                    if e.kind() == std::io::ErrorKind::UnexpectedEof =>
                {
                    break None;
                }
                Err(e) => break Some(e.to_string()),
            }
        };
        let mut state = shared.lock();
        state.status.connected = false;
        state.writer = None;
        if !shared.stop.load(Ordering::SeqCst) && error.is_some() {
            state.status.last_error = error;
        }
    }
}
