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
//! This file is the scene's outline and data flow: the [`TimeSeries`] struct, the sources it
//! drains (the series source, vizdeck's own frame times, the audio input's level), the view's
//! time and value window, and the [`Scene`] hooks. The GPU decimation and drawing live in
//! [`gpu`], the tick placement and labels in [`axis`], the dots in [`markers`], the benchmark
//! table in [`bench`](mod@bench), the publish → present latency of network sources in
//! [`latency`], and the egui side (side panel, `interact`, `overlay`) in `ui.rs`.
//!
//! Under `--share PATH` the chart draws a producer's window of S series instead of a source
//! ([`shared`]): the values are written into the mirrors on the GPU and never reach the store.

pub mod axis;
pub mod bench;
mod export;
pub mod gpu;
pub mod latency;
pub mod markers;
mod overlay;
mod pointer;
pub mod redraw;
mod settings;
mod share;
pub mod shared;
mod ui;

use super::{FrameCtx, Scene, SceneConfig, SceneError};
use crate::audio::{AudioOptions, AudioSelection, AudioSource};
use crate::gpu::Gpu;
use crate::gpu::frame::GpuFrame;
use crate::series::decimate::{Column, decimate_m4_rel};
use crate::series::source::dates::{DateFormat, Zone};
use crate::series::source::payload::PayloadFormat;
use crate::series::source::{Pacing, SeriesSelection, SeriesSource};
use crate::series::store::{Series, Store};
use gpu::{GpuM4Error, HostDraw, Mirrors, Pipelines, ViewUniform};

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
/// ([`TimeSeries::saved_settings`](crate::scene::Scene::saved_settings)).
pub const WINDOWS_KEPT: usize = 32;
/// Samples kept per series.
const STORE_CAP: usize = 1 << 24;
/// Name of the series of vizdeck's own frame times (see [`TimeSeries::own_signals`]).
pub const OWN_FRAME_SERIES: &str = "vizdeck frame time (ms)";
/// Name of the series of the audio input's level (see [`TimeSeries::own_audio`]).
pub const OWN_AUDIO_SERIES: &str = "audio level (dB RMS)";
/// Length of one audio-level block, seconds (10 ms: 480 samples at 48 kHz).
pub const AUDIO_LEVEL_BLOCK_S: f64 = 0.01;
/// Level charted for a block of digital silence, dB.
pub const AUDIO_LEVEL_FLOOR_DB: f64 = -120.0;
/// Most dots ([`markers`]) drawn a frame. When the series sparser than the view's pixels have
/// more samples in view than this together (many sparse series: a network source of 1024
/// fields, or the first seconds of 1024 synthetic series), their samples are not dotted (the
/// dots would cover the chart, and cost the UI a shape each), and the side panel says so;
/// isolated samples keep their dots up to this many.
pub const MARKER_BUDGET: usize = 8192;

/// The audio input opened for [`TimeSeries::own_audio`], and where its blocks stand.
struct AudioLevel {
    source: AudioSource,
    /// Scene time at which the source started, seconds.
    start: f64,
    /// Samples already turned into blocks (or skipped as gaps) since the start.
    samples: u64,
    /// Samples per block.
    block: usize,
    /// Samples drained but not yet a whole block.
    pending: Vec<f32>,
}

/// Level of one block of samples in [-1, 1]: `10·log10(mean(x²))` dB (RMS relative to full
/// scale, so a full-scale sine reads −3.01 dB), [`AUDIO_LEVEL_FLOOR_DB`] for silence.
pub fn block_level_db(block: &[f32]) -> f64 {
    let ms = block.iter().map(|&x| x as f64 * x as f64).sum::<f64>() / block.len().max(1) as f64;
    if ms > 0.0 {
        (10.0 * ms.log10()).max(AUDIO_LEVEL_FLOOR_DB)
    } else {
        AUDIO_LEVEL_FLOOR_DB
    }
}

