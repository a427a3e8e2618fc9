//! The structs the shaders mirror (raster, resolve and pick parameters, the resolve's chunk)
//! and the resolve's fixed choices ([`ResolveVariant`]).

use super::{ColorMode, QBatch};

/// `ResolveChunk` of `shaders/pointcloud/resolve.wgsl` (16 bytes): the ids one resolve dispatch
/// colours (point id `first + k` is element k of its bindings, for k < count).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct ResolveChunk {
    /// Id of element 0.
    pub first: u32,
    /// Elements.
    pub count: u32,
    /// Padding.
    pub _pad: [u32; 2],
}

/// `RasterParams` of `shaders/common/pointcloud.wgsl` (208 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct RasterParams {
    /// Camera-relative points (point − eye) → clip space, column-major.
    pub view_proj: [[f32; 4]; 4],
    /// Visibility buffer width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// Padding.
    pub _pad: [u32; 2],
    /// Bit c (word c / 32, bit c % 32) set: points of ASPRS class c are drawn.
    pub class_mask: [[u32; 4]; 2],
}

impl RasterParams {
    /// Parameters drawing every class.
    pub fn new(view_proj: [[f32; 4]; 4], size: (u32, u32)) -> RasterParams {
        RasterParams {
            view_proj,
            width: size.0.max(1),
            height: size.1.max(1),
            _pad: [0; 2],
            class_mask: [[u32::MAX; 4]; 2],
        }
    }
}

/// `ResolveParams` of `shaders/pointcloud/resolve.wgsl` (1,216 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct ResolveParams {
    /// Visibility buffer size in pixels.
    pub width: u32,
    /// See `width`.
    pub height: u32,
    /// Words (pixels) per row of the [`ResolveImage`](super::ResolveImage):
    /// [`ResolveImage::pitch`](super::ResolveImage::pitch).
    pub pitch: u32,
    /// Padding.
    pub _pad: u32,
    /// Colour where no point landed (linear 0–1, written as it is).
    pub background: [f32; 4],
    /// Near and far plane distances (file units), 1 for an orthographic projection else 0, and
    /// the eye-dome lighting strength.
    pub near: f32,
    /// See `near`.
    pub far: f32,
    /// See `near`.
    pub ortho: f32,
    /// See `near`.
    pub edl_strength: f32,
    /// Intensity → [0, 1]: multiplied by this.
    pub intensity_scale: f32,
    /// Elevation (stored relative to the cloud's lowest point) → colormap position:
    /// `(e − elev_min) · elev_scale`.
    pub elev_min: f32,
    /// See `elev_min`.
    pub elev_scale: f32,
    /// Padding.
    pub _pad1: f32,
    /// RGBA8 per ASPRS class 0–31 (classes above use class & 31).
    pub class_colors: [[u32; 4]; 8],
    /// RGBA8 colormap of 256 entries for elevation.
    pub lut: [[u32; 4]; 64],
}

/// `PickParams` of `shaders/pointcloud/pick.wgsl` (32 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct PickParams {
    /// The pixel.
    pub x: i32,
    /// See `x`.
    pub y: i32,
    /// Point radius of the resolve, pixels (0 to [`MAX_RADIUS`]).
    pub radius: i32,
    /// Padding.
    pub _pad: u32,
    /// Visibility buffer size.
    pub width: u32,
    /// See `width`.
    pub height: u32,
    /// Padding.
    pub _pad1: [u32; 2],
}

/// The WGSL mirrors of this module's types, for the layout test.
pub(crate) fn wgsl_mirrors() -> Vec<crate::gpu::mirror::Mirror> {
    use crate::gpu::mirror::wgsl_mirror;
    vec![
        wgsl_mirror!(RasterParams => "RasterParams" {
            view_proj, width, height, _pad, class_mask,
        }),
        wgsl_mirror!(ResolveParams => "ResolveParams" {
            width, height, pitch, _pad, background, near, far, ortho, edl_strength, intensity_scale,
            elev_min, elev_scale, _pad1, class_colors, lut,
        }),
        wgsl_mirror!(PickParams => "PickParams" {
            x, y, radius, _pad, width, height, _pad1,
        }),
        wgsl_mirror!(QBatch => "QBatch" { lo, first, step, slot }),
        wgsl_mirror!(ResolveChunk => "ResolveChunk" { first, count, _pad }),
    ]
    .into_iter()
    .chain(crate::pointcloud::pieces::wgsl_mirrors())
    .collect()
}

/// One resolve pipeline's fixed choices (override constants, so no pixel branches on them).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ResolveVariant {
    /// Colour mode.
    pub mode: ColorMode,
    /// Point radius in pixels, 0–3: each pixel takes the nearest point within this distance.
    pub radius: u32,
    /// Eye-dome lighting on.
    pub edl: bool,
}
