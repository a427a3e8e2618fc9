//! The `--share` wire format: one message from vizdeck to a producer after it connects.
//!
//! ```text
//! bytes 0..4   magic b"VZSH"
//! bytes 4..8   n: the JSON body's length in bytes, u32 little-endian (≤ MAX_BODY)
//! bytes 8..8+n the body: a ShareDescription as UTF-8 JSON
//! ```
//!
//! The fds (each shared buffer's memory, then the semaphore's) ride as one `SCM_RIGHTS` control
//! message (unix(7)) on the `sendmsg` that carries the header; the description names each by its
//! place in that list (`fd_index`). At most [`MAX_FDS`] fds. The receiver takes them close-on-exec
//! (`MSG_CMSG_CLOEXEC`); an fd imported into Vulkan (`VkImportMemoryFdInfoKHR`) or CUDA
//! (`cudaImportExternalMemory`) belongs to the driver from then on.
//!
//! Each buffer says which memory its fd is ([`SharedBuffer::memory`]): `"device"`, exportable
//! Vulkan memory on vizdeck's GPU (the zero-copy path), or `"host"`, a `memfd` of plain host
//! memory the producer `mmap`s read-write (and, from CUDA, `cudaHostRegister`s so its device to
//! host copies into it are pinned). The particle scene offers both for the same array
//! (`buffers[0]` device, fd 0; `buffers[1]` host, fd 1); the producer writes either and says
//! which in its frame message ([`FrameMessage::Complete`] for device memory,
//! [`FrameMessage::CompleteHost`] for host memory). vizdeck copies device memory on the GPU;
//! host memory it uploads through the frame's uploader (the deck's upload strategy, counted in
//! `BytesUploaded`) from its own read-only mapping of the memfd. A description without
//! `memory` fields (an older vizdeck) is all device memory.

use std::io::{IoSlice, IoSliceMut, Read, Write};
use std::mem::MaybeUninit;
use std::os::fd::{BorrowedFd, OwnedFd};
use std::os::unix::net::UnixStream;

use rustix::net::{
    RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, SendAncillaryBuffer,
    SendAncillaryMessage, SendFlags,
};

use vizdeck_gpu::external::ExternalMemoryInfo;

/// The first four bytes of every message.
pub const MAGIC: [u8; 4] = *b"VZSH";
/// Bytes of the header: magic and body length.
pub const HEADER_LEN: usize = 8;
/// The largest body accepted, in bytes.
pub const MAX_BODY: usize = 1 << 20;
/// The most fds one message carries.
pub(crate) const MAX_FDS: usize = 8;
/// The protocol version in [`ShareDescription::protocol`].
pub const PROTOCOL_VERSION: u32 = 1;

/// Why a message could not be sent or read. One line each.
#[derive(Debug, thiserror::Error)]
pub enum ShareError {
    /// The socket failed, or closed mid-message.
    #[error("share socket: {0}")]
    Io(#[from] std::io::Error),
    /// The header is not a vizdeck share header.
    #[error("not a vizdeck share message (magic {0:02x?})")]
    BadMagic([u8; 4]),
    /// The body is larger than [`MAX_BODY`].
    #[error("share message body of {0} bytes (at most {MAX_BODY})")]
    TooLarge(usize),
    /// More fds than [`MAX_FDS`], or the kernel truncated them (`MSG_CTRUNC`).
    #[error("share message with too many fds (at most {MAX_FDS})")]
    TooManyFds,
    /// The body is not a valid description.
    #[error("bad share description: {0}")]
    Description(String),
}

/// The element type of a shared array (NumPy / DLPack names).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Dtype {
    /// IEEE 754 binary32.
    F32,
    /// IEEE 754 binary16.
    F16,
    /// Unsigned 32-bit integer.
    U32,
    /// Signed 32-bit integer.
    I32,
}

impl Dtype {
    /// Bytes of one element.
    pub fn size(self) -> u64 {
        match self {
            Dtype::F16 => 2,
            Dtype::F32 | Dtype::U32 | Dtype::I32 => 4,
        }
    }
}

/// Which memory a shared buffer's fd is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Memory {
    /// Exportable Vulkan memory on vizdeck's GPU (`VK_KHR_external_memory_fd`, opaque fd):
    /// import it into Vulkan or CUDA.
    #[default]
    Device,
    /// A `memfd` of host memory (`allocation_size` bytes): `mmap` it shared, read-write.
    /// `memory_type_index` and `dedicated` mean nothing for it (0, false).
    Host,
}

