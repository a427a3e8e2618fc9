//! Spectrogram: audio (live input, a sound file or the synthetic signals) → STFT columns in
//! dBFS → a scrolling ring texture → drawn with a linear, log or mel frequency axis and a
//! perceptual colormap. Axes (Hz, seconds), hover readout, spectrum view with peak hold, freeze
//! with scrollback and export are drawn or handled by egui.
//!
//! The STFT runs on the GPU ([`crate::gpu::fft::GpuFft`]: every hop that arrived since the last
//! frame in one batched dispatch) or on the CPU ([`crate::audio::stft::Stft`]), switchable
//! at run time; both compute the same dBFS definition, so both give the same image. The GPU
//! path's levels come back to the CPU through the deck's shared asynchronous readback ring (1–3
//! frames late) for the hover readout, spectrum view, metrics and CSV export.

pub mod axis;
pub(crate) mod layout;

use std::collections::VecDeque;
use std::path::PathBuf;

use bytemuck::{Pod, Zeroable};

use super::{FrameCtx, Scene, SceneConfig, SceneError};
use crate::audio::stft::{self, Stft, WindowKind};
use crate::audio::{AudioOptions, AudioSelection, AudioSource, ChannelChoice, SynthSignal};
use crate::gpu::fft::GpuFft;
use crate::gpu::readback::{Arrived, ReadbackRing, Tag};
use crate::gpu::upload::PingPong;
use crate::gpu::{Gpu, shaders};
use axis::{FreqAxis, FreqScale, format_hz, nice_step, note_name};

/// Samples in the audio ring between the source and the analysis.
const RING_SAMPLES: usize = 1 << 21;
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
    /// WGSL compute FFT, batched.
    #[default]
    Gpu,
    /// On the CPU ([`crate::audio::stft::Stft`]: rustfft of N/2 + real split; the reference).
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
            fft_on: FftOn::Gpu,
            export_csv: None,
        }
    }
}

/// Colormaps offered (all perceptual except grayscale), from the `colorous` crate.
pub const COLORMAPS: &[(&str, colorous::Gradient)] = &[
    ("inferno", colorous::INFERNO),
    ("viridis", colorous::VIRIDIS),
    ("magma", colorous::MAGMA),
    ("turbo", colorous::TURBO),
    ("grayscale", colorous::GREYS),
];

/// 256 RGBA8 entries packed little-endian (R in the low byte), as `unpack4x8unorm` reads them.
/// Grayscale is reversed so that loud is white.
pub fn colormap_lut(index: usize) -> [u32; 256] {
    let (name, g) = COLORMAPS[index.min(COLORMAPS.len() - 1)];
    std::array::from_fn(|i| {
        let i = if name == "grayscale" { 255 - i } else { i };
        let c = g.eval_rational(i, 256);
        u32::from_le_bytes([c.r, c.g, c.b, 255])
    })
}

/// Texture rows for `bins` bins: all of them up to [`MAX_ROWS`] and the texture limit.
pub fn rows_for(bins: usize, max_texture: u32) -> u32 {
    (bins as u32).min(MAX_ROWS).min(max_texture).max(1)
}

/// Ring texture width for ≥ [`SCROLLBACK_S`] seconds of columns, within the limits.
pub fn ring_width_for(sample_rate: u32, hop: usize, max_texture: u32) -> u32 {
    let cols = (SCROLLBACK_S * sample_rate.max(1) as f64 / hop.max(1) as f64).ceil() as u32;
    cols.clamp(64, MAX_RING_WIDTH.min(max_texture))
}

#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct WriteParams {
    bins: u32,
    rows: u32,
    new_cols: u32,
    write_start: u32,
    ring_width: u32,
    first_col: u32,
    _pad: [u32; 2],
}

#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct DrawParams {
    ring_width: u32,
    newest: u32,
    visible: u32,
    rows: u32,
    bins: u32,
    scale: u32,
    width_px: f32,
    height_px: f32,
    nyquist: f32,
    f_lo: f32,
    db_floor: f32,
    db_ceil: f32,
    filled: u32,
    _pad: [u32; 3],
}

/// The FFT-size-dependent GPU objects (rebuilt when the analysis settings change).
struct Analysis {
    settings: Settings,
    bins: usize,
    cpu: Stft,
    gpu: Option<GpuFft>,
    /// GPU path: samples not yet consumed by a column (start = next column's first sample).
    tail: Vec<f32>,
    /// GPU path: frames of this batch (batch × N), uploaded in `prepare`.
    frames: Vec<f32>,
    batch: u32,
    /// Ring texture.
    ring_view: wgpu::TextureView,
    ring_width: u32,
    rows: u32,
    /// CPU path: new columns to upload (n × bins).
    upload: PingPong,
    write_params: PingPong,
    /// [slot] for the CPU path (reads `upload`), one for the GPU path (reads the FFT output).
    write_groups_cpu: Option<(u64, [wgpu::BindGroup; 2])>,
    write_groups_gpu: Option<[wgpu::BindGroup; 2]>,
    draw_groups: [wgpu::BindGroup; 2],
    /// Columns of this frame's GPU batch still to be copied into the shared readback ring.
    copy_pending: u32,
    /// Written (ring) index of that batch's first column; `None` when it is not written (view
    /// frozen): its levels then feed only the metrics, not the history.
    copy_written: Option<u64>,
}

/// The spectrogram scene.
pub struct Spectrogram {
    source: AudioSource,
    a: Analysis,
    // Pipelines and layouts (independent of the FFT size).
    write_layout: wgpu::BindGroupLayout,
    write_pipeline: wgpu::ComputePipeline,
    draw_layout: wgpu::BindGroupLayout,
    draw_pipeline: wgpu::RenderPipeline,
    draw_params: PingPong,
    lut: wgpu::Buffer,
    // Per-frame state
    scene_time: f64,
    scratch: Vec<f32>,
    column: Vec<f32>,
    /// CPU path: this frame's new columns (n × bins).
    pending: Vec<f32>,
    pending_cols: u32,
    write_cols: u32,
    write_start: u32,
    // Totals
    columns_total: u64,
    /// Columns written into the ring (the display's clock).
    written: u64,
    samples_total: u64,
    samples_skipped: u64,
    columns_skipped: u64,
    /// CPU copy of what is shown: full-resolution columns by written index.
    history: ColumnHistory,
    /// Bumped whenever the history is reset: GPU readbacks tagged with an older value are stale.
    history_gen: u8,
    recent: VecDeque<Vec<f32>>,
    peak_hold: Vec<f32>,
    // View
    db_floor: f32,
    db_ceil: f32,
    colormap: usize,
    lut_dirty: bool,
    scale: FreqScale,
    frozen: bool,
    view_back: u64,
    cols_per_px: f32,
    show_spectrum: bool,
    hover: Option<String>,
    hover_pos: Option<egui::Pos2>,
    drag_acc: f32,
    width_px: u32,
    settings_ui: Settings,
    error: Option<String>,
    /// [`Spectrogram::dominant`] of the current `recent` columns, once computed.
    dominant_cache: std::cell::Cell<Option<Option<(f64, f64)>>>,
    options: AudioOptions,
    /// Samples drained from the source so far (analysed or skipped).
    drained_total: u64,
    /// Samples of missing input (gaps) counted into the timeline so far: the stream position of
    /// drained sample j is `j + gap_total`.
    gap_total: u64,
    /// Stream position (samples) of the first sample of the next column the STFT will produce.
    next_start: u64,
    /// The source's dropped-sample count (ring overflow) last seen: new drops are put into the
    /// timeline like a gap after the frame's drained samples.
    dropped_seen: u64,
    /// Stream position of the first column in `pending` / this frame's GPU batch (consecutive
    /// columns, one hop apart).
    pending_start: u64,
    /// Written-column index → stream position, as (first written index, start of that column)
    /// wherever the timeline jumps (the first frame, skipped columns, gaps, restarts); columns
    /// between entries are one hop apart. Entries older than the ring holds are dropped.
    starts: VecDeque<(u64, u64)>,
    /// Capture instant of the newest sample of the newest column written this frame.
    frame_capture: Option<std::time::Instant>,
    /// Capture-to-present latencies (ms), newest last.
    latencies: VecDeque<f64>,
    /// Gap columns to write this frame (input had no data).
    gap_cols: u32,
    /// This frame's columns come from the CPU (CPU FFT or gap columns).
    cpu_route: bool,
    devices: Vec<crate::audio::InputDeviceInfo>,
    file_path_ui: String,
    seek_ui: Option<f64>,
    /// A source change asked for in the UI, applied in `prepare` (which has the GPU).
    reopen_request: Option<(AudioSelection, AudioOptions)>,
    /// The [`Spectrogram::short_file_notice`] last logged, so each is logged once.
    short_notice_logged: Option<String>,
}

