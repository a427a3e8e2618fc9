//! The scene's GPU side: the colormap LUT and the ring texture's geometry, the pipelines and
//! layouts that do not depend on the analysis settings ([`ScenePipes`]), the FFT-size-dependent
//! objects ([`Analysis`]: the STFTs, the ring texture, the upload buffers, the bind groups), and
//! what the frame records on the GPU ([`Recording`]): the uploads of `prepare`, the FFT and
//! ring-write dispatches of `compute`, the draw of `paint`, and the rebuild after a lost device.
//! The copy of the GPU FFT's levels back to the CPU is in `readback.rs`.

use bytemuck::{Pod, Zeroable};

use super::layout::Frame;
use super::{FftOn, MAX_BATCH, MAX_RING_WIDTH, MAX_ROWS, SCROLLBACK_S, Settings, Spectrogram};
use crate::audio::stft::{self, Stft};
use crate::gpu::frame::GpuFrame;
use crate::gpu::upload::PingPong;
use crate::gpu::{Gpu, layout};
use crate::spectrogram::fft::GpuFft;
use crate::spectrogram::shaders;
use crate::{FrameCtx, SceneError};

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

/// The draw pass's parameters: the view of the ring, and the panel's parts in pixels
/// (`[x0, y0, x1, y1]`, from `layout::Frame`; an empty rect is not drawn).
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct DrawParams {
    ring_width: u32,
    newest: u32,
    visible: u32,
    rows: u32,
    bins: u32,
    scale: u32,
    filled: u32,
    _pad0: u32,
    nyquist: f32,
    f_lo: f32,
    db_floor: f32,
    db_ceil: f32,
    plot: [u32; 4],
    strip: [u32; 4],
    bar: [u32; 4],
}

/// Texels of the spectrum strip's line texture (its tallest view in pixels).
pub(super) const INSET_TEXELS: u32 = 8192;

/// The GPU objects of the scene that do not depend on the analysis settings.
pub(super) struct ScenePipes {
    pub(super) write_layout: wgpu::BindGroupLayout,
    pub(super) write_pipeline: wgpu::ComputePipeline,
    pub(super) draw_layout: wgpu::BindGroupLayout,
    pub(super) draw_pipeline: wgpu::RenderPipeline,
    pub(super) draw_params: PingPong,
    pub(super) lut: wgpu::Buffer,
    /// The spectrum view's line spans, one rgba32float texel per pixel column.
    pub(super) inset: wgpu::Texture,
    pub(super) inset_view: wgpu::TextureView,
}

impl ScenePipes {
    /// The draw pass's inputs besides the ring.
    pub(super) fn draw_inputs(&self) -> DrawInputs<'_> {
        DrawInputs {
            layout: &self.draw_layout,
            params: &self.draw_params,
            lut: &self.lut,
            inset: &self.inset_view,
        }
    }

    pub(super) fn new(device: &wgpu::Device, format: wgpu::TextureFormat) -> ScenePipes {
        let cs = wgpu::ShaderStages::COMPUTE;
        let fs = wgpu::ShaderStages::FRAGMENT;
        let (write_pipeline, write_layout) = layout::compute_pipeline(
            device,
            "spectrogram:ring_write",
            &shaders::SPECTROGRAM_RING_WRITE,
            &[
                layout::uniform(0, cs, None),
                layout::storage(1, cs, true),
                layout::storage_texture_2d(2, cs, wgpu::TextureFormat::R32Float),
            ],
        );
        let draw_layout = layout::bind_group_layout(
            device,
            "spectrogram:draw",
            &[
                layout::uniform(0, fs, None),
                layout::texture_2d(1, fs, false),
                layout::storage(2, fs, true),
                layout::texture_2d(3, fs, false),
            ],
        );
        let draw_pl = layout::pipeline_layout(device, "spectrogram:draw", &[&draw_layout]);
        let draw_pipeline = shaders::SPECTROGRAM_DRAW.render_pipeline(
            device,
            "spectrogram:draw",
            &draw_pl,
            &shaders::RenderOptions {
                format,
                ..Default::default()
            },
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
        let width = INSET_TEXELS.min(device.limits().max_texture_dimension_2d);
        let inset = device.create_texture(&wgpu::TextureDescriptor {
            label: Some("spectrogram:inset"),
            size: wgpu::Extent3d {
                width,
                height: 1,
                depth_or_array_layers: 1,
            },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: wgpu::TextureFormat::Rgba32Float,
            usage: wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_DST,
            view_formats: &[],
        });
        let inset_view = inset.create_view(&wgpu::TextureViewDescriptor {
            label: Some("spectrogram:inset:view"),
            ..Default::default()
        });
        ScenePipes {
            write_layout,
            write_pipeline,
            draw_layout,
            draw_pipeline,
            draw_params,
            lut,
            inset,
            inset_view,
        }
    }
}

