//! Spectrogram: audio (live input, a sound file or the synthetic signals) → STFT columns in
//! dBFS → a scrolling ring texture → drawn with a linear, log or mel frequency axis and a
//! perceptual colormap, beside a spectrum strip (newest column and peak hold) and a colour bar.
//! Axes with titles, hover readout, freeze with scrollback, time zoom and export are drawn or
//! handled by egui.
//!
//! Freezing is a view action: the analysis goes on and every column goes into the ring and the
//! history; only the view stops following the newest. A sound file is analysed whole when it
//! opens (as fast as the analysis goes, up to [`MAX_BATCH`] columns a frame) and the view fitted
//! to it; a file longer than the scrollback is analysed up to what the ring holds, then waits
//! (Play goes on at real-time rate).
//!
//! The STFT runs on the GPU ([`crate::spectrogram::fft::GpuFft`]: every hop that arrived since the last
//! frame in one batched dispatch) or on the CPU ([`crate::audio::stft::Stft`]), switchable
//! at run time; both compute the same dBFS definition, so both give the same image. The GPU
//! path's levels come back to the CPU through the deck's shared asynchronous readback ring (1–3
//! frames late) for the hover readout, spectrum view, metrics and CSV export.
//!
//! The scene is split by concern; this file is its outline: the [`Spectrogram`] struct (its
//! state grouped by concern into sub-structs kept beside the code that uses them), its
//! construction, the settings changes, and the [`Scene`] hooks, each delegating to the file that
//! does the work:
//! - `timeline.rs`: the stream timeline (`Timeline`): drained samples, gaps, the
//!   skipped backlog, cutting hops into columns, and where each written column sits in time
//!   ([`Spectrogram::column_time`]);
//! - `history.rs`: the CPU copy of the columns shown (`Levels`), the metrics over the
//!   last second and the CSV export;
//! - `gpu.rs`: pipelines, the ring texture, bind groups, and what the frame records on the GPU
//!   (`Recording`: uploads, the FFT and ring-write dispatches, the draw);
//! - `readback.rs`: the GPU's levels copied back to the CPU into the history;
//! - `source.rs`: source changes, seeks and new settings applied by `prepare`, a file started
//!   over or analysed whole, the source's label and notices;
//! - `report.rs`: the metrics of the report;
//! - `ui.rs`: the egui side panel (`Panel`: what it asked for) and pointer and keyboard
//!   over the image;
//! - `view.rs`: the view (`View`: dB range, colormap, axis, freeze, scroll, time zoom);
//! - `overlay.rs`: the overlay (axes, titles, notices, readout) and the spectrum strip's lines;
//! - `saved.rs`: the side panel's settings kept between runs;
//! - `layout.rs`: where the image, the strip, the colour bar and every label go;
//! - `axis.rs`: the frequency axis (linear, log, mel) and tick steps;
//! - `fft_choice.rs`: `--fft-on auto`, the faster FFT path measured on this adapter;
//! - `loading.rs`: a long sound file decoded on its own thread in the window, with a progress
//!   bar;
//! - `share.rs`: `--publish` (the dB columns, each once, and the view) and `--follow` (the
//!   columns received shown through the CPU path's upload, no audio input of its own).

pub mod axis;
pub mod fft;
pub mod fft_choice;
pub(crate) mod gpu;
mod history;
pub mod layout;
pub mod loading;
mod overlay;
mod readback;
mod report;
mod saved;
pub mod shaders;
mod share;
mod source;
mod timeline;
mod ui;
mod view;

use std::path::PathBuf;

use super::{FrameCtx, Scene, SceneConfig, SceneError};
use crate::audio::stft::{self, WindowKind};
use crate::audio::{AudioOptions, AudioSelection, AudioSource};
use crate::gpu::Gpu;
use crate::gpu::frame::GpuFrame;
use crate::gpu::readback::{Arrived, Consumer, ReadbackRing};
use gpu::{Analysis, Recording, ScenePipes};
pub use gpu::{COLORMAPS, colormap_lut, ring_width_for, rows_for};
use history::Levels;
pub use source::{file_columns, whole_file_samples};
use timeline::Timeline;
use ui::Panel;
use view::View;

