//! Command-line options (clap). Every flag is listed by `vizdeck --help`.
//!
//! Files: this one holds the flags ([`Cli`], [`Command`], [`BenchArgs`]); `parse.rs` the
//! parsers of flag values and their limits; `check.rs` what [`Cli`] derives from its flags
//! and checks across them.

mod check;
mod parse;

pub use parse::*;

use std::path::PathBuf;

use clap::Parser;

use crate::audio::ChannelChoice;
use crate::audio::stft::WindowKind;
use crate::gpu::BackendChoice;
use crate::scene::spectrogram::FftOn;

/// vizdeck: live data on the GPU (spectrogram, particles, time series, point clouds) with
/// frame-time statistics.
///
/// Without a subcommand: the window (or `--headless`). Subcommands: `stats` (summaries of recorded
/// CSVs), `bench` (scenes, upload strategies, kernel tables).
#[derive(Parser, Debug, Clone)]
#[command(
    name = "vizdeck",
    version,
    about = "Live data on the GPU: spectrogram, particles, streaming time series and point clouds, with frame-time statistics",
    long_about = None,
    after_help = "The flags are grouped by scene and area; the pages in docs/ explain them: \
                  spectrogram.md, particles.md, timeseries.md, pointcloud.md, recording.md \
                  (recording, statistics, `vizdeck stats`, `vizdeck bench`), headless.md (headless \
                  runs, window and GPU) and sharing.md (--publish, --follow, --share)."
)]
pub struct Cli {
    /// `stats` or `bench`; none runs the app.
    #[command(subcommand)]
    pub command: Option<Command>,

    /// Scene shown first: spectrogram, particles, timeseries or pointcloud.
    #[arg(long, default_value = "spectrogram", value_parser = parse_scene)]
    pub scene: String,

    /// Audio input: `default` (default input device, synthetic fallback if none opens),
    /// `synthetic` (built-in chirp + tones), `synthetic:SIGNAL` with SIGNAL one of sine (1 kHz,
    /// −6 dBFS), two-tone (1 kHz + 3 kHz), chirp (100 Hz → 8 kHz in 5 s), chirp-tones (the
    /// default mix), white, pink (noises seeded by --seed), or an input device name (exact or
    /// substring).
    #[arg(long, help_heading = "Spectrogram", default_value = "default", value_name = "default|synthetic[:SIGNAL]|NAME", value_parser = parse_audio)]
    pub audio: String,

    /// Channel analysed, for live input and files: `mix` (mean of all channels), or a channel
    /// number N starting at 1 (`left` = 1, `right` = 2).
    #[arg(long, help_heading = "Spectrogram", default_value = "mix", value_name = "mix|N", value_parser = parse_audio_channel, allow_negative_numbers = true)]
    pub audio_channel: ChannelChoice,

    /// Spectrogram FFT size in samples: a power of two from 256 to 32768.
    #[arg(long, help_heading = "Spectrogram", default_value_t = crate::audio::stft::DEFAULT_FFT_SIZE, value_name = "N", value_parser = parse_fft_size, allow_negative_numbers = true)]
    pub fft_size: usize,

    /// Spectrogram hop between columns in samples: 1 up to the FFT size (overlap = N − hop).
    /// Default: a quarter of the FFT size (75 % overlap; 512 for the default 2048).
    #[arg(long, help_heading = "Spectrogram", value_name = "N", value_parser = parse_hop, allow_negative_numbers = true)]
    pub hop: Option<usize>,

    /// Spectrogram analysis window (levels read in dBFS whichever is chosen).
    #[arg(long, help_heading = "Spectrogram", default_value = "hann", value_name = "hann|hamming|blackman-harris|flat-top|rectangular", value_parser = parse_window)]
    pub window: WindowKind,

    /// Open a sound file (WAV, FLAC, Ogg Vorbis, MP3) in the spectrogram (overrides --audio): it
    /// is decoded whole (in the window, a file of 4 MiB or more on its own thread with a progress
    /// bar), then analysed whole at once and shown whole, the view fitted to it. A file longer
    /// than the scrollback (70 s at the default hop) is analysed as far as the scrollback holds
    /// and waits there; Play goes on from there at real-time rate.
    #[arg(long, help_heading = "Spectrogram", value_name = "PATH")]
    pub audio_file: Option<PathBuf>,

