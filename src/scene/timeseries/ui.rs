//! The time-series scene's egui side: the side panel (source, notices, follow and value range,
//! own signals, window width, series toggles), the interaction over the chart (`interact`: wheel
//! zooms time around the pointer, drag pans and pauses, right- or shift-drag box-zooms,
//! double-click returns to live) and the overlay (`overlay`: time and value ticks, the paused
//! notice, sample dots, the zoom box, the crosshair with the nearest sample of each series).

use super::{PALETTE, TimeSeries, axis, markers};
use crate::series::SeriesSelection;
use crate::series::source::CsvOptions;
use crate::series::source::net::{LinkState, NetOptions};
use crate::series::source::payload::{PayloadFormat, PayloadOptions, TimeBase};

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

/// `bytes` per second as B/s, KB/s or MB/s.
fn bytes_per_s(bytes: f64) -> String {
    if bytes >= 1e6 {
        format!("{:.1} MB/s", bytes / 1e6)
    } else if bytes >= 1e3 {
        format!("{:.1} KB/s", bytes / 1e3)
    } else {
        format!("{bytes:.0} B/s")
    }
}
use crate::series::store::Series;

/// The series' checkboxes (`visible[i]`, named `name(i)`, in the series' colour) of `n` series;
/// a long list scrolls on its own, laying out only the rows in sight (1024 series).
fn series_toggles(
    ui: &mut egui::Ui,
    visible: &mut [bool],
    n: usize,
    salt: &str,
    name: impl Fn(usize) -> String,
) {
    let mut rows = |ui: &mut egui::Ui, range: std::ops::Range<usize>| {
        for i in range {
            let [r, g, b] = PALETTE[i % PALETTE.len()];
            if let Some(v) = visible.get_mut(i) {
                ui.checkbox(
                    v,
                    egui::RichText::new(name(i)).color(egui::Color32::from_rgb(r, g, b)),
                );
            }
        }
    };
    if n <= 64 {
        rows(ui, 0..n);
    } else {
        let row = ui.spacing().interact_size.y;
        egui::ScrollArea::vertical()
            .id_salt(salt)
            .max_height(row * 24.0)
            .show_rows(ui, row, n, |ui, range| rows(ui, range));
    }
}

impl TimeSeries {
    /// The view's buttons: `follow` (follow the newest, or the whole window) toggled, keeping
    /// the range in sight when it stops; "auto y".
    fn view_buttons(&mut self, ui: &mut egui::Ui, follow: &str) {
        ui.horizontal(|ui| {
            if ui.selectable_label(self.follow, follow).clicked() {
                self.follow = !self.follow;
                if !self.follow
                    && let Some(v) = self.view
                {
                    self.paused_range = (v.t0, v.t1);
                }
            }
            if ui.button("auto y").clicked() {
                self.fixed_y = None;
            }
            if ui
                .button("fit all (Home)")
                .on_hover_text("the time axis over all the data, the value axis automatic")
                .clicked()
            {
                self.fit_all();
            }
        });
    }

