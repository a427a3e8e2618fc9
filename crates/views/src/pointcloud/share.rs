//! The point cloud under `--publish` and `--follow` (the `vizdeck-protocols` crate's `publish`). The points never
//! travel: a follower opens the same cloud itself, so what goes on the wire is where the cloud
//! comes from, the camera and the view.
//!
//! - **Keyframe** ([`PointCloudKeyframe`]): the source (a file's absolute path, a COPC URL, or
//!   `synthetic:N` with its seed), the camera (pivot, yaw, pitch, distance, projection) and the
//!   view (colour mode, point radius, eye-dome lighting, the budget the user chose, the classes
//!   hidden): 220–330 bytes on the wire (a file's path adds its length). Sent when the publisher asks,
//!   when the source changes, and once the camera and view have been still for
//!   [`SETTLE_FRAMES`] frames after a change (so the broker's retained keyframe, which a
//!   follower joining later starts from, holds the view the publisher rests on).
//! - **Delta** ([`PointCloudDelta`]): the camera and / or the view, each only when it changed
//!   since the last message (about 200 bytes a frame while the camera moves: 12 KiB/s at
//!   60 frames a second, measured in `tests/app/publish_pointcloud.rs`); nothing at all while both
//!   are still.
//!
//! A follower (a scene made with [`SceneConfig::following`](crate::SceneConfig)) opens
//! the keyframe's source unless it already shows that one (a file: the same path on its own
//! machine). A source that does not open there is said once, naming the path and the problem
//! (on the scene, in the report, in the log), and the scene waits for a keyframe with another
//! source; the same source is not tried again on every keyframe. Attached, the follower takes
//! the publisher's camera and view from every message; detached, its own camera and view stay.

use glam::DVec3;

use super::{CloudSource, Phase, PointCloud, open};
use crate::pointcloud::raster::{ColorMode, MAX_RADIUS};
use vizdeck_pointcloud::camera::Camera;
use vizdeck_protocols::publish::{
    Body, PointCloudCamera, PointCloudDelta, PointCloudKeyframe, PointCloudSource, PointCloudView,
};

/// Publisher frames the camera and view stay still after a change before a keyframe repeats
/// them (the retained keyframe then holds the view the publisher rests on).
pub const SETTLE_FRAMES: u32 = 30;

/// The scene's publish and follow state.
#[derive(Debug, Default)]
pub(super) struct Share {
    /// Following: the scene shows the publisher's cloud, camera and view.
    pub(super) following: bool,
    /// The cloud the scene shows (publishing) or last opened or tried (following), as sent.
    pub(super) source: Option<PointCloudSource>,
    /// Following: the publisher's view was applied (the cloud's default colour no longer
    /// replaces its colour mode).
    pub(super) view_applied: bool,
    /// Following: the follower's own budget (flags, adapter), kept while the publisher's user
    /// has not chosen one.
    pub(super) own_budget: u64,
    // Publishing.
    sent_source: Option<PointCloudSource>,
    sent_camera: Option<PointCloudCamera>,
    sent_view: Option<PointCloudView>,
    /// Frames since the last delta, while no keyframe has repeated it.
    unsettled: Option<u32>,
    keys_sent: u64,
    deltas_sent: u64,
    // Following.
    keys_applied: u64,
    deltas_applied: u64,
    opens: u64,
    /// Following: why the publisher's cloud is not shown (one line, naming the source).
    pub(super) notice: Option<String>,
}

/// The camera as sent.
fn wire_camera(c: &Camera) -> PointCloudCamera {
    PointCloudCamera {
        pivot: c.pivot.to_array(),
        yaw: c.yaw,
        pitch: c.pitch,
        distance: c.distance,
        ortho: c.ortho,
    }
}

/// The camera as received.
fn camera_of(c: &PointCloudCamera) -> Camera {
    Camera {
        pivot: DVec3::from(c.pivot),
        yaw: c.yaw,
        pitch: c.pitch,
        distance: c.distance,
        ortho: c.ortho,
    }
}