    /// Number of particles.
    #[arg(long, help_heading = "Particles", default_value_t = crate::scene::particles::DEFAULT_COUNT, value_name = "N", value_parser = parse_particles)]
    pub particles: u32,

    /// Particle simulation: free (forces only), grid (flocking through a GPU uniform grid) or
    /// brute (the same flocking over all pairs, O(N²)).
    #[arg(long, help_heading = "Particles", value_enum, default_value_t = crate::scene::particles::Mode::Free)]
    pub particle_mode: crate::scene::particles::Mode,

    /// Particle simulation rate (fixed steps per second): auto (60 on a CPU adapter such as
    /// lavapipe, where each step is a pass over every particle on the CPU; 120 elsewhere), 120
    /// or 60.
    #[arg(long, help_heading = "Particles", value_enum, default_value_t = crate::scene::particles::StepRate::Auto)]
    pub particle_rate: crate::scene::particles::StepRate,

    /// Stream a CSV into the time-series chart: a header row, a time column (seconds), then one
    /// or more numeric value columns. Parquet and Arrow IPC files (.parquet, .pq, .arrow,
    /// .feather v2, .ipc) are read too: a timestamp, date or numeric time column, every numeric
    /// column a series.
    #[arg(long, help_heading = "Time series", value_name = "PATH")]
    pub series_file: Option<PathBuf>,

    /// The --series-file time column's date format, strftime syntax (e.g. '%d/%m/%Y %H:%M', or
    /// rfc3339), for files the recognised formats read wrong (day and month swapped); times
    /// without a zone are UTC.
    #[arg(long, help_heading = "Time series", value_name = "FMT", value_parser = parse_time_format)]
    pub time_format: Option<crate::series::source::dates::DateFormat>,

    /// The --series-file time column's unit when it holds numbers: s, ms, us or ns. Default: the
    /// header's suffix (_s, _ms, _us, _ns), else Unix time judged by magnitude (from 1e8 s, 1e11
    /// ms, 1e14 µs, 1e17 ns), else seconds.
    #[arg(long, help_heading = "Time series", value_name = "s|ms|us|ns", value_parser = crate::series::TimeUnit::parse)]
    pub time_unit: Option<crate::series::TimeUnit>,

    /// Live data for the time-series chart: mqtt://[user[:pass]@]host[:port]/topic/# (also
    /// mqtts://; options ?qos=1&v=5&client_id=ID&clean=0&ca=PATH), zmq+tcp://host:port[/prefix]
    /// (multipart: topic, payload; later frames such as a timestamp are ignored) or
    /// udp://addr:port. Every numeric field of a message is a series.
    #[arg(long, help_heading = "Time series", value_name = "URL", value_parser = parse_series_source, conflicts_with = "series_file")]
    pub series_source: Option<String>,

    /// Write the time-series chart's stored samples as CSV when the run ends (long format:
    /// series,time_s,value; times are absolute seconds, each written so it reads back exactly).
    #[arg(long, help_heading = "Time series", value_name = "PATH.csv")]
    pub export_series: Option<PathBuf>,

    /// --series-source payloads: auto, json, number, csv, msgpack or cbor.
    #[arg(long, help_heading = "Time series", value_name = "FORMAT", default_value = "auto", requires = "series_source", value_parser = crate::series::source::payload::PayloadFormat::parse)]
    pub payload: crate::series::source::payload::PayloadFormat,

