//! The scene's view: what is shown and how ([`View`]: the dB range, colormap and frequency axis,
//! freeze, scroll-back and time zoom), and the view's moves (freeze, scroll, zoom around the
//! pointer) with the arithmetic behind them ([`max_back`], [`zoom_view`]).

use super::Spectrogram;
use super::axis::{FreqAxis, FreqScale};

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
    /// The deck draws its stats overlay over the scene ([`crate::overlay::overlay_shown`], as the
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
    pub(super) fn freeze_if_following(&mut self) {
        if self.producing() {
            self.set_frozen(true);
        }
    }

    /// Scrolls the view `d` columns into the past (positive) or back towards now: no further
    /// back than the oldest column held at the view's left edge (or than the view already is).
    pub(super) fn scroll_by(&mut self, d: i64) {
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
    pub(super) fn zoom_time(&mut self, factor: f64, fx: f64) {
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
