//! `--publish` / `--follow` of the particle scene. In process (lavapipe only): a follower scene
//! fed a publisher scene's messages — through the wire format and the follower's ordering —
//! holds the publisher's state to the bit after every frame, from the first keyframe, after a
//! late join from a keyframe read back from the GPU, across flocking changes, a restart with
//! another count, and with several publisher frames run in one follower frame. Through a real
//! mosquitto (ignored unless run by `cargo xtask test`): headless publisher and follower
//! binaries report the same kinetic energy at the same steps, from the start and after a late
//! join.
//!
//! Why equality is exact: a step is a per-particle function of the state and the step's
//! parameters, which the follower receives verbatim; flocking sums and the statistics are
//! integer (fixed-point) sums, independent of the order the atomics ran in. The same adapter
//! running the same shader on the same input gives the same bits, so the kinetic energies are
//! compared with `==` (their fixed-point quantum is 2^-20 per particle: a tolerance of a few
//! quanta would hide nothing but a real divergence, which grows over steps).

#![allow(clippy::disallowed_methods)] // tests drive the GPU with their own submits

use crate::common;

use common::follower::Follower;
use common::particles::{DT, prepare_and_compute, step_ctx};

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use vizdeck::gpu::Gpu;
use vizdeck::gpu::readback::{Consumer, ReadbackRing};
use vizdeck::publish::follow::Sequencer;
use vizdeck::publish::protocol::{Body, Envelope, decode, encode};
use vizdeck::scene::Scene;
use vizdeck::scene::particles::{Mode, Particles, StepRate};

/// One deck frame of `scene` as the deck runs it, with `ticks` clock ticks: fixed updates, the
/// follower's messages, the publisher's body (a keyframe when `key`), prepare, compute,
/// readback copies, submit, and the readbacks that have arrived (polled, not waited for).
fn frame(
    gpu: &Gpu,
    scene: &mut Particles,
    ring: &mut ReadbackRing,
    index: u64,
    ticks: u32,
    incoming: Vec<Envelope>,
    key: bool,
) -> Option<Body> {
    for _ in 0..ticks {
        scene.fixed_update(DT);
    }
    for m in incoming {
        scene.follow(m.publisher, m.body, true);
    }
    let body = scene.publish(key);
    let ctx = step_ctx(index, ticks);
    let mut enc = prepare_and_compute(gpu, scene, &ctx, "test");
    scene.record_readbacks(&gpu.device, &mut enc, ring, Consumer::Scene(1));
    gpu.queue.submit([enc.finish()]);
    ring.after_submit();
    gpu.wait_idle();
    ring.poll(&gpu.device, |a| scene.readback_arrived(&a));
    body
}

/// The publisher's side of the link: envelopes numbered as `Publisher::frame` numbers them,
/// keyframes asked for every `key_every` frames until one comes.
struct Pub {
    scene: Particles,
    ring: ReadbackRing,
    seq: u64,
    key_due: bool,
    since_key: u64,
    key_every: u64,
    keys_with_state: usize,
}

impl Pub {
    fn new(gpu: &Gpu, count: u32, mode: Mode, key_every: u64) -> Pub {
        let mut scene = Particles::with_mode(gpu, count, mode, 42);
        scene.set_step_rate(StepRate::Hz60);
        // The statistics every 4th frame, as on a CPU adapter.
        scene.sim_mut().set_stats_every(4);
        Pub {
            scene,
            ring: ReadbackRing::new("test:pub", 16),
            seq: 0,
            key_due: true,
            since_key: 0,
            key_every,
            keys_with_state: 0,
        }
    }