    /// --series-source: the payload field holding each message's time (e.g. `ts` or
    /// `header/stamp`; epoch s/ms/µs/ns by magnitude, or an RFC 3339 date); default: arrival
    /// time.
    #[arg(
        long,
        help_heading = "Time series",
        value_name = "PATH",
        requires = "series_source"
    )]
    pub time_field: Option<String>,

    /// The zone of --series-file dates written without one, and of the time axis and readout:
    /// utc (default), local, or an offset such as +05:30.
    #[arg(long, help_heading = "Time series", value_name = "utc|local|±HH:MM", default_value = "utc", allow_hyphen_values = true, value_parser = crate::series::source::dates::Zone::parse)]
    pub time_zone: crate::series::source::dates::Zone,

    /// Long format: split the --series-file rows into one series per value of this column (e.g.
    /// a `symbol` column); the time column is then the first other column. Without it, a first
    /// column of a few repeated names followed by a time column is split by itself.
    #[arg(
        help_heading = "Time series",
        long,
        value_name = "COLUMN",
        requires = "series_file",
        conflicts_with = "series_source"
    )]
    pub series_key: Option<String>,

    /// Synthetic time series (when no --series-file): number of series, 1 to 1024.
    #[arg(long, help_heading = "Time series", default_value_t = crate::scene::timeseries::SYNTH_SERIES, value_name = "N", value_parser = parse_series_count)]
    pub series_count: usize,

    /// Synthetic time series: samples per second of all series together (split evenly), more
    /// than 0 and at most 1e8; `k` and `M` suffixes accepted (e.g. `10M`).
    #[arg(long, help_heading = "Time series", default_value_t = crate::scene::timeseries::SYNTH_TOTAL_RATE, value_name = "SAMPLES_PER_S", value_parser = parse_series_rate)]
    pub series_rate: f64,

    /// Synthetic time series: random walks, ticks (prices on a 0.01 grid moving in bursts) or
    /// sines (series i at 0.5·(i+1) Hz).
    #[arg(long, help_heading = "Time series", value_enum, default_value_t = crate::series::SynthKind::Walk)]
    pub series_kind: crate::series::SynthKind,

    /// Point-cloud scene: a LAS, LAZ, COPC (`.copc.laz`, read node by node through its
    /// hierarchy) or PLY file (ASCII or binary; its vertices); LAS, LAZ and PLY files are indexed
    /// into an octree on a background thread first. An http:// or https:// URL streams a COPC
    /// file with range requests (the server must honour Range).
    #[arg(long, help_heading = "Point cloud", value_name = "PATH")]
    pub pointcloud_file: Option<PathBuf>,

    /// Point-cloud scene without a file: `synthetic:N`, terrain with buildings and trees of N
    /// points (k, M and G suffixes accepted, up to 1e10), deterministic from --seed. Default
    /// synthetic:2M when no --pointcloud-file.
    #[arg(long, help_heading = "Point cloud", value_name = "synthetic:N", value_parser = parse_pointcloud)]
    pub pointcloud: Option<crate::scene::pointcloud::CloudSource>,

    /// Point-cloud scene: most points drawn a frame (default: 500000 on a CPU adapter such as
    /// lavapipe, 10000000 on a GPU). k, M and G suffixes accepted.
    #[arg(long, help_heading = "Point cloud", value_name = "N", value_parser = parse_count)]
    pub pointcloud_budget: Option<u64>,

    /// Point-cloud scene: the view it opens with, fitted to the cloud's bounds: top, front and
    /// side are orthographic, iso perspective.
    #[arg(long, help_heading = "Point cloud", value_enum, default_value_t = crate::pointcloud::camera::ViewPreset::Iso)]
    pub view: crate::pointcloud::camera::ViewPreset,

    /// Point-cloud scene: colour by rgb, intensity, elevation, classification or return
    /// (default: rgb where the cloud has colour, else elevation).
    #[arg(long, help_heading = "Point cloud", value_enum, value_name = "MODE")]
    pub pointcloud_color: Option<crate::pointcloud::raster::ColorMode>,

    /// Point-cloud scene: point radius in pixels, 0 to 3 (default 1).
    #[arg(long, help_heading = "Point cloud", value_name = "PX", value_parser = clap::value_parser!(u32).range(0..=3))]
    pub point_radius: Option<u32>,

    /// Point-cloud scene: eye-dome lighting strength, 0 (off) to 4 (default 1).
    #[arg(long, help_heading = "Point cloud", default_value_t = 1.0, value_name = "S", value_parser = parse_edl, allow_negative_numbers = true)]
    pub edl: f32,

    /// Point-cloud scene: where the octrees of LAS/LAZ/PLY files are cached (default
    /// $XDG_CACHE_HOME/vizdeck/pointcloud, else ~/.cache/vizdeck/pointcloud); a file whose size
    /// or modification time changed is indexed again.
    #[arg(long, help_heading = "Point cloud", value_name = "DIR")]
    pub pointcloud_cache: Option<PathBuf>,

    /// Point-cloud scene: read out the point at pixel X,Y of the scene image every frame, as if
    /// hovered (the report's `scenes.pointcloud.hover`: exact file coordinates, class, ...).
    #[arg(long, help_heading = "Point cloud", value_name = "X,Y", value_parser = parse_pixel)]
    pub pointcloud_probe: Option<(u32, u32)>,

    /// Record one row of frame-time statistics per frame into this CSV from the start.
    #[arg(
        long,
        help_heading = "Recording and statistics",
        value_name = "PATH.csv"
    )]
    pub record_stats: Option<PathBuf>,

    /// Record the scene panel (what F12 saves, as shown) to a video file from the first frame
    /// until the run ends: .mp4, .mkv, .mov (H.264) or .webm (VP9), 60 fps, through ffmpeg
    /// (needed on PATH). Headless: every frame is one video frame (its clock is 1/60 s a frame);
    /// in the window the video follows real time (frames repeated or left out against it).
    #[arg(
        long,
        help_heading = "Recording and statistics",
        value_name = "PATH.mp4"
    )]
    pub record_video: Option<PathBuf>,

    /// Start recording frame times this many seconds after launch (into `--record-stats`, or the
    /// next `vizdeck-stats-N.csv`); also the delay of the Record menu and F9.
    #[arg(long, help_heading = "Recording and statistics", default_value_t = 0.0, value_name = "SECONDS", value_parser = parse_seconds, allow_negative_numbers = true)]
    pub capture_delay: f64,

    /// Stop recording by itself after this many seconds (0 = until stopped); also the duration
    /// of the Record menu and F9.
    #[arg(long, help_heading = "Recording and statistics", default_value_t = 0.0, value_name = "SECONDS", value_parser = parse_seconds, allow_negative_numbers = true)]
    pub capture_duration: f64,

    /// Render offscreen with a simulated clock (each frame advances 1/60 s); no window.
    #[arg(long, help_heading = "Headless runs")]
    pub headless: bool,

    /// Headless: pace frames to the wall clock (60 a second, each still advancing 1/60 s), as a
    /// window with vsync would, instead of as fast as the GPU allows: for live sources and
    /// `--publish` runs that others watch.
    #[arg(long, help_heading = "Headless runs", requires = "headless")]
    pub realtime: bool,

    /// Frames to render, then exit (headless default: 300; window default: run until closed).
    #[arg(long, help_heading = "Headless runs", value_name = "N")]
    pub frames: Option<u64>,

    /// Window or offscreen size in pixels.
    #[arg(long, help_heading = "Window and GPU", default_value = "1280x720", value_name = "WxH", value_parser = parse_size)]
    pub size: (u32, u32),

    /// Save the last frame as PNG (headless only).
    #[arg(
        long,
        help_heading = "Recording and statistics",
        value_name = "PATH.png",
        requires = "headless"
    )]
    pub screenshot: Option<PathBuf>,

    /// Write the statistics summary and per-scene metrics as JSON when the run ends.
    #[arg(
        long,
        help_heading = "Recording and statistics",
        value_name = "PATH.json"
    )]
    pub report: Option<PathBuf>,

    /// Frames drawn before the report's warm-up RSS reading (`memory.rss_after_warmup_bytes`;
    /// growth after it is `memory.growth_after_warmup`).
    #[arg(long, help_heading = "Recording and statistics", value_name = "N", default_value_t = crate::stats::memory::DEFAULT_WARMUP_FRAMES)]
    pub memory_warmup_frames: u64,

    /// Graphics backend.
    #[arg(long, help_heading = "Window and GPU", value_enum, default_value_t = BackendChoice::Auto)]
    pub backend: BackendChoice,

    /// Present mode of the window: vsync (Fifo), no-vsync (Mailbox or Immediate, whichever the
    /// surface has), or an exact mode.
    #[arg(long, help_heading = "Window and GPU", value_enum, default_value_t = PresentChoice::Vsync)]
    pub present_mode: PresentChoice,

    /// Where the spectrogram's FFT runs: auto (the faster of the two on this adapter, measured
    /// when the analysis is built: the GPU on a hardware GPU, the CPU on lavapipe), gpu (WGSL
    /// compute, batched) or cpu (rustfft + vizdeck's real split, checked against realfft); all
    /// give the same image.
    #[arg(long, help_heading = "Spectrogram", value_enum, default_value_t = FftOn::Auto)]
    pub fft_on: FftOn,

    /// Headless: write the spectrogram's dB values as CSV at the end of the run (first column
    /// the centre time of each column in seconds, header row the bin frequencies in Hz).
    #[arg(long, help_heading = "Spectrogram", value_name = "PATH.csv")]
    pub export_spectrogram: Option<PathBuf>,

    /// Start with the stats overlay hidden (the default; kept so scripts that give
    /// it still run; F1 or View ▸ Stats overlay shows it).
    #[arg(long, help_heading = "Recording and statistics")]
    pub no_overlay: bool,

    /// Start with the stats overlay shown (it is hidden by default, so it covers no data; F1 or
    /// View ▸ Stats overlay toggles it).
    #[arg(
        long,
        help_heading = "Recording and statistics",
        conflicts_with = "no_overlay"
    )]
    pub overlay: bool,

    /// Seed of every random source (particles, synthetic series).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,

    /// How the scenes' per-frame buffers are uploaded: write-buffer (`queue.write_buffer`),
    /// staging-belt (wgpu's StagingBelt), map-ring (a ring of MAP_WRITE staging buffers recycled
    /// with map_async), mapped-at-creation (a new mapped staging buffer per write), host-import
    /// (host memory imported with VK_EXT_external_memory_host and read in place by the GPU's
    /// copy, the scenes' bytes first copied into it; the map ring filled by several threads
    /// where the device cannot import). Also in View ▸ Upload strategy. The lab's comparison
    /// paths threaded-map and device-staging are accepted too (`vizdeck-lab --upload all`).
    #[arg(long, help_heading = "Window and GPU", value_enum, default_value_t = crate::gpu::upload::Strategy::WriteBuffer)]
    pub upload_strategy: crate::gpu::upload::Strategy,

    /// How the scene image reaches the window: copy (copied into its rect of the window, the
    /// default; falls back to blit where the window's format is not the scene's), blit (drawn
    /// texel for pixel into its viewport) or egui-image (a textured quad through egui's shader,
    /// as vizdeck drew it before). The same pixels; on a software rasterizer the copy is a
    /// memcpy, the blit a pass of fill, the egui image several.
    #[arg(long, help_heading = "Window and GPU", value_enum, default_value_t = crate::deck::Composite::Copy)]
    pub composite: crate::deck::Composite,

    /// Settings file (window size and position, last scene, each scene's settings, recent
    /// files): read at start, written when a file is opened and at the end. Default for the
    /// window: `$XDG_CONFIG_HOME/vizdeck/settings.json` (else `~/.config/vizdeck/…`); headless
    /// runs use one only when given. Flags given on the command line win over saved settings.
    #[arg(long, value_name = "PATH.json", conflicts_with = "no_settings")]
    pub settings: Option<PathBuf>,

    /// Neither read nor write a settings file: everything from the flags and the defaults.
    #[arg(long)]
    pub no_settings: bool,

    /// Publish what the shown scene ingests, as data, through an MQTT broker, for vizdecks
    /// started with `--follow` on the same URL: mqtt://[user[:pass]@]host[:port]/base/topic
    /// (also mqtts://). Keyframes (retained) go to base/SCENE/key every 2 s, each frame's new
    /// data to base/SCENE/delta; the format is crates/protocols/src/publish.rs. Scenes published: the
    /// time series (samples), the spectrogram (dB columns), the particles (each step's
    /// parameters; the state in keyframes), the point cloud (its source and camera).
    #[arg(long, help_heading = "Sharing", value_name = "URL", value_parser = parse_share_url)]
    pub publish: Option<String>,

    /// Show what a vizdeck started with `--publish` on this URL sends: its scene, its data at
    /// its stream time, its view (the side panel detaches and re-attaches), with the lag.
    #[arg(long, help_heading = "Sharing", value_name = "URL", value_parser = parse_share_url, conflicts_with_all = ["publish", "series_source", "series_file"])]
    pub follow: Option<String>,

    /// Share GPU memory with a producer process through the Unix socket at PATH (issue 18), for
    /// the --scene chosen: the particle scene allocates its N particles (`--particles`) as
    /// exportable Vulkan memory, hands each producer that connects the fd and a JSON description
    /// (f32, shape [N, 8]: xyz position, age s, xyz velocity, lifetime s;
    /// crates/protocols/src/share.rs) and draws the newest frame the producer says is complete instead
    /// of simulating; the time-series scene shares a window of S series × N samples (f32, shape
    /// [S, N]: --share-series, --share-samples, --share-rate) and charts it instead of a series
    /// source. Vulkan only. An existing path that is not a socket is refused.
    #[arg(long, help_heading = "Sharing", value_name = "PATH", value_parser = parse_share_path, conflicts_with_all = ["follow", "publish"])]
    pub share: Option<PathBuf>,

    /// With --share and --scene timeseries: the series the producer writes (S, rows of its
    /// f32 [S, N] array), 1 to 1024.
    #[arg(long, help_heading = "Sharing", value_name = "S", default_value_t = crate::scene::timeseries::shared::DEFAULT_SERIES, value_parser = parse_share_series, requires = "share")]
    pub share_series: u32,

    /// With --share and --scene timeseries: samples per series (N, the window of newest
    /// samples, oldest first); `k`/`M` suffixes (e.g. 64k).
    #[arg(long, help_heading = "Sharing", value_name = "N", default_value_t = crate::scene::timeseries::shared::DEFAULT_SAMPLES, value_parser = parse_share_samples, requires = "share")]
    pub share_samples: u64,

    /// With --share and --scene timeseries: the samples' rate in Hz (the x axis in seconds);
    /// without it the x axis counts samples.
    #[arg(long, help_heading = "Sharing", value_name = "HZ", value_parser = parse_share_rate, requires = "share")]
    pub share_rate: Option<f64>,

    /// The command line as given (program name first), for [`Cli::apply_saved`].
    #[arg(skip)]
    pub argv: Vec<std::ffi::OsString>,

    /// Ids of the flags given on the command line (not defaulted), e.g. `fft_size`.
    #[arg(skip)]
    pub explicit: Vec<String>,
}

