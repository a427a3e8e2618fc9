//! The spectrogram panel's layout: where the image, the spectrum strip and the colour bar go
//! ([`Frame`]), the ticks of the four axes (frequency and time of the image, level of the colour
//! bar and of the strip), and where every label and axis title goes ([`place`]): outside the
//! image, in margins of their own, no two overlapping and none leaving the panel.
//!
//! ```text
//!  ┌──────────────────────────────────────────────────────────────┐
//!  │f │ 20k ┤┌───────────────────────────┐  ┌─────────┐ ┌─┐┤ 0   │l│
//!  │r │     ││                           │  │spectrum │ │ │┤ -20 │e│
//!  │e │  5k ┤│ image (columns × rows)    │  │ (level  │ │c│┤ -40 │v│
//!  │q │     ││                           │  │  across)│ │b│┤ -60 │e│
//!  │  │   0 ┤└───────────────────────────┘  └─────────┘ └─┘┤     │l│
//!  │      0    2    4    6    8   10        -120  -60  0            │
//!  │                time (s)                spectrum (dBFS)          │
//!  └──────────────────────────────────────────────────────────────┘
//! ```
//!
//! The strip shares the image's frequency axis (its rows are the image's rows), so it needs no
//! frequency labels of its own; its level axis runs across it. Everything here is in points,
//! relative to the panel's top-left corner; [`Frame::px`] gives the pixel rects the draw pass
//! uses, [`Frame::for_pixels`] the frame of a pixel size (the same one the overlay and the draw
//! pass use).

use egui::{Pos2, Rect, Vec2, pos2, vec2};

use super::axis::{FreqAxis, nice_step};
use crate::timeseries::axis::place_labels;

/// Height of a row of labels below the image, points.
pub(crate) const ROW: f32 = 15.0;
/// Width of the column of a rotated axis title, points.
const TITLE_W: f32 = 16.0;
/// Length of a tick mark, points.
pub(crate) const TICK: f32 = 4.0;
/// Room kept for the frequency labels left of the image, points.
const FREQ_LABELS_W: f32 = 40.0;
/// Room kept for the level labels right of the colour bar, points.
const BAR_LABELS_W: f32 = 40.0;
/// Width of the colour bar, points.
const BAR_W: f32 = 12.0;
/// Space above the image (the top tick labels stand half out of it), points.
const TOP: f32 = 8.0;
/// Least space between two labels along an axis, points.
const LABEL_GAP: f32 = 6.0;
/// Shortest colour bar shown, points.
pub(crate) const MIN_BAR_H: f32 = 60.0;

/// The parts of the spectrogram panel, in points from its top-left corner.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Frame {
    /// The panel's size.
    pub size: Vec2,
    /// The spectrogram image.
    pub plot: Rect,
    /// The spectrum strip right of the image (same rows), when shown.
    pub strip: Option<Rect>,
    /// The colour bar (the colormap over the dB range, bottom = floor), when shown.
    pub bar: Option<Rect>,
    /// Whether there are margins for axes (false in a panel too small: the image fills it).
    pub axes: bool,
    /// A corner no label may cover (the stats overlay's, [`Frame::new_clear_of`]).
    pub clear: Option<Rect>,
}

impl Frame {
    /// The layout of a panel of `size` points: margins for the axes and their titles when the
    /// panel holds them and an image of at least 120 × 60 points; the colour bar from 440
    /// points wide; the spectrum strip (`spectrum` on) when the image stays at least 480 points
    /// wide beside it (a fifth of the width, 100–220 points).
    pub fn new(size: Vec2, spectrum: bool) -> Frame {
        Frame::new_clear_of(size, spectrum, None)
    }