/// Samples in the audio ring between the source and the analysis: 2²² mono samples (16 MiB),
/// 87 s at 48 kHz, more than the scrollback, so a scene shown again after up to that long in the
/// background analyses everything that arrived meanwhile (a longer absence is a hatched gap).
const RING_SAMPLES: usize = 1 << 22;
/// Seconds of scrollback the ring texture aims to hold.
pub(crate) const SCROLLBACK_S: f64 = 70.0;
/// Most texture rows (bins beyond this are max-pooled into rows).
pub(crate) const MAX_ROWS: u32 = 2048;
/// Most texture columns (also bounded by the adapter's texture limit).
pub(crate) const MAX_RING_WIDTH: u32 = 16384;
/// Most f32 values kept in the CPU history (64 Mi values = 256 MiB).
const HISTORY_VALUES: usize = 64 << 20;
/// Marks a column with no data (the input device was gone or silent): drawn hatched grey, never
/// as silence; exported as NaN.
pub const GAP_DB: f32 = -1.0e30;
/// Latencies kept for the live p50/p99.
const LATENCY_WINDOW: usize = 512;

/// Most columns analysed in one frame (older backlog is skipped and counted).
pub(crate) const MAX_BATCH: u32 = 512;

/// Where the FFT runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FftOn {
    /// Whichever of the two is faster on this adapter for these settings, measured when the
    /// analysis is built (`fft_choice.rs`): the GPU on a hardware GPU, the CPU on lavapipe.
    #[default]
    Auto,
    /// WGSL compute FFT, batched.
    Gpu,
    /// On the CPU (rustfft of N/2 and a real split, `audio/stft.rs`; the reference).
    Cpu,
}

/// Analysis settings of the scene (from the command line; FFT size, hop and window also from
/// the side panel).
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    /// FFT size N (power of two, 256…32768).
    pub fft_size: usize,
    /// Hop H in samples (1..=N).
    pub hop: usize,
    /// Analysis window.
    pub window: WindowKind,
    /// Where the FFT runs.
    pub fft_on: FftOn,
    /// `--export-spectrogram PATH.csv`: written by [`Scene::finish`].
    pub export_csv: Option<PathBuf>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            fft_size: stft::DEFAULT_FFT_SIZE,
            hop: stft::DEFAULT_HOP,
            window: WindowKind::Hann,
            fft_on: FftOn::Auto,
            export_csv: None,
        }
    }
}

/// The spectrogram scene. Its state is grouped by concern: the GPU objects that do not depend on
/// the analysis settings (`ScenePipes`) and those that do (`Analysis`), the stream timeline
/// (`Timeline`), this frame's work for the GPU (`Recording`), the CPU copy of the levels
/// (`Levels`), the view (`View`) and the side panel's requests (`Panel`).
pub struct Spectrogram {
    source: AudioSource,
    a: Analysis,
    /// Pipelines and layouts (independent of the FFT size).
    pipes: ScenePipes,
    /// Stream positions, gaps and the totals (`timeline.rs`).
    tl: Timeline,
    /// This frame's columns and what the frame records on the GPU besides (`gpu.rs`).
    rec: Recording,
    /// CPU copy of what is shown, the recent columns, peak hold and latencies (`history.rs`).
    levels: Levels,
    /// What is shown and how: dB range, colormap, axis, freeze, scroll and zoom (`view.rs`).
    view: View,
    /// What the side panel asked for, applied by the next `prepare` (`ui.rs`).
    panel: Panel,
    /// A file is being analysed whole (fast mode, from its start); fast mode ends with it.
    whole_file: bool,
    error: Option<String>,
    options: AudioOptions,
    /// The [`Spectrogram::short_file_notice`] last logged, so each is logged once.
    short_notice_logged: Option<String>,
    /// A long file being decoded on its own thread (window runs, `loading.rs`); the source
    /// shown meanwhile is a paused placeholder or the previous source.
    loading: Option<loading::FileLoad>,
    /// Driven by a simulated clock (headless): files are decoded before the first frame.
    simulated_clock: bool,
    /// `--publish` / `--follow` state (`share.rs`).
    share: share::Share,
}

