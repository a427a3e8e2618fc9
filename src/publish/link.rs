//! The broker connection of `--publish` and `--follow` (`mqtt://host[:port]/base/topic`): a
//! thread with an MQTT 3.1.1 client (rumqttc, as the MQTT series source, reconnecting with
//! backoff).
//!
//! Publishing: the frame hands messages over through a bounded channel and never waits (a full
//! channel drops the message, counted); the thread encodes them ([`protocol::encode`]: a large
//! keyframe is compressed off the frame thread) and publishes them at QoS 1 under the base
//! topic, keyframes retained. A publisher announces itself with a retained `{base}/hello`
//! (`{"publisher": "<id hex>", "protocol": 1}`), cleared when it ends (and by the broker, as its
//! last will, when it dies); another publisher's hello on the same base is reported
//! ([`LinkStats::other_publisher`]).
//!
//! Following: the thread subscribes to `{base}/+/key` and `{base}/+/delta` at QoS 1, decodes
//! each message and hands it over through a bounded channel; a full channel (a follower that
//! fell behind) drops the message, counted, and the follower then waits for the next keyframe.
//! A follower that waits for one (it joined, or lost messages) asks for it on
//! `{base}/want-key` (QoS 0, empty payload), to which publishers subscribe.
//!
//! [`protocol::encode`]: super::protocol::encode

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TryRecvError, TrySendError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::protocol::{self, DecodeError, Envelope};
use crate::series::source::net::mqtt::{MqttUrl, tls_config};

/// Frames waiting for the connection, at most.
pub const QUEUE: usize = 256;
/// Messages received and not yet taken by the follower's frame, at most.
pub const QUEUE_IN: usize = 1024;
/// How long dropping a link waits for the frames still queued, at most.
const FLUSH_S: f64 = 10.0;

/// What the link has done, read by the side panel and the report.
#[derive(Debug, Default)]
pub struct LinkStats {
    /// Frames the broker acknowledged (PUBACK).
    pub acked: AtomicU64,
    /// Frames handed to the client.
    pub sent: AtomicU64,
    /// Bytes of the frames handed to the client.
    pub bytes: AtomicU64,
    /// Frames dropped: the channel or the client's queue was full (publishing), or the
    /// follower's channel was (following).
    pub dropped: AtomicU64,
    /// Connected to the broker now.
    pub connected: AtomicBool,
    /// Connections made (the first, then each reconnection).
    pub connects: AtomicU64,
    /// Following: messages received, and their bytes.
    pub received: AtomicU64,
    /// Following: bytes received.
    pub bytes_in: AtomicU64,
    /// Size of the last keyframe sent, bytes.
    pub last_key_bytes: AtomicU64,
    /// The last connection error, if any.
    pub error: Mutex<Option<String>>,
    /// Publishing: another publisher's id (hex) heard on `{base}/hello`.
    pub other_publisher: Mutex<Option<String>>,
    /// Publishing: a follower asked for a keyframe on `{base}/want-key` (taken by the frame).
    pub key_wanted: AtomicBool,
    /// Publishing: keyframes asked for by followers.
    pub key_requests: AtomicU64,
    /// Following: ask the publisher for a keyframe (set by the frame, sent by the thread).
    pub want_key: AtomicBool,
}

/// What goes out: ready bytes, or an envelope the thread encodes.
enum Payload {
    Bytes(Vec<u8>),
    Envelope(Box<Envelope>),
}

/// One frame to publish: the topic under the base, whether the broker keeps it, the payload.
struct Out {
    suffix: String,
    retain: bool,
    payload: Payload,
}

/// What a following link hands the frame: a message (and whether the broker kept it: a
/// retained keyframe may be from a publisher that has ended), or why one did not decode.
pub type Heard = Result<(Envelope, bool), DecodeError>;