/// Subcommands.
#[derive(clap::Subcommand, Debug, Clone)]
pub enum Command {
    /// Print the frame-time summary of recorded captures (vizdeck CSVs or PresentMon-style CSVs,
    /// frame time from MsBetweenPresents) side by side. Exit status 1 with one line naming the
    /// file when one cannot be read.
    Stats {
        /// Capture files.
        #[arg(required = true, value_name = "FILE.csv")]
        files: Vec<PathBuf>,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Benchmark mode: run scenes headless (fixed seed and workload, simulated clock) and write
    /// one report per run (JSON + markdown), and print the overview table. (The upload and
    /// kernel tables are the lab's: `cargo run --release -p vizdeck-lab -- --help`.)
    Bench(Box<BenchArgs>),
}

/// `vizdeck bench` options.
#[derive(clap::Args, Debug, Clone)]
pub struct BenchArgs {
    /// Scenes to run (comma-separated ids); default all. `--scenes none` runs none.
    #[arg(long, value_delimiter = ',', value_name = "ID,..")]
    pub scenes: Vec<String>,
    /// Frames measured per scene.
    #[arg(long, default_value_t = 300, value_name = "N")]
    pub frames: u64,
    /// Frames run before measuring.
    #[arg(long, default_value_t = 30, value_name = "N")]
    pub warmup: u64,
    /// Output size in pixels.
    #[arg(long, default_value = "1280x720", value_name = "WxH", value_parser = parse_size)]
    pub size: (u32, u32),
    /// Seed of every random source.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Particle count of the particles scene.
    #[arg(long, default_value_t = crate::scene::particles::DEFAULT_COUNT, value_name = "N", value_parser = parse_particles)]
    pub particles: u32,
    /// Particle simulation rate of the particles scene (see `vizdeck --particle-rate`).
    #[arg(long, value_enum, default_value_t = crate::scene::particles::StepRate::Auto)]
    pub particle_rate: crate::scene::particles::StepRate,
    /// Folder for the reports and CSVs (created).
    #[arg(long, default_value = "bench-out", value_name = "DIR")]
    pub out: PathBuf,
    /// Also run each scene saving a PNG of every frame through the readback ring, and report the
    /// p99 frame time with and without.
    #[arg(long)]
    pub screenshots: bool,
    /// Keep the PNGs of `--screenshots` (default: deleted after counting).
    #[arg(long)]
    pub keep_screenshots: bool,
    /// Upload strategy of the scenes' ping-pong buffers during the scene runs.
    #[arg(long, value_enum, default_value_t = crate::gpu::upload::Strategy::WriteBuffer)]
    pub scene_upload: crate::gpu::upload::Strategy,
    /// How the scene image reaches the output during the scene runs (see `vizdeck --composite`).
    #[arg(long, value_enum, default_value_t = crate::deck::Composite::Copy)]
    pub composite: crate::deck::Composite,
    /// Moved to the lab (`vizdeck-lab --upload ...`); given here, bench says so and fails.
    #[arg(long, hide = true, num_args = 0.., allow_hyphen_values = true)]
    pub upload: Option<Vec<String>>,
    /// Moved to the lab (`vizdeck-lab --kernels ...`); given here, bench says so and fails.
    #[arg(long, hide = true, num_args = 0.., allow_hyphen_values = true)]
    pub kernels: Option<Vec<String>>,
    /// Graphics backend.
    #[arg(long, value_enum, default_value_t = BackendChoice::Auto)]
    pub backend: BackendChoice,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `vizdeck --help` is the flag reference: every flag of the app sits under its scene's or
    /// area's heading (docs/ links to them), bar the few that concern every scene.
    #[test]
    fn help_groups_every_flag_by_scene_or_area() {
        use clap::CommandFactory;
        let cmd = Cli::command();
        let general = [
            "scene",
            "seed",
            "settings",
            "no_settings",
            "help",
            "version",
        ];
        let mut headings: Vec<&str> = Vec::new();
        for arg in cmd.get_arguments() {
            let id = arg.get_id().as_str();
            match arg.get_help_heading() {
                Some(h) => {
                    if !headings.contains(&h) {
                        headings.push(h);
                    }
                }
                None => assert!(general.contains(&id), "--{id} has no help_heading"),
            }
        }
        assert_eq!(
            headings,
            [
                "Spectrogram",
                "Particles",
                "Time series",
                "Point cloud",
                "Recording and statistics",
                "Headless runs",
                "Window and GPU",
                "Sharing"
            ]
        );
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("1280x720"), Ok((1280, 720)));
        assert_eq!(parse_size("1x1"), Ok((1, 1)));
        assert!(parse_size("0x0").unwrap_err().contains("width"));
        assert!(parse_size("10x0").unwrap_err().contains("height"));
        assert!(parse_size("abc").is_err());
        assert!(parse_size("99999x10").is_err());
        // The pixel cap: 8192 × 8192 and 16384 × 4096 are in, one row or column more is out.
        assert_eq!(parse_size("8192x8192"), Ok((8192, 8192)));
        assert_eq!(parse_size("16384x4096"), Ok((16384, 4096)));
        for big in ["16384x16384", "8192x8193", "16384x4097"] {
            let e = parse_size(big).unwrap_err();
            assert!(e.contains("more than vizdeck draws"), "{big}: {e}");
        }
        // Through clap, the message names the flag.
        let e = match Cli::try_parse_from(["vizdeck", "--size", "16384x16384"]) {
            Ok(_) => panic!("16384x16384 accepted"),
            Err(e) => e.to_string(),
        };
        assert!(
            e.contains("--size") && e.contains("268435456 pixels"),
            "{e}"
        );
    }