impl Spectrogram {
    /// Table constructor: opens the audio selection (errors name the input).
    pub fn create(gpu: &Gpu, cfg: &SceneConfig) -> Result<Box<dyn Scene>, SceneError> {
        let options = AudioOptions {
            channel: cfg.audio_channel,
            seed: cfg.seed,
            sample_format: None,
        };
        let source = AudioSource::open_with(&cfg.audio, RING_SAMPLES, &options)?;
        let mut s = Spectrogram::new(gpu, source, settings_from(cfg))?;
        s.options = options;
        Ok(Box::new(s))
    }

    /// Builds the scene around an opened source.
    pub fn new(
        gpu: &Gpu,
        source: AudioSource,
        settings: Settings,
    ) -> Result<Spectrogram, SceneError> {
        let device = &gpu.device;
        let write_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("spectrogram:ring_write:layout"),
            entries: &[
                uniform_entry(0, wgpu::ShaderStages::COMPUTE),
                storage_entry(1, wgpu::ShaderStages::COMPUTE),
                wgpu::BindGroupLayoutEntry {
                    binding: 2,
                    visibility: wgpu::ShaderStages::COMPUTE,
                    ty: wgpu::BindingType::StorageTexture {
                        access: wgpu::StorageTextureAccess::WriteOnly,
                        format: wgpu::TextureFormat::R32Float,
                        view_dimension: wgpu::TextureViewDimension::D2,
                    },
                    count: None,
                },
            ],
        });
        let write_pl = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("spectrogram:ring_write:pipeline_layout"),
            bind_group_layouts: &[Some(&write_layout)],
            immediate_size: 0,
        });
        let write_module = shaders::SPECTROGRAM_RING_WRITE.module(device);
        let write_pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some("spectrogram:ring_write"),
            layout: Some(&write_pl),
            module: &write_module,
            entry_point: Some("main"),
            compilation_options: Default::default(),
            cache: None,
        });
        let draw_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("spectrogram:draw:layout"),
            entries: &[
                uniform_entry(0, wgpu::ShaderStages::FRAGMENT),
                wgpu::BindGroupLayoutEntry {
                    binding: 1,
                    visibility: wgpu::ShaderStages::FRAGMENT,
                    ty: wgpu::BindingType::Texture {
                        sample_type: wgpu::TextureSampleType::Float { filterable: false },
                        view_dimension: wgpu::TextureViewDimension::D2,
                        multisampled: false,
                    },
                    count: None,
                },
                storage_entry(2, wgpu::ShaderStages::FRAGMENT),
            ],
        });
        let draw_pl = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("spectrogram:draw:pipeline_layout"),
            bind_group_layouts: &[Some(&draw_layout)],
            immediate_size: 0,
        });
        let draw_pipeline = shaders::SPECTROGRAM_DRAW.render_pipeline(
            device,
            "spectrogram:draw",
            &draw_pl,
            &shaders::RenderOptions::default(),
        );
        let draw_params = PingPong::new(
            device,
            "spectrogram:draw_params",
            wgpu::BufferUsages::UNIFORM,
            std::mem::size_of::<DrawParams>() as u64,
        );
        let lut = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("spectrogram:lut"),
            size: 256 * 4,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let a = Analysis::new(
            gpu,
            &settings,
            source.sample_rate(),
            &write_layout,
            &draw_layout,
            &draw_params,
            &lut,
        )?;
        let bins = a.bins;
        let mut s = Spectrogram {
            source,
            a,
            write_layout,
            write_pipeline,
            draw_layout,
            draw_pipeline,
            draw_params,
            lut,
            scene_time: 0.0,
            scratch: Vec::with_capacity(1 << 16),
            column: vec![stft::DB_FLOOR; bins],
            pending: Vec::new(),
            pending_cols: 0,
            write_cols: 0,
            write_start: 0,
            columns_total: 0,
            written: 0,
            samples_total: 0,
            samples_skipped: 0,
            columns_skipped: 0,
            history: ColumnHistory::new(0, 1),
            history_gen: 0,
            recent: VecDeque::new(),
            peak_hold: vec![stft::DB_FLOOR; bins],
            db_floor: -120.0,
            db_ceil: 0.0,
            colormap: 0,
            lut_dirty: true,
            scale: FreqScale::Linear,
            frozen: false,
            view_back: 0,
            cols_per_px: 1.0,
            show_spectrum: true,
            hover: None,
            hover_pos: None,
            drag_acc: 0.0,
            width_px: 1,
            settings_ui: settings,
            error: None,
            short_notice_logged: None,
            dominant_cache: std::cell::Cell::new(None),
            options: AudioOptions::default(),
            drained_total: 0,
            gap_total: 0,
            next_start: 0,
            dropped_seen: 0,
            pending_start: 0,
            starts: VecDeque::new(),
            frame_capture: None,
            latencies: VecDeque::new(),
            gap_cols: 0,
            cpu_route: false,
            devices: Vec::new(),
            file_path_ui: String::new(),
            seek_ui: None,
            reopen_request: None,
        };
        s.reset_history();
        Ok(s)
    }

    fn reset_history(&mut self) {
        self.history_gen = self.history_gen.wrapping_add(1);
        let cap = (self.a.ring_width as usize)
            .min(HISTORY_VALUES / self.a.bins.max(1))
            .max(1);
        self.history = ColumnHistory::new(self.written, cap);
        self.recent.clear();
        self.dominant_cache.set(None);
        self.peak_hold = vec![stft::DB_FLOOR; self.a.bins];
        self.column = vec![stft::DB_FLOOR; self.a.bins];
    }

    /// Applies new analysis settings (FFT size, hop, window, FFT place): rebuilds the size-
    /// dependent GPU objects and starts a new history. Errors leave the old settings running.
    pub fn apply_settings(&mut self, gpu: &Gpu, settings: Settings) -> Result<(), SceneError> {
        let a = Analysis::new(
            gpu,
            &settings,
            self.source.sample_rate(),
            &self.write_layout,
            &self.draw_layout,
            &self.draw_params,
            &self.lut,
        )?;
        self.a = a;
        self.written = 0;
        self.starts.clear();
        self.next_start = self.drained_total + self.gap_total;
        self.columns_total = 0;
        self.pending.clear();
        self.pending_cols = 0;
        self.write_cols = 0;
        self.view_back = 0;
        self.reset_history();
        Ok(())
    }

    /// Current analysis settings.
    pub fn settings(&self) -> &Settings {
        &self.a.settings
    }

    /// Columns per second of audio: sample rate / hop.
    fn columns_per_second(&self) -> f64 {
        self.source.sample_rate() as f64 / self.a.settings.hop as f64
    }

    /// Time in seconds of the centre of written (shown) column `w`: (start + N/2) / sample rate,
    /// where start is the stream position of the column's first sample (samples since the source
    /// started, gaps counted as the time they lasted). Columns that were analysed but never
    /// shown (more than [`MAX_BATCH`] in one frame, a backlog after a pause) leave a jump in
    /// time, not a shift. Columns older than the ring are extrapolated one hop apart.
    pub fn column_time(&self, w: u64) -> f64 {
        let hop = self.a.settings.hop as u64;
        // The last frame entry at or before w.
        let at = self.starts.partition_point(|(first, _)| *first <= w);
        let start = match at.checked_sub(1).and_then(|i| self.starts.get(i)) {
            Some(&(first, start)) => start + (w - first) * hop,
            None => match self.starts.front() {
                Some(&(first, start)) => start.saturating_sub((first - w) * hop),
                None => w * hop,
            },
        };
        (start as f64 + self.a.settings.fft_size as f64 / 2.0) / self.source.sample_rate() as f64
    }

    /// Dominant frequency (Hz) and its level (dBFS) over the last second of columns: the bin with
    /// the largest mean power, and the tone level around it from the power-averaged column
    /// ([`stft::tone_level_db_with`]: the window's ENBW compensated, so it does not depend on
    /// where the tone falls between bins). `None` before the first column.
    pub fn dominant(&self) -> Option<(f64, f64)> {
        // The side panel asks every frame; recompute only after new columns arrived.
        if let Some(d) = self.dominant_cache.get() {
            return d;
        }
        let d = self.compute_dominant();
        self.dominant_cache.set(Some(d));
        d
    }

    fn compute_dominant(&self) -> Option<(f64, f64)> {
        if self.recent.is_empty() {
            return None;
        }
        let mut mean = vec![0f64; self.a.bins];
        for col in &self.recent {
            for (m, db) in mean.iter_mut().zip(col) {
                *m += 10f64.powf(*db as f64 / 10.0);
            }
        }
        let n = self.recent.len() as f64;
        let mean_db: Vec<f32> = mean
            .iter()
            .map(|p| ((10.0 * (p / n).log10()) as f32).max(stft::DB_FLOOR))
            .collect();
        let (k, _) = stft::dominant(&mean_db);
        let hz = k as f64 * self.source.sample_rate() as f64 / self.a.settings.fft_size as f64;
        Some((
            hz,
            stft::tone_level_db_with(&mean_db, k, self.a.settings.window) as f64,
        ))
    }

    /// The audio source.
    pub fn source(&self) -> &AudioSource {
        &self.source
    }

    /// Every column kept in the history (what the panel shows; full resolution), oldest first,
    /// with the centre time of each in seconds. An empty slice is a column shown whose levels
    /// have not come back (yet) from the GPU.
    pub fn history(&self) -> impl Iterator<Item = (f64, &[f32])> + '_ {
        self.history
            .iter()
            .map(move |(w, c)| (self.column_time(w), c))
    }

    /// Writes the history as CSV: header `time_s,<bin Hz>...`, one row per column with its centre
    /// time and the dBFS of every bin, exactly the values the panel shows.
    pub fn export_csv(&self, path: &std::path::Path) -> Result<usize, SceneError> {
        let err =
            |e: String| SceneError::Other(format!("spectrogram export '{}': {e}", path.display()));
        let mut w = csv::Writer::from_path(path).map_err(|e| err(e.to_string()))?;
        let sr = self.source.sample_rate() as f64;
        let n = self.a.settings.fft_size as f64;
        let mut header = vec!["time_s".to_string()];
        header.extend((0..self.a.bins).map(|k| format!("{}", k as f64 * sr / n)));
        w.write_record(&header).map_err(|e| err(e.to_string()))?;
        let mut rows = 0;
        let bins = self.a.bins;
        for (t, col) in self.history() {
            let mut rec = Vec::with_capacity(bins + 1);
            rec.push(format!("{t}"));
            if col.is_empty() {
                // A column shown but whose levels never came back (readback ring full).
                rec.extend(std::iter::repeat_n("NaN".to_string(), bins));
            }
            rec.extend(col.iter().map(|v| {
                if *v <= GAP_DB {
                    "NaN".to_string()
                } else {
                    format!("{v}")
                }
            }));
            w.write_record(&rec).map_err(|e| err(e.to_string()))?;
            rows += 1;
        }
        w.flush().map_err(|e| err(e.to_string()))?;
        Ok(rows)
    }

    /// Feeds one analysed column to the metrics (last second, peak hold) and, when it was
    /// written to the ring as column `written`, puts it into the history at that index. Columns
    /// may arrive out of order (the GPU path's readbacks land 1–3 frames late, after gap columns
    /// of later frames): missing ones are held by empty placeholders until they arrive (export:
    /// NaN rows if they never do).
    fn push_history(&mut self, col: &[f32], written: Option<u64>) {
        // Metrics: the last second.
        let keep_recent = self.columns_per_second().ceil().max(1.0) as usize;
        push_recycled(&mut self.recent, keep_recent, col);
        self.dominant_cache.set(None);
        for (p, v) in self.peak_hold.iter_mut().zip(col) {
            *p = p.max(*v);
        }
        if let Some(w) = written {
            self.history.place(w, col);
        }
    }

    fn axis(&self) -> FreqAxis {
        FreqAxis::new(
            self.scale,
            self.source.sample_rate(),
            self.a.settings.fft_size,
        )
    }

    /// Columns across the viewport.
    fn visible(&self) -> u32 {
        ((self.width_px.max(1) as f32 * self.cols_per_px).round() as u32)
            .clamp(1, self.a.ring_width)
    }
}

