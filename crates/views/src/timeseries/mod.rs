//! Time series: a streaming chart. A producer thread (synthetic signals, a CSV file, standard
//! input) feeds the chunked store; each frame the visible range of every shown series is
//! decimated per pixel column (M4: min, max, first, last) on the GPU from a min/max pyramid kept
//! there ([`gpu`]), and drawn exactly from those columns. Series with out-of-order samples fall
//! back to the CPU M4 reference ([`crate::series::decimate`]).
//!
//! M4 per pixel column is exact for a 1-pixel line chart: Jugel et al., "M4: A
//! Visualization-Oriented Time Series Data Aggregation", VLDB 2014.
//!
//! Interaction over the chart: wheel zooms the time axis around the pointer, drag pans (and
//! pauses following the newest data), right-drag (or shift-drag) draws a box to zoom into time and
//! value, double-click returns to following the newest data with an automatic value range, and the
//! crosshair shows the exact time and value of the nearest sample of each series.
//!
//! Samples a 1-pixel line would hide (a lone sample between gaps, every sample of a series
//! sparser than the view's pixels) get a dot ([`markers`]). What the chart changed in the data
//! is said on it and in the report ([`TimeSeries::notices`]): values clamped to the f32 range,
//! rows out of time order (drawn in time order).
//!
//! The scene is split by concern; this file is its outline: the [`TimeSeries`] struct, its
//! construction, the source changes and the [`Scene`] hooks, each delegating to the file that
//! does the work:
//! - `input.rs`: what the source delivered taken in, and whether it changes the image
//!   ([`redraw`]);
//! - `own.rs`: vizdeck's own signals (the frame times, the audio input's level);
//! - `view.rs`: the view's time and value window, the chart origin, *fit all*;
//! - `draw.rs`: the frame drawn from the store: the value range, the series' GPU mirrors and
//!   views (the GPU decimation and drawing live in [`gpu`]), the CPU fallback, the dots
//!   ([`markers`]);
//! - `readout.rs`: how times are written (zone, date format) on the axis ([`axis`]) and in the
//!   crosshair;
//! - `report.rs`: the notices and the metrics;
//! - `ui.rs` the side panel, `pointer.rs` the interaction over the chart, `overlay.rs` the axis
//!   labels, dots, zoom box and crosshair drawn over it, `settings.rs` the windows kept between
//!   runs;
//! - [`latency`]: the publish → present latency of network sources; `share.rs` `--publish` /
//!   `--follow`; `export.rs` `--export-series` (the benchmark table is the lab's:
//!   `vizdeck-lab --kernels timeseries`).
//!
//! Under `--share PATH` the chart draws a producer's window of S series instead of a source
//! ([`shared`]): the values are written into the mirrors on the GPU and never reach the store.

pub mod axis;
mod draw;
mod export;
pub mod gpu;
mod input;
pub mod latency;
pub mod markers;
mod overlay;
mod own;
mod pointer;
mod readout;
pub mod redraw;
mod report;
mod settings;
pub mod shaders;
mod share;
pub mod shared;
mod ui;
mod view;

pub use draw::{MARKER_BUDGET, Marker};
pub use own::{
    AUDIO_LEVEL_BLOCK_S, AUDIO_LEVEL_FLOOR_DB, OWN_AUDIO_SERIES, OWN_FRAME_SERIES, block_level_db,
};
pub use readout::readout_pattern;
pub use view::{View, fitted_range};

use super::{FrameCtx, Scene, SceneConfig, SceneError};
use crate::audio::{AudioOptions, AudioSelection};
use crate::gpu::Gpu;
use crate::gpu::frame::GpuFrame;
use crate::series::decimate::Column;
use crate::series::source::dates::Zone;
use crate::series::source::payload::PayloadFormat;
use crate::series::source::{Pacing, SeriesSelection, SeriesSource};
use crate::series::store::Store;
use gpu::{Mirrors, Pipelines};
use readout::date_format_of;

