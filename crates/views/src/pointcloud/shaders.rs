//! The shaders of the point cloud (`crates/views/shaders/pointcloud/`, one file per pass, each with
//! the `common/` preludes it names); [`ALL`] is this view's entry in the registry
//! ([`crate::shaders`]) and its line of [`crate::SCENES`].

use crate::gpu::shader;
pub use crate::gpu::shaders::{RenderOptions, ShaderSource};

/// Point clouds, compute rasterizer (32-bit path): nearest depth per pixel (compute).
pub(crate) const POINTCLOUD_RASTER_DEPTH: ShaderSource = shader!(
    "pointcloud/raster_depth.wgsl",
    "common/pointcloud.wgsl",
    "common/pointcloud_raster.wgsl"
);

/// Point clouds, compute rasterizer (32-bit path): the point id at that depth (compute).
pub(crate) const POINTCLOUD_RASTER_ID: ShaderSource = shader!(
    "pointcloud/raster_id.wgsl",
    "common/pointcloud.wgsl",
    "common/pointcloud_raster.wgsl"
);

/// Point clouds, compute rasterizer (64-bit path): depth and id in one atomic (compute).
pub(crate) const POINTCLOUD_RASTER64: ShaderSource = shader!(
    "pointcloud/raster64.wgsl",
    "common/pointcloud.wgsl",
    "common/pointcloud_raster.wgsl"
);

/// Point clouds, compute rasterizer: visibility buffer → colours (compute).
pub(crate) const POINTCLOUD_RESOLVE: ShaderSource =
    shader!("pointcloud/resolve.wgsl", "common/pointcloud.wgsl");

/// Point clouds, compute rasterizer: the point shown at one pixel, for the readout (compute).
pub(crate) const POINTCLOUD_PICK: ShaderSource =
    shader!("pointcloud/pick.wgsl", "common/pointcloud.wgsl");

/// Every shader of this view.
pub const ALL: &[ShaderSource] = &[
    POINTCLOUD_RASTER_DEPTH,
    POINTCLOUD_RASTER_ID,
    POINTCLOUD_RASTER64,
    POINTCLOUD_RESOLVE,
    POINTCLOUD_PICK,
];
