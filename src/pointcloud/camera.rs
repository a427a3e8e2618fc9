//! The point-cloud camera: an orbit camera around a pivot, in f64 file coordinates (z up), with
//! perspective or orthographic projection. The GPU gets a matrix for camera-relative points
//! (point − eye): the large coordinates are subtracted in f64 on the CPU, never in f32.
//!
//! Conventions: yaw is the angle of the eye around the pivot in the xy plane (0 = the eye on
//! the +x side), pitch its elevation (+90° = straight above). Depth is wgpu's [0, 1].

use glam::{DMat4, DVec3, DVec4};

/// Vertical field of view of the perspective projection, radians (also sets the orthographic
/// scale: half height = distance · tan(fov / 2)).
pub const FOV_Y: f64 = 50.0 * std::f64::consts::PI / 180.0;
/// Pitch limit, radians: straight down (the top view) or straight up.
const PITCH_LIMIT: f64 = std::f64::consts::FRAC_PI_2;

/// A named view (`--view`, the side panel's buttons).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
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

    /// Moves the pivot to the box's centre and sets the distance so the box fills the viewport
    /// (orthographic: its projected extent exactly, with 2 % margin; perspective: its bounding
    /// sphere).
    pub fn fit(&mut self, min: [f64; 3], max: [f64; 3], size: (u32, u32)) {
        let (lo, hi) = (DVec3::from(min), DVec3::from(max));
        self.pivot = (lo + hi) * 0.5;
        let radius = ((hi - lo).length() * 0.5).max(1e-6);
        let tan = (FOV_Y / 2.0).tan();
        if self.ortho {
            let aspect = f64::from(size.0.max(1)) / f64::from(size.1.max(1));
            let view = self.rotation();
            let mut half = DVec3::ZERO;
            for i in 0..8 {
                let corner = DVec3::new(
                    if i & 1 == 0 { lo.x } else { hi.x },
                    if i & 2 == 0 { lo.y } else { hi.y },
                    if i & 4 == 0 { lo.z } else { hi.z },
                ) - self.pivot;
                half = half.max(view.transform_vector3(corner).abs());
            }
            let half_h = (half.y.max(half.x / aspect) * 1.02).max(1e-6);
            self.distance = half_h / tan;
        } else {
            self.distance = radius / (FOV_Y / 2.0).sin() * 1.02;
        }
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