/// Synthetic default: series count (`--series-count`).
pub const SYNTH_SERIES: usize = 4;
/// Synthetic default: samples per second of all series together (`--series-rate`; 4 × 50,000).
pub const SYNTH_TOTAL_RATE: f64 = 200_000.0;
/// Largest `--series-count`.
pub const SYNTH_MAX_SERIES: usize = 1024;
/// Largest `--series-rate`, samples/s in all (the generator allows 1e8 per series).
pub const SYNTH_MAX_TOTAL_RATE: f64 = 1.0e8;
/// Width of the following window of a source shown for the first time, seconds.
pub const DEFAULT_WINDOW_S: f64 = 10.0;
/// Most live sources whose following window is kept between runs
/// ([`TimeSeries::saved_settings`](crate::Scene::saved_settings)).
pub(crate) const WINDOWS_KEPT: usize = 32;
/// Samples kept per series.
const STORE_CAP: usize = 1 << 24;
/// Line colours of the series, cycled.
pub(crate) const PALETTE: &[[u8; 3]] = &[
    [90, 170, 255],
    [255, 140, 60],
    [120, 220, 120],
    [230, 90, 200],
    [250, 220, 80],
    [120, 230, 230],
];

/// Packed RGBA8 colour of series `i` (R in the low byte).
pub fn series_color(i: usize) -> u32 {
    let [r, g, b] = PALETTE[i % PALETTE.len()];
    u32::from_le_bytes([r, g, b, 255])
}

/// The time-series scene.
pub struct TimeSeries {
    source: SeriesSource,
    /// What `source` was opened from, and how it is paced (`None`: built around a source
    /// opened elsewhere); the side panel reopens it with other options.
    selection: Option<(SeriesSelection, Pacing)>,
    /// The side panel's forms and the last reopen's error.
    forms: ui::Forms,
    /// What is recorded when a frame is presented: the latency of network sources, the time of
    /// the last present.
    presents: Presents,
    /// How times are written on the axis and in the readout.
    time_format: readout::TimeFormat,
    store: Store,
    scene_time: f64,
    /// Width of the window while following, seconds.
    pub window_s: f64,
    /// `true`: the window follows the newest sample; `false`: paused scroll-back.
    pub follow: bool,
    /// Time range while paused (chart-relative seconds).
    paused_range: (f64, f64),
    /// Whether the view was fitted to the whole file once its source delivered everything.
    fitted_whole: bool,
    /// Fixed value range (`None`: automatic over the visible finite values).
    pub fixed_y: Option<(f64, f64)>,
    /// The following window chosen for each live source ([`TimeSeries::live_key`]: a network
    /// URL, `synthetic`), seconds, kept between runs; a file is always shown fitted.
    windows: std::collections::BTreeMap<String, f64>,
    visible: Vec<bool>,
    /// Whether the input taken in since the last frame changes the image.
    arrivals: input::Arrivals,
    /// The pipelines, the GPU copies of the series and the series drawn from the CPU.
    gpu: draw::GpuParts,
    /// What the last frame drew: its view, size, dots and notes.
    drawn: draw::Drawn,
    /// The pointer over the chart: hover and the zoom box.
    pointer: pointer::Pointer,
    /// Also chart vizdeck's own frame times: each presented frame adds the interval since the
    /// previous one, in ms, to the series [`OWN_FRAME_SERIES`] at the scene clock's time.
    /// Synthetic sources only (their times are the same clock); ignored for files.
    pub own_signals: bool,
    /// Also chart the audio input's level (the `--audio` selection, opened by this scene when
    /// switched on): one point per [`AUDIO_LEVEL_BLOCK_S`] block, [`block_level_db`], in the
    /// series [`OWN_AUDIO_SERIES`] at the time of the block's first sample on the scene clock.
    /// Synthetic series sources only, like [`own_signals`](Self::own_signals).
    pub own_audio: bool,
    /// The audio input of [`own_audio`](Self::own_audio).
    audio: own::OwnAudio,
    /// `--publish` / `--follow` state ([`share`]).
    share: share::Share,
    /// `--export-series`: where the stored samples are written when the run ends.
    export: Option<std::path::PathBuf>,
    /// `--share PATH`: the producer's window drawn instead of the source ([`shared`]).
    shared: Option<shared::SharedSeries>,
}

/// What [`Scene::presented`] records.
#[derive(Default)]
struct Presents {
    /// Network sources with a wall-clock time field: publish → present latency (payload time
    /// to the present of the first frame that drew the message), with what was clamped.
    latency: Option<latency::Latency>,
    /// Payload times of the messages ingested for the frame being drawn.
    unpresented: Vec<i64>,
    /// When the last frame was presented.
    last: Option<std::time::Instant>,
}

