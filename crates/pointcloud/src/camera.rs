//! The point-cloud camera: an orbit camera around a pivot, in f64 file coordinates (z up), with
//! perspective or orthographic projection. The GPU gets a matrix for camera-relative points
//! (point − eye): the large coordinates are subtracted in f64 on the CPU, never in f32.
//!
//! Conventions: yaw is the angle of the eye around the pivot in the xy plane (0 = the eye on
//! the +x side), pitch its elevation (+90° = straight above). Depth is wgpu's [0, 1].

use glam::{DMat4, DVec3, DVec4};

/// Vertical field of view of the perspective projection, radians (also sets the orthographic
/// scale: half height = distance · tan(fov / 2)).
pub(crate) const FOV_Y: f64 = 50.0 * std::f64::consts::PI / 180.0;
/// How much room [`Camera::fit`] leaves: the box's projection spans 1 / `FIT_MARGIN` of the
/// viewport's tight dimension (2 % margin).
pub(crate) const FIT_MARGIN: f64 = 1.02;
/// Pitch limit, radians: straight down (the top view) or straight up.
const PITCH_LIMIT: f64 = std::f64::consts::FRAC_PI_2;

/// A named view (`--view`, the side panel's buttons).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum ViewPreset {
    /// From above, north up, orthographic.
    Top,
    /// From the south, looking north, orthographic.
    Front,
    /// From the east, looking west, orthographic.
    Side,
    /// From the south-west, 35° above, perspective.
    Iso,
}

impl ViewPreset {
    /// Yaw, pitch (radians) and whether the preset is orthographic. Top looks straight down.
    pub fn angles(self) -> (f64, f64, bool) {
        use std::f64::consts::FRAC_PI_2;
        match self {
            ViewPreset::Top => (-FRAC_PI_2, PITCH_LIMIT, true),
            ViewPreset::Front => (-FRAC_PI_2, 0.0, true),
            ViewPreset::Side => (0.0, 0.0, true),
            ViewPreset::Iso => (
                -3.0 * std::f64::consts::FRAC_PI_4,
                35.264_f64.to_radians(),
                false,
            ),
        }
    }
}

/// The camera.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Camera {
    /// The point orbited, file coordinates.
    pub pivot: DVec3,
    /// Eye angle around the pivot, radians.
    pub yaw: f64,
    /// Eye elevation, radians, within ±90°.
    pub pitch: f64,
    /// Eye distance from the pivot, file units (> 0).
    pub distance: f64,
    /// Orthographic projection.
    pub ortho: bool,
}

/// What a frame needs from the camera for one viewport.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CameraView {
    /// Eye position, file coordinates.
    pub eye: DVec3,
    /// Camera-relative points (point − eye) → clip space.
    pub view_proj: DMat4,
    /// Near and far plane distances.
    pub near: f64,
    /// See `near`.
    pub far: f64,
    /// Orthographic.
    pub ortho: bool,
    /// Pixels per file unit at distance 1 (perspective) or everywhere (orthographic).
    pub pixels_per_unit: f64,
    /// Viewport size in pixels.
    pub size: (u32, u32),
}

impl CameraView {
    /// Pixels a length `len` spans at distance `dist` from the eye.
    pub fn pixels(&self, len: f64, dist: f64) -> f64 {
        if self.ortho {
            len * self.pixels_per_unit
        } else {
            len * self.pixels_per_unit / dist.max(1e-9)
        }
    }

    /// Whether the box (min, max) is at least partly inside the view frustum (the six planes of
    /// `view_proj`, Gribb and Hartmann 2001).
    pub fn sees_box(&self, min: [f64; 3], max: [f64; 3]) -> bool {
        let m = self.view_proj.transpose();
        let rows = [m.x_axis, m.y_axis, m.z_axis, m.w_axis];
        let planes = [
            rows[3] + rows[0],
            rows[3] - rows[0],
            rows[3] + rows[1],
            rows[3] - rows[1],
            rows[2],
            rows[3] - rows[2],
        ];
        let lo = DVec3::from(min) - self.eye;
        let hi = DVec3::from(max) - self.eye;
        planes.iter().all(|p| {
            // The box corner furthest along the plane's normal.
            let c = DVec3::new(
                if p.x >= 0.0 { hi.x } else { lo.x },
                if p.y >= 0.0 { hi.y } else { lo.y },
                if p.z >= 0.0 { hi.z } else { lo.z },
            );
            p.dot(DVec4::new(c.x, c.y, c.z, 1.0)) >= 0.0
        })
    }

