//! `--publish` / `--follow` of the point-cloud scene. What travels is the cloud's source, the
//! camera and the view, never the points, so a follower equals its publisher when it opened
//! the same source and holds the same camera and view values (f64 and f32 on the wire, so
//! compared with `==`).
//!
//! In process (lavapipe): a follower scene fed a publisher scene's messages — through the wire
//! format — holds the publisher's camera after every frame while the camera moves, and its
//! source and view; a still camera sends nothing (one keyframe once it settles); a detached
//! follower keeps its own camera; a file the follower does not have gives one notice naming
//! the path, is not tried again on every keyframe, and another source opens after it; bodies
//! out of range do not decode. Through a real mosquitto (ignored unless run by
//! `cargo xtask test`): headless publisher and follower binaries report the same source,
//! camera and view, and the follower drew points; a follower joining from the retained
//! keyframe of a file that is gone names the path and exits normally.

use crate::common;

use common::follower::Follower;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use glam::DVec3;
use vizdeck::gpu::Gpu;
use vizdeck::gpu::upload::Strategy;
use vizdeck::pointcloud::camera::ViewPreset;
use vizdeck::pointcloud::raster::ColorMode;
use vizdeck::publish::protocol::{
    Body, DecodeError, Envelope, PointCloudCamera, PointCloudDelta, PointCloudKeyframe,
    PointCloudSource, PointCloudView, decode, encode,
};
use vizdeck::scene::pointcloud::{CloudSource, PointCloud, SETTLE_FRAMES, Settings};
use vizdeck::scene::{FrameCtx, Scene};

const SIZE: (u32, u32) = (160, 100);

/// `body` as publisher 7 sends it in frame `frame`: the encoded message.
fn wire(body: Body, frame: u64) -> Vec<u8> {
    encode(&Envelope {
        publisher: 7,
        seq: frame,
        frame,
        stream_s: frame as f64 / 60.0,
        sent_unix_ns: 0,
        scene: "pointcloud".into(),
        body,
    })
    .expect("encode")
}

/// One frame of `scene`: its prepare (the camera is framed, nodes selected and uploaded).
fn prepare(gpu: &Gpu, scene: &mut PointCloud, frame: u64) {
    let ctx = FrameCtx {
        frame,
        steps: 1,
        dt: 1.0 / 60.0,
        alpha: 0.0,
        advanced_s: 1.0 / 60.0,
        elapsed_s: 1.0 / 60.0,
        size: SIZE,
    };
    vizdeck::scene::prepare_standalone(gpu, scene, &ctx, Strategy::WriteBuffer);
}

/// A publisher on a small synthetic cloud with a view other than the defaults.
fn publisher(gpu: &Gpu) -> PointCloud {
    let settings = Settings {
        source: CloudSource::Synthetic(20_000),
        budget: Some(50_000),
        view: ViewPreset::Top,
        color: Some(ColorMode::Intensity),
        radius: Some(2),
        edl: 0.5,
        ..Settings::default()
    };
    PointCloud::new(gpu, &settings, 7, true).expect("publisher")
}

/// The report values a follower must share with its publisher.
fn shown(m: &serde_json::Value) -> serde_json::Value {
    serde_json::json!({
        "source": m["source"],
        "wire_source": m["share"]["source"],
        "view": m["view"],
        "color": m["color"],
        "point_radius": m["point_radius"],
        "edl_strength": m["edl_strength"],
        "point_budget": m["point_budget"],
        "points_total": m["points_total"],
    })
}