    /// Frame `i` (2 ticks: one step at 60 Hz); the message it sent, encoded and decoded.
    fn frame(&mut self, gpu: &Gpu, i: u64) -> Option<Envelope> {
        self.since_key += 1;
        if self.since_key >= self.key_every {
            self.key_due = true;
        }
        let body = frame(
            gpu,
            &mut self.scene,
            &mut self.ring,
            i,
            2,
            Vec::new(),
            self.key_due,
        )?;
        if body.is_keyframe() {
            self.key_due = false;
            self.since_key = 0;
            if let Body::ParticlesKey(k) = &body
                && k.state.is_some()
            {
                self.keys_with_state += 1;
            }
        }
        let e = Envelope {
            publisher: 7,
            seq: self.seq,
            frame: i,
            stream_s: i as f64 / 60.0,
            sent_unix_ns: 0,
            scene: "particles".into(),
            body,
        };
        self.seq += 1;
        Some(decode(&encode(&e).expect("encode")).expect("decode"))
    }
}

/// A follower scene and its ordering of the messages.
struct Fol {
    scene: Particles,
    ring: ReadbackRing,
    seq: Sequencer,
    frame: u64,
}

impl Fol {
    fn new(gpu: &Gpu) -> Fol {
        // Another count, mode and seed than the publisher's: the keyframe says which.
        let mut scene = Particles::with_mode(gpu, 1000, Mode::Free, 1);
        scene.set_following(true);
        Fol {
            scene,
            ring: ReadbackRing::new("test:fol", 16),
            seq: Sequencer::default(),
            frame: 0,
        }
    }

    /// One follower frame taking `msgs` in.
    fn frame(&mut self, gpu: &Gpu, msgs: Vec<Envelope>) {
        let ready: Vec<Envelope> = msgs
            .into_iter()
            .flat_map(|m| self.seq.accept(m, false))
            .collect();
        frame(
            gpu,
            &mut self.scene,
            &mut self.ring,
            self.frame,
            2,
            ready,
            false,
        );
        self.frame += 1;
    }
}

fn same_state(gpu: &Gpu, p: &Particles, f: &Particles, what: &str) {
    assert_eq!(
        (p.count(), p.mode(), p.sim().steps_total()),
        (f.count(), f.mode(), f.sim().steps_total()),
        "{what}: count, mode, step"
    );
    let (a, b) = (p.read_state(gpu), f.read_state(gpu));
    let differ = a.iter().zip(&b).filter(|(x, y)| x != y).count();
    assert!(
        differ == 0,
        "{what}: {differ} of {} particles differ",
        a.len()
    );
}

/// (step, kinetic energy) pairs both scenes reduced at; asserts they agree and returns how
/// many were compared.
fn same_energies(p: &Particles, f: &Particles, what: &str) -> usize {
    let theirs: Vec<(u64, f64)> = f.sim().stats_history().collect();
    let mut n = 0;
    for (step, ke) in p.sim().stats_history() {
        if let Some(&(_, k)) = theirs.iter().find(|(s, _)| *s == step) {
            assert_eq!(ke, k, "{what}: kinetic energy at step {step}");
            n += 1;
        }
    }
    n
}

/// From the publisher's first frame, one message a follower frame: the state is the
/// publisher's after every frame; through flocking changes (grid mode) and a restart with
/// another count. Then messages three at a time: the follower runs several publisher frames
/// in one of its frames (its fused splat lands on other steps) and still holds the same bits.
#[test]
fn follower_holds_the_publishers_state_step_for_step() {
    let gpu = common::gpu();
    let mut p = Pub::new(&gpu, 5000, Mode::Grid, 60);
    let mut f = Fol::new(&gpu);
    for i in 0..40 {
        if i == 10 {
            // Flocking constants changed on the publisher (the side panel's sliders).
            let mut c = *p.scene.controls();
            c.radius *= 0.8;
            c.max_speed = 2.5;
            c.cohesion = 3.0;
            p.scene.set_controls(c);
            p.scene.burst();
        }
        if i == 25 {
            p.scene.request_reconfigure(3001, Mode::Free);
        }
        let m = p.frame(&gpu, i);
        f.frame(&gpu, m.into_iter().collect());
        same_state(&gpu, &p.scene, &f.scene, &format!("frame {i}"));
    }
    assert_eq!(p.scene.count(), 3001);
    let mut batch = Vec::new();
    for i in 40..100 {
        batch.extend(p.frame(&gpu, i));
        if batch.len() == 3 {
            f.frame(&gpu, std::mem::take(&mut batch));
        }
    }
    f.frame(&gpu, batch);
    // Whatever is still queued (a frame ends after a reduction): run it.
    for _ in 0..10 {
        f.frame(&gpu, Vec::new());
    }
    same_state(&gpu, &p.scene, &f.scene, "after batches");
    let n = same_energies(&p.scene, &f.scene, "batches");
    assert!(n >= 5, "{n} common reductions");
    assert!(p.keys_with_state >= 1, "a keyframe with state was sent");
    let m = f.scene.metrics();
    assert_eq!(m["share"]["in_step"], true, "{m}");
    assert_eq!(m["share"]["state_uploads"], 0, "{m}");
    assert_eq!(m["share"]["restarts"], 1, "{m}");
}