    /// The ray through pixel (x, y) (pixel coordinates, top-left origin): origin and unit
    /// direction, file coordinates.
    pub fn ray(&self, x: f64, y: f64) -> (DVec3, DVec3) {
        let inv = self.view_proj.inverse();
        let nx = 2.0 * x / f64::from(self.size.0.max(1)) - 1.0;
        let ny = 1.0 - 2.0 * y / f64::from(self.size.1.max(1));
        let a = inv * DVec4::new(nx, ny, 0.0, 1.0);
        let b = inv * DVec4::new(nx, ny, 1.0, 1.0);
        let (a, b) = (a.truncate() / a.w, b.truncate() / b.w);
        (a + self.eye, (b - a).normalize_or_zero())
    }
}

impl Camera {
    /// A camera looking at the box (min, max) from `preset`, fitted to a viewport of `size`.
    pub fn fitted(min: [f64; 3], max: [f64; 3], preset: ViewPreset, size: (u32, u32)) -> Camera {
        let (yaw, pitch, ortho) = preset.angles();
        let mut c = Camera {
            pivot: DVec3::ZERO,
            yaw,
            pitch,
            distance: 1.0,
            ortho,
        };
        c.fit(min, max, size);
        c
    }

    /// Unit vector from the pivot to the eye.
    pub fn back(&self) -> DVec3 {
        DVec3::new(
            self.pitch.cos() * self.yaw.cos(),
            self.pitch.cos() * self.yaw.sin(),
            self.pitch.sin(),
        )
    }

    /// Unit vector to the right of the view (horizontal, defined at any pitch, straight down
    /// included).
    pub fn right(&self) -> DVec3 {
        DVec3::new(-self.yaw.sin(), self.yaw.cos(), 0.0)
    }

    /// Unit vector up on screen.
    pub fn up(&self) -> DVec3 {
        self.right().cross(-self.back())
    }

    /// Camera-relative rotation (the eye at the origin).
    fn rotation(&self) -> DMat4 {
        DMat4::look_to_rh(DVec3::ZERO, -self.back(), self.up())
    }

    /// Eye position.
    pub fn eye(&self) -> DVec3 {
        self.pivot + self.back() * self.distance
    }

    /// The view of a `size` viewport whose content lies within `radius` of `center` (for the
    /// near and far planes).
    pub fn view(&self, size: (u32, u32), center: DVec3, radius: f64) -> CameraView {
        let eye = self.eye();
        let aspect = f64::from(size.0.max(1)) / f64::from(size.1.max(1));
        let view = self.rotation();
        let to_center = (center - eye).length();
        let radius = radius.max(1e-6);
        let half_h = self.distance * (FOV_Y / 2.0).tan();
        let (proj, near, far, ppu) = if self.ortho {
            let near = -(to_center + 2.0 * radius);
            let far = to_center + 2.0 * radius;
            (
                DMat4::orthographic_rh(
                    -half_h * aspect,
                    half_h * aspect,
                    -half_h,
                    half_h,
                    near,
                    far,
                ),
                near,
                far,
                f64::from(size.1.max(1)) / (2.0 * half_h),
            )
        } else {
            let far = (to_center + 2.0 * radius).max(1e-3);
            let near = (to_center - 2.0 * radius)
                .max(far * 1e-5)
                .max(self.distance * 1e-3);
            (
                DMat4::perspective_rh(FOV_Y, aspect, near, far),
                near,
                far,
                f64::from(size.1.max(1)) / (2.0 * (FOV_Y / 2.0).tan()),
            )
        };
        CameraView {
            eye,
            view_proj: proj * view,
            near,
            far,
            ortho: self.ortho,
            pixels_per_unit: ppu,
            size,
        }
    }

