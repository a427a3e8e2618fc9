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
//! The STFT runs on the GPU ([`crate::scene::spectrogram::fft::GpuFft`]: every hop that arrived since the last
//! frame in one batched dispatch) or on the CPU ([`crate::audio::stft::Stft`]), switchable
//! at run time; both compute the same dBFS definition, so both give the same image. The GPU
//! path's levels come back to the CPU through the deck's shared asynchronous readback ring (1–3
//! frames late) for the hover readout, spectrum view, metrics and CSV export.
//!
//! The scene is split by concern; this file is its outline: the [`Spectrogram`] struct, its
//! construction, the source and settings changes, and the [`Scene`] hooks, each delegating to
//! the file that does the work:
//! - `timeline.rs`: the stream timeline: drained samples, gaps, the skipped backlog, cutting
//!   hops into columns, and where each written column sits in time ([`Spectrogram::column_time`]);
//! - `history.rs`: the CPU copy of the columns shown, the metrics over the last second and the
//!   CSV export;
//! - `gpu.rs`: pipelines, the ring texture, bind groups, and what the frame records on the GPU
//!   (uploads, the FFT and ring-write dispatches, the draw, the readback of the GPU's levels);
//! - `ui.rs`: the egui side panel, pointer and keyboard over the image, and the overlay;
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
mod share;
mod timeline;
mod ui;

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
use timeline::Timeline;
use ui::{Panel, View};

/// Samples in the audio ring between the source and the analysis: 2²² mono samples (16 MiB),
/// 87 s at 48 kHz, more than the scrollback, so a scene shown again after up to that long in the
/// background analyses everything that arrived meanwhile (a longer absence is a hatched gap).
const RING_SAMPLES: usize = 1 << 22;
/// Seconds of scrollback the ring texture aims to hold.
pub const SCROLLBACK_S: f64 = 70.0;
/// Most texture rows (bins beyond this are max-pooled into rows).
pub const MAX_ROWS: u32 = 2048;
/// Most texture columns (also bounded by the adapter's texture limit).
pub const MAX_RING_WIDTH: u32 = 16384;
/// Most f32 values kept in the CPU history (64 Mi values = 256 MiB).
const HISTORY_VALUES: usize = 64 << 20;
/// Marks a column with no data (the input device was gone or silent): drawn hatched grey, never
/// as silence; exported as NaN.
pub const GAP_DB: f32 = -1.0e30;
/// Latencies kept for the live p50/p99.
const LATENCY_WINDOW: usize = 512;

