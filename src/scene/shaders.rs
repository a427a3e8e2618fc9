//! Registry of every WGSL file in `shaders/` (one file per GPU pass): each view's shaders, the
//! deck's scene blit, and the GPU core's egui painter ([`crate::gpu::shaders::EGUI_PAINT`]). The
//! sources are compiled into the binary by the GPU core's [`shader!`](crate::gpu::shader)
//! (mechanism and pipeline helpers: [`crate::gpu::shaders`]); `tests/app/shaders.rs` validates
//! each composed source with naga and checks that these tables list every file on disk.
//!
//! Shared declarations live once in `shaders/common/` (the preludes, [`COMMON`]): data layouts
//! shared with Rust, `cmul` and other small helpers, constants. Each entry names the preludes it
//! uses. A prelude declares nothing that needs a binding (a file that includes it may not bind it),
//! except one included only by passes that all bind what it declares
//! (`common/pointcloud_raster.wgsl`, `common/timeseries_window.wgsl`), and a shader must not
//! re-declare a name its preludes declare. `tests/app/shader_layout.rs` checks the structs mirrored
//! in Rust against their `#[repr(C)]` types.

pub use crate::gpu::shaders::{RenderOptions, ShaderSource};
use crate::gpu::{shader, wgsl_file};

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

/// Spectrogram: new dB columns → max-pooled rows of the scrolling ring texture (compute).
pub const SPECTROGRAM_RING_WRITE: ShaderSource = shader!("spectrogram/ring_write.wgsl");
/// Spectrogram: ring texture → image with a linear/log/mel axis and a colormap (render).
pub const SPECTROGRAM_DRAW: ShaderSource = shader!("spectrogram/draw.wgsl");
/// Spectrogram FFT pass 1: window, pack N reals as N/2 complex, first radix-4 stage (compute).
pub const SPECTROGRAM_FFT_PACK: ShaderSource = shader!(
    "spectrogram/fft_pack.wgsl",
    "common/math.wgsl",
    "common/fft.wgsl"
);
/// Spectrogram FFT: one radix-4 Stockham stage (compute).
pub const SPECTROGRAM_FFT_RADIX4: ShaderSource = shader!(
    "spectrogram/fft_radix4.wgsl",
    "common/math.wgsl",
    "common/fft.wgsl"
);
/// Spectrogram FFT: the final radix-2 Stockham stage when log2(N/2) is odd (compute).
pub const SPECTROGRAM_FFT_RADIX2: ShaderSource = shader!(
    "spectrogram/fft_radix2.wgsl",
    "common/math.wgsl",
    "common/fft.wgsl"
);
/// Spectrogram FFT last pass: real-spectrum split, magnitude, dBFS (compute).
pub const SPECTROGRAM_FFT_SPLIT: ShaderSource = shader!(
    "spectrogram/fft_split.wgsl",
    "common/math.wgsl",
    "common/fft.wgsl"
);
/// Spectrogram FFT, fused single pass (8, 16 or 32 values a thread in registers, radix-8, 16 or
/// 32 stages, exchanges through workgroup memory)
/// when its workgroup fits the device (N ≤ 16384 on the H200 and lavapipe) (compute).
pub const SPECTROGRAM_FFT_LOCAL: ShaderSource = shader!(
    "spectrogram/fft_local.wgsl",
    "common/math.wgsl",
    "common/fft.wgsl"
);
/// Spectrogram FFT when the fused pass does not fit (N = 32768): pack + one radix-4 DIF stage into
/// 4 sub-FFTs (compute).
pub const SPECTROGRAM_FFT_DIF4: ShaderSource = shader!(
    "spectrogram/fft_dif4.wgsl",
    "common/math.wgsl",
    "common/fft.wgsl"
);
/// Spectrogram FFT when the fused pass does not fit (N = 32768): the 4 sub-FFTs in workgroup
/// memory (compute).
pub const SPECTROGRAM_FFT_LOCAL_SUB: ShaderSource = shader!(
    "spectrogram/fft_local_sub.wgsl",
    "common/math.wgsl",
    "common/fft.wgsl"
);
/// Particles, point-splat renderer: add every particle into its pixel (compute).
pub const PARTICLES_SPLAT: ShaderSource = shader!("particles/splat.wgsl", "common/particles.wgsl");
/// Particles, point-splat renderer: accumulation image → scene texture (render).
pub const PARTICLES_SPLAT_RESOLVE: ShaderSource =
    shader!("particles/splat_resolve.wgsl", "common/particles.wgsl");