impl TimeSeries {
    /// Table constructor: opens the CSV (errors name the file) or the synthetic source.
    pub fn create(gpu: &Gpu, cfg: &SceneConfig) -> Result<Box<dyn Scene>, SceneError> {
        if let Some(path) = cfg.share_for("timeseries") {
            let target = shared::ShareTarget {
                path: path.to_path_buf(),
                shape: cfg.share_window,
            };
            let scene = TimeSeries::shared(gpu, target, cfg.seed).map_err(SceneError::Other)?;
            return Ok(Box::new(scene));
        }
        if cfg.following {
            // A follower shows the publisher's samples: its own source is a synthetic one that
            // is never advanced (no thread, no samples).
            let sel = SeriesSelection::Synthetic {
                series: 1,
                rate_hz: 1.0,
                seed: cfg.seed,
                kind: cfg.series_kind,
            };
            let mut scene = TimeSeries::new(gpu, SeriesSource::open(&sel, Pacing::Driven)?);
            scene.share.following = true;
            scene.export = cfg.series_export.clone();
            return Ok(Box::new(scene));
        }
        let sel = match (&cfg.series_net, &cfg.series_file) {
            (Some(net), _) => SeriesSelection::Net(net.clone()),
            (None, Some(p)) if crate::series::source::ColumnarFormat::of_path(p).is_some() => {
                SeriesSelection::Columnar(p.clone())
            }
            (None, Some(p)) if cfg.series_csv == crate::series::source::CsvOptions::default() => {
                SeriesSelection::Csv(p.clone())
            }
            (None, Some(p)) => SeriesSelection::CsvWith(p.clone(), cfg.series_csv.clone()),
            (None, None) => SeriesSelection::Synthetic {
                series: cfg.series_count,
                rate_hz: cfg.series_rate / cfg.series_count.max(1) as f64,
                seed: cfg.seed,
                kind: cfg.series_kind,
            },
        };
        let pacing = if cfg.simulated_clock {
            Pacing::Driven
        } else {
            Pacing::WallClock
        };
        let source = SeriesSource::open(&sel, pacing)?;
        let mut scene = TimeSeries::new(gpu, source);
        scene.selection = Some((sel, pacing));
        scene.export = cfg.series_export.clone();
        scene.time_format.zone = cfg.series_csv.time_zone;
        scene.set_audio_input(
            cfg.audio.clone(),
            AudioOptions {
                channel: cfg.audio_channel,
                seed: cfg.seed,
                sample_format: None,
            },
        );
        Ok(Box::new(scene))
    }

    /// Builds the scene around an opened source.
    pub fn new(gpu: &Gpu, source: SeriesSource) -> TimeSeries {
        let date_format = date_format_of(&source);
        TimeSeries {
            source,
            selection: None,
            forms: ui::Forms {
                connect: (String::new(), PayloadFormat::Auto, String::new()),
                file_path: String::new(),
                open_error: None,
            },
            presents: Presents::default(),
            time_format: readout::TimeFormat {
                zone: Zone::Utc,
                date_format,
            },
            store: Store::new(STORE_CAP),
            scene_time: 0.0,
            window_s: DEFAULT_WINDOW_S,
            follow: true,
            paused_range: (0.0, DEFAULT_WINDOW_S),
            fitted_whole: false,
            fixed_y: None,
            windows: std::collections::BTreeMap::new(),
            visible: Vec::new(),
            arrivals: input::Arrivals::default(),
            gpu: draw::GpuParts {
                pipes: Pipelines::for_gpu(gpu),
                mirrors: Mirrors::new(),
                host: Vec::new(),
                columns: Vec::new(),
            },
            drawn: draw::Drawn {
                markers: Vec::new(),
                marker_scratch: Vec::new(),
                points_in_view: 0,
                view: None,
                size: (1, 1),
                gpu_notes: Vec::new(),
            },
            pointer: pointer::Pointer::default(),
            own_signals: false,
            own_audio: false,
            audio: own::OwnAudio {
                input: (AudioSelection::Default, AudioOptions::default()),
                level: None,
                note: None,
            },
            share: share::Share::default(),
            export: None,
            shared: None,
        }
    }