/// `source` (a synthetic cloud from `seed`) as sent: a file by its absolute path.
pub(super) fn wire_source(source: &CloudSource, seed: u64) -> PointCloudSource {
    match source {
        CloudSource::File(p) => PointCloudSource::File(
            std::path::absolute(p)
                .unwrap_or_else(|_| p.clone())
                .to_string_lossy()
                .into_owned(),
        ),
        CloudSource::Url(u) => PointCloudSource::Url(u.clone()),
        CloudSource::Synthetic(n) => PointCloudSource::Synthetic { points: *n, seed },
    }
}

/// The cloud (and the seed of a synthetic one) `source` names.
fn cloud_of(source: &PointCloudSource) -> (CloudSource, Option<u64>) {
    match source {
        PointCloudSource::File(p) => (CloudSource::File(p.into()), None),
        PointCloudSource::Url(u) => (CloudSource::Url(u.clone()), None),
        PointCloudSource::Synthetic { points, seed } => {
            (CloudSource::Synthetic(*points), Some(*seed))
        }
    }
}

/// `source` in one line: the path, the URL or `synthetic:N (seed S)`.
fn describe(source: &PointCloudSource) -> String {
    match source {
        PointCloudSource::File(p) => p.clone(),
        PointCloudSource::Url(u) => u.clone(),
        PointCloudSource::Synthetic { points, seed } => format!("synthetic:{points} (seed {seed})"),
    }
}

impl PointCloud {
    /// The view as sent.
    fn wire_view(&self) -> PointCloudView {
        let mut hidden = [0u32; 8];
        for (w, h) in hidden
            .iter_mut()
            .zip(self.style.hidden_classes.iter().flatten())
        {
            *w = *h;
        }
        PointCloudView {
            color: self.style.color.name().to_string(),
            point_radius: self.style.radius,
            edl: self.style.edl,
            budget: (self.budgets.budget != self.budgets.default_budget)
                .then_some(self.budgets.budget),
            hidden_classes: hidden,
        }
    }

    /// [`Scene::publish`](crate::Scene::publish) for the point cloud: called after the
    /// frame's ingest, before `prepare` moves the camera by the frame's keys.
    pub(super) fn publish_body(&mut self, keyframe: bool) -> Option<Body> {
        if self.share.following {
            // A follower does not republish what it follows.
            return None;
        }
        let source = self.share.source.clone()?;
        let camera = self.camera.as_ref().map(wire_camera);
        let view = self.wire_view();
        let sh = &mut self.share;
        let changed_camera = camera != sh.sent_camera;
        let changed_view = sh.sent_view.as_ref() != Some(&view);
        let settled = !changed_camera
            && !changed_view
            && sh.unsettled.is_some_and(|n| n + 1 >= SETTLE_FRAMES);
        if keyframe || sh.sent_source.as_ref() != Some(&source) || settled {
            sh.sent_source = Some(source.clone());
            sh.sent_camera = camera;
            sh.sent_view = Some(view.clone());
            sh.unsettled = None;
            sh.keys_sent += 1;
            return Some(Body::PointCloudKey(PointCloudKeyframe {
                source,
                camera,
                view,
            }));
        }
        if !changed_camera && !changed_view {
            sh.unsettled = sh.unsettled.map(|n| n + 1);
            return None;
        }
        sh.sent_camera = camera;
        sh.unsettled = Some(0);
        sh.deltas_sent += 1;
        let view = changed_view.then(|| {
            sh.sent_view = Some(view.clone());
            view
        });
        Some(Body::PointCloudDelta(PointCloudDelta {
            // A camera that became unknown (never the case today) is not a change to send.
            camera: if changed_camera { camera } else { None },
            view,
        }))
    }

    /// [`Scene::follow`](crate::Scene::follow) for the point cloud.
    pub(super) fn follow_body(&mut self, body: Body, attached: bool) {
        let (camera, view) = match body {
            Body::PointCloudKey(k) => {
                self.share.keys_applied += 1;
                if self.share.source.as_ref() != Some(&k.source) {
                    self.open_followed(k.source);
                }
                (k.camera, Some(k.view))
            }
            Body::PointCloudDelta(d) => {
                self.share.deltas_applied += 1;
                (d.camera, d.view)
            }
            // Another scene's body: not the point cloud's.
            _ => return,
        };
        if !attached {
            return;
        }
        if let Some(c) = camera {
            self.camera = Some(camera_of(&c));
        }
        if let Some(v) = view {
            self.apply_view(&v);
        }
    }

