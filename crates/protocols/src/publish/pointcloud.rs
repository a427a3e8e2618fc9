//! The point-cloud scene's bodies (source, camera, view) and their value checks.

use serde::{Deserialize, Serialize};

use super::Body;

/// Longest file path or URL a point-cloud keyframe may name, bytes.
pub const POINTCLOUD_MAX_NAME: usize = 4096;

/// Where a published point cloud comes from. The points never travel: a follower opens the
/// same source itself.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum PointCloudSource {
    /// A LAS, LAZ, COPC or PLY file: its absolute path on the publisher's machine (UTF-8, a
    /// non-UTF-8 name lossily), 1..=[`POINTCLOUD_MAX_NAME`] bytes. A follower opens the same
    /// path on its own machine.
    File(String),
    /// A COPC file over HTTP(S): its `http://` or `https://` URL,
    /// 1..=[`POINTCLOUD_MAX_NAME`] bytes.
    Url(String),
    /// The synthetic terrain: `points` points (1..=10¹⁰), deterministic from `seed`.
    Synthetic {
        /// Points in the cloud.
        points: u64,
        /// The publisher's `--seed`.
        seed: u64,
    },
}

/// The point-cloud camera: an orbit camera around a pivot, file coordinates (z up). Every
/// value is finite.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct PointCloudCamera {
    /// The point orbited: x, y, z in file units (the cloud's own coordinates, f64).
    pub pivot: [f64; 3],
    /// The eye's angle around the pivot in the xy plane, radians (0: the eye on the +x side).
    pub yaw: f64,
    /// The eye's elevation, radians, within ±π/2 (+π/2: straight above).
    pub pitch: f64,
    /// The eye's distance from the pivot, file units (> 0).
    pub distance: f64,
    /// Orthographic projection (else perspective, 50° vertical field of view); either way
    /// the viewport's height spans `2 · distance · tan 25°` at the pivot.
    pub ortho: bool,
}

/// How the point cloud is drawn: what a follower attached to the publisher's view shows.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PointCloudView {
    /// Colour mode, by name ([`ColorMode::name`]: `RGB`, `intensity`, `elevation`,
    /// `classification`, `return number`).
    ///
    /// [`ColorMode::name`]: vizdeck_pointcloud::color::ColorMode::name
    pub color: String,
    /// Point radius, pixels (0..=3).
    pub point_radius: u32,
    /// Eye-dome lighting strength, 0 (off) to 4.
    pub edl: f32,
    /// The point budget (most points drawn a frame, 1..=10¹⁰) the publisher's user chose;
    /// `None`: the publisher's adapter default, a follower keeps its own.
    pub budget: Option<u64>,
    /// ASPRS classes hidden in the legend: class `c` is bit `c % 32` of word `c / 32`.
    pub hidden_classes: [u32; 8],
}

/// A point-cloud keyframe: everything a follower needs to show what the publisher shows.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PointCloudKeyframe {
    /// The cloud.
    pub source: PointCloudSource,
    /// The camera; `None` while the publisher has not framed the cloud yet (still opening).
    pub camera: Option<PointCloudCamera>,
    /// The view settings.
    pub view: PointCloudView,
}

/// What changed in the point-cloud scene since the publisher's last message (at least one of
/// the two is `Some`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PointCloudDelta {
    /// The camera, when it moved.
    pub camera: Option<PointCloudCamera>,
    /// The view settings, when they changed.
    pub view: Option<PointCloudView>,
}

/// The values a point-cloud body carries: a source of a known kind and length, a camera of
/// finite values (distance > 0, pitch within ±π/2), a view of a known colour mode, radius,
/// strength and budget.
pub(super) fn check_pointcloud(b: &Body) -> Result<(), String> {
    use vizdeck_pointcloud::color::{ColorMode, MAX_RADIUS};
    use vizdeck_pointcloud::synthetic::MAX_POINTS;
    let camera = |c: &PointCloudCamera| {
        let finite = c
            .pivot
            .iter()
            .chain([&c.yaw, &c.pitch, &c.distance])
            .all(|v| v.is_finite());
        if finite && c.distance > 0.0 && c.pitch.abs() <= std::f64::consts::FRAC_PI_2 {
            Ok(())
        } else {
            Err(format!(
                "point cloud: a camera at {:?}, yaw {}, pitch {}, distance {}",
                c.pivot, c.yaw, c.pitch, c.distance
            ))
        }
    };
    let view = |v: &PointCloudView| {
        if !ColorMode::ALL.iter().any(|m| m.name() == v.color) {
            return Err(format!("point cloud: unknown colour mode {:?}", v.color));
        }
        if v.point_radius > MAX_RADIUS || !(0.0..=4.0).contains(&v.edl) {
            return Err(format!(
                "point cloud: a point radius of {} px, an EDL strength of {}",
                v.point_radius, v.edl
            ));
        }
        if v.budget.is_some_and(|b| b == 0 || b > MAX_POINTS) {
            return Err(format!("point cloud: a point budget of {:?}", v.budget));
        }
        Ok(())
    };
    match b {
        Body::PointCloudKey(k) => {
            match &k.source {
                PointCloudSource::File(s) | PointCloudSource::Url(s)
                    if s.is_empty() || s.len() > POINTCLOUD_MAX_NAME =>
                {
                    return Err(format!(
                        "point cloud: a source name of {} bytes (1 to {POINTCLOUD_MAX_NAME})",
                        s.len()
                    ));
                }
                PointCloudSource::Url(u) if !vizdeck_pointcloud::http::is_url(u) => {
                    return Err(format!("point cloud: {u:?} is not an http(s) URL"));
                }
                PointCloudSource::Synthetic { points, .. }
                    if *points == 0 || *points > MAX_POINTS =>
                {
                    return Err(format!("point cloud: a synthetic cloud of {points} points"));
                }
                _ => {}
            }
            k.camera.as_ref().map_or(Ok(()), camera)?;
            view(&k.view)
        }
        Body::PointCloudDelta(d) => {
            d.camera.as_ref().map_or(Ok(()), camera)?;
            d.view.as_ref().map_or(Ok(()), view)
        }
        _ => Ok(()),
    }
}
