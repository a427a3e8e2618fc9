//! vizdeck's views: the [`Scene`] trait every view kind implements, the static [`SCENES`]
//! table the menu lists (adding a view kind is one line there), and one folder per view kind
//! that owns its state, GPU pipelines, shaders (`shaders/<view>/`, registered in
//! [`shaders`]), Rust/WGSL layouts and their mirror list ([`wgsl_mirrors`]), saved settings,
//! report and wire messages: [`spectrogram`], [`particles`], [`timeseries`], [`pointcloud`]
//! (with the rasterizer, the node pool and the visibility buffer's pieces). Beside them, what
//! the views share: the `--share` consumer side ([`interop`]), the stats overlay's corner
//! ([`overlay`]), one-pixel-column plot lines ([`column_line`]), the saved-settings reader
//! ([`saved`]), progress bars in a view ([`progress_bar`]) and the input wake-up ([`wake`]).
//! Below: the GPU core, the data crates and the protocols; above: the app (deck, UI, CLI).
//!
//! A view owns its long-lived GPU objects (pipelines, bind group layouts, persistent buffers)
//! and keeps per-frame data in ping-pong buffers. Each frame the deck calls, on the active view
//! only: `fixed_update` k times, `ingest`, `prepare` (uploads), `compute` (inside the frame's
//! one timed compute pass), `paint` (inside the view's timed render pass, into the scene
//! texture), then `ui` and `overlay` (egui).

pub use vizdeck_audio as audio;
pub use vizdeck_base::{clock, progress};
pub use vizdeck_gpu as gpu;
pub use vizdeck_series as series;

pub mod column_line;
pub mod interop;
pub mod overlay;
pub mod particles;
pub mod pointcloud;
pub mod progress_bar;
pub mod saved;
pub mod shaders;
pub mod spectrogram;
pub mod timeseries;
pub mod wake;

use crate::gpu::Gpu;
use crate::gpu::frame::GpuFrame;

/// Longest input time one frame may cover (a stall longer than this is not caught up).
pub const MAX_FRAME_ELAPSED_S: f64 = 1.0;

pub use crate::gpu::SCENE_FORMAT;

/// Per-frame facts handed to a scene.
#[derive(Clone, Copy, Debug)]
pub struct FrameCtx {
    /// Frame index since the app started; ping-pong slot = `frame % 2`.
    pub frame: u64,
    /// Fixed steps run this frame (already applied through `fixed_update`).
    pub steps: u32,
    /// Fixed timestep in seconds.
    pub dt: f32,
    /// Interpolation alpha in [0, 1).
    pub alpha: f32,
    /// Seconds this frame advanced the scene's clock (steps × dt); file and synthetic sources
    /// advance exactly this much.
    pub advanced_s: f64,
    /// Seconds of input time this frame covers: wall clock in the window, exactly 1/60 s in
    /// headless mode, capped at [`MAX_FRAME_ELAPSED_S`]. Clocked sources (audio files, the
    /// synthetic signals) advance by this, so they play at real-time rate even when the step cap
    /// drops simulation time.
    pub elapsed_s: f64,
    /// Scene texture size in pixels (width, height), each ≥ 1.
    pub size: (u32, u32),
}

impl FrameCtx {
    /// Ping-pong slot of this frame.
    pub fn slot(&self) -> usize {
        crate::gpu::upload::PingPong::slot(self.frame)
    }
}

/// Records `scene`'s own write of the scene texture `target` where it writes it
/// ([`Scene::writes_target`], then [`Scene::write_target`]), and returns how the frame's render
/// pass then loads the texture: kept, or cleared to `clear`.
pub fn write_or_clear<S: Scene + ?Sized>(
    scene: &S,
    encoder: &mut wgpu::CommandEncoder,
    target: &wgpu::Texture,
    clear: wgpu::Color,
) -> wgpu::LoadOp<wgpu::Color> {
    if scene.writes_target() {
        scene.write_target(encoder, target);
        wgpu::LoadOp::Load
    } else {
        wgpu::LoadOp::Clear(clear)
    }
}

