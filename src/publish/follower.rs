//! `--follow URL`: the publisher's messages, put in order per scene ([`Sequencer`]), are applied
//! to the follower's scenes ([`Scene::follow`]), which show the publisher's logical frame (its
//! data and stream time, not the follower's clock). Attached, the follower shows the scene and
//! the view the publisher shows; detached, the user explores locally while the data keeps
//! arriving, and re-attaches with one click.
//!
//! Lag: for each message applied, the follower's present time less the publisher's send time
//! (both wall clocks: exact on one machine), in ms, and in the publisher's frames (the lag over
//! the publisher's frame interval, measured from the messages).
//!
//! Faults, one notice each and nothing unbounded: no publisher yet ("waiting"), a broker down
//! (the link reconnects; the sequence gap is counted and the next keyframe resumes), a newer
//! protocol version or a corrupt message (counted, the first named), another publisher on the
//! topic (ignored and shown; followed instead once the first has been silent for
//! [`SWITCH_AFTER_S`]), a follower that falls behind (the link drops messages; the sequencer
//! waits for the next keyframe).

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::follow::{MAX_HELD, Sequencer};
use super::link::{Heard, Link};
use super::protocol::{DecodeError, Envelope};
use super::publisher::{human_bytes, unix_ns, wrapped};
use crate::scene::Scene;
use crate::scene::timeseries::latency::Latency;

/// A followed publisher silent this long gives way to another one heard on the topic, s.
pub const SWITCH_AFTER_S: f64 = 5.0;
/// A followed publisher silent this long is said to be so (it sends a heartbeat every second).
pub const SILENT_S: f64 = 3.0;

/// One publisher scene's ordering and the messages ready for the scene.
struct Stream {
    seq: Sequencer,
    /// Messages in order, not yet applied (the scene is not shown or not created yet); from the
    /// last keyframe on.
    ready: Vec<Envelope>,
}

impl Stream {
    fn new() -> Stream {
        Stream {
            seq: Sequencer::default(),
            ready: Vec::new(),
        }
    }
}

/// A running follower.
pub struct Follower {
    link: Link,
    url: String,
    /// The publisher followed (the first heard; another once it has been silent
    /// [`SWITCH_AFTER_S`]).
    followed: Option<u64>,
    /// When the followed publisher was last heard live (not a retained message, which may be
    /// from a publisher that has ended; publishers send a heartbeat at least every second).
    live_at: Option<Instant>,
    /// Messages of other publishers on the topic (ignored), and the last one's id.
    others: (u64, Option<u64>),
    /// (when, messages received) at the start of the current rate window, and the rate.
    received_mark: (Instant, u64),
    received_per_s: f64,
    streams: HashMap<String, Stream>,
    /// A message taken by [`wait`](Follower::wait), not yet polled.
    early: Option<Heard>,
    /// Show the publisher's scene and view (`false`: detached, exploring locally).
    pub attached: bool,
    /// The scene of the newest message.
    publisher_scene: Option<String>,
    /// Send times (publisher wall clock, ns) of the messages applied since the last present.
    unpresented: Vec<i64>,
    /// Publisher send → follower present, per message applied.
    lag: Option<Latency>,
    /// The last lag, ms.
    last_lag_ms: f64,
    /// Publisher frames per second, from the messages applied (frames over send times).
    publisher_fps: f64,
    /// (frame, send time ns) of the last message applied.
    last_applied: Option<(u64, i64)>,
    applied: u64,
    corrupt: u64,
    first_corrupt: Option<String>,
    newer: Option<u16>,
    /// Publisher switches (the followed one went silent, another took over).
    switches: u64,
    /// (publisher, seq) of the last retained message taken: its age is not a lag.
    retained: Option<(u64, u64)>,
    /// When a keyframe was last asked for.
    asked_at: Option<Instant>,
}