/// A running broker connection, publishing or following.
pub struct Link {
    tx: Option<SyncSender<Out>>,
    rx: Option<Receiver<Heard>>,
    stats: Arc<LinkStats>,
    base: String,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// What the thread does.
enum Role {
    /// Publishes what is handed over; announces `hello` (retained) when given.
    Publish {
        rx: Receiver<Out>,
        hello: Option<(u64, Vec<u8>)>,
    },
    /// Subscribes and hands over what arrives.
    Follow { tx: SyncSender<Heard> },
}

impl Link {
    /// A publishing link without a hello (see [`Link::publish`]).
    ///
    /// # Errors
    ///
    /// As [`Link::publish`].
    pub fn start(url: &str) -> Result<Link, String> {
        Link::publish(url, None)
    }

    /// Parses `url` (`mqtt://[user[:password]@]host[:port]/base/topic[?options]`, `mqtts://` for
    /// TLS; the options of the MQTT series source) and starts the publishing thread, which
    /// connects in the background. `hello`: the publisher's id and its retained hello.
    ///
    /// # Errors
    ///
    /// A URL that does not parse, a base topic with a wildcard, a TLS set-up that fails; one
    /// line naming `--publish` and the URL.
    pub fn publish(url: &str, hello: Option<(u64, Vec<u8>)>) -> Result<Link, String> {
        let (tx, rx) = std::sync::mpsc::sync_channel(QUEUE);
        let mut link = Link::spawn("--publish", url, Role::Publish { rx, hello })?;
        link.tx = Some(tx);
        Ok(link)
    }

    /// Parses `url` as [`Link::publish`] does and starts the following thread: it subscribes
    /// to the base topic's keyframes and deltas and hands them to [`Link::try_recv`].
    ///
    /// # Errors
    ///
    /// As [`Link::publish`], naming `--follow`.
    pub fn follow(url: &str) -> Result<Link, String> {
        let (tx, rx) = std::sync::mpsc::sync_channel(QUEUE_IN);
        let mut link = Link::spawn("--follow", url, Role::Follow { tx })?;
        link.rx = Some(rx);
        Ok(link)
    }

    fn spawn(flag: &str, url: &str, role: Role) -> Result<Link, String> {
        let bad = |e: String| format!("{flag} {url}: {e}");
        let parsed = parse_url(url).map_err(bad)?;
        let transport = if parsed.tls {
            let config = tls_config(&parsed).map_err(bad)?;
            Some(rumqttc::Transport::tls_with_config(
                rumqttc::TlsConfiguration::Rustls(config),
            ))
        } else {
            None
        };
        let stats = Arc::new(LinkStats::default());
        let stop = Arc::new(AtomicBool::new(false));
        let base = parsed.filter.trim_end_matches('/').to_string();
        let name = match role {
            Role::Publish { .. } => "vizdeck-publish",
            Role::Follow { .. } => "vizdeck-follow",
        };
        let thread = {
            let stats = stats.clone();
            let stop = stop.clone();
            let base = base.clone();
            std::thread::Builder::new()
                .name(name.into())
                .spawn(move || run(&parsed, transport, &base, role, &stats, &stop))
                .map_err(|e| bad(format!("cannot start its thread: {e}")))?
        };
        Ok(Link {
            tx: None,
            rx: None,
            stats,
            base,
            stop,
            thread: Some(thread),
        })
    }

    /// Hands a frame over for `base/suffix` (retained with `retain`). `false`: dropped (the
    /// queue is full, counted).
    pub fn send(&self, suffix: &str, retain: bool, bytes: Vec<u8>) -> bool {
        self.hand_over(Out {
            suffix: suffix.to_string(),
            retain,
            payload: Payload::Bytes(bytes),
        })
    }

    /// Hands `e` over for `base/{scene}/key` (retained) or `base/{scene}/delta`, by its body;
    /// the thread encodes it. `false`: dropped (the queue is full, counted).
    pub fn send_envelope(&self, e: Envelope) -> bool {
        let retain = e.body.is_keyframe();
        self.hand_over(Out {
            suffix: format!("{}/{}", e.scene, e.body.topic()),
            retain,
            payload: Payload::Envelope(Box::new(e)),
        })
    }

