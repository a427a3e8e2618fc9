//! The shaders of the time series (`crates/views/shaders/timeseries/`, one file per pass, each with
//! the `common/` preludes it names); [`ALL`] is this view's entry in the registry
//! ([`crate::shaders`]) and its line of [`crate::SCENES`].

use crate::gpu::shader;
pub use crate::gpu::shaders::{RenderOptions, ShaderSource};

/// Time series: decimated min/max line segments (render).
pub(crate) const TIMESERIES_LINES: ShaderSource =
    shader!("timeseries/lines.wgsl", "common/timeseries.wgsl");

/// Time series: the frame's new samples of every series of one page into their places (compute).
pub(crate) const TIMESERIES_APPEND: ShaderSource = shader!(
    "timeseries/append.wgsl",
    "common/timeseries.wgsl",
    "common/timeseries_jobs.wgsl"
);

/// Time series: one level of the min/max pyramid over the new samples of every series of one
/// page, appended incrementally (compute).
pub(crate) const TIMESERIES_PYRAMID_BUILD: ShaderSource = shader!(
    "timeseries/pyramid_build.wgsl",
    "common/timeseries.wgsl",
    "common/timeseries_jobs.wgsl"
);

/// Time series: M4 (min, max, first, last) per pixel column of every series of one page, from
/// the pyramid (compute).
pub(crate) const TIMESERIES_M4: ShaderSource =
    shader!("timeseries/m4.wgsl", "common/timeseries.wgsl");

/// Time series: M4 per pixel column of every series of one page rastered into an image of
/// owners, in drawing order (compute; the path of CPU adapters).
pub(crate) const TIMESERIES_M4_RASTER: ShaderSource =
    shader!("timeseries/m4_raster.wgsl", "common/timeseries.wgsl");

/// Time series: closed one-pixel-wide vertical spans per column, every series in one draw
/// (render).
pub(crate) const TIMESERIES_SPANS: ShaderSource =
    shader!("timeseries/spans.wgsl", "common/timeseries.wgsl");

/// Time series: line segments between columns, every series in one draw (render).
pub(crate) const TIMESERIES_CONNECTORS: ShaderSource =
    shader!("timeseries/connectors.wgsl", "common/timeseries.wgsl");

/// Time series: the pixels the raster M4 pass wrote → the colour and depth of their series
/// (render).
pub(crate) const TIMESERIES_RESOLVE: ShaderSource =
    shader!("timeseries/resolve.wgsl", "common/timeseries.wgsl");

/// Time series, `--share`: the valid samples of each block of every series of the producer's
/// window (compute).
pub(crate) const TIMESERIES_WINDOW_COUNT: ShaderSource = shader!(
    "timeseries/window_count.wgsl",
    "common/timeseries.wgsl",
    "common/timeseries_window.wgsl"
);

/// Time series, `--share`: every series of the producer's window of one page written into its
/// mirror, values and valid counts (compute).
pub(crate) const TIMESERIES_WINDOW_WRITE: ShaderSource = shader!(
    "timeseries/window_write.wgsl",
    "common/timeseries.wgsl",
    "common/timeseries_window.wgsl"
);

/// Time series, `--share`: the finite range of every series of the producer's window over the
/// view (compute).
pub(crate) const TIMESERIES_WINDOW_RANGE: ShaderSource = shader!(
    "timeseries/window_range.wgsl",
    "common/timeseries.wgsl",
    "common/timeseries_window.wgsl"
);

/// Every shader of this view.
pub const ALL: &[ShaderSource] = &[
    TIMESERIES_LINES,
    TIMESERIES_APPEND,
    TIMESERIES_PYRAMID_BUILD,
    TIMESERIES_M4,
    TIMESERIES_M4_RASTER,
    TIMESERIES_SPANS,
    TIMESERIES_CONNECTORS,
    TIMESERIES_RESOLVE,
    TIMESERIES_WINDOW_COUNT,
    TIMESERIES_WINDOW_WRITE,
    TIMESERIES_WINDOW_RANGE,
];
