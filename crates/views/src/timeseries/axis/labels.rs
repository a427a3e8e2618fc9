//! Placement and text of the chart's labels: the axis label font and layout, labels kept
//! inside the axis and apart, the value axis' title from the units of the series' names, the
//! legend's lines, and where a readout box goes.

/// Least space between two labels of the time axis, pixels.
pub const LABEL_GAP_PX: f32 = 8.0;

/// The font of the chart's axis labels.
pub fn label_font() -> egui::FontId {
    egui::FontId::proportional(12.0)
}

/// Axis label `text` laid out in [`label_font`] (one line): what the overlay paints, and its
/// size is what [`place_labels`] is given.
pub fn label_galley(ctx: &egui::Context, text: &str) -> std::sync::Arc<egui::Galley> {
    ctx.fonts_mut(|f| f.layout_no_wrap(text.to_string(), label_font(), egui::Color32::PLACEHOLDER))
}

/// Where the labels of one axis go, as offsets from the axis' start: label `i` wants to start at
/// `want[i]` and is `size[i]` long. Taken in order of `want`, each is moved inside
/// `[0, length]` (a label that does not fit at all is dropped), and one that would start less
/// than `gap` after the end of the label kept before it is dropped (`None`) rather than overlap.
pub fn place_labels(want: &[f32], size: &[f32], length: f32, gap: f32) -> Vec<Option<f32>> {
    let mut out = vec![None; want.len()];
    let mut order: Vec<usize> = (0..want.len().min(size.len())).collect();
    order.sort_by(|&a, &b| want[a].total_cmp(&want[b]));
    let mut end = f32::NEG_INFINITY;
    for i in order {
        let (w, s) = (want[i], size[i]);
        if !w.is_finite() || !s.is_finite() || s < 0.0 || s > length {
            continue;
        }
        let start = w.clamp(0.0, length - s);
        if start >= end + gap {
            out[i] = Some(start);
            end = start + s;
        }
    }
    out
}

/// The unit a column header states after its name, in parentheses or brackets at its end:
/// `temp (°C)` and `temp [°C]` give `°C`; `None` when there is none (or it is empty).
/// Series named by a path (`lab/a/temp (°C)`) are read the same way.
pub fn unit_of(name: &str) -> Option<&str> {
    let name = name.trim_end();
    let (open, close) = match name.chars().last()? {
        ')' => ('(', ')'),
        ']' => ('[', ']'),
        _ => return None,
    };
    let start = name.rfind(open)?;
    let unit = name[start + open.len_utf8()..name.len() - close.len_utf8()].trim();
    (start > 0 && !unit.is_empty()).then_some(unit)
}

/// The value axis' title: the units of the series shown, in the order first met, each once
/// (`°C`, `°C, hPa`); `None` when none states one.
pub fn value_title<'a>(names: impl IntoIterator<Item = &'a str>) -> Option<String> {
    let mut units: Vec<&str> = Vec::new();
    for u in names.into_iter().filter_map(unit_of) {
        if !units.contains(&u) {
            units.push(u);
        }
    }
    (!units.is_empty()).then(|| units.join(", "))
}

/// Legend lines shown at most; further series are summed up in one more line.
pub const LEGEND_MAX_LINES: usize = 12;

/// The legend's lines for the series shown (`(palette index, name)`): each series, or the first
/// [`LEGEND_MAX_LINES`] − 1 and `… and N more` (palette index `None`).
pub fn legend_lines(shown: &[(usize, &str)]) -> Vec<(Option<usize>, String)> {
    if shown.len() <= LEGEND_MAX_LINES {
        return shown
            .iter()
            .map(|&(i, n)| (Some(i), n.to_string()))
            .collect();
    }
    let keep = LEGEND_MAX_LINES - 1;
    let mut out: Vec<(Option<usize>, String)> = shown[..keep]
        .iter()
        .map(|&(i, n)| (Some(i), n.to_string()))
        .collect();
    out.push((None, format!("… and {} more", shown.len() - keep)));
    out
}

/// Where a box of `size` goes near `at` inside `rect` without covering `avoid` (the stats
/// overlay's corner, [`crate::overlay::overlay_area`]): right of and below `at` by `gap` where it fits,
/// else left of it; clamped into `rect`; moved below `avoid` when it would cover it. Returns the
/// box's top-left corner.
pub fn place_box(
    at: egui::Pos2,
    size: egui::Vec2,
    rect: egui::Rect,
    avoid: egui::Rect,
    gap: f32,
) -> egui::Pos2 {
    let mut x = at.x + gap;
    if x + size.x > rect.right() {
        x = at.x - gap - size.x;
    }
    x = x.clamp(rect.left(), (rect.right() - size.x).max(rect.left()));
    let mut y =
        at.y.clamp(rect.top(), (rect.bottom() - size.y).max(rect.top()));
    let placed = egui::Rect::from_min_size(egui::pos2(x, y), size);
    if avoid.width() > 0.0 && placed.intersects(avoid) {
        y = avoid.bottom() + gap;
    }
    egui::pos2(x, y)
}