impl Follower {
    /// Connects to `url` (in the background) and subscribes to its keyframes and deltas.
    ///
    /// # Errors
    ///
    /// [`Link::follow`]'s one line (the URL does not parse, TLS set-up failed).
    pub fn start(url: &str) -> Result<Follower, String> {
        Ok(Follower {
            link: Link::follow(url)?,
            url: url.to_string(),
            followed: None,
            live_at: None,
            others: (0, None),
            received_mark: (Instant::now(), 0),
            received_per_s: 0.0,
            streams: HashMap::new(),
            early: None,
            attached: true,
            publisher_scene: None,
            unpresented: Vec::new(),
            lag: Latency::new(),
            last_lag_ms: 0.0,
            publisher_fps: 0.0,
            last_applied: None,
            applied: 0,
            corrupt: 0,
            first_corrupt: None,
            newer: None,
            switches: 0,
            retained: None,
            asked_at: None,
        })
    }

    /// Waits at most `timeout` for a message (a headless follower draws when data arrives,
    /// not faster than its frame clock).
    pub fn wait(&mut self, timeout: Duration) {
        if self.early.is_none() {
            self.early = self.link.recv_timeout(timeout);
        }
    }

    /// Takes every message that arrived and puts each scene's in order. Never waits.
    pub fn poll(&mut self) {
        let dt = self.received_mark.0.elapsed().as_secs_f64();
        if dt >= 1.0 {
            let n = self.link.stats().received.load(Ordering::Relaxed);
            self.received_per_s = n.saturating_sub(self.received_mark.1) as f64 / dt;
            self.received_mark = (Instant::now(), n);
        }
        let mut next = self.early.take();
        while let Some(heard) = next.take().or_else(|| self.link.try_recv()) {
            match heard {
                Ok((e, retained)) => self.accept(e, retained),
                Err(DecodeError::Newer(v)) => self.newer = Some(v),
                Err(e) => {
                    self.corrupt += 1;
                    self.first_corrupt.get_or_insert_with(|| e.to_string());
                }
            }
        }
        // Deltas held while waiting for a keyframe (joined after the retained one, or lost
        // messages): ask for one now rather than wait for the periodic one (once a second).
        let waiting = self
            .streams
            .values()
            .any(|s| s.seq.waiting_for_keyframe() && s.seq.held() > 0);
        if waiting
            && self
                .asked_at
                .is_none_or(|t| t.elapsed() >= Duration::from_secs(1))
        {
            self.link.request_keyframe();
            self.asked_at = Some(Instant::now());
        }
    }

    fn accept(&mut self, e: Envelope, retained: bool) {
        match self.followed {
            None => self.followed = Some(e.publisher),
            Some(p) if p != e.publisher => {
                let quiet = self
                    .live_at
                    .is_none_or(|t| t.elapsed().as_secs_f64() >= SWITCH_AFTER_S);
                if quiet && !retained {
                    // The followed publisher went quiet (ended), or was only the retained
                    // keyframe of one that has ended: follow this one, from its next keyframe.
                    self.streams.clear();
                    self.followed = Some(e.publisher);
                    self.last_applied = None;
                    self.publisher_fps = 0.0;
                    self.switches += 1;
                } else {
                    self.others.0 += 1;
                    self.others.1 = Some(e.publisher);
                    return;
                }
            }
            Some(_) => {}
        }
        if retained {
            self.retained = Some((e.publisher, e.seq));
        } else {
            self.live_at = Some(Instant::now());
        }
        let stream = self
            .streams
            .entry(e.scene.clone())
            .or_insert_with(Stream::new);
        self.publisher_scene = Some(e.scene.clone());
        for m in stream.seq.accept(e, retained) {
            if m.body.is_keyframe() {
                // Everything before a keyframe is in it.
                stream.ready.clear();
            }
            stream.ready.push(m);
        }
        if stream.ready.len() > MAX_HELD {
            // A scene not shown for a long time with no keyframe since: wait for the next one.
            stream.ready.clear();
            stream.seq = Sequencer::default();
        }
    }

    /// Messages applied to scenes so far.
    pub fn applied(&self) -> u64 {
        self.applied
    }

    /// The scene the publisher shows (the newest message's), while attached.
    pub fn wanted_scene(&self) -> Option<&str> {
        if self.attached {
            self.publisher_scene.as_deref()
        } else {
            None
        }
    }

