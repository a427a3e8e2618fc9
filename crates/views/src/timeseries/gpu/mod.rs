//! GPU M4 decimation of many time series from min/max pyramids kept on the GPU, and the exact
//! line drawing from the decimated columns, batched: the cost of a frame is a handful of
//! dispatches and two draws whatever the number of series.
//!
//! Storage (`pool.rs`): every series has a mirror, a power-of-two block of a *page* (a pair of
//! storage buffers shared by many series: per sample its f32 bits and the running count of valid
//! (non-NaN) values side by side, and a pyramid of min/max nodes with branching [`BRANCH`]:
//! level L node k covers values `[k·16^L, (k+1)·16^L)`). Blocks come from a buddy allocator per page; a series
//! that outgrows its block moves to a larger one (uploaded again from the store). Nothing exceeds
//! one storage binding of the adapter (lavapipe: 128 MiB, 16 Mi samples): a series longer than
//! three quarters of one keeps only its newest samples on the GPU, a view of older ones is drawn
//! by the exact CPU M4, and one frame stages at most one binding of new samples for all series,
//! a series over that waiting a frame (CPU M4 meanwhile) ([`Mirrors::sync`]).
//!
//! A frame ([`Mirrors`]): the new samples of all series are staged in one upload and copied
//! into place by one dispatch per page (`shaders/timeseries/append.wgsl`); only the pyramid nodes
//! they complete are built, one dispatch per page and level for all series
//! (`pyramid_build.wgsl`). For a view, the CPU finds each pixel column's sample index range by
//! binary search on the f64 times (or one sweep over the samples in view when they are few), with
//! [`column_of`], the same column function as the CPU reference; `m4.wgsl` computes min, max,
//! first, last and count per column of every series of a page in one dispatch, in O(levels)
//! reads a column. A frame thus costs O(series × pixels × levels) of GPU work whatever the number
//! of points in view, in O(pages) dispatches.
//!
//! Drawing (`spans.wgsl`, `connectors.wgsl`): each column is a closed one-pixel-wide vertical span
//! from min to max, and a 1-pixel line joins the previous sample to a column's first sample when
//! both are valid. Drawing every sample the same way (a span per pair of consecutive samples in
//! one column, a line per pair in different columns, x snapped to the column centre) gives the
//! same pixels: inside one column the union of closed spans of a connected polyline is the span of
//! its min and max, and the lines between columns are the same segments. [`reference_segments`]
//! builds that full-resolution drawing; the tests compare both images pixel for pixel.
//! Exception: a NaN run that starts and ends inside a single pixel column is narrower than a pixel
//! and is not shown as a gap (the column's span covers it).
//! All series are drawn by one span draw and one connector draw (vertices pulled from the
//! records the M4 pass compacted, drawn indirect; a per-series table of colour and depth): the
//! depth test (a later series nearer, [`depth_of`]) gives the pixels of drawing the series one
//! after the other, spans then connectors, in their order. On CPU adapters (lavapipe) the M4
//! pass instead rasters the spans, and the short connectors whose pixels the adapter was checked
//! to light by a known rule ([`raster`]), itself (`m4_raster.wgsl`: a thread per pixel column
//! walks the series in order), into an image of the last series per pixel that
//! `resolve.wgsl` turns into colour and depth; the other connectors are drawn after it
//! ([`Raster`]). Every path gives the same pixels (`tests/app/timeseries_gpu.rs`).
//!
//! Files: this one holds the record and uniform types, the pipelines, the raster choice and the
//! pyramid layout; `pool.rs` the pages and their allocator; `mirrors/` the mirrors of all
//! series (sync, views, the batched passes and draws; the frame's upload, its buffers and the
//! column bounds in files of their own); `raster.rs` the line rule and its check; `host.rs`
//! the records drawn from the CPU (the full-resolution reference, the fallback for
//! out-of-order series).
//!
//! [`column_of`]: crate::series::decimate::column_of

mod host;
mod mirrors;
mod pool;
pub mod raster;
pub mod window;

pub use host::{HostDraw, column_segments, reference_segments};
pub use mirrors::{Mirrors, decimate_gpu, uniform_partition};
pub use window::WindowPasses;

use bytemuck::{Pod, Zeroable};

