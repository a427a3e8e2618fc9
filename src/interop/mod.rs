//! `--share PATH` (issue 18): GPU memory shared with a producer process on the same GPU (CUDA, or
//! any Vulkan client) so its data reaches the scenes with no host copy. The memory itself is
//! [`crate::gpu::external::ExternalMemoryBuffer`]; this module holds the local protocol that hands
//! it over: a Unix socket, the memory (and semaphore) fds by `SCM_RIGHTS`, and a JSON description
//! ([`protocol`]). A sketch so far: the listener, the timeline semaphore and the scenes' use of
//! the buffers are still to come.

pub mod protocol;
