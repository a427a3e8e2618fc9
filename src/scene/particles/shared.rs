//! `--share PATH` for the particle scene (issue 18): the particles come from a producer process
//! (CUDA, or any Vulkan client) that writes them into GPU memory vizdeck shares with it, instead
//! of the simulation.
//!
//! The shared buffer is an [`ExternalMemoryBuffer`] of `count` particles in the layout of the
//! simulation's state buffers ([`Particle`], 32 bytes): described to the producer as f32 of
//! shape `[count, 8]`, strides `[32, 4]` bytes: per particle x, y, z (world units; the camera
//! looks at the origin from 3.5 units), age (s), vx, vy, vz (world units / s; the colour by
//! speed), lifetime (s; 0 = immortal; a particle with age ≥ lifetime > 0 is not drawn).
//!
//! Frames: without a shared timeline semaphore (lavapipe lacks `VK_KHR_external_semaphore_fd`;
//! wgpu-hal 30 does not enable it) the producer says "frame n complete" on the socket
//! ([`FrameMessage`](crate::interop::protocol::FrameMessage)). At the next `prepare` vizdeck
//! copies the newest complete frame on the GPU (`copy_buffer_to_buffer`, device memory to
//! device memory: nothing crosses the host, `BytesUploaded` counts none of it) into the
//! simulation's current state buffer, which the draw reads every frame; once that frame's work
//! is done on the GPU (`Queue::on_submitted_work_done`, registered at the next `prepare`) it
//! answers "released n" and the producer may write again. So vizdeck always draws a complete
//! frame, never one being written, and keeps the last one when the producer goes away ("producer
//! disconnected" on the scene); a new producer may connect. With a timeline semaphore both waits
//! move to the GPU and this CPU round trip goes; the copy stays (it is what lets the producer
//! write the next frame while vizdeck draws the last).
//!
//! Host memory (the comparison path of issue 18): beside the device buffer (`buffers[0]`, fd 0)
//! the producer is handed a `memfd` of the same size (`buffers[1]`, `"memory": "host"`, fd 1;
//! [`HostMemory`]). A producer that writes there (from CUDA: a pinned device-to-host copy into
//! the `cudaHostRegister`ed mapping) says "frame n complete (host)"
//! ([`FrameMessage::CompleteHost`](crate::interop::protocol::FrameMessage::CompleteHost)); vizdeck
//! then uploads the memfd's bytes into the state buffer through the frame's uploader (the deck's
//! upload strategy; `BytesUploaded` counts them) and answers "released n" once that upload's
//! submit is done, as for device memory.
//!
//! The scene does not simulate while shared: no steps, interpolation alpha 1, and the count and
//! mode controls are hidden. The statistics reduction runs on the copied frame.

use std::path::Path;
use std::sync::Arc;

use super::cpu::Particle;
use crate::gpu::Gpu;
use crate::gpu::external::ExternalMemoryBuffer;
use crate::gpu::frame::GpuFrame;
use crate::interop::host::HostMemory;
use crate::interop::listener::{ShareListener, Status, Ticket};
use crate::interop::protocol::{
    Dtype, Memory, PROTOCOL_VERSION, ShareDescription, SharedBuffer, uuid_hex,
};

/// Floats per particle in the shared array (`shape[1]`).
pub const FLOATS_PER_PARTICLE: u64 = 8;

/// The shared-buffer input of the particle scene (see the module docs).
pub struct SharedInput {
    buffer: Arc<ExternalMemoryBuffer>,
    /// The host-memory alternative (a memfd of the same size).
    host: Arc<HostMemory>,
    listener: ShareListener,
    count: u32,
    /// The frame copied last (drawn since).
    shown: Option<Ticket>,
    /// Copied by this frame's encoder; released at the next `prepare`, once its GPU work is done.
    to_release: Option<Ticket>,
    /// Frames copied so far.
    frames_shown: u64,
    /// Of those, frames uploaded from host memory.
    frames_host: u64,
    /// Bytes uploaded from host memory so far (through the frame's uploader).
    host_bytes_uploaded: u64,
}

impl std::fmt::Debug for SharedInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedInput")
            .field("listener", &self.listener)
            .field("count", &self.count)
            .field("shown", &self.shown)
            .finish_non_exhaustive()
    }
}

/// The description a producer receives for `buffer` of `count` particles (its memory fd is fd 0;
/// the host memory's, `host_bytes` long, fd 1).
pub fn description(buffer: &ExternalMemoryBuffer, count: u32, host_bytes: u64) -> ShareDescription {
    let info = buffer.info();
    let shape = [u64::from(count), FLOATS_PER_PARTICLE];
    ShareDescription {
        protocol: PROTOCOL_VERSION,
        scene: "particles".into(),
        device_uuid: uuid_hex(&info.device_uuid),
        driver_uuid: uuid_hex(&info.driver_uuid),
        buffers: vec![
            SharedBuffer::c_contiguous("particles", 0, info, Dtype::F32, &shape),
            SharedBuffer::host_c_contiguous("particles", 1, host_bytes, Dtype::F32, &shape),
        ],
        semaphore: None,
    }
}

