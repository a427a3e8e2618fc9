//! The comparison view: an egui window that loads two recorded CSVs and shows their summaries and
//! frame-time distributions (histogram and percentile curve) side by side. The captures to pick
//! from are listed ([`candidates`]): this run's recordings, then the capture files of the
//! recordings directory ([`find_captures`]); a path can still be typed. The window is never taller
//! than the screen: its contents scroll.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::record::Capture;
use super::summary::Summary;

/// Colours of capture A and B.
pub const COLORS: [egui::Color32; 2] = [
    egui::Color32::from_rgb(120, 200, 255),
    egui::Color32::from_rgb(255, 170, 90),
];

/// State of the comparison window.
#[derive(Default)]
pub struct CompareView {
    /// Whether the window is shown.
    pub open: bool,
    /// Paths typed in.
    pub paths: [String; 2],
    loaded: [Option<(Capture, Summary, Vec<f64>)>; 2],
    error: Option<String>,
    /// This run's recordings, oldest first.
    session: Vec<PathBuf>,
    /// Where recordings go: the directory whose captures are offered.
    dir: Option<PathBuf>,
    /// The captures offered, newest first ([`candidates`]).
    offered: Vec<Candidate>,
    /// A file dialog open for slot A (0) or B (1): *Browse…*.
    browsing: Option<(usize, crate::ui::file_dialog::FilePick)>,
}

/// Most captures the window lists.
pub const MAX_CANDIDATES: usize = 50;

/// Most directory entries looked at for captures.
const MAX_DIR_ENTRIES: usize = 2000;

/// A capture the comparison window offers to load.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Candidate {
    /// Its path (absolute).
    pub path: PathBuf,
    /// Recorded by this run.
    pub this_run: bool,
}

impl Candidate {
    /// How the list shows it: the file name, and `(this run)` for this run's recordings.
    pub fn label(&self) -> String {
        let name = self.path.file_name().map_or_else(
            || self.path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        if self.this_run {
            format!("{name}  (this run)")
        } else {
            name
        }
    }
}

/// The captures to offer, at most [`MAX_CANDIDATES`]: this run's recordings (`session`, oldest
/// first as they were made) newest first, then the capture files found in the recordings
/// directory (`found`: path and modification time, any order) that are not among them, newest
/// first (ties by name). Paths are made absolute (relative ones against the working directory),
/// so the same file is listed once.
pub fn candidates(session: &[PathBuf], found: &[(PathBuf, SystemTime)]) -> Vec<Candidate> {
    let abs = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    let mut out: Vec<Candidate> = Vec::new();
    for p in session.iter().rev() {
        let path = abs(p);
        if !out.iter().any(|c| c.path == path) {
            out.push(Candidate {
                path,
                this_run: true,
            });
        }
    }
    let mut files: Vec<(PathBuf, SystemTime)> = found.iter().map(|(p, t)| (abs(p), *t)).collect();
    files.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    for (path, _) in files {
        if !out.iter().any(|c| c.path == path) {
            out.push(Candidate {
                path,
                this_run: false,
            });
        }
    }
    out.truncate(MAX_CANDIDATES);
    out
}

/// Whether the first line of a CSV names a `MsBetweenPresents` column: a vizdeck or
/// PresentMon-style capture ([`Capture::read`] reads it).
pub fn is_capture_header(first_line: &str) -> bool {
    first_line
        .trim_start_matches('\u{feff}')
        .split(',')
        .any(|h| h.trim().trim_matches('"') == "MsBetweenPresents")
}

/// The capture files in `dir`: `.csv` files whose header names `MsBetweenPresents`
/// ([`is_capture_header`]), with their modification times. Reads the first line of each CSV
/// only; unreadable entries are skipped. Looks at the first 2000 entries of the directory.
pub fn find_captures(dir: &Path) -> Vec<(PathBuf, SystemTime)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .take(MAX_DIR_ENTRIES)
        .flatten()
        .filter(|e| {
            e.path()
                .extension()
                .is_some_and(|x| x.eq_ignore_ascii_case("csv"))
        })
        .filter_map(|e| {
            let meta = e.metadata().ok().filter(|m| m.is_file())?;
            let mut head = [0u8; 4096];
            let n =
                std::io::Read::read(&mut std::fs::File::open(e.path()).ok()?, &mut head).ok()?;
            let text = String::from_utf8_lossy(&head[..n]);
            let first = text.lines().next().unwrap_or("");
            is_capture_header(first)
                .then(|| (e.path(), meta.modified().unwrap_or(SystemTime::UNIX_EPOCH)))
        })
        .collect()
}