    /// Applies to `scene` the messages ready for it, in order.
    pub fn apply(&mut self, scene: &mut dyn Scene) {
        let Some(stream) = self.streams.get_mut(scene.id()) else {
            return;
        };
        for m in stream.ready.drain(..) {
            if let Some((frame, sent)) = self.last_applied
                && m.frame > frame
                && m.sent_unix_ns > sent
            {
                let fps = (m.frame - frame) as f64 / ((m.sent_unix_ns - sent) as f64 * 1e-9);
                self.publisher_fps = if self.publisher_fps > 0.0 {
                    0.9 * self.publisher_fps + 0.1 * fps
                } else {
                    fps
                };
            }
            self.last_applied = Some((m.frame, m.sent_unix_ns));
            if matches!(m.body, super::protocol::Body::Heartbeat) {
                // Nothing to show: the publisher is alive and its scene stands still.
                continue;
            }
            if self.retained != Some((m.publisher, m.seq)) {
                self.unpresented.push(m.sent_unix_ns);
            }
            self.applied += 1;
            scene.follow(m.publisher, m.body, self.attached);
        }
    }

    /// The frame that applied the last messages was presented at `at`: their lag.
    pub fn presented(&mut self, at: Instant) {
        if self.unpresented.is_empty() {
            return;
        }
        let present_ns = unix_ns().saturating_sub(at.elapsed().as_nanos() as i64);
        for &sent in &self.unpresented {
            if let Some(l) = &mut self.lag {
                l.record(present_ns, sent);
            }
            self.last_lag_ms = (present_ns - sent) as f64 / 1e6;
        }
        self.unpresented.clear();
    }

    /// Publisher frames the follower is behind (the last lag over the publisher's frame
    /// interval); 0 before two messages were applied.
    pub fn lag_frames(&self) -> f64 {
        (self.last_lag_ms / 1e3 * self.publisher_fps).max(0.0)
    }

    /// What the follower waits for or why it shows nothing, one line; `None` when it follows.
    pub fn notice(&self) -> Option<String> {
        let s = self.link.stats();
        if let Some(v) = self.newer {
            return Some(format!(
                "--follow {}: the publisher sends protocol version {v}; this vizdeck reads \
                 version {}: update it",
                self.url,
                super::protocol::VERSION
            ));
        }
        if !s.connected.load(Ordering::Relaxed) {
            let why = s.error.lock().ok().and_then(|e| e.clone());
            return Some(match why {
                Some(e) => format!("--follow {}: broker unreachable ({e}); retrying", self.url),
                None => format!("--follow {}: connecting", self.url),
            });
        }
        let silent_s = self.live_at.map(|t| t.elapsed().as_secs_f64());
        if self.applied > 0 && silent_s.is_none_or(|s| s >= SILENT_S) {
            return Some(match (silent_s, self.followed) {
                (Some(s), Some(p)) => format!(
                    "--follow {}: the publisher {p:016x} has sent nothing for {s:.0} s (ended, or \
                     cut off): showing its last state",
                    self.url
                ),
                _ => format!(
                    "--follow {}: showing the last keyframe kept by the broker; its publisher is \
                     not sending",
                    self.url
                ),
            });
        }
        if self.applied == 0 {
            let held: usize = self.streams.values().map(|s| s.seq.held()).sum();
            return Some(if held > 0 {
                format!(
                    "--follow {}: waiting for the publisher's next keyframe",
                    self.url
                )
            } else {
                format!(
                    "--follow {}: waiting for a publisher on {}",
                    self.url,
                    self.link.base()
                )
            });
        }
        None
    }