    /// Moves the pivot to the box's centre and sets the distance so the box's eight corners
    /// fill the viewport of `size` pixels in its real aspect, with [`FIT_MARGIN`] to spare:
    /// the tight dimension (width of a narrow viewport, height of a wide one, whichever the
    /// box's projection fills first) spans 1 / [`FIT_MARGIN`] of it in an orthographic view (the
    /// corners' extent along the screen axes). Perspective: the box's bounding sphere within
    /// both half-angles of the frustum (vertical [`FOV_Y`], horizontal from the aspect), with
    /// the margin: every corner inside, the tight dimension not always filled.
    pub fn fit(&mut self, min: [f64; 3], max: [f64; 3], size: (u32, u32)) {
        let (lo, hi) = (DVec3::from(min), DVec3::from(max));
        self.pivot = (lo + hi) * 0.5;
        let aspect = f64::from(size.0.max(1)) / f64::from(size.1.max(1));
        let tan_v = (FOV_Y / 2.0).tan();
        let tan_h = tan_v * aspect;
        let distance = if self.ortho {
            let (right, up) = (self.right(), self.up());
            let corners = (0..8).map(|i| {
                DVec3::new(
                    if i & 1 == 0 { lo.x } else { hi.x },
                    if i & 2 == 0 { lo.y } else { hi.y },
                    if i & 4 == 0 { lo.z } else { hi.z },
                ) - self.pivot
            });
            // Half extents on screen (right, up), then the half height that holds both.
            let half = corners.fold((0.0f64, 0.0f64), |(x, y), c| {
                (x.max(c.dot(right).abs()), y.max(c.dot(up).abs()))
            });
            half.1.max(half.0 / aspect) * FIT_MARGIN / tan_v
        } else {
            // The box's bounding sphere within both half-angles of the frustum (vertical
            // FOV_Y, horizontal from the aspect): every corner in view from any direction, and
            // the same framing from every side as the camera orbits (a wide viewport: the
            // vertical angle binds, as it always did; a narrow one: the horizontal).
            let radius = ((hi - lo).length() * 0.5).max(1e-6);
            let half_angle = tan_v.atan().min(tan_h.atan());
            radius / half_angle.sin() * FIT_MARGIN
        };
        self.distance = if distance.is_finite() {
            distance.max(1e-6)
        } else {
            1.0
        };
    }

    /// Applies a preset's angles and projection, then fits the box.
    pub fn set_preset(
        &mut self,
        preset: ViewPreset,
        min: [f64; 3],
        max: [f64; 3],
        size: (u32, u32),
    ) {
        *self = Camera::fitted(min, max, preset, size);
    }

    /// Makes `pivot` the point orbited, the eye staying where it is (distance, yaw and pitch
    /// follow from the eye and the new pivot).
    pub fn set_pivot(&mut self, pivot: DVec3) {
        let eye = self.eye();
        self.pivot = pivot;
        self.distance = (eye - pivot).length().max(1e-6);
        let back = (eye - pivot) / self.distance;
        self.pitch = back.z.clamp(-1.0, 1.0).asin();
        self.yaw = back.y.atan2(back.x);
    }

    /// Orbits by (dx, dy) pixels of drag.
    pub fn orbit(&mut self, dx: f64, dy: f64) {
        self.yaw -= dx * 0.008;
        self.pitch = (self.pitch + dy * 0.008).clamp(-PITCH_LIMIT, PITCH_LIMIT);
    }

    /// File units one pixel spans at the pivot, in a viewport `height` pixels high.
    pub fn units_per_pixel(&self, height: u32) -> f64 {
        2.0 * self.distance * (FOV_Y / 2.0).tan() / f64::from(height.max(1))
    }

    /// Pans by (dx, dy) pixels of drag (the content follows the pointer at the pivot's depth).
    pub fn pan(&mut self, dx: f64, dy: f64, height: u32) {
        let u = self.units_per_pixel(height);
        self.pivot += (-self.right() * dx + self.up() * dy) * u;
    }