/// A follower that joins after 70 frames waits for the next keyframe, which carries the state
/// read back from the publisher's GPU and the frames since; it then holds the publisher's
/// state. The keyframes before the join are not seen (as if the retained one was missed).
#[test]
fn late_follower_resumes_from_a_state_keyframe() {
    let gpu = common::gpu();
    for mode in [Mode::Free, Mode::Grid] {
        let mut p = Pub::new(&gpu, 4099, mode, 60);
        let mut f = Fol::new(&gpu);
        for i in 0..70 {
            p.frame(&gpu, i);
        }
        let mut joined = None;
        for i in 70..160 {
            let m = p.frame(&gpu, i);
            f.frame(&gpu, m.into_iter().collect());
            if joined.is_none() && f.scene.metrics()["share"]["in_step"] == true {
                joined = Some(i);
            }
            if joined.is_some() {
                same_state(&gpu, &p.scene, &f.scene, &format!("{mode:?} frame {i}"));
            }
        }
        assert!(
            joined.is_some_and(|j| j < 130),
            "{mode:?}: joined at {joined:?}"
        );
        let m = f.scene.metrics();
        assert_eq!(m["share"]["state_uploads"], 1, "{m}");
        let n = same_energies(&p.scene, &f.scene, &format!("{mode:?}"));
        assert!(n >= 3, "{mode:?}: {n} common reductions");
    }
}

