//! Progress of long work, in one place: the arithmetic every progress display shares
//! ([`Estimate`]: fraction done, rate, time left) and the terminal bar of CLI and headless runs
//! ([`Progress`], indicatif on stderr).
//!
//! Where each piece of long work shows its progress:
//!
//! | work | CLI / headless | window |
//! |---|---|---|
//! | `vizdeck bench` (`src/bench/`) | runs done / total, the current run | — |
//! | decoding a long audio file (`audio/file/`) | bytes decoded | progress bar in the spectrogram's panel and image |
//! | indexing a LAS/LAZ/PLY file (`pointcloud/index/`) | the index's fraction | progress bar in the point-cloud panel and image |
//!
//! **Quiet unless a person watches.** A [`Progress`] draws only when stderr is a terminal (a
//! pipe, a file or CI's log get nothing from it, not even a cleared line), and only once the work
//! has run for [`SHOW_AFTER`], so short work prints nothing at all. While a bar is shown, log
//! lines are printed above it ([`suspend`], called by vizdeck's logger), not through it.

use std::io::IsTerminal as _;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Work shorter than this shows no terminal bar.
pub(crate) const SHOW_AFTER: Duration = Duration::from_millis(300);

/// Least time between two updates of a terminal bar's text.
const REDRAW_EVERY: Duration = Duration::from_millis(100);

/// How far a piece of work has come: `done` of `total` units after `elapsed_s` seconds, and what
/// follows from that if the rate so far holds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimate {
    /// Fraction done, in [0, 1] ([`fraction`]).
    pub fraction: f64,
    /// Units a second so far (`done / elapsed_s`); `None` before anything was done or any time
    /// passed.
    pub per_s: Option<f64>,
    /// Seconds left at the rate so far ([`eta_s`]); `None` while nothing is done.
    pub eta_s: Option<f64>,
}

impl Estimate {
    /// The estimate of `done` of `total` units after `elapsed_s` seconds.
    pub fn new(done: f64, total: f64, elapsed_s: f64) -> Estimate {
        let f = fraction(done, total);
        Estimate {
            fraction: f,
            per_s: (done > 0.0 && elapsed_s > 0.0 && done.is_finite()).then(|| done / elapsed_s),
            eta_s: eta_s(f, elapsed_s),
        }
    }

    /// The estimate of work known only by its fraction done (stages of different units), with
    /// `per_s` given separately (`None`: not shown).
    pub fn from_fraction(fraction: f64, elapsed_s: f64, per_s: Option<f64>) -> Estimate {
        let f = if fraction.is_finite() {
            fraction.clamp(0.0, 1.0)
        } else {
            0.0
        };
        Estimate {
            fraction: f,
            per_s,
            eta_s: eta_s(f, elapsed_s),
        }
    }

    /// One line for a bar: `"42 % · 1.23 M points/s · 0:12 left"` (`unit` names what `per_s`
    /// counts; the rate and the time left are left out while unknown).
    pub fn text(&self, unit: &str) -> String {
        let mut s = format!("{:.0} %", 100.0 * self.fraction);
        if let Some(r) = self.per_s {
            s.push_str(&format!(" · {}/s", amount_text(r, unit)));
        }
        if let Some(t) = self.eta_s
            && self.fraction < 1.0
        {
            s.push_str(&format!(" · {} left", duration_text(t)));
        }
        s
    }
}

/// `done / total` clamped to [0, 1]; 0 when `total` is not positive or either is not finite.
pub fn fraction(done: f64, total: f64) -> f64 {
    if total.is_nan() || total <= 0.0 || !done.is_finite() || !total.is_finite() {
        return 0.0;
    }
    (done / total).clamp(0.0, 1.0)
}

/// Seconds left when `fraction` of the work took `elapsed_s`, at the same rate:
/// `elapsed_s · (1 − fraction) / fraction`. `Some(0)` once done; `None` before anything is done
/// or any time passed (no rate yet).
pub fn eta_s(fraction: f64, elapsed_s: f64) -> Option<f64> {
    if fraction >= 1.0 {
        return Some(0.0);
    }
    let positive = |v: f64| v.is_finite() && v > 0.0;
    if !positive(fraction) || !positive(elapsed_s) {
        return None;
    }
    Some(elapsed_s * (1.0 - fraction) / fraction)
}