    /// [`Frame::new`] with the colour bar, its labels and its title clear of `keep_clear` (in the
    /// panel's points: the corner of the deck's stats overlay, [`crate::overlay::overlay_area`]):
    /// where the bar's column meets it, the bar starts below it. The bar is left out when less
    /// than [`MIN_BAR_H`] points of it would remain. The image and the strip keep their places
    /// (the strip shares the image's rows).
    pub fn new_clear_of(size: Vec2, spectrum: bool, keep_clear: Option<Rect>) -> Frame {
        let (w, h) = (size.x.max(0.0), size.y.max(0.0));
        let full = Rect::from_min_size(Pos2::ZERO, vec2(w, h));
        let left = TITLE_W + FREQ_LABELS_W + TICK + 4.0;
        let bottom = 2.0 * ROW + TICK + 4.0;
        if w < left + 8.0 + 120.0 || h < TOP + bottom + 60.0 {
            return Frame {
                size: vec2(w, h),
                plot: full,
                strip: None,
                bar: None,
                axes: false,
                clear: keep_clear,
            };
        }
        let bar_block = 10.0 + BAR_W + TICK + 2.0 + BAR_LABELS_W + TITLE_W + 2.0;
        // The bar's column (bar, labels, title) from its left edge to the panel's right.
        let column_left = w - bar_block + 10.0;
        let bar_top = match keep_clear {
            Some(k) if k.right() > column_left && k.left() < w && k.bottom() > 0.0 => {
                TOP.max(k.bottom() + TOP)
            }
            _ => TOP,
        };
        let show_bar = w >= left + bar_block + 200.0 && h - bottom - bar_top >= MIN_BAR_H;
        let mut right = w - if show_bar { bar_block } else { 8.0 };
        let bar = show_bar.then(|| {
            Rect::from_min_max(
                pos2(right + 10.0, bar_top),
                pos2(right + 10.0 + BAR_W, h - bottom),
            )
        });
        let strip = if spectrum && right - left >= 480.0 + 100.0 + 16.0 {
            let sw = ((right - left) * 0.2).clamp(100.0, 220.0);
            let r = Rect::from_min_max(pos2(right - sw, TOP), pos2(right, h - bottom));
            right -= sw + 16.0;
            Some(r)
        } else {
            None
        };
        Frame {
            size: vec2(w, h),
            plot: Rect::from_min_max(pos2(left, TOP), pos2(right, h - bottom)),
            strip,
            bar,
            axes: true,
            clear: keep_clear,
        }
    }

    /// The frame of a panel of `size_px` pixels shown at `ppp` pixels per point (the size in
    /// points is `size_px / ppp`).
    pub fn for_pixels(size_px: (u32, u32), ppp: f32, spectrum: bool) -> Frame {
        Frame::for_pixels_with(size_px, ppp, spectrum, false)
    }

    /// [`Frame::for_pixels`], the colour bar clear of the stats overlay's corner when
    /// `stats_overlay` (the deck shows it, [`crate::overlay::overlay_shown`]): what the scene's overlay
    /// and its draw pass both use.
    pub fn for_pixels_with(
        size_px: (u32, u32),
        ppp: f32,
        spectrum: bool,
        stats_overlay: bool,
    ) -> Frame {
        let ppp = if ppp.is_finite() && ppp > 0.0 {
            ppp
        } else {
            1.0
        };
        let size = vec2(size_px.0 as f32 / ppp, size_px.1 as f32 / ppp);
        let keep_clear = stats_overlay
            .then(|| crate::overlay::overlay_area(Rect::from_min_size(Pos2::ZERO, size)));
        Frame::new_clear_of(size, spectrum, keep_clear)
    }

    /// `r` in whole pixels at `ppp` pixels per point: `[x0, y0, x1, y1]`, each edge rounded.
    pub fn px(r: Rect, ppp: f32) -> [u32; 4] {
        [r.min.x, r.min.y, r.max.x, r.max.y].map(|v| (v * ppp).round().max(0.0) as u32)
    }
}

/// A tick: where on its axis (points from the panel's top or left edge) and its label.
#[derive(Clone, Debug, PartialEq)]
pub struct Tick {
    /// Position along the axis: y for the frequency and level-bar axes, x for the time and the
    /// strip's level axis.
    pub at: f32,
    /// Label text.
    pub text: String,
}

/// The ticks of the panel's four axes.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Ticks {
    /// Frequency, left of the image (y).
    pub freq: Vec<Tick>,
    /// Time, below the image (x).
    pub time: Vec<Tick>,
    /// Level, right of the colour bar (y).
    pub bar: Vec<Tick>,
    /// Level, below the spectrum strip (x).
    pub strip: Vec<Tick>,
}

