//! Point clouds (the fourth scene, issue 14), the GPU side: the pool of resident nodes with LRU
//! eviction and the per-frame batch table (`pool/`), the compute rasterizer's visibility
//! buffer (nearest point per pixel) and its CPU reference (`raster/`), that buffer and the
//! resolve's image split into bands of rows within the device's binding limits (`pieces.rs`).
//! The rasterizer's kernel table is the lab's (`vizdeck-lab --kernels pointcloud`). The data side (files, octrees, LOD,
//! loaders, quantization) is the `vizdeck-pointcloud` crate, re-exported here; the scene that
//! drives both is `scene/pointcloud/`.

pub use vizdeck_pointcloud::*;

pub mod pieces;
pub mod pool;
pub mod raster;