use crate::gpu::layout;
use crate::series::decimate::Column;
use crate::timeseries::shaders;

/// Branching factor of the min/max pyramid.
pub(crate) const BRANCH: u64 = 16;
/// Most pyramid levels above the values.
pub(crate) const MAX_LEVELS: usize = 8;
/// Fewest columns of series (series drawn × pixel columns) a frame rasters in the M4 pass when
/// the adapter's choice is [`Raster::Compute`] or [`Raster::ComputeSpans`] (about 8 series
/// across 1,000 pixels); fewer are drawn, which on lavapipe costs less than the resolve of the
/// whole image.
pub const RASTER_MIN_RECORDS: u64 = 1 << 13;
/// Smallest mirror capacity, samples (a block of a page).
pub(crate) const MIN_CAPACITY: u64 = 1 << 12;
/// Samples of a page of mirrors (a larger mirror gets a page of its own).
pub(crate) const PAGE_SAMPLES: u64 = 1 << 20;
/// Marker of an empty span or connector record.
pub const NONE: u32 = u32::MAX;
/// Depth format of the time-series render pass (the painter's order of the series).
pub const DEPTH_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Depth32Float;

/// One vertical span record: pixel column, the f32 bits of the low and high values, and the
/// series' entry in the draw table (0 for a [`HostDraw`]).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct Span {
    pub col: u32,
    pub lo: u32,
    pub hi: u32,
    pub slot: u32,
}

/// One connector record: a line from column `col0` at value bits `v0` to `col1` at `v1`, and the
/// series' entry in the draw table (0 for a [`HostDraw`]).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct Conn {
    pub col0: u32,
    pub v0: u32,
    pub col1: u32,
    pub v1: u32,
    pub slot: u32,
}

/// How one series is drawn: value → pixel row is `y = b − v·a`, image `width × height` pixels,
/// RGBA8 colour (R in the low byte).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ViewUniform {
    pub a: f32,
    pub b: f32,
    pub width: f32,
    pub height: f32,
    pub color: u32,
}

impl ViewUniform {
    /// Maps values `[lo, hi]` onto rows `[height, 0]` (row 0 at the top). The constants are
    /// computed in f64, so ranges up to ±f32::MAX do not overflow.
    pub fn new(lo: f64, hi: f64, width: u32, height: u32, color: u32) -> ViewUniform {
        let span = if hi > lo { hi - lo } else { 1.0 };
        let a = height as f64 / span;
        ViewUniform {
            a: a as f32,
            b: (hi * a) as f32,
            width: width as f32,
            height: height as f32,
            color,
        }
    }

    /// The draw uniform.
    fn draw(&self) -> DrawView {
        DrawView {
            a: self.a,
            b: self.b,
            width: self.width,
            height: self.height,
        }
    }
}

/// The depth of the series drawn `order`-th (0 first): `1 − (order + 1)·2⁻²⁰`, exact in f32 and
/// decreasing, so with the LessEqual test (the pass cleared to 1.0) a later series covers an
/// earlier one and a series' own draws pass over each other: the pixels of drawing the series
/// one after the other. Orders past 2²⁰ − 2 share the last depth.
pub(crate) fn depth_of(order: u32) -> f32 {
    let k = order.min((1 << 20) - 2) + 1;
    1.0 - k as f32 / (1u32 << 20) as f32
}

/// The draw uniform (`SeriesView` in WGSL): the value → row mapping and the image size.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
struct DrawView {
    a: f32,
    b: f32,
    width: f32,
    height: f32,
}

/// The indirect draws of the compacted records (`DrawArgs`): spans (6 vertices each), then
/// connectors (2 each); the M4 pass adds up the vertex counts.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
struct DrawArgs {
    span_vertices: u32,
    span_instances: u32,
    span_first_vertex: u32,
    span_first_instance: u32,
    conn_vertices: u32,
    conn_instances: u32,
    conn_first_vertex: u32,
    conn_first_instance: u32,
}

impl DrawArgs {
    /// Both draws empty, one instance each (the frame's starting value).
    const EMPTY: DrawArgs = DrawArgs {
        span_vertices: 0,
        span_instances: 1,
        span_first_vertex: 0,
        span_first_instance: 0,
        conn_vertices: 0,
        conn_instances: 1,
        conn_first_vertex: 0,
        conn_first_instance: 0,
    };
}

