//! The scene's egui side: the side panel (source, analysis and view controls, readouts),
//! pointer and keyboard over the image (`interact`: wheel and drag scroll the view back,
//! ctrl+wheel zooms time around the pointer, space freezes, the hover readout) and the overlay
//! drawn over the panel (`overlay`: the axes of the image, the spectrum strip and the colour bar
//! with their titles, laid out by `layout.rs`; notices; the readout).
//! Source changes, seeks and new settings asked for here are applied by the next `prepare`.

use std::path::PathBuf;

use super::axis::{FreqAxis, FreqScale, format_hz, note_name};
use super::layout::{self, Frame, Tick, Ticks};
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

/// The view: the dB range, colormap and frequency axis, freeze, scroll-back and time zoom, the
/// pointer's hover readout and drag, and the sizes the last frame and `interact` saw.
pub(super) struct View {
    pub(super) db_floor: f32,
    pub(super) db_ceil: f32,
    pub(super) colormap: usize,
    pub(super) lut_dirty: bool,
    pub(super) scale: FreqScale,
    /// The view stands still (Space, a drag or the wheel); the analysis goes on.
    pub(super) frozen: bool,
    /// Times the view was frozen (for the report).
    pub(super) freezes: u64,
    /// Columns between the newest written one and the right edge of the view.
    pub(super) view_back: u64,
    pub(super) cols_per_px: f32,
    /// Columns across the view while it is fitted to a file (until the user zooms).
    pub(super) fit_cols: Option<u64>,
    /// The fraction of a column `view_back` was rounded by at the last zoom step.
    pub(super) zoom_back_frac: f64,
    pub(super) show_spectrum: bool,
    pub(super) hover: Option<String>,
    pub(super) hover_pos: Option<egui::Pos2>,
    pub(super) drag_acc: f32,
    /// Width of the image in pixels (the panel less the axes, the strip and the colour bar).
    pub(super) plot_w_px: u32,
    /// The UI's pixels per point.
    pub(super) ppp: f32,
    /// The deck draws its stats overlay over the scene ([`crate::ui::overlay_shown`], as the
    /// last `ui` saw it): the colour bar keeps clear of its corner.
    pub(super) stats_overlay: bool,
}