    /// `ui`: the side panel.
    pub(super) fn side_panel(&mut self, ui: &mut egui::Ui) {
        ui.heading("Time series");
        if self.shared.is_some() {
            self.shared_panel(ui);
            return;
        }
        if self.share.following {
            ui.label("the publisher's series (--follow)");
        } else {
            ui.label(self.source.label());
        }
        if let Some(f) = self.source.time_format() {
            if super::readout_pattern(f, None).is_some() {
                // A Parquet / Arrow column's type, not a pattern.
                ui.label(format!("time: {f}, shown in {}", self.zone.name()));
            } else {
                ui.label(format!("time: dates as '{f}', {}", self.zone.name()))
                    .on_hover_text("recognised from the first rows; --time-format chooses another");
            }
        }
        if let Some(e) = self.source.error() {
            ui.colored_label(egui::Color32::LIGHT_RED, e);
        }
        if let Some(e) = &self.open_error {
            ui.colored_label(egui::Color32::LIGHT_RED, e);
        }
        if !self.share.following {
            // A follower's data is the publisher's: no source of its own to choose.
            self.link_ui(ui);
            self.connect_ui(ui);
            self.file_ui(ui);
            self.key_ui(ui);
        }
        for n in self.notices() {
            ui.colored_label(egui::Color32::YELLOW, n);
        }
        for n in &self.gpu_notes {
            ui.colored_label(egui::Color32::YELLOW, n);
        }
        self.view_buttons(ui, "follow newest");
        ui.add_enabled(
            self.source.is_clocked() && !self.share.following,
            egui::Checkbox::new(&mut self.own_signals, "chart vizdeck's own frame times"),
        );
        ui.add_enabled(
            self.source.is_clocked() && !self.share.following,
            egui::Checkbox::new(&mut self.own_audio, "chart the audio input's level"),
        );
        if let Some(n) = &self.audio_note {
            ui.colored_label(egui::Color32::YELLOW, n);
        }
        let window = ui.add(
            // Up to 100 years: a whole file of dates fits.
            egui::Slider::new(&mut self.window_s, 1e-6..=3.2e9)
                .logarithmic(true)
                .text("window (s)"),
        );
        if window.changed() && !self.follow {
            // Paused: the same centre, the new width.
            let (a, b) = self.paused_range;
            let c = 0.5 * (a + b);
            let w = self.window_s.max(1e-12);
            self.paused_range = (c - 0.5 * w, c + 0.5 * w);
        }
        ui.label(format!("points ingested: {}", self.store.points_ingested()));
        ui.label(format!("points in view: {}", self.points_in_view));
        let cap = self.store.cap();
        let dropped: u64 = self.store.series().iter().map(Series::dropped).sum();
        ui.label(format!(
            "memory cap: {cap} samples/series (oldest dropped first), dropped so far: {dropped}"
        ));
        ui.separator();
        ui.label("Series (click to toggle):");
        let series = self.store.series();
        series_toggles(
            ui,
            &mut self.visible,
            series.len(),
            "timeseries:series",
            |i| {
                let s = &series[i];
                format!("{} ({} pts)", s.name, s.points_ingested())
            },
        );
        ui.separator();
        ui.small(
            "wheel: zoom time · drag: pan · right/shift-drag: box zoom · double-click: live · \
             Home: fit all",
        );
    }

    /// The side panel of a chart drawing a producer's window (`--share`): the shape, the
    /// producers and frames, the notice, the view controls and the series toggles.
    fn shared_panel(&mut self, ui: &mut egui::Ui) {
        let Some(input) = &self.shared else {
            return;
        };
        let shape = input.shape();
        ui.label(format!(
            "a producer's {} series × {} samples (--share)",
            shape.series, shape.samples
        ));
        match shape.rate {
            Some(r) => ui.label(format!("{r} samples/s: x axis in seconds")),
            None => ui.label("x axis: sample index in the window (oldest 0)"),
        };
        let st = input.status();
        ui.label(format!(
            "producers: {}   frames complete: {}",
            st.producers, st.frames_complete
        ));
        if let Some(n) = input.notice() {
            ui.colored_label(egui::Color32::YELLOW, n);
        }
        for n in &self.gpu_notes {
            ui.colored_label(egui::Color32::YELLOW, n);
        }
        self.view_buttons(ui, "whole window");
        ui.label(format!("points in view: {}", self.points_in_view));
        ui.separator();
        ui.label("Series (click to toggle):");
        let Some(input) = &self.shared else {
            return;
        };
        let names = input.names();
        series_toggles(
            ui,
            &mut self.visible,
            names.len(),
            "timeseries:shared:series",
            |i| names[i].clone(),
        );
        ui.separator();
        ui.small(
            "wheel: zoom · drag: pan · right/shift-drag: box zoom · double-click: whole window",
        );
    }

