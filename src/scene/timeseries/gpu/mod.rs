//! GPU M4 decimation of a time series from a min/max pyramid kept on the GPU, and the exact line
//! drawing from the decimated columns.
//!
//! Per series, a [`SeriesMirror`] holds on the GPU: the values (f32 bits), the running count of
//! valid (non-NaN) values, and a pyramid of min/max nodes with branching [`BRANCH`] (level L node k
//! covers values `[k·16^L, (k+1)·16^L)`). New samples are appended through the frame's uploader and only
//! the pyramid nodes they complete are built (`shaders/timeseries/pyramid_build.wgsl`, one dispatch
//! per level). For a view, the CPU finds each pixel column's sample index range by binary search on
//! the f64 times (with [`column_of`], the same column function as the CPU reference), and
//! `shaders/timeseries/m4.wgsl` computes min, max, first, last and count per column in
//! O(levels) reads. A frame thus costs O(pixels × levels) whatever the number of points in view.
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
//!
//! Files: this one holds the record and uniform types, the pipelines and the pyramid layout;
//! `series_mirror.rs` the GPU copy of one series (sync, view, M4, draw); `host.rs` the records
//! drawn from the CPU (the full-resolution reference, the fallback for out-of-order series).
//!
//! [`column_of`]: crate::series::decimate::column_of

mod host;
mod series_mirror;

pub use host::{HostDraw, column_segments, reference_segments};
pub use series_mirror::{SeriesMirror, decimate_gpu};

use bytemuck::{Pod, Zeroable};

use crate::gpu::{layout, shaders};
use crate::series::decimate::Column;

/// Branching factor of the min/max pyramid.
pub const BRANCH: u64 = 16;
/// Most pyramid levels above the values.
pub const MAX_LEVELS: usize = 8;
/// Smallest mirror capacity, samples.
const MIN_CAPACITY: u64 = 1 << 16;
/// Marker of an empty span or connector record.
pub const NONE: u32 = u32::MAX;

/// One vertical span record: pixel column and the f32 bits of the low and high values.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct Span {
    pub col: u32,
    pub lo: u32,
    pub hi: u32,
}

/// One connector record: a line from column `col0` at value bits `v0` to `col1` at `v1`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct Conn {
    pub col0: u32,
    pub v0: u32,
    pub col1: u32,
    pub v1: u32,
}

/// The draw uniform: value → pixel row is `y = b − v·a`, image `width × height` pixels, RGBA8
/// colour (R in the low byte).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct ViewUniform {
    pub a: f32,
    pub b: f32,
    pub width: f32,
    pub height: f32,
    pub color: u32,
    pub _pad: [u32; 3],
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
            _pad: [0; 3],
        }
    }
}

#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct BuildParams {
    level: u32,
    src_offset: u32,
    dst_offset: u32,
    node_start: u32,
    node_end: u32,
    _pad: [u32; 3],
}

#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct M4Params {
    columns: u32,
    levels: u32,
    _pad: [u32; 2],
    offsets: [u32; 8],
}

/// The WGSL mirrors of this module's types and of [`Column`] (`shaders/common/timeseries.wgsl`,
/// `m4.wgsl`, `pyramid_build.wgsl`), for the layout test.
pub(crate) fn wgsl_mirrors() -> Vec<crate::gpu::mirror::Mirror> {
    use crate::gpu::mirror::wgsl_mirror;
    vec![
        wgsl_mirror!(Span => "Span" { col, lo, hi }),
        wgsl_mirror!(Conn => "Conn" { col0, v0, col1, v1 }),
        wgsl_mirror!(ViewUniform => "SeriesView" { a, b, width, height, color, _pad }),
        wgsl_mirror!(BuildParams => "BuildParams" {
            level, src_offset, dst_offset, node_start, node_end, _pad,
        }),
        wgsl_mirror!(M4Params => "M4Params" { columns, levels, _pad, offsets }),
        wgsl_mirror!(Column => "Column" { min, max, first, last, count }),
    ]
}