/// Counts of `times` in `bins` equal bins over `[lo, hi)` (values outside are clamped into the
/// first/last bin).
pub fn histogram(times: &[f64], lo: f64, hi: f64, bins: usize) -> Vec<u32> {
    let mut out = vec![0u32; bins.max(1)];
    let width = (hi - lo).max(1e-9) / out.len() as f64;
    for &t in times {
        let i = ((t - lo) / width).floor();
        let i = if i.is_finite() {
            i.max(0.0) as usize
        } else {
            0
        };
        let last = out.len() - 1;
        out[i.min(last)] += 1;
    }
    out
}

impl CompareView {
    /// Opens the window offering this run's recordings (`session`, oldest first) and the
    /// captures in `dir` (where recordings go). When both slots are empty and this run recorded
    /// something, its newest recording is loaded as B and the capture before it (if any) as A.
    pub fn open_with(&mut self, session: &[PathBuf], dir: Option<PathBuf>) {
        self.open = true;
        self.session = session.to_vec();
        self.dir = dir;
        self.rescan();
        let empty = self.paths.iter().all(|p| p.trim().is_empty());
        if empty && self.offered.first().is_some_and(|c| c.this_run) {
            self.paths[1] = self.offered[0].path.display().to_string();
            self.load(1);
            if let Some(c) = self.offered.get(1) {
                self.paths[0] = c.path.display().to_string();
                self.load(0);
            }
        }
    }

    /// A recording of this run finished: it is offered from now on.
    pub fn recorded(&mut self, path: &Path) {
        self.session.push(path.to_path_buf());
        if self.open {
            self.rescan();
        }
    }

    /// Lists the captures again (this run's, then the directory's).
    pub fn rescan(&mut self) {
        let dir = self.dir.clone().unwrap_or_else(|| PathBuf::from("."));
        self.offered = candidates(&self.session, &find_captures(&dir));
    }

    /// The captures offered, newest first.
    pub fn offered(&self) -> &[Candidate] {
        &self.offered
    }

    /// Loads the capture in slot `i` (0 or 1) from its path field.
    pub fn load(&mut self, i: usize) {
        let path = PathBuf::from(self.paths[i].trim());
        match Capture::read(&path) {
            Ok(c) => {
                let mut sorted = c.frame_times_ms.clone();
                sorted.sort_unstable_by(f64::total_cmp);
                let s = Summary::from_sorted(&sorted);
                self.loaded[i] = Some((c, s, sorted));
                self.error = None;
            }
            Err(e) => {
                self.loaded[i] = None;
                self.error = Some(e.to_string());
            }
        }
    }

    /// Shows the window when open; returns its rect (points) when shown. It is kept on the
    /// screen and at most as tall as the screen less a margin; its contents scroll.
    pub fn show(&mut self, ctx: &egui::Context) -> Option<egui::Rect> {
        if !self.open {
            return None;
        }
        let mut open = self.open;
        let screen = ctx.content_rect();
        let shown = egui::Window::new("Compare captures")
            .open(&mut open)
            .default_size([640.0, 520.0f32.min(screen.height() - 60.0)])
            .max_height((screen.height() - 60.0).max(120.0))
            .constrain_to(screen)
            .vscroll(true)
            .show(ctx, |ui| self.contents(ui));
        self.open = open;
        shown.map(|r| r.response.rect)
    }