impl Spectrogram {
    /// Table constructor: opens the audio selection (errors name the input). A follower
    /// (`cfg.following`) opens no input: it shows the columns a publisher sends, with the
    /// publisher's analysis settings once its first keyframe arrives (`share.rs`).
    pub fn create(gpu: &Gpu, cfg: &SceneConfig) -> Result<Box<dyn Scene>, SceneError> {
        if cfg.following {
            let mut settings = settings_from(cfg);
            // No FFT runs: the columns received go up through the CPU path's upload.
            settings.fft_on = FftOn::Cpu;
            let source = share::placeholder(crate::audio::synth::SYNTH_SAMPLE_RATE)?;
            let mut s = Spectrogram::new(gpu, source, settings)?;
            s.share.following = true;
            s.simulated_clock = cfg.simulated_clock;
            return Ok(Box::new(s));
        }
        let options = AudioOptions {
            channel: cfg.audio_channel,
            seed: cfg.seed,
            sample_format: None,
        };
        // A long file in the window: decoded on its own thread behind a placeholder.
        let background = match &cfg.audio {
            AudioSelection::File(path) if loading::in_background(path, cfg.simulated_clock) => {
                Some(path.clone())
            }
            _ => None,
        };
        let source = match &background {
            Some(path) => AudioSource::pending_file(path, "decoding", RING_SAMPLES, &options),
            None => AudioSource::open_with(&cfg.audio, RING_SAMPLES, &options)?,
        };
        let mut s = Spectrogram::new(gpu, source, settings_from(cfg))?;
        s.options = options;
        s.simulated_clock = cfg.simulated_clock;
        if let Some(path) = background {
            s.loading = Some(loading::FileLoad::start(&path, options)?);
        }
        Ok(Box::new(s))
    }

    /// Builds the scene around an opened source.
    pub fn new(
        gpu: &Gpu,
        source: AudioSource,
        settings: Settings,
    ) -> Result<Spectrogram, SceneError> {
        let p = ScenePipes::new(&gpu.device, gpu.scene_format);
        let a = Analysis::new(
            gpu,
            &settings,
            source.sample_rate(),
            &p.write_layout,
            p.draw_inputs(),
        )?;
        let bins = a.bins;
        let mut s = Spectrogram {
            source,
            a,
            pipes: p,
            tl: Timeline::default(),
            rec: Recording::new(bins),
            levels: Levels::new(bins),
            view: View::new(),
            panel: Panel::new(settings),
            whole_file: false,
            error: None,
            short_notice_logged: None,
            options: AudioOptions::default(),
            loading: None,
            simulated_clock: false,
            share: share::Share::default(),
        };
        s.reset_history();
        s.tl.dropped_seen = s.source.dropped();
        s.open_file_whole();
        Ok(s)
    }

    /// Applies new analysis settings (FFT size, hop, window, FFT place): rebuilds the size-
    /// dependent GPU objects and starts a new history. Errors leave the old settings running.
    pub fn apply_settings(&mut self, gpu: &Gpu, settings: Settings) -> Result<(), SceneError> {
        let a = Analysis::new(
            gpu,
            &settings,
            self.source.sample_rate(),
            &self.pipes.write_layout,
            gpu::DrawInputs {
                layout: &self.pipes.draw_layout,
                params: &self.pipes.draw_params,
                lut: &self.pipes.lut,
                inset: &self.pipes.inset_view,
            },
        )?;
        self.a = a;
        self.tl.next_start = self.tl.drained_total + self.tl.gap_total;
        self.restart_history();
        Ok(())
    }

