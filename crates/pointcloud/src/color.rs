//! How the points are drawn, as plain values: the colour mode and the largest point radius the
//! resolve supports. The GPU side (the app's rasterizer) turns them into pipeline constants;
//! the publish protocol checks a follower's message against them.

/// How a point's colour is chosen (the resolve's `MODE`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum ColorMode {
    /// The file's RGB.
    Rgb,
    /// Pulse intensity, grey.
    Intensity,
    /// Elevation through a colormap.
    Elevation,
    /// ASPRS classification colours.
    Classification,
    /// Return number.
    Return,
}

impl ColorMode {
    /// Every mode, in menu order.
    pub const ALL: [ColorMode; 5] = [
        ColorMode::Rgb,
        ColorMode::Intensity,
        ColorMode::Elevation,
        ColorMode::Classification,
        ColorMode::Return,
    ];

    /// Name in the side panel and the report.
    pub fn name(self) -> &'static str {
        match self {
            ColorMode::Rgb => "RGB",
            ColorMode::Intensity => "intensity",
            ColorMode::Elevation => "elevation",
            ColorMode::Classification => "classification",
            ColorMode::Return => "return number",
        }
    }

    /// The resolve shader's `MODE` constant (0–4, in [`ColorMode::ALL`]'s order).
    pub fn index(self) -> u32 {
        match self {
            ColorMode::Rgb => 0,
            ColorMode::Intensity => 1,
            ColorMode::Elevation => 2,
            ColorMode::Classification => 3,
            ColorMode::Return => 4,
        }
    }
}

/// Largest point radius, pixels.
pub const MAX_RADIUS: u32 = 3;