/// Line colours of the series, cycled.
pub const PALETTE: &[[u8; 3]] = &[
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

/// The format the crosshair writes a sample's time in, for a source whose times are dates: a
/// CSV's own pattern (parsed again); for Parquet / Arrow, whose [`SeriesSource::time_format`]
/// names the column's type (`parquet timestamp[ms, UTC]`, `arrow date32 (days)`), ISO 8601
/// date-times to the column's unit ([`readout_pattern`]).
fn date_format_of(source: &SeriesSource) -> Option<DateFormat> {
    let p = source.time_format()?;
    let pattern = readout_pattern(p, source.time_unit());
    DateFormat::from_pattern(pattern.as_deref().unwrap_or(p)).ok()
}

/// The readout's strftime pattern for a time column described as `format` (a columnar file's
/// type: `… timestamp[unit…]`, `… date32 …`, `… date64 …`) in `unit`: `%Y-%m-%d` for dates,
/// `%Y-%m-%d %H:%M:%S` with as many fraction digits as the unit has (3 for ms, 6 for µs, 9
/// for ns) for timestamps. `None` when `format` is a strftime pattern (or `rfc3339`) itself.
pub fn readout_pattern(
    format: &str,
    unit: Option<crate::series::source::TimeUnit>,
) -> Option<String> {
    use crate::series::source::TimeUnit;
    if format.contains('%') || format.eq_ignore_ascii_case("rfc3339") {
        return None;
    }
    if format.contains("date32") || format.contains("date64") {
        return Some("%Y-%m-%d".to_string());
    }
    let fraction = match unit {
        Some(TimeUnit::Millis) => "%.3f",
        Some(TimeUnit::Micros) => "%.6f",
        Some(TimeUnit::Nanos) => "%.9f",
        Some(TimeUnit::Seconds) | None => "",
    };
    Some(format!("%Y-%m-%d %H:%M:%S{fraction}"))
}

/// The time range *fit all* shows for data spanning `[a, b]` (chart-relative seconds): the
/// data with 1 % of its span on each side; a single instant (`a == b`) gets ±0.5 s. Inputs are
/// finite with `a <= b` ([`TimeSeries`] takes them from the store).
pub fn fitted_range(a: f64, b: f64) -> (f64, f64) {
    let pad = if b > a { (b - a) * 0.01 } else { 0.5 };
    (a - pad, b + pad)
}

/// A sample drawn as a dot this frame (see [`markers`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Marker {
    /// Index of the series in the store.
    pub series: usize,
    /// Chart-relative time, seconds.
    pub t: f64,
    pub value: f32,
}

/// The visible window: times in seconds relative to the chart origin, values.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct View {
    pub t0: f64,
    pub t1: f64,
    pub lo: f64,
    pub hi: f64,
}

