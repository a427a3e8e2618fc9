//! [`SharedFrames`]: one scene's `--share` input — a device buffer a producer writes
//! ([`ExternalMemoryBuffer`]), a host memfd beside it ([`HostMemory`], the comparison path), the
//! listener, and the frame thread's side of the frame protocol
//! ([`FrameMessage`](super::protocol::FrameMessage)): each complete frame is copied on the GPU
//! into the scene's own buffer, which the scene draws every frame, so a half-written frame is
//! never drawn and the last complete one stays after the producer has gone.
//!
//! **With semaphores** (the device has `VK_KHR_external_semaphore_fd`; every producer gets a
//! new [`ProducerSemaphores`] pair): a device frame `n` is taken into one of two *slots*
//! (vizdeck-owned buffers of the shared buffer's size) in a submit that waits for `ready` ≥ `n`
//! at the transfer stage and signals `released` = `n` — both on the GPU. At a later frame, once
//! the `ready` counter reached `n` (read without blocking) and the producer was not given up with
//! `n` unsignalled, the slot is *promoted*: copied into the scene's buffer. A frame the
//! producer never signalled (it died, or stalled past the timeout, and vizdeck signalled `ready`
//! itself so its queue goes on) is dropped from its slot, never shown. Two slots let frame
//! `n + 1` be taken while `n` waits to be promoted, so the producer runs at vizdeck's frame rate.
//!
//! **Without semaphores** (lavapipe): the socket handshake; frame `n` is copied straight into
//! the scene's buffer, the producer having finished its writes before it said so.
//!
//! Host frames ("complete (host)") are uploaded through the frame's uploader into the scene's
//! buffer (counted in `BytesUploaded`), only when no device frame is in flight (so frames stay
//! in order); with semaphores the same submit signals `released` = `n`.
//!
//! In every case "released n" goes back on the socket once the submit that consumed frame `n`
//! is done (`Queue::on_submitted_work_done`).

use std::collections::VecDeque;
use std::path::Path;
use std::sync::Arc;

use super::host::{HostFrame, HostMemory};
use super::listener::{Handover, ProducerSemaphores, ShareListener, Status, Taken, Ticket};
use super::protocol::{FrameSemaphores, Memory, ShareDescription, SharedSemaphore};
use crate::gpu::Gpu;
use crate::gpu::external::{ExternalMemoryBuffer, ExternalMemoryInfo, ExternalSemaphore};
use crate::gpu::frame::GpuFrame;

/// Makes a scene's description of the shared buffers: the device buffer (its memory is fd 0)
/// and the host memfd of the given length in bytes (fd 1). [`SharedFrames`] adds the semaphores.
pub(crate) type Describe = Box<dyn Fn(&ExternalMemoryInfo, u64) -> ShareDescription + Send>;

/// Slots of device frames in flight (taken, not yet promoted).
const SLOTS: usize = 2;

/// A device frame taken into a slot, waiting to be promoted.
struct InFlight {
    taken: Taken,
    slot: usize,
}

/// One scene's shared-buffer input (see the module docs).
pub(crate) struct SharedFrames {
    buffer: Arc<ExternalMemoryBuffer>,
    host: Arc<HostMemory>,
    listener: ShareListener,
    queue: wgpu::Queue,
    /// Why there are no semaphores (`None`: every producer gets them).
    no_semaphores: Option<String>,
    slots: Vec<wgpu::Buffer>,
    in_flight: VecDeque<InFlight>,
    /// The frame copied into the scene's buffer last.
    shown: Option<Ticket>,
    /// Consumed by this frame's submit: "released" once it is done.
    to_release: Vec<Ticket>,
    frames_shown: u64,
    frames_host: u64,
    frames_dropped: u64,
    host_bytes_uploaded: u64,
    label: &'static str,
    /// Made anew after a lost device ([`SharedFrames::mark_restarted`]).
    restarted: bool,
}

