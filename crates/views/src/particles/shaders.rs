//! The shaders of the particles (`crates/views/shaders/particles/`, one file per pass, each with
//! the `common/` preludes it names); [`ALL`] is this view's entry in the registry
//! ([`crate::shaders`]) and its line of [`crate::SCENES`].

use crate::gpu::shader;
pub use crate::gpu::shaders::{RenderOptions, ShaderSource};

/// Particles, point-splat renderer: add every particle into its pixel (compute).
pub(crate) const PARTICLES_SPLAT: ShaderSource =
    shader!("particles/splat.wgsl", "common/particles.wgsl");

/// Particles, point-splat renderer: accumulation image → scene texture (render).
pub(crate) const PARTICLES_SPLAT_RESOLVE: ShaderSource =
    shader!("particles/splat_resolve.wgsl", "common/particles.wgsl");

/// Particles: instanced sprites read straight from the storage buffer (render).
pub(crate) const PARTICLES_DRAW: ShaderSource =
    shader!("particles/draw.wgsl", "common/particles.wgsl");

/// Particles: forces, emitter, flocking sums and integration of one fixed step (compute).
pub(crate) const PARTICLES_INTEGRATE: ShaderSource =
    shader!("particles/integrate.wgsl", "common/particles.wgsl");

/// Particles: zero a u32 buffer inside a compute pass (compute).
pub(crate) const PARTICLES_CLEAR: ShaderSource =
    shader!("particles/clear.wgsl", "common/particles.wgsl");

/// Particles, grid: atomic cell histogram + rank per particle (compute).
pub(crate) const PARTICLES_GRID_HISTOGRAM: ShaderSource =
    shader!("particles/grid_histogram.wgsl", "common/particles.wgsl");

/// Particles, grid: work-efficient block scan, one level (compute).
pub(crate) const PARTICLES_SCAN_BLOCKS: ShaderSource =
    shader!("particles/scan_blocks.wgsl", "common/particles.wgsl");

/// Particles, grid: add scanned block totals back (compute).
pub(crate) const PARTICLES_SCAN_ADD: ShaderSource =
    shader!("particles/scan_add.wgsl", "common/particles.wgsl");

/// Particles, grid: scatter into cell order (compute).
pub(crate) const PARTICLES_GRID_SCATTER: ShaderSource =
    shader!("particles/grid_scatter.wgsl", "common/particles.wgsl");

/// Particles, grid: flocking sums from the 27 adjacent cells (compute).
pub(crate) const PARTICLES_NEIGHBOURS_GRID: ShaderSource =
    shader!("particles/neighbours_grid.wgsl", "common/particles.wgsl");

/// Particles, brute force: flocking sums over all pairs, tiled in workgroup memory (compute).
pub(crate) const PARTICLES_NEIGHBOURS_BRUTE: ShaderSource =
    shader!("particles/neighbours_brute.wgsl", "common/particles.wgsl");

/// Particles: statistics reduction into fixed-point atomics (compute).
pub(crate) const PARTICLES_STATS_REDUCE: ShaderSource =
    shader!("particles/stats_reduce.wgsl", "common/particles.wgsl");

/// Every shader of this view.
pub const ALL: &[ShaderSource] = &[
    PARTICLES_SPLAT,
    PARTICLES_SPLAT_RESOLVE,
    PARTICLES_DRAW,
    PARTICLES_INTEGRATE,
    PARTICLES_CLEAR,
    PARTICLES_GRID_HISTOGRAM,
    PARTICLES_SCAN_BLOCKS,
    PARTICLES_SCAN_ADD,
    PARTICLES_GRID_SCATTER,
    PARTICLES_NEIGHBOURS_GRID,
    PARTICLES_NEIGHBOURS_BRUTE,
    PARTICLES_STATS_REDUCE,
];