    /// Zooms by `factor` (< 1 closer) towards `toward` (the point under the pointer, at the
    /// pivot's depth): that point stays under the pointer.
    pub fn zoom_to(&mut self, factor: f64, toward: DVec3) {
        let factor = factor.clamp(1e-3, 1e3);
        self.pivot = toward + (self.pivot - toward) * factor;
        self.distance = (self.distance * factor).max(1e-6);
    }

    /// Moves eye and pivot together by (right, forward, up) file units (fly mode).
    pub fn fly(&mut self, right: f64, forward: f64, up: f64) {
        self.pivot += self.right() * right - self.back() * forward + DVec3::Z * up;
    }
}

/// The scale bar of a view: the longest round length (1, 2 or 5 × 10^k file units) that
/// spans at most `max_px` pixels where one pixel spans `units_per_pixel` file units (at the
/// view centre, [`Camera::units_per_pixel`]). Returns the length and the pixels it spans, or
/// `None` when the scale is not a positive finite number or `max_px` is not positive.
pub fn scale_bar(units_per_pixel: f64, max_px: f64) -> Option<(f64, f64)> {
    let most = units_per_pixel * max_px;
    if !(units_per_pixel.is_finite() && units_per_pixel > 0.0 && most.is_finite() && most > 0.0) {
        return None;
    }
    let decade = 10f64.powf(most.log10().floor());
    // Rounding of log10 may put `most` just below its decade: step down one.
    let decade = if decade > most { decade / 10.0 } else { decade };
    let length = [5.0, 2.0, 1.0]
        .into_iter()
        .map(|m| m * decade)
        .find(|&l| l <= most * (1.0 + 1e-12))
        .unwrap_or(decade);
    Some((length, length / units_per_pixel))
}

