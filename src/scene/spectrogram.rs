//! Spectrogram: audio (live input, a WAV file or the synthetic source) → STFT columns in dBFS on
//! the CPU (`audio::stft`, FFT 2048, hop 512, Hann) → uploaded each frame → a compute pass maps dB
//! through a perceptual colormap into a scrolling ring texture → a render pass draws the ring with
//! the newest column at the right. Axes (Hz, seconds) are drawn by egui over the image.

use std::collections::VecDeque;

use bytemuck::{Pod, Zeroable};

use super::{FrameCtx, Scene, SceneConfig, SceneError};
use crate::audio::AudioSource;
use crate::audio::stft::{self, Stft};
use crate::gpu::upload::PingPong;
use crate::gpu::{Gpu, shaders};

/// FFT size (samples).
pub const FFT_SIZE: usize = 2048;
/// Hop between columns (samples).
pub const HOP: usize = 512;
/// Columns kept in the ring texture (about 11 s at 48 kHz).
pub const RING_WIDTH: u32 = 1024;
/// Samples in the audio ring between the source and the analysis.
const RING_SAMPLES: usize = 1 << 20;

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

#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct ColormapParams {
    bins: u32,
    new_cols: u32,
    write_start: u32,
    ring_width: u32,
    db_floor: f32,
    db_ceil: f32,
    _pad: [f32; 2],
}

#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct DrawParams {
    ring_width: u32,
    newest: u32,
    visible: u32,
    rows: u32,
}

/// The spectrogram scene.
pub struct Spectrogram {
    source: AudioSource,
    stft: Stft,
    scene_time: f64,
    scratch: Vec<f32>,
    column: Vec<f32>,
    /// New columns of this frame, column-major (`new_cols × bins`).
    pending: Vec<f32>,
    pending_cols: u32,
    columns_total: u64,
    samples_total: u64,
    samples_skipped: u64,
    recent: VecDeque<Vec<f32>>,
    db_floor: f32,
    db_ceil: f32,
    colormap: usize,
    lut_dirty: bool,
    // GPU
    ring_view: wgpu::TextureView,
    lut: wgpu::Buffer,
    columns_buf: PingPong,
    cm_params: PingPong,
    cm_layout: wgpu::BindGroupLayout,
    cm_groups: Option<(u64, [wgpu::BindGroup; 2])>,
    cm_pipeline: wgpu::ComputePipeline,
    draw_params: PingPong,
    draw_groups: [wgpu::BindGroup; 2],
    draw_pipeline: wgpu::RenderPipeline,
    dispatch_cols: u32,
    write_start: u32,
}

impl Spectrogram {
    /// Table constructor: opens the audio selection (errors name the input).
    pub fn create(gpu: &Gpu, cfg: &SceneConfig) -> Result<Box<dyn Scene>, SceneError> {
        let source = AudioSource::open(&cfg.audio, RING_SAMPLES)?;
        Ok(Box::new(Spectrogram::new(gpu, source)?))
    }

