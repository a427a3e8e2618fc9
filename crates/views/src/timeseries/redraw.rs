//! When the chart must be drawn again: a chart whose view does not move by itself (a live
//! network source, a file still being read, a paused synthetic stream) is drawn only when the
//! samples that arrived change what it shows ([`arrivals_redraw`]): some fall inside the visible
//! time range, or the view follows the newest data and they move it. The window looks for
//! arrivals once per display interval ([`crate::Scene::poll_input`]), so such a chart
//! draws at most at the display's rate and no faster than its data arrives.

use crate::series::store::Series;

/// Whether samples that arrived over chart-relative times `arrived = (earliest, latest)` change
/// the chart, whose last frame showed `view = (t0, t1)` (`None`: nothing drawn yet, so any
/// arrival is drawn): samples inside `[t0, t1]` always; while following (`follow`) also any
/// sample after `t0` (a later one moves the view to it); none before `t0` (off to the left, as
/// when following), and none after `t1` of a paused view. `arrived = None`: nothing arrived.
pub(crate) fn arrivals_redraw(
    view: Option<(f64, f64)>,
    follow: bool,
    arrived: Option<(f64, f64)>,
) -> bool {
    let Some((a, b)) = arrived else {
        return false;
    };
    let Some((t0, t1)) = view else {
        return true;
    };
    b >= t0 && (follow || a <= t1)
}

/// The chart-relative time range (`offset` + the series' relative times) of the samples of `s`
/// from global index `from` on (see [`Series::end_index`]); `None` when there are none. Ordered
/// series look at the first and last only; others are scanned.
pub(crate) fn arrived_range(s: &Series, from: u64, offset: f64) -> Option<(f64, f64)> {
    let from = from.max(s.first_index());
    let end = s.end_index();
    if from >= end {
        return None;
    }
    if s.is_ordered() {
        let (a, _) = s.get_index(from)?;
        let (b, _) = s.get_index(end - 1)?;
        return Some((a + offset, b + offset));
    }
    let mut lo = f64::INFINITY;
    let mut hi = f64::NEG_INFINITY;
    for (times, _) in s.samples_from(from) {
        for &t in times {
            lo = lo.min(t);
            hi = hi.max(t);
        }
    }
    (lo <= hi).then_some((lo + offset, hi + offset))
}

/// The union of two optional ranges.
pub fn union(a: Option<(f64, f64)>, b: Option<(f64, f64)>) -> Option<(f64, f64)> {
    match (a, b) {
        (Some((a0, a1)), Some((b0, b1))) => Some((a0.min(b0), a1.max(b1))),
        (x, y) => x.or(y),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrivals_inside_a_paused_view_redraw_and_outside_do_not() {
        let view = Some((10.0, 20.0));
        // Inside, overlapping either edge, covering it: drawn.
        assert!(arrivals_redraw(view, false, Some((12.0, 13.0))));
        assert!(arrivals_redraw(view, false, Some((5.0, 10.0))));
        assert!(arrivals_redraw(view, false, Some((20.0, 25.0))));
        assert!(arrivals_redraw(view, false, Some((0.0, 100.0))));
        // Wholly before or after: not drawn.
        assert!(!arrivals_redraw(view, false, Some((0.0, 9.999))));
        assert!(!arrivals_redraw(view, false, Some((20.001, 30.0))));
        // Nothing arrived.
        assert!(!arrivals_redraw(view, false, None));
    }

    #[test]
    fn a_following_view_redraws_for_newer_samples_only() {
        let view = Some((90.0, 100.0));
        // Newer than the view: it moves to them.
        assert!(arrivals_redraw(view, true, Some((100.5, 101.0))));
        assert!(arrivals_redraw(view, true, Some((95.0, 95.0))));
        // Late samples left of the view: nothing shown changes.
        assert!(!arrivals_redraw(view, true, Some((10.0, 89.0))));
        assert!(!arrivals_redraw(view, true, None));
    }

    #[test]
    fn the_first_arrival_is_drawn() {
        assert!(arrivals_redraw(None, true, Some((0.0, 0.0))));
        assert!(arrivals_redraw(None, false, Some((-5.0, -4.0))));
        assert!(!arrivals_redraw(None, true, None));
    }

    #[test]
    fn the_range_of_new_samples_is_theirs_alone() {
        let mut s = Series::new("x", 1 << 16);
        for k in 0..10 {
            s.push(f64::from(k), k as f32);
        }
        let from = s.end_index();
        s.push(12.0, 1.0);
        s.push(15.0, 2.0);
        // Relative to the first sample (origin 0): [12, 15], plus the offset.
        assert_eq!(arrived_range(&s, from, 100.0), Some((112.0, 115.0)));
        assert_eq!(arrived_range(&s, s.end_index(), 0.0), None);
        // Out of order: the scan finds the earliest.
        let from = s.end_index();
        s.push(3.5, 0.0);
        s.push(20.0, 0.0);
        assert!(!s.is_ordered());
        assert_eq!(arrived_range(&s, from, 0.0), Some((3.5, 20.0)));
        assert_eq!(union(Some((1.0, 2.0)), Some((0.0, 1.5))), Some((0.0, 2.0)));
        assert_eq!(union(None, Some((3.0, 4.0))), Some((3.0, 4.0)));
    }
}