/// A duration as a clock reading, whole seconds rounded: `"0:07"`, `"12:05"`, `"1:02:03"`.
pub(crate) fn duration_text(seconds: f64) -> String {
    let s = if seconds.is_finite() {
        seconds.max(0.0).round() as u64
    } else {
        0
    };
    let (h, m, s) = (s / 3600, s / 60 % 60, s % 60);
    if h > 0 {
        format!("{h}:{m:02}:{s:02}")
    } else {
        format!("{m}:{s:02}")
    }
}

/// A count with three significant digits and an SI prefix: `"950"`, `"12.3 k"`, `"4.56 M"`,
/// `"1.20 G"`.
pub fn count_text(n: f64) -> String {
    let a = n.abs();
    let (v, p) = if a >= 1e9 {
        (n / 1e9, " G")
    } else if a >= 1e6 {
        (n / 1e6, " M")
    } else if a >= 1e3 {
        (n / 1e3, " k")
    } else {
        return format!("{n:.0}");
    };
    let digits = if v.abs() >= 100.0 {
        0
    } else if v.abs() >= 10.0 {
        1
    } else {
        2
    };
    format!("{v:.digits$}{p}")
}

/// `n` of `unit` with [`count_text`]: `"1.50 M points"`; bytes (`unit` `"B"`) as sizes:
/// `"12.3 MB"`, `"950 B"`.
pub fn amount_text(n: f64, unit: &str) -> String {
    let c = count_text(n);
    if unit == "B" && c.ends_with(|ch: char| ch.is_ascii_alphabetic()) {
        format!("{c}{unit}")
    } else {
        format!("{c} {unit}")
    }
}

/// The bars shown now, for [`suspend`].
static SHOWN: Mutex<Vec<indicatif::WeakProgressBar>> = Mutex::new(Vec::new());

/// Runs `f` (which writes to stderr) with the terminal bar shown now, if any, cleared and drawn
/// again after it, so that a log line does not break the bar. Without a bar, just `f`.
pub fn suspend<R>(f: impl FnOnce() -> R) -> R {
    let bar = SHOWN.lock().ok().and_then(|mut v| {
        v.retain(|w| w.upgrade().is_some());
        v.last().and_then(indicatif::WeakProgressBar::upgrade)
    });
    match bar {
        Some(b) => b.suspend(f),
        None => f(),
    }
}

/// A terminal progress bar on stderr for a CLI or headless run: `done` of `total` units, the
/// current item (`vizdeck bench`: the run going on) and the time left. A no-op when stderr is
/// not a terminal, and until the work has run for [`SHOW_AFTER`]; cleared when finished or
/// dropped.
pub struct Progress {
    bar: Option<indicatif::ProgressBar>,
    shown: bool,
    started: Instant,
    last_text: Option<Instant>,
    label: String,
    unit: &'static str,
    item: String,
    done: u64,
    total: u64,
    /// Show `done` and `total` as sizes in bytes rather than counts.
    bytes: bool,
    /// Show the fraction done rather than the counts.
    percent: bool,
}

impl Progress {
    /// A bar for `total` units of `unit` (`"runs"`, `"points"`), prefixed by `label`; drawn on
    /// stderr only when it is a terminal.
    pub fn new(label: impl Into<String>, total: u64, unit: &'static str) -> Progress {
        Self::with_target(label, total, unit, std::io::stderr().is_terminal())
    }

    /// A bar that never draws (its arithmetic still works).
    pub fn hidden(label: impl Into<String>, total: u64, unit: &'static str) -> Progress {
        Self::with_target(label, total, unit, false)
    }

    fn with_target(
        label: impl Into<String>,
        total: u64,
        unit: &'static str,
        tty: bool,
    ) -> Progress {
        let bar = tty.then(|| {
            // Hidden until SHOW_AFTER has passed (`shown`).
            let b = indicatif::ProgressBar::with_draw_target(
                Some(total),
                indicatif::ProgressDrawTarget::hidden(),
            );
            if let Ok(style) =
                indicatif::ProgressStyle::with_template("{prefix} [{bar:30.cyan/blue}] {msg}")
            {
                b.set_style(style.progress_chars("=> "));
            }
            b
        });
        let label = label.into();
        if let Some(b) = &bar {
            b.set_prefix(label.clone());
        }
        Progress {
            bar,
            shown: false,
            started: Instant::now(),
            last_text: None,
            label,
            unit,
            item: String::new(),
            done: 0,
            total,
            bytes: false,
            percent: false,
        }
    }

