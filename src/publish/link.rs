//! The publisher's connection (`--publish mqtt://host[:port]/base/topic`): a thread with an MQTT
//! 3.1.1 client (rumqttc, as the MQTT series source, reconnecting with backoff) that publishes
//! the frames handed to it at QoS 1 under the base topic, retained where asked (keyframes). The
//! frame hands frames over through a bounded channel and never waits: a full channel drops the
//! frame, counted.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TryRecvError, TrySendError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::series::source::net::mqtt::{MqttUrl, tls_config};

/// Frames waiting for the connection, at most.
pub const QUEUE: usize = 256;
/// How long dropping a link waits for the frames still queued, at most.
const FLUSH_S: f64 = 5.0;

/// What the link has done, read by the side panel and the report.
#[derive(Debug, Default)]
pub struct LinkStats {
    /// Frames the broker acknowledged (PUBACK).
    pub acked: AtomicU64,
    /// Frames handed to the client.
    pub sent: AtomicU64,
    /// Bytes of the frames handed to the client.
    pub bytes: AtomicU64,
    /// Frames dropped: the channel or the client's queue was full.
    pub dropped: AtomicU64,
    /// Connected to the broker now.
    pub connected: AtomicBool,
    /// The last connection error, if any.
    pub error: Mutex<Option<String>>,
}

/// One frame to publish: the topic under the base, whether the broker keeps it, the bytes.
struct Out {
    suffix: String,
    retain: bool,
    bytes: Vec<u8>,
}

/// A running publisher connection.
pub struct Link {
    tx: Option<SyncSender<Out>>,
    stats: Arc<LinkStats>,
    base: String,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Link {
    /// Parses `url` (`mqtt://[user[:password]@]host[:port]/base/topic[?options]`, `mqtts://` for
    /// TLS; the options of the MQTT series source) and starts the thread, which connects in the
    /// background.
    ///
    /// # Errors
    ///
    /// A URL that does not parse, a base topic with a wildcard, a TLS set-up that fails; one
    /// line naming the URL.
    pub fn start(url: &str) -> Result<Link, String> {
        let bad = |e: String| format!("--publish {url}: {e}");
        let (rest, tls) = if let Some(r) = url.strip_prefix("mqtt://") {
            (r, false)
        } else if let Some(r) = url.strip_prefix("mqtts://") {
            (r, true)
        } else {
            return Err(bad("not an mqtt:// or mqtts:// URL".into()));
        };
        let parsed = MqttUrl::parse(rest, tls).map_err(bad)?;
        if parsed.filter.contains(['+', '#']) {
            return Err(bad(format!(
                "the base topic '{}' has a wildcard (+ or #)",
                parsed.filter
            )));
        }
        let transport = if parsed.tls {
            let config = tls_config(&parsed).map_err(bad)?;
            Some(rumqttc::Transport::tls_with_config(
                rumqttc::TlsConfiguration::Rustls(config),
            ))
        } else {
            None
        };
        let (tx, rx) = std::sync::mpsc::sync_channel(QUEUE);
        let stats = Arc::new(LinkStats::default());
        let base = parsed.filter.trim_end_matches('/').to_string();
        let thread = {
            let stats = stats.clone();
            let base = base.clone();
            std::thread::Builder::new()
                .name("vizdeck-publish".into())
                .spawn(move || run(&parsed, transport, &base, &rx, &stats))
                .map_err(|e| bad(format!("cannot start its thread: {e}")))?
        };
        Ok(Link {
            tx: Some(tx),
            stats,
            base,
            thread: Some(thread),
        })
    }

    /// Hands a frame over for `base/suffix` (retained with `retain`). `false`: dropped (the
    /// queue is full, counted).
    pub fn send(&self, suffix: &str, retain: bool, bytes: Vec<u8>) -> bool {
        let Some(tx) = &self.tx else { return false };
        let n = bytes.len() as u64;
        match tx.try_send(Out {
            suffix: suffix.to_string(),
            retain,
            bytes,
        }) {
            Ok(()) => {
                self.stats.bytes.fetch_add(n, Ordering::Relaxed);
                true
            }
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => {
                self.stats.dropped.fetch_add(1, Ordering::Relaxed);
                false
            }
        }
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
    /// Closes the channel; the thread publishes what is queued (for at most a few seconds while
    /// connected), disconnects and ends.
    fn drop(&mut self) {
        self.tx = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The thread: publishes what arrives until the channel closes and the queue is empty (or
/// [`FLUSH_S`] passed since it closed).
fn run(
    url: &MqttUrl,
    transport: Option<rumqttc::Transport>,
    base: &str,
    rx: &Receiver<Out>,
    stats: &LinkStats,
) {
    use rumqttc::{Client, Event, MqttOptions, Packet, QoS, RecvTimeoutError};
    let mut opts = MqttOptions::new(
        format!("vizdeck-pub-{}", std::process::id()),
        url.host.clone(),
        url.port,
    );
    opts.set_keep_alive(Duration::from_secs(5))
        .set_clean_session(true)
        .set_max_packet_size(64 << 20, 64 * 1024);
    if let Some(user) = &url.user {
        opts.set_credentials(user.clone(), url.password.clone().unwrap_or_default());
    }
    if let Some(t) = transport {
        opts.set_transport(t);
    }
    let (client, mut connection) = Client::new(opts, QUEUE);
    let mut closed_at: Option<Instant> = None;
    let mut in_flight: u64 = 0;
    loop {
        // Hand what the frame sent to the client (it queues while disconnected).
        loop {
            match rx.try_recv() {
                Ok(o) => {
                    let topic = format!("{base}/{}", o.suffix);
                    match client.try_publish(topic, QoS::AtLeastOnce, o.retain, o.bytes) {
                        Ok(()) => {
                            in_flight += 1;
                            stats.sent.fetch_add(1, Ordering::Relaxed);
                        }
                        Err(_) => {
                            stats.dropped.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                }
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => {
                    closed_at.get_or_insert_with(Instant::now);
                    break;
                }
            }
        }
        if let Some(t) = closed_at
            && (in_flight == 0 || t.elapsed().as_secs_f64() > FLUSH_S)
        {
            let _ = client.try_disconnect();
            return;
        }
        match connection.recv_timeout(Duration::from_millis(5)) {
            Ok(Ok(Event::Incoming(Packet::ConnAck(_)))) => {
                stats.connected.store(true, Ordering::Relaxed);
                if let Ok(mut e) = stats.error.lock() {
                    *e = None;
                }
            }
            Ok(Ok(Event::Incoming(Packet::PubAck(_)))) => {
                in_flight = in_flight.saturating_sub(1);
                stats.acked.fetch_add(1, Ordering::Relaxed);
            }
            Ok(Ok(_)) => {}
            Ok(Err(e)) => {
                stats.connected.store(false, Ordering::Relaxed);
                if let Ok(mut err) = stats.error.lock() {
                    *err = Some(e.to_string());
                }
                // rumqttc reconnects on the next poll; a refused or absent broker is not
                // hammered.
                std::thread::sleep(Duration::from_millis(500));
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => return,
        }
    }
}
