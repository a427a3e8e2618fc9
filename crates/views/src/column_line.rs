//! Polylines for the UI's plots (the spectrum view, the frame-time graph) drawn as one filled
//! span per pixel column: where the line crosses a column, from its lowest to its highest point
//! there, widened by the stroke. Two triangles a column whatever the number of points, where
//! egui's feathered stroke makes four a segment (two lines of one point per pixel cost
//! ≈ 7,500 triangles; on a software rasterizer triangle setup is most of the egui pass). The
//! picture is the line a rasterizer draws without anti-aliasing.

/// The pixel-column spans of the polyline through `points` (in pixels, x ascending; a point
/// with a smaller x than the one before it starts a new run at that column): for every column
/// from `first` on, `(min y, max y)` where the line crosses it (by linear interpolation along
/// each segment), `(NaN, NaN)` where it does not. Non-finite points are skipped (the line breaks
/// there). Returns `(first, spans)`; `spans` is empty when no point is finite.
pub(crate) fn column_spans(points_px: &[egui::Pos2]) -> (f32, Vec<(f32, f32)>) {
    let (lo, hi) = points_px
        .iter()
        .filter(|p| p.x.is_finite() && p.y.is_finite())
        .fold((f32::MAX, f32::MIN), |(lo, hi), p| {
            (lo.min(p.x), hi.max(p.x))
        });
    if lo > hi {
        return (0.0, Vec::new());
    }
    let first = lo.floor();
    let columns = (hi.floor() - first) as usize + 1;
    let mut spans = vec![(f32::NAN, f32::NAN); columns];
    let mut cover = |x: f32, y0: f32, y1: f32| {
        let c = ((x.floor() - first) as usize).min(columns - 1);
        let s = &mut spans[c];
        let (a, b) = (y0.min(y1), y0.max(y1));
        *s = if s.0.is_nan() {
            (a, b)
        } else {
            (s.0.min(a), s.1.max(b))
        };
    };
    let mut prev: Option<(f32, f32)> = None;
    for p in points_px {
        if !(p.x.is_finite() && p.y.is_finite()) {
            prev = None;
            continue;
        }
        let (x1, y1) = (p.x, p.y);
        match prev {
            Some((x0, y0)) if x1 == x0 => cover(x1, y0, y1),
            Some((x0, y0)) if x1 > x0 => {
                // The segment crosses columns floor(x0) ..= floor(x1); in each it spans the y
                // of its entry and exit.
                let slope = (y1 - y0) / (x1 - x0);
                let mut xa = x0;
                while xa < x1 {
                    let xb = (xa.floor() + 1.0).min(x1);
                    let ya = y0 + slope * (xa - x0);
                    let yb = y0 + slope * (xb - x0);
                    cover(xa, ya, yb);
                    xa = xb;
                }
            }
            _ => cover(x1, y1, y1),
        }
        prev = Some((x1, y1));
    }
    (first, spans)
}

/// A mesh of the polyline through `points` (in points, x ascending; see [`column_spans`]) for an
/// output of `pixels_per_point`: for every pixel column the line crosses, one rectangle from its
/// lowest to its highest y there, widened by `width_px` / 2 pixels above and below. Empty when
/// no point is finite.
pub fn column_line(
    points: &[egui::Pos2],
    pixels_per_point: f32,
    width_px: f32,
    color: egui::Color32,
) -> egui::Mesh {
    let ppp = if pixels_per_point > 0.0 {
        pixels_per_point
    } else {
        1.0
    };
    let px: Vec<egui::Pos2> = points
        .iter()
        .map(|p| egui::pos2(p.x * ppp, p.y * ppp))
        .collect();
    let (first, spans) = column_spans(&px);
    let mut mesh = egui::Mesh::default();
    let half = width_px.max(0.0) * 0.5;
    for (i, &(a, b)) in spans.iter().enumerate() {
        if a.is_nan() {
            continue;
        }
        let x = first + i as f32;
        let rect = egui::Rect::from_min_max(
            egui::pos2(x / ppp, (a - half) / ppp),
            egui::pos2((x + 1.0) / ppp, (b + half) / ppp),
        );
        mesh.add_colored_rect(rect, color);
    }
    mesh
}