/// One series of a draw (`SeriesDraw`): colour and depth ([`depth_of`]).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
struct SeriesDraw {
    color: u32,
    depth: f32,
    _pad: [u32; 2],
}

/// One job of a batched compute pass (`Job`): `count` items from `src` to `dst`, the first at
/// thread `start` of its dispatch.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
struct Job {
    src: u32,
    dst: u32,
    start: u32,
    count: u32,
}

/// One dispatch of a batched compute pass (`Dispatch`), a slot of the dispatch uniform: its
/// job or slot range and threads, the pyramid level it builds, and for M4 the image (columns ×
/// rows), the value → row mapping and the flags ([`m4_flags`]).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
struct Dispatch {
    first: u32,
    count: u32,
    total: u32,
    level: u32,
    columns: u32,
    flags: u32,
    rows: u32,
    _pad0: u32,
    a: f32,
    b: f32,
    _pad1: [u32; 2],
}

/// Flags of an M4 dispatch (`KEEP_COLUMNS` … in `shaders/common/timeseries.wgsl`).
mod m4_flags {
    /// Write the M4 columns (for readback).
    pub const KEEP_COLUMNS: u32 = 1;
    /// Compact the non-empty records and count them into the indirect draws.
    pub const COMPACT: u32 = 2;
    /// Raster the short connectors between adjacent columns into the owner image
    /// (`m4_raster.wgsl`, which always rasters the spans).
    pub const RASTER_LINES: u32 = 8;
}

/// The size of the owner image (`ResolveView`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
struct ResolveView {
    width: u32,
    height: u32,
    _pad: [u32; 2],
}

/// The header of one series in the M4 passes' `views` words (`HEADER` = 4 words in
/// `shaders/common/timeseries.wgsl`): its block's place in the page, pyramid levels, its order
/// among the series drawn, and the block's capacity (which places each pyramid level:
/// [`layout_levels`]); its column bounds follow.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
struct Slot {
    values_at: u32,
    levels: u32,
    order: u32,
    capacity: u32,
}

/// The WGSL mirrors of this module's types and of [`Column`] (`shaders/common/timeseries.wgsl`,
/// `m4.wgsl`), for the layout test. (`Slot` is written as words of the `views` array.)
pub(crate) fn wgsl_mirrors() -> Vec<crate::gpu::mirror::Mirror> {
    use crate::gpu::mirror::wgsl_mirror;
    use window::WindowParams;
    vec![
        wgsl_mirror!(Span => "Span" { col, lo, hi, slot }),
        wgsl_mirror!(Conn => "Conn" { col0, v0, col1, v1, slot }),
        wgsl_mirror!(DrawView => "SeriesView" { a, b, width, height }),
        wgsl_mirror!(DrawArgs => "DrawArgs" {
            span_vertices, span_instances, span_first_vertex, span_first_instance,
            conn_vertices, conn_instances, conn_first_vertex, conn_first_instance,
        }),
        wgsl_mirror!(SeriesDraw => "SeriesDraw" { color, depth, _pad }),
        wgsl_mirror!(Job => "Job" { src, dst, start, count }),
        wgsl_mirror!(Dispatch => "Dispatch" {
            first, count, total, level, columns, flags, rows, _pad0, a, b, _pad1,
        }),
        wgsl_mirror!(ResolveView => "ResolveView" { width, height, _pad }),
        wgsl_mirror!(Column => "Column" { min, max, first, last, count }),
        wgsl_mirror!(WindowParams => "WindowParams" {
            samples, blocks, first, count, k0, k1, _pad0, _pad1,
        }),
    ]
}

/// Uniform slot stride of the per-dispatch parameters (dynamic offsets).
const PARAM_STRIDE: u64 = 256;

fn buffer(
    device: &wgpu::Device,
    label: &str,
    size: u64,
    usage: wgpu::BufferUsages,
) -> wgpu::Buffer {
    device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        size: size.max(16).next_multiple_of(16),
        usage,
        mapped_at_creation: false,
    })
}