impl std::fmt::Debug for SharedFrames {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedFrames")
            .field("label", &self.label)
            .field("listener", &self.listener)
            .field("shown", &self.shown)
            .finish_non_exhaustive()
    }
}

impl SharedFrames {
    /// Allocates `bytes` (a non-zero multiple of 4) of shared device memory labelled
    /// `"{label}:shared"` and a host memfd of the same size on `gpu`, checks whether the device
    /// can share timeline semaphores, and listens on `path`; `describe` makes the description of
    /// the scene's arrays for each producer.
    ///
    /// # Errors
    ///
    /// One line: the buffer cannot be shared (not Vulkan, extension missing, …; see
    /// [`ExternalMemoryError`](crate::gpu::external::ExternalMemoryError)), the memfd cannot be
    /// made, or the socket cannot listen ([`ListenError`](super::listener::ListenError)).
    pub fn new(
        gpu: &Gpu,
        path: &Path,
        label: &'static str,
        bytes: u64,
        describe: Describe,
    ) -> Result<SharedFrames, String> {
        let buffer = ExternalMemoryBuffer::new(
            &gpu.device,
            &format!("{label}:shared"),
            bytes,
            ExternalMemoryBuffer::USAGE,
        )
        .map_err(|e| format!("--share: {e}"))?;
        let buffer = Arc::new(buffer);
        let host = HostMemory::new(&format!("vizdeck-{label}"), bytes as usize)
            .map_err(|e| format!("--share: host memory of {bytes} bytes: {e}"))?;
        let host = Arc::new(host);
        let no_semaphores = ExternalSemaphore::new(&gpu.device, "share:probe", 0)
            .err()
            .map(|e| e.to_string());
        if let Some(why) = &no_semaphores {
            log::info!("--share: frames ordered by the socket handshake ({why})");
        }
        let (offered, offered_host) = (buffer.clone(), host.clone());
        let device = gpu.device.clone();
        let with_semaphores = no_semaphores.is_none();
        let listener = ShareListener::bind(
            path,
            Box::new(move || {
                let mut fds = vec![
                    offered.export_fd().map_err(|e| e.to_string())?,
                    offered_host
                        .fd()
                        .map_err(|e| format!("host memory fd: {e}"))?,
                ];
                let mut description = describe(offered.info(), offered_host.len() as u64);
                let semaphores = if with_semaphores {
                    let made = |name: &str| {
                        ExternalSemaphore::new(&device, name, 0).map_err(|e| e.to_string())
                    };
                    let sems = ProducerSemaphores {
                        ready: made(&format!("{label}:share:ready"))?,
                        released: made(&format!("{label}:share:released"))?,
                    };
                    let n = fds.len();
                    fds.push(sems.ready.export_fd().map_err(|e| e.to_string())?);
                    fds.push(sems.released.export_fd().map_err(|e| e.to_string())?);
                    description.semaphores = Some(FrameSemaphores {
                        ready: SharedSemaphore {
                            fd_index: n,
                            initial_value: 0,
                        },
                        released: SharedSemaphore {
                            fd_index: n + 1,
                            initial_value: 0,
                        },
                    });
                    Some(Arc::new(sems))
                } else {
                    None
                };
                Ok(Handover {
                    description,
                    fds,
                    semaphores,
                })
            }),
        )
        .map_err(|e| e.to_string())?;
        Ok(SharedFrames {
            buffer,
            host,
            listener,
            queue: gpu.queue.clone(),
            no_semaphores,
            slots: Vec::new(),
            in_flight: VecDeque::new(),
            shown: None,
            to_release: Vec::new(),
            frames_shown: 0,
            frames_host: 0,
            frames_dropped: 0,
            host_bytes_uploaded: 0,
            label,
            restarted: false,
        })
    }

    /// Whether a producer's frame has been copied into the scene's buffer (drawn from then on).
    pub fn has_frame(&self) -> bool {
        self.shown.is_some()
    }

    /// The socket path.
    pub fn path(&self) -> &Path {
        self.listener.path()
    }