/// The columns the panel shows, kept on the CPU at full resolution for the readout, the spectrum
/// view and the export, by written (ring) index: slots `first..first + len`, at most `cap`, the
/// oldest dropped first. Columns may arrive out of order (the GPU path's levels come back 1–3
/// frames late, after gap columns of later frames were placed): a slot not filled yet is empty.
#[derive(Debug, Default)]
struct ColumnHistory {
    slots: VecDeque<Vec<f32>>,
    first: u64,
    cap: usize,
}

impl ColumnHistory {
    /// Empty, starting at written index `first`, holding at most `cap` (≥ 1) columns.
    fn new(first: u64, cap: usize) -> ColumnHistory {
        ColumnHistory {
            slots: VecDeque::new(),
            first,
            cap: cap.max(1),
        }
    }

    /// One past the newest slot.
    fn end(&self) -> u64 {
        self.first + self.slots.len() as u64
    }

    /// Puts column `w`: fills its slot if held (a late arrival), appends it after empty slots for
    /// any columns between, or ignores it if older than the oldest slot.
    fn place(&mut self, w: u64, col: &[f32]) {
        if w < self.first {
            return;
        }
        if w < self.end() {
            let slot = &mut self.slots[(w - self.first) as usize];
            slot.clear();
            slot.extend_from_slice(col);
            return;
        }
        if w - self.end() >= self.cap as u64 {
            self.slots.clear();
            self.first = w;
        }
        while self.end() < w {
            self.push(&[]);
        }
        self.push(col);
    }

    fn push(&mut self, col: &[f32]) {
        if push_recycled(&mut self.slots, self.cap, col) {
            self.first += 1;
        }
    }

    /// Column `w` if held and filled.
    fn get(&self, w: u64) -> Option<&[f32]> {
        let i = usize::try_from(w.checked_sub(self.first)?).ok()?;
        self.slots
            .get(i)
            .map(Vec::as_slice)
            .filter(|c| !c.is_empty())
    }

    /// Every slot, oldest first, with its written index (empty = not arrived).
    fn iter(&self) -> impl Iterator<Item = (u64, &[f32])> + '_ {
        (self.first..).zip(self.slots.iter().map(Vec::as_slice))
    }
}

/// Appends a copy of `col` to `queue`, first dropping the oldest entry (its allocation reused)
/// when `queue` already holds `cap`; returns whether one was dropped.
fn push_recycled(queue: &mut VecDeque<Vec<f32>>, cap: usize, col: &[f32]) -> bool {
    let dropped = queue.len() >= cap;
    let mut v = if dropped {
        queue.pop_front().unwrap_or_default()
    } else {
        Vec::with_capacity(col.len())
    };
    v.clear();
    v.extend_from_slice(col);
    queue.push_back(v);
    dropped
}

/// Readback tag id of a GPU batch copy: `cols` (16 bits), the written index of its first column
/// (40 bits, all ones for "not written"), the history generation (8 bits).
fn copy_tag(generation: u8, written: Option<u64>, cols: u32) -> u64 {
    const NOT_WRITTEN: u64 = (1 << 40) - 1;
    let w = written.map_or(NOT_WRITTEN, |w| w.min(NOT_WRITTEN - 1));
    (u64::from(generation) << 56) | (w << 16) | u64::from(cols & 0xffff)
}

/// The parts of a [`copy_tag`]: (generation, written index of the first column, columns).
fn copy_tag_parts(id: u64) -> (u8, Option<u64>, usize) {
    let w = (id >> 16) & ((1 << 40) - 1);
    (
        (id >> 56) as u8,
        (w != (1 << 40) - 1).then_some(w),
        (id & 0xffff) as usize,
    )
}

fn settings_from(cfg: &SceneConfig) -> Settings {
    cfg.spectrogram.clone()
}

fn uniform_entry(binding: u32, visibility: wgpu::ShaderStages) -> wgpu::BindGroupLayoutEntry {
    crate::gpu::buffer_entry(binding, visibility, wgpu::BufferBindingType::Uniform)
}

fn storage_entry(binding: u32, visibility: wgpu::ShaderStages) -> wgpu::BindGroupLayoutEntry {
    let ty = wgpu::BufferBindingType::Storage { read_only: true };
    crate::gpu::buffer_entry(binding, visibility, ty)
}