    /// A network source's connection: state, rates, counters, the first parse errors, what the
    /// sample times are, the publish → present latency and what it clamped.
    fn link_ui(&self, ui: &mut egui::Ui) {
        let Some(l) = self.source.link() else {
            return;
        };
        let colour = match l.state {
            LinkState::Connected => egui::Color32::LIGHT_GREEN,
            LinkState::Connecting | LinkState::Reconnecting { .. } => egui::Color32::YELLOW,
            LinkState::Failed(_) => egui::Color32::LIGHT_RED,
        };
        ui.colored_label(colour, l.state.to_string());
        ui.label(format!(
            "{:.0} messages/s · {} · {} series",
            l.messages_per_s,
            bytes_per_s(l.bytes_per_s),
            l.series
        ));
        let lost = l
            .transport_lost
            .map_or_else(|| "not reported".to_string(), |n| n.to_string());
        ui.label(format!(
            "messages {} · parse errors {} · dropped by vizdeck (ring full) {} · lost by the \
             transport {lost} · connections {}",
            l.messages, l.parse_errors, l.dropped, l.connects
        ))
        .on_hover_text(
            "dropped by vizdeck: decoded but not stored because the chart did not take them in \
             time; lost by the transport: what the network layer says it dropped (UDP: the \
             kernel's count for the socket; MQTT and ZeroMQ do not tell their subscribers)",
        );
        for e in &l.errors {
            ui.colored_label(egui::Color32::LIGHT_RED, e);
        }
        let field = match &self.selection {
            Some((SeriesSelection::Net(o), _)) => o.payload.time_field.as_deref(),
            _ => None,
        };
        let field = field.map_or_else(|| "the time field".to_string(), |f| format!("'{f}'"));
        match self.source.link_time_base() {
            Some(TimeBase::Relative) => {
                ui.label(format!(
                    "times: {field} in seconds from the publisher's own origin (numbers below \
                     1e8), charted as seconds"
                ));
                ui.label("no publish-to-present latency: relative times are not wall-clock time");
            }
            Some(TimeBase::Unix) => {
                ui.label(format!("times: {field}, wall-clock"));
            }
            None => {}
        }
        if let Some(lat) = &self.latency {
            ui.label(format!(
                "publish to present: p50 {:.1} ms · p99 {:.1} ms ({} messages)",
                lat.quantile_ms(0.5),
                lat.quantile_ms(0.99),
                lat.messages()
            ))
            .on_hover_text(
                "present time of the first frame that drew a message − its payload time; \
                 assumes the publisher's clock is this machine's",
            );
            for n in lat.notices() {
                ui.colored_label(egui::Color32::YELLOW, n);
            }
        }
    }

    /// *File*: open a CSV / Parquet / Arrow file by its path in place of the current source, or
    /// reload the file shown (after it changed, or after an error). Open while the source
    /// failed.
    fn file_ui(&mut self, ui: &mut egui::Ui) {
        let current = self
            .selection
            .as_ref()
            .and_then(|(sel, _)| sel.file().map(|p| (p.to_path_buf(), sel.clone())));
        if self.file_path.is_empty()
            && let Some((p, _)) = &current
        {
            self.file_path = p.display().to_string();
        }
        let failed = self.source.error().is_some() || self.open_error.is_some();
        let (mut open, mut reload) = (false, false);
        egui::CollapsingHeader::new("File")
            .default_open(failed)
            .show(ui, |ui| {
                let edit = ui.add(
                    egui::TextEdit::singleline(&mut self.file_path)
                        .hint_text("data.csv, data.parquet, data.arrow")
                        .desired_width(f32::INFINITY),
                );
                open = edit.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
                ui.horizontal(|ui| {
                    open |= ui
                        .add_enabled(!self.file_path.trim().is_empty(), egui::Button::new("open"))
                        .clicked();
                    reload = ui
                        .add_enabled(current.is_some(), egui::Button::new("reload"))
                        .on_hover_text("reads the file shown again, from its start")
                        .clicked();
                });
            });
        if reload && let Some((_, sel)) = current {
            let _ = self.reopen(sel);
        } else if open {
            let path = std::path::PathBuf::from(self.file_path.trim());
            let csv = CsvOptions {
                time_zone: self.zone,
                ..CsvOptions::default()
            };
            let _ = self.reopen(SeriesSelection::of_file(path, csv));
        }
    }

