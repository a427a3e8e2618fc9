//! The overlay drawn over the panel (`overlay`): the axes of the image, the spectrum strip and
//! the colour bar with their titles (laid out by `layout.rs`), the time axis' ticks, the notices
//! and the hover readout; and the spectrum strip's two lines, uploaded by `gpu.rs`.

use super::Spectrogram;
use super::layout::{self, Frame, Tick, Ticks};

impl Spectrogram {
    /// The scene image's size in pixels for `rect` (points) at `ppp`, rounded as the deck does.
    pub(super) fn size_px(rect: egui::Rect, ppp: f32) -> (u32, u32) {
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
        let stats = crate::overlay::overlay_area(rect);
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
}

/// The font of the axis labels, the notices and the readout.
pub(super) fn label_font() -> egui::FontId {
    egui::FontId::proportional(12.0)
}