impl View {
    /// The view a scene starts with: −120 … 0 dB, the first colormap, a linear axis, following.
    pub(super) fn new() -> View {
        View {
            db_floor: -120.0,
            db_ceil: 0.0,
            colormap: 0,
            lut_dirty: true,
            scale: FreqScale::Linear,
            frozen: false,
            freezes: 0,
            view_back: 0,
            cols_per_px: 1.0,
            fit_cols: None,
            zoom_back_frac: 0.0,
            show_spectrum: true,
            hover: None,
            hover_pos: None,
            drag_acc: 0.0,
            plot_w_px: 1,
            ppp: 1.0,
            stats_overlay: true,
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

    /// The scene image's size in pixels for `rect` (points) at `ppp`, rounded as the deck does.
    fn size_px(rect: egui::Rect, ppp: f32) -> (u32, u32) {
        (
            (rect.width() * ppp).round().max(1.0) as u32,
            (rect.height() * ppp).round().max(1.0) as u32,
        )
    }

    /// The panel's layout for a scene image of `size_px` pixels (the UI's pixels per point as
    /// the last `interact` saw them).
    pub(super) fn frame_layout(&self, size_px: (u32, u32)) -> Frame {
        Frame::for_pixels_with(
            size_px,
            self.view.ppp,
            self.view.show_spectrum,
            self.view.stats_overlay,
        )
    }

    /// `overlay`: the axes (ticks, labels, titles; placed by [`layout::place`] in the margins
    /// around the image, strip and colour bar), notices, and the hover readout.
    pub(super) fn draw_overlay(&self, painter: &egui::Painter, rect: egui::Rect) {
        let ppp = painter.pixels_per_point();
        let frame = Frame::for_pixels_with(
            Self::size_px(rect, ppp),
            ppp,
            self.view.show_spectrum,
            self.view.stats_overlay,
        );
        let o = rect.min.to_vec2();
        let color = egui::Color32::from_gray(225);
        let stroke = egui::Stroke::new(1.0, egui::Color32::from_gray(170));
        let (bar, strip) = layout::level_ticks(&frame, self.view.db_floor, self.view.db_ceil);
        let ticks = Ticks {
            freq: layout::freq_ticks(&frame, &self.axis()),
            time: self.time_ticks(&frame),
            bar,
            strip,
        };
        if frame.axes {
            let plot = frame.plot.translate(o);
            for t in &ticks.freq {
                let y = t.at + o.y;
                painter.line_segment(
                    [
                        egui::pos2(plot.left() - layout::TICK, y),
                        egui::pos2(plot.left(), y),
                    ],
                    stroke,
                );
            }
            for t in &ticks.time {
                let x = t.at + o.x;
                painter.line_segment(
                    [
                        egui::pos2(x, plot.bottom()),
                        egui::pos2(x, plot.bottom() + layout::TICK),
                    ],
                    stroke,
                );
            }
            if let Some(b) = frame.bar.map(|b| b.translate(o)) {
                for t in &ticks.bar {
                    let y = t.at + o.y;
                    painter.line_segment(
                        [
                            egui::pos2(b.right(), y),
                            egui::pos2(b.right() + layout::TICK, y),
                        ],
                        stroke,
                    );
                }
            }
            if let Some(s) = frame.strip.map(|s| s.translate(o)) {
                let grid = egui::Stroke::new(1.0, egui::Color32::from_white_alpha(28));
                for t in &ticks.strip {
                    let x = t.at + o.x;
                    painter.line_segment([egui::pos2(x, s.top()), egui::pos2(x, s.bottom())], grid);
                    painter.line_segment(
                        [
                            egui::pos2(x, s.bottom()),
                            egui::pos2(x, s.bottom() + layout::TICK),
                        ],
                        stroke,
                    );
                }
            }
        }
        let measure = |text: &str| {
            painter
                .layout_no_wrap(text.to_string(), label_font(), color)
                .size()
        };
        for l in layout::place(&frame, &ticks, &measure) {
            let galley = painter.layout_no_wrap(l.text, label_font(), color);
            let r = l.rect.translate(o);
            match l.kind {
                layout::LabelKind::Title { vertical: true } => {
                    // Turned a quarter counter-clockwise: the text's top-left is the rect's
                    // bottom-left.
                    painter.add(
                        egui::epaint::TextShape::new(r.left_bottom(), galley, color)
                            .with_angle(-std::f32::consts::FRAC_PI_2),
                    );
                }
                _ => {
                    painter.galley(r.min, galley, color);
                }
            }
        }
        self.draw_notices(painter, rect, frame.plot.translate(o));
        if let (Some(text), Some(pos)) = (&self.view.hover, self.view.hover_pos) {
            let anchor = if pos.x > rect.center().x {
                egui::Align2::RIGHT_BOTTOM
            } else {
                egui::Align2::LEFT_BOTTOM
            };
            let galley = painter.layout_no_wrap(text.clone(), label_font(), color);
            let at = pos + egui::vec2(if pos.x > rect.center().x { -12.0 } else { 12.0 }, -8.0);
            let r = anchor.anchor_size(at, galley.size()).expand(2.0);
            painter.rect_filled(r, 2.0, egui::Color32::from_black_alpha(180));
            painter.galley(r.min + egui::vec2(2.0, 2.0), galley, color);
        }
    }

    /// The notices over the image's top-left corner, wrapped to its width and kept clear of the
    /// stats overlay (top right): below it where the room beside it is too narrow.
    fn draw_notices(&self, painter: &egui::Painter, rect: egui::Rect, plot: egui::Rect) {
        let mut notices = Vec::new();
        if self.view.frozen {
            notices.push(format!(
                "FROZEN {:.1} s back (analysis goes on; space resumes)",
                self.view.view_back as f64 / self.columns_per_second()
            ));
        }
        if let Some(n) = self.notice() {
            notices.push(n);
        }
        if notices.is_empty() {
            return;
        }
        let stats = crate::ui::overlay_area(rect);
        let beside = stats.left() - plot.left() - 16.0;
        let (mut y, width) = if beside >= 220.0 {
            (plot.top() + 6.0, beside)
        } else {
            (stats.bottom().max(plot.top()) + 6.0, plot.width() - 12.0)
        };
        let color = egui::Color32::from_rgb(255, 225, 120);
        for n in notices {
            let galley = painter.layout(n, label_font(), color, width.max(60.0));
            let r = egui::Rect::from_min_size(egui::pos2(plot.left() + 6.0, y), galley.size())
                .expand(3.0);
            painter.rect_filled(r, 3.0, egui::Color32::from_black_alpha(190));
            y = r.bottom() + 4.0;
            painter.galley(r.min + egui::vec2(3.0, 3.0), galley, color);
        }
    }

    /// The time axis' ticks (seconds since the source started) on the image of `frame`, newest
    /// shown column at its right edge. Each tick sits on the column whose centre time it labels,
    /// so columns never shown (a jump in time) move the labels with them; a tick time that
    /// falls in a jump is skipped.
    fn time_ticks(&self, frame: &Frame) -> Vec<Tick> {
        let plot = frame.plot;
        let shown_newest = self.tl.written.saturating_sub(self.view.view_back);
        if shown_newest == 0 {
            return Vec::new();
        }
        let cps = self.columns_per_second();
        let v = u64::from(self.visible());
        let w_hi = shown_newest - 1;
        let w_lo = w_hi.saturating_sub(v - 1);
        let (t_lo, t_hi) = (self.column_time(w_lo), self.column_time(w_hi));
        let (step, decimals) = layout::time_step(v as f64 / cps, plot.width());
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
        // The centre of written column w, drawn v − 1 − (w_hi − w) columns from the left edge.
        let x_of = |back: f64| plot.right() - ((back + 0.5) / v as f64) as f32 * plot.width();
        // The image's left edge, when fewer columns than it spans were written yet.
        let t_left = t_lo - (v - 1 - (w_hi - w_lo)) as f64 / cps;
        let mut k = (t_left.max(0.0) / step).ceil();
        let mut out = Vec::new();
        while k * step <= t_hi && out.len() < 500 {
            let t = k * step;
            let w = column_at(t);
            let x = if t < t_lo {
                // Before the oldest shown column: one hop per column, as far as the image.
                x_of((w_hi - w_lo) as f64 + (t_lo - t) * cps)
            } else {
                let tw = self.column_time(w.min(w_hi));
                if (tw - t).abs() > 1.0 / cps {
                    // t falls in a jump: go on from the first tick after it.
                    k = (tw / step).ceil().max(k + 1.0);
                    continue;
                }
                x_of((w_hi - w) as f64)
            };
            if x >= plot.left() - 0.5 && x <= plot.right() + 0.5 {
                out.push(Tick {
                    at: x,
                    text: format!("{t:.decimals$}"),
                });
            }
            k += 1.0;
        }
        out
    }

    /// Freezes or resumes the view (the analysis goes on either way); resuming shows the newest
    /// columns again.
    pub(super) fn set_frozen(&mut self, frozen: bool) {
        if frozen && !self.view.frozen {
            self.view.freezes += 1;
        }
        self.view.frozen = frozen;
        if !frozen {
            self.view.view_back = 0;
            self.view.drag_acc = 0.0;
        }
    }

    /// A drag or the wheel over a view that follows new columns freezes it first (a file that
    /// stands still scrolls without freezing).
    fn freeze_if_following(&mut self) {
        if self.producing() {
            self.set_frozen(true);
        }
    }

    /// Scrolls the view `d` columns into the past (positive) or back towards now: no further
    /// back than the oldest column held at the view's left edge (or than the view already is).
    fn scroll_by(&mut self, d: i64) {
        let visible = u64::from(self.visible());
        let held = self.tl.written.min(self.a.ring_width as u64);
        let max_back = held.saturating_sub(visible).max(self.view.view_back);
        let v = (self.view.view_back as i64 + d).clamp(0, max_back as i64);
        self.view.view_back = v as u64;
    }

    /// The farthest back the view's right edge may go with `visible` columns across: the
    /// oldest column shown still in the ring, and at least the first column written shown.
    pub(super) fn max_back(&self, visible: f64) -> u64 {
        max_back(self.tl.written, self.a.ring_width, visible)
    }

    /// Zooms the time axis by `factor` (> 1: in) around the pointer at fraction `fx` of the
    /// image's width ([`zoom_view`]); a view that follows new columns keeps the newest at its
    /// right edge. Ends a fit to a file.
    fn zoom_time(&mut self, factor: f64, fx: f64) {
        let w = f64::from(self.view.plot_w_px.max(1));
        let max = f64::from(self.a.ring_width);
        let min = (w / MAX_PX_PER_COLUMN).clamp(1.0, max);
        let following = !self.view.frozen && self.producing();
        // Unrounded, so that a zoom spread over many frames (egui smooths the wheel) keeps the
        // column under the pointer without drifting by a rounding a frame.
        let visible = match self.view.fit_cols {
            Some(c) => c as f64,
            None => w * f64::from(self.view.cols_per_px),
        };
        let back = self.view.view_back as f64 + self.view.zoom_back_frac;
        let (v, back) = zoom_view(
            visible,
            back,
            fx,
            factor,
            (min, max),
            (self.tl.written, self.a.ring_width),
            following,
        );
        self.view.fit_cols = None;
        self.view.cols_per_px = (v / w) as f32;
        self.view.view_back = back.round() as u64;
        self.view.zoom_back_frac = back - self.view.view_back as f64;
    }

    /// The newest shown column the CPU has (the GPU path's levels arrive 1–3 frames late).
    fn spectrum_column(&self) -> Option<&[f32]> {
        let shown_newest = self.tl.written.saturating_sub(self.view.view_back);
        shown_newest
            .min(self.levels.history.end())
            .checked_sub(1)
            .and_then(|c| self.levels.history.get(c))
    }

    /// The spectrum strip's two lines (peak hold, newest shown column) as one point per pixel
    /// row of `strip` (x0, y0, x1, y1 image pixels), the rows of the image `plot` beside it:
    /// each row's loudest bin between its edge frequencies on the current axis, x spanning the
    /// dB floor (left) … ceiling (right). Points are (row, x): the line runs down the rows.
    pub(super) fn strip_lines(
        &self,
        strip: [u32; 4],
        plot: [u32; 4],
    ) -> Option<[Vec<egui::Pos2>; 2]> {
        let col = self.spectrum_column()?;
        let axis = self.axis();
        let sr = self.source.sample_rate() as f64;
        let n = self.a.settings.fft_size as f64;
        let span = (self.view.db_ceil - self.view.db_floor).max(1e-3);
        // Pixel centres: the floor on the strip's first pixel column, the ceiling on its last.
        let (left, right) = (
            strip[0] as f32 + 0.5,
            strip[2].saturating_sub(1).max(strip[0]) as f32 + 0.5,
        );
        let x_of =
            |db: f32| left + ((db - self.view.db_floor) / span).clamp(0.0, 1.0) * (right - left);
        let h = plot[3].saturating_sub(plot[1]).max(1) as f64;
        let line = |values: &[f32]| {
            (strip[1]..strip[3])
                .map(|y| {
                    // Pixel row y of the image, counted from its bottom row.
                    let py = (plot[3].saturating_sub(1).saturating_sub(y)) as f64;
                    let f0 = axis.freq_at(py / h);
                    let f1 = axis.freq_at((py + 1.0) / h);
                    let k0 = ((f0 * n / sr).round() as usize).min(values.len() - 1);
                    let k1 = ((f1 * n / sr).round() as usize).clamp(k0 + 1, values.len());
                    let m = values[k0..k1].iter().cloned().fold(f32::MIN, f32::max);
                    egui::pos2(y as f32, x_of(m))
                })
                .collect::<Vec<_>>()
        };
        Some([line(&self.levels.peak_hold), line(col)])
    }

    /// The frequency axis of the view.
    pub(super) fn axis(&self) -> FreqAxis {
        FreqAxis::new(
            self.view.scale,
            self.source.sample_rate(),
            self.a.settings.fft_size,
        )
    }

    /// Columns across the image: the file's columns while the view is fitted to a file, else
    /// its width in pixels × columns per pixel; between 1 and the ring's width.
    pub(super) fn visible(&self) -> u32 {
        let v = match self.view.fit_cols {
            Some(c) => c.min(u64::from(u32::MAX)) as u32,
            None => (self.view.plot_w_px.max(1) as f32 * self.view.cols_per_px).round() as u32,
        };
        v.clamp(1, self.a.ring_width)
    }
}

/// Most pixels one column may span when zoomed in.
const MAX_PX_PER_COLUMN: f64 = 64.0;

/// The font of the axis labels, the notices and the readout.
pub(super) fn label_font() -> egui::FontId {
    egui::FontId::proportional(12.0)
}

/// The farthest back the view's right edge may go, `written` columns written into a ring of
/// `ring` columns, `visible` across: the oldest column shown still in the ring (`ring −
/// visible`), and the first column written still shown (`written − 1`).
pub(super) fn max_back(written: u64, ring: u32, visible: f64) -> u64 {
    let in_ring = (f64::from(ring) - visible).max(0.0) as u64;
    written.saturating_sub(1).min(in_ring)
}

/// The view after zooming the time axis by `factor` (> 1: in, fewer columns across) around the
/// pointer at fraction `fx` of the image's width (0 = left edge): the columns across
/// (`visible / factor`, clamped to `limits`), and the columns between the newest one written
/// and the right edge (`back`, within `0 ..=` [`max_back`] of `(written, ring)`), such that the
/// column under the pointer stays under it — `back + (1 − fx)·visible` columns back from the
/// newest, before and after. With `keep_right` (a view that follows new columns) the right edge
/// stays where it is.
pub(super) fn zoom_view(
    visible: f64,
    back: f64,
    fx: f64,
    factor: f64,
    limits: (f64, f64),
    (written, ring): (u64, u32),
    keep_right: bool,
) -> (f64, f64) {
    let v = (visible / factor).clamp(limits.0, limits.1.max(limits.0));
    if keep_right {
        return (v, back);
    }
    let under = back + (1.0 - fx) * visible;
    let b = under - (1.0 - fx) * v;
    (v, b.clamp(0.0, max_back(written, ring, v) as f64))
}

/// The side panel's settings kept between runs ([`crate::scene::Scene::saved_settings`]):
/// `fft_size`, `hop`, `window`, `fft_on` (the flags' ids), `scale`, `db_floor`, `db_ceil`,
/// `colormap` (by name) and `spectrum_strip`.
impl Spectrogram {
    pub(super) fn settings_json(&self) -> serde_json::Value {
        let s = &self.panel.settings_ui;
        serde_json::json!({
            "fft_size": s.fft_size,
            "hop": s.hop,
            "window": s.window.name(),
            "fft_on": s.fft_on,
            "scale": self.view.scale.name(),
            "db_floor": self.view.db_floor,
            "db_ceil": self.view.db_ceil,
            "colormap": COLORMAPS[self.view.colormap].0,
            "spectrum_strip": self.view.show_spectrum,
        })
    }

    /// Applies saved settings; the analysis ones are rebuilt by the next `prepare`, as when the
    /// panel changes them.
    pub(super) fn restore_json(&mut self, saved: &serde_json::Value) -> Vec<String> {
        let mut f = crate::settings::Fields::new("spectrogram", saved);
        let power_of_two = format!(
            "a power of two in {}..={}",
            stft::MIN_ANALYSIS_FFT_SIZE,
            stft::MAX_ANALYSIS_FFT_SIZE
        );
        if let Some(n) = f.get_if::<usize>("fft_size", &power_of_two, |n| {
            n.is_power_of_two()
                && (stft::MIN_ANALYSIS_FFT_SIZE..=stft::MAX_ANALYSIS_FFT_SIZE).contains(n)
        }) {
            self.panel.settings_ui.fft_size = n;
        }
        if let Some(h) = f.get_if::<usize>("hop", "at least 1", |h| *h >= 1) {
            self.panel.settings_ui.hop = h;
        }
        self.panel.settings_ui.hop = self
            .panel
            .settings_ui
            .hop
            .clamp(1, self.panel.settings_ui.fft_size);
        if let Some(w) = f.get_if::<String>("window", "a window name", |w| {
            WindowKind::from_name(w).is_some()
        }) && let Some(w) = WindowKind::from_name(&w)
        {
            self.panel.settings_ui.window = w;
        }
        if let Some(on) = f.get_if::<String>("fft_on", "auto, gpu or cpu", |s| {
            matches!(s.as_str(), "auto" | "gpu" | "cpu")
        }) {
            self.panel.settings_ui.fft_on = match on.as_str() {
                "gpu" => FftOn::Gpu,
                "cpu" => FftOn::Cpu,
                _ => FftOn::Auto,
            };
        }
        let scales = [FreqScale::Linear, FreqScale::Log, FreqScale::Mel];
        if let Some(name) = f.get_if::<String>("scale", "linear, log or mel", |s| {
            scales.iter().any(|sc| sc.name() == s)
        }) && let Some(sc) = scales.iter().find(|sc| sc.name() == name)
        {
            self.view.scale = *sc;
        }
        if let Some(v) = f.get_if::<f32>("db_floor", "in -160..=-20 dB", |v| {
            (-160.0..=-20.0).contains(v)
        }) {
            self.view.db_floor = v;
        }
        if let Some(v) =
            f.get_if::<f32>("db_ceil", "in -60..=20 dB", |v| (-60.0..=20.0).contains(v))
        {
            self.view.db_ceil = v;
        }
        self.view.db_ceil = self.view.db_ceil.max(self.view.db_floor + 1.0);
        if let Some(name) = f.get_if::<String>("colormap", "a colormap name", |n| {
            COLORMAPS.iter().any(|(c, _)| c == n)
        }) && let Some(i) = COLORMAPS.iter().position(|(c, _)| *c == name)
            && i != self.view.colormap
        {
            self.view.colormap = i;
            self.view.lut_dirty = true;
        }
        if let Some(b) = f.get::<bool>("spectrum_strip") {
            self.view.show_spectrum = b;
        }
        f.notes
    }
}

#[cfg(test)]
mod tests {
    use super::{max_back, zoom_view};

    #[test]
    fn zoom_keeps_the_column_under_the_pointer() {
        let lim = (10.0, 6000.0);
        let held = (100_000, 6000);
        // 1000 columns across, right edge 200 back, pointer at 30 %: the column under it is
        // 200 + 0.7·1000 = 900 back. Zooming in by 2: 500 across, right edge at
        // 900 − 0.7·500 = 550 back; the column under the pointer is 550 + 0.7·500 = 900 back.
        let (v, b) = zoom_view(1000.0, 200.0, 0.3, 2.0, lim, held, false);
        assert_eq!((v, b), (500.0, 550.0));
        assert!((b + 0.7 * v - 900.0).abs() < 1e-9);
        // Zooming out by 2 around the same pointer: 2000 across, 900 − 1400 < 0: clamped to the
        // newest column.
        assert_eq!(
            zoom_view(1000.0, 200.0, 0.3, 0.5, lim, held, false),
            (2000.0, 0.0)
        );
        // Pointer at the right edge: the right edge stays.
        assert_eq!(
            zoom_view(1000.0, 200.0, 1.0, 4.0, lim, held, false),
            (250.0, 200.0)
        );
        // A following view keeps its right edge whatever the pointer.
        assert_eq!(
            zoom_view(1000.0, 0.0, 0.3, 2.0, lim, held, true),
            (500.0, 0.0)
        );
        // The limits: not under 10 columns, not over the ring.
        assert_eq!(zoom_view(40.0, 0.0, 0.5, 8.0, lim, held, true).0, 10.0);
        assert_eq!(zoom_view(4000.0, 0.0, 0.5, 0.25, lim, held, true).0, 6000.0);
        // Not further back than the ring holds (6000 − visible): pointer at the left edge,
        // 4900 back + 1000 across = 5900 under it; at 500 across the edge goes to 5400 (≤ 5500).
        assert_eq!(
            zoom_view(1000.0, 4900.0, 0.0, 2.0, lim, held, false),
            (500.0, 5400.0)
        );
        // 6000 under it, 800 across: 5200, exactly the limit 6000 − 800.
        assert_eq!(
            zoom_view(1000.0, 5000.0, 0.0, 1.25, lim, held, false),
            (800.0, 5200.0)
        );
        // Zooming out at the right edge 5900 back: 200 across allow 5800 at most.
        assert_eq!(
            zoom_view(100.0, 5900.0, 1.0, 0.5, lim, held, false),
            (200.0, 5800.0)
        );
        // Nor before the first column written: 300 written, at most 299 back.
        assert_eq!(
            zoom_view(1000.0, 250.0, 0.0, 2.0, lim, (300, 6000), false),
            (500.0, 299.0)
        );
    }

    #[test]
    fn the_view_goes_back_as_far_as_the_ring_and_the_first_column() {
        // 300 written, 1000 across: the right edge may go back to the first column (299).
        assert_eq!(max_back(300, 6000, 1000.0), 299);
        // 100,000 written into 6000: the oldest shown must still be held, 6000 − 1000.
        assert_eq!(max_back(100_000, 6000, 1000.0), 5000);
        assert_eq!(max_back(0, 6000, 1000.0), 0);
        assert_eq!(max_back(100_000, 6000, 7000.0), 0);
    }
}