/// One shared buffer: how to import its memory and how its bytes are laid out.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SharedBuffer {
    /// What the scene reads from it, e.g. `"positions"`.
    pub name: String,
    /// Its memory fd's place in the message's fds.
    pub fd_index: usize,
    /// Bytes of the buffer.
    pub size: u64,
    /// Bytes of the exported memory (import exactly this many).
    pub allocation_size: u64,
    /// Vulkan memory type index to import into (Vulkan importers only).
    pub memory_type_index: u32,
    /// Import as a dedicated allocation (Vulkan: `VkMemoryDedicatedAllocateInfo`; CUDA:
    /// `cudaExternalMemoryDedicated`).
    pub dedicated: bool,
    /// Element type.
    pub dtype: Dtype,
    /// Elements along each axis, outermost first, e.g. `[n, 4]` for n xyzw positions.
    pub shape: Vec<u64>,
    /// Bytes between neighbours along each axis (C order for `[n, 4]` f32: `[16, 4]`).
    pub strides: Vec<u64>,
    /// Bytes from the buffer's start to element 0.
    pub offset: u64,
    /// Which memory the fd is (absent: device).
    #[serde(default)]
    pub memory: Memory,
}

impl SharedBuffer {
    /// The description of `info`'s buffer holding a C-contiguous `dtype` array of `shape` at
    /// offset 0.
    pub fn c_contiguous(
        name: &str,
        fd_index: usize,
        info: &ExternalMemoryInfo,
        dtype: Dtype,
        shape: &[u64],
    ) -> SharedBuffer {
        let mut strides = vec![dtype.size(); shape.len()];
        for i in (0..shape.len().saturating_sub(1)).rev() {
            strides[i] = strides[i + 1] * shape[i + 1];
        }
        SharedBuffer {
            name: name.to_string(),
            fd_index,
            size: info.size,
            allocation_size: info.allocation_size,
            memory_type_index: info.memory_type_index,
            dedicated: info.dedicated,
            dtype,
            shape: shape.to_vec(),
            strides,
            offset: 0,
            memory: Memory::Device,
        }
    }

    /// The description of a host-memory buffer (a memfd of `size` bytes) holding a C-contiguous
    /// `dtype` array of `shape` at offset 0.
    pub fn host_c_contiguous(
        name: &str,
        fd_index: usize,
        size: u64,
        dtype: Dtype,
        shape: &[u64],
    ) -> SharedBuffer {
        let info = ExternalMemoryInfo {
            size,
            allocation_size: size,
            memory_type_index: 0,
            dedicated: false,
            device_uuid: [0; 16],
            driver_uuid: [0; 16],
            device_name: String::new(),
        };
        SharedBuffer {
            memory: Memory::Host,
            ..SharedBuffer::c_contiguous(name, fd_index, &info, dtype, shape)
        }
    }

    /// The byte just past the array's last element (0 for an empty array).
    pub fn end(&self) -> Option<u64> {
        if self.shape.contains(&0) {
            return Some(self.offset);
        }
        self.shape
            .iter()
            .zip(&self.strides)
            .try_fold(self.offset, |end, (&n, &s)| {
                (n - 1).checked_mul(s).and_then(|d| end.checked_add(d))
            })
            .and_then(|last| last.checked_add(self.dtype.size()))
    }
}

/// One shared timeline semaphore: its fd and the value it holds when handed over.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SharedSemaphore {
    /// Its fd's place in the message's fds (`VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT`;
    /// CUDA: `cudaExternalSemaphoreHandleTypeTimelineSemaphoreFd`).
    pub fd_index: usize,
    /// The counter's value when handed over (0: each producer gets new semaphores).
    pub initial_value: u64,
}

/// The two timeline semaphores that order a producer's frames against vizdeck's reads on the
/// GPUs (see [`FrameMessage`] for the rules): values are frame numbers.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct FrameSemaphores {
    /// Producer → vizdeck: the producer's queue signals `n` once frame `n` is written; vizdeck's
    /// queue waits for it before it reads the shared buffers.
    pub ready: SharedSemaphore,
    /// vizdeck → producer: vizdeck's queue signals `n` once it has copied frame `n`; the
    /// producer's queue waits for it before it writes the next frame.
    pub released: SharedSemaphore,
}