impl Analysis {
    fn new(
        gpu: &Gpu,
        settings: &Settings,
        sample_rate: u32,
        write_layout: &wgpu::BindGroupLayout,
        draw_layout: &wgpu::BindGroupLayout,
        draw_params: &PingPong,
        lut: &wgpu::Buffer,
    ) -> Result<Analysis, SceneError> {
        let device = &gpu.device;
        let cpu = Stft::with_window(settings.fft_size, settings.hop, settings.window)?;
        let bins = cpu.bins();
        let gpu_fft = match settings.fft_on {
            FftOn::Gpu => {
                let mut f = GpuFft::new(device, settings.fft_size, MAX_BATCH)
                    .map_err(|e| SceneError::Other(format!("GPU FFT: {e}")))?;
                f.set_window(
                    &gpu.queue,
                    &stft::window_values(settings.window, settings.fft_size),
                )
                .map_err(|e| SceneError::Other(format!("GPU FFT: {e}")))?;
                Some(f)
            }
            FftOn::Cpu => None,
        };
        let max_tex = device.limits().max_texture_dimension_2d;
        let ring_width = ring_width_for(sample_rate, settings.hop, max_tex);
        let rows = rows_for(bins, max_tex);
        let ring = device.create_texture(&wgpu::TextureDescriptor {
            label: Some("spectrogram:ring"),
            size: wgpu::Extent3d {
                width: ring_width,
                height: rows,
                depth_or_array_layers: 1,
            },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: wgpu::TextureFormat::R32Float,
            usage: wgpu::TextureUsages::STORAGE_BINDING | wgpu::TextureUsages::TEXTURE_BINDING,
            view_formats: &[],
        });
        let ring_view = ring.create_view(&wgpu::TextureViewDescriptor {
            label: Some("spectrogram:ring:view"),
            ..Default::default()
        });
        let upload = PingPong::new(
            device,
            "spectrogram:columns",
            wgpu::BufferUsages::STORAGE,
            16 * bins as u64 * 4,
        );
        let write_params = PingPong::new(
            device,
            "spectrogram:ring_write_params",
            wgpu::BufferUsages::UNIFORM,
            std::mem::size_of::<WriteParams>() as u64,
        );
        let write_groups_gpu = gpu_fft.as_ref().map(|f| {
            std::array::from_fn(|s| {
                device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: Some(&format!("spectrogram:ring_write:gpu_group[{s}]")),
                    layout: write_layout,
                    entries: &[
                        wgpu::BindGroupEntry {
                            binding: 0,
                            resource: write_params.buffer(s).as_entire_binding(),
                        },
                        wgpu::BindGroupEntry {
                            binding: 1,
                            resource: f.output_db().as_entire_binding(),
                        },
                        wgpu::BindGroupEntry {
                            binding: 2,
                            resource: wgpu::BindingResource::TextureView(&ring_view),
                        },
                    ],
                })
            })
        });
        let draw_groups = std::array::from_fn(|s| {
            device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some(&format!("spectrogram:draw:group[{s}]")),
                layout: draw_layout,
                entries: &[
                    wgpu::BindGroupEntry {
                        binding: 0,
                        resource: draw_params.buffer(s).as_entire_binding(),
                    },
                    wgpu::BindGroupEntry {
                        binding: 1,
                        resource: wgpu::BindingResource::TextureView(&ring_view),
                    },
                    wgpu::BindGroupEntry {
                        binding: 2,
                        resource: lut.as_entire_binding(),
                    },
                ],
            })
        });
        Ok(Analysis {
            settings: settings.clone(),
            bins,
            cpu,
            gpu: gpu_fft,
            tail: Vec::new(),
            frames: Vec::new(),
            batch: 0,
            ring_view,
            ring_width,
            rows,
            upload,
            write_params,
            write_groups_cpu: None,
            write_groups_gpu,
            draw_groups,
            copy_pending: 0,
            copy_written: None,
        })
    }
}