    #[test]
    fn sizes_against_the_adapter() {
        let limits = wgpu::Limits {
            max_texture_dimension_2d: 8192,
            max_buffer_size: 256 << 20,
            ..wgpu::Limits::default()
        };
        assert_eq!(
            check_size_for_adapter("--size", (8192, 8192), &limits),
            Ok(())
        );
        let e = check_size_for_adapter("--size", (8193, 100), &limits).unwrap_err();
        assert!(
            e.starts_with("--size 8193x100:") && e.contains("8192"),
            "{e}"
        );
        // 4097 px rows are 16388 bytes, padded to 16640: 16131 rows fit in 256 MiB, 16132 do not.
        assert_eq!(
            check_size_for_adapter("--size", (4097, 16131), &limits_big_tex()),
            Ok(())
        );
        let e = check_size_for_adapter("--size", (4097, 16132), &limits_big_tex()).unwrap_err();
        assert!(
            e.contains("268436480 bytes") && e.contains("268435456"),
            "{e}"
        );
    }

    fn limits_big_tex() -> wgpu::Limits {
        wgpu::Limits {
            max_texture_dimension_2d: 16384,
            max_buffer_size: 256 << 20,
            ..wgpu::Limits::default()
        }
    }

    #[test]
    fn series_flags_that_do_not_apply_are_refused() {
        for args in [
            &[
                "--series-file",
                "a.csv",
                "--series-source",
                "udp://127.0.0.1:9",
            ][..],
            &["--time-field", "ts"],
            &["--payload", "json"],
            &["--series-key", "symbol"],
            &[
                "--series-source",
                "udp://127.0.0.1:9",
                "--series-key",
                "symbol",
            ],
        ] {
            let argv = std::iter::once("vizdeck").chain(args.iter().copied());
            assert!(Cli::try_parse_from(argv).is_err(), "{args:?}");
        }
        let ok = [
            "vizdeck",
            "--series-source",
            "udp://127.0.0.1:9",
            "--time-field",
            "ts",
        ];
        assert!(Cli::try_parse_from(ok).is_ok());
        assert!(
            Cli::try_parse_from(["vizdeck", "--series-file", "a.csv", "--series-key", "s"]).is_ok()
        );
    }

