//! The scene's egui side: the side panel (source, analysis and view controls, readouts),
//! pointer and keyboard over the image (`interact`: wheel and drag scroll the frozen view,
//! ctrl+wheel zooms time, space freezes, the hover readout) and the overlay drawn over it
//! (`overlay`: frequency and time axes, notices, the spectrum view with peak hold, the readout).
//! Source changes, seeks and new settings asked for here are applied by the next `prepare`.

use std::path::PathBuf;

use super::axis::{FreqAxis, FreqScale, format_hz, nice_step, note_name};
use super::{COLORMAPS, FftOn, Spectrogram};
use crate::audio::stft::{self, WindowKind};
use crate::audio::{AudioSelection, ChannelChoice, SynthSignal};

impl Spectrogram {
    /// `ui`: the side panel.
    pub(super) fn side_panel(&mut self, ui: &mut egui::Ui) {
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

    /// `interact`: pointer and keyboard over the image.
    pub(super) fn handle_pointer(&mut self, response: &egui::Response, rect: egui::Rect) {
        let ppp = response.ctx.pixels_per_point();
        self.ppp = ppp;
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

    /// `overlay`: axes, notices, the spectrum view and the hover readout over the image.
    pub(super) fn draw_overlay(&self, painter: &egui::Painter, rect: egui::Rect) {
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
            self.draw_spectrum(painter, rect);
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

    /// The newest shown column the CPU has (the GPU path's levels arrive 1–3 frames late).
    fn spectrum_column(&self) -> Option<&[f32]> {
        let shown_newest = self.written.saturating_sub(self.view_back);
        shown_newest
            .min(self.history.end())
            .checked_sub(1)
            .and_then(|c| self.history.get(c))
    }

    /// The spectrum view's rect in pixels of a `size` image shown at `ppp` pixels per point:
    /// the bottom quarter, from 60 points in from the left to 8 from the right, up to 26 above
    /// the bottom, rounded to whole pixels; `None` when under 20 × 20 points.
    pub(super) fn spectrum_area_px(size: (u32, u32), ppp: f32) -> Option<[u32; 4]> {
        let (w, h) = (size.0 as f32, size.1 as f32);
        let area = [60.0 * ppp, 0.75 * h, w - 8.0 * ppp, h - 26.0 * ppp];
        if area[2] - area[0] < 20.0 * ppp || area[3] - area[1] < 20.0 * ppp {
            return None;
        }
        Some(area.map(|v| v.round().max(0.0) as u32))
    }

    /// The spectrum view's two lines (peak hold, newest shown column) as one point per pixel
    /// column of `area` (x0, y0, x1, y1 image pixels): each column's loudest bin between its
    /// edge frequencies on the current axis, y spanning the dB floor (bottom) .. ceiling (top).
    pub(super) fn spectrum_lines(&self, area: [u32; 4]) -> Option<[Vec<egui::Pos2>; 2]> {
        let col = self.spectrum_column()?;
        let axis = self.axis();
        let sr = self.source.sample_rate() as f64;
        let n = self.a.settings.fft_size as f64;
        let span = (self.db_ceil - self.db_floor).max(1e-3);
        let (top, bottom) = (area[1] as f32, area[3] as f32);
        let y_of =
            |db: f32| bottom - ((db - self.db_floor) / span).clamp(0.0, 1.0) * (bottom - top);
        let w = area[2].saturating_sub(area[0]).max(1) as usize;
        let line = |values: &[f32]| {
            (0..w)
                .map(|px| {
                    let f0 = axis.freq_at(px as f64 / w as f64);
                    let f1 = axis.freq_at((px + 1) as f64 / w as f64);
                    let k0 = ((f0 * n / sr).round() as usize).min(values.len() - 1);
                    let k1 = ((f1 * n / sr).round() as usize).clamp(k0 + 1, values.len());
                    let m = values[k0..k1].iter().cloned().fold(f32::MIN, f32::max);
                    egui::pos2((area[0] as usize + px) as f32, y_of(m))
                })
                .collect::<Vec<_>>()
        };
        Some([line(&self.peak_hold), line(col)])
    }

    /// The spectrum view's label. The view itself (darkened image, peak-hold line in orange,
    /// newest column in cyan, one span per pixel column) is drawn by the image's own pass from
    /// the spans `upload_inset` computed (`shaders/spectrogram/draw.wgsl`), not as egui shapes:
    /// on lavapipe two lines of one triangle pair per column cost 2–3 ms of the egui pass.
    fn draw_spectrum(&self, painter: &egui::Painter, rect: egui::Rect) {
        if self.spectrum_column().is_none() {
            return;
        }
        let ppp = painter.pixels_per_point();
        let size = (
            (rect.width() * ppp).round() as u32,
            (rect.height() * ppp).round() as u32,
        );
        let Some(a) = Self::spectrum_area_px(size, ppp) else {
            return;
        };
        let area = egui::Rect::from_min_max(
            rect.min + egui::vec2(a[0] as f32, a[1] as f32) / ppp,
            rect.min + egui::vec2(a[2] as f32, a[3] as f32) / ppp,
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

    /// The frequency axis of the view.
    pub(super) fn axis(&self) -> FreqAxis {
        FreqAxis::new(
            self.scale,
            self.source.sample_rate(),
            self.a.settings.fft_size,
        )
    }

    /// Columns across the viewport.
    pub(super) fn visible(&self) -> u32 {
        ((self.width_px.max(1) as f32 * self.cols_per_px).round() as u32)
            .clamp(1, self.a.ring_width)
    }
}
