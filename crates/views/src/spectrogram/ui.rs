//! The scene's egui side: the side panel (source, analysis and view controls, readouts;
//! what it asked for is kept in [`Panel`]) and pointer and keyboard over the image (`interact`:
//! wheel and drag scroll the view back, ctrl+wheel zooms time around the pointer, space freezes,
//! the hover readout). The overlay is drawn by `overlay.rs`, the view's moves are in `view.rs`,
//! the settings kept between runs in `saved.rs`.
//! Source changes, seeks and new settings asked for here are applied by the next `prepare`.

use std::path::PathBuf;

use super::axis::{FreqScale, format_hz, note_name};
use super::layout::Frame;
use super::{COLORMAPS, FftOn, Settings, Spectrogram};
use crate::audio::stft::{self, WindowKind};
use crate::audio::{AudioOptions, AudioSelection, ChannelChoice, SynthSignal};

/// What the side panel asked for (applied by the next `prepare`) and its fields' contents.
pub(super) struct Panel {
    pub(super) settings_ui: Settings,
    pub(super) devices: Vec<crate::audio::InputDeviceInfo>,
    pub(super) file_path_ui: String,
    pub(super) seek_ui: Option<f64>,
    /// A source change asked for in the UI, applied in `prepare` (which has the GPU).
    pub(super) reopen_request: Option<(AudioSelection, AudioOptions)>,
    /// The file asked to start over from the side panel: `true` analysed whole, `false`
    /// played at real-time rate.
    pub(super) replay_request: Option<bool>,
}

impl Panel {
    /// Nothing asked for; the analysis settings shown are `settings`.
    pub(super) fn new(settings: Settings) -> Panel {
        Panel {
            settings_ui: settings,
            devices: Vec::new(),
            file_path_ui: String::new(),
            seek_ui: None,
            reopen_request: None,
            replay_request: None,
        }
    }
}

impl Spectrogram {
    /// `ui`: the side panel.
    pub(super) fn side_panel(&mut self, ui: &mut egui::Ui) {
        ui.heading("Spectrogram");
        if let Some(l) = &self.loading {
            l.panel(ui);
        }
        if !self.following() {
            self.source_ui(ui);
        }
        if let Some(n) = self.notice() {
            ui.colored_label(egui::Color32::YELLOW, n);
        }
        if let Some(e) = self.source.stream_error() {
            ui.colored_label(egui::Color32::LIGHT_RED, format!("audio: {e}"));
        }
        if let Some(e) = &self.error {
            ui.colored_label(egui::Color32::LIGHT_RED, e);
        }
        ui.label(format!("source: {}", self.source_label()));
        let sr = self.source.sample_rate();
        ui.label(format!(
            "{} bins of {:.2} Hz, {:.1} columns/s",
            self.a.bins,
            sr as f64 / self.a.settings.fft_size as f64,
            self.columns_per_second()
        ));
        ui.label(format!(
            "columns: {} (skipped {}), dropped samples: {}",
            self.tl.columns_total,
            self.tl.columns_skipped,
            self.source.dropped()
        ));
        if let Some((hz, db)) = self.dominant() {
            ui.label(format!("dominant (1 s): {hz:.1} Hz at {db:.1} dBFS"));
        }
        ui.separator();
        ui.label("Analysis");
        if self.following() && self.share.followed_publisher().is_none() {
            ui.label("the publisher's, once its first keyframe arrives (no FFT here)");
        } else if self.following() {
            ui.label(format!(
                "the publisher's: N = {}, hop {}, {} window (columns received, no FFT here)",
                self.a.settings.fft_size,
                self.a.settings.hop,
                self.a.settings.window.name()
            ));
        } else {
            self.analysis_ui(ui);
        }
        ui.separator();
        ui.label("View");
        ui.horizontal(|ui| {
            ui.label("frequency axis");
            for sc in [FreqScale::Linear, FreqScale::Log, FreqScale::Mel] {
                ui.selectable_value(&mut self.view.scale, sc, sc.name());
            }
        });
        ui.add(egui::Slider::new(&mut self.view.db_floor, -160.0..=-20.0).text("dB floor"));
        ui.add(egui::Slider::new(&mut self.view.db_ceil, -60.0..=20.0).text("dB ceiling"));
        if self.view.db_ceil <= self.view.db_floor + 1.0 {
            self.view.db_ceil = self.view.db_floor + 1.0;
        }
        let before = self.view.colormap;
        egui::ComboBox::from_label("colormap")
            .selected_text(COLORMAPS[self.view.colormap].0)
            .show_ui(ui, |ui| {
                for (i, (name, _)) in COLORMAPS.iter().enumerate() {
                    ui.selectable_value(&mut self.view.colormap, i, *name);
                }
            });
        if before != self.view.colormap {
            self.view.lut_dirty = true;
        }
        ui.horizontal(|ui| {
            let label = if self.view.frozen {
                "Resume (space)"
            } else {
                "Freeze (space)"
            };
            if ui.button(label).clicked() {
                self.set_frozen(!self.view.frozen);
            }
            ui.checkbox(&mut self.view.show_spectrum, "spectrum strip")
                .on_hover_text("the newest column's spectrum and the peak hold, beside the image");
        });
        if ui.button("Reset peak hold").clicked() {
            self.levels
                .peak_hold
                .iter_mut()
                .for_each(|p| *p = stft::DB_FLOOR);
        }
        ui.label(format!(
            "scrollback: {:.0} s ({} columns); drag or wheel to scroll, ctrl+wheel to zoom time",
            self.a.ring_width as f64 / self.columns_per_second(),
            self.a.ring_width
        ));
    }