    /// Builds the scene around an opened source.
    pub fn new(gpu: &Gpu, source: AudioSource) -> Result<Spectrogram, SceneError> {
        let device = &gpu.device;
        let stft = Stft::new(FFT_SIZE, HOP)?;
        let bins = stft.bins() as u32;
        let ring = device.create_texture(&wgpu::TextureDescriptor {
            label: Some("spectrogram:ring"),
            size: wgpu::Extent3d {
                width: RING_WIDTH,
                height: bins,
                depth_or_array_layers: 1,
            },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: wgpu::TextureFormat::Rgba8Unorm,
            usage: wgpu::TextureUsages::STORAGE_BINDING | wgpu::TextureUsages::TEXTURE_BINDING,
            view_formats: &[],
        });
        let ring_view = ring.create_view(&wgpu::TextureViewDescriptor {
            label: Some("spectrogram:ring:view"),
            ..Default::default()
        });
        let lut = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("spectrogram:lut"),
            size: 256 * 4,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let columns_buf = PingPong::new(
            device,
            "spectrogram:columns",
            wgpu::BufferUsages::STORAGE,
            64 * bins as u64 * 4,
        );
        let cm_params = PingPong::new(
            device,
            "spectrogram:colormap_params",
            wgpu::BufferUsages::UNIFORM,
            std::mem::size_of::<ColormapParams>() as u64,
        );
        let uniform = |binding, visibility| wgpu::BindGroupLayoutEntry {
            binding,
            visibility,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Uniform,
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        };
        let storage_ro = |binding| wgpu::BindGroupLayoutEntry {
            binding,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Storage { read_only: true },
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        };
        let cm_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("spectrogram:colormap:layout"),
            entries: &[
                uniform(0, wgpu::ShaderStages::COMPUTE),
                storage_ro(1),
                storage_ro(2),
                wgpu::BindGroupLayoutEntry {
                    binding: 3,
                    visibility: wgpu::ShaderStages::COMPUTE,
                    ty: wgpu::BindingType::StorageTexture {
                        access: wgpu::StorageTextureAccess::WriteOnly,
                        format: wgpu::TextureFormat::Rgba8Unorm,
                        view_dimension: wgpu::TextureViewDimension::D2,
                    },
                    count: None,
                },
            ],
        });
        let cm_pl = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("spectrogram:colormap:pipeline_layout"),
            bind_group_layouts: &[Some(&cm_layout)],
            immediate_size: 0,
        });
        let cm_module = shaders::SPECTROGRAM_COLORMAP.module(device);
        let cm_pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some("spectrogram:colormap"),
            layout: Some(&cm_pl),
            module: &cm_module,
            entry_point: Some("main"),
            compilation_options: Default::default(),
            cache: None,
        });

        let draw_params = PingPong::new(
            device,
            "spectrogram:draw_params",
            wgpu::BufferUsages::UNIFORM,
            std::mem::size_of::<DrawParams>() as u64,
        );
        let draw_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("spectrogram:draw:layout"),
            entries: &[
                uniform(0, wgpu::ShaderStages::FRAGMENT),
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
            ],
        });
        let draw_groups = std::array::from_fn(|slot| {
            device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some(&format!("spectrogram:draw:group[{slot}]")),
                layout: &draw_layout,
                entries: &[
                    wgpu::BindGroupEntry {
                        binding: 0,
                        resource: draw_params.buffer(slot).as_entire_binding(),
                    },
                    wgpu::BindGroupEntry {
                        binding: 1,
                        resource: wgpu::BindingResource::TextureView(&ring_view),
                    },
                ],
            })
        });
        let draw_pl = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("spectrogram:draw:pipeline_layout"),
            bind_group_layouts: &[Some(&draw_layout)],
            immediate_size: 0,
        });
        let draw_module = shaders::SPECTROGRAM_DRAW.module(device);
        let draw_pipeline = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: Some("spectrogram:draw"),
            layout: Some(&draw_pl),
            vertex: wgpu::VertexState {
                module: &draw_module,
                entry_point: Some("vs_main"),
                compilation_options: Default::default(),
                buffers: &[],
            },
            primitive: wgpu::PrimitiveState::default(),
            depth_stencil: None,
            multisample: wgpu::MultisampleState::default(),
            fragment: Some(wgpu::FragmentState {
                module: &draw_module,
                entry_point: Some("fs_main"),
                compilation_options: Default::default(),
                targets: &[Some(super::SCENE_FORMAT.into())],
            }),
            multiview_mask: None,
            cache: None,
        });
        let bins_us = stft.bins();
        Ok(Spectrogram {
            source,
            stft,
            scene_time: 0.0,
            scratch: Vec::with_capacity(1 << 16),
            column: vec![stft::DB_FLOOR; bins_us],
            pending: Vec::new(),
            pending_cols: 0,
            columns_total: 0,
            samples_total: 0,
            samples_skipped: 0,
            recent: VecDeque::new(),
            db_floor: -120.0,
            db_ceil: 0.0,
            colormap: 0,
            lut_dirty: true,
            ring_view,
            lut,
            columns_buf,
            cm_params,
            cm_layout,
            cm_groups: None,
            cm_pipeline,
            draw_params,
            draw_groups,
            draw_pipeline,
            dispatch_cols: 0,
            write_start: 0,
        })
    }

    /// Columns per second of audio: sample rate / hop.
    fn columns_per_second(&self) -> f64 {
        self.source.sample_rate() as f64 / HOP as f64
    }

    /// Time in seconds of the centre of column `i`: (i·hop + N/2) / sample rate.
    pub fn column_time(&self, i: u64) -> f64 {
        (i as f64 * HOP as f64 + FFT_SIZE as f64 / 2.0) / self.source.sample_rate() as f64
    }

    /// Dominant frequency (Hz) and its level (dBFS) over the last second of columns: the bin with
    /// the largest mean power, and the tone level around it from the power-averaged column
    /// ([`stft::tone_level_db`]: window ENBW compensated, so it does not depend on where the tone
    /// falls between bins). `None` before the first column.
    pub fn dominant(&self) -> Option<(f64, f64)> {
        if self.recent.is_empty() {
            return None;
        }
        let bins = self.stft.bins();
        let mut mean = vec![0f64; bins];
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
        let hz = k as f64 * self.source.sample_rate() as f64 / FFT_SIZE as f64;
        Some((hz, stft::tone_level_db(&mean_db, k) as f64))
    }

    /// The audio source.
    pub fn source(&self) -> &AudioSource {
        &self.source
    }
}