/// Particles: instanced sprites read straight from the storage buffer (render).
pub const PARTICLES_DRAW: ShaderSource = shader!("particles/draw.wgsl", "common/particles.wgsl");
/// Particles: forces, emitter, flocking sums and integration of one fixed step (compute).
pub const PARTICLES_INTEGRATE: ShaderSource =
    shader!("particles/integrate.wgsl", "common/particles.wgsl");
/// Particles: zero a u32 buffer inside a compute pass (compute).
pub const PARTICLES_CLEAR: ShaderSource = shader!("particles/clear.wgsl", "common/particles.wgsl");
/// Particles, grid: atomic cell histogram + rank per particle (compute).
pub const PARTICLES_GRID_HISTOGRAM: ShaderSource =
    shader!("particles/grid_histogram.wgsl", "common/particles.wgsl");
/// Particles, grid: work-efficient block scan, one level (compute).
pub const PARTICLES_SCAN_BLOCKS: ShaderSource =
    shader!("particles/scan_blocks.wgsl", "common/particles.wgsl");
/// Particles, grid: add scanned block totals back (compute).
pub const PARTICLES_SCAN_ADD: ShaderSource =
    shader!("particles/scan_add.wgsl", "common/particles.wgsl");
/// Particles, grid: scatter into cell order (compute).
pub const PARTICLES_GRID_SCATTER: ShaderSource =
    shader!("particles/grid_scatter.wgsl", "common/particles.wgsl");
/// Particles, grid: flocking sums from the 27 adjacent cells (compute).
pub const PARTICLES_NEIGHBOURS_GRID: ShaderSource =
    shader!("particles/neighbours_grid.wgsl", "common/particles.wgsl");
/// Particles, brute force: flocking sums over all pairs, tiled in workgroup memory (compute).
pub const PARTICLES_NEIGHBOURS_BRUTE: ShaderSource =
    shader!("particles/neighbours_brute.wgsl", "common/particles.wgsl");
/// Particles: statistics reduction into fixed-point atomics (compute).
pub const PARTICLES_STATS_REDUCE: ShaderSource =
    shader!("particles/stats_reduce.wgsl", "common/particles.wgsl");
/// Time series: decimated min/max line segments (render).
pub const TIMESERIES_LINES: ShaderSource =
    shader!("timeseries/lines.wgsl", "common/timeseries.wgsl");
/// Time series: the frame's new samples of every series of one page into their places (compute).
pub const TIMESERIES_APPEND: ShaderSource = shader!(
    "timeseries/append.wgsl",
    "common/timeseries.wgsl",
    "common/timeseries_jobs.wgsl"
);
/// Time series: one level of the min/max pyramid over the new samples of every series of one
/// page, appended incrementally (compute).
pub const TIMESERIES_PYRAMID_BUILD: ShaderSource = shader!(
    "timeseries/pyramid_build.wgsl",
    "common/timeseries.wgsl",
    "common/timeseries_jobs.wgsl"
);
/// Time series: M4 (min, max, first, last) per pixel column of every series of one page, from
/// the pyramid (compute).
pub const TIMESERIES_M4: ShaderSource = shader!("timeseries/m4.wgsl", "common/timeseries.wgsl");
/// Time series: M4 per pixel column of every series of one page rastered into an image of
/// owners, in drawing order (compute; the path of CPU adapters).
pub const TIMESERIES_M4_RASTER: ShaderSource =
    shader!("timeseries/m4_raster.wgsl", "common/timeseries.wgsl");
/// Time series: closed one-pixel-wide vertical spans per column, every series in one draw
/// (render).
pub const TIMESERIES_SPANS: ShaderSource =
    shader!("timeseries/spans.wgsl", "common/timeseries.wgsl");
/// Time series: line segments between columns, every series in one draw (render).
pub const TIMESERIES_CONNECTORS: ShaderSource =
    shader!("timeseries/connectors.wgsl", "common/timeseries.wgsl");