/// What a label labels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LabelKind {
    /// A frequency tick (left of the image).
    Freq,
    /// A time tick (below the image).
    Time,
    /// A level tick of the colour bar (right of it).
    Bar,
    /// A level tick of the spectrum strip (below it).
    Strip,
    /// An axis title; the vertical axes' titles are rotated a quarter turn counter-clockwise
    /// (read bottom to top).
    Title {
        /// Rotated.
        vertical: bool,
    },
}

/// A placed label: its rect in points from the panel's top-left corner (for a rotated title,
/// the rect of the rotated text), its text and what it labels.
#[derive(Clone, Debug, PartialEq)]
pub struct Label {
    /// Where it is drawn.
    pub rect: Rect,
    /// What it says.
    pub text: String,
    /// What it labels.
    pub kind: LabelKind,
}

/// Title of the frequency axis.
pub(crate) const FREQ_TITLE: &str = "frequency (Hz)";
/// Title of the time axis.
pub(crate) const TIME_TITLE: &str = "time (s)";
/// Title of the colour bar.
pub(crate) const BAR_TITLE: &str = "level (dBFS)";
/// Title of the spectrum strip's level axis.
pub(crate) const STRIP_TITLE: &str = "spectrum (dBFS)";

/// A frequency tick label: whole Hz below 1 kHz, else kHz with a `k` ("500", "1.5k", "20k");
/// the axis title says Hz.
pub(crate) fn freq_label(hz: f64) -> String {
    if hz >= 1000.0 {
        let k = hz / 1000.0;
        if (k - k.round()).abs() < 1e-6 {
            format!("{k:.0}k")
        } else {
            let s = format!("{k:.2}");
            format!("{}k", s.trim_end_matches('0').trim_end_matches('.'))
        }
    } else {
        format!("{hz:.0}")
    }
}

/// The frequency ticks of `axis` on the image `frame.plot` (about one per 50 points of height).
pub(crate) fn freq_ticks(frame: &Frame, axis: &FreqAxis) -> Vec<Tick> {
    let plot = frame.plot;
    axis.ticks((plot.height() / 50.0).max(2.0) as f64)
        .into_iter()
        .map(|f| Tick {
            at: plot.bottom() - axis.t_of(f) as f32 * plot.height(),
            text: freq_label(f),
        })
        .collect()
}

/// The time axis' step for `span_s` seconds across `width` points (about one tick per 90
/// points), and the decimals its labels need.
pub(crate) fn time_step(span_s: f64, width: f32) -> (f64, usize) {
    let step = nice_step(span_s, (width / 90.0).max(2.0) as f64);
    let decimals = if step >= 1.0 {
        0
    } else {
        (-step.log10().floor()).max(0.0) as usize
    };
    (step, decimals)
}

/// Time ticks of an image whose left edge is at `t_left` and right edge at `t_right` seconds
/// (no jumps in time between them): every multiple of [`time_step`] in between.
pub fn time_ticks_linear(frame: &Frame, t_left: f64, t_right: f64) -> Vec<Tick> {
    let plot = frame.plot;
    let span = t_right - t_left;
    if !(span > 0.0 && span.is_finite()) {
        return Vec::new();
    }
    let (step, decimals) = time_step(span, plot.width());
    let mut out = Vec::new();
    let mut k = (t_left / step).ceil();
    while k * step <= t_right && out.len() < 1000 {
        let t = k * step;
        out.push(Tick {
            at: plot.left() + ((t - t_left) / span) as f32 * plot.width(),
            text: format!("{t:.decimals$}"),
        });
        k += 1.0;
    }
    out
}

