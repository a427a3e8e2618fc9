//! `--publish URL`: each frame, the shown scene's new data goes to the broker as one message
//! ([`Scene::publish`]), with the publisher's frame index and stream time. A keyframe replaces
//! the frame's delta when the scene is first published (or shown again), after each
//! reconnection (a restarted broker may have lost the retained one), when a follower asks
//! (`{base}/want-key`: it joined, or lost messages; at most one per [`KEYFRAME_MIN_S`]), when the
//! side panel asks, and periodically: every [`KEYFRAME_EVERY_S`] of stream time, or less often
//! when keyframes are large against the deltas — the next is due once the deltas since the last
//! one add up to twice its size (keyframes then take at most a third of the bytes), and at the
//! latest after [`KEYFRAME_MAX_S`]. Followers that join ask for one, so a long interval does not
//! make them wait.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::time::Instant;

use super::link::Link;
use super::protocol::{Body, Envelope, VERSION};
use crate::scene::Scene;

/// Shortest stream time between two periodic keyframes of a scene, s.
pub const KEYFRAME_EVERY_S: f64 = 2.0;
/// Longest stream time between two keyframes of a scene, s.
pub const KEYFRAME_MAX_S: f64 = 30.0;
/// Shortest wall-clock time between two keyframes followers asked for, s.
pub const KEYFRAME_MIN_S: f64 = 0.5;
/// A scene with nothing new sends a [`Body::Heartbeat`] after this long, s, so followers can
/// tell a still scene from a publisher that has gone.
pub const HEARTBEAT_S: f64 = 1.0;

/// Messages and bytes per second over the last whole second.
#[derive(Clone, Copy, Debug, Default)]
pub struct Rates {
    /// Messages handed to the broker per second.
    pub messages: f64,
    /// Bytes handed to the broker per second (after compression).
    pub bytes: f64,
    /// Messages dropped per second (the queue full: the broker unreachable or behind).
    pub dropped: f64,
}

/// A running publisher.
pub struct Publisher {
    link: Link,
    url: String,
    /// This run's random id (followers tell two publishers apart by it).
    id: u64,
    /// The next sequence number of each scene.
    seq: HashMap<&'static str, u64>,
    /// Stream time of each scene's last keyframe, s.
    last_key_s: HashMap<&'static str, f64>,
    /// When the last keyframe was sent (the side panel's keyframe age).
    last_key_at: Option<Instant>,
    /// The scene published in the last frame.
    last_scene: Option<&'static str>,
    /// The link's connection count when last looked at.
    connects_seen: u64,
    /// A keyframe asked for by the side panel.
    key_asked: bool,
    /// The link's byte count when the last keyframe was handed over (deltas since = now − it).
    bytes_at_key: u64,
    /// (when, messages sent, bytes, dropped) at the start of the current rate window.
    mark: (Instant, u64, u64, u64),
    /// When the last message was handed to the link.
    last_sent_at: Instant,
    rates: Rates,
    /// Messages made from the scene (handed to the link, which may still drop them).
    made: u64,
}

impl Publisher {
    /// Connects to `url` (in the background) and announces a new random publisher id.
    ///
    /// # Errors
    ///
    /// [`Link::publish`]'s one line (the URL does not parse, TLS set-up failed).
    pub fn start(url: &str) -> Result<Publisher, String> {
        let id = random_id();
        let hello = serde_json::json!({
            "publisher": format!("{id:016x}"),
            "protocol": VERSION,
            "vizdeck": env!("CARGO_PKG_VERSION"),
        });
        let link = Link::publish(url, Some((id, hello.to_string().into_bytes())))?;
        Ok(Publisher {
            link,
            url: url.to_string(),
            id,
            seq: HashMap::new(),
            last_key_s: HashMap::new(),
            last_key_at: None,
            last_scene: None,
            connects_seen: 0,
            key_asked: false,
            bytes_at_key: 0,
            mark: (Instant::now(), 0, 0, 0),
            last_sent_at: Instant::now(),
            rates: Rates::default(),
            made: 0,
        })
    }

    /// After the frame's ingest: publishes what `scene` ingested (or a keyframe when one is
    /// due). `frame`: the frame index; `stream_s`: the run clock, s. Never waits.
    pub fn frame(&mut self, scene: &mut dyn Scene, frame: u64, stream_s: f64) {
        let id = scene.id();
        let connects = self.link.stats().connects.load(Ordering::Relaxed);
        let reconnected = connects > self.connects_seen;
        self.connects_seen = connects;
        let stats = self.link.stats();
        let since = self.last_key_s.get(id).map(|&t| stream_s - t);
        let periodic = since.is_none_or(|s| {
            let deltas = stats
                .bytes
                .load(Ordering::Relaxed)
                .saturating_sub(self.bytes_at_key);
            let key = stats.last_key_bytes.load(Ordering::Relaxed);
            // `deltas` counts the last keyframe too (its bytes are counted once encoded).
            s >= KEYFRAME_MAX_S || (s >= KEYFRAME_EVERY_S && deltas >= 3 * key)
        });
        let asked = stats.key_wanted.load(Ordering::Relaxed)
            && self
                .last_key_at
                .is_none_or(|t| t.elapsed().as_secs_f64() >= KEYFRAME_MIN_S);
        if asked {
            stats.key_wanted.store(false, Ordering::Relaxed);
        }
        let key = reconnected
            || asked
            || std::mem::take(&mut self.key_asked)
            || self.last_scene != Some(id)
            || periodic;
        self.last_scene = Some(id);
        let body = scene.publish(key).or_else(|| {
            (self.last_sent_at.elapsed().as_secs_f64() >= HEARTBEAT_S).then_some(Body::Heartbeat)
        });
        if let Some(body) = body {
            if body.is_keyframe() {
                self.last_key_s.insert(id, stream_s);
                self.last_key_at = Some(Instant::now());
                self.bytes_at_key = self.link.stats().bytes.load(Ordering::Relaxed);
            }
            let seq = self.seq.entry(id).or_insert(0);
            let e = Envelope {
                publisher: self.id,
                seq: *seq,
                frame,
                stream_s,
                sent_unix_ns: unix_ns(),
                scene: id.to_string(),
                body,
            };
            *seq += 1;
            self.made += 1;
            self.last_sent_at = Instant::now();
            self.link.send_envelope(e);
        }
        self.update_rates();
    }