/// 150 frames: 40 still, 60 with the camera orbiting, zooming and panning every frame, 50
/// still. After every frame the attached follower's camera is the publisher's, to the bit;
/// moving frames each send one small delta, still ones nothing but the one keyframe once the
/// camera settled. A detached follower opens the same cloud but keeps its own camera.
#[test]
fn follower_holds_the_publishers_camera_and_view() {
    let gpu = common::gpu();
    let mut p = publisher(&gpu);
    let mut f = PointCloud::following(&gpu, &Settings::default(), true);
    let mut detached = PointCloud::following(&gpu, &Settings::default(), true);
    let (mut key_bytes, mut moving_bytes, mut still_bytes) = (Vec::new(), 0usize, 0usize);
    let (mut moving_msgs, mut key_frames) = (0, Vec::new());
    for i in 0..150u64 {
        let moving = (40..100).contains(&i);
        if moving && let Some(mut c) = p.camera() {
            c.orbit(3.0, -1.5);
            c.zoom_to(0.995, c.pivot + DVec3::new(0.5, -0.25, 0.0));
            c.pan(1.0, 0.5, SIZE.1);
            p.set_camera(c);
        }
        let body = p.publish(i == 0);
        if let Some(body) = body {
            let bytes = wire(body, i);
            if moving {
                moving_bytes += bytes.len();
                moving_msgs += 1;
            } else if i > 0 {
                still_bytes += bytes.len();
            }
            let got = decode(&bytes).expect("decode");
            if got.body.is_keyframe() {
                key_bytes.push(bytes.len());
                key_frames.push(i);
            }
            f.follow(got.publisher, got.body.clone(), true);
            detached.follow(got.publisher, got.body, false);
        }
        prepare(&gpu, &mut p, i);
        prepare(&gpu, &mut f, i);
        prepare(&gpu, &mut detached, i);
        if i >= 1 {
            // Frame 0's keyframe has no camera yet (the publisher frames its cloud in its
            // first prepare); frame 1's delta carries it.
            assert_eq!(f.camera(), p.camera(), "frame {i}");
        }
    }
    let (pm, fm, dm) = (p.metrics(), f.metrics(), detached.metrics());
    assert_eq!(shown(&fm), shown(&pm), "\n{fm}\n{pm}");
    assert_eq!(fm["color"], "intensity");
    assert_eq!(fm["point_radius"], 2);
    assert_eq!(fm["edl_strength"], 0.5);
    assert_eq!(fm["point_budget"], 50_000);
    assert_eq!(
        fm["share"]["source"],
        serde_json::json!({ "Synthetic": { "points": 20_000, "seed": 7 } })
    );
    assert!(fm["points_drawn"].as_u64() > Some(0), "{fm}");
    assert_eq!(fm["share"]["sources_opened"], 1, "{fm}");
    // Detached: the same cloud, its own camera (its own iso view, not the publisher's top).
    assert_eq!(dm["source"], pm["source"]);
    assert_ne!(dm["view"], pm["view"]);
    assert_eq!(dm["view"]["ortho"], false, "{dm}");
    // One delta a moving frame; still frames send nothing but a keyframe once the camera
    // settled: after frame 1's delta (the camera framed) and after the last move (frame 99).
    assert_eq!(moving_msgs, 60);
    let settle = u64::from(SETTLE_FRAMES);
    assert_eq!(key_frames, [0, 1 + settle, 99 + settle]);
    assert_eq!(pm["share"]["keyframes_sent"], 3, "{pm}");
    assert_eq!(pm["share"]["deltas_sent"], 61, "{pm}");
    assert!(
        key_bytes.iter().all(|&b| b < 400),
        "keyframes {key_bytes:?}"
    );
    let per_delta = moving_bytes / moving_msgs;
    assert!(per_delta < 256, "{per_delta} bytes a delta");
    eprintln!(
        "keyframe {key_bytes:?} bytes; moving: {per_delta} bytes a frame = {:.1} KiB/s at 60 \
         fps; still: {still_bytes} bytes in 89 frames (the settle keyframes)",
        per_delta as f64 * 60.0 / 1024.0
    );
    assert!(
        gpu.error_messages().is_empty(),
        "{:?}",
        gpu.error_messages()
    );
}

fn view() -> PointCloudView {
    PointCloudView {
        color: "elevation".into(),
        point_radius: 1,
        edl: 1.0,
        budget: None,
        hidden_classes: [0; 8],
    }
}

fn key(source: PointCloudSource) -> Body {
    Body::PointCloudKey(PointCloudKeyframe {
        source,
        camera: None,
        view: view(),
    })
}

/// A keyframe naming a file the follower does not have: one notice naming the path and the
/// problem, no panic; the same source again is not reopened; a keyframe with another source
/// opens that one and draws.
#[test]
fn a_missing_file_is_named_once_and_another_source_opens() {
    let gpu = common::gpu();
    let mut f = PointCloud::following(&gpu, &Settings::default(), true);
    let missing = std::env::temp_dir().join(format!(
        "vizdeck_pubpc_{}_no/such/cloud.las",
        std::process::id()
    ));
    let path = missing.to_string_lossy().into_owned();
    for i in 0..3 {
        let got = decode(&wire(key(PointCloudSource::File(path.clone())), i)).expect("decode");
        f.follow(got.publisher, got.body, true);
        prepare(&gpu, &mut f, i);
    }
    let m = f.metrics();
    let problem = f.problem().unwrap_or_default();
    assert!(
        problem.contains(&path) && problem.contains("No such file"),
        "{problem}"
    );
    assert_eq!(m["share"]["notice"], problem.as_str(), "{m}");
    assert_eq!(m["error"], problem.as_str(), "{m}");
    assert_eq!(m["share"]["sources_opened"], 1, "not reopened: {m}");
    assert_eq!(m["points_drawn"], 0);
    let got = decode(&wire(
        key(PointCloudSource::Synthetic {
            points: 5000,
            seed: 3,
        }),
        3,
    ))
    .expect("decode");
    f.follow(got.publisher, got.body, true);
    prepare(&gpu, &mut f, 3);
    let m = f.metrics();
    assert_eq!(f.problem(), None, "{m}");
    assert_eq!(m["source"], "synthetic:5000");
    assert_eq!(m["share"]["sources_opened"], 2, "{m}");
    assert!(m["points_drawn"].as_u64() > Some(0), "{m}");
    assert!(gpu.error_messages().is_empty());
}