/// A scale bar's length as text: up to three significant digits, no trailing zeros.
pub fn length_label(length: f64) -> String {
    let digits = (-length.log10().floor()).clamp(0.0, 12.0) as usize;
    format!("{length:.digits$}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fitted_top_view_maps_the_box_to_the_viewport() {
        let (min, max) = ([6.0e5, 4.0e6, 10.0], [6.0e5 + 200.0, 4.0e6 + 100.0, 30.0]);
        let c = Camera::fitted(min, max, ViewPreset::Top, (400, 200));
        let v = c.view((400, 200), c.pivot, 120.0);
        // The box's corners land inside the viewport, the long side near its edges.
        for (x, y) in [(min[0], min[1]), (max[0], max[1])] {
            let p = DVec3::new(x, y, 20.0) - v.eye;
            let clip = v.view_proj * DVec4::new(p.x, p.y, p.z, 1.0);
            let ndc = clip.truncate() / clip.w;
            assert!(ndc.x.abs() < 1.0 && ndc.x.abs() > 0.95, "{ndc}");
            assert!(ndc.y.abs() < 1.0, "{ndc}");
            assert!((0.0..=1.0).contains(&ndc.z), "{ndc}");
        }
        // North (+y) is up on screen: a larger y has a larger ndc y.
        let ndc_y = |y: f64| {
            let p = DVec3::new(min[0], y, 20.0) - v.eye;
            let clip = v.view_proj * DVec4::new(p.x, p.y, p.z, 1.0);
            clip.y / clip.w
        };
        assert!(ndc_y(max[1]) > ndc_y(min[1]));
        assert!(v.sees_box(min, max));
        assert!(!v.sees_box([7.0e5, 4.0e6, 10.0], [7.0e5 + 1.0, 4.0e6 + 1.0, 11.0]));
    }

    /// The box's eight corners in normalized device coordinates through `c` in a `size`
    /// viewport (the view's own matrix, glam's projections).
    fn corners_ndc(c: &Camera, min: [f64; 3], max: [f64; 3], size: (u32, u32)) -> Vec<DVec3> {
        let (lo, hi) = (DVec3::from(min), DVec3::from(max));
        let v = c.view(size, (lo + hi) * 0.5, (hi - lo).length() * 0.5);
        (0..8)
            .map(|i| {
                let p = DVec3::new(
                    if i & 1 == 0 { lo.x } else { hi.x },
                    if i & 2 == 0 { lo.y } else { hi.y },
                    if i & 4 == 0 { lo.z } else { hi.z },
                ) - v.eye;
                let clip = v.view_proj * DVec4::new(p.x, p.y, p.z, 1.0);
                assert!(clip.w > 0.0, "corner behind the eye");
                clip.truncate() / clip.w
            })
            .collect()
    }

    #[test]
    fn fit_frames_every_corner_in_narrow_and_wide_viewports() {
        // An autzen_trim-like box (wider than deep, flat), a tall one, and a cube, far from
        // the origin as survey coordinates are.
        let boxes = [
            ([637_000.0, 851_000.0, 120.0], [639_000.0, 852_100.0, 170.0]),
            ([10.0, 20.0, 0.0], [30.0, 25.0, 80.0]),
            ([-1.0, -1.0, -1.0], [1.0, 1.0, 1.0]),
        ];
        let sizes = [(262, 480), (512, 512), (100, 700), (1600, 300), (960, 600)];
        let mut cameras = Vec::new();
        for preset in [
            ViewPreset::Top,
            ViewPreset::Front,
            ViewPreset::Side,
            ViewPreset::Iso,
        ] {
            let (yaw, pitch, ortho) = preset.angles();
            cameras.push((yaw, pitch, ortho));
            cameras.push((yaw, pitch, !ortho));
        }
        cameras.push((0.7, -0.4, false));
        cameras.push((2.0, 1.1, true));
        for (min, max) in boxes {
            for size in sizes {
                for &(yaw, pitch, ortho) in &cameras {
                    let mut c = Camera {
                        pivot: DVec3::ZERO,
                        yaw,
                        pitch,
                        distance: 1.0,
                        ortho,
                    };
                    c.fit(min, max, size);
                    let ndc = corners_ndc(&c, min, max, size);
                    let what = format!("box {min:?}–{max:?}, {size:?}, camera {c:?}");
                    // Inside, with the margin: at least 0.98 of the half extent on each side.
                    let limit = 1.0 / FIT_MARGIN + 1e-9;
                    for p in &ndc {
                        assert!(p.x.abs() <= limit && p.y.abs() <= limit, "{what}: {p}");
                        assert!((0.0..=1.0).contains(&p.z), "{what}: depth {p}");
                    }
                    if ortho {
                        // The tight dimension is filled (to the margin), not zoomed out.
                        let fill = ndc
                            .iter()
                            .map(|p| p.x.abs().max(p.y.abs()))
                            .fold(0.0, f64::max);
                        assert!(
                            (fill - 1.0 / FIT_MARGIN).abs() < 1e-6,
                            "{what}: fills {fill}"
                        );
                    } else {
                        // The bounding sphere touches the narrower half-angle (with the margin):
                        // sin(half-angle) = radius · margin / distance.
                        let aspect = f64::from(size.0) / f64::from(size.1);
                        let v = FOV_Y / 2.0;
                        let h = ((FOV_Y / 2.0).tan() * aspect).atan();
                        let r = (DVec3::from(max) - DVec3::from(min)).length() / 2.0;
                        let want = r * FIT_MARGIN / v.min(h).sin();
                        assert!((c.distance - want).abs() <= 1e-9 * want, "{what}: {want}");
                    }
                }
            }
        }
    }

    #[test]
    fn a_narrow_top_view_fits_the_width() {
        // 2000 × 1100 file units from above in a viewport 262 × 480 pixels: the width binds,
        // half height = 1000 / (262 / 480) · 1.02 (closed form of the orthographic fit).
        let (min, max) = ([637_000.0, 851_000.0, 120.0], [639_000.0, 852_100.0, 170.0]);
        let c = Camera::fitted(min, max, ViewPreset::Top, (262, 480));
        let half_h = c.distance * (FOV_Y / 2.0).tan();
        let want = 1000.0 / (262.0 / 480.0) * FIT_MARGIN;
        assert!((half_h - want).abs() < 1e-6 * want, "{half_h} vs {want}");
        // The same box in a wide viewport: the height binds.
        let c = Camera::fitted(min, max, ViewPreset::Top, (1600, 300));
        let half_h = c.distance * (FOV_Y / 2.0).tan();
        assert!((half_h - 550.0 * FIT_MARGIN).abs() < 1e-6, "{half_h}");
    }

    #[test]
    fn the_scale_bar_is_the_longest_round_length_that_fits() {
        // Every 1/2/5 × 10^k from 10^-4 to 10^6, by enumeration: the largest ≤ upp · max.
        let round: Vec<f64> = (-4..=6)
            .flat_map(|k| [1.0, 2.0, 5.0].map(|m| m * 10f64.powi(k)))
            .collect();
        for upp in [0.0013, 0.01, 0.37, 1.0, 2.5, 7.77, 123.0, 4096.0] {
            for max_px in [40.0, 100.0, 150.0, 333.0] {
                let (len, px) = scale_bar(upp, max_px).unwrap();
                let want = round
                    .iter()
                    .copied()
                    .filter(|&l| l <= upp * max_px * (1.0 + 1e-12))
                    .fold(0.0, f64::max);
                assert!(
                    (len - want).abs() <= 1e-9 * want,
                    "{upp} {max_px}: {len} vs {want}"
                );
                assert!((px - want / upp).abs() < 1e-9 * px);
                assert!(px <= max_px + 1e-9 && px > max_px * 0.4, "{px} of {max_px}");
            }
        }
        assert_eq!(scale_bar(0.0, 100.0), None);
        assert_eq!(scale_bar(f64::NAN, 100.0), None);
        assert_eq!(length_label(500.0), "500");
        assert_eq!(length_label(0.02), "0.02");
        assert_eq!(length_label(2.0), "2");
    }

    #[test]
    fn units_per_pixel_at_the_view_centre_match_the_projection() {
        // Two points `len` apart along the screen's x at the pivot, projected with the view's
        // own matrix: their pixel distance is len / units_per_pixel, in both projections, and
        // units_per_pixel is the closed form 2 d tan(fov/2) / height.
        for (preset, size) in [
            (ViewPreset::Top, (262u32, 480u32)),
            (ViewPreset::Iso, (960, 600)),
            (ViewPreset::Front, (1600, 300)),
        ] {
            let c = Camera::fitted([0.0; 3], [500.0, 300.0, 40.0], preset, size);
            let v = c.view(size, c.pivot, 300.0);
            let px = |p: DVec3| {
                let q = p - v.eye;
                let clip = v.view_proj * DVec4::new(q.x, q.y, q.z, 1.0);
                (clip.x / clip.w * 0.5 + 0.5) * f64::from(size.0)
            };
            let len = 10.0;
            let got = px(c.pivot + c.right() * len * 0.5) - px(c.pivot - c.right() * len * 0.5);
            let upp = c.units_per_pixel(size.1);
            let closed = 2.0 * c.distance * (FOV_Y / 2.0).tan() / f64::from(size.1);
            assert!((upp - closed).abs() < 1e-12 * closed);
            assert!(
                (got - len / upp).abs() < 1e-6 * got,
                "{preset:?}: {got} px vs {}",
                len / upp
            );
        }
    }

    #[test]
    fn zoom_keeps_the_target_point_fixed_and_pan_moves_the_pivot() {
        let mut c = Camera::fitted([0.0; 3], [10.0; 3], ViewPreset::Iso, (100, 100));
        let target = DVec3::new(2.0, 3.0, 4.0);
        let before = (c.pivot - target).length();
        c.zoom_to(0.5, target);
        assert!(((c.pivot - target).length() - before * 0.5).abs() < 1e-12);
        let p = c.pivot;
        c.pan(10.0, 0.0, 100);
        assert!((c.pivot - p).length() > 0.0);
    }
}
