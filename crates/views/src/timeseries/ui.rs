//! The time-series scene's side panel: source (file, connect form, series key), notices,
//! follow and value range, own signals, window width, series toggles, and the panel of a
//! `--share` window.

use super::{PALETTE, TimeSeries};
use crate::series::SeriesSelection;
use crate::series::source::CsvOptions;
use crate::series::source::net::{LinkState, NetOptions};
use crate::series::source::payload::{PayloadFormat, PayloadOptions, TimeBase};
use crate::series::store::Series;

/// The side panel's forms, and why the last reopen failed.
pub(super) struct Forms {
    /// The side panel's *Connect* form: URL, payload format, time field.
    pub(super) connect: (String, PayloadFormat, String),
    /// The side panel's *File* form: the path typed (filled in with the file shown).
    pub(super) file_path: String,
    /// Why the last [`reopen`](TimeSeries::reopen) failed, one line.
    pub(super) open_error: Option<String>,
}

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
                    && let Some(v) = self.drawn.view
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
                ui.label(format!(
                    "time: {f}, shown in {}",
                    self.time_format.zone.name()
                ));
            } else {
                ui.label(format!(
                    "time: dates as '{f}', {}",
                    self.time_format.zone.name()
                ))
                .on_hover_text("recognised from the first rows; --time-format chooses another");
            }
        }
        if let Some(e) = self.source.error() {
            ui.colored_label(egui::Color32::LIGHT_RED, e);
        }
        if let Some(e) = &self.forms.open_error {
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
        for n in &self.drawn.gpu_notes {
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
        if let Some(n) = &self.audio.note {
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
        ui.label(format!("points in view: {}", self.drawn.points_in_view));
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
        for n in &self.drawn.gpu_notes {
            ui.colored_label(egui::Color32::YELLOW, n);
        }
        self.view_buttons(ui, "whole window");
        ui.label(format!("points in view: {}", self.drawn.points_in_view));
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
        if let Some(lat) = &self.presents.latency {
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
        if self.forms.file_path.is_empty()
            && let Some((p, _)) = &current
        {
            self.forms.file_path = p.display().to_string();
        }
        let failed = self.source.error().is_some() || self.forms.open_error.is_some();
        let (mut open, mut reload) = (false, false);
        egui::CollapsingHeader::new("File")
            .default_open(failed)
            .show(ui, |ui| {
                let edit = ui.add(
                    egui::TextEdit::singleline(&mut self.forms.file_path)
                        .hint_text("data.csv, data.parquet, data.arrow")
                        .desired_width(f32::INFINITY),
                );
                open = edit.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
                ui.horizontal(|ui| {
                    open |= ui
                        .add_enabled(
                            !self.forms.file_path.trim().is_empty(),
                            egui::Button::new("open"),
                        )
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
            let path = std::path::PathBuf::from(self.forms.file_path.trim());
            let csv = CsvOptions {
                time_zone: self.time_format.zone,
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
                let (url, format, field) = &mut self.forms.connect;
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
            let (url, format, field) = &self.forms.connect;
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
}
