//! `--share PATH` (issue 18): GPU memory shared with a producer process on the same GPU (CUDA, or
//! any Vulkan client) so its data reaches the scenes with no host copy. The memory itself is
//! [`crate::gpu::external::ExternalMemoryBuffer`], the frame semaphores
//! [`crate::gpu::external::ExternalSemaphore`]; this module holds the local protocol that hands
//! them over: a Unix socket ([`listener`], the `vizdeck-share` thread), the memory and semaphore
//! fds by `SCM_RIGHTS`, a JSON description and the frame messages ([`protocol`]), and a scene's
//! side of it ([`frames`]: each complete frame copied on the GPU into the scene's own buffer,
//! after a wait on the GPU for the producer's semaphore where the device can share one, after
//! the socket handshake where it cannot). A producer may write host memory instead ([`host`]: a
//! memfd vizdeck uploads from, for the comparison with the ordinary upload path). The particle
//! scene draws from it (`scene/particles/shared.rs`).

pub mod frames;
pub mod host;
pub mod listener;
pub use vizdeck_protocols::share as protocol;
