//! The parsers of flag values (`value_parser = ...`), each naming what it expects, and the
//! limits they check ([`MAX_SIDE`], [`MAX_PIXELS`]).

use std::path::PathBuf;

use crate::audio::stft::{MAX_ANALYSIS_FFT_SIZE, MIN_ANALYSIS_FFT_SIZE, WindowKind};
use crate::audio::{AudioSelection, ChannelChoice};
use crate::scene::SCENES;

/// Parses a byte count: `65536`, `64KiB`, `1MiB`, `1GiB` (also `K`, `M`, `G`).
pub fn parse_bytes(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (num, mult) = [
        ("GiB", 1u64 << 30),
        ("MiB", 1 << 20),
        ("KiB", 1 << 10),
        ("G", 1 << 30),
        ("M", 1 << 20),
        ("K", 1 << 10),
        ("B", 1),
    ]
    .iter()
    .find_map(|(suf, m)| t.strip_suffix(suf).map(|n| (n, *m)))
    .unwrap_or((t, 1));
    let n: u64 = num
        .trim()
        .parse()
        .map_err(|_| format!("'{s}' is not a byte count (e.g. 65536, 64KiB, 16MiB)"))?;
    n.checked_mul(mult)
        .filter(|b| *b > 0)
        .ok_or_else(|| format!("'{s}' is out of range"))
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

/// Parses a particle count: a whole number ≥ 1 (counts above what the adapter holds are clamped
/// by the scene, with a notice).
pub fn parse_particles(s: &str) -> Result<u32, String> {
    match s.trim().parse::<u32>() {
        Ok(0) => Err("'0' particles: the count must be at least 1".to_string()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!(
            "'{s}' is not a particle count (a whole number ≥ 1)"
        )),
    }
}

/// Parses a duration in seconds: finite, 0..=86400.
pub fn parse_seconds(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("'{s}' is not a number of seconds"))?;
    if !v.is_finite() || !(0.0..=86_400.0).contains(&v) {
        return Err(format!("'{s}' seconds: must be between 0 and 86400"));
    }
    Ok(v)
}

/// Most pixels `--size` accepts, whatever the adapter: 8192 × 8192 (64 Mi; 16384 × 4096, or
/// twice 8K UHD). Every frame holds several images of the output's size (the scene texture, the
/// output, a depth buffer; the point cloud's visibility buffer, the particles' splat buffer; a
/// screenshot's readback), about 36 bytes a pixel together: 2.3 GB at this size, 9 GB at
/// 16384 × 16384, where a software adapter takes some 40 s a frame.
pub const MAX_PIXELS: u64 = 8192 * 8192;

/// Parses `WxH`: both sides 1..=[`MAX_SIDE`], at most [`MAX_PIXELS`] in all. Checked before any
/// GPU device exists; the adapter's own limits are checked once there is one
/// ([`check_size_for_adapter`]).
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
    let (w, h) = (side(w, "width")?, side(h, "height")?);
    let pixels = u64::from(w) * u64::from(h);
    if pixels > MAX_PIXELS {
        return Err(format!(
            "{w}x{h} is {pixels} pixels, more than vizdeck draws ({MAX_PIXELS}, e.g. 8192x8192 \
             or 16384x4096): every frame holds several images of that size"
        ));
    }
    Ok((w, h))
}

/// Checks an output of `size` pixels against the adapter's `limits`: each side within its 2D
/// texture limit, and the readback of a whole frame (rows padded to 256 bytes, 4 bytes a pixel:
/// screenshots) within its buffer limit. `flag` names the option in the message.
///
/// # Errors
///
/// One line naming `flag`, the size and the limit it exceeds.
pub fn check_size_for_adapter(
    flag: &str,
    size: (u32, u32),
    limits: &wgpu::Limits,
) -> Result<(), String> {
    let (w, h) = size;
    let max = limits.max_texture_dimension_2d;
    if w > max || h > max {
        return Err(format!(
            "{flag} {w}x{h}: larger than this adapter's texture limit of {max} pixels a side"
        ));
    }
    let row = (u64::from(w) * 4).div_ceil(256) * 256;
    let bytes = row * u64::from(h);
    if bytes > limits.max_buffer_size {
        return Err(format!(
            "{flag} {w}x{h}: a frame's readback needs {bytes} bytes, more than this adapter's \
             buffer limit of {} bytes",
            limits.max_buffer_size
        ));
    }
    Ok(())
}

/// `--audio`: rejects `synthetic:NAME` with an unknown signal (see [`AudioSelection::parse`]).
pub fn parse_audio(s: &str) -> Result<String, String> {
    AudioSelection::parse(s).map(|_| s.to_string())
}

/// `--audio-channel`: see [`ChannelChoice::from_cli`].
pub fn parse_audio_channel(s: &str) -> Result<ChannelChoice, String> {
    ChannelChoice::from_cli(s)
}

/// `--fft-size`: a power of two in 256..=32768.
pub fn parse_fft_size(s: &str) -> Result<usize, String> {
    let n: usize = s
        .trim()
        .parse()
        .map_err(|_| format!("'{s}' is not a whole number"))?;
    if !n.is_power_of_two() || !(MIN_ANALYSIS_FFT_SIZE..=MAX_ANALYSIS_FFT_SIZE).contains(&n) {
        return Err(format!(
            "{n} is not a power of two from {MIN_ANALYSIS_FFT_SIZE} to {MAX_ANALYSIS_FFT_SIZE}"
        ));
    }
    Ok(n)
}