    fn contents(&mut self, ui: &mut egui::Ui) {
        use crate::ui::file_dialog::{FilePick, Picked};
        if let Some((slot, pick)) = &mut self.browsing {
            let slot = *slot;
            match pick.poll() {
                Picked::Waiting => ui
                    .ctx()
                    .request_repaint_after(std::time::Duration::from_millis(100)),
                Picked::File(p) => {
                    self.browsing = None;
                    self.paths[slot] = p.display().to_string();
                    self.load(slot);
                }
                Picked::Nothing => self.browsing = None,
            }
        }
        for (i, color) in COLORS.iter().enumerate() {
            ui.horizontal(|ui| {
                ui.colored_label(*color, if i == 0 { "A" } else { "B" });
                let current = Path::new(self.paths[i].trim())
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .filter(|n| !n.is_empty())
                    .unwrap_or_else(|| "pick a capture…".to_string());
                let mut picked = None;
                egui::ComboBox::from_id_salt(("compare-pick", i))
                    .selected_text(current)
                    .width(260.0)
                    .show_ui(ui, |ui| {
                        if self.offered.is_empty() {
                            ui.label("no captures yet: Record > Start (F9)");
                        }
                        for c in &self.offered {
                            if ui
                                .selectable_label(false, c.label())
                                .on_hover_text(c.path.display().to_string())
                                .clicked()
                            {
                                picked = Some(c.path.clone());
                            }
                        }
                    });
                if let Some(p) = picked {
                    self.paths[i] = p.display().to_string();
                    self.load(i);
                }
                ui.add(
                    egui::TextEdit::singleline(&mut self.paths[i])
                        .hint_text("or a path")
                        .desired_width(220.0),
                );
                if ui.button("Load").clicked() {
                    self.load(i);
                }
                if ui
                    .add_enabled(self.browsing.is_none(), egui::Button::new("Browse…"))
                    .on_hover_text("pick a CSV in the desktop's file dialog")
                    .clicked()
                {
                    let filters: &[(&str, &[&str])] = &[("Captures (CSV)", &["csv"])];
                    match FilePick::start("Compare captures — vizdeck", filters, self.dir.clone())
                    {
                        Ok(p) => self.browsing = Some((i, p)),
                        Err(e) => self.error = Some(e),
                    }
                }
            });
        }
        ui.horizontal(|ui| {
            let dir = self.dir.clone().unwrap_or_else(|| PathBuf::from("."));
            let shown = std::path::absolute(&dir).unwrap_or(dir);
            ui.small(format!(
                "{} capture(s): this run's recordings and the CSVs in {}",
                self.offered.len(),
                shown.display()
            ));
            if ui.small_button("rescan").clicked() {
                self.rescan();
            }
        });
        if let Some(e) = &self.error {
            ui.colored_label(egui::Color32::LIGHT_RED, e.as_str());
        }
        let loaded: Vec<_> = self.loaded.iter().flatten().collect();
        if loaded.is_empty() {
            ui.label(
                "Pick two captures (vizdeck or PresentMon CSVs), or type a path and press Load.",
            );
            return;
        }
        egui::Grid::new("compare-table")
            .striped(true)
            .show(ui, |ui| {
                ui.label("");
                for (i, slot) in self.loaded.iter().enumerate() {
                    if slot.is_some() {
                        ui.colored_label(COLORS[i], if i == 0 { "A" } else { "B" });
                    }
                }
                ui.end_row();
                let tables: Vec<_> = self
                    .loaded
                    .iter()
                    .flatten()
                    .map(|(_, s, _)| s.table_rows())
                    .collect();
                if let Some(first) = tables.first() {
                    for (r, (label, _)) in first.iter().enumerate() {
                        ui.label(*label);
                        for t in &tables {
                            ui.monospace(t[r].1.as_str());
                        }
                        ui.end_row();
                    }
                }
            });
        // Distributions over a common range: up to the larger p99.9 (with a margin).
        let hi = loaded.iter().map(|(_, s, _)| s.p999_ms).fold(1.0, f64::max) * 1.1;
        let bins = 60;
        // Both histograms on one scale: the share of each capture's frames in a bin, in %.
        let shares: Vec<Option<Vec<f64>>> = self
            .loaded
            .iter()
            .map(|slot| {
                slot.as_ref().map(|(_, _, sorted)| {
                    let total = sorted.len().max(1) as f64;
                    histogram(sorted, 0.0, hi, bins)
                        .into_iter()
                        .map(|c| 100.0 * f64::from(c) / total)
                        .collect()
                })
            })
            .collect();
        let peak = shares
            .iter()
            .flatten()
            .flatten()
            .copied()
            .fold(0.0, f64::max)
            .max(1e-9);
        ui.label("frame-time histogram");
        let (outer, _) = ui.allocate_exact_size(
            egui::vec2(ui.available_width().max(200.0), 130.0),
            egui::Sense::hover(),
        );
        let painter = ui.painter_at(outer);
        let rect = chart_axes(
            &painter,
            outer,
            Axis::new(0.0, hi, "ms"),
            Axis::new(0.0, peak, "%"),
        );
        for (i, share) in shares.iter().enumerate() {
            let Some(share) = share else { continue };
            let bw = rect.width() / bins as f32;
            for (b, &p) in share.iter().enumerate() {
                let frac = (p / peak) as f32;
                let x = rect.left() + b as f32 * bw + if i == 1 { bw * 0.5 } else { 0.0 };
                painter.rect_filled(
                    egui::Rect::from_min_max(
                        egui::pos2(x, rect.bottom() - rect.height() * frac),
                        egui::pos2(x + bw * 0.5, rect.bottom()),
                    ),
                    0.0,
                    COLORS[i],
                );
            }
        }
        ui.small("x: frame time (ms) · y: share of the capture's frames (%)");
        // Percentile curves: x = percentile 0..100, y = frame time.
        ui.label("frame time by percentile");
        let (outer, _) = ui.allocate_exact_size(
            egui::vec2(ui.available_width().max(200.0), 130.0),
            egui::Sense::hover(),
        );
        let painter = ui.painter_at(outer);
        let rect = chart_axes(
            &painter,
            outer,
            Axis::new(0.0, 100.0, "%"),
            Axis::new(0.0, hi, "ms"),
        );
        for (i, slot) in self.loaded.iter().enumerate() {
            let Some((_, _, sorted)) = slot else { continue };
            if sorted.is_empty() {
                continue;
            }
            let n = sorted.len();
            let pts: Vec<egui::Pos2> = (0..=200)
                .map(|k| {
                    let p = k as f64 / 2.0;
                    let v = sorted[super::nearest_rank_permille(n, (p * 10.0) as u32) - 1];
                    egui::pos2(
                        rect.left() + rect.width() * (p / 100.0) as f32,
                        rect.bottom() - rect.height() * (v / hi).min(1.0) as f32,
                    )
                })
                .collect();
            painter.add(egui::Shape::line(pts, egui::Stroke::new(1.5, COLORS[i])));
        }
        ui.small("x: percentile of frames (%) · y: frame time (ms)");
    }
}