    /// The scene drawing a producer's window (`--share`, [`shared`]): listens on `target.path`
    /// for producers of `target.shape`; no series source (the store stays empty), the view
    /// following the whole window.
    ///
    /// # Errors
    ///
    /// One line: the shape does not fit the device ([`shared::WindowShape::check`]), or sharing
    /// cannot start ([`SharedFrames::new`](crate::interop::frames::SharedFrames::new)).
    pub fn shared(gpu: &Gpu, target: shared::ShareTarget, seed: u64) -> Result<TimeSeries, String> {
        // A source that is never advanced (no thread, no samples), as a follower's.
        let sel = SeriesSelection::Synthetic {
            series: 1,
            rate_hz: 1.0,
            seed,
            kind: crate::series::SynthKind::Walk,
        };
        let source = SeriesSource::open(&sel, Pacing::Driven).map_err(|e| e.to_string())?;
        let mut scene = TimeSeries::new(gpu, source);
        let input = shared::SharedSeries::new(gpu, &scene.gpu.pipes, &target.path, target.shape)?;
        scene.visible = vec![true; target.shape.series as usize];
        scene.shared = Some(input);
        Ok(scene)
    }

    /// Keeps the M4 columns of the frame's views on the GPU for
    /// [`read_columns`](TimeSeries::read_columns) (tests and tools).
    pub fn set_keep_columns(&mut self, keep: bool) {
        self.gpu.mirrors.set_keep_columns(keep);
    }

    /// The M4 columns series `i` was drawn from by the last frame run (blocking; tests and tools,
    /// with [`set_keep_columns`](TimeSeries::set_keep_columns) on).
    ///
    /// # Errors
    ///
    /// The series was not drawn from the GPU, columns are not kept, or the read failed.
    pub fn read_columns(&self, gpu: &Gpu, i: usize) -> Result<Vec<Column>, String> {
        self.gpu.mirrors.read_columns(gpu, i)
    }

    /// Bytes of samples the last frame staged from the host into the mirrors (none for a
    /// `--share` window).
    pub fn staged_bytes(&self) -> u64 {
        self.gpu.mirrors.uploaded_bytes
    }

    /// Replaces the source with `sel` (same pacing), the chart starting empty and following;
    /// on error the current source keeps streaming and the message is shown in the side panel
    /// and returned.
    ///
    /// # Errors
    ///
    /// The one-line message of [`SeriesSource::open`].
    pub fn reopen(&mut self, sel: SeriesSelection) -> Result<(), String> {
        let pacing = self.selection.as_ref().map_or(Pacing::WallClock, |s| s.1);
        match SeriesSource::open(&sel, pacing) {
            Ok(source) => {
                // The window of the source shown so far is kept for it; the new one opens at
                // its own (a live source shown before) or the default, a file fitted once read.
                self.remember_window();
                self.time_format.date_format = date_format_of(&source);
                self.source = source;
                self.selection = Some((sel, pacing));
                self.window_s = self.saved_window().unwrap_or(DEFAULT_WINDOW_S);
                self.paused_range = (0.0, self.window_s);
                self.store.clear();
                self.share.generation += 1;
                self.visible.clear();
                self.presents.latency = None;
                self.presents.unpresented.clear();
                self.follow = true;
                self.fitted_whole = false;
                self.fixed_y = None;
                self.forms.open_error = None;
                Ok(())
            }
            Err(e) => {
                self.forms.open_error = Some(e.to_string());
                Err(e.to_string())
            }
        }
    }

    /// The source (tests and reports).
    pub fn source(&self) -> &SeriesSource {
        &self.source
    }

    /// The store (tests and reports).
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The view drawn by the last frame.
    pub fn view(&self) -> Option<View> {
        self.drawn.view
    }

    /// Shows or hides series `i` (the side panel's toggle); out of range: nothing.
    pub fn set_visible(&mut self, i: usize, shown: bool) {
        if let Some(v) = self.visible.get_mut(i) {
            *v = shown;
        }
    }

    /// The samples the last frame marks with a dot (isolated samples, and every sample of a
    /// series with fewer samples in view than pixels across; see [`markers`]).
    pub fn markers(&self) -> &[Marker] {
        &self.drawn.markers
    }
}

