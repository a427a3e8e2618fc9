//! vizdeck's lab: what measures and compares kernels, kept out of the app (issue 35, "the lab is
//! not the product"). The app ships one kernel per job; the variants, ablations and tables that
//! chose them live here, run by `vizdeck-lab` (see [`run`]) and the criterion benches in
//! `benches/`.
//!
//! - [`kernel`]: the kernel tables (`--kernels fft,particles,timeseries,pointcloud,
//!   pointcloud-stream`): [`fft`] (the GPU FFT's variants against the CPU FFT), [`particles`],
//!   [`timeseries`] (GPU M4), [`raster`] (the point rasterizer against point primitives, whose
//!   baseline shader is the lab's own: `shaders/points_baseline.wgsl`), [`pointcloud_stream`];
//! - [`transfer`]: the upload strategies, direct writes and readback (`--upload`);
//! - [`pipeline_stats`]: the driver's register and memory statistics of a compute shader, on a
//!   second Vulkan device (`VK_KHR_pipeline_executable_properties`).

pub mod args;
pub mod fft;
pub mod kernel;
pub mod particles;
pub mod pipeline_stats;
pub mod pointcloud_stream;
pub mod raster;
pub mod timeseries;
pub mod transfer;

pub use args::{LabArgs, run};