    /// Producer frames copied into the scene's buffer so far (it changes when a new one is).
    pub fn frames_shown(&self) -> u64 {
        self.frames_shown
    }

    /// Whether producers get semaphores (the waits on the GPU).
    pub fn semaphores(&self) -> bool {
        self.no_semaphores.is_none()
    }

    /// Once a frame, recording into the frame's encoder: answers "released" for what the last
    /// frame consumed (once its GPU work is done), promotes the slots whose frames were
    /// signalled into `dst` (the scene's buffer, at least as large as the frame it copies:
    /// `min(sizes)` bytes are copied), and takes the next complete frame (module docs). Returns
    /// whether `dst` holds a producer's frame. Never blocks.
    pub fn prepare(&mut self, gpu: &mut GpuFrame<'_>, dst: &wgpu::Buffer) -> bool {
        if !self.to_release.is_empty() {
            // Consumed by the last submit: all work submitted so far covers it.
            let releaser = self.listener.releaser();
            let done = std::mem::take(&mut self.to_release);
            gpu.gpu().queue.on_submitted_work_done(move || {
                for t in done {
                    releaser.release(t);
                }
            });
        }
        let bytes = self.buffer.buffer().size().min(dst.size());
        let promoted = self.promote(gpu, dst, bytes);
        let free_slot = (0..SLOTS).find(|i| self.in_flight.iter().all(|f| f.slot != *i));
        let idle = self.in_flight.is_empty() && !promoted;
        let semaphores = self.semaphores();
        let taken = self.listener.take_next(|t| match t.memory {
            Memory::Host => idle,
            Memory::Device if semaphores => free_slot.is_some(),
            Memory::Device => idle,
        });
        let Some(taken) = taken else {
            return self.shown.is_some();
        };
        let t = taken.ticket;
        match (t.memory, free_slot) {
            (Memory::Device, Some(slot)) if semaphores => {
                let queue = &gpu.gpu().queue;
                if let Some(s) = &taken.semaphores {
                    s.ready.wait_on_next_submit(queue, t.frame);
                    s.released.signal_on_next_submit(queue, t.frame);
                }
                let slot_buffer = self.slot(gpu.device(), slot).clone();
                gpu.encoder().copy_buffer_to_buffer(
                    self.buffer.buffer(),
                    0,
                    &slot_buffer,
                    0,
                    bytes,
                );
                self.in_flight.push_back(InFlight { taken, slot });
            }
            (Memory::Device, _) => {
                gpu.encoder()
                    .copy_buffer_to_buffer(self.buffer.buffer(), 0, dst, 0, bytes);
                self.show(t);
            }
            (Memory::Host, _) => {
                // The producer does not write it until "released n" (the handshake): under the
                // host-import strategy the GPU copies from the mapping in place.
                let src = HostFrame::new(self.host.clone(), bytes as usize);
                if gpu.write_owned(dst, 0, src) {
                    self.host_bytes_uploaded += bytes;
                }
                if let Some(s) = &taken.semaphores {
                    s.released.signal_on_next_submit(&gpu.gpu().queue, t.frame);
                }
                self.frames_host += 1;
                self.show(t);
            }
        }
        self.to_release.push(t);
        self.shown.is_some()
    }

    /// Promotes the in-flight frames whose `ready` value was really signalled, oldest first, and
    /// drops those of a producer given up; returns whether one was copied into `dst`.
    fn promote(&mut self, gpu: &mut GpuFrame<'_>, dst: &wgpu::Buffer, bytes: u64) -> bool {
        let mut promoted = false;
        while let Some(f) = self.in_flight.front() {
            let t = f.taken.ticket;
            let ok = match &f.taken.semaphores {
                // The counter is read before the given-up check (listener::signalled).
                Some(s) => match s.ready.value() {
                    Ok(v) => self.listener.signalled(t, v),
                    Err(_) => false,
                },
                None => true,
            };
            let dropped = !ok && self.listener.given_up(t);
            if !ok && !dropped {
                break;
            }
            let Some(f) = self.in_flight.pop_front() else {
                break;
            };
            if ok {
                let slot = &self.slots[f.slot];
                gpu.encoder().copy_buffer_to_buffer(slot, 0, dst, 0, bytes);
                self.show(t);
                promoted = true;
            } else {
                self.frames_dropped += 1;
            }
            self.defer_drop(f.taken.semaphores);
        }
        promoted
    }