impl Scene for TimeSeries {
    fn id(&self) -> &'static str {
        "timeseries"
    }

    fn saved_settings(&self) -> serde_json::Value {
        self.settings_json()
    }

    fn restore_settings(&mut self, saved: &serde_json::Value) -> Vec<String> {
        self.restore_json(saved)
    }

    /// The chart moves by itself while it follows the synthetic signals (their clock) or charts
    /// its own frame times or the audio level, and draws a `--share` window or a publisher's
    /// data continuously. Otherwise (a network source, a file, a paused synthetic stream) it
    /// stands still and is drawn when its input changes what it shows
    /// ([`poll_input`](Scene::poll_input)).
    fn animating(&self) -> bool {
        self.arrivals.redraw_due
            || self.shared.is_some()
            || self.share.following
            || (self.source.is_clocked() && (self.follow || self.own_signals || self.own_audio))
    }

    /// A source that may still deliver: a network source, a file being read, the synthetic
    /// signals.
    fn polls_input(&self) -> bool {
        self.shared.is_none() && !self.share.following && !self.source.is_finished()
    }

    fn poll_input(&mut self) -> bool {
        if self.shared.is_some() || self.share.following {
            return false;
        }
        self.take_input();
        self.arrivals.redraw_due
    }

    fn ingest(&mut self, frame: &FrameCtx) {
        if self.share.following || self.shared.is_some() {
            return;
        }
        self.scene_time += frame.elapsed_s;
        self.source.advance_to(self.scene_time);
        self.take_input();
    }

    fn presented(&mut self, at: std::time::Instant) {
        if !self.presents.unpresented.is_empty() {
            // The present's wall-clock time: now, less how long ago it was.
            let now_ns = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as i64);
            let present_ns = now_ns.saturating_sub(at.elapsed().as_nanos() as i64);
            if self.presents.latency.is_none() {
                self.presents.latency = latency::Latency::new();
            }
            if let Some(latency) = &mut self.presents.latency {
                for &t in &self.presents.unpresented {
                    latency.record(present_ns, t);
                }
            }
            self.presents.unpresented.clear();
        }
        if let Some(prev) = self.presents.last
            && self.own_signals
            && self.source.is_clocked()
        {
            let ms = at.saturating_duration_since(prev).as_secs_f64() * 1e3;
            let i = self.store.ensure(OWN_FRAME_SERIES);
            self.store.push(i, self.scene_time, ms as f32);
        }
        self.presents.last = Some(at);
    }

    fn prepare(&mut self, gpu: &mut GpuFrame<'_>, frame: &FrameCtx) {
        if self.shared.is_some() {
            self.prepare_shared(gpu, frame);
        } else {
            self.prepare_store(gpu, frame);
        }
    }

    fn compute(&mut self, pass: &mut wgpu::ComputePass<'_>, _frame: &FrameCtx) {
        // The new samples of every series into place, the pyramid nodes they complete, and the
        // M4 pass of every series drawn from its mirror, batched; recorded inside the frame's
        // timed compute pass, and done once recorded (the deck submits this frame). A shared
        // window is written into its mirrors first.
        if let Some(input) = &mut self.shared {
            input.encode(pass, &self.gpu.mirrors);
        }
        self.gpu.mirrors.encode(&self.gpu.pipes, pass);
        self.gpu.mirrors.builds_submitted();
    }

    fn recreate_gpu(&mut self, gpu: &Gpu) -> Result<(), SceneError> {
        // The store, the view and the sources live on the CPU; the mirrors are rebuilt from the
        // store by the next `prepare` (every stored sample uploaded again).
        self.gpu.pipes = Pipelines::for_gpu(gpu);
        self.gpu.mirrors = Mirrors::new();
        self.gpu.host.clear();
        if let Some(old) = self.shared.take() {
            // The shared memory went with the device: the old producer's socket is closed, and
            // a new buffer is offered on the same path.
            let (path, shape) = (old.path().to_path_buf(), old.shape());
            drop(old);
            match shared::SharedSeries::new(gpu, &self.gpu.pipes, &path, shape) {
                Ok(mut input) => {
                    input.mark_restarted();
                    self.shared = Some(input);
                }
                Err(e) => {
                    return Err(SceneError::Other(format!(
                        "the GPU device was lost; sharing cannot start again: {e}"
                    )));
                }
            }
        }
        Ok(())
    }

    fn record_readbacks(
        &mut self,
        device: &wgpu::Device,
        encoder: &mut wgpu::CommandEncoder,
        ring: &mut crate::gpu::readback::ReadbackRing,
        me: crate::gpu::readback::Consumer,
    ) {
        if let Some(input) = &mut self.shared {
            input.record_readbacks(device, encoder, ring, me);
        }
    }

    fn readback_arrived(&mut self, arrived: &crate::gpu::readback::Arrived<'_>) {
        if let Some(input) = &mut self.shared {
            input.readback_arrived(arrived);
        }
    }

    /// Series are drawn in one batch; the depth test keeps their order ([`gpu::depth_of`]).
    fn depth_format(&self) -> Option<wgpu::TextureFormat> {
        Some(gpu::DEPTH_FORMAT)
    }

    fn paint(&self, pass: &mut wgpu::RenderPass<'_>, _frame: &FrameCtx) {
        self.gpu.mirrors.paint(&self.gpu.pipes, pass);
        for h in &self.gpu.host {
            h.paint(&self.gpu.pipes, pass);
        }
    }
    fn ui(&mut self, ui: &mut egui::Ui) {
        self.side_panel(ui);
    }

    fn interact(&mut self, response: &egui::Response, rect: egui::Rect) {
        self.handle_pointer(response, rect);
    }

    fn overlay(&self, painter: &egui::Painter, rect: egui::Rect) {
        self.draw_overlay(painter, rect);
    }

    /// The plot inside margins for the axis labels ([`TimeSeries::plot_in`]).
    fn plot_rect(&self, ctx: &egui::Context, rect: egui::Rect) -> egui::Rect {
        self.plot_in(ctx, rect)
    }

    fn metrics(&self) -> serde_json::Value {
        self.metrics_json()
    }

    /// The source's error, else the [`notices`](TimeSeries::notices) (one line each).
    /// A source that stopped on an error before any sample arrived (e.g. a broker that refused
    /// the password), or a network source from which no sample arrived (never connected, every
    /// message unreadable), ends the run with the reason: nothing could be shown.
    fn finish(&mut self, _gpu: &Gpu) -> Result<(), SceneError> {
        if let Some(path) = &self.export {
            let rows = self.export_csv(path)?;
            log::info!("--export-series {}: {rows} samples", path.display());
        }
        if self.store.points_ingested() > 0 {
            return Ok(());
        }
        if let Some(e) = self.source.error() {
            return Err(SceneError::Other(e));
        }
        match self.source.link() {
            Some(l) => {
                let why = match (l.messages, l.errors.first()) {
                    (0, _) => format!("no message ({})", l.state),
                    (n, Some(e)) => format!("{n} message(s), none readable; first: {e}"),
                    (n, None) => format!("{n} message(s), no sample"),
                };
                Err(SceneError::Other(format!(
                    "{}: nothing to show during the run: {why}",
                    self.source.label()
                )))
            }
            None => Ok(()),
        }
    }

    fn publish(&mut self, keyframe: bool) -> Option<vizdeck_protocols::publish::Body> {
        self.publish_body(keyframe)
    }

    fn follow(&mut self, publisher: u64, body: vizdeck_protocols::publish::Body, attached: bool) {
        self.follow_body(publisher, body, attached);
    }

    fn problem(&self) -> Option<String> {
        if let Some(input) = &self.shared {
            let lines: Vec<String> = input
                .notice()
                .into_iter()
                .chain(self.drawn.gpu_notes.iter().cloned())
                .collect();
            return (!lines.is_empty()).then(|| lines.join("\n"));
        }
        self.source.error().or_else(|| {
            let notices = self.notices();
            (!notices.is_empty()).then(|| notices.join("\n"))
        })
    }
}

/// Every Rust type of this view mirrored by a WGSL struct ([`crate::gpu::mirror`]), this
/// view's line of [`crate::SCENES`].
pub fn wgsl_mirrors() -> Vec<crate::gpu::mirror::Mirror> {
    gpu::wgsl_mirrors()
}