    /// The publisher's view, applied (values out of range, which decoding refuses, clamped).
    fn apply_view(&mut self, v: &PointCloudView) {
        if let Some(m) = ColorMode::ALL.into_iter().find(|m| m.name() == v.color) {
            self.style.color = m;
        }
        self.style.radius = v.point_radius.min(MAX_RADIUS);
        self.style.edl = v.edl.clamp(0.0, 4.0);
        self.budgets.budget = v.budget.unwrap_or(self.share.own_budget).max(1);
        for (h, w) in self
            .style
            .hidden_classes
            .iter_mut()
            .flatten()
            .zip(v.hidden_classes)
        {
            *h = w;
        }
        self.share.view_applied = true;
    }

    /// Opens the publisher's cloud in place of the one shown; a source that does not open
    /// here is said once and leaves the scene waiting for another.
    fn open_followed(&mut self, source: PointCloudSource) {
        let (cloud, seed) = cloud_of(&source);
        let seed = seed.unwrap_or(self.seed);
        self.share.opens += 1;
        self.share.source = Some(source.clone());
        // Nothing of the cloud shown before stays: its nodes, its framing, its readout.
        self.phase = Phase::Waiting;
        self.drop_resident();
        self.camera = None;
        self.view = None;
        self.pointer.hover = None;
        self.message = None;
        match open(&cloud, seed, &self.settings.cache_dir) {
            Ok(phase) => {
                log::info!(
                    "--follow: showing the publisher's cloud {}",
                    describe(&source)
                );
                self.phase = phase;
                self.settings.source = cloud;
                self.seed = seed;
                self.share.notice = None;
                self.default_color();
            }
            Err(e) => self.follow_failed(&e.to_string()),
        }
    }

    /// The publisher's cloud failed to open here (`why` names it and the problem): said once,
    /// shown on the scene, the scene waiting for a keyframe with another source.
    pub(super) fn follow_failed(&mut self, why: &str) {
        let msg = format!(
            "--follow: the publisher's point cloud does not open here: {why}; waiting for a \
             keyframe with another source"
        );
        log::warn!("{msg}");
        self.share.notice = Some(msg.clone());
        self.phase = Phase::Failed(msg);
    }

    /// The report's `share` object: the source as sent or followed, and the messages.
    pub(super) fn share_metrics(&self) -> serde_json::Value {
        let sh = &self.share;
        serde_json::json!({
            "following": sh.following,
            "source": sh.source.as_ref().map(|s| serde_json::to_value(s).unwrap_or_default()),
            "keyframes_sent": sh.keys_sent,
            "deltas_sent": sh.deltas_sent,
            "keyframes_applied": sh.keys_applied,
            "deltas_applied": sh.deltas_applied,
            "sources_opened": sh.opens,
            "notice": sh.notice,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_and_cameras_cross_the_wire_unchanged() {
        let s = wire_source(&CloudSource::Synthetic(5000), 9);
        assert_eq!(cloud_of(&s), (CloudSource::Synthetic(5000), Some(9)));
        let f = wire_source(&CloudSource::File("a/b.laz".into()), 9);
        let PointCloudSource::File(p) = &f else {
            panic!("{f:?}")
        };
        assert!(
            std::path::Path::new(p).is_absolute() && p.ends_with("a/b.laz"),
            "{p}"
        );
        assert_eq!(cloud_of(&f).1, None);
        let c = Camera {
            pivot: DVec3::new(6.0e5 + 0.1, 4.0e6 - 0.3, 12.5),
            yaw: -2.1,
            pitch: 0.7,
            distance: 321.0,
            ortho: true,
        };
        assert_eq!(camera_of(&wire_camera(&c)), c);
    }
}