    /// Starts the shown columns again at written index 0 (new analysis settings, a file analysed
    /// again): the ring's old columns are no longer drawn, the history and metrics restart.
    fn restart_history(&mut self) {
        self.tl.written = 0;
        self.tl.starts.clear();
        self.tl.columns_total = 0;
        self.rec.pending.clear();
        self.rec.pending_cols = 0;
        self.rec.write_cols = 0;
        self.tl.gap_fill = None;
        self.view.view_back = 0;
        self.share.restarted();
        self.reset_history();
    }

    /// Current analysis settings.
    pub fn settings(&self) -> &Settings {
        &self.a.settings
    }

    /// Asks for new analysis settings as the side panel does: applied by the next
    /// [`Scene::prepare`] (a failure leaves the settings as they were, with the error shown).
    pub fn request_settings(&mut self, settings: Settings) {
        self.panel.settings_ui = settings;
    }

    /// Which FFT path runs now ([`FftOn::Cpu`] or [`FftOn::Gpu`]; `Auto` resolved).
    pub fn fft_on(&self) -> FftOn {
        self.a.fft_on
    }

    /// The audio source.
    pub fn source(&self) -> &AudioSource {
        &self.source
    }

    /// Whether new columns keep coming by themselves: live input, a playing file or synthetic
    /// signal (not paused, not at its end), or samples or hatched columns still to analyse.
    pub(super) fn producing(&self) -> bool {
        self.share.following
            || self.source.kind() == "live"
            || !(self.source.paused() || self.source.finished())
            || self.source.available() > 0
            || self.tl.gap_fill.is_some()
    }
}

fn settings_from(cfg: &SceneConfig) -> Settings {
    cfg.spectrogram.clone()
}

impl Spectrogram {
    /// The scene table's start-up hook (before the scene is created, may block): with
    /// `--fft-on auto` and no measurement kept for this adapter, measures which FFT path is faster on this adapter
    /// ([`fft_choice::measure_at_startup`], at the start-up settings and 48 kHz, the
    /// synthetic source's rate and the most common device rate), so no analysis built later
    /// waits on the GPU to choose.
    pub fn startup(gpu: &Gpu, cfg: &SceneConfig) {
        let settings = settings_from(cfg);
        if settings.fft_on == FftOn::Auto && !cfg.following && !fft_choice::measured(gpu) {
            let c = fft_choice::measure_at_startup(
                gpu,
                &settings,
                crate::audio::synth::SYNTH_SAMPLE_RATE,
            );
            log::info!("spectrogram FFT on the {:?}: {}", c.on, c.reason);
        }
    }
}