impl Scene for Spectrogram {
    fn id(&self) -> &'static str {
        "spectrogram"
    }

    /// Audio is drained after the UI is laid out, just before the uploads and the FFT dispatch,
    /// which takes the UI's CPU time (≈ 3 ms on the 2-core container) out of the capture →
    /// present latency; the side panel's spectrum line and readouts are one frame older.
    fn ingest_after_ui(&self) -> bool {
        true
    }

    fn ingest(&mut self, frame: &FrameCtx) {
        self.scene_time += frame.elapsed_s;
        self.source.advance_to(self.scene_time);
        self.scratch.clear();
        self.source.drain_into(&mut self.scratch);
        let drained_before = self.drained_total;
        self.drained_total += self.scratch.len() as u64;
        let n = self.a.settings.fft_size;
        let hop = self.a.settings.hop;
        // No data for a while (device gone or silent): a gap, not silence; frames restart after.
        let gap = self.source.gap_samples();
        self.gap_cols = 0;
        let gap_start = self.next_start;
        if gap > 0 {
            self.gap_cols = (gap.div_ceil(hop as u64)).min(MAX_BATCH as u64) as u32;
            self.gap_total += gap;
            self.pending.clear();
            self.pending_cols = 0;
        }
        self.frame_capture = None;
        // After a long pause (scene hidden), analyse only the newest MAX_BATCH columns' worth.
        let keep = (MAX_BATCH as usize - 1) * hop + n;
        let skip = self.scratch.len().saturating_sub(keep);
        self.samples_skipped += skip as u64;
        self.samples_total += self.scratch.len() as u64;
        if gap > 0 || skip > 0 {
            // The STFT restarts at the first sample analysed (stream position base + skip).
            let restart = drained_before + self.gap_total + skip as u64;
            if skip > 0 {
                // Columns an uninterrupted STFT would have started between the next column's
                // position and the restart (the gap's own columns are drawn as gap columns).
                self.columns_skipped += restart
                    .saturating_sub(gap)
                    .saturating_sub(self.next_start)
                    .div_ceil(hop as u64);
            }
            self.a.cpu.reset();
            self.a.tail.clear();
            self.next_start = restart;
        }
        let bins = self.a.bins;
        let hop64 = hop as u64;
        match self.a.settings.fft_on {
            FftOn::Cpu => {
                self.a.cpu.push(&self.scratch[skip..]);
                while self.a.cpu.pop_column(&mut self.column) {
                    self.columns_total += 1;
                    if self.pending_cols == 0 {
                        self.pending_start = self.next_start;
                    }
                    self.next_start += hop64;
                    if self.pending_cols >= MAX_BATCH {
                        self.pending.drain(..bins);
                        self.pending_cols -= 1;
                        self.pending_start += hop64;
                        self.columns_skipped += 1;
                    }
                    self.pending.extend_from_slice(&self.column);
                    self.pending_cols += 1;
                }
            }
            FftOn::Gpu => {
                let a = &mut self.a;
                a.tail.extend_from_slice(&self.scratch[skip..]);
                a.frames.clear();
                a.batch = 0;
                let mut start = 0;
                while start + n <= a.tail.len() {
                    if a.batch == 0 {
                        self.pending_start = self.next_start;
                    }
                    if a.batch >= MAX_BATCH {
                        // Drop the oldest frame of this batch: keep the newest MAX_BATCH.
                        a.frames.drain(..n);
                        a.batch -= 1;
                        self.pending_start += hop64;
                        self.columns_skipped += 1;
                    }
                    a.frames.extend_from_slice(&a.tail[start..start + n]);
                    a.batch += 1;
                    start += hop;
                    self.next_start += hop64;
                    self.columns_total += 1;
                }
                a.tail.drain(..start.min(a.tail.len()));
                self.pending_cols = a.batch;
            }
        }
        // The newest column this frame ends at sample drained − pending − hop + N − 1 (pending =
        // samples kept for the next column); its capture instant comes from the source's clock,
        // which counts dropped samples too (those before this frame's).
        if self.pending_cols > 0
            && let Some((delivered, at)) = self.source.sample_clock()
        {
            let pending = match self.a.settings.fft_on {
                FftOn::Cpu => self.a.cpu.pending() as u64,
                FftOn::Gpu => self.a.tail.len() as u64,
            };
            let end = (self.drained_total + self.dropped_seen + n as u64)
                .saturating_sub(pending + hop as u64 + 1);
            let behind = delivered.saturating_sub(end + 1);
            let sr = self.source.sample_rate().max(1) as f64;
            self.frame_capture =
                at.checked_sub(std::time::Duration::from_secs_f64(behind as f64 / sr));
        }
        // Samples the source dropped (its ring overflowed, e.g. while the scene was hidden) are
        // newer than the ones drained: a hole after them. The timeline steps over it and the STFT
        // restarts after it, so later columns keep their true times.
        let dropped = self.source.dropped();
        let lost = dropped.saturating_sub(self.dropped_seen);
        self.dropped_seen = dropped;
        if lost > 0 {
            self.gap_total += lost;
            self.a.cpu.reset();
            self.a.tail.clear();
            self.next_start = self.drained_total + self.gap_total;
        }
        if self.gap_cols > 0 {
            // Gap columns replace this frame's columns (data resuming right after a gap is rare).
            let bins = self.a.bins;
            self.columns_skipped += self.pending_cols as u64;
            self.a.batch = 0;
            self.pending.clear();
            self.pending.resize(self.gap_cols as usize * bins, GAP_DB);
            self.pending_cols = self.gap_cols;
            self.pending_start = gap_start;
            let gap_col = vec![GAP_DB; bins];
            for j in 0..u64::from(self.gap_cols) {
                let w = (!self.frozen).then_some(self.written + j);
                self.push_history(&gap_col, w);
            }
        } else if self.a.settings.fft_on == FftOn::Cpu {
            // The history holds what the panel shows: the columns kept for this frame (the GPU
            // path's arrive through the readback).
            let pending = std::mem::take(&mut self.pending);
            for (j, col) in (0u64..).zip(pending.chunks_exact(bins)) {
                let w = (!self.frozen).then_some(self.written + j);
                self.push_history(col, w);
            }
            self.pending = pending;
        }
    }

    fn prepare(&mut self, gpu: &Gpu, frame: &FrameCtx) {
        self.width_px = frame.size.0.max(1);
        if let Some((sel, opts)) = self.reopen_request.take() {
            match self.source.reopen_with(&sel, &opts) {
                Ok(()) => {
                    self.options = opts;
                    self.error = None;
                    self.scene_time = 0.0;
                    self.drained_total = 0;
                    self.gap_total = 0;
                    self.dropped_seen = self.source.dropped();
                    self.next_start = 0;
                    self.a.cpu.reset();
                    self.a.tail.clear();
                    let settings = self.a.settings.clone();
                    if let Err(e) = self.apply_settings(gpu, settings) {
                        self.error = Some(e.to_string());
                    }
                }
                Err(e) => self.error = Some(e.to_string()),
            }
        }
        if self.source.take_rate_changed() {
            // A reconnection opened the device at another rate: the analysis follows it.
            let settings = self.a.settings.clone();
            if let Err(e) = self.apply_settings(gpu, settings) {
                self.error = Some(e.to_string());
            }
        }
        if let Some(s) = self.seek_ui.take() {
            self.source.seek(s);
            self.a.cpu.reset();
            self.a.tail.clear();
            self.next_start = self.drained_total + self.gap_total;
        }
        if self.settings_ui != self.a.settings {
            let wanted = self.settings_ui.clone();
            match self.apply_settings(gpu, wanted) {
                Ok(()) => self.error = None,
                Err(e) => {
                    self.error = Some(e.to_string());
                    self.settings_ui = self.a.settings.clone();
                }
            }
        }
        // A file shorter than the FFT never makes a column: said once in the log (the panel,
        // the overlay and the report show it while it holds).
        let short = self.short_file_notice();
        if short != self.short_notice_logged {
            if let Some(n) = &short {
                log::warn!("{n}");
            }
            self.short_notice_logged = short;
        }
        if self.lut_dirty {
            gpu.queue.write_buffer(
                &self.lut,
                0,
                bytemuck::cast_slice(&colormap_lut(self.colormap)),
            );
            self.lut_dirty = false;
        }
        let bins = self.a.bins as u32;
        // This frame's columns.
        self.write_cols = if self.frozen { 0 } else { self.pending_cols };
        self.write_start = (self.written % self.a.ring_width as u64) as u32;
        let slot = frame.slot();
        // Columns computed on the CPU (or gap columns) go up through the upload buffer.
        self.cpu_route = self.a.settings.fft_on == FftOn::Cpu || self.gap_cols > 0;
        match self.cpu_route {
            true => {
                if self.pending_cols > 0 {
                    self.a.upload.write(
                        &gpu.device,
                        &gpu.queue,
                        frame.frame,
                        bytemuck::cast_slice(&self.pending),
                    );
                    let generation = self.a.upload.generation();
                    if self.a.write_groups_cpu.as_ref().map(|g| g.0) != Some(generation) {
                        let groups = std::array::from_fn(|s| {
                            gpu.device.create_bind_group(&wgpu::BindGroupDescriptor {
                                label: Some(&format!("spectrogram:ring_write:cpu_group[{s}]")),
                                layout: &self.write_layout,
                                entries: &[
                                    wgpu::BindGroupEntry {
                                        binding: 0,
                                        resource: self.a.write_params.buffer(s).as_entire_binding(),
                                    },
                                    wgpu::BindGroupEntry {
                                        binding: 1,
                                        resource: self.a.upload.buffer(s).as_entire_binding(),
                                    },
                                    wgpu::BindGroupEntry {
                                        binding: 2,
                                        resource: wgpu::BindingResource::TextureView(
                                            &self.a.ring_view,
                                        ),
                                    },
                                ],
                            })
                        });
                        self.a.write_groups_cpu = Some((generation, groups));
                    }
                }
            }
            false => {
                if self.a.batch > 0
                    && let Some(f) = &self.a.gpu
                {
                    gpu.queue
                        .write_buffer(f.input(), 0, bytemuck::cast_slice(&self.a.frames));
                    self.a.copy_pending = self.a.batch;
                    self.a.copy_written = (self.write_cols > 0).then_some(self.written);
                }
            }
        }
        if self.write_cols > 0 {
            let p = WriteParams {
                bins,
                rows: self.a.rows,
                new_cols: self.write_cols,
                write_start: self.write_start,
                ring_width: self.a.ring_width,
                first_col: 0,
                _pad: [0; 2],
            };
            self.a
                .write_params
                .write(&gpu.device, &gpu.queue, frame.frame, bytemuck::bytes_of(&p));
            // A new entry only where the columns do not continue one hop on from the last one.
            let hop = self.a.settings.hop as u64;
            let continues = self.starts.back().is_some_and(|&(first, start)| {
                start + (self.written - first) * hop == self.pending_start
            });
            if !continues {
                self.starts.push_back((self.written, self.pending_start));
            }
            self.written += self.write_cols as u64;
            // Keep the entries the ring still shows (the newest one always).
            let oldest = self.written.saturating_sub(self.a.ring_width as u64);
            while self.starts.len() > 1 && self.starts[1].0 <= oldest {
                self.starts.pop_front();
            }
        }
        self.pending.clear();
        self.pending_cols = 0;
        let axis = self.axis();
        let visible = self.visible();
        let filled = (self.written.min(self.a.ring_width as u64)).saturating_sub(self.view_back);
        let d = DrawParams {
            ring_width: self.a.ring_width,
            newest: ((self.written - self.view_back.min(self.written)) % self.a.ring_width as u64)
                as u32,
            visible,
            rows: self.a.rows,
            bins,
            scale: self.scale.code(),
            width_px: frame.size.0.max(1) as f32,
            height_px: frame.size.1.max(1) as f32,
            nyquist: axis.nyquist as f32,
            f_lo: axis.f_lo as f32,
            db_floor: self.db_floor,
            db_ceil: self.db_ceil,
            filled: filled.min(u32::MAX as u64) as u32,
            _pad: [0; 3],
        };
        self.draw_params
            .write(&gpu.device, &gpu.queue, frame.frame, bytemuck::bytes_of(&d));
        let _ = slot;
    }

    fn compute(&self, pass: &mut wgpu::ComputePass<'_>, frame: &FrameCtx) {
        if let (FftOn::Gpu, Some(f)) = (self.a.settings.fft_on, &self.a.gpu)
            && self.a.batch > 0
        {
            f.encode(pass, self.a.batch);
        }
        if self.write_cols == 0 {
            return;
        }
        let group = if self.cpu_route {
            self.a.write_groups_cpu.as_ref().map(|g| &g.1[frame.slot()])
        } else {
            self.a.write_groups_gpu.as_ref().map(|g| &g[frame.slot()])
        };
        if let Some(group) = group {
            pass.set_pipeline(&self.write_pipeline);
            pass.set_bind_group(0, group, &[]);
            pass.dispatch_workgroups(self.a.rows.div_ceil(64), self.write_cols, 1);
        }
    }

    fn paint(&self, pass: &mut wgpu::RenderPass<'_>, frame: &FrameCtx) {
        pass.set_pipeline(&self.draw_pipeline);
        pass.set_bind_group(0, &self.a.draw_groups[frame.slot()], &[]);
        pass.draw(0..3, 0..1);
    }

    fn ui(&mut self, ui: &mut egui::Ui) {
        ui.heading("Spectrogram");
        self.source_ui(ui);
        if let Some(n) = self.notice() {
            ui.colored_label(egui::Color32::YELLOW, n);
        }
        if let Some(e) = self.source.stream_error() {
            ui.colored_label(egui::Color32::LIGHT_RED, format!("audio: {e}"));
        }
        if let Some(e) = &self.error {
            ui.colored_label(egui::Color32::LIGHT_RED, e);
        }
        ui.label(format!("source: {}", self.source.label()));
        let sr = self.source.sample_rate();
        ui.label(format!(
            "{} bins of {:.2} Hz, {:.1} columns/s",
            self.a.bins,
            sr as f64 / self.a.settings.fft_size as f64,
            self.columns_per_second()
        ));
        ui.label(format!(
            "columns: {} (skipped {}), dropped samples: {}",
            self.columns_total,
            self.columns_skipped,
            self.source.dropped()
        ));
        if let Some((hz, db)) = self.dominant() {
            ui.label(format!("dominant (1 s): {hz:.1} Hz at {db:.1} dBFS"));
        }
        ui.separator();
        ui.label("Analysis");
        let s = &mut self.settings_ui;
        egui::ComboBox::from_label("FFT size")
            .selected_text(s.fft_size.to_string())
            .show_ui(ui, |ui| {
                let mut n = stft::MIN_ANALYSIS_FFT_SIZE;
                while n <= stft::MAX_ANALYSIS_FFT_SIZE {
                    ui.selectable_value(&mut s.fft_size, n, n.to_string());
                    n *= 2;
                }
            });
        let mut overlap = 100.0 * (1.0 - s.hop as f64 / s.fft_size as f64);
        if ui
            .add(egui::Slider::new(&mut overlap, 0.0..=98.5).text("overlap %"))
            .changed()
        {
            s.hop = ((s.fft_size as f64 * (1.0 - overlap / 100.0)).round() as usize)
                .clamp(1, s.fft_size);
        }
        s.hop = s.hop.clamp(1, s.fft_size);
        ui.label(format!("hop: {} samples", s.hop));
        egui::ComboBox::from_label("window")
            .selected_text(s.window.name())
            .show_ui(ui, |ui| {
                for w in WindowKind::ALL {
                    ui.selectable_value(&mut s.window, *w, w.name());
                }
            });
        ui.horizontal(|ui| {
            ui.label("FFT on");
            ui.selectable_value(&mut s.fft_on, FftOn::Gpu, "GPU");
            ui.selectable_value(&mut s.fft_on, FftOn::Cpu, "CPU");
        });
        ui.separator();
        ui.label("View");
        ui.horizontal(|ui| {
            ui.label("frequency axis");
            for sc in [FreqScale::Linear, FreqScale::Log, FreqScale::Mel] {
                ui.selectable_value(&mut self.scale, sc, sc.name());
            }
        });
        ui.add(egui::Slider::new(&mut self.db_floor, -160.0..=-20.0).text("dB floor"));
        ui.add(egui::Slider::new(&mut self.db_ceil, -60.0..=20.0).text("dB ceiling"));
        if self.db_ceil <= self.db_floor + 1.0 {
            self.db_ceil = self.db_floor + 1.0;
        }
        let before = self.colormap;
        egui::ComboBox::from_label("colormap")
            .selected_text(COLORMAPS[self.colormap].0)
            .show_ui(ui, |ui| {
                for (i, (name, _)) in COLORMAPS.iter().enumerate() {
                    ui.selectable_value(&mut self.colormap, i, *name);
                }
            });
        if before != self.colormap {
            self.lut_dirty = true;
        }
        ui.horizontal(|ui| {
            let label = if self.frozen {
                "Resume (space)"
            } else {
                "Freeze (space)"
            };
            if ui.button(label).clicked() {
                self.set_frozen(!self.frozen);
            }
            ui.checkbox(&mut self.show_spectrum, "spectrum");
        });
        if ui.button("Reset peak hold").clicked() {
            self.peak_hold.iter_mut().for_each(|p| *p = stft::DB_FLOOR);
        }
        ui.label(format!(
            "scrollback: {:.0} s ({} columns); drag or wheel to scroll, ctrl+wheel to zoom time",
            self.a.ring_width as f64 / self.columns_per_second(),
            self.a.ring_width
        ));
    }

    fn interact(&mut self, response: &egui::Response, rect: egui::Rect) {
        let ppp = response.ctx.pixels_per_point();
        let (scroll, zoom, space) = response.ctx.input(|i| {
            (
                i.smooth_scroll_delta,
                i.modifiers.command,
                i.key_pressed(egui::Key::Space),
            )
        });
        if space && response.ctx.memory(|m| m.focused().is_none()) {
            self.set_frozen(!self.frozen);
        }
        let visible = self.visible() as f32;
        let cols_per_point = visible / rect.width().max(1.0);
        if response.dragged() {
            let dx = response.drag_delta().x;
            if dx != 0.0 {
                self.set_frozen(true);
                self.drag_acc += dx * cols_per_point;
                let whole = self.drag_acc.trunc();
                self.drag_acc -= whole;
                self.scroll_by(whole as i64);
            }
        }
        if response.hovered() {
            if zoom && scroll.y != 0.0 {
                let f = (1.0 - scroll.y * 0.002).clamp(0.5, 2.0);
                let max = self.a.ring_width as f32 / self.width_px.max(1) as f32;
                self.cols_per_px = (self.cols_per_px * f).clamp(0.125, max.max(0.125));
            } else if scroll.x != 0.0 || scroll.y != 0.0 {
                let d = (scroll.x + scroll.y) * cols_per_point;
                if d.abs() >= 1.0 {
                    self.set_frozen(true);
                    self.scroll_by(d as i64);
                }
            }
        }
        self.hover = None;
        self.hover_pos = None;
        if let Some(pos) = response.hover_pos() {
            let fx = ((pos.x - rect.left()) / rect.width()).clamp(0.0, 0.999_999);
            let fy = 1.0 - ((pos.y - rect.top()) / rect.height()).clamp(0.0, 1.0);
            let back = visible as u64 - (fx * visible) as u64; // 1 = newest shown
            let shown_newest = self.written.saturating_sub(self.view_back);
            let axis = self.axis();
            let hz = axis.freq_at(fy as f64);
            let mut text = format_hz(hz);
            if let Some((note, cents)) = note_name(hz) {
                text += &format!("  {note} {cents:+.0} ct");
            }
            if back <= shown_newest {
                let col = shown_newest - back;
                let t = self.column_time(col);
                text = format!("{t:.3} s  {text}");
                if let Some(c) = self.history.get(col) {
                    let sr = self.source.sample_rate() as f64;
                    let k = ((hz * self.a.settings.fft_size as f64 / sr).round() as usize)
                        .min(c.len().saturating_sub(1));
                    text += &format!("  {:.1} dBFS", c[k]);
                }
            }
            self.hover = Some(text);
            self.hover_pos = Some(pos);
        }
        let _ = ppp;
    }

    fn overlay(&self, painter: &egui::Painter, rect: egui::Rect) {
        let font = egui::FontId::proportional(12.0);
        let color = egui::Color32::from_gray(230);
        let bg = egui::Color32::from_black_alpha(160);
        let label = |pos: egui::Pos2, anchor: egui::Align2, text: String| {
            let galley = painter.layout_no_wrap(text, font.clone(), color);
            let r = anchor.anchor_size(pos, galley.size()).expand(2.0);
            painter.rect_filled(r, 2.0, bg);
            painter.galley(r.min + egui::vec2(2.0, 2.0), galley, color);
        };
        let axis = self.axis();
        // Frequency axis (left).
        for f in axis.ticks((rect.height() / 60.0).max(2.0) as f64) {
            let y = rect.bottom() - axis.t_of(f) as f32 * rect.height();
            painter.line_segment(
                [egui::pos2(rect.left(), y), egui::pos2(rect.left() + 6.0, y)],
                egui::Stroke::new(1.0, color),
            );
            let anchor = if y > rect.bottom() - 8.0 {
                egui::Align2::LEFT_BOTTOM
            } else {
                egui::Align2::LEFT_CENTER
            };
            label(
                egui::pos2(rect.left() + 8.0, y.max(rect.top() + 8.0)),
                anchor,
                format_hz(f),
            );
        }
        // Time axis (bottom): seconds since the source started, newest shown column at the right.
        // Each tick sits on the column whose centre time it labels, so columns that were never
        // shown (a jump in time) move the labels with them; a tick time that falls in a jump is
        // skipped.
        let shown_newest = self.written.saturating_sub(self.view_back);
        if shown_newest > 0 {
            let cps = self.columns_per_second();
            let v = u64::from(self.visible());
            let w_hi = shown_newest - 1;
            let w_lo = w_hi.saturating_sub(v - 1);
            let (t_lo, t_hi) = (self.column_time(w_lo), self.column_time(w_hi));
            let tstep = nice_step(v as f64 / cps, (rect.width() / 110.0).max(2.0) as f64);
            // The first shown column whose centre is at or after time t.
            let column_at = |t: f64| {
                let (mut lo, mut hi) = (w_lo, w_hi + 1);
                while lo < hi {
                    let mid = lo + (hi - lo) / 2;
                    if self.column_time(mid) < t {
                        lo = mid + 1;
                    } else {
                        hi = mid;
                    }
                }
                lo
            };
            // The panel's left edge, when fewer columns than it spans were written yet.
            let t_left = t_lo - (v - 1 - (w_hi - w_lo)) as f64 / cps;
            let mut t = (t_left.max(0.0) / tstep).ceil() * tstep;
            let mut last_x = f32::NEG_INFINITY;
            let x_of = |w: u64| rect.right() - ((w_hi - w) as f64 / v as f64) as f32 * rect.width();
            while t <= t_hi {
                let w = column_at(t);
                let x = if t < t_lo {
                    // Before the oldest shown column: one hop per column, as far as the panel.
                    x_of(w_lo) - ((t_lo - t) * cps / v as f64) as f32 * rect.width()
                } else {
                    let tw = self.column_time(w.min(w_hi));
                    if (tw - t).abs() > 1.0 / cps {
                        // t falls in a jump: go on from the first column after it.
                        t = ((tw / tstep).ceil() * tstep).max(t + tstep);
                        continue;
                    }
                    x_of(w)
                };
                if t >= 0.0 && x >= rect.left() && x - last_x > 40.0 {
                    last_x = x;
                    painter.line_segment(
                        [
                            egui::pos2(x, rect.bottom()),
                            egui::pos2(x, rect.bottom() - 6.0),
                        ],
                        egui::Stroke::new(1.0, color),
                    );
                    let decimals = if tstep >= 1.0 {
                        0
                    } else {
                        (-tstep.log10().floor()) as usize
                    };
                    label(
                        egui::pos2(x, rect.bottom() - 8.0),
                        egui::Align2::CENTER_BOTTOM,
                        format!("{t:.decimals$} s"),
                    );
                }
                t += tstep;
            }
        }
        if self.frozen {
            label(
                rect.left_top() + egui::vec2(rect.width() / 2.0, 8.0),
                egui::Align2::CENTER_TOP,
                format!(
                    "FROZEN: {:.1} s back (space resumes)",
                    self.view_back as f64 / self.columns_per_second()
                ),
            );
        }
        if let Some(n) = self.notice() {
            label(
                rect.center_top() + egui::vec2(0.0, 28.0),
                egui::Align2::CENTER_TOP,
                n,
            );
        }
        if self.show_spectrum {
            self.draw_spectrum(painter, rect, &axis);
        }
        if let (Some(text), Some(pos)) = (&self.hover, self.hover_pos) {
            let anchor = if pos.x > rect.center().x {
                egui::Align2::RIGHT_BOTTOM
            } else {
                egui::Align2::LEFT_BOTTOM
            };
            label(
                pos + egui::vec2(if pos.x > rect.center().x { -12.0 } else { 12.0 }, -8.0),
                anchor,
                text.clone(),
            );
        }
    }

    fn metrics(&self) -> serde_json::Value {
        let dom = self.dominant();
        serde_json::json!({
            "source": self.source.kind(),
            "source_label": self.source.label(),
            "notice": self.notice(),
            "warning": self.source.warning(),
            "sample_rate": self.source.sample_rate(),
            "fft_size": self.a.settings.fft_size,
            "hop": self.a.settings.hop,
            "window": self.a.settings.window.name(),
            "fft_on": self.a.settings.fft_on,
            "columns": self.columns_total,
            "columns_skipped": self.columns_skipped,
            "samples": self.samples_total,
            "samples_skipped": self.samples_skipped,
            "dominant_hz": dom.map(|d| d.0),
            "dominant_dbfs": dom.map(|d| d.1),
            "dropped_samples": self.source.dropped(),
            "db_floor": self.db_floor,
            "db_ceil": self.db_ceil,
            "frequency_axis": self.scale.name(),
            "ring_columns": self.a.ring_width,
            "latency_ms": (!self.latencies.is_empty()).then(|| {
                let (last, p50, p99) = self.latency_summary();
                serde_json::json!({ "last": last, "p50": p50, "p99": p99, "n": self.latencies.len() })
            }),
            "ring_rows": self.a.rows,
            "reconnect": self.reconnect_metrics(),
        })
    }

    fn problem(&self) -> Option<String> {
        self.source
            .stream_error()
            .map(|e| format!("audio input: {e}"))
            .or_else(|| self.error.clone())
    }

    fn presented(&mut self, at: std::time::Instant) {
        if let Some(captured) = self.frame_capture.take() {
            let ms = at.saturating_duration_since(captured).as_secs_f64() * 1e3;
            if self.latencies.len() >= LATENCY_WINDOW {
                self.latencies.pop_front();
            }
            self.latencies.push_back(ms);
        }
    }

    fn record_readbacks(
        &mut self,
        device: &wgpu::Device,
        encoder: &mut wgpu::CommandEncoder,
        ring: &mut ReadbackRing,
        kind: u32,
    ) {
        // GPU path: this frame's dB columns go back to the CPU for the history (readout,
        // spectrum view, export). The tag id carries the copy's order and its column count.
        let cols = std::mem::take(&mut self.a.copy_pending);
        let Some(f) = &self.a.gpu else { return };
        if cols == 0 {
            return;
        }
        let bytes = u64::from(cols) * self.a.bins as u64 * 4;
        let tag = Tag {
            kind,
            id: copy_tag(self.history_gen, self.a.copy_written, cols),
        };
        if !ring.copy_buffer(device, encoder, f.output_db(), 0, bytes, tag) {
            log::warn!("spectrogram: readback ring full; {cols} columns not kept for the readout");
        }
    }

    fn readback_arrived(&mut self, arrived: &Arrived<'_>) {
        let (generation, written, cols) = copy_tag_parts(arrived.tag.id);
        let bins = self.a.bins;
        // A copy made before the analysis settings changed (or the history was reset): dropped.
        if generation != self.history_gen || bins == 0 || arrived.data.len() != cols * bins * 4 {
            return;
        }
        let levels: Vec<f32> = bytemuck::pod_collect_to_vec(arrived.data);
        for (j, col) in levels.chunks_exact(bins).enumerate() {
            self.push_history(col, written.map(|w| w + j as u64));
        }
    }

    fn finish(&mut self, _gpu: &Gpu) -> Result<(), SceneError> {
        if self.columns_skipped > 0 {
            log::warn!(
                "spectrogram: {} columns were skipped, not shown (more than {MAX_BATCH} new columns \
                 in one frame, or a backlog after a pause); {} were shown; the export has rows for \
                 the shown columns only, each at its own time",
                self.columns_skipped,
                self.written
            );
        }
        if let Some(path) = self.a.settings.export_csv.clone() {
            let rows = self.export_csv(&path)?;
            log::info!("spectrogram: wrote {rows} columns to {}", path.display());
        }
        Ok(())
    }
}