    fn hand_over(&self, out: Out) -> bool {
        let Some(tx) = &self.tx else { return false };
        match tx.try_send(out) {
            Ok(()) => true,
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => {
                self.stats.dropped.fetch_add(1, Ordering::Relaxed);
                false
            }
        }
    }

    /// Following: asks the publisher for a keyframe (sent by the thread, QoS 0).
    pub fn request_keyframe(&self) {
        self.stats.want_key.store(true, Ordering::Relaxed);
    }

    /// Following: the next message received, if one is waiting (never waits).
    pub fn try_recv(&self) -> Option<Heard> {
        self.rx.as_ref()?.try_recv().ok()
    }

    /// Following: the next message, waiting at most `timeout` for one.
    pub fn recv_timeout(&self, timeout: Duration) -> Option<Heard> {
        self.rx.as_ref()?.recv_timeout(timeout).ok()
    }

    /// The base topic.
    pub fn base(&self) -> &str {
        &self.base
    }

    /// What the link has done.
    pub fn stats(&self) -> &LinkStats {
        &self.stats
    }
}

impl Drop for Link {
    /// Publishing: closes the channel; the thread publishes what is queued (for at most a few
    /// seconds while connected), clears its hello, disconnects and ends. Following: stops the
    /// thread.
    fn drop(&mut self) {
        self.tx = None;
        if self.rx.take().is_some() {
            self.stop.store(true, Ordering::Relaxed);
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Parses a `--publish` / `--follow` URL: `mqtt://` or `mqtts://`, the MQTT series source's
/// syntax, a base topic without wildcards.
///
/// # Errors
///
/// What is wrong, one line (without the URL).
pub fn parse_url(url: &str) -> Result<MqttUrl, String> {
    let (rest, tls) = if let Some(r) = url.strip_prefix("mqtt://") {
        (r, false)
    } else if let Some(r) = url.strip_prefix("mqtts://") {
        (r, true)
    } else {
        return Err("not an mqtt:// or mqtts:// URL".into());
    };
    let path = rest.split(['?', '#']).next().unwrap_or("");
    if path
        .split_once('/')
        .is_none_or(|(_, base)| base.trim_matches('/').is_empty())
    {
        return Err("no base topic (e.g. mqtt://host:1883/vizdeck/lab)".into());
    }
    let parsed = MqttUrl::parse(rest, tls)?;
    if parsed.filter.contains(['+', '#']) {
        return Err(format!(
            "the base topic '{}' has a wildcard (+ or #)",
            parsed.filter
        ));
    }
    if parsed.filter.trim_matches('/').is_empty() {
        return Err("no base topic (e.g. mqtt://host/vizdeck/lab)".into());
    }
    Ok(parsed)
}

/// The client's options for `url` (a client id of `prefix` and the process id, unless the URL
/// names one).
fn options(
    url: &MqttUrl,
    prefix: &str,
    transport: Option<rumqttc::Transport>,
) -> rumqttc::MqttOptions {
    let id = url
        .client_id
        .clone()
        .unwrap_or_else(|| format!("{prefix}-{}-{:x}", std::process::id(), rand_u32()));
    let mut opts = rumqttc::MqttOptions::new(id, url.host.clone(), url.port);
    opts.set_keep_alive(Duration::from_secs(5))
        .set_clean_session(true)
        .set_max_packet_size(protocol::MAX_BODY + 1024, protocol::MAX_BODY + 1024);
    if let Some(user) = &url.user {
        opts.set_credentials(user.clone(), url.password.clone().unwrap_or_default());
    }
    if let Some(t) = transport {
        opts.set_transport(t);
    }
    opts
}

/// A few random bits (client ids of two links of one process differ).
fn rand_u32() -> u32 {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    static N: AtomicU64 = AtomicU64::new(0);
    t ^ (N.fetch_add(1, Ordering::Relaxed) as u32).wrapping_mul(0x9e37_79b9)
}

/// The thread: publishes what arrives until the channel closes and the queue is empty (or
/// [`FLUSH_S`] passed since it closed); or follows until stopped.
fn run(
    url: &MqttUrl,
    transport: Option<rumqttc::Transport>,
    base: &str,
    role: Role,
    stats: &LinkStats,
    stop: &AtomicBool,
) {
    use rumqttc::{Client, Event, LastWill, Packet, QoS, RecvTimeoutError};
    let hello_topic = format!("{base}/hello");
    let want_topic = format!("{base}/want-key");
    let mut opts = match &role {
        Role::Publish { .. } => options(url, "vizdeck-pub", transport),
        Role::Follow { .. } => options(url, "vizdeck-follow", transport),
    };
    let hello = match &role {
        Role::Publish { hello, .. } => hello.clone(),
        Role::Follow { .. } => None,
    };
    if hello.is_some() {
        // A publisher that dies leaves no hello behind.
        opts.set_last_will(LastWill::new(
            hello_topic.clone(),
            Vec::<u8>::new(),
            QoS::AtLeastOnce,
            true,
        ));
    }
    let (mut client, mut connection) = Client::new(opts.clone(), QUEUE);
    let mut closed_at: Option<Instant> = None;
    let mut in_flight: u64 = 0;
    let mut hello_cleared = false;
    let mut subacks = 0u32;
    let mut was_connected = false;
    loop {
        match &role {
            Role::Publish { rx, .. } => {
                // Hand what the frame sent to the client (it queues while disconnected).
                loop {
                    match rx.try_recv() {
                        Ok(o) => publish_one(&client, base, o, stats, &mut in_flight),
                        Err(TryRecvError::Empty) => break,
                        Err(TryRecvError::Disconnected) => {
                            closed_at.get_or_insert_with(Instant::now);
                            break;
                        }
                    }
                }
                if let Some(t) = closed_at {
                    if hello.is_some() && !hello_cleared && stats.connected.load(Ordering::Relaxed)
                    {
                        // Clear the hello (after what is queued): nobody publishes here now.
                        hello_cleared = true;
                        if client
                            .try_publish(&hello_topic, QoS::AtLeastOnce, true, Vec::<u8>::new())
                            .is_ok()
                        {
                            in_flight += 1;
                        }
                    }
                    if in_flight == 0 || t.elapsed().as_secs_f64() > FLUSH_S {
                        // What the broker did not acknowledge in time is lost: counted.
                        stats.dropped.fetch_add(in_flight, Ordering::Relaxed);
                        let _ = client.try_disconnect();
                        return;
                    }
                }
            }
            Role::Follow { .. } => {
                if stop.load(Ordering::Relaxed) {
                    let _ = client.try_disconnect();
                    return;
                }
                if stats.connected.load(Ordering::Relaxed)
                    && stats.want_key.swap(false, Ordering::Relaxed)
                {
                    let _ = client.try_publish(&want_topic, QoS::AtMostOnce, false, Vec::new());
                }
            }
        }
        match connection.recv_timeout(Duration::from_millis(5)) {
            Ok(Ok(Event::Incoming(Packet::ConnAck(_)))) => {
                stats.connected.store(true, Ordering::Relaxed);
                stats.connects.fetch_add(1, Ordering::Relaxed);
                subacks = 0;
                was_connected = true;
                if let Ok(mut e) = stats.error.lock() {
                    *e = None;
                }
                match &role {
                    Role::Publish { .. } => {
                        let _ = client.try_subscribe(&want_topic, QoS::AtMostOnce);
                        if let Some((_, bytes)) = &hello {
                            let _ = client.try_subscribe(&hello_topic, QoS::AtLeastOnce);
                            if client
                                .try_publish(&hello_topic, QoS::AtLeastOnce, true, bytes.clone())
                                .is_ok()
                            {
                                in_flight += 1;
                            }
                        }
                    }
                    Role::Follow { .. } => {
                        for t in ["key", "delta"] {
                            let _ = client.try_subscribe(format!("{base}/+/{t}"), QoS::AtLeastOnce);
                        }
                    }
                }
            }
            Ok(Ok(Event::Incoming(Packet::SubAck(_)))) => {
                // Both subscriptions of this connection acknowledged.
                subacks += 1;
                if matches!(role, Role::Follow { .. }) && subacks == 2 {
                    log::info!("following {base}: subscribed to {base}/+/key and {base}/+/delta");
                }
            }
            Ok(Ok(Event::Incoming(Packet::PubAck(_)))) => {
                in_flight = in_flight.saturating_sub(1);
                stats.acked.fetch_add(1, Ordering::Relaxed);
            }
            Ok(Ok(Event::Incoming(Packet::Publish(p)))) => match &role {
                Role::Publish { .. } if p.topic == want_topic => {
                    stats.key_wanted.store(true, Ordering::Relaxed);
                    stats.key_requests.fetch_add(1, Ordering::Relaxed);
                }
                Role::Publish { .. } => {
                    if let Some((id, _)) = &hello
                        && p.topic == hello_topic
                        && !p.payload.is_empty()
                        && let Some(other) = hello_publisher(&p.payload)
                        && other != format!("{id:016x}")
                        && let Ok(mut o) = stats.other_publisher.lock()
                    {
                        *o = Some(other);
                    }
                }
                Role::Follow { tx } => {
                    stats.received.fetch_add(1, Ordering::Relaxed);
                    stats
                        .bytes_in
                        .fetch_add(p.payload.len() as u64, Ordering::Relaxed);
                    // An empty retained message clears a topic: nothing to follow.
                    if p.payload.is_empty() {
                        continue;
                    }
                    let heard = protocol::decode(&p.payload).map(|e| (e, p.retain));
                    if tx.try_send(heard).is_err() {
                        stats.dropped.fetch_add(1, Ordering::Relaxed);
                    }
                }
            },
            Ok(Ok(_)) => {}
            Ok(Err(e)) => {
                stats.connected.store(false, Ordering::Relaxed);
                if let Ok(mut err) = stats.error.lock() {
                    *err = Some(e.to_string());
                }
                // A refused or absent broker is not hammered.
                let until = Instant::now() + Duration::from_millis(500);
                while Instant::now() < until && !stop.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(20));
                }
                if matches!(role, Role::Publish { .. }) && std::mem::take(&mut was_connected) {
                    // A connection lost: a new client rather than rumqttc's own reconnection,
                    // which with a clean session lets the packet ids of unacknowledged
                    // publishes collide after a broker restart, and publishing stalls
                    // (bytebeamio/rumqtt#1014). What was not acknowledged is lost, counted;
                    // followers see the gap and resume from the keyframe sent after the
                    // reconnection. (Before a first connection nothing was sent: the client
                    // keeps its queue and sends it once the broker answers.)
                    stats.dropped.fetch_add(in_flight, Ordering::Relaxed);
                    in_flight = 0;
                    (client, connection) = Client::new(opts.clone(), QUEUE);
                }
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => return,
        }
    }
}

/// Encodes (when needed) and publishes one message.
fn publish_one(
    client: &rumqttc::Client,
    base: &str,
    o: Out,
    stats: &LinkStats,
    in_flight: &mut u64,
) {
    let bytes = match o.payload {
        Payload::Bytes(b) => b,
        Payload::Envelope(e) => match protocol::encode(&e) {
            Ok(b) => b,
            Err(err) => {
                log::warn!("--publish: {err}");
                stats.dropped.fetch_add(1, Ordering::Relaxed);
                return;
            }
        },
    };
    let n = bytes.len() as u64;
    if o.retain {
        stats.last_key_bytes.store(n, Ordering::Relaxed);
    }
    let topic = format!("{base}/{}", o.suffix);
    match client.try_publish(topic, rumqttc::QoS::AtLeastOnce, o.retain, bytes) {
        Ok(()) => {
            *in_flight += 1;
            stats.sent.fetch_add(1, Ordering::Relaxed);
            stats.bytes.fetch_add(n, Ordering::Relaxed);
        }
        Err(_) => {
            stats.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// The publisher id (hex) of a hello payload.
fn hello_publisher(payload: &[u8]) -> Option<String> {
    let v: serde_json::Value = serde_json::from_slice(payload).ok()?;
    v.get("publisher")?.as_str().map(str::to_string)
}
