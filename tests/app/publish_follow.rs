//! `--publish` / `--follow` of the time series through a real mosquitto, headless on both
//! sides: the follower's stored series equal the publisher's sample for sample (both exported
//! with `--export-series`); a follower that joins late starts from a keyframe and then equals
//! the publisher's tail; a broker restarted mid-stream is survived by both, and the follower
//! reports the gap; a follower with no publisher waits and says so; a corrupt message and one
//! of a newer protocol version are counted, not fatal.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use common::follower::Follower;
use common::mosquitto::Broker;

fn dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("vizdeck_pubfollow_{}_{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn vizdeck() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_vizdeck"));
    c.args(["--headless", "--no-settings", "--size", "320x200"]);
    c
}

/// A headless follower of `url` writing `{name}.json` and `{name}.csv` in `d`, once it has
/// subscribed.
fn spawn_follower(url: &str, d: &Path, name: &str) -> Follower {
    let mut c = vizdeck();
    c.args([
        "--scene",
        "timeseries",
        "--follow",
        url,
        "--frames",
        "1000000",
    ])
    .arg("--report")
    .arg(d.join(format!("{name}.json")))
    .arg("--export-series")
    .arg(d.join(format!("{name}.csv")))
    .stdout(Stdio::null());
    Follower::spawn(c)
}

/// Stops a follower after the broker has had time to deliver everything published (QoS 1 on
/// loopback), and reads its report.
fn stop_follower(f: Follower, d: &Path, name: &str) -> serde_json::Value {
    std::thread::sleep(Duration::from_secs(2));
    let (ok, err) = f.stop();
    assert!(ok, "{name} failed: {err}");
    report(&d.join(format!("{name}.json")))
}

/// A headless publisher to `url`: `frames` frames (`realtime`: paced at 60 a second), writing
/// `p.json` and `p.csv` in `d`.
fn spawn_publisher(url: &str, d: &Path, frames: u32, realtime: bool) -> Child {
    let mut c = vizdeck();
    c.args(["--scene", "timeseries", "--publish", url])
        .args(["--frames", &frames.to_string()])
        .arg("--report")
        .arg(d.join("p.json"))
        .arg("--export-series")
        .arg(d.join("p.csv"));
    if realtime {
        c.arg("--realtime");
    }
    c.stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("vizdeck")
}