    fn show(&mut self, t: Ticket) {
        self.shown = Some(t);
        self.frames_shown += 1;
    }

    /// Drops `semaphores` once all work submitted so far (which may wait on or signal them) is
    /// done.
    fn defer_drop(&self, semaphores: Option<Arc<ProducerSemaphores>>) {
        if let Some(s) = semaphores {
            self.queue.on_submitted_work_done(move || drop(s));
        }
    }

    /// Slot `i`, made on first use.
    fn slot(&mut self, device: &wgpu::Device, i: usize) -> &wgpu::Buffer {
        while self.slots.len() <= i {
            let n = self.slots.len();
            self.slots
                .push(device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some(if n == 0 { "share:slot0" } else { "share:slot1" }),
                    size: self.buffer.buffer().size(),
                    usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::COPY_SRC,
                    mapped_at_creation: false,
                }));
        }
        &self.slots[i]
    }

    /// Marks this input as made anew after a lost GPU device (the old one's memory went with
    /// it): until a producer's frame is shown, the notice asks the producer to connect again.
    pub fn mark_restarted(&mut self) {
        self.restarted = true;
    }

    /// The line shown on the scene: after a lost device, that the producer must connect again
    /// (until one's frame is shown); waiting for the first producer, or "producer disconnected"
    /// (the last complete frame still drawn); with the last connection error if there was one.
    pub fn notice(&self) -> Option<String> {
        let restarted = (self.restarted && self.shown.is_none()).then(|| {
            format!(
                "the GPU device was lost and recreated: the shared buffer is new; the producer \
                 must connect again to {}",
                self.listener.path().display()
            )
        });
        let s = self.listener.status();
        let base = if s.connected {
            None
        } else if s.producers == 0 {
            Some(format!(
                "waiting for a producer on {}",
                self.listener.path().display()
            ))
        } else if self.shown.is_some() {
            Some("producer disconnected (showing its last complete frame)".to_string())
        } else {
            Some("producer disconnected".to_string())
        };
        let lines: Vec<String> = restarted
            .into_iter()
            .chain(base)
            .chain(s.last_error)
            .collect();
        (!lines.is_empty()).then(|| lines.join("; "))
    }

    /// The listener's status.
    pub fn status(&self) -> Status {
        self.listener.status()
    }

    /// The report's `shared` object: path, bytes, producers, frames complete / shown / from
    /// host memory / dropped unsignalled, host bytes uploaded, the frame shown, how frames are
    /// ordered (`sync`), the notice and the last error.
    pub fn metrics(&self) -> serde_json::Value {
        let s = self.listener.status();
        let sync = match &self.no_semaphores {
            None => "timeline semaphores (waits on the GPU)".to_string(),
            Some(why) => format!("socket handshake ({why})"),
        };
        serde_json::json!({
            "path": self.listener.path().display().to_string(),
            "bytes": self.buffer.buffer().size(),
            "connected": s.connected,
            "producers": s.producers,
            "frames_complete": s.frames_complete,
            "frames_shown": self.frames_shown,
            "frames_host": self.frames_host,
            "frames_dropped": self.frames_dropped,
            "host_bytes": self.host.len(),
            "host_bytes_uploaded": self.host_bytes_uploaded,
            "shown": self.shown,
            "sync": sync,
            "semaphores": self.semaphores(),
            "released_dropped": s.released_dropped,
            "given_up": s.given_up,
            "notice": self.notice(),
            "last_error": s.last_error,
        })
    }
}

impl Drop for SharedFrames {
    fn drop(&mut self) {
        for f in std::mem::take(&mut self.in_flight) {
            self.defer_drop(f.taken.semaphores);
        }
    }
}