#[cfg(test)]
mod tests {
    use super::column_line;
    use egui::{Color32, pos2};

    /// (x0, y0, x1, y1) of every rectangle, in pixels.
    fn rects(mesh: &egui::Mesh, ppp: f32) -> Vec<(f32, f32, f32, f32)> {
        mesh.vertices
            .chunks(4)
            .map(|v| {
                let xs = v.iter().map(|v| v.pos.x * ppp);
                let ys = v.iter().map(|v| v.pos.y * ppp);
                (
                    xs.clone().fold(f32::MAX, f32::min),
                    ys.clone().fold(f32::MAX, f32::min),
                    xs.fold(f32::MIN, f32::max),
                    ys.fold(f32::MIN, f32::max),
                )
            })
            .collect()
    }

    #[test]
    fn a_flat_line_is_one_pixel_row() {
        let m = column_line(
            &[pos2(0.0, 10.0), pos2(4.0, 10.0)],
            1.0,
            1.0,
            Color32::WHITE,
        );
        // Pixels 0..=3: the line ends at the left edge of column 4.
        assert_eq!(m.indices.len(), 4 * 6);
        for (i, r) in rects(&m, 1.0).into_iter().enumerate() {
            assert_eq!(r, (i as f32, 9.5, i as f32 + 1.0, 10.5));
        }
    }

    #[test]
    fn a_slope_spans_its_entry_and_exit_in_each_column() {
        // y = 2x from x = 0 to 3: column c spans 2c .. 2c + 2.
        let m = column_line(&[pos2(0.0, 0.0), pos2(3.0, 6.0)], 1.0, 0.0, Color32::WHITE);
        let r = rects(&m, 1.0);
        assert_eq!(r[0], (0.0, 0.0, 1.0, 2.0));
        assert_eq!(r[1], (1.0, 2.0, 2.0, 4.0));
        assert_eq!(r[2], (2.0, 4.0, 3.0, 6.0));
        assert_eq!(r.len(), 3);
        // A vertical step stays in its column.
        let m = column_line(&[pos2(1.5, 0.0), pos2(1.5, 7.0)], 1.0, 0.0, Color32::WHITE);
        assert_eq!(rects(&m, 1.0), vec![(1.0, 0.0, 2.0, 7.0)]);
    }

    #[test]
    fn many_points_in_one_column_give_their_min_and_max() {
        let pts = [
            pos2(5.1, 3.0),
            pos2(5.4, 9.0),
            pos2(5.6, -2.0),
            pos2(5.9, 4.0),
        ];
        let m = column_line(&pts, 1.0, 0.0, Color32::WHITE);
        assert_eq!(rects(&m, 1.0), vec![(5.0, -2.0, 6.0, 9.0)]);
    }

    #[test]
    fn pixels_per_point_scales_columns_and_gaps_break_the_line() {
        // At 2 px/pt the first run covers pixel columns 0 and 1 at y = 2 px; the NaN splits
        // the line, so the jump to (4, 10) px is not drawn, only that point's own column.
        let pts = [
            pos2(0.0, 1.0),
            pos2(1.0, 1.0),
            pos2(f32::NAN, 0.0),
            pos2(2.0, 5.0),
        ];
        let m = column_line(&pts, 2.0, 0.0, Color32::WHITE);
        let r = rects(&m, 2.0);
        assert_eq!(r.len(), 3, "{r:?}");
        assert!(r[..2].iter().all(|r| r.1 == 2.0 && r.3 == 2.0), "{r:?}");
        assert_eq!(r[2], (4.0, 10.0, 5.0, 10.0));
        assert!(column_line(&[], 1.0, 1.0, Color32::WHITE).is_empty());
    }
}