impl Spectrogram {
    /// Set while the source is a file (not looping) with fewer samples per channel than the FFT
    /// size N, so no column can ever be made: "the audio file has K samples and the FFT needs
    /// N: no spectrogram column can be made (loop the file, or choose an FFT size of P or
    /// less)", P being the largest FFT size ≤ K (that part left out when K < the smallest size).
    fn short_file_notice(&self) -> Option<String> {
        let k = self.source.file_samples()?;
        let n = self.a.settings.fft_size;
        if k >= n || self.source.looping() {
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

    /// The source's notice ([`AudioSource::notice`]) and the short-file notice, joined by "; ".
    fn notice(&self) -> Option<String> {
        match (self.source.notice(), self.short_file_notice()) {
            (Some(a), Some(b)) => Some(format!("{a}; {b}")),
            (Some(a), None) => Some(a.to_string()),
            (None, b) => b,
        }
    }
}

impl Spectrogram {
    /// Source controls: input device picker with channel choice, synthetic signals, a file path,
    /// and for files play/pause, seek, loop and analyse-as-fast-as-possible.
    fn source_ui(&mut self, ui: &mut egui::Ui) {
        egui::CollapsingHeader::new("Source")
            .default_open(true)
            .show(ui, |ui| {
                let mut opts = self.options;
                ui.horizontal(|ui| {
                    ui.label("channel");
                    let text = opts.channel.to_string();
                    egui::ComboBox::from_id_salt("spectrogram-channel")
                        .selected_text(text)
                        .show_ui(ui, |ui| {
                            ui.selectable_value(&mut opts.channel, ChannelChoice::Mix, "mix");
                            let channels = self.source.live().map(|l| l.channels()).unwrap_or(2);
                            for c in 0..channels.max(2) as usize {
                                let name = match c {
                                    0 => "1 (left)".to_string(),
                                    1 => "2 (right)".to_string(),
                                    _ => (c + 1).to_string(),
                                };
                                ui.selectable_value(
                                    &mut opts.channel,
                                    ChannelChoice::Channel(c),
                                    name,
                                );
                            }
                        });
                });
                if opts.channel != self.options.channel {
                    self.reopen_request = Some((self.source.selection().clone(), opts));
                }
                ui.horizontal(|ui| {
                    let label = if self.devices.is_empty() {
                        "Input devices…"
                    } else {
                        "Hide devices"
                    };
                    if ui.button(label).clicked() {
                        if self.devices.is_empty() {
                            self.devices = crate::audio::input_devices();
                        } else {
                            self.devices.clear();
                        }
                    }
                    if ui.button("Default").clicked() {
                        self.reopen_request = Some((AudioSelection::Default, opts));
                    }
                });
                for d in self.devices.clone() {
                    let text = format!(
                        "{} ({} Hz, {} ch{})",
                        d.name,
                        d.sample_rate,
                        d.channels,
                        d.sample_format
                            .map(|f| format!(", {f:?}"))
                            .unwrap_or_default()
                    );
                    if ui
                        .add(egui::Button::new(egui::RichText::new(text).small()).truncate())
                        .on_hover_text(&d.name)
                        .clicked()
                    {
                        let key = if d.id.is_empty() {
                            d.name.clone()
                        } else {
                            d.id.clone()
                        };
                        self.reopen_request = Some((AudioSelection::Device(key), opts));
                    }
                }
                ui.horizontal_wrapped(|ui| {
                    ui.label("synthetic:");
                    for s in SynthSignal::ALL {
                        if ui.small_button(s.name()).clicked() {
                            self.reopen_request = Some((AudioSelection::Signal(*s), opts));
                        }
                    }
                });
                ui.horizontal(|ui| {
                    ui.add(
                        egui::TextEdit::singleline(&mut self.file_path_ui)
                            .hint_text("sound file path (or drop a file)")
                            .desired_width(170.0),
                    );
                    if ui.button("Open").clicked() && !self.file_path_ui.trim().is_empty() {
                        let path = PathBuf::from(self.file_path_ui.trim());
                        self.reopen_request = Some((AudioSelection::File(path), opts));
                    }
                });
                if let Some(w) = self.source.warning() {
                    ui.colored_label(egui::Color32::YELLOW, w);
                }
                if let (Some(pos), Some(dur)) = (self.source.position_s(), self.source.duration_s())
                {
                    ui.horizontal(|ui| {
                        let paused = self.source.paused();
                        if ui.button(if paused { "Play" } else { "Pause" }).clicked() {
                            self.source.set_paused(!paused);
                        }
                        let mut looping = self.source.looping();
                        if ui.checkbox(&mut looping, "loop").changed() {
                            self.source.set_looping(looping);
                        }
                        let mut fast = self.source.fast();
                        if ui
                            .checkbox(&mut fast, "fast")
                            .on_hover_text("analyse as fast as possible")
                            .changed()
                        {
                            self.source.set_fast(fast);
                        }
                    });
                    let mut p = pos.min(dur);
                    if ui
                        .add(
                            egui::Slider::new(&mut p, 0.0..=dur.max(1e-3))
                                .text("s")
                                .show_value(true),
                        )
                        .drag_stopped()
                    {
                        self.seek_ui = Some(p);
                    }
                }
                if !self.latencies.is_empty() {
                    let (last, p50, p99) = self.latency_summary();
                    ui.label(format!(
                        "latency capture to present: last {last:.1} ms, p50 {p50:.1}, p99 {p99:.1}"
                    ));
                }
            });
    }

    /// (last, p50, p99) of the recent capture-to-present latencies, ms (nearest rank).
    pub fn latency_summary(&self) -> (f64, f64, f64) {
        use crate::stats::percentile_nearest_rank;
        let mut v: Vec<f64> = self.latencies.iter().copied().collect();
        let last = v.last().copied().unwrap_or(0.0);
        v.sort_by(f64::total_cmp);
        (
            last,
            percentile_nearest_rank(&v, 50.0),
            percentile_nearest_rank(&v, 99.0),
        )
    }

    fn set_frozen(&mut self, frozen: bool) {
        self.frozen = frozen;
        if !frozen {
            self.view_back = 0;
            self.drag_acc = 0.0;
        }
    }

    /// Scrolls the frozen view `d` columns into the past (positive) or back towards now.
    fn scroll_by(&mut self, d: i64) {
        let max_back = self
            .written
            .min(self.a.ring_width as u64)
            .saturating_sub(self.visible() as u64);
        let v = (self.view_back as i64 + d).clamp(0, max_back as i64);
        self.view_back = v as u64;
    }

    /// The spectrum view: the newest shown column as a line, and the peak hold, over the bottom
    /// quarter of the image; x follows the frequency axis, y spans the dB floor..ceiling.
    fn draw_spectrum(&self, painter: &egui::Painter, rect: egui::Rect, axis: &FreqAxis) {
        let shown_newest = self.written.saturating_sub(self.view_back);
        // The newest shown column the CPU has (the GPU path's levels arrive 1–3 frames late).
        let col = shown_newest
            .min(self.history.end())
            .checked_sub(1)
            .and_then(|c| self.history.get(c));
        let Some(col) = col else { return };
        let area = egui::Rect::from_min_max(
            egui::pos2(rect.left() + 60.0, rect.bottom() - rect.height() / 4.0),
            egui::pos2(rect.right() - 8.0, rect.bottom() - 26.0),
        );
        if area.width() < 20.0 || area.height() < 20.0 {
            return;
        }
        painter.rect_filled(area, 3.0, egui::Color32::from_black_alpha(110));
        let sr = self.source.sample_rate() as f64;
        let n = self.a.settings.fft_size as f64;
        let span = (self.db_ceil - self.db_floor).max(1e-3);
        let y_of =
            |db: f32| area.bottom() - ((db - self.db_floor) / span).clamp(0.0, 1.0) * area.height();
        let line = |values: &[f32], stroke: egui::Stroke| {
            let w = area.width().max(1.0) as usize;
            let mut pts = Vec::with_capacity(w);
            for px in 0..w {
                let f0 = axis.freq_at(px as f64 / w as f64);
                let f1 = axis.freq_at((px + 1) as f64 / w as f64);
                let k0 = ((f0 * n / sr).round() as usize).min(values.len() - 1);
                let k1 = ((f1 * n / sr).round() as usize).clamp(k0 + 1, values.len());
                let m = values[k0..k1].iter().cloned().fold(f32::MIN, f32::max);
                pts.push(egui::pos2(area.left() + px as f32, y_of(m)));
            }
            painter.add(egui::Shape::line(pts, stroke));
        };
        line(
            &self.peak_hold,
            egui::Stroke::new(1.0, egui::Color32::from_rgb(255, 170, 60)),
        );
        line(
            col,
            egui::Stroke::new(1.0, egui::Color32::from_rgb(120, 220, 255)),
        );
        painter.text(
            area.left_top() + egui::vec2(4.0, 2.0),
            egui::Align2::LEFT_TOP,
            format!(
                "spectrum {:.0}…{:.0} dBFS (orange: peak hold)",
                self.db_floor, self.db_ceil
            ),
            egui::FontId::proportional(11.0),
            egui::Color32::from_gray(200),
        );
    }
}

#[cfg(test)]
mod history_tests {
    use super::{ColumnHistory, copy_tag, copy_tag_parts};

    #[test]
    fn late_columns_fill_their_slots_in_written_order() {
        let mut h = ColumnHistory::new(10, 4);
        // Frame A writes 10..12 (levels arrive late); frame B's gap columns 12..13 come first.
        h.place(12, &[-1.0]);
        h.place(13, &[-1.0]);
        assert_eq!((h.first, h.end()), (10, 14));
        assert_eq!(h.get(10), None);
        h.place(10, &[1.0]);
        h.place(11, &[2.0]);
        let got: Vec<(u64, Vec<f32>)> = h.iter().map(|(w, c)| (w, c.to_vec())).collect();
        assert_eq!(
            got,
            vec![
                (10, vec![1.0]),
                (11, vec![2.0]),
                (12, vec![-1.0]),
                (13, vec![-1.0])
            ]
        );
        // At the cap the oldest goes; older than the oldest is ignored; far ahead restarts.
        h.place(14, &[3.0]);
        assert_eq!((h.first, h.end(), h.get(14)), (11, 15, Some(&[3.0][..])));
        h.place(5, &[9.0]);
        assert_eq!(h.first, 11);
        h.place(100, &[4.0]);
        assert_eq!((h.first, h.end(), h.get(100)), (100, 101, Some(&[4.0][..])));
    }

    #[test]
    fn copy_tags_round_trip() {
        for (g, w, c) in [
            (0u8, Some(0u64), 1u32),
            (255, Some((1 << 40) - 2), 512),
            (7, None, 3),
        ] {
            assert_eq!(copy_tag_parts(copy_tag(g, w, c)), (g, w, c as usize));
        }
    }
}