/// The time-series scene.
pub struct TimeSeries {
    source: SeriesSource,
    /// What `source` was opened from, and how it is paced (`None`: built around a source
    /// opened elsewhere); the side panel reopens it with other options.
    selection: Option<(SeriesSelection, Pacing)>,
    /// Why the last [`reopen`](TimeSeries::reopen) failed, one line.
    open_error: Option<String>,
    /// Network sources with a wall-clock time field: publish → present latency (payload time
    /// to the present of the first frame that drew the message), with what was clamped.
    latency: Option<latency::Latency>,
    /// Payload times of the messages ingested for the frame being drawn.
    unpresented: Vec<i64>,
    /// Zone of the time axis and the readout (`--time-zone`).
    zone: Zone,
    /// The source's date format, when its times were dates (the readout writes them in it).
    date_format: Option<DateFormat>,
    /// The side panel's *Connect* form: URL, payload format, time field.
    connect: (String, PayloadFormat, String),
    /// The side panel's *File* form: the path typed (filled in with the file shown).
    file_path: String,
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
    /// Input taken in since the last frame changes the image ([`redraw`]): a frame is due.
    redraw_due: bool,
    /// Scratch: each series' [`Series::end_index`] before the input is taken in.
    ends: Vec<u64>,
    pipes: Pipelines,
    /// The GPU copies of the series and the frame's batched passes and draws.
    mirrors: Mirrors,
    /// Series drawn from the CPU this frame (out of order, or beyond the GPU's limits).
    host: Vec<HostDraw>,
    columns: Vec<Column>,
    /// Samples drawn as dots this frame.
    markers: Vec<Marker>,
    /// Scratch for [`markers::marker_samples`].
    marker_scratch: Vec<(f64, f32)>,
    points_in_view: u64,
    view: Option<View>,
    size: (u32, u32),
    hover: Option<egui::Pos2>,
    box_start: Option<egui::Pos2>,
    box_end: Option<egui::Pos2>,
    gpu_notes: Vec<String>,
    /// Also chart vizdeck's own frame times: each presented frame adds the interval since the
    /// previous one, in ms, to the series [`OWN_FRAME_SERIES`] at the scene clock's time.
    /// Synthetic sources only (their times are the same clock); ignored for files.
    pub own_signals: bool,
    last_presented: Option<std::time::Instant>,
    /// Also chart the audio input's level (the `--audio` selection, opened by this scene when
    /// switched on): one point per [`AUDIO_LEVEL_BLOCK_S`] block, [`block_level_db`], in the
    /// series [`OWN_AUDIO_SERIES`] at the time of the block's first sample on the scene clock.
    /// Synthetic series sources only, like [`own_signals`](Self::own_signals).
    pub own_audio: bool,
    audio_input: (AudioSelection, AudioOptions),
    audio: Option<AudioLevel>,
    audio_note: Option<String>,
    /// `--publish` / `--follow` state ([`share`]).
    share: share::Share,
    /// `--export-series`: where the stored samples are written when the run ends.
    export: Option<std::path::PathBuf>,
    /// `--share PATH`: the producer's window drawn instead of the source ([`shared`]).
    shared: Option<shared::SharedSeries>,
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
        scene.zone = cfg.series_csv.time_zone;
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
            open_error: None,
            connect: (String::new(), PayloadFormat::Auto, String::new()),
            file_path: String::new(),
            latency: None,
            unpresented: Vec::new(),
            zone: Zone::Utc,
            date_format,
            store: Store::new(STORE_CAP),
            scene_time: 0.0,
            window_s: DEFAULT_WINDOW_S,
            follow: true,
            paused_range: (0.0, DEFAULT_WINDOW_S),
            fitted_whole: false,
            fixed_y: None,
            windows: std::collections::BTreeMap::new(),
            visible: Vec::new(),
            redraw_due: false,
            ends: Vec::new(),
            pipes: Pipelines::for_gpu(gpu),
            mirrors: Mirrors::new(),
            host: Vec::new(),
            columns: Vec::new(),
            markers: Vec::new(),
            marker_scratch: Vec::new(),
            points_in_view: 0,
            view: None,
            size: (1, 1),
            hover: None,
            box_start: None,
            box_end: None,
            gpu_notes: Vec::new(),
            own_signals: false,
            last_presented: None,
            own_audio: false,
            audio_input: (AudioSelection::Default, AudioOptions::default()),
            audio: None,
            audio_note: None,
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
        let input = shared::SharedSeries::new(gpu, &scene.pipes, &target.path, target.shape)?;
        scene.visible = vec![true; target.shape.series as usize];
        scene.shared = Some(input);
        Ok(scene)
    }

    /// Keeps the M4 columns of the frame's views on the GPU for
    /// [`read_columns`](TimeSeries::read_columns) (tests and tools).
    pub fn set_keep_columns(&mut self, keep: bool) {
        self.mirrors.set_keep_columns(keep);
    }

    /// The M4 columns series `i` was drawn from by the last frame run (blocking; tests and tools,
    /// with [`set_keep_columns`](TimeSeries::set_keep_columns) on).
    ///
    /// # Errors
    ///
    /// The series was not drawn from the GPU, columns are not kept, or the read failed.
    pub fn read_columns(&self, gpu: &Gpu, i: usize) -> Result<Vec<Column>, String> {
        self.mirrors.read_columns(gpu, i)
    }

    /// Bytes of samples the last frame staged from the host into the mirrors (none for a
    /// `--share` window).
    pub fn staged_bytes(&self) -> u64 {
        self.mirrors.uploaded_bytes
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
                self.date_format = date_format_of(&source);
                self.source = source;
                self.selection = Some((sel, pacing));
                self.window_s = self.saved_window().unwrap_or(DEFAULT_WINDOW_S);
                self.paused_range = (0.0, self.window_s);
                self.store.clear();
                self.share.generation += 1;
                self.visible.clear();
                self.latency = None;
                self.unpresented.clear();
                self.follow = true;
                self.fitted_whole = false;
                self.fixed_y = None;
                self.open_error = None;
                Ok(())
            }
            Err(e) => {
                self.open_error = Some(e.to_string());
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

    /// The audio input charted by [`own_audio`](Self::own_audio) (default: the default input
    /// device); takes effect the next time it is switched on.
    pub fn set_audio_input(&mut self, sel: AudioSelection, options: AudioOptions) {
        self.audio_input = (sel, options);
        self.audio = None;
    }

    /// Opens, advances and drains the audio input of [`own_audio`](Self::own_audio) and stores
    /// the level of every whole block.
    fn ingest_audio(&mut self) {
        if !(self.own_audio && self.source.is_clocked()) {
            self.audio = None;
            return;
        }
        if self.audio.is_none() {
            let (sel, options) = &self.audio_input;
            match AudioSource::open_with(sel, crate::audio::DEFAULT_RING_CAPACITY, options) {
                Ok(source) => {
                    let rate = source.sample_rate().max(1) as f64;
                    self.audio = Some(AudioLevel {
                        source,
                        start: self.scene_time,
                        samples: 0,
                        block: ((rate * AUDIO_LEVEL_BLOCK_S).round() as usize).max(1),
                        pending: Vec::new(),
                    });
                    self.audio_note = None;
                }
                Err(e) => {
                    self.audio_note = Some(format!("audio level: {e}"));
                    self.own_audio = false;
                    return;
                }
            }
        }
        let Some(a) = &mut self.audio else {
            return;
        };
        a.source.advance_to(self.scene_time - a.start);
        a.source.drain_into(&mut a.pending);
        let gap = a.source.gap_samples();
        if gap > 0 {
            // Samples before a gap that do not fill a block are dropped with it.
            a.samples += gap + a.pending.len() as u64;
            a.pending.clear();
        }
        let rate = a.source.sample_rate().max(1) as f64;
        let index = self.store.ensure(OWN_AUDIO_SERIES);
        let whole = a.pending.len() / a.block * a.block;
        for block in a.pending[..whole].chunks_exact(a.block) {
            let t = a.start + a.samples as f64 / rate;
            self.store.push(index, t, block_level_db(block) as f32);
            a.samples += a.block as u64;
        }
        a.pending.drain(..whole);
    }

    /// The view drawn by the last frame.
    pub fn view(&self) -> Option<View> {
        self.view
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
        &self.markers
    }

    /// Notices about how the data is drawn, one line each (empty when there is nothing to say):
    /// value cells beyond the f32 range that were clamped, rows out of time order that the
    /// source sorted into place, and series still holding samples out of time order (late by
    /// more than a batch of rows; drawn in time order: the CPU M4 path picks each column's first
    /// and last sample by time), and rows or messages refused by the series cap. Shown over the chart (through [`Scene::problem`]) and listed in the report.
    pub fn notices(&self) -> Vec<String> {
        let mut out = Vec::new();
        let skipped = self.source.rows_skipped();
        if skipped > 0 {
            let first = self.source.warning().unwrap_or_default();
            out.push(format!(
                "{skipped} row(s) not read, the others charted; first: {first}"
            ));
        }
        let clamped = self.source.values_clamped();
        if clamped > 0 {
            let first = self.source.clamp_note().unwrap_or_default();
            out.push(format!(
                "{clamped} value(s) beyond the f32 range (±3.4e38) clamped to ±3.4e38; first: {first}"
            ));
        }
        let sorted = self.source.rows_sorted();
        if sorted > 0 {
            out.push(format!(
                "{sorted} row(s) earlier than the row before them: sorted into place by time"
            ));
        }
        let refused = self.source.series_refused();
        if refused > 0 {
            out.push(format!(
                "{refused} row(s) or message(s) of further series not shown: a source starts at \
                 most {} series",
                crate::series::source::MAX_SERIES
            ));
        }
        let late: Vec<&Series> = self
            .store
            .series()
            .iter()
            .filter(|s| s.out_of_order() > 0)
            .collect();
        if !late.is_empty() {
            let total: u64 = late.iter().map(|s| s.out_of_order()).sum();
            let names: Vec<String> = late
                .iter()
                .take(3)
                .map(|s| format!("'{}'", s.name))
                .collect();
            let more = if late.len() > 3 { ", …" } else { "" };
            out.push(format!(
                "{total} sample(s) earlier than the sample before them in {}{more}: drawn in time order",
                names.join(", ")
            ));
        }
        out
    }

    /// The chart origin: the origin of the first series (absolute seconds, and nanoseconds when
    /// that series was fed integer nanoseconds).
    fn chart_origin(&self) -> Option<(f64, Option<i64>)> {
        let s = self.store.series().first()?;
        Some((s.origin()?, s.origin_ns()))
    }

    /// Seconds from the chart origin to the origin of `s`.
    fn offset_of(&self, s: &Series) -> f64 {
        match (self.chart_origin(), s.origin(), s.origin_ns()) {
            (Some((_, Some(c))), _, Some(o)) => (o as i128 - c as i128) as f64 * 1e-9,
            (Some((c, _)), Some(o), _) => o - c,
            _ => 0.0,
        }
    }

    /// Time range of the stored data, chart-relative.
    fn data_range(&self) -> Option<(f64, f64)> {
        self.store
            .series()
            .iter()
            .filter_map(|s| {
                let off = self.offset_of(s);
                s.time_range_rel().map(|(a, b)| (a + off, b + off))
            })
            .reduce(|(a0, a1), (b0, b1)| (a0.min(b0), a1.max(b1)))
    }

    /// Once a file has been read to its end, shows it whole ([`fit_all`](Self::fit_all)); once,
    /// so a later zoom or pan stays the user's.
    fn fit_whole_file(&mut self) {
        if self.fitted_whole || self.source.is_clocked() || !self.source.is_finished() {
            return;
        }
        self.fitted_whole = true;
        if self.live_key().is_none() {
            self.fit_all();
        }
    }

    /// *Fit all* (Home): the time axis over every stored sample and the value axis automatic.
    /// A source that has delivered everything (a file read to its end) is shown whole, paused,
    /// over [`fitted_range`]; a source still delivering follows its newest data with a window
    /// as wide as everything received ([`fitted_range`]'s width); a `--share` window is shown
    /// whole. Nothing stored yet: following at the current width.
    pub fn fit_all(&mut self) {
        self.fixed_y = None;
        self.box_start = None;
        self.box_end = None;
        let range = self.data_range();
        match range {
            Some((a, b)) if self.shared.is_none() => {
                let (t0, t1) = fitted_range(a, b);
                self.window_s = (t1 - t0).clamp(1e-6, 3.2e9);
                if self.source.is_finished() || self.share.following {
                    self.follow = false;
                    self.paused_range = (t0, t1);
                } else {
                    self.follow = true;
                }
            }
            _ => self.follow = true,
        }
    }

    /// The key under which the following window of the source shown is kept between runs:
    /// a network source's URL, `synthetic` for the synthetic signals; `None` for files (always
    /// shown fitted), followers and `--share` windows.
    pub fn live_key(&self) -> Option<String> {
        match &self.selection {
            Some((SeriesSelection::Net(o), _)) => Some(o.url.clone()),
            Some((SeriesSelection::Synthetic { .. }, _)) => Some("synthetic".to_string()),
            _ => None,
        }
    }

    /// The window kept for the source shown ([`live_key`](Self::live_key)), if any.
    fn saved_window(&self) -> Option<f64> {
        self.windows.get(&self.live_key()?).copied()
    }

    /// Keeps the current following window for the live source shown (at most
    /// [`WINDOWS_KEPT`] sources: another one is forgotten to make room).
    fn remember_window(&mut self) {
        let Some(key) = self.live_key() else {
            return;
        };
        self.windows.insert(key.clone(), self.window_s);
        while self.windows.len() > WINDOWS_KEPT {
            let Some(other) = self.windows.keys().find(|k| **k != key).cloned() else {
                break;
            };
            self.windows.remove(&other);
        }
    }

    /// Takes in what the source (and the audio input) delivered, and notes in `redraw_due`
    /// whether it changes the image ([`redraw::arrivals_redraw`] on the samples that arrived;
    /// also a first series, the view fitted, the source's error or connection state changed).
    fn take_input(&mut self) {
        let series_before = self.store.series().len();
        let link_before = self.source.link().map(|l| l.state);
        let error_before = self.source.error().is_some();
        let fitted_before = self.fitted_whole;
        self.ends.clear();
        self.ends
            .extend(self.store.series().iter().map(Series::end_index));
        self.source.drain_into(&mut self.store);
        self.source.take_message_times(&mut self.unpresented);
        self.fit_whole_file();
        self.ingest_audio();
        self.visible.resize(self.store.series().len(), true);
        let changed = self.store.series().len() != series_before
            || self.fitted_whole != fitted_before
            || self.source.error().is_some() != error_before
            || self.source.link().map(|l| l.state) != link_before;
        if changed {
            self.redraw_due = true;
        }
        if self.redraw_due || self.animating() {
            // Drawn anyway: no need to look at what arrived.
            return;
        }
        let mut arrived = None;
        for (i, s) in self.store.series().iter().enumerate() {
            if !self.visible.get(i).copied().unwrap_or(true) {
                continue;
            }
            let from = self.ends.get(i).copied().unwrap_or(0);
            arrived = redraw::union(arrived, redraw::arrived_range(s, from, self.offset_of(s)));
        }
        let view = self.view.map(|v| (v.t0, v.t1));
        self.redraw_due = redraw::arrivals_redraw(view, self.follow, arrived);
    }

    /// The start of [`Scene::prepare`] (of either data flow): the frame's size (at least 1×1)
    /// kept and returned; the last frame's view, points in view, notes, host draws and markers
    /// cleared.
    fn begin_prepare(&mut self, frame: &FrameCtx) -> (u32, u32) {
        let (width, height) = (frame.size.0.max(1), frame.size.1.max(1));
        self.size = (width, height);
        // This frame draws what was taken in.
        self.redraw_due = false;
        self.points_in_view = 0;
        self.view = None;
        self.gpu_notes.clear();
        self.host.clear();
        self.markers.clear();
        (width, height)
    }

    /// The time window of this frame (chart-relative seconds).
    fn time_window(&self) -> Option<(f64, f64)> {
        if !self.follow {
            return Some(self.paused_range);
        }
        let (start, end) = self.data_range()?;
        let w = self.window_s.max(1e-12);
        // Roll mode: the data fills the window from the left, then scrolls.
        let t1 = (end + w * 1e-9).max(start + w);
        Some((t1 - w, t1))
    }

    /// What the crosshair writes for the time of a sample of series `i` at time `tr` relative to
    /// that series' origin ([`axis::exact_time`]: in the file's date format, ISO 8601 to the
    /// column's unit for Parquet / Arrow dates and timestamps, else the wall clock or seconds);
    /// empty for a series not stored.
    pub fn readout_time(&self, i: usize, tr: f64) -> String {
        self.store.series().get(i).map_or_else(String::new, |s| {
            axis::exact_time(s, tr, self.zone, self.date_format.as_ref())
        })
    }

    /// Formats chart-relative time `t` for labels (see [`axis::format_time`]).
    pub fn format_time(&self, t: f64, step: f64) -> String {
        axis::format_time(self.chart_origin(), t, step, self.zone)
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
        self.redraw_due
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
        self.redraw_due
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
        if !self.unpresented.is_empty() {
            // The present's wall-clock time: now, less how long ago it was.
            let now_ns = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as i64);
            let present_ns = now_ns.saturating_sub(at.elapsed().as_nanos() as i64);
            if self.latency.is_none() {
                self.latency = latency::Latency::new();
            }
            if let Some(latency) = &mut self.latency {
                for &t in &self.unpresented {
                    latency.record(present_ns, t);
                }
            }
            self.unpresented.clear();
        }
        if let Some(prev) = self.last_presented
            && self.own_signals
            && self.source.is_clocked()
        {
            let ms = at.saturating_duration_since(prev).as_secs_f64() * 1e3;
            let i = self.store.ensure(OWN_FRAME_SERIES);
            self.store.push(i, self.scene_time, ms as f32);
        }
        self.last_presented = Some(at);
    }

    fn prepare(&mut self, gpu: &mut GpuFrame<'_>, frame: &FrameCtx) {
        if self.shared.is_some() {
            self.prepare_shared(gpu, frame);
            return;
        }
        let (width, height) = self.begin_prepare(frame);
        let window = self.time_window();
        // Value range: fixed, or the finite values in view (±inf and NaN excluded).
        let (lo, hi) = match (self.fixed_y, window) {
            (Some(r), _) => r,
            (None, None) => (-1.0, 1.0),
            (None, Some((t0, t1))) => {
                let mut lo = f64::INFINITY;
                let mut hi = f64::NEG_INFINITY;
                for (i, s) in self.store.series().iter().enumerate() {
                    if !self.visible.get(i).copied().unwrap_or(true) {
                        continue;
                    }
                    let off = self.offset_of(s);
                    if let Some((a, b)) = s.value_range_rel(t0 - off, t1 - off) {
                        lo = lo.min(a as f64);
                        hi = hi.max(b as f64);
                    }
                }
                axis::padded_range(lo, hi)
            }
        };
        if let Some((t0, t1)) = window {
            self.view = Some(View { t0, t1, lo, hi });
        }
        self.mirrors
            .begin_views(width, &ViewUniform::new(lo, hi, width, height, 0));
        // Samples in view of the series the sparse rule dots (all theirs), against the budget.
        let sparse_dots: u64 = match window {
            Some((t0, t1)) => self
                .store
                .series()
                .iter()
                .enumerate()
                .filter(|&(i, s)| self.visible.get(i).copied().unwrap_or(true) && s.is_ordered())
                .map(|(_, s)| {
                    let off = self.offset_of(s);
                    s.partition_index(|t| t < t1 - off) - s.partition_index(|t| t < t0 - off)
                })
                .filter(|&n| n < width as u64)
                .sum(),
            None => 0,
        };
        let dot_sparse = sparse_dots <= MARKER_BUDGET as u64;
        if !dot_sparse {
            self.gpu_notes.push(format!(
                "{sparse_dots} samples in view of series sparser than the chart's pixels: not \
                 dotted (more than {MARKER_BUDGET} dots)"
            ));
        }
        for i in 0..self.store.series().len() {
            let s = &self.store.series()[i];
            // Keep the mirror current even while hidden or out of view, so showing it is cheap.
            let synced = self.mirrors.sync(gpu, &self.pipes, i, s);
            let Some((t0, t1)) = window else {
                continue;
            };
            if !self.visible.get(i).copied().unwrap_or(true) {
                continue;
            }
            let off = self.offset_of(s);
            let (r0, r1) = (t0 - off, t1 - off);
            let in_view = s.partition_index(|t| t < r1) - s.partition_index(|t| t < r0);
            self.marker_scratch.clear();
            if dot_sparse || !s.is_ordered() || in_view >= width as u64 {
                markers::marker_samples(s, r0, r1, width, &mut self.marker_scratch);
            }
            let room = MARKER_BUDGET.saturating_sub(self.markers.len());
            self.markers.extend(
                self.marker_scratch
                    .iter()
                    .take(room)
                    .map(|&(t, value)| Marker {
                        series: i,
                        t: t + off,
                        value,
                    }),
            );
            let color = series_color(i);
            let order = i as u32;
            let result = synced.and_then(|()| {
                self.mirrors
                    .add_view(&self.pipes, i, s, (r0, r1), color, order)
            });
            match result {
                Ok(()) => self.points_in_view += in_view,
                Err(e) => {
                    if !matches!(e, GpuM4Error::Unordered { .. }) {
                        self.gpu_notes.push(e.to_string());
                    }
                    decimate_m4_rel(s, r0, r1, width as usize, &mut self.columns);
                    self.points_in_view += self.columns.iter().map(|c| c.count as u64).sum::<u64>();
                    let (spans, conns) = gpu::column_segments(&self.columns);
                    let vu = ViewUniform::new(lo, hi, width, height, color);
                    self.host
                        .push(HostDraw::new(gpu, &self.pipes, &vu, order, &spans, &conns));
                }
            }
        }
        self.mirrors.upload(gpu, &self.pipes, self.store.series());
    }

    fn compute(&mut self, pass: &mut wgpu::ComputePass<'_>, _frame: &FrameCtx) {
        // The new samples of every series into place, the pyramid nodes they complete, and the
        // M4 pass of every series drawn from its mirror, batched; recorded inside the frame's
        // timed compute pass, and done once recorded (the deck submits this frame). A shared
        // window is written into its mirrors first.
        if let Some(input) = &mut self.shared {
            input.encode(pass, &self.mirrors);
        }
        self.mirrors.encode(&self.pipes, pass);
        self.mirrors.builds_submitted();
    }

    fn recreate_gpu(&mut self, gpu: &Gpu) -> Result<(), SceneError> {
        // The store, the view and the sources live on the CPU; the mirrors are rebuilt from the
        // store by the next `prepare` (every stored sample uploaded again).
        self.pipes = Pipelines::for_gpu(gpu);
        self.mirrors = Mirrors::new();
        self.host.clear();
        if let Some(old) = self.shared.take() {
            // The shared memory went with the device: the old producer's socket is closed, and
            // a new buffer is offered on the same path.
            let (path, shape) = (old.path().to_path_buf(), old.shape());
            drop(old);
            match shared::SharedSeries::new(gpu, &self.pipes, &path, shape) {
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
        self.mirrors.paint(&self.pipes, pass);
        for h in &self.host {
            h.paint(&self.pipes, pass);
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
        let skipped = self.source.rows_skipped();
        let series: Vec<_> = self
            .store
            .series()
            .iter()
            .map(|s| {
                serde_json::json!({
                    "name": s.name,
                    "points": s.points_ingested(),
                    "gaps": s.gaps(),
                    "rows_skipped": skipped,
                    "out_of_order": s.out_of_order(),
                    "dropped": s.dropped(),
                    "stored": s.len(),
                    "time_range_s": s.time_range(),
                    // Finite values stored: [min, max].
                    "value_range": s
                        .time_range_rel()
                        .and_then(|(lo, _)| s.value_range_rel(lo, f64::INFINITY)),
                })
            })
            .collect();
        let gpu_bytes = self.mirrors.gpu_bytes();
        serde_json::json!({
            "source": self.source.label(),
            "warning": self.source.warning(),
            "series_count": self.store.series().len(),
            "series": series,
            "points_ingested": self.store.points_ingested(),
            "points_drawn": self.points_in_view,
            "rows_skipped": skipped,
            "values_clamped": self.source.values_clamped(),
            "rows_sorted": self.source.rows_sorted(),
            "time_unit": self.source.time_unit().map(|u| u.symbol()),
            "time_format": self.source.time_format(),
            "series_key": self.source.series_key(),
            "time_zone": self.zone.name(),
            "publish_to_present_ms": self.latency.as_ref().map(latency::Latency::to_json),
            "link": self.source.link().map(|l| serde_json::json!({
                "state": l.state.to_string(),
                "messages": l.messages,
                "parse_errors": l.parse_errors,
                "first_errors": l.errors,
                "dropped_by_vizdeck": l.dropped,
                "lost_by_transport": l.transport_lost,
                "connects": l.connects,
                "time_base": self.source.link_time_base().map(|b| b.name()),
            })),
            "series_refused": self.source.series_refused(),
            "notices": self.notices(),
            "markers": self.markers.len(),
            "decimation": "gpu-m4-pyramid",
            "gpu_mirror_bytes": gpu_bytes,
            "gpu_mirror_pages": self.mirrors.pages(),
            "gpu_series_batched": self.mirrors.views(),
            "raster": self.pipes.raster.name(),
            "window_s": self.window_s,
            "follow": self.follow,
            "view": self.view.map(|v| serde_json::json!({
                "t0": v.t0, "t1": v.t1, "lo": v.lo, "hi": v.hi,
            })),
            "shared": self.shared.as_ref().map(shared::SharedSeries::metrics),
        })
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

    fn publish(&mut self, keyframe: bool) -> Option<crate::publish::protocol::Body> {
        self.publish_body(keyframe)
    }

    fn follow(&mut self, publisher: u64, body: crate::publish::protocol::Body, attached: bool) {
        self.follow_body(publisher, body, attached);
    }

    fn problem(&self) -> Option<String> {
        if let Some(input) = &self.shared {
            let lines: Vec<String> = input
                .notice()
                .into_iter()
                .chain(self.gpu_notes.iter().cloned())
                .collect();
            return (!lines.is_empty()).then(|| lines.join("\n"));
        }
        self.source.error().or_else(|| {
            let notices = self.notices();
            (!notices.is_empty()).then(|| notices.join("\n"))
        })
    }
}
