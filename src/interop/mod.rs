//! `--share PATH` (issue 18): GPU memory shared with a producer process on the same GPU (CUDA, or
//! any Vulkan client) so its data reaches the scenes with no host copy. The memory itself is
//! [`crate::gpu::external::ExternalMemoryBuffer`]; this module holds the local protocol that hands
//! it over: a Unix socket ([`listener`], the `vizdeck-share` thread), the memory (and semaphore)
//! fds by `SCM_RIGHTS`, a JSON description ([`protocol`]) and, while there is no shared timeline
//! semaphore, a frame handshake on the socket ([`protocol::FrameMessage`]). A producer may write
//! host memory instead ([`host`]: a memfd vizdeck uploads from, for the comparison with the
//! ordinary upload path). The particle scene
//! draws from it (`scene/particles/shared.rs`); the time-series and point-cloud scenes, the
//! timeline semaphore (the wait on the GPU) and the Python client are still to come.

pub mod host;
pub mod listener;
pub mod protocol;
