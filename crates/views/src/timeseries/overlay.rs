//! The overlay over the chart (`overlay`): the plot rect inside margins, the axis labels around
//! it (time and value ticks, titles), the paused notice, sample dots, the zoom box, the
//! crosshair with the nearest sample of each series.

use super::{PALETTE, TimeSeries, axis, markers};

/// The chart's axis labels around its plot ([`TimeSeries::axis_labels`]): each tick's line
/// position (x for time, y for values, points) and its label's rect and text where one is shown.
#[derive(Default)]
struct AxisLabels {
    time: Vec<(f32, Option<PlacedLabel>)>,
    values: Vec<(f32, Option<PlacedLabel>)>,
    title: Option<PlacedLabel>,
}

/// A laid-out label and the rect it is drawn in (points).
type PlacedLabel = (egui::Rect, std::sync::Arc<egui::Galley>);

impl TimeSeries {
    /// The plot rect inside the scene's `area` (points): margins for the value labels on the
    /// left (as wide as the widest label of the last view's value ticks, rounded up to 8
    /// points), the time labels below, half a label above and 8 points on the right. The image
    /// fills it; the labels go around it ([`axis_labels`](Self::axis_labels)).
    pub fn plot_in(&self, ctx: &egui::Context, area: egui::Rect) -> egui::Rect {
        let label_h = axis::label_galley(ctx, "0").size().y;
        let top = (label_h / 2.0).ceil() + 2.0;
        let bottom = label_h + 6.0;
        let right = 8.0;
        let height = (area.height() - top - bottom).max(1.0);
        let widest = self.drawn.view.map_or(0.0, |v| {
            axis::value_ticks(v.lo, v.hi, axis::value_target(height))
                .iter()
                .map(|(_, l)| axis::label_galley(ctx, l).size().x)
                .fold(0.0f32, f32::max)
        });
        let left = ((widest + 8.0) / 8.0).ceil().max(3.0) * 8.0;
        egui::Rect::from_min_max(
            egui::pos2(area.left() + left, area.top() + top),
            egui::pos2(
                (area.right() - right).max(area.left() + left + 1.0),
                (area.bottom() - bottom).max(area.top() + top + 1.0),
            ),
        )
    }

    /// The axis labels of the last view around the plot `rect` inside `area` (points): the
    /// time labels in the row below the plot, centred on their ticks where they fit, clear of
    /// the time axis' title at the row's right end; the value labels right-aligned in the left
    /// margin, centred on their lines. A label that would overlap the one before is left out
    /// (`None`, [`axis::place_labels`]); none lies over the plot.
    fn axis_labels(&self, ctx: &egui::Context, rect: egui::Rect, area: egui::Rect) -> AxisLabels {
        let mut out = AxisLabels::default();
        let Some(v) = self.drawn.view else {
            return out;
        };
        let x_of = |t: f64| rect.left() + ((t - v.t0) / (v.t1 - v.t0)) as f32 * rect.width();
        let y_of = |y: f64| rect.bottom() - ((y - v.lo) / (v.hi - v.lo)) as f32 * rect.height();
        // The time axis' title at the right end of the label row: the zone of wall-clock labels.
        let wall = self
            .chart_origin()
            .is_some_and(|(o, _)| o >= axis::WALL_CLOCK_FROM_S);
        let samples = self
            .shared
            .as_ref()
            .is_some_and(|s| s.shape().rate.is_none());
        let title = if wall {
            format!("time ({})", self.time_format.zone.name())
        } else if samples {
            "sample".to_string()
        } else {
            "time (s)".to_string()
        };
        let galley = axis::label_galley(ctx, &title);
        let row = rect.bottom() + 3.0;
        let title_rect = egui::Rect::from_min_size(
            egui::pos2(area.right() - 4.0 - galley.size().x, row),
            galley.size(),
        );
        let mut room = area.right() - rect.left();
        if title_rect.left() > rect.left() {
            room = title_rect.left() - axis::LABEL_GAP_PX - rect.left();
            out.title = Some((title_rect, galley));
        }
        let ticks = axis::time_ticks(
            self.chart_origin(),
            v.t0,
            v.t1,
            axis::time_target(rect.width()),
            self.time_format.zone,
        );
        let galleys: Vec<_> = ticks
            .iter()
            .map(|(_, l)| axis::label_galley(ctx, l))
            .collect();
        let want: Vec<f32> = ticks
            .iter()
            .zip(&galleys)
            .map(|((t, _), g)| x_of(*t) - rect.left() - g.size().x / 2.0)
            .collect();
        let sizes: Vec<f32> = galleys.iter().map(|g| g.size().x).collect();
        let placed = axis::place_labels(&want, &sizes, room.max(0.0), axis::LABEL_GAP_PX);
        for (((t, _), galley), at) in ticks.iter().zip(galleys).zip(placed) {
            let label = at.map(|left| {
                let min = egui::pos2(rect.left() + left, row);
                (egui::Rect::from_min_size(min, galley.size()), galley)
            });
            out.time.push((x_of(*t), label));
        }
        let values = axis::value_ticks(v.lo, v.hi, axis::value_target(rect.height()));
        let galleys: Vec<_> = values
            .iter()
            .map(|(_, l)| axis::label_galley(ctx, l))
            .collect();
        let want: Vec<f32> = values
            .iter()
            .zip(&galleys)
            .map(|((y, _), g)| y_of(*y) - g.size().y / 2.0 - area.top())
            .collect();
        let sizes: Vec<f32> = galleys.iter().map(|g| g.size().y).collect();
        let length = rect.bottom() + sizes.first().map_or(0.0, |h| h / 2.0) - area.top();
        let placed = axis::place_labels(&want, &sizes, length, 2.0);
        for (((y, _), galley), at) in values.iter().zip(galleys).zip(placed) {
            let label = at.and_then(|top| {
                let min = egui::pos2(rect.left() - 4.0 - galley.size().x, area.top() + top);
                let r = egui::Rect::from_min_size(min, galley.size());
                (r.left() >= area.left()).then_some((r, galley))
            });
            out.values.push((y_of(*y), label));
        }
        out
    }