/// Time series: the pixels the raster M4 pass wrote → the colour and depth of their series
/// (render).
pub const TIMESERIES_RESOLVE: ShaderSource =
    shader!("timeseries/resolve.wgsl", "common/timeseries.wgsl");
/// Time series, `--share`: the valid samples of each block of every series of the producer's
/// window (compute).
pub const TIMESERIES_WINDOW_COUNT: ShaderSource = shader!(
    "timeseries/window_count.wgsl",
    "common/timeseries.wgsl",
    "common/timeseries_window.wgsl"
);
/// Time series, `--share`: every series of the producer's window of one page written into its
/// mirror, values and valid counts (compute).
pub const TIMESERIES_WINDOW_WRITE: ShaderSource = shader!(
    "timeseries/window_write.wgsl",
    "common/timeseries.wgsl",
    "common/timeseries_window.wgsl"
);
/// Time series, `--share`: the finite range of every series of the producer's window over the
/// view (compute).
pub const TIMESERIES_WINDOW_RANGE: ShaderSource = shader!(
    "timeseries/window_range.wgsl",
    "common/timeseries.wgsl",
    "common/timeseries_window.wgsl"
);
/// Deck: the scene texture → its viewport of the output, texel for pixel (render).
pub const SCENE_BLIT: ShaderSource = shader!("deck/scene_blit.wgsl");

/// Point clouds, compute rasterizer (32-bit path): nearest depth per pixel (compute).
pub const POINTCLOUD_RASTER_DEPTH: ShaderSource = shader!(
    "pointcloud/raster_depth.wgsl",
    "common/pointcloud.wgsl",
    "common/pointcloud_raster.wgsl"
);
/// Point clouds, compute rasterizer (32-bit path): the point id at that depth (compute).
pub const POINTCLOUD_RASTER_ID: ShaderSource = shader!(
    "pointcloud/raster_id.wgsl",
    "common/pointcloud.wgsl",
    "common/pointcloud_raster.wgsl"
);

/// Point clouds, compute rasterizer (64-bit path): depth and id in one atomic (compute).
pub const POINTCLOUD_RASTER64: ShaderSource = shader!(
    "pointcloud/raster64.wgsl",
    "common/pointcloud.wgsl",
    "common/pointcloud_raster.wgsl"
);

/// Point clouds, compute rasterizer: visibility buffer → colours (compute).
pub const POINTCLOUD_RESOLVE: ShaderSource =
    shader!("pointcloud/resolve.wgsl", "common/pointcloud.wgsl");
/// Point clouds, compute rasterizer: the point shown at one pixel, for the readout (compute).
pub const POINTCLOUD_PICK: ShaderSource = shader!("pointcloud/pick.wgsl", "common/pointcloud.wgsl");

/// Every shader the app uses.
pub const ALL: &[ShaderSource] = &[
    SCENE_BLIT,
    crate::gpu::shaders::EGUI_PAINT,
    SPECTROGRAM_RING_WRITE,
    SPECTROGRAM_DRAW,
    SPECTROGRAM_FFT_PACK,
    SPECTROGRAM_FFT_RADIX4,
    SPECTROGRAM_FFT_RADIX2,
    SPECTROGRAM_FFT_SPLIT,
    SPECTROGRAM_FFT_LOCAL,
    SPECTROGRAM_FFT_DIF4,
    SPECTROGRAM_FFT_LOCAL_SUB,
    PARTICLES_DRAW,
    PARTICLES_SPLAT,
    PARTICLES_SPLAT_RESOLVE,
    PARTICLES_INTEGRATE,
    PARTICLES_CLEAR,
    PARTICLES_GRID_HISTOGRAM,
    PARTICLES_SCAN_BLOCKS,
    PARTICLES_SCAN_ADD,
    PARTICLES_GRID_SCATTER,
    PARTICLES_NEIGHBOURS_GRID,
    PARTICLES_NEIGHBOURS_BRUTE,
    PARTICLES_STATS_REDUCE,
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
    POINTCLOUD_RASTER_DEPTH,
    POINTCLOUD_RASTER_ID,
    POINTCLOUD_RESOLVE,
    POINTCLOUD_PICK,
    POINTCLOUD_RASTER64,
];