    /// *Connect*: a URL, payload format and time field, opened in place of the current source.
    fn connect_ui(&mut self, ui: &mut egui::Ui) {
        let mut go = false;
        egui::CollapsingHeader::new("Connect")
            .default_open(false)
            .show(ui, |ui| {
                let (url, format, field) = &mut self.connect;
                ui.add(
                    egui::TextEdit::singleline(url)
                        .hint_text("mqtt://host:1883/topic/#")
                        .desired_width(f32::INFINITY),
                )
                .on_hover_text(
                    "mqtt://[user[:password]@]host[:port]/filter[?qos=1&v=5] · mqtts:// · \
                     zmq+tcp://host:port[/prefix] · udp://addr:port",
                );
                egui::ComboBox::from_label("payload")
                    .selected_text(format.name())
                    .show_ui(ui, |ui| {
                        for f in PayloadFormat::ALL {
                            ui.selectable_value(format, f, f.name());
                        }
                    });
                ui.add(
                    egui::TextEdit::singleline(field).hint_text("time field (default: arrival)"),
                );
                go = ui
                    .add_enabled(!url.trim().is_empty(), egui::Button::new("connect"))
                    .clicked();
            });
        if go {
            let (url, format, field) = &self.connect;
            let field = field.trim();
            let sel = SeriesSelection::Net(NetOptions {
                url: url.trim().to_string(),
                payload: PayloadOptions {
                    format: *format,
                    time_field: (!field.is_empty()).then(|| field.to_string()),
                },
            });
            let _ = self.reopen(sel);
        }
    }

    /// Long format: the key column rows are split by, or the text columns that could be one,
    /// each a button that reopens the file split by it (`--series-key`).
    fn key_ui(&mut self, ui: &mut egui::Ui) {
        if let Some(key) = self.source.series_key() {
            ui.label(format!("series: one per value of '{key}' (long format)"));
        }
        let Some((SeriesSelection::Csv(path) | SeriesSelection::CsvWith(path, _), _)) =
            &self.selection
        else {
            return;
        };
        let offers: Vec<(String, usize)> = self
            .source
            .key_candidates()
            .iter()
            .map(|k| (k.column.clone(), k.values))
            .collect();
        if offers.is_empty() {
            return;
        }
        let path = path.clone();
        let mut chosen = None;
        ui.label("long format? this column repeats a few names:");
        for (column, values) in offers {
            if ui
                .button(format!("one series per '{column}' ({values} values)"))
                .on_hover_text(format!("reopens the file with --series-key {column}"))
                .clicked()
            {
                chosen = Some(column);
            }
        }
        if let Some(column) = chosen {
            let mut opts = match &self.selection {
                Some((SeriesSelection::CsvWith(_, o), _)) => o.clone(),
                _ => CsvOptions::default(),
            };
            opts.series_key = Some(column);
            let _ = self.reopen(SeriesSelection::CsvWith(path, opts));
        }
    }