/// One axis of a comparison chart: the range `[lo, hi]` it spans and the unit its labels carry.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Axis {
    /// Value at the axis' start (left or bottom).
    pub lo: f64,
    /// Value at the axis' end (right or top).
    pub hi: f64,
    /// Unit written after each tick's value (`ms`, `%`).
    pub unit: &'static str,
}

impl Axis {
    /// The axis over `[lo, hi]` in `unit`.
    pub fn new(lo: f64, hi: f64, unit: &'static str) -> Axis {
        Axis { lo, hi, unit }
    }

    /// About `target` ticks over the axis at the multiples of a 1-2-5 step
    /// ([`crate::scene::timeseries::axis::value_ticks`]), each labelled with its value and the
    /// unit (`20 ms`, `50 %`).
    pub fn ticks(&self, target: f64) -> Vec<(f64, String)> {
        crate::scene::timeseries::axis::value_ticks(self.lo, self.hi, target)
            .into_iter()
            .map(|(v, l)| (v, format!("{l} {}", self.unit)))
            .collect()
    }
}

/// Left margin of a comparison chart (the value labels), points.
const AXIS_LEFT: f32 = 56.0;
/// Bottom margin of a comparison chart (the x labels), points.
const AXIS_BOTTOM: f32 = 16.0;

/// The plot rect of a comparison chart in `outer`: margins on the left for the y labels and
/// below for the x labels, 8 points on the right and 6 above (half a label).
pub fn plot_rect(outer: egui::Rect) -> egui::Rect {
    egui::Rect::from_min_max(
        egui::pos2(outer.left() + AXIS_LEFT, outer.top() + 6.0),
        egui::pos2(
            (outer.right() - 8.0).max(outer.left() + AXIS_LEFT + 1.0),
            (outer.bottom() - AXIS_BOTTOM).max(outer.top() + 7.0),
        ),
    )
}