/// Odd input never panics the follower: a keyframe of more particles than the adapter holds is
/// clamped (and said), a state of the wrong size does not decode, a delta out of step waits
/// for a keyframe.
#[test]
fn odd_input_is_clamped_or_refused() {
    use vizdeck::publish::protocol::{
        Bytes, ParticleConfig, ParticleFrame, ParticlesDelta, ParticlesKeyframe,
    };
    let gpu = common::gpu();
    let mut f = Fol::new(&gpu);
    let huge = u32::MAX;
    let key = |epoch: u64, count: u32, state: Option<Vec<u8>>, step: u64| Envelope {
        publisher: 9,
        seq: 0,
        frame: 0,
        stream_s: 0.0,
        sent_unix_ns: 0,
        scene: "particles".into(),
        body: Body::ParticlesKey(ParticlesKeyframe {
            view: None,
            config: ParticleConfig {
                epoch,
                count,
                mode: "free".into(),
                seed: 3,
            },
            step,
            flocking: (0.1, 3.0),
            sim_time_s: 0.0,
            state: state.map(Bytes),
            frames: Vec::new(),
        }),
    };
    // A state of the wrong size: refused by decode, one line.
    let bad = encode(&key(0, 10, Some(vec![0; 33]), 5)).expect("encode");
    let err = decode(&bad).expect_err("wrong size").to_string();
    assert!(err.contains("33 bytes for 10 particles"), "{err}");
    // More particles than the adapter holds: clamped, said.
    f.frame(&gpu, vec![key(0, huge, None, 0)]);
    let max = vizdeck::scene::particles::max_count(&gpu.device.limits(), Mode::Free);
    assert_eq!(f.scene.count(), max);
    let notice = f.scene.problem().unwrap_or_default();
    assert!(notice.contains("clamped"), "{notice}");
    // The publisher restarted with a small count, then a delta that skips steps: out of
    // step, no panic.
    let mut k = key(1, 100, None, 0);
    k.seq = 1;
    f.frame(&gpu, vec![k]);
    assert_eq!(f.scene.count(), 100);
    let delta = Envelope {
        publisher: 9,
        seq: 2,
        frame: 1,
        stream_s: 0.0,
        sent_unix_ns: 0,
        scene: "particles".into(),
        body: Body::ParticlesDelta(ParticlesDelta {
            view: None,
            restart: None,
            frame: ParticleFrame {
                step: 77,
                flocking: None,
                params: Bytes(vec![0; 208]),
                stats: false,
            },
        }),
    };
    f.frame(&gpu, vec![decode(&encode(&delta).expect("e")).expect("d")]);
    let m = f.scene.metrics();
    assert_eq!(m["share"]["in_step"], false, "{m}");
    assert!(
        f.scene
            .problem()
            .unwrap_or_default()
            .contains("out of step"),
        "{m}"
    );
    // Step parameters that are not whole steps do not decode.
    let mut odd = delta;
    if let Body::ParticlesDelta(d) = &mut odd.body {
        d.frame.params = Bytes(vec![0; 207]);
    }
    assert!(decode(&encode(&odd).expect("e")).is_err());
    assert!(
        gpu.error_messages().is_empty(),
        "{:?}",
        gpu.error_messages()
    );
}

// ---- Through mosquitto, headless binaries --------------------------------------------------

fn dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("vizdeck_pubpart_{}_{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn vizdeck(report: &Path) -> Command {
    vizdeck_with(report, None)
}

/// [`vizdeck`] with the settings file `settings` (its saved particle view) instead of none.
fn vizdeck_with(report: &Path, settings: Option<&Path>) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_vizdeck"));
    match settings {
        Some(p) => c.arg("--settings").arg(p),
        None => c.arg("--no-settings"),
    };
    c.args(["--headless", "--size", "320x200", "--scene", "particles"])
        .arg("--report")
        .arg(report)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    c
}

/// A headless follower of `url`, run until SIGTERM; returns once it has subscribed.
fn spawn_follower(url: &str, report: &Path) -> Follower {
    let mut c = vizdeck(report);
    c.args(["--follow", url, "--frames", "100000"]);
    Follower::spawn(c)
}

fn report(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("report")).expect("json")
}

/// The follower's and the publisher's kinetic energies at the steps both reduced at (they
/// must agree to the bit); returns how many were compared.
fn compare(p: &serde_json::Value, f: &serde_json::Value) -> usize {
    let hist = |r: &serde_json::Value| -> Vec<(u64, f64)> {
        r["scenes"]["particles"]["kinetic_energy_history"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|e| Some((e[0].as_u64()?, e[1].as_f64()?)))
                    .collect()
            })
            .unwrap_or_default()
    };
    let (hp, hf) = (hist(p), hist(f));
    let mut n = 0;
    for (step, ke) in &hp {
        if let Some((_, k)) = hf.iter().find(|(s, _)| s == step) {
            assert_eq!(ke, k, "kinetic energy at step {step}");
            n += 1;
        }
    }
    n
}

/// Publisher and follower binaries through mosquitto: the follower (started first, or
/// `late_s` after the publisher) reports the publisher's kinetic energy at the same steps.
fn run_pair(tag: &str, frames: u32, late_s: Option<f64>) -> (serde_json::Value, serde_json::Value) {
    run_pair_with(tag, frames, late_s, None)
}