/// The JSON body: everything a producer needs besides the fds.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ShareDescription {
    /// [`PROTOCOL_VERSION`].
    pub protocol: u32,
    /// The scene that draws the data: `"particles"`, `"timeseries"` or `"pointcloud"`.
    pub scene: String,
    /// vizdeck's `VkPhysicalDeviceIDProperties::deviceUUID`, 32 lowercase hex digits (compare
    /// with CUDA's `cudaDeviceProp::uuid` bytes).
    pub device_uuid: String,
    /// `VkPhysicalDeviceIDProperties::driverUUID`, 32 lowercase hex digits (Vulkan importers).
    pub driver_uuid: String,
    /// The shared buffers.
    pub buffers: Vec<SharedBuffer>,
    /// The frame semaphores, when vizdeck's device can share them (`VK_KHR_external_semaphore_fd`);
    /// `None`: the frames are ordered by the socket handshake alone ([`FrameMessage`]).
    pub semaphores: Option<FrameSemaphores>,
}

/// 16 bytes as 32 lowercase hex digits.
pub fn uuid_hex(uuid: &[u8; 16]) -> String {
    uuid.iter().map(|b| format!("{b:02x}")).collect()
}

impl ShareDescription {
    /// Checks what a receiver relies on: the version, each array inside its buffer, fd indices
    /// below `fds` and not repeated, UUIDs of 32 hex digits.
    ///
    /// # Errors
    ///
    /// [`ShareError::Description`] naming the first problem.
    pub fn validate(&self, fds: usize) -> Result<(), ShareError> {
        let bad = |m: String| Err(ShareError::Description(m));
        if self.protocol != PROTOCOL_VERSION {
            return bad(format!(
                "protocol {} (this vizdeck speaks {PROTOCOL_VERSION})",
                self.protocol
            ));
        }
        for (what, u) in [("device", &self.device_uuid), ("driver", &self.driver_uuid)] {
            if u.len() != 32 || !u.bytes().all(|b| b.is_ascii_hexdigit()) {
                return bad(format!("{what} UUID {u:?} is not 32 hex digits"));
            }
        }
        let mut used = vec![false; fds];
        let indices = self
            .buffers
            .iter()
            .map(|b| (b.name.as_str(), b.fd_index))
            .chain(self.semaphores.iter().flat_map(|s| {
                [
                    ("ready semaphore", s.ready.fd_index),
                    ("released semaphore", s.released.fd_index),
                ]
            }));
        for (name, i) in indices {
            match used.get_mut(i) {
                None => return bad(format!("{name}: fd {i} of {fds}")),
                Some(true) => return bad(format!("{name}: fd {i} used twice")),
                Some(u) => *u = true,
            }
        }
        for b in &self.buffers {
            if b.shape.len() != b.strides.len() {
                return bad(format!("{}: shape and strides differ in length", b.name));
            }
            match b.end() {
                Some(end) if end <= b.size && b.size <= b.allocation_size => {}
                _ => {
                    return bad(format!(
                        "{}: array of shape {:?} does not fit {} bytes",
                        b.name, b.shape, b.size
                    ));
                }
            }
        }
        Ok(())
    }

    /// The whole message: header and JSON body.
    ///
    /// # Errors
    ///
    /// [`ShareError::TooLarge`] for a body over [`MAX_BODY`].
    pub fn encode(&self) -> Result<Vec<u8>, ShareError> {
        let body = serde_json::to_vec(self).map_err(|e| ShareError::Description(e.to_string()))?;
        if body.len() > MAX_BODY {
            return Err(ShareError::TooLarge(body.len()));
        }
        let mut msg = Vec::with_capacity(HEADER_LEN + body.len());
        msg.extend_from_slice(&MAGIC);
        msg.extend_from_slice(&(body.len() as u32).to_le_bytes());
        msg.extend_from_slice(&body);
        Ok(msg)
    }
}

/// The body length a header announces.
///
/// # Errors
///
/// [`ShareError::BadMagic`], [`ShareError::TooLarge`].
pub fn body_len(header: &[u8; HEADER_LEN]) -> Result<usize, ShareError> {
    let magic = [header[0], header[1], header[2], header[3]];
    if magic != MAGIC {
        return Err(ShareError::BadMagic(magic));
    }
    let n = u32::from_le_bytes([header[4], header[5], header[6], header[7]]) as usize;
    if n > MAX_BODY {
        return Err(ShareError::TooLarge(n));
    }
    Ok(n)
}

