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
//! Frames ([`SharedFrames`]): each complete frame is copied on the GPU (device memory to device
//! memory: nothing crosses the host, `BytesUploaded` counts none of it) into the simulation's
//! current state buffer, which the draw reads every frame — after vizdeck's queue waited on the
//! GPU for the producer's `ready` semaphore where the device can share one, after the socket
//! handshake where it cannot (lavapipe). So vizdeck always draws a complete frame, never one
//! being written, and keeps the last one when the producer goes away ("producer disconnected"
//! on the scene); a new producer may connect. Beside the device buffer (`buffers[0]`, fd 0) the
//! producer is handed a host memfd of the same size (`buffers[1]`, `"memory": "host"`, fd 1),
//! the comparison path: "frame n complete (host)" uploads it through the frame's uploader.
//!
//! The scene does not simulate while shared: no steps, interpolation alpha 1, and the count and
//! mode controls are hidden. The statistics reduction runs on the copied frame.

use std::path::Path;

use super::cpu::Particle;
use crate::gpu::Gpu;
use crate::gpu::external::ExternalMemoryInfo;
use crate::gpu::frame::GpuFrame;
use crate::interop::frames::SharedFrames;
use crate::interop::listener::Status;
use crate::interop::protocol::{Dtype, PROTOCOL_VERSION, ShareDescription, SharedBuffer, uuid_hex};

/// Floats per particle in the shared array (`shape[1]`).
pub(crate) const FLOATS_PER_PARTICLE: u64 = 8;

/// The shared-buffer input of the particle scene (see the module docs).
#[derive(Debug)]
pub(crate) struct SharedInput {
    frames: SharedFrames,
    count: u32,
}

/// The description a producer receives for the shared buffer `info` of `count` particles (its
/// memory fd is fd 0; the host memory's, `host_bytes` long, fd 1); the semaphores are added by
/// [`SharedFrames`].
pub fn description(info: &ExternalMemoryInfo, count: u32, host_bytes: u64) -> ShareDescription {
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
        semaphores: None,
    }
}

impl SharedInput {
    /// Allocates the shared buffer for `count` particles (> 0) on `gpu` and listens on `path`.
    ///
    /// # Errors
    ///
    /// One line, as [`SharedFrames::new`].
    pub fn new(gpu: &Gpu, path: &Path, count: u32) -> Result<SharedInput, String> {
        let bytes = u64::from(count) * std::mem::size_of::<Particle>() as u64;
        let frames = SharedFrames::new(
            gpu,
            path,
            "particles",
            bytes,
            Box::new(move |info, host_bytes| description(info, count, host_bytes)),
        )?;
        Ok(SharedInput { frames, count })
    }

    /// Whether a producer's frame has been copied (drawn from then on).
    pub fn has_frame(&self) -> bool {
        self.frames.has_frame()
    }

    /// The socket path.
    pub fn path(&self) -> &Path {
        self.frames.path()
    }

    /// Once a frame: takes the producer's frames into `dst` (the simulation's current state
    /// buffer, at least `count` particles; [`SharedFrames::prepare`]). Returns whether a frame
    /// has been copied so far (before the first there is nothing to draw). Never blocks.
    pub fn prepare(&mut self, gpu: &mut GpuFrame<'_>, dst: &wgpu::Buffer) -> bool {
        self.frames.prepare(gpu, dst)
    }

    /// See [`SharedFrames::mark_restarted`].
    pub fn mark_restarted(&mut self) {
        self.frames.mark_restarted();
    }

    /// The line shown on the scene ([`SharedFrames::notice`]).
    pub fn notice(&self) -> Option<String> {
        self.frames.notice()
    }

    /// The listener's status.
    pub fn status(&self) -> Status {
        self.frames.status()
    }

    /// The report's `particles.shared` object ([`SharedFrames::metrics`] and the count).
    pub fn metrics(&self) -> serde_json::Value {
        let mut m = self.frames.metrics();
        m["count"] = self.count.into();
        m
    }
}