/// The FFT-size-dependent GPU objects (rebuilt when the analysis settings change).
pub(super) struct Analysis {
    pub(super) settings: Settings,
    /// Where the FFT runs: [`FftOn::Cpu`] or [`FftOn::Gpu`] (`settings.fft_on` resolved).
    pub(super) fft_on: FftOn,
    /// What `--fft-on auto` measured, when it was asked for.
    pub(super) fft_choice: Option<super::fft_choice::FftChoice>,
    pub(super) bins: usize,
    pub(super) cpu: Stft,
    pub(super) gpu: Option<GpuFft>,
    /// GPU path: samples not yet consumed by a column (start = next column's first sample).
    pub(super) tail: Vec<f32>,
    /// GPU path: frames of this batch (batch × N), uploaded in `prepare`.
    pub(super) frames: Vec<f32>,
    pub(super) batch: u32,
    /// Ring texture.
    pub(super) ring_view: wgpu::TextureView,
    pub(super) ring_width: u32,
    pub(super) rows: u32,
    /// CPU path: new columns to upload (n × bins).
    pub(super) upload: PingPong,
    pub(super) write_params: PingPong,
    /// [slot] for the CPU path (reads `upload`), one for the GPU path (reads the FFT output).
    pub(super) write_groups_cpu: Option<(u64, [wgpu::BindGroup; 2])>,
    pub(super) write_groups_gpu: Option<[wgpu::BindGroup; 2]>,
    pub(super) draw_groups: [wgpu::BindGroup; 2],
    /// Columns of this frame's GPU batch still to be copied into the shared readback ring.
    pub(super) copy_pending: u32,
    /// Written (ring) index of that batch's first column; `None` when it is not written (view
    /// frozen): its levels then feed only the metrics, not the history.
    pub(super) copy_written: Option<u64>,
    /// The GPU FFT's window is still to be uploaded (by the next `prepare`).
    pub(super) window_pending: bool,
}

/// What the draw pass's bind groups hold besides the ring (made once per scene and device).
#[derive(Clone, Copy)]
pub(super) struct DrawInputs<'a> {
    pub(super) layout: &'a wgpu::BindGroupLayout,
    pub(super) params: &'a PingPong,
    pub(super) lut: &'a wgpu::Buffer,
    pub(super) inset: &'a wgpu::TextureView,
}

impl Analysis {
    pub(super) fn new(
        gpu: &Gpu,
        settings: &Settings,
        sample_rate: u32,
        write_layout: &wgpu::BindGroupLayout,
        draw: DrawInputs<'_>,
    ) -> Result<Analysis, SceneError> {
        let DrawInputs {
            layout: draw_layout,
            params: draw_params,
            lut,
            inset,
        } = draw;
        let device = &gpu.device;
        let cpu = Stft::with_window(settings.fft_size, settings.hop, settings.window)?;
        let bins = cpu.bins();
        // The GPU FFT's window is uploaded by the next `prepare`, through the frame's uploader.
        let mut gpu_fft = match settings.fft_on {
            FftOn::Gpu => Some(
                GpuFft::new(device, settings.fft_size, MAX_BATCH)
                    .map_err(|e| SceneError::Other(format!("GPU FFT: {e}")))?,
            ),
            // Auto: a GPU FFT that cannot be built leaves the CPU one.
            FftOn::Auto => GpuFft::new(device, settings.fft_size, MAX_BATCH).ok(),
            FftOn::Cpu => None,
        };
        let (fft_on, fft_choice) = match settings.fft_on {
            FftOn::Auto => {
                // No GPU wait here (an analysis may be rebuilt in a frame): the choice kept
                // from start-up.
                let c = super::fft_choice::choose(gpu, gpu_fft.is_some());
                log::debug!("spectrogram FFT on the {:?}: {}", c.on, c.reason);
                if c.on == FftOn::Cpu {
                    gpu_fft = None;
                }
                (c.on, Some(c))
            }
            on => (on, None),
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
                    wgpu::BindGroupEntry {
                        binding: 3,
                        resource: wgpu::BindingResource::TextureView(inset),
                    },
                ],
            })
        });
        Ok(Analysis {
            settings: settings.clone(),
            fft_on,
            fft_choice,
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
            window_pending: true,
        })
    }
}