/// Uniform slot stride for the per-level build parameters (dynamic offsets).
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
    build: wgpu::ComputePipeline,
    build_bgl: wgpu::BindGroupLayout,
    m4: wgpu::ComputePipeline,
    m4_bgl: wgpu::BindGroupLayout,
    spans: wgpu::RenderPipeline,
    conns: wgpu::RenderPipeline,
    draw_bgl: wgpu::BindGroupLayout,
    /// Largest number of samples one mirror may hold (storage binding limit / 4).
    pub max_samples: u64,
}

impl Pipelines {
    /// Creates the pipelines; render pipelines target `format`.
    pub fn new(device: &wgpu::Device, format: wgpu::TextureFormat) -> Pipelines {
        let cs = wgpu::ShaderStages::COMPUTE;
        let build_bgl = layout::bind_group_layout(
            device,
            "timeseries:pyramid_build",
            &[
                layout::uniform_dynamic(0, cs, None),
                layout::storage(1, cs, true),
                layout::storage(2, cs, false),
            ],
        );
        let m4_bgl = layout::bind_group_layout(
            device,
            "timeseries:m4",
            &[
                layout::uniform(0, cs, None),
                layout::storage(1, cs, true),
                layout::storage(2, cs, true),
                layout::storage(3, cs, true),
                layout::storage(4, cs, true),
                layout::storage(5, cs, false),
                layout::storage(6, cs, false),
                layout::storage(7, cs, false),
            ],
        );
        let vs = wgpu::ShaderStages::VERTEX;
        let draw_bgl = layout::bind_group_layout(
            device,
            "timeseries:draw",
            &[layout::uniform(0, vs, None), layout::storage(1, vs, true)],
        );
        let build = shaders::TIMESERIES_PYRAMID_BUILD.compute_pipeline(
            device,
            "timeseries:compute:pyramid_build",
            &build_bgl,
        );
        let m4 = shaders::TIMESERIES_M4.compute_pipeline(device, "timeseries:compute:m4", &m4_bgl);
        let draw_pl = layout::pipeline_layout(device, "timeseries:draw", &[&draw_bgl]);
        let render = |label: &str, src: shaders::ShaderSource, topology| {
            let options = shaders::RenderOptions {
                topology,
                format,
                ..Default::default()
            };
            src.render_pipeline(device, label, &draw_pl, &options)
        };
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
            .min(limits.max_buffer_size);
        Pipelines {
            build,
            build_bgl,
            m4,
            m4_bgl,
            spans,
            conns,
            draw_bgl,
            max_samples: (max_bytes / 4).min(u32::MAX as u64 - 1),
        }
    }
}

/// Number of pyramid levels and each level's node offset for a mirror of `capacity` samples:
/// levels are added until the top level has at most 256 nodes.
fn layout_levels(capacity: u64) -> (u32, [u32; MAX_LEVELS], u64) {
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
    (levels, offsets, total)
}

/// Errors of the GPU path (the caller falls back to CPU M4).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum GpuM4Error {
    /// The series holds more samples than one storage binding can.
    #[error("series '{name}': {len} samples exceed the GPU storage limit of {max}")]
    TooLarge { name: String, len: u64, max: u64 },
    /// Column bounds need samples in time order.
    #[error("series '{name}': out-of-order samples (CPU decimation used)")]
    Unordered { name: String },
}

fn draw_group(
    device: &wgpu::Device,
    pipes: &Pipelines,
    view: &wgpu::Buffer,
    data: &wgpu::Buffer,
    what: &str,
) -> wgpu::BindGroup {
    device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some(&format!("timeseries:draw:{what}:bind_group")),
        layout: &pipes.draw_bgl,
        entries: &[
            wgpu::BindGroupEntry {
                binding: 0,
                resource: view.as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: 1,
                resource: data.as_entire_binding(),
            },
        ],
    })
}

/// Splits a workgroup count over x and y (65535 per dimension).
fn fold_groups(n: u32) -> (u32, u32) {
    if n <= 65_535 {
        (n.max(1), 1)
    } else {
        (65_535, n.div_ceil(65_535))
    }
}