/// Long-lived pipelines and layouts of the time-series GPU path.
pub struct Pipelines {
    append: wgpu::ComputePipeline,
    build: wgpu::ComputePipeline,
    jobs_bgl: wgpu::BindGroupLayout,
    m4: wgpu::ComputePipeline,
    m4_raster: wgpu::ComputePipeline,
    m4_bgl: wgpu::BindGroupLayout,
    page_bgl: wgpu::BindGroupLayout,
    spans: wgpu::RenderPipeline,
    conns: wgpu::RenderPipeline,
    draw_bgl: wgpu::BindGroupLayout,
    resolve: wgpu::RenderPipeline,
    resolve_bgl: wgpu::BindGroupLayout,
    /// Largest number of samples one mirror may hold: the largest page, a power of two within the
    /// storage binding limit (bytes / 8: value and valid count). Also the most samples one
    /// frame stages for all series (one binding, `staged`).
    pub max_samples: u64,
    /// Bytes of the largest storage binding.
    pub max_binding: u64,
    /// Whether the M4 pass compacts the non-empty records and the draws are indirect (the
    /// default; off where the adapter cannot draw indirect: every column's records are drawn).
    pub compact: bool,
    /// How the records reach the image ([`Raster`]; [`Pipelines::for_gpu`] chooses per adapter).
    pub raster: Raster,
}

/// How the decimated records reach the image; every choice gives the same pixels.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Raster {
    /// Every span and connector drawn by the render pipelines (the default on GPUs, whose
    /// rasterizers draw them fastest).
    #[default]
    Draws,
    /// The spans rastered by the M4 pass itself (`m4_raster.wgsl`; exact: a span lights whole
    /// pixel rows of one column), the connectors drawn.
    ComputeSpans,
    /// The spans and the short connectors between adjacent columns rastered by the M4 pass, by
    /// the line rule the connector draw was checked to follow on this adapter
    /// ([`raster::lines_follow_rule`]); the other connectors drawn. The choice on CPU adapters
    /// (lavapipe), whose rasterizer spends most of a frame on millions of one-pixel-wide
    /// primitives. Frames with fewer than [`RASTER_MIN_RECORDS`] columns of series are drawn
    /// ([`Raster::Draws`]: the resolve of the whole image would cost more).
    Compute,
}

impl Raster {
    /// The name used in reports.
    pub fn name(self) -> &'static str {
        match self {
            Raster::Draws => "draws",
            Raster::ComputeSpans => "compute-spans",
            Raster::Compute => "compute",
        }
    }
}