    /// The analysis settings (FFT size, overlap, window, where the FFT runs), applied by the
    /// next `prepare`.
    fn analysis_ui(&mut self, ui: &mut egui::Ui) {
        let s = &mut self.panel.settings_ui;
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
            ui.selectable_value(&mut s.fft_on, FftOn::Auto, "auto");
            ui.selectable_value(&mut s.fft_on, FftOn::Gpu, "GPU");
            ui.selectable_value(&mut s.fft_on, FftOn::Cpu, "CPU");
        })
        .response
        .on_hover_text(
            "auto: the faster of the two on this adapter, measured when the analysis is built",
        );
        if let Some(c) = &self.a.fft_choice {
            ui.small(format!(
                "auto: {} ({:.3} ms CPU vs {} GPU for {} column(s))",
                if c.on == FftOn::Cpu { "CPU" } else { "GPU" },
                c.cpu_ms,
                c.gpu_ms
                    .map_or_else(|| "–".to_string(), |g| format!("{g:.3} ms")),
                c.columns
            ));
        }
    }

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
                    self.panel.reopen_request = Some((self.source.selection().clone(), opts));
                }
                ui.horizontal(|ui| {
                    let label = if self.panel.devices.is_empty() {
                        "Input devices…"
                    } else {
                        "Hide devices"
                    };
                    if ui.button(label).clicked() {
                        if self.panel.devices.is_empty() {
                            self.panel.devices = crate::audio::input_devices();
                        } else {
                            self.panel.devices.clear();
                        }
                    }
                    if ui.button("Default").clicked() {
                        self.panel.reopen_request = Some((AudioSelection::Default, opts));
                    }
                });
                for d in self.panel.devices.clone() {
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
                        self.panel.reopen_request = Some((AudioSelection::Device(key), opts));
                    }
                }
                ui.horizontal_wrapped(|ui| {
                    ui.label("synthetic:");
                    for s in SynthSignal::ALL {
                        if ui.small_button(s.name()).clicked() {
                            self.panel.reopen_request = Some((AudioSelection::Signal(*s), opts));
                        }
                    }
                });
                ui.horizontal(|ui| {
                    let field = ui.add(
                        egui::TextEdit::singleline(&mut self.panel.file_path_ui)
                            .hint_text("sound file path (or drop a file)")
                            .desired_width(170.0),
                    );
                    // Enter in the field opens it, as the button does.
                    let entered =
                        field.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
                    if (ui.button("Open").clicked() || entered)
                        && !self.panel.file_path_ui.trim().is_empty()
                    {
                        let path = PathBuf::from(self.panel.file_path_ui.trim());
                        self.panel.reopen_request = Some((AudioSelection::File(path), opts));
                    }
                });
                if let Some(w) = self.source.warning() {
                    ui.colored_label(egui::Color32::YELLOW, w);
                }
                if let (Some(pos), Some(dur)) = (self.source.position_s(), self.source.duration_s())
                {
                    ui.horizontal(|ui| {
                        let paused = self.source.paused();
                        if self.source.finished() {
                            if ui
                                .button("Play again")
                                .on_hover_text("from the start, at real-time rate")
                                .clicked()
                            {
                                self.panel.replay_request = Some(false);
                            }
                        } else if ui.button(if paused { "Play" } else { "Pause" }).clicked() {
                            self.source.set_paused(!paused);
                        }
                        if ui
                            .button("Whole")
                            .on_hover_text("analyse the file whole and fit the view to it")
                            .clicked()
                        {
                            self.panel.replay_request = Some(true);
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
                        self.panel.seek_ui = Some(p);
                    }
                }
                if !self.levels.latencies.is_empty() {
                    let (last, p50, p99) = self.latency_summary();
                    ui.label(format!(
                        "latency capture to present: last {last:.1} ms, p50 {p50:.1}, p99 {p99:.1}"
                    ));
                }
            });
    }

    /// `interact`: pointer and keyboard over the image: Space freezes or resumes the view, a
    /// drag or the wheel scrolls it back (freezing a view that follows new columns), ctrl+wheel
    /// (egui's zoom gesture) zooms the time axis around the pointer, the hover readout.
    pub(super) fn handle_pointer(&mut self, response: &egui::Response, rect: egui::Rect) {
        let ppp = response.ctx.pixels_per_point();
        self.view.ppp = ppp;
        let (scroll, zoom, space) = response.ctx.input(|i| {
            (
                i.smooth_scroll_delta,
                i.zoom_delta(),
                i.key_pressed(egui::Key::Space),
            )
        });
        if space && response.ctx.memory(|m| m.focused().is_none()) {
            self.set_frozen(!self.view.frozen);
        }
        let frame = Frame::for_pixels(Self::size_px(rect, ppp), ppp, self.view.show_spectrum);
        let plot = frame.plot.translate(rect.min.to_vec2());
        let px = Frame::px(frame.plot, ppp);
        self.view.plot_w_px = px[2].saturating_sub(px[0]).max(1);
        let visible = self.visible() as f32;
        let cols_per_point = visible / plot.width().max(1.0);
        if response.dragged() {
            let dx = response.drag_delta().x;
            if dx != 0.0 {
                self.freeze_if_following();
                self.view.drag_acc += dx * cols_per_point;
                let whole = self.view.drag_acc.trunc();
                self.view.drag_acc -= whole;
                self.scroll_by(whole as i64);
            }
        }
        if response.hovered() {
            if zoom != 1.0 && zoom.is_finite() && zoom > 0.0 {
                let fx = response.hover_pos().map_or(1.0, |p| {
                    ((p.x - plot.left()) / plot.width().max(1.0)).clamp(0.0, 1.0)
                });
                self.zoom_time(f64::from(zoom), f64::from(fx));
            } else if scroll.x != 0.0 || scroll.y != 0.0 {
                let d = (scroll.x + scroll.y) * cols_per_point;
                if d.abs() >= 1.0 {
                    self.freeze_if_following();
                    self.scroll_by(d as i64);
                }
            }
        }
        self.view.hover = None;
        self.view.hover_pos = None;
        if let Some(pos) = response.hover_pos().filter(|p| plot.contains(*p)) {
            let visible = self.visible();
            let fx = ((pos.x - plot.left()) / plot.width()).clamp(0.0, 0.999_999);
            let fy = 1.0 - ((pos.y - plot.top()) / plot.height()).clamp(0.0, 1.0);
            let back = u64::from(visible) - (fx * visible as f32) as u64; // 1 = newest shown
            let shown_newest = self.tl.written.saturating_sub(self.view.view_back);
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
                if let Some(c) = self.levels.history.get(col) {
                    let sr = self.source.sample_rate() as f64;
                    let k = ((hz * self.a.settings.fft_size as f64 / sr).round() as usize)
                        .min(c.len().saturating_sub(1));
                    if c[k] <= super::GAP_DB {
                        text += "  no input";
                    } else {
                        text += &format!("  {:.1} dBFS", c[k]);
                    }
                }
            }
            self.view.hover = Some(text);
            self.view.hover_pos = Some(pos);
        }
    }
}