    /// The side panel's section (long lines wrap to the panel).
    pub fn ui(&mut self, ui: &mut egui::Ui) {
        let yellow = |ui: &mut egui::Ui, text: String| {
            ui.add(egui::Label::new(egui::RichText::new(text).color(egui::Color32::YELLOW)).wrap());
        };
        wrapped(ui, format!("Following {}", self.url));
        let notice = self.notice();
        if let Some(n) = &notice {
            yellow(ui, n.clone());
        }
        if let Some(p) = self.followed {
            let at = self
                .publisher_scene
                .as_ref()
                .and_then(|s| self.streams.get(s))
                .and_then(|st| st.seq.at)
                .map_or(String::new(), |(f, t)| format!(", frame {f}, {t:.2} s"));
            wrapped(ui, format!("publisher {p:016x}{at}"));
        }
        let live = self.lag.as_ref().is_some_and(|l| l.messages() > 0) && notice.is_none();
        if live {
            wrapped(
                ui,
                format!(
                    "lag {:.1} ms · {:.1} frames",
                    self.last_lag_ms,
                    self.lag_frames()
                ),
            );
        } else {
            wrapped(ui, "lag –".to_string());
        }
        if let Some(stream) = self
            .publisher_scene
            .as_ref()
            .and_then(|s| self.streams.get(s))
        {
            let q = &stream.seq;
            wrapped(
                ui,
                format!("gaps {} · keyframes used {}", q.gaps, q.keyframes_used),
            );
            if q.waiting_for_keyframe() && self.applied > 0 {
                yellow(ui, "a gap: waiting for the next keyframe".to_string());
            }
        }
        if let (n, Some(other)) = self.others {
            yellow(
                ui,
                format!(
                    "another publisher ({other:016x}) on this topic: {n} message(s) ignored \
                     (followed once this one has been silent {SWITCH_AFTER_S:.0} s)"
                ),
            );
        }
        let s = self.link.stats();
        wrapped(
            ui,
            format!(
                "{:.0} messages/s · received {} · {}",
                self.received_per_s,
                s.received.load(Ordering::Relaxed),
                human_bytes(s.bytes_in.load(Ordering::Relaxed) as f64)
            ),
        );
        if self.corrupt > 0 {
            yellow(
                ui,
                format!(
                    "{} unreadable message(s); first: {}",
                    self.corrupt,
                    self.first_corrupt.as_deref().unwrap_or("")
                ),
            );
        }
        let label = if self.attached {
            "Detach (explore locally)"
        } else {
            "Attach to the publisher's view"
        };
        if ui.button(label).clicked() {
            self.attached = !self.attached;
            if self.attached {
                // The publisher's current view comes with a keyframe, now rather than at its
                // next change.
                self.link.request_keyframe();
            }
        }
    }

    /// Why a run that applied nothing showed nothing, for its exit: the notice, said of the run
    /// (no "retrying": the run is over).
    pub fn failure(&self) -> String {
        let s = self.link.stats();
        if self.newer.is_none() && !s.connected.load(Ordering::Relaxed) {
            let why = s
                .error
                .lock()
                .ok()
                .and_then(|e| e.clone())
                .unwrap_or_else(|| "no answer".into());
            return format!(
                "--follow {}: the broker was unreachable during the run ({why})",
                self.url
            );
        }
        self.notice().unwrap_or_else(|| {
            format!(
                "--follow {}: nothing from a publisher during the run",
                self.url
            )
        })
    }

    /// The report's `follow` object.
    pub fn metrics(&self) -> serde_json::Value {
        let s = self.link.stats();
        let scenes: serde_json::Map<String, serde_json::Value> = self
            .streams
            .iter()
            .map(|(id, st)| {
                let q = &st.seq;
                (
                    id.clone(),
                    serde_json::json!({
                        "publisher": q.publisher().map(|p| format!("{p:016x}")),
                        "gaps": q.gaps,
                        "keyframes_used": q.keyframes_used,
                        "repeated": q.repeated,
                        "dropped_held": q.dropped_held,
                        "waiting_for_keyframe": q.waiting_for_keyframe(),
                        "at_frame": q.at.map(|a| a.0),
                        "at_stream_s": q.at.map(|a| a.1),
                    }),
                )
            })
            .collect();
        serde_json::json!({
            "url": self.url,
            "attached": self.attached,
            "messages_received": s.received.load(Ordering::Relaxed),
            "bytes_received": s.bytes_in.load(Ordering::Relaxed),
            "messages_applied": self.applied,
            "dropped_behind": s.dropped.load(Ordering::Relaxed),
            "connects": s.connects.load(Ordering::Relaxed),
            "corrupt": self.corrupt,
            "first_corrupt": self.first_corrupt,
            "newer_version": self.newer,
            "publisher_switches": self.switches,
            // Null until a live message was drawn.
            "lag_ms": self.lag.as_ref().filter(|l| l.messages() > 0).map(Latency::to_json),
            "publisher": self.followed.map(|p| format!("{p:016x}")),
            "other_publisher_messages": self.others.0,
            "other_publisher": self.others.1.map(|p| format!("{p:016x}")),
            "publisher_fps": self.publisher_fps,
            "notice": self.notice(),
            "scenes": scenes,
        })
    }
}