impl Pipelines {
    /// Creates the pipelines; render pipelines target `format`, with a [`DEPTH_FORMAT`] depth
    /// attachment cleared to 1.0.
    pub fn new(device: &wgpu::Device, format: wgpu::TextureFormat) -> Pipelines {
        let cs = wgpu::ShaderStages::COMPUTE;
        let dispatch = Some(std::mem::size_of::<Dispatch>() as u64);
        let jobs_bgl = layout::bind_group_layout(
            device,
            "timeseries:jobs",
            &[
                layout::uniform_dynamic(0, cs, dispatch),
                layout::storage(1, cs, true),
                layout::storage(2, cs, true),
            ],
        );
        let m4_bgl = layout::bind_group_layout(
            device,
            "timeseries:m4",
            &[
                layout::uniform_dynamic(0, cs, dispatch),
                layout::storage(1, cs, true),
                layout::storage(2, cs, false),
                layout::storage(3, cs, false),
                layout::storage(4, cs, false),
                layout::storage(5, cs, false),
                layout::storage(6, cs, false),
            ],
        );
        let page_bgl = layout::bind_group_layout(
            device,
            "timeseries:page",
            &[layout::storage(0, cs, false), layout::storage(1, cs, false)],
        );
        let vs = wgpu::ShaderStages::VERTEX;
        let draw_bgl = layout::bind_group_layout(
            device,
            "timeseries:draw",
            &[
                layout::uniform(0, vs, None),
                layout::storage(1, vs, true),
                layout::storage(2, vs, true),
            ],
        );
        let jobs_pl = layout::pipeline_layout(device, "timeseries:jobs", &[&jobs_bgl, &page_bgl]);
        let m4_pl = layout::pipeline_layout(device, "timeseries:m4", &[&m4_bgl, &page_bgl]);
        let compute = |label: &str, src: shaders::ShaderSource, pl: &wgpu::PipelineLayout| {
            src.compute_pipeline_entry(device, label, pl, "main")
        };
        let append = compute(
            "timeseries:compute:append",
            shaders::TIMESERIES_APPEND,
            &jobs_pl,
        );
        let build = compute(
            "timeseries:compute:pyramid_build",
            shaders::TIMESERIES_PYRAMID_BUILD,
            &jobs_pl,
        );
        let m4 = compute("timeseries:compute:m4", shaders::TIMESERIES_M4, &m4_pl);
        let m4_raster = compute(
            "timeseries:compute:m4_raster",
            shaders::TIMESERIES_M4_RASTER,
            &m4_pl,
        );
        let draw_pl = layout::pipeline_layout(device, "timeseries:draw", &[&draw_bgl]);
        let fs = wgpu::ShaderStages::FRAGMENT;
        let resolve_bgl = layout::bind_group_layout(
            device,
            "timeseries:resolve",
            &[
                layout::uniform(0, fs, None),
                layout::storage(1, fs, true),
                layout::storage(2, fs, true),
            ],
        );
        let resolve_pl = layout::pipeline_layout(device, "timeseries:resolve", &[&resolve_bgl]);
        let depth = Some(wgpu::DepthStencilState {
            format: DEPTH_FORMAT,
            depth_write_enabled: Some(true),
            depth_compare: Some(wgpu::CompareFunction::LessEqual),
            stencil: wgpu::StencilState::default(),
            bias: wgpu::DepthBiasState::default(),
        });
        let render = |label: &str, src: shaders::ShaderSource, topology| {
            let options = shaders::RenderOptions {
                topology,
                format,
                depth: depth.clone(),
                ..Default::default()
            };
            src.render_pipeline(device, label, &draw_pl, &options)
        };
        let resolve = shaders::TIMESERIES_RESOLVE.render_pipeline(
            device,
            "timeseries:render:resolve",
            &resolve_pl,
            &shaders::RenderOptions {
                format,
                depth: depth.clone(),
                ..Default::default()
            },
        );
        let spans = render(
            "timeseries:render:spans",
            shaders::TIMESERIES_SPANS,
            wgpu::PrimitiveTopology::TriangleList,
        );
        let conns = render(
            "timeseries:render:connectors",
            shaders::TIMESERIES_CONNECTORS,
            wgpu::PrimitiveTopology::LineList,
        );
        let limits = device.limits();
        let max_bytes = limits
            .max_storage_buffer_binding_size
            .min(limits.max_buffer_size)
            .min(1 << 34);
        // The largest power of two of samples whose 8 bytes each (value, valid count) fit one
        // binding.
        let max_samples = 1u64 << (63 - (max_bytes / 8).max(MIN_CAPACITY).leading_zeros());
        Pipelines {
            append,
            build,
            jobs_bgl,
            m4,
            m4_raster,
            m4_bgl,
            page_bgl,
            spans,
            conns,
            draw_bgl,
            resolve,
            resolve_bgl,
            max_samples: max_samples.min(1 << 31),
            max_binding: max_bytes,
            compact: true,
            raster: Raster::Draws,
        }
    }

    /// The most samples a mirror starts over from (its series' newest): three quarters of
    /// [`max_samples`](Pipelines::max_samples), so that a mirror of a longer series still has a
    /// quarter of a binding to grow into before it starts over again.
    pub fn mirror_span(&self) -> u64 {
        self.max_samples - self.max_samples / 4
    }

    /// [`Pipelines::new`] for `gpu`'s device, with the per-adapter choices: records compacted
    /// where the adapter can draw indirect; on a CPU adapter (lavapipe) the spans rastered by the
    /// M4 pass, and the short connectors too when the connector draw follows the line rule there
    /// ([`raster::lines_follow_rule`], checked now: one small draw and readback).
    pub fn for_gpu(gpu: &crate::gpu::Gpu) -> Pipelines {
        let mut p = Pipelines::new(&gpu.device, gpu.scene_format);
        p.compact = gpu
            .adapter
            .get_downlevel_capabilities()
            .flags
            .contains(wgpu::DownlevelFlags::INDIRECT_EXECUTION);
        if gpu.adapter.get_info().device_type == wgpu::DeviceType::Cpu {
            p.raster = if raster::lines_follow_rule(gpu, &p) {
                Raster::Compute
            } else {
                Raster::ComputeSpans
            };
        }
        p
    }
}