impl Scene for Spectrogram {
    fn id(&self) -> &'static str {
        "spectrogram"
    }

    fn saved_settings(&self) -> serde_json::Value {
        self.settings_json()
    }

    fn restore_settings(&mut self, saved: &serde_json::Value) -> Vec<String> {
        self.restore_json(saved)
    }

    /// Audio is drained after the UI is laid out, just before the uploads and the FFT dispatch,
    /// which takes the UI's CPU time (≈ 3 ms on the 2-core container) out of the capture →
    /// present latency; the side panel's spectrum line and readouts are one frame older.
    fn ingest_after_ui(&self) -> bool {
        true
    }

    /// Frames are needed while columns keep coming ([`Spectrogram::producing`]), frozen or not
    /// (freezing stops the view, not the analysis); a paused file, or one analysed to its end,
    /// stands still.
    fn animating(&self) -> bool {
        self.producing()
    }

    /// Drain the source and cut this frame's columns (`timeline.rs`); a follower has no
    /// source (its columns come through [`Scene::follow`]).
    fn ingest(&mut self, frame: &FrameCtx) {
        if !self.share.following {
            self.ingest_audio(frame);
        }
    }

    /// Apply what the panel asked for, upload this frame's columns (`gpu.rs`), move the
    /// written-column count on (`timeline.rs`), then upload the draw's parameters (`gpu.rs`).
    fn prepare(&mut self, f: &mut GpuFrame<'_>, frame: &FrameCtx) {
        let plot = layout::Frame::px(self.frame_layout(frame.size).plot, self.view.ppp);
        self.view.plot_w_px = plot[2].saturating_sub(plot[0]).max(1);
        self.apply_followed(f.gpu());
        self.apply_requests(f.gpu());
        self.log_short_file_notice();
        self.upload_refill(f);
        self.upload_columns(f);
        self.advance_written();
        self.rec.pending.clear();
        self.rec.pending_cols = 0;
        self.upload_inset(f, frame);
        self.upload_draw_params(f, frame);
    }

    fn compute(&mut self, pass: &mut wgpu::ComputePass<'_>, frame: &FrameCtx) {
        self.encode_columns(pass, frame);
    }

    fn recreate_gpu(&mut self, gpu: &Gpu) -> Result<(), SceneError> {
        self.rebuild_gpu(gpu)
    }

    fn paint(&self, pass: &mut wgpu::RenderPass<'_>, frame: &FrameCtx) {
        self.draw_image(pass, frame);
    }

    fn ui(&mut self, ui: &mut egui::Ui) {
        self.view.stats_overlay = crate::overlay::overlay_shown(ui.ctx());
        self.side_panel(ui);
    }

    fn interact(&mut self, response: &egui::Response, rect: egui::Rect) {
        self.handle_pointer(response, rect);
    }

    fn overlay(&self, painter: &egui::Painter, rect: egui::Rect) {
        self.draw_overlay(painter, rect);
        if let Some(l) = &self.loading {
            l.paint(painter, rect);
        }
    }

    fn metrics(&self) -> serde_json::Value {
        self.report()
    }

    /// The dB columns new since the last message (or a keyframe: analysis, view, scrollback),
    /// `share.rs`.
    fn publish(&mut self, keyframe: bool) -> Option<vizdeck_protocols::publish::Body> {
        self.publish_body(keyframe)
    }

    /// Applied by the next `prepare` (`share.rs`).
    fn follow(&mut self, publisher: u64, body: vizdeck_protocols::publish::Body, attached: bool) {
        self.follow_body(publisher, body, attached);
    }

    fn problem(&self) -> Option<String> {
        self.source
            .stream_error()
            .map(|e| format!("audio input: {e}"))
            .or_else(|| self.error.clone())
    }

    fn presented(&mut self, at: std::time::Instant) {
        if let Some(captured) = self.rec.frame_capture.take() {
            let ms = at.saturating_duration_since(captured).as_secs_f64() * 1e3;
            if self.levels.latencies.len() >= LATENCY_WINDOW {
                self.levels.latencies.pop_front();
            }
            self.levels.latencies.push_back(ms);
        }
    }

    fn record_readbacks(
        &mut self,
        device: &wgpu::Device,
        encoder: &mut wgpu::CommandEncoder,
        ring: &mut ReadbackRing,
        me: Consumer,
    ) {
        self.copy_levels_back(device, encoder, ring, me);
    }

    fn readback_arrived(&mut self, arrived: &Arrived<'_>) {
        self.levels_arrived(arrived);
    }

    fn finish(&mut self, _gpu: &Gpu) -> Result<(), SceneError> {
        if self.tl.columns_skipped > 0 {
            log::warn!(
                "spectrogram: {} columns were skipped, not shown (the analysis could not keep up: \
                 more than {MAX_BATCH} new columns a frame at real-time rate); {} were shown; the \
                 export has rows for the shown columns only, each at its own time",
                self.tl.columns_skipped,
                self.tl.written
            );
        }
        if let Some(path) = self.a.settings.export_csv.clone() {
            let rows = self.export_csv(&path)?;
            log::info!("spectrogram: wrote {rows} columns to {}", path.display());
        }
        Ok(())
    }
}

/// Every Rust type of this view mirrored by a WGSL struct ([`crate::gpu::mirror`]), this
/// view's line of [`crate::SCENES`].
pub fn wgsl_mirrors() -> Vec<crate::gpu::mirror::Mirror> {
    fft::wgsl_mirrors()
        .into_iter()
        .chain(gpu::wgsl_mirrors())
        .collect()
}
