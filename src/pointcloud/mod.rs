//! Point clouds under one path for the app and its tests: the data side (files, octrees, LOD,
//! loaders, quantization: the `vizdeck-pointcloud` crate) and the GPU side the point-cloud view
//! owns (the node pool, the rasterizer, the pieces of its visibility buffer:
//! `vizdeck_views::pointcloud`).

pub use vizdeck_pointcloud::*;
pub use vizdeck_views::pointcloud::{pieces, pool, raster};