    /// The fraction done shown (`"42 %"`) rather than the counts: for work whose units are
    /// steps of a fraction (e.g. a total of 1000).
    pub fn in_percent(mut self) -> Progress {
        self.percent = true;
        self
    }

    /// Counts shown as sizes (`"120 MB of 635 MB"`) rather than `"12/40 runs"`.
    pub fn in_bytes(mut self) -> Progress {
        self.bytes = true;
        self
    }

    /// Whether the bar can draw at all (stderr is a terminal).
    pub fn on_terminal(&self) -> bool {
        self.bar.is_some()
    }

    /// What the bar is labelled.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// Units done so far.
    pub fn done(&self) -> u64 {
        self.done
    }

    /// Units in all.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// The estimate now ([`Estimate::new`] of done, total and the time since the bar was made).
    pub fn estimate(&self) -> Estimate {
        Estimate::new(
            self.done as f64,
            self.total as f64,
            self.started.elapsed().as_secs_f64(),
        )
    }

    /// Sets the units done.
    pub fn set(&mut self, done: u64) {
        self.done = done;
        self.redraw(false);
    }

    /// Adds `n` units done.
    pub fn inc(&mut self, n: u64) {
        self.done = self.done.saturating_add(n);
        self.redraw(false);
    }

    /// Sets the units in all (work whose size became known, or changed).
    pub fn set_total(&mut self, total: u64) {
        self.total = total;
        if let Some(b) = &self.bar {
            b.set_length(total);
        }
        self.redraw(true);
    }

    /// Names the item being worked on (shown after the counts; drawn at once when it changed).
    pub fn set_item(&mut self, item: impl Into<String>) {
        let item = item.into();
        let changed = item != self.item;
        self.item = item;
        self.redraw(changed);
    }

    /// [`set`](Self::set) and [`set_item`](Self::set_item) in one update.
    pub fn update(&mut self, done: u64, item: impl Into<String>) {
        let item = item.into();
        let changed = item != self.item;
        self.done = done;
        self.item = item;
        self.redraw(changed);
    }

    /// The bar's text: `"3/12 runs · particles 1280x720 · 1:40 left"`.
    pub fn text(&self) -> String {
        let e = self.estimate();
        let mut s = if self.percent {
            format!("{:.0} %", 100.0 * e.fraction)
        } else if self.bytes {
            format!(
                "{} of {}",
                amount_text(self.done as f64, "B"),
                amount_text(self.total as f64, "B")
            )
        } else {
            format!("{}/{} {}", self.done, self.total, self.unit)
        };
        if !self.item.is_empty() {
            s.push_str(" · ");
            s.push_str(&self.item);
        }
        if let Some(t) = e.eta_s
            && e.fraction > 0.0
            && e.fraction < 1.0
        {
            s.push_str(&format!(" · {} left", duration_text(t)));
        }
        s
    }

    fn redraw(&mut self, force: bool) {
        let Some(b) = &self.bar else {
            return;
        };
        if !self.shown {
            if self.started.elapsed() < SHOW_AFTER {
                return;
            }
            self.shown = true;
            b.set_draw_target(indicatif::ProgressDrawTarget::stderr_with_hz(10));
            if let Ok(mut v) = SHOWN.lock() {
                v.push(b.downgrade());
            }
        }
        let now = Instant::now();
        if force || self.last_text.is_none_or(|t| now - t >= REDRAW_EVERY) {
            self.last_text = Some(now);
            b.set_position(self.done);
            b.set_message(self.text());
        }
    }

    /// Clears the bar from the terminal (also on drop).
    pub fn finish(&mut self) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fraction_is_clamped_and_safe() {
        assert_eq!(fraction(25.0, 100.0), 0.25);
        assert_eq!(fraction(0.0, 100.0), 0.0);
        assert_eq!(fraction(150.0, 100.0), 1.0);
        assert_eq!(fraction(5.0, 0.0), 0.0);
        assert_eq!(fraction(f64::NAN, 10.0), 0.0);
        assert_eq!(fraction(1.0, f64::INFINITY), 0.0);
    }