    /// `interact`: wheel, drags and double-click over the chart.
    pub(super) fn handle_pointer(&mut self, response: &egui::Response, rect: egui::Rect) {
        // Home fits all, unless a text field has the keyboard.
        let home = response.ctx.input(|i| i.key_pressed(egui::Key::Home));
        if home && response.ctx.memory(|m| m.focused().is_none()) {
            self.fit_all();
            return;
        }
        let Some(v) = self.view else {
            return;
        };
        let w = rect.width().max(1.0) as f64;
        let h = rect.height().max(1.0) as f64;
        let t_at = |x: f32| v.t0 + (x - rect.left()) as f64 / w * (v.t1 - v.t0);
        let y_at = |y: f32| v.hi - (y - rect.top()) as f64 / h * (v.hi - v.lo);
        self.hover = response.hover_pos();
        if response.double_clicked() {
            self.follow = true;
            self.fixed_y = None;
            self.box_start = None;
            return;
        }
        let (scroll, shift, secondary) = response.ctx.input(|i| {
            (
                i.smooth_scroll_delta,
                i.modifiers.shift,
                i.pointer.secondary_down(),
            )
        });
        let boxing = shift || secondary;
        if response.drag_started() && boxing {
            self.box_start = response.interact_pointer_pos();
        }
        if self.box_start.is_some() {
            if response.dragged() {
                self.box_end = response.interact_pointer_pos();
            }
            if response.drag_stopped() {
                if let (Some(a), Some(b)) = (self.box_start, self.box_end)
                    && (a.x - b.x).abs() > 3.0
                {
                    let (x0, x1) = (a.x.min(b.x), a.x.max(b.x));
                    self.pause_at(t_at(x0), t_at(x1));
                    if (a.y - b.y).abs() > 3.0 {
                        let (y0, y1) = (y_at(a.y.max(b.y)), y_at(a.y.min(b.y)));
                        self.fixed_y = Some((y0, y1));
                    }
                }
                self.box_start = None;
                self.box_end = None;
            }
            return;
        }
        if response.dragged() {
            let dx = response.drag_delta().x as f64;
            if dx != 0.0 {
                let dt = -dx / w * (v.t1 - v.t0);
                self.pause_at(v.t0 + dt, v.t1 + dt);
            }
        }
        if response.hovered() && scroll.y != 0.0 {
            let f = (-scroll.y as f64 * 0.003).exp().clamp(0.2, 5.0);
            let px = self.hover.map_or(rect.center().x, |p| p.x);
            let tc = t_at(px);
            let (a, b) = (tc - (tc - v.t0) * f, tc + (v.t1 - tc) * f);
            if self.follow && self.shared.is_none() {
                self.window_s = (b - a).max(1e-12);
            } else {
                self.pause_at(a, b);
            }
        }
    }

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
        let widest = self.view.map_or(0.0, |v| {
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
        let Some(v) = self.view else {
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
            format!("time ({})", self.zone.name())
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
            self.zone,
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
        self.view?;
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
        let Some(v) = self.view else {
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
        let avoid = if crate::ui::overlay_shown(ctx) {
            crate::ui::overlay_area(area)
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
        for m in &self.markers {
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
        if let (Some(a), Some(b)) = (self.box_start, self.box_end) {
            painter.rect_stroke(
                egui::Rect::from_two_pos(a, b),
                0.0,
                egui::Stroke::new(1.0, egui::Color32::WHITE),
                egui::StrokeKind::Inside,
            );
        }
        // Crosshair: the nearest sample of each visible series.
        if let Some(p) = self.hover.filter(|p| rect.contains(*p)) {
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

    /// Stops following and shows `[t0, t1]`; the *window (s)* field then reads its width.
    fn pause_at(&mut self, t0: f64, t1: f64) {
        if t1 > t0 && (t1 - t0) > 1e-15 * t0.abs().max(1.0) {
            self.follow = false;
            self.paused_range = (t0, t1);
            self.window_s = t1 - t0;
        }
    }
}

/// The side panel's settings kept between runs ([`crate::scene::Scene::saved_settings`]):
/// `windows`, the following window (seconds) of each live source by its
/// [`live_key`](TimeSeries::live_key) (at most [`super::WINDOWS_KEPT`]). Nothing of a file's
/// view is kept: a file always opens fitted, and a window chosen for one source never applies
/// to another (the `window_s` of earlier versions, one width for every source, is ignored).
impl TimeSeries {
    pub(super) fn settings_json(&self) -> serde_json::Value {
        let mut windows = self.windows.clone();
        if let Some(key) = self.live_key() {
            windows.insert(key.clone(), self.window_s);
            while windows.len() > super::WINDOWS_KEPT {
                let Some(other) = windows.keys().find(|k| **k != key).cloned() else {
                    break;
                };
                windows.remove(&other);
            }
        }
        serde_json::json!({ "windows": windows })
    }

    pub(super) fn restore_json(&mut self, saved: &serde_json::Value) -> Vec<String> {
        let mut f = crate::settings::Fields::new("timeseries", saved);
        let windows: Option<std::collections::BTreeMap<String, serde_json::Value>> =
            f.get("windows");
        for (key, w) in windows.unwrap_or_default() {
            match w.as_f64() {
                Some(w) if (1e-6..=3.2e9).contains(&w) => {
                    self.windows.insert(key, w);
                }
                _ => f.notes.push(format!(
                    "timeseries.windows.{key}: {w} is not a window in 1e-6..=3.2e9 s"
                )),
            }
        }
        if self.follow
            && let Some(w) = self.saved_window()
        {
            self.window_s = w;
        }
        f.notes
    }
}