    #[test]
    fn negative_time_zone_offsets_parse() {
        use crate::series::source::dates::Zone;
        for (arg, want) in [("-08:00", -28_800), ("-08", -28_800), ("+05:30", 19_800)] {
            let cli = Cli::try_parse_from(["vizdeck", "--time-zone", arg]).unwrap();
            assert_eq!(cli.time_zone, Zone::Fixed(want), "{arg}");
        }
    }

    #[test]
    fn series_flags() {
        assert_eq!(parse_series_count("16"), Ok(16));
        assert!(
            parse_series_count("0")
                .unwrap_err()
                .contains("out of range")
        );
        assert!(parse_series_count("1025").unwrap_err().contains("1024"));
        assert!(parse_series_count("x").unwrap_err().contains("'x'"));
        assert_eq!(parse_series_rate("200k"), Ok(200_000.0));
        assert_eq!(parse_series_rate("10M"), Ok(10_000_000.0));
        assert_eq!(parse_series_rate("2.5e6"), Ok(2_500_000.0));
        for bad in ["0", "-3", "nan", "inf", "101M", "fast"] {
            assert!(parse_series_rate(bad).unwrap_err().contains(bad), "{bad}");
        }
        let cli = Cli::try_parse_from([
            "vizdeck",
            "--series-count",
            "8",
            "--series-rate",
            "10M",
            "--series-kind",
            "ticks",
        ])
        .unwrap();
        let cfg = cli.scene_config();
        assert_eq!(
            (cfg.series_count, cfg.series_rate, cfg.series_kind),
            (8, 1e7, crate::series::SynthKind::Ticks)
        );
        let err = Cli::try_parse_from(["vizdeck", "--series-kind", "square"]).unwrap_err();
        assert!(err.to_string().contains("--series-kind"));
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