/// Sends `desc` with `fds` (in `fd_index` order) on `stream`: the header and `fds` by one
/// `sendmsg`, then the body.
///
/// # Errors
///
/// [`ShareError::TooManyFds`], an invalid description, or the socket's error.
pub fn send(
    stream: &mut UnixStream,
    desc: &ShareDescription,
    fds: &[BorrowedFd<'_>],
) -> Result<(), ShareError> {
    if fds.len() > MAX_FDS {
        return Err(ShareError::TooManyFds);
    }
    desc.validate(fds.len())?;
    let msg = desc.encode()?;
    let mut space = [MaybeUninit::<u8>::uninit(); rustix::cmsg_space!(ScmRights(MAX_FDS))];
    let mut control = SendAncillaryBuffer::new(&mut space);
    if !fds.is_empty() && !control.push(SendAncillaryMessage::ScmRights(fds)) {
        return Err(ShareError::TooManyFds);
    }
    let sent = rustix::net::sendmsg(
        &*stream,
        &[IoSlice::new(&msg[..HEADER_LEN])],
        &mut control,
        SendFlags::NOSIGNAL,
    )
    .map_err(std::io::Error::from)?;
    stream.write_all(&msg[sent..])?;
    Ok(())
}

/// Receives one message from `stream`: the description (validated) and its fds, owned.
///
/// # Errors
///
/// The socket's error (a closed socket: `UnexpectedEof`), a bad header, too many fds, a bad
/// description.
pub fn recv(stream: &mut UnixStream) -> Result<(ShareDescription, Vec<OwnedFd>), ShareError> {
    let mut header = [0u8; HEADER_LEN];
    let mut space = [MaybeUninit::<u8>::uninit(); rustix::cmsg_space!(ScmRights(MAX_FDS))];
    let mut control = RecvAncillaryBuffer::new(&mut space);
    let got = rustix::net::recvmsg(
        &*stream,
        &mut [IoSliceMut::new(&mut header)],
        &mut control,
        RecvFlags::CMSG_CLOEXEC,
    )
    .map_err(std::io::Error::from)?;
    let mut fds = Vec::new();
    for m in control.drain() {
        if let RecvAncillaryMessage::ScmRights(rights) = m {
            fds.extend(rights);
        }
    }
    if got.flags.contains(rustix::net::ReturnFlags::CTRUNC) {
        return Err(ShareError::TooManyFds);
    }
    if got.bytes == 0 {
        return Err(std::io::Error::from(std::io::ErrorKind::UnexpectedEof).into());
    }
    stream.read_exact(&mut header[got.bytes..])?;
    let mut body = vec![0; body_len(&header)?];
    stream.read_exact(&mut body)?;
    let desc: ShareDescription =
        serde_json::from_slice(&body).map_err(|e| ShareError::Description(e.to_string()))?;
    desc.validate(fds.len())?;
    Ok((desc, fds))
}

/// The first four bytes of [`FrameMessage::Complete`] (producer → vizdeck).
pub(crate) const COMPLETE_MAGIC: [u8; 4] = *b"VZFC";
/// The first four bytes of [`FrameMessage::CompleteHost`] (producer → vizdeck).
pub(crate) const COMPLETE_HOST_MAGIC: [u8; 4] = *b"VZFH";
/// The first four bytes of [`FrameMessage::Released`] (vizdeck → producer).
pub(crate) const RELEASED_MAGIC: [u8; 4] = *b"VZFR";
/// Seconds vizdeck's queue waits for a producer's `ready` signal before vizdeck gives the
/// producer up ([`FrameMessage`]).
pub const SIGNAL_TIMEOUT_S: u64 = 10;
/// Bytes of a [`FrameMessage`] on the wire.
pub const FRAME_MSG_LEN: usize = 16;

/// The frame messages on the socket after the description.
///
/// ```text
/// bytes 0..4   magic b"VZFC" (Complete), b"VZFH" (CompleteHost) or b"VZFR" (Released)
/// bytes 4..8   zero (reserved)
/// bytes 8..16  the producer's frame number, u64 little-endian
/// ```
///
/// Frame numbers start at 1 and increase (with semaphores: strictly, they are counter values).
///
/// **Without semaphores** (`ShareDescription::semaphores` is `None`: lavapipe lacks
/// `VK_KHR_external_semaphore_fd`) it is a CPU handshake: the producer may write the shared
/// buffers from the moment it has the description until it sends `Complete(n)` (its writes
/// finished on its GPU queue: a fence, `cudaStreamSynchronize`); then it must not write them
/// again until vizdeck answers `Released(n)`: vizdeck copied frame `n` into its own buffers on the
/// GPU, so it keeps drawing it (also after the producer is gone) and the producer may write the
/// next.
///
/// **With semaphores** ([`FrameSemaphores`]) the waits are on the GPUs: the producer's queue
/// waits until `released` ≥ its previous frame number, writes frame `n`, signals `ready` = `n`,
/// and the producer sends `Complete(n)` at once (no synchronisation on its CPU). vizdeck takes
/// the complete frames in order, one a frame; its queue waits for `ready` ≥ `n`, copies frame
/// `n`, and signals `released` = `n` in the same submit. `Released(n)` still comes on the socket
/// once that submit is done (a producer may read it to bound how far its CPU runs ahead; vizdeck
/// never blocks on writing it: unread, they are dropped). A producer that disconnects, or does
/// not signal `ready` within [`SIGNAL_TIMEOUT_S`] of vizdeck waiting for it, is given up:
/// vizdeck signals `ready` itself so its queue goes on, and keeps the last frame that was
/// signalled.
///
/// `CompleteHost(n)` is `Complete(n)` for the host-memory buffers (`"memory": "host"`): the
/// producer wrote frame `n` there (its device to host copy finished, on the CPU's side of the
/// handshake, semaphores or not) instead of in the device buffers; vizdeck uploads it from host
/// memory, and `Released(n)` comes once that upload's submit is done on the GPU. A producer may
/// mix the two from frame to frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameMessage {
    /// Producer → vizdeck: the device buffers hold frame `n`, completely written.
    Complete(u64),
    /// Producer → vizdeck: the host-memory buffers hold frame `n`, completely written.
    CompleteHost(u64),
    /// vizdeck → producer: frame `n` is copied; the buffers may be written again.
    Released(u64),
}

