//! How the point-cloud scene draws its points ([`Style`]): the colour mode (and whether the
//! scene chose it), point radius, eye-dome lighting, the classes hidden, and the resolve's colour
//! tables.

use super::class_rgba;
use crate::pointcloud::raster::ColorMode;

/// How the points are drawn: the side panel's colour, radius and lighting choices, the classes
/// hidden in the legend, and the colour tables the resolve's uniform holds.
pub(super) struct Style {
    pub(super) color: ColorMode,
    pub(super) radius: u32,
    pub(super) edl: f32,
    /// Classes hidden in the legend (bit c).
    pub(super) hidden_classes: [[u32; 4]; 2],
    /// The colour mode the scene chose for the cloud (RGB where it has colour, else
    /// elevation; `None` until the cloud is open or when the flag chose): a mode other than
    /// this one is the user's choice.
    pub(super) auto_color: Option<ColorMode>,
    /// Why the colours are not the cloud's default (its RGB colours are all black).
    pub(super) color_notice: Option<String>,
    /// RGBA8 per ASPRS class 0–31 and the 256-entry elevation colormap (viridis), as the
    /// resolve's uniform holds them.
    pub(super) color_tables: ([[u32; 4]; 8], [[u32; 4]; 64]),
}

/// The resolve's colour tables: the ASPRS class colours and the viridis colormap.
pub(super) fn color_tables() -> ([[u32; 4]; 8], [[u32; 4]; 64]) {
    let mut class_colors = [[0u32; 4]; 8];
    for c in 0..32u8 {
        class_colors[usize::from(c / 4)][usize::from(c % 4)] = class_rgba(c);
    }
    let mut lut = [[0u32; 4]; 64];
    for i in 0..256usize {
        let c = colorous::VIRIDIS.eval_rational(i, 256);
        lut[i / 4][i % 4] = u32::from_le_bytes([c.r, c.g, c.b, 255]);
    }
    (class_colors, lut)
}
