//! What the point-cloud scene tells about its colours and lengths: the scale bar (a round
//! length at the view centre, [`vizdeck_pointcloud::camera::scale_bar`]), the elevation legend
//! (the colormap and the elevations at its ends, file units) and the class legend's rows (the
//! classes the file holds, with their points), plus the fall-back from an all-black RGB file to
//! elevation colours. All egui drawing: no GPU work.

use super::{CLASS_NAMES, PointCloud, class_rgba};
use crate::pointcloud::raster::ColorMode;
use vizdeck_pointcloud::camera::{length_label, scale_bar};

/// Longest scale bar, egui points.
const SCALE_BAR_MAX: f32 = 140.0;

/// Points per ASPRS class of a cloud: counted over the whole file while it was indexed
/// (`exact`), or over the nodes decoded so far.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClassCounts {
    /// Points per class (index = class).
    pub counts: Vec<u64>,
    /// Counted over every point of the file (else over the nodes decoded so far).
    pub exact: bool,
}

impl ClassCounts {
    /// Counts from (class, points) pairs of the whole file.
    pub fn of_file(pairs: &[(u8, u64)]) -> ClassCounts {
        let mut counts = vec![0; 256];
        for &(c, n) in pairs {
            counts[usize::from(c)] += n;
        }
        ClassCounts {
            counts,
            exact: true,
        }
    }

    /// (class, points) of the classes with points, by class.
    pub fn present(&self) -> Vec<(u8, u64)> {
        (0..=255u8)
            .filter_map(|c| {
                let n = self.counts.get(usize::from(c)).copied().unwrap_or(0);
                (n > 0).then_some((c, n))
            })
            .collect()
    }
}

/// The ASPRS name of class `c` (LAS 1.4 R15 table 17; 19–63 reserved, 64–255 user defined).
pub fn class_name(c: u8) -> &'static str {
    CLASS_NAMES
        .get(usize::from(c))
        .copied()
        .unwrap_or(if c < 64 { "reserved" } else { "user defined" })
}

fn color32(rgba: u32) -> egui::Color32 {
    let [r, g, b, _] = rgba.to_le_bytes();
    egui::Color32::from_rgb(r, g, b)
}

/// The class legend (side panel): one row per class the file holds (or, before the index's
/// counts are known, per class in the nodes decoded so far), with its points; a click hides
/// or shows the class.
pub(super) fn class_legend(s: &mut PointCloud, ui: &mut egui::Ui) {
    let Some(counts) = s.class_counts() else {
        ui.label("classes: waiting for the first node…");
        return;
    };
    let present = counts.present();
    ui.label(if counts.exact {
        format!(
            "{} classes in the file (click to hide or show):",
            present.len()
        )
    } else {
        format!(
            "{} classes in the nodes read so far (click to hide or show):",
            present.len()
        )
    });
    for (c, n) in present {
        let (w, b) = (usize::from(c) / 32, usize::from(c) % 32);
        let word = &mut s.style.hidden_classes[w / 4][w % 4];
        let mut shown = (*word >> b) & 1 == 0;
        ui.horizontal(|ui| {
            let (rect, _) = ui.allocate_exact_size(egui::vec2(12.0, 12.0), egui::Sense::hover());
            ui.painter().rect_filled(rect, 2.0, color32(class_rgba(c)));
            let points = if counts.exact {
                format!("{n} points")
            } else {
                format!("{n} points read")
            };
            if ui
                .checkbox(&mut shown, format!("{c} {}", class_name(c)))
                .on_hover_text(points.clone())
                .changed()
            {
                *word ^= 1 << b;
            }
            ui.weak(points);
        });
    }
}

/// Draws the scale bar at the bottom right of `rect` (egui points; the scene image is
/// `size` pixels): the longest round length that spans at most [`SCALE_BAR_MAX`] points at the
/// view centre.
pub(super) fn paint_scale_bar(s: &PointCloud, painter: &egui::Painter, rect: egui::Rect) {
    let (Some(camera), (w, h)) = (s.camera, s.size) else {
        return;
    };
    if rect.width() < 60.0 || rect.height() < 40.0 || w == 0 || h == 0 {
        return;
    }
    // Scene pixels per egui point (the image fills the rect).
    let px_per_pt = f64::from(h) / f64::from(rect.height());
    let max_px = f64::from(SCALE_BAR_MAX.min(rect.width() * 0.4)) * px_per_pt;
    let Some((length, px)) = scale_bar(camera.units_per_pixel(h), max_px) else {
        return;
    };
    let len_pt = (px / px_per_pt) as f32;
    let right = rect.right() - 12.0;
    let y = rect.bottom() - 12.0;
    let left = right - len_pt;
    let label = format!("{} {}", length_label(length), units_word(length));
    let font = egui::FontId::proportional(12.0);
    let galley = painter.layout_no_wrap(label, font, egui::Color32::WHITE);
    let bg = egui::Rect::from_min_max(
        egui::pos2(
            left.min(right - galley.size().x) - 6.0,
            y - galley.size().y - 10.0,
        ),
        egui::pos2(right + 6.0, y + 5.0),
    );
    painter.rect_filled(bg, 3.0, egui::Color32::from_black_alpha(150));
    let stroke = egui::Stroke::new(2.0, egui::Color32::WHITE);
    painter.line_segment([egui::pos2(left, y), egui::pos2(right, y)], stroke);
    for x in [left, right] {
        painter.line_segment([egui::pos2(x, y - 5.0), egui::pos2(x, y + 1.0)], stroke);
    }
    painter.galley(
        egui::pos2(right - galley.size().x, y - galley.size().y - 6.0),
        galley,
        egui::Color32::WHITE,
    );
}