fn finish(child: Child, what: &str) -> Output {
    let out = child.wait_with_output().expect("wait");
    assert!(
        out.status.success(),
        "{what} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn report(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("report")).expect("json")
}

/// The exported samples by series: (time, value) strings in storage order.
fn series(path: &Path) -> BTreeMap<String, Vec<(String, String)>> {
    let mut r = csv::Reader::from_path(path).expect("csv");
    let mut out: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    for rec in r.records() {
        let rec = rec.expect("row");
        out.entry(rec[0].to_string())
            .or_default()
            .push((rec[1].to_string(), rec[2].to_string()));
    }
    out
}

#[test]
#[ignore = "needs mosquitto: run through `cargo xtask test`"]
fn follower_equals_publisher_sample_for_sample() {
    let mut broker = Broker::new("pf_same");
    broker.start();
    let d = dir("same");
    let url = format!("mqtt://127.0.0.1:{}/vz/same", broker.port);
    // The follower is subscribed before the publisher's first keyframe.
    let follower = spawn_follower(&url, &d, "f");
    // Paced (10 s): on a busy machine an unpaced publisher outruns the broker's acknowledgements
    // and its flush at the end.
    finish(spawn_publisher(&url, &d, 600, true), "publisher");
    let f = stop_follower(follower, &d, "f");
    let p = report(&d.join("p.json"));
    assert_eq!(p["publish"]["dropped"], 0, "{}", p["publish"]);
    assert_eq!(
        f["follow"]["scenes"]["timeseries"]["gaps"], 0,
        "{}",
        f["follow"]
    );
    assert_eq!(f["follow"]["scenes"]["timeseries"]["at_frame"], 599);
    let (ps, fs) = (series(&d.join("p.csv")), series(&d.join("f.csv")));
    // 600 frames of the default synthetic source: 4 series × 50,000 samples/s × 10 s.
    assert_eq!(ps.len(), 4);
    for (name, samples) in &ps {
        assert_eq!(samples.len(), 500_001, "{name}");
    }
    assert!(
        ps == fs,
        "the follower's series differ from the publisher's"
    );
    let lag = &f["follow"]["lag_ms"];
    assert!(lag["messages"].as_u64().unwrap() >= 600, "{lag}");
}

#[test]
#[ignore = "needs mosquitto: run through `cargo xtask test`"]
fn a_late_follower_starts_from_a_keyframe() {
    let mut broker = Broker::new("pf_late");
    broker.start();
    let d = dir("late");
    let url = format!("mqtt://127.0.0.1:{}/vz/late", broker.port);
    // 7 s at 60 frames a second; the follower joins 3 s in.
    let publisher = spawn_publisher(&url, &d, 420, true);
    std::thread::sleep(Duration::from_secs(3));
    let follower = spawn_follower(&url, &d, "f");
    finish(publisher, "publisher");
    let f = stop_follower(follower, &d, "f");
    let scene = &f["follow"]["scenes"]["timeseries"];
    assert!(scene["keyframes_used"].as_u64().unwrap() >= 1, "{scene}");
    assert_eq!(scene["at_frame"], 419, "{scene}");
    // Joining from the retained keyframe is not a loss.
    assert_eq!(scene["gaps"], 0, "{scene}");
    let (ps, fs) = (series(&d.join("p.csv")), series(&d.join("f.csv")));
    assert_eq!(ps.keys().collect::<Vec<_>>(), fs.keys().collect::<Vec<_>>());
    for (name, got) in &fs {
        let all = &ps[name];
        // The follower holds the publisher's samples from its first one on, with none
        // missing: the keyframe's window (10 s, here the whole run) and every delta after it.
        let start = all.iter().position(|s| *s == got[0]).unwrap_or_else(|| {
            panic!("{name}: the follower's first sample is not the publisher's")
        });
        assert_eq!(&all[start..], &got[..], "{name}");
        assert_eq!(start, 0, "{name}: the keyframe carries the whole 7 s run");
    }
}

#[test]
#[ignore = "needs mosquitto: run through `cargo xtask test`"]
fn both_sides_survive_a_broker_restart_and_the_follower_reports_the_gap() {
    let mut broker = Broker::new("pf_restart");
    broker.start();
    let d = dir("restart");
    let url = format!("mqtt://127.0.0.1:{}/vz/restart", broker.port);
    let follower = spawn_follower(&url, &d, "f");
    // 15 s at 60 frames a second; the broker is down from 3 s to 10 s, longer than the
    // publisher's queue holds (256 messages, 4.3 s): messages are lost.
    let publisher = spawn_publisher(&url, &d, 900, true);
    std::thread::sleep(Duration::from_secs(3));
    broker.stop();
    std::thread::sleep(Duration::from_secs(7));
    broker.start();
    finish(publisher, "publisher");
    let f = stop_follower(follower, &d, "f");
    let p = report(&d.join("p.json"));
    assert!(
        p["publish"]["connects"].as_u64().unwrap() >= 2,
        "{}",
        p["publish"]
    );
    let follow = &f["follow"];
    assert!(follow["connects"].as_u64().unwrap() >= 2, "{follow}");
    let scene = &follow["scenes"]["timeseries"];
    assert!(
        scene["gaps"].as_u64().unwrap() >= 1,
        "the gap is reported: {scene}"
    );
    assert!(scene["keyframes_used"].as_u64().unwrap() >= 2, "{scene}");
    assert_eq!(scene["at_frame"], 899, "{scene}");
    // After the gap the follower resumed from a keyframe: its newest 10 s (the keyframe's
    // window) equal the publisher's.
    let (ps, fs) = (series(&d.join("p.csv")), series(&d.join("f.csv")));
    for (name, all) in &ps {
        let got = &fs[name];
        let tail = 50_000 * 4;
        assert_eq!(&all[all.len() - tail..], &got[got.len() - tail..], "{name}");
    }
}

#[test]
#[ignore = "needs mosquitto: run through `cargo xtask test`"]
fn a_follower_without_publisher_waits_and_bad_messages_are_counted() {
    let mut broker = Broker::new("pf_wait");
    broker.start();
    let d = dir("wait");
    let url = format!("mqtt://127.0.0.1:{}/vz/wait", broker.port);
    let follower = spawn_follower(&url, &d, "f");
    // A corrupt message, and one of protocol version 9.
    let publish = |payload: &[u8]| {
        let path = d.join("payload.bin");
        std::fs::write(&path, payload).unwrap();
        let st = Command::new("mosquitto_pub")
            .args(["-h", "127.0.0.1", "-p", &broker.port.to_string()])
            .args(["-t", "vz/wait/timeseries/delta", "-q", "1", "-f"])
            .arg(&path)
            .status()
            .expect("mosquitto_pub");
        assert!(st.success());
    };
    publish(b"VZDK\x01\x00\x00\xc1\xc1garbage");
    publish(b"VZDK\x09\x00\x00whatever");
    std::thread::sleep(Duration::from_millis(500));
    let (ok, err) = follower.stop();
    // Nothing was followed: the run fails, saying why (the newer version first).
    assert!(!ok);
    assert!(
        err.contains("protocol version 9") && err.contains("update it"),
        "{err}"
    );
    let f = report(&d.join("f.json"));
    assert_eq!(f["follow"]["corrupt"], 1, "{}", f["follow"]);
    assert_eq!(f["follow"]["newer_version"], 9);
    assert_eq!(f["follow"]["messages_applied"], 0);
    // With no message at all, the notice says it waits for a publisher.
    let d2 = dir("wait2");
    let follower = spawn_follower(&format!("{url}/none"), &d2, "f");
    let (ok, err) = follower.stop();
    assert!(!ok);
    assert!(
        err.contains("waiting for a publisher on vz/wait/none"),
        "{err}"
    );
}

#[test]
#[ignore = "needs mosquitto: run through `cargo xtask test`"]
fn a_still_publisher_is_alive_and_one_that_has_gone_is_said_to_be() {
    let mut broker = Broker::new("pf_alive");
    broker.start();
    let d = dir("alive");
    let url = format!("mqtt://127.0.0.1:{}/vz/alive", broker.port);
    let first = spawn_follower(&url, &d, "f1");
    // A point cloud standing still: after its first messages it has nothing to send but the
    // heartbeat. 8 s at 60 frames a second.
    let publisher = vizdeck()
        .args(["--scene", "pointcloud", "--pointcloud", "synthetic:100000"])
        .args(["--publish", &url, "--realtime", "--frames", "480"])
        .arg("--report")
        .arg(d.join("p.json"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("vizdeck");
    std::thread::sleep(Duration::from_secs(5));
    // Stopped while the publisher still runs: alive, nothing to say.
    let (ok, err) = first.stop();
    assert!(ok, "{err}");
    let f1 = report(&d.join("f1.json"));
    assert_eq!(
        f1["follow"]["notice"],
        serde_json::Value::Null,
        "{}",
        f1["follow"]
    );
    assert_eq!(
        f1["scene"], "pointcloud",
        "the follower shows the publisher's scene"
    );
    let second = spawn_follower(&url, &d, "f2");
    finish(publisher, "publisher");
    // The publisher has ended: after SILENT_S without even a heartbeat, the follower says so.
    std::thread::sleep(Duration::from_secs(5));
    let (ok, err) = second.stop();
    assert!(ok, "{err}");
    let f2 = report(&d.join("f2.json"));
    let notice = f2["follow"]["notice"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(notice.contains("has sent nothing for"), "{}", f2["follow"]);
}

#[test]
#[ignore = "needs mosquitto: run through `cargo xtask test`"]
fn a_second_publisher_is_shown_and_ignored_while_the_first_runs() {
    let mut broker = Broker::new("pf_two");
    broker.start();
    let d = dir("two");
    let url = format!("mqtt://127.0.0.1:{}/vz/two", broker.port);
    let follower = spawn_follower(&url, &d, "f");
    // The first: the time series for 6 s; the second, 2 s later, another scene for 3 s.
    let first = spawn_publisher(&url, &d, 360, true);
    std::thread::sleep(Duration::from_secs(2));
    let second = vizdeck()
        .args(["--scene", "particles", "--publish", &url, "--realtime"])
        .args(["--frames", "180", "--report"])
        .arg(d.join("p2.json"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("vizdeck");
    finish(second, "second publisher");
    finish(first, "first publisher");
    let f = stop_follower(follower, &d, "f");
    let (p1, p2) = (report(&d.join("p.json")), report(&d.join("p2.json")));
    let follow = &f["follow"];
    assert_eq!(follow["publisher"], p1["publish"]["publisher"], "{follow}");
    assert_eq!(
        follow["other_publisher"], p2["publish"]["publisher"],
        "{follow}"
    );
    assert!(
        follow["other_publisher_messages"].as_u64() > Some(0),
        "{follow}"
    );
    assert_eq!(follow["publisher_switches"], 0, "{follow}");
    assert_eq!(
        f["scene"], "timeseries",
        "the follower stayed on the first's scene"
    );
    // The second heard the first's hello.
    assert_eq!(p2["publish"]["other_publisher"], p1["publish"]["publisher"]);
}
