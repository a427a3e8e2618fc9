//! What the GPU tests and benches share: the test GPU. Included with `mod common;` by tests and
//! `#[path = "../tests/common/mod.rs"] mod common;` by benches. Blocking buffer reads are
//! [`vizdeck::gpu::Gpu::read_buffer_blocking`].

use vizdeck::gpu::{BackendChoice, Gpu};

/// The test GPU: Vulkan (lavapipe on a machine without a GPU: `cargo xtask services`), else
/// whatever wgpu finds. Panics when there is no adapter at all.
#[allow(dead_code)] // not every includer uses every item
pub fn gpu() -> Gpu {
    try_gpu().expect("a GPU adapter (lavapipe: apt-get install mesa-vulkan-drivers)")
}

/// [`gpu`], or the reason there is none.
#[allow(dead_code)]
pub fn try_gpu() -> Result<Gpu, String> {
    Gpu::new(BackendChoice::Vulkan, None, None)
        .or_else(|_| Gpu::new(BackendChoice::Auto, None, None))
        .map(|(gpu, _)| gpu)
        .map_err(|e| e.to_string())
}