/// Everything the command line says about scene inputs.
#[derive(Clone, Debug)]
pub struct SceneConfig {
    /// Audio input choice.
    pub audio: crate::audio::AudioSelection,
    /// `--audio-channel`: channel analysed (or the mix), for live input and files; open with
    /// `AudioOptions { channel, seed, .. }`.
    pub audio_channel: crate::audio::ChannelChoice,
    /// CSV file for the time-series scene (`None`: synthetic source).
    pub series_file: Option<std::path::PathBuf>,
    /// `--time-format`, `--time-unit`: how the CSV's time column reads where the file does not
    /// say it right.
    pub series_csv: crate::series::source::CsvOptions,
    /// `--series-source URL` (with `--payload`, `--time-field`): a live network source for the
    /// time-series scene, in place of the CSV or the synthetic source.
    pub series_net: Option<crate::series::source::net::NetOptions>,
    /// Synthetic time-series source: number of series (`--series-count`, 1..=1024).
    pub series_count: usize,
    /// Synthetic time-series source: samples per second of all series together
    /// (`--series-rate`), split evenly between the series.
    pub series_rate: f64,
    /// Synthetic time-series source: what it draws (`--series-kind`).
    pub series_kind: crate::series::SynthKind,
    /// Seed of every random source.
    pub seed: u64,
    /// Number of particles.
    pub particles: u32,
    /// Particle simulation mode (`--particle-mode`).
    pub particle_mode: particles::Mode,
    /// Particle simulation rate (`--particle-rate`).
    pub particle_rate: particles::StepRate,
    /// Spectrogram analysis settings (FFT size, hop, window, GPU or CPU FFT, CSV export).
    pub spectrogram: spectrogram::Settings,
    /// Point-cloud scene settings (source, budget, view, colours).
    pub pointcloud: pointcloud::Settings,
    /// True when driven by a simulated clock (headless): sources are paced by the frame clock,
    /// not by the wall clock.
    pub simulated_clock: bool,
    /// `--export-series`: where the time series writes its stored samples at the end.
    pub series_export: Option<std::path::PathBuf>,
    /// `--follow`: the scene shows what a publisher sends ([`Scene::follow`]) instead of
    /// ingesting its own input.
    pub following: bool,
    /// `--share PATH`: the particle scene draws what a producer process writes into GPU memory
    /// shared through the Unix socket at `PATH` (`scene/particles/shared.rs`), instead of
    /// simulating.
    pub share: Option<std::path::PathBuf>,
    /// The id of the scene `--share` is for (the `--scene` one); `None`: any scene that shares.
    pub share_scene: Option<&'static str>,
    /// `--share-series`, `--share-samples`, `--share-rate`: the window the time-series scene
    /// shares (`scene/timeseries/shared.rs`).
    pub share_window: timeseries::shared::WindowShape,
}

impl SceneConfig {
    /// The `--share` path when it is for the scene `id` (the scene chosen with `--scene`).
    pub fn share_for(&self, id: &str) -> Option<&std::path::Path> {
        self.share
            .as_deref()
            .filter(|_| self.share_scene.is_none_or(|s| s == id))
    }
}