impl FrameMessage {
    /// The 16 bytes on the wire.
    pub fn encode(self) -> [u8; FRAME_MSG_LEN] {
        let (magic, n) = match self {
            FrameMessage::Complete(n) => (COMPLETE_MAGIC, n),
            FrameMessage::CompleteHost(n) => (COMPLETE_HOST_MAGIC, n),
            FrameMessage::Released(n) => (RELEASED_MAGIC, n),
        };
        let mut b = [0u8; FRAME_MSG_LEN];
        b[..4].copy_from_slice(&magic);
        b[8..].copy_from_slice(&n.to_le_bytes());
        b
    }

    /// The message of 16 bytes.
    ///
    /// # Errors
    ///
    /// [`ShareError::BadMagic`] for another magic.
    pub fn decode(b: &[u8; FRAME_MSG_LEN]) -> Result<FrameMessage, ShareError> {
        let magic = [b[0], b[1], b[2], b[3]];
        let mut n = [0u8; 8];
        n.copy_from_slice(&b[8..]);
        let n = u64::from_le_bytes(n);
        match magic {
            COMPLETE_MAGIC => Ok(FrameMessage::Complete(n)),
            COMPLETE_HOST_MAGIC => Ok(FrameMessage::CompleteHost(n)),
            RELEASED_MAGIC => Ok(FrameMessage::Released(n)),
            other => Err(ShareError::BadMagic(other)),
        }
    }

    /// Writes the message on `stream`.
    ///
    /// # Errors
    ///
    /// The socket's error.
    pub fn write(self, mut stream: &UnixStream) -> Result<(), ShareError> {
        stream.write_all(&self.encode())?;
        Ok(())
    }

    /// Reads one message from `stream` (blocking).
    ///
    /// # Errors
    ///
    /// The socket's error (closed: `UnexpectedEof`), a bad magic.
    pub fn read(mut stream: &UnixStream) -> Result<FrameMessage, ShareError> {
        let mut b = [0u8; FRAME_MSG_LEN];
        stream.read_exact(&mut b)?;
        FrameMessage::decode(&b)
    }
}