    /// Asks for a keyframe with the next frame (the side panel's button).
    pub fn ask_keyframe(&mut self) {
        self.key_asked = true;
    }

    fn update_rates(&mut self) {
        let dt = self.mark.0.elapsed().as_secs_f64();
        if dt >= 1.0 {
            let s = self.link.stats();
            let sent = s.sent.load(Ordering::Relaxed);
            let bytes = s.bytes.load(Ordering::Relaxed);
            let dropped = s.dropped.load(Ordering::Relaxed);
            self.rates = Rates {
                messages: sent.saturating_sub(self.mark.1) as f64 / dt,
                bytes: bytes.saturating_sub(self.mark.2) as f64 / dt,
                dropped: dropped.saturating_sub(self.mark.3) as f64 / dt,
            };
            self.mark = (Instant::now(), sent, bytes, dropped);
        }
    }

    /// Messages and bytes per second over the last second.
    pub fn rates(&self) -> Rates {
        self.rates
    }

    /// One line for the side panel's state: connected, connecting (with the error), or another
    /// publisher heard on the same topic.
    pub fn state(&self) -> String {
        let s = self.link.stats();
        let conn = if s.connected.load(Ordering::Relaxed) {
            "connected".to_string()
        } else {
            match s.error.lock().ok().and_then(|e| e.clone()) {
                Some(e) => format!("connecting ({e})"),
                None => "connecting".to_string(),
            }
        };
        match s.other_publisher.lock().ok().and_then(|o| o.clone()) {
            Some(other) => format!(
                "{conn}; another publisher ({other}) also publishes to {}: followers follow \
                 the first one they hear",
                self.link.base()
            ),
            None => conn,
        }
    }

    /// The side panel's section (long lines wrap to the panel).
    pub fn ui(&mut self, ui: &mut egui::Ui) {
        let s = self.link.stats();
        wrapped(ui, format!("Publishing to {}", self.url));
        wrapped(ui, self.state());
        let r = self.rates;
        wrapped(
            ui,
            format!("{:.0} messages/s · {}/s", r.messages, human_bytes(r.bytes)),
        );
        let age = self.last_key_at.map_or("none yet".to_string(), |t| {
            format!("{:.1} s ago", t.elapsed().as_secs_f64())
        });
        wrapped(
            ui,
            format!(
                "keyframe {age} ({})",
                human_bytes(s.last_key_bytes.load(Ordering::Relaxed) as f64)
            ),
        );
        if r.dropped > 0.0 {
            let why = if s.connected.load(Ordering::Relaxed) {
                "the broker is behind"
            } else {
                "the broker is unreachable"
            };
            ui.add(
                egui::Label::new(
                    egui::RichText::new(format!(
                        "{:.0} message(s)/s dropped: {why} (followers resume from a keyframe)",
                        r.dropped
                    ))
                    .color(egui::Color32::YELLOW),
                )
                .wrap(),
            );
        }
        if ui
            .button("Keyframe now")
            .on_hover_text("Send a keyframe with the next frame (followers start from it)")
            .clicked()
        {
            self.ask_keyframe();
        }
    }

    /// The report's `publish` object.
    pub fn metrics(&self) -> serde_json::Value {
        let s = self.link.stats();
        serde_json::json!({
            "url": self.url,
            "publisher": format!("{:016x}", self.id),
            "protocol": VERSION,
            "messages_made": self.made,
            "messages_sent": s.sent.load(Ordering::Relaxed),
            "messages_acked": s.acked.load(Ordering::Relaxed),
            "bytes_sent": s.bytes.load(Ordering::Relaxed),
            "dropped": s.dropped.load(Ordering::Relaxed),
            "connects": s.connects.load(Ordering::Relaxed),
            "last_keyframe_bytes": s.last_key_bytes.load(Ordering::Relaxed),
            "keyframes_asked_by_followers": s.key_requests.load(Ordering::Relaxed),
            "other_publisher": s.other_publisher.lock().ok().and_then(|o| o.clone()),
            "error": s.error.lock().ok().and_then(|e| e.clone()),
        })
    }
}

/// Now, ns since the Unix epoch.
pub fn unix_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i64)
}

/// A publisher id: the clock's nanoseconds and the process id, mixed (SplitMix64's finalizer).
fn random_id() -> u64 {
    let mut z = (unix_ns() as u64) ^ (u64::from(std::process::id()) << 32);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// `n` bytes as B, KiB or MiB.
pub fn human_bytes(n: f64) -> String {
    if n >= 1024.0 * 1024.0 {
        format!("{:.1} MiB", n / (1024.0 * 1024.0))
    } else if n >= 1024.0 {
        format!("{:.1} KiB", n / 1024.0)
    } else {
        format!("{n:.0} B")
    }
}

/// A label that wraps to the panel's width.
pub fn wrapped(ui: &mut egui::Ui, text: String) {
    ui.add(egui::Label::new(text).wrap());
}