/// Error creating a scene: one line naming the input and the problem.
#[derive(Debug, thiserror::Error)]
pub enum SceneError {
    /// Audio input problem.
    #[error(transparent)]
    Audio(#[from] crate::audio::AudioError),
    /// Series input problem.
    #[error(transparent)]
    Series(#[from] crate::series::SeriesError),
    /// Anything else.
    #[error("{0}")]
    Other(String),
}

/// A demo scene.
pub trait Scene {
    /// Stable id (`--scene` value): "spectrogram", "particles", "timeseries", "pointcloud".
    fn id(&self) -> &'static str;
    /// CPU-side simulation state for one fixed step of `dt` seconds; runs k times a frame.
    fn fixed_update(&mut self, _dt: f32) {}
    /// Pulls new input (audio, series) for this frame.
    fn ingest(&mut self, _frame: &FrameCtx) {}
    /// Whether [`ingest`](Self::ingest) runs after the frame's UI instead of before it: the
    /// freshest input reaches the GPU work (lower latency), and the scene's UI shows what was
    /// ingested up to the previous frame. Default false.
    fn ingest_after_ui(&self) -> bool {
        false
    }
    /// Whether the scene's image changes by itself: a running simulation, input that keeps
    /// arriving and must be drained. When it returns false (a frozen spectrogram of a file or the
    /// synthetic signal, a paused chart of a file read to its end) the window draws only on
    /// input (the deck's `Deck::next_redraw`). Default true.
    fn animating(&self) -> bool {
        true
    }
    /// Whether input may arrive at any time while the scene is not
    /// [`animating`](Scene::animating) (a live network chart, a file still being read): the
    /// window then looks for it at the display's rate through [`poll_input`](Scene::poll_input)
    /// and draws only when that says the image changed. Default false.
    fn polls_input(&self) -> bool {
        false
    }
    /// Between frames, while the window waits (see [`polls_input`](Scene::polls_input)): takes
    /// in the input that arrived since the last frame, as [`ingest`](Scene::ingest) does, and
    /// says whether it changes the image (a frame is due). Never blocks. Default false.
    fn poll_input(&mut self) -> bool {
        false
    }
    /// The part of `rect` (the scene's area in the window, points) the scene image fills: a
    /// chart keeps margins for its axis labels, which [`overlay`](Scene::overlay) then draws
    /// outside the image (its painter clips to `rect`). Default: all of `rect`.
    fn plot_rect(&self, _ctx: &egui::Context, rect: egui::Rect) -> egui::Rect {
        rect
    }
    /// Uploads this frame's data (into the back ping-pong slot) through `gpu`, the frame's GPU
    /// context: every write goes through its uploader (counted, in the chosen strategy), every
    /// command into its encoder; the deck submits once.
    fn prepare(&mut self, gpu: &mut GpuFrame<'_>, frame: &FrameCtx);
    /// Records compute work into the frame's compute pass (timed as `MsGPUCompute`).
    fn compute(&mut self, _pass: &mut wgpu::ComputePass<'_>, _frame: &FrameCtx) {}
    /// Whether this frame's image is written outside the render pass, by
    /// [`write_target`](Scene::write_target) after the compute pass (a compute resolve, as the
    /// point cloud's: a dispatch runs on every multiprocessor, a draw on a compute GPU such as
    /// the H200 on a few). Asked after [`compute`](Scene::compute); when true the deck calls
    /// `write_target`, and its render pass then loads the scene texture instead of clearing it.
    /// Default false.
    fn writes_target(&self) -> bool {
        false
    }
    /// Records, after the compute pass, the commands that write every pixel of the scene
    /// texture `target` ([`crate::gpu::Gpu::scene_format`], COPY_DST among its usages), for a
    /// scene whose [`writes_target`](Scene::writes_target) is true.
    fn write_target(&self, _encoder: &mut wgpu::CommandEncoder, _target: &wgpu::Texture) {}
    /// Draws into the scene texture (already cleared to the scene's background, or written by
    /// [`write_target`](Scene::write_target)).
    fn paint(&self, pass: &mut wgpu::RenderPass<'_>, frame: &FrameCtx);
    /// Records this frame's GPU → CPU copies (statistics, levels) into the deck's shared
    /// [`ReadbackRing`](crate::gpu::readback::ReadbackRing), in the frame's encoder after the
    /// scene's passes, for `me` (this scene's [`Consumer`](crate::gpu::readback::Consumer)),
    /// each with a payload of the scene's own type; a refused copy (ring busy) is simply lost.
    /// Copies that no longer apply (the scene reset what they fill) are dropped by the ring
    /// after `ring.invalidate(me)`. The results come back through
    /// [`readback_arrived`](Scene::readback_arrived) 1–3 frames later; nothing waits.
    fn record_readbacks(
        &mut self,
        _device: &wgpu::Device,
        _encoder: &mut wgpu::CommandEncoder,
        _ring: &mut crate::gpu::readback::ReadbackRing,
        _me: crate::gpu::readback::Consumer,
    ) {
    }
    /// A copy recorded by [`record_readbacks`](Scene::record_readbacks) arrived (oldest first),
    /// with its payload (`arrived.payload::<T>()`); `arrived.data` is valid during the call only.
    fn readback_arrived(&mut self, _arrived: &crate::gpu::readback::Arrived<'_>) {}
    /// Depth format of the scene's render pass, `None` for colour only. When `Some`, the deck
    /// attaches a depth texture of that format, the size of the scene texture, cleared to 1.0.
    fn depth_format(&self) -> Option<wgpu::TextureFormat> {
        None
    }
    /// Clear colour of the scene texture.
    fn background(&self) -> wgpu::Color {
        wgpu::Color {
            r: 0.02,
            g: 0.02,
            b: 0.03,
            a: 1.0,
        }
    }
    /// Side-panel controls and status.
    fn ui(&mut self, ui: &mut egui::Ui);
    /// Pointer and keyboard input over the scene image (hover, clicks, drags, wheel): `response`
    /// is the egui response of the image area `rect` (points; senses click and drag). Read the
    /// wheel and keys through `response.ctx.input(..)` while `response.hovered()`.
    fn interact(&mut self, _response: &egui::Response, _rect: egui::Rect) {}
    /// Axes, labels and notices drawn by egui over the scene image, which occupies `rect`
    /// ([`plot_rect`](Scene::plot_rect) of the scene's area; `painter` clips to the area).
    fn overlay(&self, _painter: &egui::Painter, _rect: egui::Rect) {}
    /// Per-scene metrics for `--report`.
    fn metrics(&self) -> serde_json::Value;
    /// The frame this scene drew was presented at `at` (after submit; headless: after the GPU
    /// finished). For latency measurements.
    fn presented(&mut self, _at: std::time::Instant) {}
    /// The run is ending: write exports (e.g. `--export-spectrogram`). May block. The deck has
    /// delivered every readback still in flight before this call.
    fn finish(&mut self, _gpu: &Gpu) -> Result<(), SceneError> {
        Ok(())
    }
    /// The GPU device was lost and `gpu` replaces it: re-create every GPU object (pipelines,
    /// buffers, textures, bind groups) on it from the CPU-side state, which survives (inputs
    /// keep flowing, histories, stores, views and settings stay). State that lived only on the
    /// GPU restarts from what the CPU knows (say so in [`problem`](Scene::problem)). Readbacks
    /// in flight on the old device never arrive.
    ///
    /// # Errors
    ///
    /// A [`SceneError`] when the objects cannot be made on the new device (the scene is then
    /// shown failed, the others keep running).
    fn recreate_gpu(&mut self, gpu: &Gpu) -> Result<(), SceneError>;
    /// The settings a user changes in the scene's side panel, kept between runs
    /// (the app's settings file): a JSON object whose keys are, where a flag sets the same thing, the
    /// flag's clap id (`fft_size` for `--fft-size`), so that a flag given on the command line
    /// wins over the saved value. `Null`: nothing to keep.
    fn saved_settings(&self) -> serde_json::Value {
        serde_json::Value::Null
    }
    /// Applies settings an earlier run saved ([`saved_settings`](Scene::saved_settings)'s
    /// object), from the next frame on. Fields missing are left as they are; fields of the wrong
    /// type or out of range are skipped, each with a note in the returned list
    /// ([`crate::saved::Fields`]).
    fn restore_settings(&mut self, _saved: &serde_json::Value) -> Vec<String> {
        Vec::new()
    }
    /// A problem to show (e.g. the audio device disappeared), if any.
    fn problem(&self) -> Option<String> {
        None
    }
    /// `--publish`: what this frame ingested, as one message body — a keyframe when `keyframe`
    /// (everything a follower needs to start from: [`vizdeck_protocols::publish`]), else a delta (what
    /// changed since the last body returned). `None`: nothing to send (the default: the scene
    /// is not published).
    fn publish(&mut self, _keyframe: bool) -> Option<vizdeck_protocols::publish::Body> {
        None
    }
    /// `--follow`: applies one of publisher `publisher`'s message bodies, in its order (a
    /// keyframe first; a keyframe of another publisher than the last replaces what the scene
    /// holds). `attached`: the follower shows the publisher's view, so the view state
    /// a body carries is applied too. Only called on a scene created with
    /// [`SceneConfig::following`].
    fn follow(
        &mut self,
        _publisher: u64,
        _body: vizdeck_protocols::publish::Body,
        _attached: bool,
    ) {
    }
}

/// Runs `scene.prepare` for the frame `ctx` outside the deck (tests, benches, tools): its uploads
/// go through an uploader of `strategy` and are submitted at once, with whatever the scene
/// recorded into the encoder. Returns what the uploader counted.
pub fn prepare_standalone(
    gpu: &Gpu,
    scene: &mut dyn Scene,
    ctx: &FrameCtx,
    strategy: crate::gpu::upload::Strategy,
) -> crate::gpu::upload::UploadCounters {
    let mut f = crate::gpu::frame::OwnedFrame::new(gpu, strategy);
    f.set_index(ctx.frame);
    scene.prepare(&mut f.frame(), ctx);
    let counters = f.counters();
    f.submit();
    counters
}

/// Creates a scene.
pub(crate) type SceneCtor = fn(&Gpu, &SceneConfig) -> Result<Box<dyn Scene>, SceneError>;

/// One entry of the scene table.
pub struct SceneEntry {
    /// Stable id, the `--scene` value.
    pub id: &'static str,
    /// Menu title.
    pub title: &'static str,
    /// Keyboard shortcut digit.
    pub key: char,
    /// Constructor.
    pub create: SceneCtor,
    /// Work the scene kind does once the GPU is ready, before its first scene is created (it
    /// may wait on the GPU, which nothing in a frame's `prepare` does): the deck's `Deck::new`
    /// runs the starting scene's before the first frame, the deck another kind's right before
    /// creating it. Runs again at each creation: it keeps what it did and skips it then.
    pub startup: fn(&Gpu, &SceneConfig),
    /// The view's shaders (its `shaders.rs`; the registry is [`shaders::all`]).
    pub shaders: &'static [shaders::ShaderSource],
    /// The view's Rust types mirrored by WGSL structs (the list is [`wgsl_mirrors`]).
    pub mirrors: fn() -> Vec<crate::gpu::mirror::Mirror>,
}

/// A scene kind's [`SceneEntry::startup`] with nothing to do.
fn no_startup(_gpu: &Gpu, _cfg: &SceneConfig) {}

/// Every scene, in menu order.
pub static SCENES: &[SceneEntry] = &[
    SceneEntry {
        id: "spectrogram",
        title: "Spectrogram",
        key: '1',
        create: spectrogram::Spectrogram::create,
        startup: spectrogram::Spectrogram::startup,
        shaders: spectrogram::shaders::ALL,
        mirrors: spectrogram::wgsl_mirrors,
    },
    SceneEntry {
        id: "particles",
        title: "Particles",
        key: '2',
        create: particles::Particles::create,
        startup: no_startup,
        shaders: particles::shaders::ALL,
        mirrors: particles::wgsl_mirrors,
    },
    SceneEntry {
        id: "timeseries",
        title: "Time series",
        key: '3',
        create: timeseries::TimeSeries::create,
        startup: no_startup,
        shaders: timeseries::shaders::ALL,
        mirrors: timeseries::wgsl_mirrors,
    },
    SceneEntry {
        id: "pointcloud",
        title: "Point cloud",
        key: '4',
        create: pointcloud::PointCloud::create,
        startup: no_startup,
        shaders: pointcloud::shaders::ALL,
        mirrors: pointcloud::wgsl_mirrors,
    },
];

/// Every Rust type mirrored by a WGSL struct ([`crate::gpu::mirror`]): each view's own, and the
/// GPU core's; `tests/app/shader_layout.rs` checks each against its shader.
pub fn wgsl_mirrors() -> Vec<crate::gpu::mirror::Mirror> {
    SCENES
        .iter()
        .flat_map(|e| (e.mirrors)())
        .chain(crate::gpu::egui_painter::wgsl_mirrors())
        .collect()
}

/// Index of a scene id in [`SCENES`].
pub fn index_of(id: &str) -> Option<usize> {
    SCENES.iter().position(|s| s.id == id)
}