/// Bodies with values a follower cannot use do not decode, each with one line.
#[test]
fn bodies_out_of_range_are_corrupt() {
    let cam = PointCloudCamera {
        pivot: [1.0, 2.0, 3.0],
        yaw: 0.5,
        pitch: 0.25,
        distance: 10.0,
        ortho: false,
    };
    let delta = |camera: Option<PointCloudCamera>, view: Option<PointCloudView>| {
        Body::PointCloudDelta(PointCloudDelta { camera, view })
    };
    let good = [
        delta(Some(cam), Some(view())),
        key(PointCloudSource::Url(
            "https://example.org/a.copc.laz".into(),
        )),
    ];
    for b in good {
        let e = decode(&wire(b.clone(), 0)).expect("decode");
        assert_eq!(e.body, b);
    }
    let bad = [
        delta(
            Some(PointCloudCamera {
                yaw: f64::NAN,
                ..cam
            }),
            None,
        ),
        delta(
            Some(PointCloudCamera {
                distance: 0.0,
                ..cam
            }),
            None,
        ),
        delta(
            Some(PointCloudCamera {
                pivot: [f64::INFINITY, 0.0, 0.0],
                ..cam
            }),
            None,
        ),
        delta(Some(PointCloudCamera { pitch: 2.0, ..cam }), None),
        delta(
            None,
            Some(PointCloudView {
                color: "plasma".into(),
                ..view()
            }),
        ),
        delta(
            None,
            Some(PointCloudView {
                point_radius: 4,
                ..view()
            }),
        ),
        delta(
            None,
            Some(PointCloudView {
                edl: f32::NAN,
                ..view()
            }),
        ),
        delta(
            None,
            Some(PointCloudView {
                budget: Some(0),
                ..view()
            }),
        ),
        key(PointCloudSource::File(String::new())),
        key(PointCloudSource::File("a".repeat(5000))),
        key(PointCloudSource::Url("ftp://example.org/a.laz".into())),
        key(PointCloudSource::Synthetic { points: 0, seed: 1 }),
    ];
    for b in bad {
        let r = decode(&wire(b.clone(), 0));
        assert!(
            matches!(&r, Err(DecodeError::Corrupt(m)) if m.starts_with("point cloud")),
            "{b:?}: {r:?}"
        );
    }
}

// ---- Through mosquitto, headless binaries --------------------------------------------------

fn dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("vizdeck_pubpc_{}_{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn vizdeck(report: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_vizdeck"));
    c.args([
        "--headless",
        "--no-settings",
        "--size",
        "320x200",
        "--scene",
        "pointcloud",
    ])
    .arg("--report")
    .arg(report)
    .stdout(Stdio::null())
    .stderr(Stdio::piped());
    c
}

/// A headless follower of `url`, run until SIGTERM; returns once it has subscribed.
fn spawn_follower(url: &str, report: &Path, extra: &[&str]) -> Follower {
    let mut c = vizdeck(report);
    c.args(["--follow", url, "--frames", "1000000"]).args(extra);
    Follower::spawn(c)
}

fn report(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("report")).expect("json")
}