    #[test]
    fn time_left_at_the_rate_so_far() {
        // A quarter in 10 s: the other three quarters take 30 s.
        assert_eq!(eta_s(0.25, 10.0), Some(30.0));
        // Three quarters in 6 s: one quarter, 2 s, left.
        assert_eq!(eta_s(0.75, 6.0), Some(2.0));
        assert_eq!(eta_s(1.0, 8.0), Some(0.0));
        assert_eq!(eta_s(0.0, 8.0), None);
        assert_eq!(eta_s(0.5, 0.0), None);
    }

    #[test]
    fn estimate_of_counts() {
        // 3 M of 12 M points in 2 s: 1.5 M points/s, a quarter, 6 s left.
        let e = Estimate::new(3e6, 12e6, 2.0);
        assert_eq!(e.fraction, 0.25);
        assert_eq!(e.per_s, Some(1.5e6));
        assert_eq!(e.eta_s, Some(6.0));
        assert_eq!(e.text("points"), "25 % · 1.50 M points/s · 0:06 left");
        // Nothing done yet: no rate, no time left.
        let e = Estimate::new(0.0, 12e6, 2.0);
        assert_eq!((e.per_s, e.eta_s), (None, None));
        assert_eq!(e.text("points"), "0 %");
        // Done: no time left shown.
        assert_eq!(
            Estimate::new(5.0, 5.0, 1.0).text("runs"),
            "100 % · 5 runs/s"
        );
    }

    #[test]
    fn estimate_from_a_fraction() {
        let e = Estimate::from_fraction(0.6, 90.0, None);
        assert_eq!(e.eta_s, Some(60.0));
        assert_eq!(e.text("points"), "60 % · 1:00 left");
        assert_eq!(Estimate::from_fraction(f64::NAN, 1.0, None).fraction, 0.0);
        assert_eq!(Estimate::from_fraction(1.5, 1.0, None).fraction, 1.0);
    }

    #[test]
    fn durations_and_counts_read_as_written() {
        assert_eq!(duration_text(7.4), "0:07");
        assert_eq!(duration_text(725.0), "12:05");
        assert_eq!(duration_text(3723.0), "1:02:03");
        assert_eq!(duration_text(-3.0), "0:00");
        assert_eq!(duration_text(f64::INFINITY), "0:00");
        assert_eq!(count_text(950.0), "950");
        assert_eq!(count_text(12_340.0), "12.3 k");
        assert_eq!(count_text(4_560_000.0), "4.56 M");
        assert_eq!(count_text(123_400_000.0), "123 M");
        assert_eq!(count_text(1.2e9), "1.20 G");
        assert_eq!(amount_text(12_340_000.0, "B"), "12.3 MB");
        assert_eq!(amount_text(950.0, "B"), "950 B");
        assert_eq!(amount_text(2e6, "points"), "2.00 M points");
        assert_eq!(
            Estimate::new(25e6, 100e6, 2.0).text("B"),
            "25 % · 12.5 MB/s · 0:06 left"
        );
    }

    #[test]
    fn a_hidden_bar_keeps_its_counts_and_text() {
        let mut p = Progress::hidden("bench", 12, "runs");
        assert!(!p.on_terminal());
        p.set(3);
        p.set_item("particles 1280x720");
        assert_eq!((p.done(), p.total()), (3, 12));
        assert!(
            p.text().starts_with("3/12 runs · particles 1280x720"),
            "{}",
            p.text()
        );
        p.inc(9);
        assert_eq!(p.estimate().fraction, 1.0);
        assert_eq!(p.text(), "12/12 runs · particles 1280x720");
        let mut b = Progress::hidden("decode", 2_000_000, "bytes").in_bytes();
        b.set(500_000);
        assert!(b.text().starts_with("500 kB of 2.00 MB"), "{}", b.text());
        let mut f = Progress::hidden("index", 1000, "").in_percent();
        f.set(1000);
        f.set_item("done");
        assert_eq!(f.text(), "100 % · done");
    }
}
