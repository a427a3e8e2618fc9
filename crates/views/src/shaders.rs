//! Registry of every WGSL file in this crate's `shaders/` (one file per GPU pass, in a folder
//! per view, each listed by its view's `shaders.rs` and its line of [`crate::SCENES`]). The sources are compiled into the binary by the GPU core's
//! [`shader!`](crate::gpu::shader) (mechanism and pipeline helpers: [`crate::gpu::shaders`]);
//! `tests/app/shaders.rs` validates each composed source with naga and checks that this table,
//! the app's (`shaders/deck/`) and the GPU core's (`crates/gpu/shaders/`) list every file on
//! disk.
//!
//! Shared declarations live once in `shaders/common/` (the preludes, [`COMMON`]): data layouts
//! shared with Rust, `cmul` and other small helpers, constants. Each entry names the preludes it
//! uses. A prelude declares nothing that needs a binding (a file that includes it may not bind it),
//! except one included only by passes that all bind what it declares
//! (`common/pointcloud_raster.wgsl`, `common/timeseries_window.wgsl`), and a shader must not
//! re-declare a name its preludes declare. `tests/app/shader_layout.rs` checks the structs mirrored
//! in Rust against their `#[repr(C)]` types.

pub use crate::gpu::shaders::{RenderOptions, ShaderSource};
use crate::gpu::wgsl_file;

/// Every prelude in `shaders/common/`: (path relative to `shaders/`, text).
pub const COMMON: &[(&str, &str)] = &[
    // Complex arithmetic (`cmul`, `mul_neg_i`) and `non_finite`.
    ("common/math.wgsl", wgsl_file!("common/math.wgsl")),
    // The FFT passes' uniform block `FftParams` and dB constants.
    ("common/fft.wgsl", wgsl_file!("common/fft.wgsl")),
    // Particle layouts (`Particle`, `Neighbours`, `Consts`, `Sorted`, `CountParams`, `View`,
    // `Splat`), fixed-point scales, `palette`.
    ("common/particles.wgsl", wgsl_file!("common/particles.wgsl")),
    // The point-cloud rasterizer's `RasterParams` and `project`.
    (
        "common/pointcloud.wgsl",
        wgsl_file!("common/pointcloud.wgsl"),
    ),
    // The rasterizer's point passes' common bindings and entry points (`main`, `main_q`), each
    // calling the pass's own `keep`; after common/pointcloud.wgsl, only in those passes.
    (
        "common/pointcloud_raster.wgsl",
        wgsl_file!("common/pointcloud_raster.wgsl"),
    ),
    // Time-series records (`Span`, `Conn`), the draw uniform `SeriesView`, `VsOut`, f32-bit
    // helpers.
    (
        "common/timeseries.wgsl",
        wgsl_file!("common/timeseries.wgsl"),
    ),
    // The time-series job table (`d`, `jobs`, `job_of`) of the append and pyramid passes.
    (
        "common/timeseries_jobs.wgsl",
        wgsl_file!("common/timeseries_jobs.wgsl"),
    ),
    // The time-series `--share` window passes' `WindowParams`, bindings and workgroup sum.
    (
        "common/timeseries_window.wgsl",
        wgsl_file!("common/timeseries_window.wgsl"),
    ),
];

/// Every shader of the views (each view's [`crate::SceneEntry::shaders`], in table order).
pub fn all() -> Vec<ShaderSource> {
    crate::SCENES
        .iter()
        .flat_map(|e| e.shaders.iter().copied())
        .collect()
}