    /// The plot rect in `area` and the rects of the axis labels the overlay draws around it
    /// (time labels, value labels, the time axis' title), for the last view; `None` before the
    /// first view. Tests: no label lies over the plot.
    pub fn axis_label_rects(
        &self,
        ctx: &egui::Context,
        area: egui::Rect,
    ) -> Option<(egui::Rect, Vec<egui::Rect>)> {
        self.drawn.view?;
        let rect = self.plot_in(ctx, area);
        let labels = self.axis_labels(ctx, rect, area);
        let rects = labels
            .time
            .iter()
            .chain(&labels.values)
            .filter_map(|(_, l)| l.as_ref().map(|(r, _)| *r))
            .chain(labels.title.as_ref().map(|(r, _)| *r))
            .collect();
        Some((rect, rects))
    }

    /// `overlay`: ticks and their labels (around the plot `rect`, in the margins of the
    /// painter's area), notices, dots, the zoom box and the crosshair.
    pub(super) fn draw_overlay(&self, painter: &egui::Painter, rect: egui::Rect) {
        let Some(v) = self.drawn.view else {
            painter.text(
                rect.center(),
                egui::Align2::CENTER_CENTER,
                "waiting for data…",
                egui::FontId::proportional(14.0),
                egui::Color32::GRAY,
            );
            return;
        };
        let area = painter.clip_rect();
        let font = axis::label_font();
        let color = egui::Color32::from_gray(220);
        let stroke = egui::Stroke::new(1.0, egui::Color32::from_white_alpha(40));
        let x_of = |t: f64| rect.left() + ((t - v.t0) / (v.t1 - v.t0)) as f32 * rect.width();
        let y_of = |y: f64| rect.bottom() - ((y - v.lo) / (v.hi - v.lo)) as f32 * rect.height();
        let ctx = painter.ctx();
        // Every tick gets its grid line over the plot; the labels lie in the margins.
        let labels = self.axis_labels(ctx, rect, area);
        for (x, label) in &labels.time {
            painter.line_segment(
                [egui::pos2(*x, rect.top()), egui::pos2(*x, rect.bottom())],
                stroke,
            );
            if let Some((r, galley)) = label {
                painter.galley(r.min, galley.clone(), color);
            }
        }
        for (y, label) in &labels.values {
            painter.line_segment(
                [egui::pos2(rect.left(), *y), egui::pos2(rect.right(), *y)],
                stroke,
            );
            if let Some((r, galley)) = label {
                painter.galley(r.min, galley.clone(), color);
            }
        }
        if let Some((r, galley)) = &labels.title {
            painter.galley(r.min, galley.clone(), egui::Color32::from_gray(170));
        }
        // The legend (series shown, in their colours) and the value axis' title (the units the
        // headers state) in the plot's top-left corner, below the stats overlay's corner if
        // they meet.
        let avoid = if crate::overlay::overlay_shown(ctx) {
            crate::overlay::overlay_area(area)
        } else {
            egui::Rect::NOTHING
        };
        let names: Vec<&str> = match &self.shared {
            Some(input) => input.names().iter().map(String::as_str).collect(),
            None => self
                .store
                .series()
                .iter()
                .map(|s| s.name.as_str())
                .collect(),
        };
        let shown: Vec<(usize, &str)> = names
            .into_iter()
            .enumerate()
            .filter(|(i, _)| self.visible.get(*i).copied().unwrap_or(true))
            .collect();
        let mut lines: Vec<(Option<egui::Color32>, std::sync::Arc<egui::Galley>)> = Vec::new();
        if let Some(title) = axis::value_title(shown.iter().map(|s| s.1)) {
            lines.push((None, axis::label_galley(ctx, &title)));
        }
        if shown.len() > 1 {
            for (i, text) in axis::legend_lines(&shown) {
                let c = i.map(|i| {
                    let [r, g, b] = PALETTE[i % PALETTE.len()];
                    egui::Color32::from_rgb(r, g, b)
                });
                lines.push((c, axis::label_galley(ctx, &text)));
            }
        }
        if !lines.is_empty() {
            const SWATCH: f32 = 10.0;
            let w = lines
                .iter()
                .map(|(_, g)| g.size().x + SWATCH + 6.0)
                .fold(0.0f32, f32::max);
            let h: f32 = lines.iter().map(|(_, g)| g.size().y).sum();
            let size = egui::vec2(w + 8.0, h + 6.0);
            let at = egui::pos2(rect.left() + 6.0, rect.top() + 6.0);
            let min = axis::place_box(at, size, rect, avoid, 0.0);
            let bg = egui::Rect::from_min_size(min, size);
            painter.rect_filled(bg, 3.0, egui::Color32::from_black_alpha(150));
            let mut y = bg.top() + 3.0;
            for (c, galley) in lines {
                let h = galley.size().y;
                let x = bg.left() + 4.0;
                let text_color = match c {
                    Some(c) => {
                        let sw = egui::Rect::from_center_size(
                            egui::pos2(x + SWATCH / 2.0, y + h / 2.0),
                            egui::vec2(SWATCH, 3.0),
                        );
                        painter.rect_filled(sw, 0.0, c);
                        color
                    }
                    None => egui::Color32::from_gray(180),
                };
                let tx = if c.is_some() { x + SWATCH + 6.0 } else { x };
                painter.galley(egui::pos2(tx, y), galley, text_color);
                y += h;
            }
        }
        if !self.follow {
            // Right-aligned under the stats overlay's corner (which it would otherwise hide under).
            let top = if avoid.width() > 0.0 {
                avoid.bottom() + 4.0
            } else {
                rect.top() + 4.0
            };
            painter.text(
                egui::pos2(rect.right() - 6.0, top),
                egui::Align2::RIGHT_TOP,
                "paused (double-click: live)",
                font.clone(),
                egui::Color32::YELLOW,
            );
        }
        for m in &self.drawn.markers {
            let p = egui::pos2(x_of(m.t), y_of(m.value as f64));
            if rect.expand(markers::MARKER_RADIUS_PX).contains(p) {
                let [r, g, b] = PALETTE[m.series % PALETTE.len()];
                painter.circle_filled(
                    p,
                    markers::MARKER_RADIUS_PX,
                    egui::Color32::from_rgb(r, g, b),
                );
            }
        }
        if let (Some(a), Some(b)) = (self.pointer.box_start, self.pointer.box_end) {
            painter.rect_stroke(
                egui::Rect::from_two_pos(a, b),
                0.0,
                egui::Stroke::new(1.0, egui::Color32::WHITE),
                egui::StrokeKind::Inside,
            );
        }
        // Crosshair: the nearest sample of each visible series.
        if let Some(p) = self.pointer.hover.filter(|p| rect.contains(*p)) {
            let t = v.t0 + ((p.x - rect.left()) / rect.width()) as f64 * (v.t1 - v.t0);
            painter.line_segment(
                [egui::pos2(p.x, rect.top()), egui::pos2(p.x, rect.bottom())],
                egui::Stroke::new(1.0, egui::Color32::from_white_alpha(120)),
            );
            let mut lines = Vec::new();
            if let Some(input) = &self.shared {
                // The values stay on the GPU: the position only.
                let shape = input.shape();
                let k = (t / shape.dt()).floor();
                if k >= 0.0 && k < shape.samples as f64 {
                    lines.push(format!("sample #{k} of the window"));
                }
            }
            for (i, s) in self.store.series().iter().enumerate() {
                if !self.visible.get(i).copied().unwrap_or(true) {
                    continue;
                }
                let off = self.offset_of(s);
                if let Some((idx, tr, val)) = axis::nearest_sample(s, t - off) {
                    let x = x_of(tr + off);
                    if val.is_finite() {
                        painter.circle_stroke(
                            egui::pos2(x, y_of(val as f64)),
                            3.0,
                            egui::Stroke::new(1.0, egui::Color32::WHITE),
                        );
                    }
                    lines.push(format!(
                        "{}: {} @ {} (#{idx})",
                        s.name,
                        val,
                        self.readout_time(i, tr)
                    ));
                }
            }
            // Beside the crosshair, off the stats overlay's corner, on a dark ground.
            let galley = ctx.fonts_mut(|f| {
                f.layout_no_wrap(lines.join("\n"), font, egui::Color32::PLACEHOLDER)
            });
            let size = galley.size() + egui::vec2(8.0, 6.0);
            let min = axis::place_box(egui::pos2(p.x, rect.top() + 6.0), size, rect, avoid, 8.0);
            let bg = egui::Rect::from_min_size(min, size);
            painter.rect_filled(bg, 3.0, egui::Color32::from_black_alpha(170));
            painter.galley(min + egui::vec2(4.0, 3.0), galley, color);
        }
    }
}