/// Draws the ground, grid lines and tick labels of a comparison chart in `outer` (`x` across,
/// `y` up) and returns its plot rect ([`plot_rect`]); the labels sit in the margins, never on
/// the data.
fn chart_axes(painter: &egui::Painter, outer: egui::Rect, x: Axis, y: Axis) -> egui::Rect {
    let rect = plot_rect(outer);
    painter.rect_filled(rect, 2.0, egui::Color32::from_black_alpha(120));
    let grid = egui::Stroke::new(1.0, egui::Color32::from_white_alpha(30));
    let font = egui::FontId::proportional(11.0);
    let text = egui::Color32::from_gray(200);
    let x_target = f64::from((rect.width() / 90.0).max(2.0));
    let mut last_right = f32::NEG_INFINITY;
    for (v, label) in x.ticks(x_target) {
        let px = rect.left() + ((v - x.lo) / (x.hi - x.lo)) as f32 * rect.width();
        painter.line_segment(
            [egui::pos2(px, rect.top()), egui::pos2(px, rect.bottom())],
            grid,
        );
        let galley = painter.layout_no_wrap(label, font.clone(), text);
        let left =
            (px - galley.size().x / 2.0).clamp(outer.left(), outer.right() - galley.size().x);
        if left >= last_right + 6.0 {
            last_right = left + galley.size().x;
            painter.galley(egui::pos2(left, rect.bottom() + 2.0), galley, text);
        }
    }
    let y_target = f64::from((rect.height() / 30.0).max(2.0));
    for (v, label) in y.ticks(y_target) {
        let py = rect.bottom() - ((v - y.lo) / (y.hi - y.lo)) as f32 * rect.height();
        painter.line_segment(
            [egui::pos2(rect.left(), py), egui::pos2(rect.right(), py)],
            grid,
        );
        let galley = painter.layout_no_wrap(label, font.clone(), text);
        let pos = egui::pos2(
            rect.left() - 4.0 - galley.size().x,
            (py - galley.size().y / 2.0).clamp(outer.top(), outer.bottom() - galley.size().y),
        );
        painter.galley(pos, galley, text);
    }
    rect
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn tmp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("vizdeck-compare-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn at(secs: u64) -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(secs)
    }

    #[test]
    fn this_runs_recordings_first_then_the_directory_newest_first() {
        let d = Path::new("/captures");
        let (a, b, c, e) = (
            d.join("a.csv"),
            d.join("b.csv"),
            d.join("c.csv"),
            d.join("e.csv"),
        );
        // Recorded in this run: a, then b. Found in the directory: c (oldest), b again, e.
        let session = vec![a.clone(), b.clone()];
        let found = vec![
            (c.clone(), at(100)),
            (b.clone(), at(200)),
            (e.clone(), at(300)),
        ];
        let list = candidates(&session, &found);
        let got: Vec<(&Path, bool)> = list
            .iter()
            .map(|c| (c.path.as_path(), c.this_run))
            .collect();
        assert_eq!(
            got,
            [
                (b.as_path(), true),
                (a.as_path(), true),
                (e.as_path(), false),
                (c.as_path(), false)
            ]
        );
        assert_eq!(list[0].label(), "b.csv  (this run)");
        assert_eq!(list[2].label(), "e.csv");
        // A relative recording path and the directory's absolute one are the same file.
        let cwd = std::env::current_dir().unwrap();
        let list = candidates(
            &[PathBuf::from("vizdeck-stats-1.csv")],
            &[(cwd.join("vizdeck-stats-1.csv"), at(5))],
        );
        assert_eq!(list.len(), 1);
        assert!(list[0].this_run && list[0].path == cwd.join("vizdeck-stats-1.csv"));
        // Never more than MAX_CANDIDATES.
        let many: Vec<(PathBuf, SystemTime)> = (0..80)
            .map(|i| (d.join(format!("{i}.csv")), at(i)))
            .collect();
        let list = candidates(&[], &many);
        assert_eq!(list.len(), MAX_CANDIDATES);
        assert_eq!(list[0].path, d.join("79.csv"));
    }

    #[test]
    fn only_capture_csvs_of_the_directory_are_found() {
        let d = tmp("find");
        let vizdeck = d.join("vizdeck-stats-1.csv");
        std::fs::write(
            &vizdeck,
            format!("{}\n", crate::stats::CSV_HEADER.join(",")),
        )
        .unwrap();
        let presentmon = d.join("game.CSV");
        std::fs::write(
            &presentmon,
            "Application,ProcessID,SwapChainAddress,Runtime,SyncInterval,PresentFlags,Dropped,\
             TimeInSeconds,MsInPresentAPI,\"MsBetweenPresents\"\ngame.exe,1,0x0,DXGI,1,0,0,0.1,0.2,16.7\n",
        )
        .unwrap();
        std::fs::write(d.join("series.csv"), "time,value\n0,1\n").unwrap();
        std::fs::write(d.join("notes.txt"), "MsBetweenPresents\n").unwrap();
        std::fs::create_dir_all(d.join("folder.csv")).unwrap();
        let mut found: Vec<PathBuf> = find_captures(&d).into_iter().map(|(p, _)| p).collect();
        found.sort();
        let mut expected = vec![vizdeck, presentmon];
        expected.sort();
        assert_eq!(found, expected);
        assert!(find_captures(&d.join("no-such-dir")).is_empty());
        let _ = std::fs::remove_dir_all(&d);
    }

    /// A capture of `n` frames (PresentMon-style: the one column the view reads).
    fn capture(path: &Path, n: usize, base_ms: f64) {
        let mut text = String::from("Application,MsBetweenPresents\n");
        for i in 0..n {
            text.push_str(&format!("x,{}\n", base_ms + (i % 7) as f64));
        }
        std::fs::write(path, text).unwrap();
    }

    /// The window with both captures loaded (taller than these screens when unbounded) stays on a
    /// 1280×400 and a 1280×720 screen.
    /// Tick positions at the multiples of the 1-2-5 step at least span / target long, each
    /// labelled with its unit; the plot rect leaves the labels' margins.
    #[test]
    fn chart_axes_have_ticks_with_units() {
        // 0 … 33 ms, 5 ticks wanted: 33 / 5 = 6.6 → a step of 10 ms: 0, 10, 20, 30.
        let t = Axis::new(0.0, 33.0, "ms").ticks(5.0);
        let at: Vec<f64> = t.iter().map(|t| t.0).collect();
        assert_eq!(at, [0.0, 10.0, 20.0, 30.0]);
        assert_eq!(t[1].1, "10 ms");
        // 0 … 100 %, 4 wanted: 25 → 50: 0, 50, 100.
        let t = Axis::new(0.0, 100.0, "%").ticks(4.0);
        let labels: Vec<&str> = t.iter().map(|t| t.1.as_str()).collect();
        assert_eq!(labels, ["0 %", "50 %", "100 %"]);
        // 0 … 0.8 %, 4 wanted: 0.2 → 0.0, 0.2, …, 0.8 with one decimal.
        let t = Axis::new(0.0, 0.8, "%").ticks(4.0);
        let labels: Vec<&str> = t.iter().map(|t| t.1.as_str()).collect();
        assert_eq!(labels, ["0.0 %", "0.2 %", "0.4 %", "0.6 %", "0.8 %"]);
        let outer = egui::Rect::from_min_size(egui::pos2(10.0, 20.0), egui::vec2(400.0, 130.0));
        let plot = plot_rect(outer);
        assert_eq!(plot.left(), 10.0 + AXIS_LEFT);
        assert_eq!(plot.bottom(), 150.0 - AXIS_BOTTOM);
        assert!(outer.contains_rect(plot));
    }

    #[test]
    fn the_window_stays_on_the_screen() {
        let d = tmp("window");
        let (a, b) = (d.join("a.csv"), d.join("b.csv"));
        capture(&a, 300, 16.0);
        capture(&b, 300, 20.0);
        for height in [400.0f32, 720.0] {
            let mut view = CompareView::default();
            view.open_with(&[a.clone(), b.clone()], Some(d.clone()));
            assert_eq!(view.offered().len(), 2);
            assert!(
                view.loaded.iter().all(Option::is_some),
                "both loaded on open"
            );
            let ctx = egui::Context::default();
            let mut rect = None;
            for frame in 0..4 {
                let input = egui::RawInput {
                    screen_rect: Some(egui::Rect::from_min_size(
                        egui::Pos2::ZERO,
                        egui::vec2(1280.0, height),
                    )),
                    time: Some(frame as f64 / 60.0),
                    ..Default::default()
                };
                let _ = ctx.run_ui(input, |ui| rect = view.show(ui.ctx()));
            }
            let rect = rect.expect("shown");
            assert!(
                rect.top() >= 0.0 && rect.bottom() <= height,
                "screen {height}: window {rect:?}"
            );
        }
        let _ = std::fs::remove_dir_all(&d);
    }
}