/// This frame's work on its way to the GPU: the CPU path's columns and where they go in the
/// ring, the refill after a new device, the spectrum strip's texels, and the readbacks' state.
pub(super) struct Recording {
    pub(super) scratch: Vec<f32>,
    pub(super) column: Vec<f32>,
    /// CPU path: this frame's new columns (n × bins).
    pub(super) pending: Vec<f32>,
    pub(super) pending_cols: u32,
    pub(super) write_cols: u32,
    pub(super) write_start: u32,
    /// Gap columns to write this frame (input had no data).
    pub(super) gap_cols: u32,
    /// This frame's columns come from the CPU (CPU FFT or gap columns).
    pub(super) cpu_route: bool,
    /// Capture instant of the newest sample of the newest column written this frame.
    pub(super) frame_capture: Option<std::time::Instant>,
    /// The history was reset: the levels readbacks asked for before no longer apply (the next
    /// `record_readbacks` invalidates them in the ring, which then drops them unseen).
    pub(super) readbacks_stale: bool,
    /// The ring texture was made anew (a new GPU device): the next `prepare` draws the columns
    /// it should show again from the history.
    pub(super) refill_pending: bool,
    /// That refill, recorded by `compute` before the frame's own columns.
    pub(super) refill: Option<Refill>,
    /// The spectrum strip: this frame's texels, and its rect in image pixels (x0, y0, x1, y1;
    /// x1 = 0 when not shown).
    pub(super) inset_texels: Vec<[f32; 4]>,
    pub(super) inset_rect: [u32; 4],
}

impl Recording {
    /// Nothing to record yet, `bins` bins a column.
    pub(super) fn new(bins: usize) -> Recording {
        Recording {
            scratch: Vec::with_capacity(1 << 16),
            column: vec![stft::DB_FLOOR; bins],
            pending: Vec::new(),
            pending_cols: 0,
            write_cols: 0,
            write_start: 0,
            gap_cols: 0,
            cpu_route: false,
            frame_capture: None,
            readbacks_stale: false,
            refill_pending: false,
            refill: None,
            inset_texels: Vec::new(),
            inset_rect: [0; 4],
        }
    }
}

/// A one-off write of many columns into the ring texture (its bind group over its own column and
/// parameter buffers, which it keeps alive until recorded).
pub(super) struct Refill {
    group: wgpu::BindGroup,
    columns: u32,
}

/// Row `r` of `rows` for a full-resolution column: the largest non-NaN level of the bins the row
/// covers, bins `⌊r·B/R⌋ .. max(⌊(r+1)·B/R⌋, ⌊r·B/R⌋ + 1)` (the rule of `ring_write.wgsl`);
/// NaN when all are NaN (the shader then writes its floor).
fn pool_row(col: &[f32], r: usize, rows: usize) -> f32 {
    let bins = col.len();
    let b0 = r * bins / rows;
    let b1 = ((r + 1) * bins / rows).max(b0 + 1).min(bins);
    col.get(b0..b1)
        .into_iter()
        .flatten()
        .copied()
        .filter(|v| !v.is_nan())
        .fold(f32::NAN, f32::max)
}

