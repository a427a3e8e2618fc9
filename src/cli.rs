//! Command-line options (clap). Every flag is listed by `vizdeck --help`.

use std::path::PathBuf;

use clap::Parser;

use crate::audio::AudioSelection;
use crate::gpu::BackendChoice;
use crate::scene::{SCENES, SceneConfig};

/// vizdeck: live data on the GPU (spectrogram, particles, time series) with frame-time statistics.
#[derive(Parser, Debug, Clone)]
#[command(name = "vizdeck", version, about, long_about = None)]
pub struct Cli {
    /// Scene shown first: spectrogram, particles or timeseries.
    #[arg(long, default_value = "spectrogram", value_parser = parse_scene)]
    pub scene: String,

    /// Audio input: `default` (default input device, synthetic fallback if none opens),
    /// `synthetic` (built-in chirp + tones), or an input device name (exact or substring).
    #[arg(long, default_value = "default", value_name = "default|synthetic|NAME")]
    pub audio: String,

    /// Play a WAV file through the spectrogram at real-time rate (overrides --audio).
    #[arg(long, value_name = "PATH")]
    pub audio_file: Option<PathBuf>,

    /// Stream a CSV into the time-series chart: a header row, a time column (seconds), then one
    /// or more numeric value columns.
    #[arg(long, value_name = "PATH")]
    pub series_file: Option<PathBuf>,

    /// Record one row of frame-time statistics per frame into this CSV from the start.
    #[arg(long, value_name = "PATH.csv")]
    pub record_stats: Option<PathBuf>,

    /// Render offscreen with a simulated clock (each frame advances 1/60 s); no window.
    #[arg(long)]
    pub headless: bool,

    /// Frames to render, then exit (headless default: 300; window default: run until closed).
    #[arg(long, value_name = "N")]
    pub frames: Option<u64>,

    /// Window or offscreen size in pixels.
    #[arg(long, default_value = "1280x720", value_name = "WxH", value_parser = parse_size)]
    pub size: (u32, u32),

    /// Save the last frame as PNG (headless only).
    #[arg(long, value_name = "PATH.png", requires = "headless")]
    pub screenshot: Option<PathBuf>,

    /// Write the statistics summary and per-scene metrics as JSON when the run ends.
    #[arg(long, value_name = "PATH.json")]
    pub report: Option<PathBuf>,

    /// Graphics backend.
    #[arg(long, value_enum, default_value_t = BackendChoice::Auto)]
    pub backend: BackendChoice,

    /// Present mode of the window: vsync (Fifo), no-vsync (Mailbox or Immediate, whichever the
    /// surface has), or an exact mode.
    #[arg(long, value_enum, default_value_t = PresentChoice::Vsync)]
    pub present_mode: PresentChoice,

    /// Seed of every random source (particles, synthetic series).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,

    /// Number of particles.
    #[arg(long, default_value_t = crate::scene::particles::DEFAULT_COUNT, value_name = "N")]
    pub particles: u32,
}

/// `--present-mode` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum PresentChoice {
    /// Wait for vertical blank (Fifo, or FifoRelaxed where available).
    Vsync,
    /// Do not wait (Mailbox, else Immediate, else Fifo).
    NoVsync,
    /// Fifo exactly.
    Fifo,
    /// Mailbox exactly.
    Mailbox,
    /// Immediate exactly.
    Immediate,
}

impl PresentChoice {
    /// The wgpu present mode.
    pub fn mode(self) -> wgpu::PresentMode {
        match self {
            PresentChoice::Vsync => wgpu::PresentMode::AutoVsync,
            PresentChoice::NoVsync => wgpu::PresentMode::AutoNoVsync,
            PresentChoice::Fifo => wgpu::PresentMode::Fifo,
            PresentChoice::Mailbox => wgpu::PresentMode::Mailbox,
            PresentChoice::Immediate => wgpu::PresentMode::Immediate,
        }
    }
}

/// Largest accepted side of `--size` (pixels).
pub const MAX_SIDE: u32 = 16384;

/// Parses `WxH` (both 1..=16384).
pub fn parse_size(s: &str) -> Result<(u32, u32), String> {
    let (w, h) = s
        .split_once(['x', 'X'])
        .ok_or_else(|| format!("'{s}' is not WxH (e.g. 1280x720)"))?;
    let side = |v: &str, what: &str| -> Result<u32, String> {
        let n: u32 = v
            .trim()
            .parse()
            .map_err(|_| format!("{what} '{v}' is not a whole number"))?;
        if n == 0 || n > MAX_SIDE {
            return Err(format!(
                "{what} must be between 1 and {MAX_SIDE} pixels, got {n}"
            ));
        }
        Ok(n)
    };
    Ok((side(w, "width")?, side(h, "height")?))
}

/// Accepts the ids of [`SCENES`].
pub fn parse_scene(s: &str) -> Result<String, String> {
    if crate::scene::index_of(s).is_some() {
        Ok(s.to_string())
    } else {
        let ids: Vec<_> = SCENES.iter().map(|e| e.id).collect();
        Err(format!("unknown scene '{s}'; scenes: {}", ids.join(", ")))
    }
}

impl Cli {
    /// Scene inputs as the scenes see them.
    pub fn scene_config(&self) -> SceneConfig {
        let audio = match &self.audio_file {
            Some(p) => AudioSelection::File(p.clone()),
            None => AudioSelection::from_cli(&self.audio),
        };
        SceneConfig {
            audio,
            series_file: self.series_file.clone(),
            seed: self.seed,
            particles: self.particles,
            simulated_clock: self.headless,
        }
    }

    /// Index of `--scene` in [`SCENES`].
    pub fn scene_index(&self) -> usize {
        crate::scene::index_of(&self.scene).unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("1280x720"), Ok((1280, 720)));
        assert_eq!(parse_size("1x1"), Ok((1, 1)));
        assert!(parse_size("0x0").unwrap_err().contains("width"));
        assert!(parse_size("10x0").unwrap_err().contains("height"));
        assert!(parse_size("abc").is_err());
        assert!(parse_size("99999x10").is_err());
    }

    #[test]
    fn scenes() {
        assert!(parse_scene("particles").is_ok());
        assert!(
            parse_scene("nope")
                .unwrap_err()
                .contains("unknown scene 'nope'")
        );
    }
}