/// Most columns analysed in one frame (older backlog is skipped and counted).
pub const MAX_BATCH: u32 = 512;

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
/// the analysis settings ([`ScenePipes`]) and those that do ([`Analysis`]), the stream timeline
/// ([`Timeline`]), this frame's work for the GPU ([`Recording`]), the CPU copy of the levels
/// ([`Levels`]), the view ([`View`]) and the side panel's requests ([`Panel`]).
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

    /// Starts a file source over from its beginning, with a new timeline (time 0 = the file's
    /// start) and history; `whole`: analysed whole at once with the view fitted to it
    /// ([`Spectrogram::open_file_whole`]), else played at real-time rate.
    fn restart_file(&mut self, whole: bool) {
        if self.source.file_samples().is_none() {
            return;
        }
        self.source.seek(0.0);
        self.source.set_paused(false);
        self.source.set_stop_at(None);
        self.source.set_fast(false);
        self.reset_stream();
        self.restart_history();
        if whole {
            self.open_file_whole();
        }
    }

    /// For a file source (not looping): analyse it whole from here, as fast as the analysis
    /// goes (fast mode), and fit the view to it, as Spek, Audacity and Sonic Visualiser show a
    /// file whole the moment it opens. A file longer than the ring holds (the scrollback) is
    /// analysed up to what the ring holds, then pauses there (Play goes on at real-time rate).
    fn open_file_whole(&mut self) {
        let Some(len) = self.source.file_samples() else {
            return;
        };
        // A placeholder while a file decodes has nothing to analyse.
        if self.source.looping() || len == 0 {
            return;
        }
        let (n, hop) = (self.a.settings.fft_size, self.a.settings.hop);
        let fit = whole_file_samples(self.a.ring_width, n, hop);
        let start = (self.source.position_s().unwrap_or(0.0) * f64::from(self.source.sample_rate()))
            .round() as usize;
        let left = len.saturating_sub(start);
        let take = left.min(fit);
        self.source
            .set_stop_at((left > fit).then_some((start + fit) as u64));
        self.source.set_fast(true);
        self.whole_file = true;
        self.view.fit_cols = Some(file_columns(take, n, hop).max(1));
    }

    /// The notice of a file longer than the scrollback, while its analysis waits at the end of
    /// what the ring holds.
    fn long_file_notice(&self) -> Option<String> {
        let dur = self.source.duration_s()?;
        let pos = self.source.position_s()?;
        if !self.source.paused() || pos >= dur || self.source.looping() {
            return None;
        }
        let held = self.a.ring_width as f64 / self.columns_per_second();
        (self.view.fit_cols.is_some() && pos > 0.0).then(|| {
            format!(
                "showing {pos:.1} s of the file's {dur:.1} s (the scrollback holds {held:.0} s); \
                 Play goes on at real-time rate"
            )
        })
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

    /// Applies, in `prepare` (which has the GPU), what was asked for since the last frame: a
    /// source change or a seek from the side panel, a new sample rate after a reconnection, and
    /// new analysis settings from the side panel (errors are shown, the old settings kept).
    fn apply_requests(&mut self, gpu: &Gpu) {
        if let Some((sel, opts)) = self.panel.reopen_request.take() {
            // Another source chosen: a file still decoding is no longer wanted.
            self.loading = None;
            match &sel {
                AudioSelection::File(path)
                    if loading::in_background(path, self.simulated_clock) =>
                {
                    match loading::FileLoad::start(path, opts) {
                        Ok(l) => self.loading = Some(l),
                        Err(e) => self.error = Some(e.to_string()),
                    }
                }
                _ => match self.source.reopen_with(&sel, &opts) {
                    Ok(()) => self.source_replaced(gpu, opts),
                    Err(e) => self.error = Some(e.to_string()),
                },
            }
        }
        if let Some(result) = self.loading.as_ref().and_then(loading::FileLoad::poll) {
            let Some(load) = self.loading.take() else {
                return;
            };
            let opts = load.options();
            match result.and_then(|f| AudioSource::from_mono_file(f, RING_SAMPLES, &opts)) {
                Ok(source) => {
                    self.source = source;
                    self.source_replaced(gpu, opts);
                }
                Err(e) => {
                    log::error!("{e}");
                    self.error = Some(e.to_string());
                    if self.source.file_samples() == Some(0) {
                        self.source = AudioSource::pending_file(
                            load.path(),
                            "could not be decoded",
                            RING_SAMPLES,
                            &opts,
                        );
                    }
                }
            }
        }
        if self.source.take_rate_changed() {
            // A reconnection opened the device at another rate: the analysis follows it.
            let settings = self.a.settings.clone();
            if let Err(e) = self.apply_settings(gpu, settings) {
                self.error = Some(e.to_string());
            }
        }
        if let Some(s) = self.panel.seek_ui.take() {
            self.source.seek(s);
            self.source.set_stop_at(None);
            self.a.cpu.reset();
            self.a.tail.clear();
            // What was in the ring is gone: holes counted against it no longer apply.
            self.tl.holes.clear();
            self.tl.next_start = self.tl.drained_total + self.tl.gap_total;
        }
        if self.panel.settings_ui != self.a.settings {
            let wanted = self.panel.settings_ui.clone();
            match self.apply_settings(gpu, wanted) {
                Ok(()) => {
                    self.error = None;
                    // A file is analysed whole again with the new settings.
                    if self.source.file_samples().is_some() && !self.source.looping() {
                        self.restart_file(true);
                    }
                }
                Err(e) => {
                    self.error = Some(e.to_string());
                    self.panel.settings_ui = self.a.settings.clone();
                }
            }
        }
        if let Some(whole) = self.panel.replay_request.take() {
            self.restart_file(whole);
        }
    }

    /// The stream counters and the analysis' carried state back to the start of a stream
    /// (time 0, nothing drained, no gaps), unfrozen and not fitted to a file.
    fn reset_stream(&mut self) {
        self.tl.drained_total = 0;
        self.tl.gap_total = 0;
        self.tl.holes.clear();
        self.tl.dropped_passed = 0;
        self.tl.dropped_seen = self.source.dropped();
        self.tl.next_start = 0;
        self.a.cpu.reset();
        self.a.tail.clear();
        self.view.fit_cols = None;
        self.whole_file = false;
        self.view.frozen = false;
    }

    /// A new source took the place of the old one (opened with `opts`): a new timeline from
    /// time 0, the analysis rebuilt for its rate, a file analysed whole.
    fn source_replaced(&mut self, gpu: &Gpu, opts: AudioOptions) {
        self.options = opts;
        self.error = None;
        self.tl.scene_time = 0.0;
        self.reset_stream();
        let settings = self.a.settings.clone();
        if let Err(e) = self.apply_settings(gpu, settings) {
            self.error = Some(e.to_string());
        }
        self.open_file_whole();
    }

    /// A file shorter than the FFT never makes a column: said once in the log (the panel,
    /// the overlay and the report show it while it holds).
    fn log_short_file_notice(&mut self) {
        let short = self.short_file_notice();
        if short != self.short_notice_logged {
            if let Some(n) = &short {
                log::warn!("{n}");
            }
            self.short_notice_logged = short;
        }
    }

    /// (last, p50, p99) of the recent capture-to-present latencies, ms (nearest rank).
    pub fn latency_summary(&self) -> (f64, f64, f64) {
        use crate::stats::percentile_nearest_rank;
        let mut v: Vec<f64> = self.levels.latencies.iter().copied().collect();
        let last = v.last().copied().unwrap_or(0.0);
        v.sort_by(f64::total_cmp);
        (
            last,
            percentile_nearest_rank(&v, 50.0),
            percentile_nearest_rank(&v, 99.0),
        )
    }

    /// Set while the source is a file (not looping) with fewer samples per channel than the FFT
    /// size N, so no column can ever be made: "the audio file has K samples and the FFT needs
    /// N: no spectrogram column can be made (loop the file, or choose an FFT size of P or
    /// less)", P being the largest FFT size ≤ K (that part left out when K < the smallest size).
    fn short_file_notice(&self) -> Option<String> {
        let k = self.source.file_samples()?;
        let n = self.a.settings.fft_size;
        // Only a placeholder has no samples (a file is decoded while it stands in; an empty
        // file does not open).
        if k >= n || k == 0 || self.source.looping() {
            return None;
        }
        let samples = if k == 1 { "sample" } else { "samples" };
        let fix = if k >= stft::MIN_FFT_SIZE {
            let p = 1usize << k.ilog2();
            format!("loop the file, or choose an FFT size of {p} or less")
        } else {
            "loop the file".to_string()
        };
        Some(format!(
            "the audio file has {k} {samples} and the FFT needs {n}: no spectrogram column can \
             be made ({fix})"
        ))
    }

    /// The live source's automatic reconnection, for the report: `losses`, `reopens`,
    /// `reconnecting` (now), `last_reopen_unix_ms` and `first_data_after_reopen_unix_ms`
    /// (wall clock, ms since the Unix epoch), `samples_since_reopen`, `last_outage_s` (from the
    /// loss being noticed to the reopen) and `last_loss` (why). `null` for clocked sources.
    fn reconnect_metrics(&self) -> serde_json::Value {
        if self.source.kind() != "live" {
            return serde_json::Value::Null;
        }
        let st = self.source.reopen_stats();
        let ms = |t: Option<std::time::SystemTime>| {
            t.and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map(|d| d.as_secs_f64() * 1e3)
        };
        serde_json::json!({
            "losses": st.losses,
            "reopens": st.reopens,
            "reconnecting": self.source.reconnecting(),
            "last_reopen_unix_ms": ms(st.last_reopen),
            "first_data_after_reopen_unix_ms": ms(st.first_data_after_reopen),
            "samples_since_reopen": st.samples_since_reopen,
            "last_outage_s": st.last_outage_s,
            "last_loss": st.last_loss,
        })
    }

    /// The source as the panel and the report name it (a follower: the publisher's stream).
    fn source_label(&self) -> String {
        if self.share.following && self.share.followed_publisher().is_none() {
            "a publisher's columns (none yet)".to_string()
        } else if self.share.following {
            format!("a publisher's columns ({} Hz)", self.source.sample_rate())
        } else {
            self.source.label().to_string()
        }
    }

    /// The source's notice ([`AudioSource::notice`]), the short-file and the long-file notices,
    /// joined by "; ".
    fn notice(&self) -> Option<String> {
        let parts: Vec<String> = [
            self.source.notice().map(str::to_string),
            self.short_file_notice(),
            self.long_file_notice(),
        ]
        .into_iter()
        .flatten()
        .collect();
        (!parts.is_empty()).then(|| parts.join("; "))
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

    /// The view as the report gives it: columns across, the centre times of the oldest and the
    /// newest column shown (s), frozen or not, and how many times it was frozen.
    fn view_metrics(&self) -> serde_json::Value {
        let newest = self.tl.written.saturating_sub(self.view.view_back);
        let visible = u64::from(self.visible());
        let span = (newest > 0).then(|| {
            let hi = newest - 1;
            let lo = hi.saturating_sub(visible - 1);
            (self.column_time(lo), self.column_time(hi))
        });
        serde_json::json!({
            "columns": visible,
            "first_s": span.map(|s| s.0),
            "last_s": span.map(|s| s.1),
            "frozen": self.view.frozen,
            "freezes": self.view.freezes,
            "fitted_to_file": self.view.fit_cols.is_some(),
        })
    }
}

/// Samples of a file whose columns the ring of `ring_width` columns holds at FFT size `n` and
/// hop `hop`: `(ring_width − 1)·hop + n`.
pub fn whole_file_samples(ring_width: u32, n: usize, hop: usize) -> usize {
    (ring_width.max(1) as usize - 1) * hop + n
}

/// Columns an STFT of size `n`, hop `hop` makes of `len` samples: `⌊(len − n)/hop⌋ + 1`, 0 when
/// `len < n`.
pub fn file_columns(len: usize, n: usize, hop: usize) -> u64 {
    if len < n || hop == 0 {
        0
    } else {
        ((len - n) / hop + 1) as u64
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
        self.view.stats_overlay = crate::ui::overlay_shown(ui.ctx());
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
        let dom = self.dominant();
        serde_json::json!({
            "source": if self.share.following { "follow" } else { self.source.kind() },
            "source_label": self.source_label(),
            "notice": self.notice(),
            "warning": self.source.warning(),
            "sample_rate": self.source.sample_rate(),
            "fft_size": self.a.settings.fft_size,
            "hop": self.a.settings.hop,
            "window": self.a.settings.window.name(),
            // Asked for, where it runs, and (auto) what the measurement found.
            "fft_requested": self.a.settings.fft_on,
            "fft_on": self.a.fft_on,
            "fft_choice": self.a.fft_choice,
            "columns": self.tl.columns_total,
            "columns_skipped": self.tl.columns_skipped,
            "samples": self.tl.samples_total,
            "samples_skipped": self.tl.samples_skipped,
            "dominant_hz": dom.map(|d| d.0),
            "dominant_dbfs": dom.map(|d| d.1),
            "dropped_samples": self.source.dropped(),
            "db_floor": self.view.db_floor,
            "db_ceil": self.view.db_ceil,
            "frequency_axis": self.view.scale.name(),
            "colormap": COLORMAPS[self.view.colormap].0,
            "ring_columns": self.a.ring_width,
            "latency_ms": (!self.levels.latencies.is_empty()).then(|| {
                let (last, p50, p99) = self.latency_summary();
                serde_json::json!({ "last": last, "p50": p50, "p99": p99, "n": self.levels.latencies.len() })
            }),
            "ring_rows": self.a.rows,
            "reconnect": self.reconnect_metrics(),
            "view": self.view_metrics(),
            "share": self.share_metrics(),
        })
    }

    /// The dB columns new since the last message (or a keyframe: analysis, view, scrollback),
    /// `share.rs`.
    fn publish(&mut self, keyframe: bool) -> Option<crate::publish::protocol::Body> {
        self.publish_body(keyframe)
    }

    /// Applied by the next `prepare` (`share.rs`).
    fn follow(&mut self, publisher: u64, body: crate::publish::protocol::Body, attached: bool) {
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