impl Spectrogram {
    /// `prepare`'s uploads of this frame's columns: the colormap LUT and the GPU FFT's window
    /// when they changed, the columns (the CPU path's or gap columns through the upload buffer,
    /// the GPU path's frames into the FFT's input) and the ring write's parameters.
    pub(super) fn upload_columns(&mut self, f: &mut GpuFrame<'_>) {
        let gpu = f.gpu();
        if self.view.lut_dirty {
            f.write_slice(&self.pipes.lut, 0, &colormap_lut(self.view.colormap));
            self.view.lut_dirty = false;
        }
        if self.a.window_pending {
            if let Some(fft) = &mut self.a.gpu {
                let window = stft::window_values(self.a.settings.window, self.a.settings.fft_size);
                if let Err(e) = fft.set_window(f, &window) {
                    self.error = Some(format!("GPU FFT: {e}"));
                }
            }
            self.a.window_pending = false;
        }
        let bins = self.a.bins as u32;
        // This frame's columns: written into the ring whether the view is frozen or not (a
        // frozen view only stops following them).
        self.rec.write_cols = self.rec.pending_cols;
        self.rec.write_start = (self.tl.written % self.a.ring_width as u64) as u32;
        // Columns computed on the CPU (or gap columns) go up through the upload buffer.
        self.rec.cpu_route = self.a.fft_on == FftOn::Cpu || self.rec.gap_cols > 0;
        match self.rec.cpu_route {
            true => {
                if self.rec.pending_cols > 0 {
                    self.a
                        .upload
                        .write(f, bytemuck::cast_slice(&self.rec.pending));
                    let generation = self.a.upload.generation();
                    if self.a.write_groups_cpu.as_ref().map(|g| g.0) != Some(generation) {
                        let groups = std::array::from_fn(|s| {
                            gpu.device.create_bind_group(&wgpu::BindGroupDescriptor {
                                label: Some(&format!("spectrogram:ring_write:cpu_group[{s}]")),
                                layout: &self.pipes.write_layout,
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
                    && let Some(fft) = &self.a.gpu
                {
                    f.write_slice(fft.input(), 0, &self.a.frames);
                    self.a.copy_pending = self.a.batch;
                    self.a.copy_written = (self.rec.write_cols > 0).then_some(self.tl.written);
                }
            }
        }
        if self.rec.write_cols > 0 {
            let p = WriteParams {
                bins,
                rows: self.a.rows,
                new_cols: self.rec.write_cols,
                write_start: self.rec.write_start,
                ring_width: self.a.ring_width,
                first_col: 0,
                _pad: [0; 2],
            };
            self.a.write_params.write(f, bytemuck::bytes_of(&p));
        }
    }

    /// `prepare`: the spectrum strip's lines for this frame (one texel per pixel row of the
    /// strip, the rows of the image beside it: peak-hold min/max x, newest-column min/max x; a
    /// row a line does not cross holds an empty span), uploaded into the inset texture; the
    /// strip's rect for the draw's parameters (none when hidden or when the panel has no room).
    pub(super) fn upload_inset(&mut self, f: &mut GpuFrame<'_>, frame: &FrameCtx) {
        self.rec.inset_rect = [0; 4];
        let layout = self.frame_layout(frame.size);
        let Some(strip) = layout.strip else {
            return;
        };
        let mut area = Frame::px(strip, self.view.ppp);
        let plot = Frame::px(layout.plot, self.view.ppp);
        area[3] = area[3].min(area[1] + self.pipes.inset.width());
        // Before the first column the strip is drawn without lines.
        let [peak, newest] = self
            .strip_lines(area, plot)
            .unwrap_or([Vec::new(), Vec::new()]);
        let (p0, p) = crate::column_line::column_spans(&peak);
        let (n0, n) = crate::column_line::column_spans(&newest);
        let empty = (1.0e30, -1.0e30);
        let at = |first: f32, spans: &[(f32, f32)], y: u32| {
            let i = y as f32 - first;
            if i < 0.0 {
                return empty;
            }
            match spans.get(i as usize) {
                Some(&(a, b)) if !a.is_nan() => (a, b),
                _ => empty,
            }
        };
        self.rec.inset_texels.clear();
        for y in area[1]..area[3] {
            let (a, b) = at(p0, &p, y);
            let (c, d) = at(n0, &n, y);
            self.rec.inset_texels.push([a, b, c, d]);
        }
        let w = self.rec.inset_texels.len() as u32;
        if w == 0 {
            return;
        }
        f.write_texture(
            &self.pipes.inset,
            (0, 0),
            (w, 1),
            w * 16,
            bytemuck::cast_slice(&self.rec.inset_texels),
        );
        self.rec.inset_rect = area;
    }

    /// `prepare`'s last upload: the draw's parameters (the view: newest shown column, columns
    /// across, frequency axis, dB range; the panel's parts), once the written columns are
    /// counted.
    pub(super) fn upload_draw_params(&mut self, f: &mut GpuFrame<'_>, frame: &FrameCtx) {
        let bins = self.a.bins as u32;
        let axis = self.axis();
        let visible = self.visible();
        let filled =
            (self.tl.written.min(self.a.ring_width as u64)).saturating_sub(self.view.view_back);
        let layout = self.frame_layout(frame.size);
        let d = DrawParams {
            ring_width: self.a.ring_width,
            newest: ((self.tl.written - self.view.view_back.min(self.tl.written))
                % self.a.ring_width as u64) as u32,
            visible,
            rows: self.a.rows,
            bins,
            scale: self.view.scale.code(),
            filled: filled.min(u32::MAX as u64) as u32,
            _pad0: 0,
            nyquist: axis.nyquist as f32,
            f_lo: axis.f_lo as f32,
            db_floor: self.view.db_floor,
            db_ceil: self.view.db_ceil,
            plot: Frame::px(layout.plot, self.view.ppp),
            strip: self.rec.inset_rect,
            bar: layout.bar.map_or([0; 4], |b| Frame::px(b, self.view.ppp)),
        };
        self.pipes.draw_params.write(f, bytemuck::bytes_of(&d));
    }

    /// `prepare`, first thing after the GPU objects were made anew on a new device: the columns
    /// the ring should show (the last `min(written, ring width)` written ones) max-pooled into
    /// its rows on the CPU from the history, the same rule as `ring_write.wgsl`, and uploaded
    /// with their own ring-write parameters. Columns the history does not hold (older than it,
    /// or whose readback was lost with the old device) are NaN, drawn at the floor.
    pub(super) fn upload_refill(&mut self, f: &mut GpuFrame<'_>) {
        if !std::mem::take(&mut self.rec.refill_pending) {
            return;
        }
        let (rows, ring_width) = (self.a.rows as usize, self.a.ring_width as u64);
        let row_bytes = rows as u64 * 4;
        let fits = (f.device().limits().max_storage_buffer_binding_size / row_bytes.max(1)).max(1);
        let n = self.tl.written.min(ring_width).min(fits);
        if n == 0 || rows == 0 {
            return;
        }
        let first = self.tl.written - n;
        let mut pooled = Vec::with_capacity(n as usize * rows);
        for w in first..self.tl.written {
            match self.levels.history.get(w) {
                Some(col) => pooled.extend((0..rows).map(|r| pool_row(col, r, rows))),
                None => pooled.extend(std::iter::repeat_n(f32::NAN, rows)),
            }
        }
        let device = f.device();
        let columns = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("spectrogram:refill:columns"),
            size: n * row_bytes,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let params = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("spectrogram:refill:params"),
            size: std::mem::size_of::<WriteParams>() as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        f.write_slice(&columns, 0, &pooled);
        // Already pooled: one value per row, so the shader's bins = rows (identity pooling).
        f.write_pod(
            &params,
            0,
            &WriteParams {
                bins: rows as u32,
                rows: rows as u32,
                new_cols: n as u32,
                write_start: (first % ring_width) as u32,
                ring_width: ring_width as u32,
                first_col: 0,
                _pad: [0; 2],
            },
        );
        let group = layout::bind_group(
            device,
            "spectrogram:refill:group",
            &self.pipes.write_layout,
            &[
                params.as_entire_binding(),
                columns.as_entire_binding(),
                wgpu::BindingResource::TextureView(&self.a.ring_view),
            ],
        );
        self.rec.refill = Some(Refill {
            group,
            columns: n as u32,
        });
    }

    /// `compute`: the ring's refill after a new device (once), the batched GPU FFT of this
    /// frame's frames, then the ring write of this frame's columns (from the FFT's output or the
    /// upload buffer), which lands after the refill.
    pub(super) fn encode_columns(&mut self, pass: &mut wgpu::ComputePass<'_>, frame: &FrameCtx) {
        if let Some(r) = self.rec.refill.take() {
            pass.set_pipeline(&self.pipes.write_pipeline);
            pass.set_bind_group(0, &r.group, &[]);
            pass.dispatch_workgroups(self.a.rows.div_ceil(64), r.columns, 1);
        }
        if let (FftOn::Gpu, Some(f)) = (self.a.fft_on, &self.a.gpu)
            && self.a.batch > 0
        {
            f.encode(pass, self.a.batch);
        }
        if self.rec.write_cols == 0 {
            return;
        }
        let group = if self.rec.cpu_route {
            self.a.write_groups_cpu.as_ref().map(|g| &g.1[frame.slot()])
        } else {
            self.a.write_groups_gpu.as_ref().map(|g| &g[frame.slot()])
        };
        if let Some(group) = group {
            pass.set_pipeline(&self.pipes.write_pipeline);
            pass.set_bind_group(0, group, &[]);
            pass.dispatch_workgroups(self.a.rows.div_ceil(64), self.rec.write_cols, 1);
        }
    }

    /// `recreate_gpu`: the pipelines and the FFT-size-dependent objects made anew on a new device.
    pub(super) fn rebuild_gpu(&mut self, gpu: &Gpu) -> Result<(), SceneError> {
        // The audio source, the STFT's unconsumed samples, the stream timeline, the history
        // and the view live on the CPU and carry on; the GPU objects are made anew. Columns
        // whose readback was in flight on the old device stay NaN in the history.
        let p = ScenePipes::new(&gpu.device, gpu.scene_format);
        let mut a = Analysis::new(
            gpu,
            &self.a.settings,
            self.source.sample_rate(),
            &p.write_layout,
            p.draw_inputs(),
        )?;
        std::mem::swap(&mut a.cpu, &mut self.a.cpu);
        std::mem::swap(&mut a.tail, &mut self.a.tail);
        self.a = a;
        self.pipes = p;
        self.view.lut_dirty = true;
        self.rec.refill_pending = true;
        self.rec.refill = None;
        Ok(())
    }

    /// `paint`: the ring texture drawn as the image (one full-screen triangle).
    pub(super) fn draw_image(&self, pass: &mut wgpu::RenderPass<'_>, frame: &FrameCtx) {
        pass.set_pipeline(&self.pipes.draw_pipeline);
        pass.set_bind_group(0, &self.a.draw_groups[frame.slot()], &[]);
        pass.draw(0..3, 0..1);
    }
}

/// The WGSL mirrors of the scene's uniform blocks (`WriteParams` in `ring_write.wgsl`,
/// `DrawParams` in `draw.wgsl`), for the layout contract test ([`crate::gpu::mirror`]).
pub(crate) fn wgsl_mirrors() -> Vec<crate::gpu::mirror::Mirror> {
    use crate::gpu::mirror::wgsl_mirror;
    vec![
        wgsl_mirror!(WriteParams => "WriteParams" {
            bins, rows, new_cols, write_start, ring_width, first_col, _pad,
        }),
        wgsl_mirror!(DrawParams => "DrawParams" {
            ring_width, newest, visible, rows, bins, scale, filled, _pad0, nyquist, f_lo,
            db_floor, db_ceil, plot, strip, bar,
        }),
    ]
}

#[cfg(test)]
mod tests {
    use super::pool_row;

    #[test]
    fn rows_pool_the_maximum_of_their_bins_and_skip_nan() {
        // 5 bins into 2 rows: row 0 covers bins 0..2, row 1 bins 2..5.
        let col = [-10.0, -3.0, f32::NAN, -7.0, -20.0];
        assert_eq!(pool_row(&col, 0, 2), -3.0);
        assert_eq!(pool_row(&col, 1, 2), -7.0);
        // As many rows as bins: the identity.
        for (r, v) in col.iter().enumerate() {
            let p = pool_row(&col, r, col.len());
            assert!(p == *v || (p.is_nan() && v.is_nan()), "row {r}: {p}");
        }
        // Only NaN: NaN (drawn at the floor).
        assert!(pool_row(&[f32::NAN; 4], 0, 1).is_nan());
    }
}