/// [`run_pair`] with the publisher reading the settings file `settings`.
fn run_pair_with(
    tag: &str,
    frames: u32,
    late_s: Option<f64>,
    settings: Option<&Path>,
) -> (serde_json::Value, serde_json::Value) {
    let mut broker = common::mosquitto::Broker::new(tag);
    broker.start();
    let url = format!("mqtt://127.0.0.1:{}/vz/{tag}", broker.port);
    let d = dir(tag);
    let (fp, pp) = (d.join("f.json"), d.join("p.json"));
    let mut follower = None;
    if late_s.is_none() {
        follower = Some(spawn_follower(&url, &fp));
    }
    let publisher = vizdeck_with(&pp, settings)
        .args([
            "--publish",
            &url,
            "--frames",
            &frames.to_string(),
            "--realtime",
        ])
        .spawn()
        .expect("vizdeck");
    if let Some(s) = late_s {
        std::thread::sleep(Duration::from_secs_f64(s));
        follower = Some(spawn_follower(&url, &fp));
    }
    let out = publisher.wait_with_output().expect("publisher");
    assert!(
        out.status.success(),
        "publisher: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Loopback QoS 1: everything has arrived well within this.
    std::thread::sleep(Duration::from_secs(3));
    let (ok, err) = follower.expect("follower").stop();
    assert!(ok, "follower: {err}");
    let (p, f) = (report(&pp), report(&fp));
    let _ = std::fs::remove_dir_all(&d);
    (p, f)
}

#[test]
#[ignore = "needs mosquitto: run through `cargo xtask test`"]
fn follower_binary_reports_the_publishers_kinetic_energy() {
    let (p, f) = run_pair("p", 300, None);
    let (ps, fs) = (&p["scenes"]["particles"], &f["scenes"]["particles"]);
    // The follower ran every step the publisher ran.
    assert_eq!(ps["steps"], fs["steps"], "steps\n{ps}\n{fs}");
    let n = compare(&p, &f);
    assert!(n >= 5, "{n} common reductions\n{ps}\n{fs}");
    assert_eq!(fs["share"]["in_step"], true, "{fs}");
    eprintln!(
        "publisher: {} bytes sent, last keyframe {} bytes; {n} energies compared",
        p["publish"]["bytes_sent"], p["publish"]["last_keyframe_bytes"]
    );
}

#[test]
#[ignore = "needs mosquitto: run through `cargo xtask test`"]
fn late_follower_binary_resumes_from_a_keyframe() {
    let (p, f) = run_pair("late", 600, Some(3.0));
    let (ps, fs) = (&p["scenes"]["particles"], &f["scenes"]["particles"]);
    assert_eq!(ps["steps"], fs["steps"], "steps\n{ps}\n{fs}");
    assert!(
        fs["share"]["state_uploads"].as_u64() >= Some(1),
        "a state keyframe was used: {fs}"
    );
    let n = compare(&p, &f);
    assert!(n >= 5, "{n} common reductions\n{ps}\n{fs}");
}

#[test]
#[ignore = "needs mosquitto: run through `cargo xtask test`"]
fn an_attached_follower_shows_the_publishers_view() {
    // The publisher's saved view: coloured by age, larger sprites, the camera standing still.
    let d = dir("view_settings");
    let settings = d.join("settings.json");
    std::fs::write(
        &settings,
        r#"{"version": 1, "scenes": {"particles": {"color_by": "Age", "sprite_size": 0.01, "auto_rotate": false}}}"#,
    )
    .unwrap();
    let (p, f) = run_pair_with("view", 120, None, Some(&settings));
    let (pv, fv) = (
        &p["scenes"]["particles"]["view"],
        &f["scenes"]["particles"]["view"],
    );
    assert_eq!(pv["color_by"], "age", "{pv}");
    assert_eq!(pv["auto_rotate"], false, "{pv}");
    assert_eq!(pv["sprite_size"], 0.01f32 as f64, "{pv}");
    assert_eq!(pv, fv, "the follower shows the publisher's view");
    let _ = std::fs::remove_dir_all(&d);
}