/// The level ticks at round dB values (a step of 1, 2, 5 × 10ⁿ dB, about one per 40 points)
/// between `floor` and `ceil` dBFS: along the colour bar (y, floor at its bottom) and across the
/// spectrum strip (x, floor at its left), for the parts `frame` shows.
pub(crate) fn level_ticks(frame: &Frame, floor: f32, ceil: f32) -> (Vec<Tick>, Vec<Tick>) {
    let span = f64::from(ceil - floor);
    if !(span > 0.0 && span.is_finite()) {
        return (Vec::new(), Vec::new());
    }
    let values = |len: f32| {
        let step = nice_step(span, (len / 40.0).max(2.0) as f64);
        let mut v = Vec::new();
        let mut k = (f64::from(floor) / step).ceil();
        while k * step <= f64::from(ceil) + 1e-9 && v.len() < 1000 {
            v.push(k * step);
            k += 1.0;
        }
        (v, step)
    };
    let text = |db: f64, step: f64| {
        let decimals = if step >= 1.0 {
            0
        } else {
            (-step.log10().floor()).max(0.0) as usize
        };
        // "-0" reads oddly: 0 is "0".
        let db = if db.abs() < step * 1e-6 { 0.0 } else { db };
        format!("{db:.decimals$}")
    };
    let frac = |db: f64| ((db - f64::from(floor)) / span) as f32;
    let bar = frame
        .bar
        .map(|b| {
            let (v, step) = values(b.height());
            v.into_iter()
                .map(|db| Tick {
                    at: b.bottom() - frac(db) * b.height(),
                    text: text(db, step),
                })
                .collect()
        })
        .unwrap_or_default();
    let strip = frame
        .strip
        .map(|s| {
            let (v, step) = values(s.width());
            v.into_iter()
                .map(|db| Tick {
                    at: s.left() + frac(db) * s.width(),
                    text: text(db, step),
                })
                .collect()
        })
        .unwrap_or_default();
    (bar, strip)
}

