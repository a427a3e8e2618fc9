//! The host-memory side of `--share` ([`Memory::Host`](super::protocol::Memory::Host)): a
//! `memfd` of plain host memory that vizdeck hands to a producer beside its device memory, and
//! vizdeck's own read-only mapping of it. The producer maps the fd shared and writes a frame
//! there (from CUDA: `cudaHostRegister` makes its device-to-host copies into it pinned); on
//! "frame n complete (host)" vizdeck uploads the mapping's bytes through the frame's uploader.

use std::os::fd::{AsFd, OwnedFd};

use rustix::fs::{MemfdFlags, ftruncate, memfd_create};
use rustix::mm::{MapFlags, ProtFlags, mmap, munmap};

/// A memfd of `len` bytes and vizdeck's read-only shared mapping of it.
pub struct HostMemory {
    fd: OwnedFd,
    ptr: *mut std::ffi::c_void,
    len: usize,
}

// SAFETY: the mapping is plain memory owned by this value (unmapped in `drop`); vizdeck only
// reads it, and only through `bytes`, whose callers follow the frame handshake.
unsafe impl Send for HostMemory {}
// SAFETY: as above; `bytes` hands out shared reads only.
unsafe impl Sync for HostMemory {}

impl std::fmt::Debug for HostMemory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostMemory")
            .field("len", &self.len)
            .finish()
    }
}

impl HostMemory {
    /// A memfd named `name` of `len` bytes (> 0; zero-filled, pages allocated when written),
    /// mapped read-only and shared.
    ///
    /// # Errors
    ///
    /// The system's error (no memfd, no address space, a size over the limits).
    pub fn new(name: &str, len: usize) -> std::io::Result<HostMemory> {
        let fd = memfd_create(name, MemfdFlags::CLOEXEC)?;
        ftruncate(&fd, len as u64)?;
        // SAFETY: a fresh mapping (null hint) of `len` bytes of `fd`, which is `len` bytes long;
        // it is unmapped once, in `drop`.
        let ptr = unsafe {
            mmap(
                std::ptr::null_mut(),
                len,
                ProtFlags::READ,
                MapFlags::SHARED,
                &fd,
                0,
            )
        }?;
        Ok(HostMemory { fd, ptr, len })
    }

    /// A new fd of the same memory, for a producer.
    ///
    /// # Errors
    ///
    /// The system's error (`dup`).
    pub fn fd(&self) -> std::io::Result<OwnedFd> {
        self.fd.as_fd().try_clone_to_owned()
    }

    /// Bytes of the memory.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it has no bytes (never: `new` takes `len` > 0).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The memory's bytes. Another process may write them: read them only while the producer
    /// must not (between its "frame n complete (host)" and vizdeck's "released n").
    pub fn bytes(&self) -> &[u8] {
        // SAFETY: `ptr` maps `len` readable bytes for as long as `self` lives.
        unsafe { std::slice::from_raw_parts(self.ptr.cast::<u8>(), self.len) }
    }
}

/// The first `len` bytes of a [`HostMemory`] holding a producer's complete frame, owned for an
/// upload that may read them in place ([`GpuFrame::write_owned`](crate::gpu::frame::GpuFrame::write_owned):
/// under the `host-import` strategy the GPU copies straight from the mapping). The frame
/// handshake keeps the bytes unchanged until vizdeck answers "released", after the upload's
/// submit is done.
#[derive(Clone, Debug)]
pub struct HostFrame {
    memory: std::sync::Arc<HostMemory>,
    len: usize,
}

impl HostFrame {
    /// The first `len` bytes (at most the memory's length) of `memory`.
    pub fn new(memory: std::sync::Arc<HostMemory>, len: usize) -> HostFrame {
        let len = len.min(memory.len());
        HostFrame { memory, len }
    }

    /// The frame's bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.memory.bytes()[..self.len]
    }
}

// SAFETY: the bytes are the memfd's mapping, which lives as long as the `Arc<HostMemory>` the
// frame holds (moving the frame moves no byte); the producer does not write a frame until
// vizdeck releases it, which happens only once the frame is dropped.
unsafe impl crate::gpu::upload::HostSource for HostFrame {
    fn host_bytes(&self) -> &[u8] {
        self.bytes()
    }
}

impl Drop for HostMemory {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`, unmapped once; no `bytes` borrow outlives `self`.
        let _ = unsafe { munmap(self.ptr, self.len) };
    }
}