impl SharedInput {
    /// Allocates the shared buffer for `count` particles (> 0) on `gpu` and listens on `path`.
    ///
    /// # Errors
    ///
    /// One line: the buffer cannot be shared (not Vulkan, extension missing, …; see
    /// [`ExternalMemoryError`](crate::gpu::external::ExternalMemoryError)) or the socket cannot
    /// listen ([`ListenError`](crate::interop::listener::ListenError)).
    pub fn new(gpu: &Gpu, path: &Path, count: u32) -> Result<SharedInput, String> {
        let bytes = u64::from(count) * std::mem::size_of::<Particle>() as u64;
        let buffer = ExternalMemoryBuffer::new(
            &gpu.device,
            "particles:shared",
            bytes,
            ExternalMemoryBuffer::USAGE,
        )
        .map_err(|e| format!("--share: {e}"))?;
        let buffer = Arc::new(buffer);
        let host = HostMemory::new("vizdeck-particles", bytes as usize)
            .map_err(|e| format!("--share: host memory of {bytes} bytes: {e}"))?;
        let host = Arc::new(host);
        let (offered, offered_host) = (buffer.clone(), host.clone());
        let listener = ShareListener::bind(
            path,
            Box::new(move || {
                let fd = offered.export_fd().map_err(|e| e.to_string())?;
                let host_fd = offered_host
                    .fd()
                    .map_err(|e| format!("host memory fd: {e}"))?;
                let desc = description(&offered, count, offered_host.len() as u64);
                Ok((desc, vec![fd, host_fd]))
            }),
        )
        .map_err(|e| e.to_string())?;
        Ok(SharedInput {
            buffer,
            host,
            listener,
            count,
            shown: None,
            to_release: None,
            frames_shown: 0,
            frames_host: 0,
            host_bytes_uploaded: 0,
        })
    }

    /// Whether a producer's frame has been copied (drawn from then on).
    pub fn has_frame(&self) -> bool {
        self.shown.is_some()
    }

    /// The shared buffer.
    pub fn buffer(&self) -> &wgpu::Buffer {
        self.buffer.buffer()
    }

    /// Once a frame: releases the frame copied by the last frame (when its GPU work is done),
    /// and copies the newest complete frame, if a new one came, into `dst` (the simulation's
    /// current state buffer, at least `count` particles) through the frame's encoder. Returns
    /// whether a frame has been copied so far (before the first there is nothing to draw).
    /// Never blocks.
    pub fn prepare(&mut self, gpu: &mut GpuFrame<'_>, dst: &wgpu::Buffer) -> bool {
        if let Some(t) = self.to_release.take() {
            // The copy was in the last submit: all work submitted so far covers it.
            let listener = self.listener.releaser();
            gpu.gpu()
                .queue
                .on_submitted_work_done(move || listener.release(t));
        }
        if let Some(t) = self.listener.take_newest() {
            let bytes = self.buffer.buffer().size().min(dst.size());
            match t.memory {
                Memory::Device => {
                    gpu.encoder()
                        .copy_buffer_to_buffer(self.buffer.buffer(), 0, dst, 0, bytes);
                }
                Memory::Host => {
                    // The producer does not write until "released n" (the handshake).
                    let src = &self.host.bytes()[..bytes as usize];
                    if gpu.write(dst, 0, src) {
                        self.host_bytes_uploaded += bytes;
                    }
                    self.frames_host += 1;
                }
            }
            self.shown = Some(t);
            self.to_release = Some(t);
            self.frames_shown += 1;
        }
        self.shown.is_some()
    }

    /// The line shown on the scene: waiting for the first producer, or "producer disconnected"
    /// (the last complete frame still drawn), with the last connection error if there was one.
    pub fn notice(&self) -> Option<String> {
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
        match (base, s.last_error) {
            (Some(b), Some(e)) => Some(format!("{b}; {e}")),
            (b, e) => b.or(e),
        }
    }

    /// The listener's status.
    pub fn status(&self) -> Status {
        self.listener.status()
    }

    /// The report's `particles.shared` object.
    pub fn metrics(&self) -> serde_json::Value {
        let s = self.listener.status();
        serde_json::json!({
            "path": self.listener.path().display().to_string(),
            "count": self.count,
            "bytes": self.buffer.buffer().size(),
            "connected": s.connected,
            "producers": s.producers,
            "frames_complete": s.frames_complete,
            "frames_shown": self.frames_shown,
            "frames_host": self.frames_host,
            "host_bytes": self.host.len(),
            "host_bytes_uploaded": self.host_bytes_uploaded,
            "shown": self.shown,
            "sync": "socket handshake (no timeline semaphore)",
            "notice": self.notice(),
            "last_error": s.last_error,
        })
    }
}