fn run_publisher(report: &Path, args: &[&str]) {
    let out = vizdeck(report)
        .args(args)
        .spawn()
        .expect("vizdeck")
        .wait_with_output()
        .expect("publisher");
    assert!(
        out.status.success(),
        "publisher: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A follower started first, a publisher of a small synthetic cloud with a top view, another
/// colour mode, radius, EDL strength and budget: the follower reports the same source, camera
/// and view, and drew points.
#[test]
#[ignore = "needs mosquitto: run through `cargo xtask test`"]
fn follower_binary_shows_the_publishers_cloud_and_camera() {
    let mut broker = common::mosquitto::Broker::new("pc");
    broker.start();
    let url = format!("mqtt://127.0.0.1:{}/vz/pc", broker.port);
    let d = dir("pair");
    let (fp, pp) = (d.join("f.json"), d.join("p.json"));
    let follower = spawn_follower(&url, &fp, &[]);
    run_publisher(
        &pp,
        &[
            "--publish",
            &url,
            "--pointcloud",
            "synthetic:20000",
            "--seed",
            "11",
            "--view",
            "top",
            "--pointcloud-color",
            "intensity",
            "--point-radius",
            "2",
            "--edl",
            "0.5",
            "--pointcloud-budget",
            "50000",
            "--frames",
            "90",
            "--realtime",
        ],
    );
    // Loopback QoS 1: everything has arrived well within this.
    std::thread::sleep(Duration::from_secs(2));
    let (ok, err) = follower.stop();
    assert!(ok, "follower: {err}");
    assert!(!err.contains("panicked"), "{err}");
    let (p, f) = (report(&pp), report(&fp));
    let (ps, fs) = (&p["scenes"]["pointcloud"], &f["scenes"]["pointcloud"]);
    assert_eq!(shown(fs), shown(ps), "\nfollower {fs}\npublisher {ps}");
    assert_eq!(fs["source"], "synthetic:20000");
    assert_eq!(fs["view"]["ortho"], true, "the top view: {fs}");
    assert_eq!(fs["color"], "intensity");
    assert!(fs["points_drawn"].as_u64() > Some(0), "{fs}");
    assert_eq!(fs["share"]["sources_opened"], 1, "{fs}");
    assert!(f["follow"]["messages_applied"].as_u64() >= Some(2), "{f}");
    eprintln!(
        "publisher: {} messages, {} bytes, last keyframe {} bytes",
        p["publish"]["messages_sent"],
        p["publish"]["bytes_sent"],
        p["publish"]["last_keyframe_bytes"]
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// A publisher of a LAS file that is gone when a follower joins from the retained keyframe:
/// the follower names the path and the problem once as it happens, draws nothing, keeps
/// running, and ends the run non-zero with the same line; no panic.
#[test]
#[ignore = "needs mosquitto: run through `cargo xtask test`"]
fn follower_binary_names_a_file_it_does_not_have() {
    let mut broker = common::mosquitto::Broker::new("pcfile");
    broker.start();
    let url = format!("mqtt://127.0.0.1:{}/vz/pcfile", broker.port);
    let d = dir("file");
    let cloud = d.join("cloud.las");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/pointcloud/simple.las"),
        &cloud,
    )
    .expect("copy");
    let cache = d.join("cache");
    let (fp, pp) = (d.join("f.json"), d.join("p.json"));
    run_publisher(
        &pp,
        &[
            "--publish",
            &url,
            "--pointcloud-file",
            cloud.to_str().unwrap(),
            "--pointcloud-cache",
            cache.to_str().unwrap(),
            "--frames",
            "40",
        ],
    );
    let p = report(&pp);
    assert_eq!(
        p["scenes"]["pointcloud"]["share"]["source"],
        serde_json::json!({ "File": cloud.to_str().unwrap() }),
        "{p}"
    );
    std::fs::remove_file(&cloud).expect("remove");
    let follower = spawn_follower(&url, &fp, &["--pointcloud-cache", cache.to_str().unwrap()]);
    std::thread::sleep(Duration::from_secs(2));
    let (ok, err) = follower.stop();
    assert!(!ok, "the run ends non-zero: {err}");
    assert!(!err.contains("panicked"), "{err}");
    let path = cloud.to_str().unwrap();
    let warned = err
        .lines()
        .filter(|l| l.contains("WARN") && l.contains("does not open here"))
        .count();
    assert_eq!(warned, 1, "said once while running: {err}");
    assert!(
        err.lines()
            .last()
            .is_some_and(|l| l.contains("does not open here") && l.contains(path)),
        "and as the run's error: {err}"
    );
    let f = report(&fp);
    let fs = &f["scenes"]["pointcloud"];
    let notice = fs["share"]["notice"].as_str().unwrap_or_default();
    assert!(
        notice.contains(path) && notice.contains("No such file"),
        "{fs}"
    );
    assert_eq!(fs["error"], notice, "{fs}");
    assert_eq!(fs["points_drawn"], 0, "{fs}");
    assert!(f["follow"]["messages_applied"].as_u64() >= Some(1), "{f}");
    let _ = std::fs::remove_dir_all(&d);
}