/// `--hop`: a whole number in 1..=32768 (checked against `--fft-size` by [`Cli::check`]).
pub fn parse_hop(s: &str) -> Result<usize, String> {
    let n: usize = s
        .trim()
        .parse()
        .map_err(|_| format!("'{s}' is not a whole number"))?;
    if !(1..=MAX_ANALYSIS_FFT_SIZE).contains(&n) {
        return Err(format!(
            "{n} is out of range: the hop must be from 1 to the FFT size"
        ));
    }
    Ok(n)
}

/// `--window`: see [`WindowKind::from_name`].
pub fn parse_window(s: &str) -> Result<WindowKind, String> {
    s.parse()
}

/// `--series-source`: a URL of a scheme vizdeck reads (checked here, connected later).
pub fn parse_series_source(s: &str) -> Result<String, String> {
    crate::series::source::net::Endpoint::parse(s).map(|_| s.to_string())
}

/// `--share`: a path where nothing is, or a stale socket ([`crate::interop::listener::check_path`]).
pub fn parse_share_path(s: &str) -> Result<PathBuf, String> {
    let path = PathBuf::from(s);
    crate::interop::listener::check_path(&path).map_err(|e| e.to_string())?;
    Ok(path)
}

/// `--publish`, `--follow`: an `mqtt://` or `mqtts://` URL with a base topic and no wildcard.
pub fn parse_share_url(s: &str) -> Result<String, String> {
    crate::publish::link::parse_url(s).map(|_| s.to_string())
}

/// `--share-series`: a whole number of series, 1..=1024.
pub fn parse_share_series(s: &str) -> Result<u32, String> {
    parse_series_count(s).map(|n| n as u32)
}

/// `--share-samples`: a count of samples, at least 1 (`k`, `M` suffixes), at most 2³¹ (the
/// device may allow fewer: checked when the scene starts).
pub fn parse_share_samples(s: &str) -> Result<u64, String> {
    let n = parse_count(s)?;
    if n > 1 << 31 {
        return Err(format!("'{s}' samples per series: at most 2147483648"));
    }
    Ok(n)
}

/// `--share-rate`: samples per second, more than 0 (`k`, `M` suffixes).
pub fn parse_share_rate(s: &str) -> Result<f64, String> {
    let r = parse_rate(s, "1000, 48k")?;
    if !(r.is_finite() && r > 0.0) {
        return Err(format!("'{s}' samples/s: more than 0"));
    }
    Ok(r)
}

/// `--series-count`: a whole number of series, 1..=1024.
pub fn parse_series_count(s: &str) -> Result<usize, String> {
    use crate::scene::timeseries::SYNTH_MAX_SERIES;
    let n: usize = s
        .trim()
        .parse()
        .map_err(|_| format!("'{s}' is not a whole number of series"))?;
    if !(1..=SYNTH_MAX_SERIES).contains(&n) {
        return Err(format!(
            "{n} series is out of range: from 1 to {SYNTH_MAX_SERIES}"
        ));
    }
    Ok(n)
}

/// `--series-rate`: samples per second in all, a number with an optional `k` (×1e3) or `M`
/// (×1e6) suffix, more than 0 and at most 1e8.
pub fn parse_series_rate(s: &str) -> Result<f64, String> {
    use crate::scene::timeseries::SYNTH_MAX_TOTAL_RATE;
    let r = parse_rate(s, "200000, 200k, 10M")?;
    if !(r.is_finite() && r > 0.0 && r <= SYNTH_MAX_TOTAL_RATE) {
        return Err(format!(
            "'{s}' is out of range: more than 0 and at most {SYNTH_MAX_TOTAL_RATE:e} samples/s"
        ));
    }
    Ok(r)
}

/// A rate in samples/s: a number with an optional `k` (×1e3) or `M` (×1e6) suffix, not yet
/// checked for range; the error names `examples`.
fn parse_rate(s: &str, examples: &str) -> Result<f64, String> {
    let t = s.trim();
    let (num, mult) = if let Some(n) = t.strip_suffix('M') {
        (n, 1e6)
    } else if let Some(n) = t.strip_suffix('k') {
        (n, 1e3)
    } else {
        (t, 1.0)
    };
    num.trim()
        .parse::<f64>()
        .map(|v| v * mult)
        .map_err(|_| format!("'{s}' is not a rate in samples/s (e.g. {examples})"))
}

pub use vizdeck_base::text::parse_count;

/// Parses `--time-format` (a strftime pattern chrono accepts, or `rfc3339`).
pub fn parse_time_format(s: &str) -> Result<crate::series::source::dates::DateFormat, String> {
    crate::series::source::dates::DateFormat::from_pattern(s)
}

/// Parses `--pointcloud`: `synthetic:N` or a file path.
pub fn parse_pointcloud(s: &str) -> Result<crate::scene::pointcloud::CloudSource, String> {
    crate::scene::pointcloud::CloudSource::parse(s)
}

/// Parses an eye-dome lighting strength: 0 (off) to 4.
pub fn parse_edl(s: &str) -> Result<f32, String> {
    match s.trim().parse::<f32>() {
        Ok(v) if (0.0..=4.0).contains(&v) => Ok(v),
        _ => Err(format!("'{s}' is not a strength from 0 (off) to 4")),
    }
}

/// Parses a pixel `X,Y`.
pub fn parse_pixel(s: &str) -> Result<(u32, u32), String> {
    let (x, y) = s
        .split_once(',')
        .ok_or_else(|| format!("'{s}' is not a pixel X,Y (e.g. 640,360)"))?;
    let c = |v: &str| {
        v.trim()
            .parse::<u32>()
            .map_err(|_| format!("'{s}' is not a pixel X,Y (e.g. 640,360)"))
    };
    Ok((c(x)?, c(y)?))
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
