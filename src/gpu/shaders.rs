//! Registry of every WGSL file in `shaders/` (one file per GPU pass). The sources are compiled
//! into the binary; `tests/shaders.rs` validates each file on disk with naga and checks that this
//! table lists all of them.

/// One WGSL source: its path relative to `shaders/` and its text.
#[derive(Clone, Copy, Debug)]
pub struct ShaderSource {
    /// Path relative to `shaders/`, e.g. `"particles/step.wgsl"`; also the module label.
    pub path: &'static str,
    /// WGSL text.
    pub source: &'static str,
}

macro_rules! shader {
    ($path:literal) => {
        ShaderSource {
            path: $path,
            source: include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/shaders/", $path)),
        }
    };
}

/// Spectrogram: new dB columns → colormap → ring texture (compute).
pub const SPECTROGRAM_COLORMAP: ShaderSource = shader!("spectrogram/colormap.wgsl");
/// Spectrogram: ring texture → plot area, newest column on the right (render).
pub const SPECTROGRAM_DRAW: ShaderSource = shader!("spectrogram/draw.wgsl");
/// Particles: one fixed timestep on ping-pong storage buffers (compute).
pub const PARTICLES_STEP: ShaderSource = shader!("particles/step.wgsl");
/// Particles: instanced sprites read straight from the storage buffer (render).
pub const PARTICLES_DRAW: ShaderSource = shader!("particles/draw.wgsl");
/// Time series: decimated min/max line segments (render).
pub const TIMESERIES_LINES: ShaderSource = shader!("timeseries/lines.wgsl");

/// Every shader the app uses.
pub const ALL: &[ShaderSource] = &[
    SPECTROGRAM_COLORMAP,
    SPECTROGRAM_DRAW,
    PARTICLES_STEP,
    PARTICLES_DRAW,
    TIMESERIES_LINES,
];

impl ShaderSource {
    /// Creates the shader module, labelled with its path.
    pub fn module(&self, device: &wgpu::Device) -> wgpu::ShaderModule {
        device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some(self.path),
            source: wgpu::ShaderSource::Wgsl(self.source.into()),
        })
    }
}