/// Places the tick labels and axis titles of `frame` (in its margins; none when it has none),
/// each label `measure(text)` large (width, height in points, unrotated). Along each axis the
/// labels are centred on their ticks where that fits, moved inside their axis' room at its ends,
/// and dropped rather than overlap the one before ([`place_labels`]); a label that would still
/// leave the panel or overlap one placed earlier is dropped too. Order: the axis titles, then the
/// frequency, time, colour-bar and strip labels.
pub fn place(frame: &Frame, ticks: &Ticks, measure: &dyn Fn(&str) -> Vec2) -> Vec<Label> {
    let mut out: Vec<Label> = Vec::new();
    if !frame.axes {
        return out;
    }
    let panel = Rect::from_min_size(Pos2::ZERO, frame.size);
    let plot = frame.plot;
    let push = |out: &mut Vec<Label>, rect: Rect, text: &str, kind: LabelKind| {
        let inside = panel.contains_rect(rect)
            && rect.is_finite()
            && frame.clear.is_none_or(|c| !c.intersects(rect));
        let apart = out.iter().all(|l| !l.rect.intersects(rect));
        if inside && apart {
            out.push(Label {
                rect,
                text: text.to_string(),
                kind,
            });
        }
    };
    let vertical = LabelKind::Title { vertical: true };
    let horizontal = LabelKind::Title { vertical: false };
    // Right of the time labels' room: the strip's labels, or the panel's edge.
    let time_end = frame.strip.map_or(frame.size.x, |s| s.left() - 8.0);
    let row1 = plot.bottom() + TICK + 1.0;
    let row2 = row1 + ROW;

    // Titles: frequency at the far left (rotated), time centred under the image, the bar's at
    // the far right (rotated), the strip's centred under it.
    let m = measure(FREQ_TITLE);
    let rect = Rect::from_center_size(pos2(1.0 + m.y / 2.0, plot.center().y), vec2(m.y, m.x));
    push(&mut out, rect, FREQ_TITLE, vertical);
    let m = measure(TIME_TITLE);
    let x = (plot.center().x - m.x / 2.0).clamp(0.0, (time_end - m.x).max(0.0));
    push(
        &mut out,
        Rect::from_min_size(pos2(x, row2), m),
        TIME_TITLE,
        horizontal,
    );
    if let Some(bar) = frame.bar {
        let m = measure(BAR_TITLE);
        let rect = Rect::from_center_size(
            pos2(frame.size.x - 1.0 - m.y / 2.0, bar.center().y),
            vec2(m.y, m.x),
        );
        push(&mut out, rect, BAR_TITLE, vertical);
    }
    if let Some(strip) = frame.strip {
        let m = measure(STRIP_TITLE);
        let x = (strip.center().x - m.x / 2.0).clamp(strip.left(), frame.size.x - m.x);
        push(
            &mut out,
            Rect::from_min_size(pos2(x, row2), m),
            STRIP_TITLE,
            horizontal,
        );
    }

    // Labels along a vertical axis, right-aligned at `right` or left-aligned at `left`, within
    // `[0, bottom]`; along a horizontal one, in row 1 within `[from, to]`.
    let vertical_axis =
        |out: &mut Vec<Label>, ticks: &[Tick], room: (f32, f32), kind: LabelKind| {
            let right_align = kind == LabelKind::Freq;
            let sizes: Vec<Vec2> = ticks.iter().map(|t| measure(&t.text)).collect();
            let want: Vec<f32> = ticks
                .iter()
                .zip(&sizes)
                .map(|(t, m)| {
                    if m.x <= room.1 - room.0 {
                        t.at - m.y / 2.0
                    } else {
                        f32::NAN
                    }
                })
                .collect();
            let heights: Vec<f32> = sizes.iter().map(|m| m.y).collect();
            let placed = place_labels(&want, &heights, plot.bottom(), 1.0);
            for ((t, m), y) in ticks.iter().zip(&sizes).zip(placed) {
                if let Some(y) = y {
                    let x = if right_align { room.1 - m.x } else { room.0 };
                    push(out, Rect::from_min_size(pos2(x, y), *m), &t.text, kind);
                }
            }
        };
    vertical_axis(
        &mut out,
        &ticks.freq,
        (TITLE_W + 1.0, plot.left() - TICK - 2.0),
        LabelKind::Freq,
    );
    if let Some(bar) = frame.bar {
        vertical_axis(
            &mut out,
            &ticks.bar,
            (bar.right() + TICK + 2.0, frame.size.x - TITLE_W - 2.0),
            LabelKind::Bar,
        );
    }
    let horizontal_axis =
        |out: &mut Vec<Label>, ticks: &[Tick], from: f32, to: f32, kind: LabelKind| {
            let sizes: Vec<Vec2> = ticks.iter().map(|t| measure(&t.text)).collect();
            let want: Vec<f32> = ticks
                .iter()
                .zip(&sizes)
                .map(|(t, m)| t.at - from - m.x / 2.0)
                .collect();
            let widths: Vec<f32> = sizes.iter().map(|m| m.x).collect();
            let placed = place_labels(&want, &widths, (to - from).max(0.0), LABEL_GAP);
            for ((t, m), x) in ticks.iter().zip(&sizes).zip(placed) {
                if let Some(x) = x {
                    push(
                        out,
                        Rect::from_min_size(pos2(from + x, row1), *m),
                        &t.text,
                        kind,
                    );
                }
            }
        };
    horizontal_axis(&mut out, &ticks.time, 0.0, time_end, LabelKind::Time);
    if let Some(strip) = frame.strip {
        horizontal_axis(
            &mut out,
            &ticks.strip,
            strip.left(),
            frame.size.x,
            LabelKind::Strip,
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spectrogram::axis::FreqScale;

    fn egui_ctx() -> egui::Context {
        let ctx = egui::Context::default();
        // The frame's font texture is not uploaded anywhere: its delta is dropped on purpose.
        let mut out = ctx.run_ui(egui::RawInput::default(), |_| {});
        out.textures_delta.clear();
        ctx
    }

    /// The size of `text` in the overlay's label font, as the overlay lays it out.
    fn measure(ctx: &egui::Context) -> impl Fn(&str) -> Vec2 + '_ {
        move |text: &str| {
            ctx.fonts_mut(|f| {
                f.layout_no_wrap(
                    text.to_string(),
                    super::super::overlay::label_font(),
                    egui::Color32::WHITE,
                )
                .size()
            })
        }
    }

    #[test]
    fn frame_parts_are_inside_the_panel_and_apart() {
        for (w, h) in [
            (130.0, 236.0),
            (320.0, 200.0),
            (640.0, 360.0),
            (1010.0, 676.0),
            (2000.0, 1200.0),
        ] {
            for spectrum in [false, true] {
                let f = Frame::new(vec2(w, h), spectrum);
                let panel = Rect::from_min_size(Pos2::ZERO, vec2(w, h));
                let parts: Vec<Rect> = [Some(f.plot), f.strip, f.bar]
                    .into_iter()
                    .flatten()
                    .collect();
                for (i, a) in parts.iter().enumerate() {
                    assert!(panel.contains_rect(*a), "{w}×{h}: {a:?}");
                    assert!(a.width() > 0.0 && a.height() > 0.0, "{w}×{h}: {a:?}");
                    for b in &parts[i + 1..] {
                        assert!(!a.intersects(*b), "{w}×{h}: {a:?} and {b:?}");
                    }
                }
                // The strip shares the image's rows.
                if let Some(s) = f.strip {
                    assert_eq!((s.top(), s.bottom()), (f.plot.top(), f.plot.bottom()));
                }
            }
        }
        // A wide panel has all three; a small one only the image, filling it.
        let f = Frame::new(vec2(1010.0, 676.0), true);
        assert!(f.axes && f.strip.is_some() && f.bar.is_some());
        assert!(f.plot.width() >= 480.0);
        let f = Frame::new(vec2(130.0, 236.0), true);
        assert!(!f.axes && f.strip.is_none() && f.bar.is_none());
        assert_eq!(f.plot, Rect::from_min_size(Pos2::ZERO, vec2(130.0, 236.0)));
        // Pixels: edges rounded at 1.5 pixels per point.
        assert_eq!(
            Frame::px(Rect::from_min_max(pos2(10.0, 3.3), pos2(20.1, 7.0)), 1.5),
            [15, 5, 30, 11]
        );
    }

    #[test]
    fn freq_labels_read_in_hz_with_k() {
        assert_eq!(freq_label(0.0), "0");
        assert_eq!(freq_label(500.0), "500");
        assert_eq!(freq_label(1000.0), "1k");
        assert_eq!(freq_label(1500.0), "1.5k");
        assert_eq!(freq_label(22_050.0), "22.05k");
        assert_eq!(freq_label(20_000.0), "20k");
    }

    #[test]
    fn time_and_level_ticks_fall_on_round_values() {
        let f = Frame::new(vec2(1010.0, 676.0), true);
        // 340 … 352 s: a step of 2 s (12 s over ≈ 560 points, about 6 ticks): 340, 342, … 352.
        let t = time_ticks_linear(&f, 340.0, 352.0);
        let texts: Vec<&str> = t.iter().map(|t| t.text.as_str()).collect();
        assert_eq!(texts, ["340", "342", "344", "346", "348", "350", "352"]);
        assert_eq!(t[0].at, f.plot.left());
        assert!((t[6].at - f.plot.right()).abs() < 1e-3);
        // 0.01 … 0.2 s: steps of 0.02 or 0.05 s, two decimals.
        let t = time_ticks_linear(&f, 0.01, 0.2);
        assert!(t.iter().all(|t| t.text.len() == 4), "{t:?}");
        // −120 … 0 dBFS on a ≈ 600 point bar: steps of 10 dB (13 ticks); "0", not "-0".
        let (bar, strip) = level_ticks(&f, -120.0, 0.0);
        let b = f.bar.unwrap();
        assert_eq!(bar.first().unwrap().text, "-120");
        assert_eq!(bar.first().unwrap().at, b.bottom());
        assert_eq!(bar.last().unwrap().text, "0");
        assert_eq!(bar.last().unwrap().at, b.top());
        assert_eq!(bar.len(), 13);
        // The strip (≈ 155 points): a 50 dB step, −100, −50, 0.
        let s: Vec<&str> = strip.iter().map(|t| t.text.as_str()).collect();
        assert_eq!(s, ["-100", "-50", "0"]);
    }

    /// The issue's cases and many more: for every panel size, frequency scale and sample rate,
    /// time range (from the first second to hours in, sub-second views, the jump the issue saw)
    /// and dB range, with and without the strip, no two label rectangles overlap, none leaves
    /// the panel, and each axis keeps at least two labels where the panel is large enough.
    #[test]
    fn the_colour_bar_and_its_labels_keep_clear_of_the_stats_overlay() {
        let ctx = egui_ctx();
        let measure = measure(&ctx);
        // 1010 × 695: the scene of a 1280 × 720 window beside the side panel.
        for (w, h) in [
            (1010.0, 695.0),
            (640.0, 360.0),
            (1600.0, 900.0),
            (500.0, 300.0),
        ] {
            for spectrum in [false, true] {
                let panel = Rect::from_min_size(Pos2::ZERO, vec2(w, h));
                let stats = crate::overlay::overlay_area(panel);
                let plain = Frame::new(vec2(w, h), spectrum);
                let f = Frame::for_pixels_with((w as u32, h as u32), 1.0, spectrum, true);
                let case = format!("{w}×{h} spectrum {spectrum}");
                // The image and the strip keep their places; only the bar moves down.
                assert_eq!((f.plot, f.strip), (plain.plot, plain.strip), "{case}");
                if let Some(bar) = f.bar {
                    assert!(
                        !bar.intersects(stats),
                        "{case}: bar {bar:?} under {stats:?}"
                    );
                    assert!(bar.height() >= MIN_BAR_H, "{case}: {bar:?}");
                    assert_eq!(
                        bar.bottom(),
                        plain.bar.map_or(0.0, |b| b.bottom()),
                        "{case}"
                    );
                }
                let (bar, strip) = level_ticks(&f, -120.0, 0.0);
                let ticks = Ticks {
                    freq: freq_ticks(&f, &FreqAxis::new(FreqScale::Linear, 48_000, 2048)),
                    time: time_ticks_linear(&f, 0.0, 70.0),
                    bar,
                    strip,
                };
                let labels = place(&f, &ticks, &measure);
                for l in &labels {
                    assert!(!l.rect.intersects(stats), "{case}: {l:?} under {stats:?}");
                }
                // The bar keeps its ticks and title where it is shown.
                if f.bar.is_some() {
                    assert!(
                        labels.iter().any(|l| l.text == BAR_TITLE)
                            && labels.iter().filter(|l| l.kind == LabelKind::Bar).count() >= 3,
                        "{case}: {labels:?}"
                    );
                }
            }
        }
        // Without the overlay's corner kept clear (as before), the bar ran up under it.
        let panel = Rect::from_min_size(Pos2::ZERO, vec2(1010.0, 695.0));
        let plain = Frame::new(panel.size(), true);
        assert!(
            plain
                .bar
                .is_some_and(|b| b.intersects(crate::overlay::overlay_area(panel)))
        );
        let f = Frame::for_pixels_with((1010, 695), 1.0, true, true);
        assert!(
            f.bar.is_some(),
            "a 1010 × 695 panel still has its colour bar"
        );
    }

    #[test]
    fn labels_never_overlap_or_leave_the_panel() {
        let ctx = egui_ctx();
        let measure = measure(&ctx);
        let sizes = [
            (130.0, 236.0),
            (250.0, 160.0),
            (320.0, 200.0),
            (400.0, 300.0),
            (640.0, 360.0),
            (1010.0, 676.0),
            (1600.0, 900.0),
            (3000.0, 250.0),
        ];
        let times = [
            (0.0, 10.6),
            (-0.3, 10.0),
            (338.2, 352.1),
            (0.01, 0.2),
            (12.0, 12.5),
            (100_000.0, 100_070.0),
            (3590.0, 3660.0),
        ];
        let levels = [
            (-120.0, 0.0),
            (-160.0, 20.0),
            (-60.0, -59.0),
            (-100.0, -40.0),
        ];
        let mut cases = 0;
        for (w, h) in sizes {
            for spectrum in [false, true] {
                let frame = Frame::new(vec2(w, h), spectrum);
                let panel = Rect::from_min_size(Pos2::ZERO, vec2(w, h));
                for scale in [FreqScale::Linear, FreqScale::Log, FreqScale::Mel] {
                    for sr in [8_000, 44_100, 48_000, 192_000] {
                        let axis = FreqAxis::new(scale, sr, 2048);
                        for (t0, t1) in times {
                            for (lo, hi) in levels {
                                let (bar, strip) = level_ticks(&frame, lo, hi);
                                let ticks = Ticks {
                                    freq: freq_ticks(&frame, &axis),
                                    time: time_ticks_linear(&frame, t0, t1),
                                    bar,
                                    strip,
                                };
                                let labels = place(&frame, &ticks, &measure);
                                let case = format!(
                                    "{w}×{h} spectrum {spectrum} {scale:?} {sr} Hz \
                                     {t0}…{t1} s {lo}…{hi} dB"
                                );
                                for (i, a) in labels.iter().enumerate() {
                                    assert!(panel.contains_rect(a.rect), "{case}: {a:?} leaves");
                                    for b in &labels[i + 1..] {
                                        assert!(
                                            !a.rect.intersects(b.rect),
                                            "{case}: {a:?} overlaps {b:?}"
                                        );
                                    }
                                    // No label over the image, the strip or the bar.
                                    for part in [Some(frame.plot), frame.strip, frame.bar]
                                        .into_iter()
                                        .flatten()
                                    {
                                        assert!(
                                            !a.rect.intersects(part) || !frame.axes,
                                            "{case}: {a:?} over {part:?}"
                                        );
                                    }
                                }
                                let count = |kind| labels.iter().filter(|l| l.kind == kind).count();
                                if frame.axes {
                                    assert!(count(LabelKind::Freq) >= 2, "{case}: {labels:?}");
                                    assert!(count(LabelKind::Time) >= 2, "{case}: {labels:?}");
                                    for title in [FREQ_TITLE, TIME_TITLE] {
                                        assert!(
                                            labels.iter().any(|l| l.text == title),
                                            "{case}: no {title}"
                                        );
                                    }
                                }
                                if frame.bar.is_some() {
                                    assert!(count(LabelKind::Bar) >= 2, "{case}: {labels:?}");
                                }
                                if frame.strip.is_some() {
                                    assert!(count(LabelKind::Strip) >= 2, "{case}: {labels:?}");
                                }
                                cases += 1;
                            }
                        }
                    }
                }
            }
        }
        assert_eq!(cases, 8 * 2 * 3 * 4 * 7 * 4);
    }

    /// The issue's corner collisions: the lowest frequency label ("0") and the first time label
    /// sit on the image's bottom-left corner; both are kept, apart, and the first time label is
    /// whole (it was cut to "0 s" from "10 s").
    #[test]
    fn corner_labels_are_both_kept_and_whole() {
        let ctx = egui_ctx();
        let measure = measure(&ctx);
        let frame = Frame::new(vec2(1010.0, 676.0), true);
        let axis = FreqAxis::new(FreqScale::Linear, 48_000, 2048);
        // The left edge exactly on a tick: its label is centred on the image's left edge.
        let time = time_ticks_linear(&frame, 10.0, 80.0);
        assert_eq!(time[0].text, "10");
        let ticks = Ticks {
            freq: freq_ticks(&frame, &axis),
            time,
            ..Ticks::default()
        };
        let labels = place(&frame, &ticks, &measure);
        let find = |kind, text: &str| labels.iter().find(|l| l.kind == kind && l.text == text);
        let zero = find(LabelKind::Freq, "0").expect("0 Hz kept");
        let ten = find(LabelKind::Time, "10").expect("10 s kept");
        assert!(!zero.rect.intersects(ten.rect));
        assert!(
            zero.rect.bottom() <= frame.plot.bottom() && zero.rect.right() <= frame.plot.left()
        );
        assert!(ten.rect.top() >= frame.plot.bottom());
        // Centred on its tick: nothing cut.
        assert!(
            (ten.rect.center().x - frame.plot.left()).abs() < 0.5,
            "{ten:?}"
        );
    }
}