/// Number of pyramid levels and each level's node offset (from the block's first node) for a
/// mirror of `capacity` samples: levels are added until the top level has at most 256 nodes.
/// The nodes of all levels fit in `capacity / 8` (they number under `capacity / 15`).
fn layout_levels(capacity: u64) -> (u32, [u32; MAX_LEVELS]) {
    let mut offsets = [0u32; MAX_LEVELS];
    let mut total = 0u64;
    let mut levels = 0u32;
    let mut size = capacity;
    while (levels as usize) < MAX_LEVELS {
        size /= BRANCH;
        offsets[levels as usize] = total as u32;
        total += size;
        levels += 1;
        if size <= 256 {
            break;
        }
    }
    (levels, offsets)
}

/// Errors of the GPU path (the caller falls back to CPU M4).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum GpuM4Error {
    /// The view reaches samples older than the mirror holds: a series longer than
    /// [`Pipelines::mirror_span`] keeps only its newest samples on the GPU (one storage binding
    /// holds no more; [`Mirrors::sync`]).
    #[error(
        "series '{name}': the view reaches samples older than the newest {mirrored} of its \
         {stored} kept on the GPU (a storage binding holds no more; CPU decimation used)"
    )]
    BeyondMirror {
        name: String,
        mirrored: u64,
        stored: u64,
    },
    /// This frame's uploads already fill one storage binding: the series' new samples go up
    /// next frame ([`Mirrors::sync`]).
    #[error(
        "series '{name}': GPU upload deferred to the next frame (this frame's uploads fill a \
         storage binding; CPU decimation used)"
    )]
    Deferred { name: String },
    /// A mirror of GPU-written samples ([`Mirrors::hold_gpu_samples`]) longer than one storage
    /// binding holds, or empty.
    #[error("{samples} samples per series: a GPU mirror holds 1 to {max} on this device")]
    TooLong { samples: u64, max: u64 },
    /// Column bounds need samples in time order.
    #[error("series '{name}': out-of-order samples (CPU decimation used)")]
    Unordered { name: String },
    /// The series has no GPU mirror (its sync failed or was not called).
    #[error("series '{name}': no GPU mirror")]
    NotMirrored { name: String },
    /// The frame's batch already holds as many series as one storage binding of draw records
    /// can (columns × series × 20 bytes).
    #[error(
        "series '{name}': the GPU batch is full at {max} series of this width (CPU decimation used)"
    )]
    BatchFull { name: String, max: usize },
}

/// The draw bind group over `view`, `table` and `records`.
fn draw_group(
    device: &wgpu::Device,
    pipes: &Pipelines,
    view: &wgpu::Buffer,
    table: &wgpu::Buffer,
    records: &wgpu::Buffer,
    what: &str,
) -> wgpu::BindGroup {
    layout::buffers_group(
        device,
        &format!("timeseries:draw:{what}:bind_group"),
        &pipes.draw_bgl,
        &[view, table, records],
    )
}

/// Splits a workgroup count over x and y (65535 per dimension).
fn fold_groups(n: u32) -> (u32, u32) {
    if n <= 65_535 {
        (n.max(1), 1)
    } else {
        (65_535, n.div_ceil(65_535))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depths_decrease_exactly() {
        let mut prev = 1.0f32;
        for order in [0u32, 1, 2, 3, 1000, 1025, 65_535, (1 << 20) - 3] {
            let d = depth_of(order);
            assert!(d < prev && d > 0.0, "{order}: {d}");
            // Exact: the f32 is 1 − (order + 1)·2⁻²⁰ with no rounding.
            assert_eq!(d as f64, 1.0 - (order as f64 + 1.0) / (1u64 << 20) as f64);
            prev = d;
        }
        assert_eq!(depth_of(u32::MAX), depth_of((1 << 20) - 2));
    }

    #[test]
    fn pyramid_nodes_fit_an_eighth_of_the_block() {
        let mut cap = MIN_CAPACITY;
        while cap <= 1 << 31 {
            let (levels, offsets) = layout_levels(cap);
            let last = levels as usize - 1;
            let top = cap / BRANCH.pow(levels);
            assert!(offsets[last] as u64 + top <= cap / 8, "{cap}");
            cap *= 2;
        }
    }
}