/// "unit" or "units" (the file's own unit: metres or feet, as its coordinate system says).
fn units_word(length: f64) -> &'static str {
    if length == 1.0 { "unit" } else { "units" }
}

/// Draws the elevation legend at the right of `rect`, above the scale bar: the colormap as the
/// resolve applies it (lowest z of the bounds at the bottom, highest at the top) and the two
/// elevations, file units, to the file's z resolution.
pub(super) fn paint_elevation_legend(s: &PointCloud, painter: &egui::Painter, rect: egui::Rect) {
    let (Some((lo, hi)), Some(st)) = (s.bounds(), s.stream()) else {
        return;
    };
    if s.style.color != ColorMode::Elevation || rect.height() < 120.0 || rect.width() < 120.0 {
        return;
    }
    let bar_h = (rect.height() * 0.3).clamp(60.0, 180.0);
    let bar = egui::Rect::from_min_size(
        egui::pos2(rect.right() - 24.0, rect.bottom() - 48.0 - bar_h),
        egui::vec2(12.0, bar_h),
    );
    let decimals = super::ui::decimals_for(st.source.info().scale[2]).min(3);
    let font = egui::FontId::proportional(12.0);
    let top = painter.layout_no_wrap(
        format!("{:.*}", decimals, hi[2]),
        font.clone(),
        egui::Color32::WHITE,
    );
    let bottom = painter.layout_no_wrap(
        format!("{:.*}", decimals, lo[2]),
        font.clone(),
        egui::Color32::WHITE,
    );
    let title = painter.layout_no_wrap("z".to_string(), font, egui::Color32::WHITE);
    let text_w = top.size().x.max(bottom.size().x);
    let bg = egui::Rect::from_min_max(
        egui::pos2(
            bar.left() - text_w - 12.0,
            bar.top() - title.size().y - 10.0,
        ),
        egui::pos2(bar.right() + 6.0, bar.bottom() + 6.0),
    );
    painter.rect_filled(bg, 3.0, egui::Color32::from_black_alpha(150));
    // The colormap in 64 bands, top = highest.
    const BANDS: usize = 64;
    for i in 0..BANDS {
        let c = colorous::VIRIDIS.eval_rational(BANDS - 1 - i, BANDS);
        let y0 = bar.top() + bar.height() * i as f32 / BANDS as f32;
        let y1 = bar.top() + bar.height() * (i + 1) as f32 / BANDS as f32;
        painter.rect_filled(
            egui::Rect::from_x_y_ranges(bar.x_range(), y0..=y1 + 0.5),
            0.0,
            egui::Color32::from_rgb(c.r, c.g, c.b),
        );
    }
    let x = bar.left() - 6.0;
    painter.galley(
        egui::pos2(x - top.size().x, bar.top() - 2.0),
        top,
        egui::Color32::WHITE,
    );
    let bottom_y = bar.bottom() - bottom.size().y + 2.0;
    painter.galley(
        egui::pos2(x - bottom.size().x, bottom_y),
        bottom,
        egui::Color32::WHITE,
    );
    painter.galley(
        egui::pos2(
            bar.center().x - title.size().x * 0.5,
            bar.top() - title.size().y - 4.0,
        ),
        title,
        egui::Color32::WHITE,
    );
}

/// Whether a colour (RGBA8) is black: R, G and B all 0.
pub(crate) fn is_black(rgba: u32) -> bool {
    rgba & 0x00ff_ffff == 0
}

/// The notice given when every colour read is black.
pub fn black_rgb_notice(name: &str) -> String {
    format!(
        "{name}: every RGB colour read is 0 (black): coloured by elevation instead \
         (choose RGB under colour to see the file's colours)"
    )
}

impl PointCloud {
    /// The class counts to list: the file's (counted while it was indexed) or those of the
    /// nodes decoded so far; `None` before any.
    pub(super) fn class_counts(&self) -> Option<ClassCounts> {
        let st = self.stream()?;
        if let Some(c) = &st.class_totals {
            return Some(c.clone());
        }
        st.classes_seen.iter().any(|&n| n > 0).then(|| ClassCounts {
            counts: st.classes_seen.clone(),
            exact: false,
        })
    }

    /// RGB colours that are all black (a file whose colour fields hold zeros) are not shown
    /// black on black: while RGB is the mode chosen for the cloud (not by the user) and every
    /// colour decoded so far is 0, the cloud is coloured by elevation and a notice says why;
    /// a colour that is not black afterwards puts RGB back.
    pub(super) fn check_black_rgb(&mut self) {
        let Some(st) = self.stream() else {
            return;
        };
        let (read, colored) = (st.rgb_points, st.rgb_colored);
        let name = st.source.info().name.clone();
        if self.style.auto_color.is_none() || self.style.auto_color != Some(self.style.color) {
            return; // the user's choice (flag, side panel or publisher)
        }
        if self.style.color == ColorMode::Rgb && read > 0 && !colored {
            self.style.color = ColorMode::Elevation;
            self.style.auto_color = Some(ColorMode::Elevation);
            let notice = black_rgb_notice(&name);
            log::warn!("{notice}");
            self.style.color_notice = Some(notice);
        } else if self.style.color_notice.is_some() && colored {
            self.style.color = ColorMode::Rgb;
            self.style.auto_color = Some(ColorMode::Rgb);
            self.style.color_notice = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn class_names_cover_every_value() {
        assert_eq!(class_name(2), "ground");
        assert_eq!(class_name(40), "reserved");
        assert_eq!(class_name(200), "user defined");
        let c = ClassCounts::of_file(&[(6, 10), (2, 5)]);
        assert_eq!(c.present(), vec![(2, 5), (6, 10)]);
        assert!(is_black(u32::from_le_bytes([0, 0, 0, 255])));
        assert!(!is_black(u32::from_le_bytes([0, 1, 0, 255])));
    }
}