impl Scene for Spectrogram {
    fn id(&self) -> &'static str {
        "spectrogram"
    }

    fn ingest(&mut self, frame: &FrameCtx) {
        self.scene_time += frame.elapsed_s;
        self.source.advance_to(self.scene_time);
        self.scratch.clear();
        self.source.drain_into(&mut self.scratch);
        // After a long pause (scene hidden), analyse only what the ring texture can show.
        let keep = RING_WIDTH as usize * HOP + FFT_SIZE;
        let skip = self.scratch.len().saturating_sub(keep);
        self.samples_skipped += skip as u64;
        self.samples_total += self.scratch.len() as u64;
        self.stft.push(&self.scratch[skip..]);
        let bins = self.stft.bins();
        let keep_recent = self.columns_per_second().ceil() as usize;
        while self.stft.pop_column(&mut self.column) {
            self.columns_total += 1;
            if self.pending_cols >= RING_WIDTH {
                self.pending.drain(..bins);
                self.pending_cols -= 1;
            }
            self.pending.extend_from_slice(&self.column);
            self.pending_cols += 1;
            let mut old = if self.recent.len() >= keep_recent {
                self.recent.pop_front().unwrap_or_default()
            } else {
                Vec::with_capacity(bins)
            };
            old.clear();
            old.extend_from_slice(&self.column);
            self.recent.push_back(old);
        }
    }

    fn prepare(&mut self, gpu: &Gpu, frame: &FrameCtx) {
        if self.lut_dirty {
            gpu.queue.write_buffer(
                &self.lut,
                0,
                bytemuck::cast_slice(&colormap_lut(self.colormap)),
            );
            self.lut_dirty = false;
        }
        let bins = self.stft.bins() as u32;
        let slot = frame.slot();
        self.dispatch_cols = self.pending_cols;
        let newest_before = (self.columns_total - self.pending_cols as u64) % RING_WIDTH as u64;
        self.write_start = newest_before as u32;
        if self.pending_cols > 0 {
            self.columns_buf.write(
                &gpu.device,
                &gpu.queue,
                frame.frame,
                bytemuck::cast_slice(&self.pending),
            );
            let p = ColormapParams {
                bins,
                new_cols: self.pending_cols,
                write_start: self.write_start,
                ring_width: RING_WIDTH,
                db_floor: self.db_floor,
                db_ceil: self.db_ceil,
                _pad: [0.0; 2],
            };
            self.cm_params
                .write(&gpu.device, &gpu.queue, frame.frame, bytemuck::bytes_of(&p));
            let generation = self.columns_buf.generation();
            if self.cm_groups.as_ref().map(|g| g.0) != Some(generation) {
                let groups = std::array::from_fn(|s| {
                    gpu.device.create_bind_group(&wgpu::BindGroupDescriptor {
                        label: Some(&format!("spectrogram:colormap:group[{s}]")),
                        layout: &self.cm_layout,
                        entries: &[
                            wgpu::BindGroupEntry {
                                binding: 0,
                                resource: self.cm_params.buffer(s).as_entire_binding(),
                            },
                            wgpu::BindGroupEntry {
                                binding: 1,
                                resource: self.columns_buf.buffer(s).as_entire_binding(),
                            },
                            wgpu::BindGroupEntry {
                                binding: 2,
                                resource: self.lut.as_entire_binding(),
                            },
                            wgpu::BindGroupEntry {
                                binding: 3,
                                resource: wgpu::BindingResource::TextureView(&self.ring_view),
                            },
                        ],
                    })
                });
                self.cm_groups = Some((generation, groups));
            }
        }
        self.pending.clear();
        self.pending_cols = 0;
        let d = DrawParams {
            ring_width: RING_WIDTH,
            newest: (self.columns_total % RING_WIDTH as u64) as u32,
            visible: visible_columns(frame.size.0),
            rows: bins,
        };
        self.draw_params
            .write(&gpu.device, &gpu.queue, frame.frame, bytemuck::bytes_of(&d));
        let _ = slot;
    }

    fn compute(&self, pass: &mut wgpu::ComputePass<'_>, frame: &FrameCtx) {
        if self.dispatch_cols == 0 {
            return;
        }
        if let Some((_, groups)) = &self.cm_groups {
            pass.set_pipeline(&self.cm_pipeline);
            pass.set_bind_group(0, &groups[frame.slot()], &[]);
            pass.dispatch_workgroups(
                (self.stft.bins() as u32).div_ceil(64),
                self.dispatch_cols,
                1,
            );
        }
    }

    fn paint(&self, pass: &mut wgpu::RenderPass<'_>, frame: &FrameCtx) {
        pass.set_pipeline(&self.draw_pipeline);
        pass.set_bind_group(0, &self.draw_groups[frame.slot()], &[]);
        pass.draw(0..3, 0..1);
    }

    fn ui(&mut self, ui: &mut egui::Ui) {
        ui.heading("Spectrogram");
        if let Some(n) = self.source.notice() {
            ui.colored_label(egui::Color32::YELLOW, n);
        }
        if let Some(e) = self.source.stream_error() {
            ui.colored_label(egui::Color32::LIGHT_RED, format!("audio: {e}"));
        }
        ui.label(format!("source: {}", self.source.label()));
        ui.label(format!(
            "STFT: FFT {FFT_SIZE}, hop {HOP}, Hann; {} bins of {:.2} Hz",
            self.stft.bins(),
            self.source.sample_rate() as f64 / FFT_SIZE as f64
        ));
        ui.label(format!("columns: {}", self.columns_total));
        ui.label(format!("dropped samples: {}", self.source.dropped()));
        if let Some((hz, db)) = self.dominant() {
            ui.label(format!("dominant (1 s): {hz:.1} Hz at {db:.1} dBFS"));
        }
        ui.separator();
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
    }

    fn overlay(&self, painter: &egui::Painter, rect: egui::Rect) {
        let visible = visible_columns((rect.width() * painter.pixels_per_point()).round() as u32);
        let nyquist = self.source.sample_rate() as f64 / 2.0;
        let font = egui::FontId::proportional(12.0);
        let color = egui::Color32::from_gray(230);
        let bg = egui::Color32::from_black_alpha(160);
        let label = |pos: egui::Pos2, anchor: egui::Align2, text: String| {
            let galley = painter.layout_no_wrap(text, font.clone(), color);
            let r = anchor.anchor_size(pos, galley.size()).expand(2.0);
            painter.rect_filled(r, 2.0, bg);
            painter.galley(r.min + egui::vec2(2.0, 2.0), galley, color);
        };
        // Frequency axis (left), in Hz / kHz.
        let step = nice_step(nyquist, (rect.height() / 60.0).max(2.0) as f64);
        let mut f = 0.0;
        while f <= nyquist + 1e-9 {
            let y = rect.bottom() - (f / nyquist) as f32 * rect.height();
            painter.line_segment(
                [egui::pos2(rect.left(), y), egui::pos2(rect.left() + 6.0, y)],
                egui::Stroke::new(1.0, color),
            );
            let text = if f >= 1000.0 {
                format!("{:.1} kHz", f / 1000.0)
            } else {
                format!("{f:.0} Hz")
            };
            let anchor = if f == 0.0 {
                egui::Align2::LEFT_BOTTOM
            } else {
                egui::Align2::LEFT_CENTER
            };
            label(
                egui::pos2(rect.left() + 8.0, y.max(rect.top() + 8.0)),
                anchor,
                text,
            );
            f += step;
        }
        // Time axis (bottom), seconds since the source started, newest column at the right.
        if self.columns_total > 0 {
            let cps = self.columns_per_second();
            let newest_t = self.column_time(self.columns_total - 1);
            let span = visible as f64 / cps;
            let t0 = newest_t - span;
            let tstep = nice_step(span, (rect.width() / 110.0).max(2.0) as f64);
            let mut t = (t0 / tstep).ceil() * tstep;
            while t <= newest_t {
                if t >= 0.0 {
                    let x = rect.left() + ((t - t0) / span) as f32 * rect.width();
                    painter.line_segment(
                        [
                            egui::pos2(x, rect.bottom()),
                            egui::pos2(x, rect.bottom() - 6.0),
                        ],
                        egui::Stroke::new(1.0, color),
                    );
                    label(
                        egui::pos2(x, rect.bottom() - 8.0),
                        egui::Align2::CENTER_BOTTOM,
                        format!("{t:.1} s"),
                    );
                }
                t += tstep;
            }
        }
        if let Some(n) = self.source.notice() {
            label(
                rect.center_top() + egui::vec2(0.0, 8.0),
                egui::Align2::CENTER_TOP,
                n.to_string(),
            );
        }
    }

    fn metrics(&self) -> serde_json::Value {
        let dom = self.dominant();
        serde_json::json!({
            "source": self.source.kind(),
            "source_label": self.source.label(),
            "notice": self.source.notice(),
            "sample_rate": self.source.sample_rate(),
            "fft_size": FFT_SIZE,
            "hop": HOP,
            "window": "hann",
            "columns": self.columns_total,
            "samples": self.samples_total,
            "samples_skipped": self.samples_skipped,
            "dominant_hz": dom.map(|d| d.0),
            "dominant_dbfs": dom.map(|d| d.1),
            "dropped_samples": self.source.dropped(),
            "db_floor": self.db_floor,
            "db_ceil": self.db_ceil,
        })
    }

    fn problem(&self) -> Option<String> {
        self.source
            .stream_error()
            .map(|e| format!("audio input: {e}"))
    }
}

/// Columns shown across a viewport `width_px` wide: one pixel or more per column, at most the
/// ring's width.
pub fn visible_columns(width_px: u32) -> u32 {
    width_px.clamp(1, RING_WIDTH)
}

/// A "nice" tick step (1, 2 or 5 × 10ⁿ) so that `span` holds about `target` ticks.
pub fn nice_step(span: f64, target: f64) -> f64 {
    if span.is_nan() || span <= 0.0 || !span.is_finite() {
        return 1.0;
    }
    let raw = span / target.max(1.0);
    let mag = 10f64.powf(raw.log10().floor());
    let norm = raw / mag;
    let m = if norm <= 1.0 {
        1.0
    } else if norm <= 2.0 {
        2.0
    } else if norm <= 5.0 {
        5.0
    } else {
        10.0
    };
    m * mag
}
