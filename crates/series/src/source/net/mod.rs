//! Live network sources of the time-series scene: MQTT subscriptions (`mqtt://`, `mqtts://`),
//! ZeroMQ SUB sockets (`zmq+tcp://`) and UDP datagrams (`udp://`), each on its own thread.
//!
//! A transport hands each message (topic, payload) to an [`Ingest`], which decodes it
//! ([`super::payload`]), names a series per numeric field (started on first sight, up to
//! [`MAX_SERIES`]) and collects the samples into batches of per-series points handed to the
//! render thread through the source's ring, like the other producers. A batch is handed over
//! every [`FLUSH_MS`] ms or [`FLUSH_POINTS`] points; when the ring is full (nobody drained for a
//! while) its samples are dropped and counted as dropped by vizdeck, apart from what the
//! transport itself lost ([`LinkStats`]).
//!
//! Gaps: a sample of value NaN (a null, NaN or infinity in the payload) goes only to a series
//! that already exists; a path that has never held a number starts no series, so a field that is
//! always null charts nothing. Time fields: the decoder's [`TimeBase`] (fixed by the first timed
//! message) is kept in [`LinkStats`]; only wall-clock payload times are handed to the scene for
//! the publish → present latency ([`SeriesSource::link_time_base`] says which).
//!
//! Files: `mod.rs` the URL, the shared counters, the ingest and the reconnect backoff; `udp.rs`,
//! `mqtt.rs`, `zmq.rs` one transport each.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::AtomicU8;

use super::payload::{Decoder, PayloadOptions, TimeBase};
use super::*;

pub mod mqtt;
mod udp;
mod zmq;

/// Batches in flight from a network source to the render thread.
const NET_RING: usize = 256;
/// A batch is handed over once its first message is this old, milliseconds.
pub(crate) const FLUSH_MS: u64 = 2;
/// … or once it holds this many points.
pub(crate) const FLUSH_POINTS: usize = 16 * 1024;
/// Parse errors kept word for word (the first ones); later ones are only counted.
pub(crate) const ERRORS_KEPT: usize = 5;
/// Longest wait between reconnection attempts, seconds (the wait doubles from 0.5 s).
pub(crate) const BACKOFF_MAX_S: f64 = 8.0;

/// A network source: where, and how its payloads read.
#[derive(Clone, Debug, PartialEq)]
pub struct NetOptions {
    /// `mqtt://[user[:password]@]host[:port]/topic-filter[?qos=0|1&client_id=ID&clean=0|1&v=5]`
    /// (`mqtts://` for TLS), `zmq+tcp://host:port[/prefix]` or `udp://addr:port`.
    pub url: String,
    /// Payload encoding and timestamp field.
    pub payload: PayloadOptions,
}

/// A parsed network URL.
#[derive(Clone, Debug, PartialEq)]
pub enum Endpoint {
    Mqtt(mqtt::MqttUrl),
    Zmq {
        /// `host:port`.
        addr: String,
        /// Topic prefix subscribed to (empty: every message).
        prefix: String,
    },
    Udp {
        /// `addr:port` bound.
        addr: String,
    },
}

impl Endpoint {
    /// Parses `url` (see [`NetOptions::url`]).
    ///
    /// # Errors
    ///
    /// One line naming the URL and the problem: an unknown scheme (the accepted ones listed),
    /// no host or port, a bad query option.
    pub fn parse(url: &str) -> Result<Endpoint, String> {
        let shown = redact(&vizdeck_base::text::one_line(url));
        let Some((scheme, rest)) = url.split_once("://") else {
            return Err(format!(
                "source '{shown}': not a URL (expected mqtt://, mqtts://, zmq+tcp:// or udp://)"
            ));
        };
        match scheme.to_ascii_lowercase().as_str() {
            "mqtt" | "mqtts" | "tcp" | "ssl" => {
                mqtt::MqttUrl::parse(rest, matches!(scheme, "mqtts" | "ssl"))
                    .map(Endpoint::Mqtt)
                    .map_err(|e| format!("source '{shown}': {e}"))
            }
            "zmq+tcp" | "zmq" => {
                let (addr, prefix) = rest.split_once('/').unwrap_or((rest, ""));
                check_host_port(addr).map_err(|e| format!("source '{shown}': {e}"))?;
                Ok(Endpoint::Zmq {
                    addr: addr.to_string(),
                    prefix: prefix.to_string(),
                })
            }
            "udp" => {
                let addr = rest.trim_end_matches('/');
                check_host_port(addr).map_err(|e| format!("source '{shown}': {e}"))?;
                Ok(Endpoint::Udp {
                    addr: addr.to_string(),
                })
            }
            other => Err(format!(
                "source '{shown}': unknown scheme '{}' (expected mqtt://, mqtts://, zmq+tcp:// \
                 or udp://)",
                vizdeck_base::text::one_line(other)
            )),
        }
    }
}

/// `url` with the password of its `user:password@` part replaced by `***`, as messages, the
/// side panel and the report show it.
pub fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    match authority.rsplit_once('@') {
        Some((creds, host)) if creds.contains(':') => {
            let user = creds.split(':').next().unwrap_or_default();
            format!("{scheme}://{user}:***@{host}{tail}")
        }
        _ => url.to_string(),
    }
}

/// `host:port` with a port number.
fn check_host_port(addr: &str) -> Result<(), String> {
    let Some((host, port)) = addr.rsplit_once(':') else {
        return Err(format!("'{addr}' has no port (host:port)"));
    };
    if host.is_empty() {
        return Err(format!("'{addr}' has no host"));
    }
    port.parse::<u16>()
        .map(|_| ())
        .map_err(|_| format!("port '{port}' is not a number from 0 to 65535"))
}

/// State of a connection, as the side panel shows it.
#[derive(Clone, Debug, PartialEq)]
pub enum LinkState {
    Connecting,
    /// Connected (MQTT, ZeroMQ) or listening (UDP).
    Connected,
    /// Lost or refused; the next attempt is in `in_s` seconds. `reason`: why, one line.
    Reconnecting {
        in_s: f64,
        reason: String,
    },
    /// Given up (a refusal retrying cannot mend, e.g. a wrong password).
    Failed(String),
}

impl std::fmt::Display for LinkState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LinkState::Connecting => write!(f, "connecting"),
            LinkState::Connected => write!(f, "connected"),
            LinkState::Reconnecting { in_s, reason } => {
                write!(f, "reconnecting in {in_s:.1} s ({reason})")
            }
            LinkState::Failed(reason) => write!(f, "failed: {reason}"),
        }
    }
}

/// Counters of one connection, written by its thread, read by the render thread without
/// waiting (the few strings behind a `Mutex` are read with `try_lock`).
#[derive(Debug, Default)]
pub struct LinkStats {
    /// Messages received (decoded or not).
    pub messages: AtomicU64,
    /// Payload bytes received.
    pub bytes: AtomicU64,
    /// Messages that did not decode (see [`LinkStats::errors`]).
    pub parse_errors: AtomicU64,
    /// Messages decoded but dropped by vizdeck because the ring to the render thread was full.
    pub dropped: AtomicU64,
    /// Messages the transport reports lost before vizdeck read them (UDP: the kernel's drop
    /// count of the socket, `/proc/net/udp`); `u64::MAX` where the transport does not say.
    pub transport_lost: AtomicU64,
    /// Connections made (1 after the first, more after reconnects).
    pub connects: AtomicU64,
    /// What the time fields count from ([`TimeBase`]): 0 not known yet (no timed message, or
    /// no time field), 1 Unix, 2 relative.
    time_base: AtomicU8,
    state: AtomicU8,
    /// Reconnect deadline, ms since the Unix epoch.
    retry_at_ms: AtomicU64,
    reason: Mutex<String>,
    errors: Mutex<Vec<String>>,
}

const ST_CONNECTING: u8 = 0;
const ST_CONNECTED: u8 = 1;
const ST_RECONNECTING: u8 = 2;
const ST_FAILED: u8 = 3;

impl LinkStats {
    fn new(lost_known: bool) -> LinkStats {
        let s = LinkStats::default();
        if !lost_known {
            s.transport_lost.store(u64::MAX, Ordering::Relaxed);
        }
        s
    }

    /// The connection's state now.
    pub fn state(&self) -> LinkState {
        let reason = || {
            self.reason
                .try_lock()
                .map(|r| r.clone())
                .unwrap_or_default()
        };
        match self.state.load(Ordering::Acquire) {
            ST_CONNECTED => LinkState::Connected,
            ST_RECONNECTING => {
                let at = self.retry_at_ms.load(Ordering::Relaxed);
                let in_s = at.saturating_sub(unix_ms()) as f64 / 1000.0;
                LinkState::Reconnecting {
                    in_s,
                    reason: reason(),
                }
            }
            ST_FAILED => LinkState::Failed(reason()),
            _ => LinkState::Connecting,
        }
    }

    /// What the source's time fields count from, once its first timed message fixed it
    /// (`None` before, and for sources without a time field).
    pub fn time_base(&self) -> Option<TimeBase> {
        match self.time_base.load(Ordering::Relaxed) {
            1 => Some(TimeBase::Unix),
            2 => Some(TimeBase::Relative),
            _ => None,
        }
    }

    /// The first [`ERRORS_KEPT`] parse errors, one line each (`topic: problem`).
    pub fn errors(&self) -> Vec<String> {
        self.errors
            .try_lock()
            .map(|e| e.clone())
            .unwrap_or_default()
    }

    fn set(&self, state: u8, reason: &str) {
        if let Ok(mut r) = self.reason.lock() {
            r.clear();
            r.push_str(reason);
        }
        self.state.store(state, Ordering::Release);
    }

    fn connected(&self) {
        self.connects.fetch_add(1, Ordering::Relaxed);
        self.set(ST_CONNECTED, "");
    }

    /// Gives up: the reason is shown by the side panel, the report and (when nothing arrived)
    /// the run's exit, so it is only logged at debug level here.
    fn failed(&self, reason: &str) {
        log::debug!("{reason}");
        self.set(ST_FAILED, reason);
    }
}

/// Milliseconds since the Unix epoch.
fn unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// Nanoseconds since the Unix epoch (a message's arrival time).
fn unix_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i64)
}

/// Waits between reconnection attempts: 0.5 s, doubling to [`BACKOFF_MAX_S`], reset by a
/// connection that came up.
struct Backoff {
    next_s: f64,
}

impl Backoff {
    fn new() -> Backoff {
        Backoff { next_s: 0.5 }
    }

    fn reset(&mut self) {
        self.next_s = 0.5;
    }

    /// Shows `reason` and the wait in `stats`, then sleeps it (in short steps, returning early
    /// when `stop` is set). Returns `false` when stopped.
    fn wait(&mut self, stats: &LinkStats, reason: &str, stop: &AtomicBool) -> bool {
        let wait = self.next_s;
        self.next_s = (self.next_s * 2.0).min(BACKOFF_MAX_S);
        stats
            .retry_at_ms
            .store(unix_ms() + (wait * 1000.0) as u64, Ordering::Relaxed);
        stats.set(ST_RECONNECTING, reason);
        let until = Instant::now() + Duration::from_secs_f64(wait);
        while Instant::now() < until {
            if stop.load(Ordering::Relaxed) {
                return false;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        stats.set(ST_CONNECTING, "");
        !stop.load(Ordering::Relaxed)
    }
}

/// The thread side of a network source: decodes messages into batches of points and hands
/// them over (see the module docs).
struct Ingest {
    decoder: Decoder,
    /// Source index of each series name started so far.
    index: HashMap<String, u32>,
    batch: Batch,
    /// When the batch's first message arrived.
    since: Option<Instant>,
    tx: Producer<Msg>,
    recycled: Consumer<Batch>,
    stats: Arc<LinkStats>,
}

impl Ingest {
    /// Decodes one message (`topic` may be empty) and adds its samples to the batch, handing
    /// the batch over when it is due.
    fn message(&mut self, topic: &str, payload: &[u8]) {
        self.stats.messages.fetch_add(1, Ordering::Relaxed);
        self.stats
            .bytes
            .fetch_add(payload.len() as u64, Ordering::Relaxed);
        match self.decoder.decode(topic, payload) {
            Ok(t) => {
                let base = self.decoder.time_base();
                if let Some(t) = t
                    && base == Some(TimeBase::Unix)
                {
                    self.batch.msg_times.push(t);
                }
                let code = match base {
                    None => 0,
                    Some(TimeBase::Unix) => 1,
                    Some(TimeBase::Relative) => 2,
                };
                self.stats.time_base.store(code, Ordering::Relaxed);
                let t_ns = t.unwrap_or_else(unix_ns);
                let mut refused = false;
                for (name, v) in self.decoder.samples() {
                    let series = match self.index.get(name.as_str()) {
                        Some(&i) => i,
                        // A gap where no number ever was: no series.
                        None if v.is_nan() => continue,
                        None if self.index.len() < MAX_SERIES => {
                            let i = self.index.len() as u32;
                            self.index.insert(name.clone(), i);
                            self.batch.new_names.push(name.clone());
                            i
                        }
                        None => {
                            refused = true;
                            continue;
                        }
                    };
                    let f = *v as f32;
                    let f = if f.is_infinite() && v.is_finite() {
                        self.batch.clamped += 1;
                        if self.batch.clamp_note.is_none() {
                            self.batch.clamp_note = Some(format!(
                                "'{}': {v} is beyond the f32 range (±3.4e38); drawn clamped",
                                vizdeck_base::text::one_line(name)
                            ));
                        }
                        f32::MAX.copysign(f)
                    } else {
                        f
                    };
                    self.batch.points.push((series, t_ns, f));
                }
                self.batch.refused += u64::from(refused);
                self.batch.point_rows += 1;
            }
            Err(e) => {
                self.stats.parse_errors.fetch_add(1, Ordering::Relaxed);
                if let Ok(mut errors) = self.stats.errors.lock()
                    && errors.len() < ERRORS_KEPT
                {
                    let topic = if topic.is_empty() { "message" } else { topic };
                    errors.push(format!("{}: {e}", vizdeck_base::text::one_line(topic)));
                }
            }
        }
        self.since.get_or_insert_with(Instant::now);
        if self.batch.points.len() >= FLUSH_POINTS {
            self.flush();
        } else {
            self.tick();
        }
    }

    /// Hands the batch over when its first message is [`FLUSH_MS`] old. Transports call this
    /// between messages (at least every few ms while idle).
    fn tick(&mut self) {
        if self
            .since
            .is_some_and(|s| s.elapsed() >= Duration::from_millis(FLUSH_MS))
        {
            self.flush();
        }
    }

    /// Hands the batch over now; a full ring drops its samples (counted) but keeps the
    /// series it starts for the next batch.
    fn flush(&mut self) {
        self.since = None;
        if self.batch.point_rows == 0 && self.batch.new_names.is_empty() {
            return;
        }
        let fresh = self.recycled.pop().unwrap_or_default();
        let batch = std::mem::replace(&mut self.batch, fresh);
        if let Err(PushError::Full(Msg::Batch(mut lost))) = self.tx.push(Msg::Batch(batch)) {
            self.stats
                .dropped
                .fetch_add(lost.point_rows as u64, Ordering::Relaxed);
            self.batch.new_names.append(&mut lost.new_names);
        }
    }

    /// Sends a closing message (`Error` or `Done`), waiting for room.
    fn close(&mut self, msg: Msg, stop: &AtomicBool) {
        self.flush();
        send(&mut self.tx, msg, stop);
    }
}

/// Opens a network source: the URL is checked and, for UDP, the socket bound here (errors
/// return here); connecting, and reconnecting, happen on the source's thread.
///
/// # Errors
///
/// [`SeriesError::Net`]: a bad URL or option, a UDP address that cannot be bound.
pub(crate) fn open_net(opts: &NetOptions) -> Result<SeriesSource, SeriesError> {
    let net_err = |problem: String| SeriesError::Net(problem);
    let endpoint = Endpoint::parse(&opts.url).map_err(net_err)?;
    let shown = redact(&vizdeck_base::text::one_line(&opts.url));
    let stats = Arc::new(LinkStats::new(matches!(endpoint, Endpoint::Udp { .. })));
    let label = format!("{shown} ({} payloads)", opts.payload.format.name());
    let (payload, link) = (opts.payload.clone(), stats.clone());
    let ingest = move |tx, recycled| Ingest {
        decoder: Decoder::new(payload),
        index: HashMap::new(),
        batch: Batch::default(),
        since: None,
        tx,
        recycled,
        stats: link,
    };
    let inner = match endpoint {
        Endpoint::Udp { addr } => {
            let socket = udp::bind(&addr).map_err(|e| net_err(format!("source '{shown}': {e}")))?;
            spawn_producer(
                "vizdeck-series-udp",
                &label,
                NET_RING,
                move |tx, rx, stop| udp::run(socket, ingest(tx, rx), stop),
            )?
        }
        Endpoint::Mqtt(url) => {
            let shown = shown.clone();
            spawn_producer(
                "vizdeck-series-mqtt",
                &label,
                NET_RING,
                move |tx, rx, stop| mqtt::run(&url, &shown, ingest(tx, rx), stop),
            )?
        }
        Endpoint::Zmq { addr, prefix } => {
            let shown = shown.clone();
            spawn_producer(
                "vizdeck-series-zmq",
                &label,
                NET_RING,
                move |tx, rx, stop| zmq::run(&addr, &prefix, &shown, ingest(tx, rx), stop),
            )?
        }
    };
    let mut source = SeriesSource::empty(label, inner);
    source.link = Some(stats);
    Ok(source)
}

impl SeriesSource {
    /// A network source with a time field: what its payload times count from, fixed by its
    /// first timed message ([`TimeBase::Relative`]: seconds of the publisher's own, charted as
    /// seconds and giving no publish → present latency). `None` before that, without a time
    /// field, and for files and synthetic sources.
    pub fn link_time_base(&self) -> Option<TimeBase> {
        self.link.as_ref().and_then(|l| l.time_base())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An ingest of JSON payloads with time field `time_field`, and the render side of its ring.
    fn ingest(time_field: Option<&str>) -> (Ingest, Consumer<Msg>) {
        let (tx, rx) = RingBuffer::new(16);
        let (_recycle, recycled) = RingBuffer::<Batch>::new(16);
        let ingest = Ingest {
            decoder: Decoder::new(PayloadOptions {
                format: super::super::payload::PayloadFormat::Json,
                time_field: time_field.map(str::to_owned),
            }),
            index: HashMap::new(),
            batch: Batch::default(),
            since: None,
            tx,
            recycled,
            stats: Arc::new(LinkStats::new(true)),
        };
        (ingest, rx)
    }

    /// The batch handed over by `flush`.
    fn handed_over(ingest: &mut Ingest, rx: &mut Consumer<Msg>) -> Batch {
        ingest.flush();
        match rx.pop() {
            Ok(Msg::Batch(b)) => b,
            _ => panic!("no batch"),
        }
    }

    /// Points as (series, value), gaps as `None`.
    fn values(batch: &Batch) -> Vec<(u32, Option<f32>)> {
        batch
            .points
            .iter()
            .map(|&(s, _, v)| (s, (!v.is_nan()).then_some(v)))
            .collect()
    }

    #[test]
    fn gaps_go_only_to_series_that_exist() {
        let (mut ingest, mut rx) = ingest(None);
        ingest.message("", br#"{"a": null, "b": 1}"#);
        ingest.message("", br#"{"a": 2, "b": null}"#);
        ingest.message("", br#"{"a": NaN, "c": null}"#);
        let batch = handed_over(&mut ingest, &mut rx);
        // `b` started by the first message, `a` by the second; `c` never held a number.
        assert_eq!(batch.new_names, ["b", "a"]);
        assert_eq!(
            values(&batch),
            [(0, Some(1.0)), (1, Some(2.0)), (0, None), (1, None)]
        );
        assert_eq!(batch.point_rows, 3);
        assert_eq!(ingest.stats.parse_errors.load(Ordering::Relaxed), 0);
        assert_eq!(ingest.stats.time_base(), None);
    }

    #[test]
    fn relative_times_are_seconds_and_give_no_latency_times() {
        let (mut ingest, mut rx) = ingest(Some("t"));
        ingest.message("", br#"{"t": 1.5, "v": 1}"#);
        ingest.message("", br#"{"t": 1700000000, "v": 3}"#);
        ingest.message("", br#"{"v": 4}"#);
        ingest.message("", br#"{"t": 2, "v": 2}"#);
        let batch = handed_over(&mut ingest, &mut rx);
        let points: Vec<(u32, i64, f32)> = batch.points.clone();
        assert_eq!(points, [(0, 1_500_000_000, 1.0), (0, 2_000_000_000, 2.0)]);
        assert!(batch.msg_times.is_empty());
        assert_eq!(ingest.stats.time_base(), Some(TimeBase::Relative));
        assert_eq!(ingest.stats.parse_errors.load(Ordering::Relaxed), 2);
        let errors = ingest.stats.errors();
        assert_eq!(errors.len(), 2);
        assert!(
            errors[0].starts_with("message: time field 't' holds wall-clock (Unix) times"),
            "{errors:?}"
        );
        assert!(
            errors[1].starts_with("message: no time field 't'"),
            "{errors:?}"
        );
    }

    #[test]
    fn unix_times_are_handed_over_for_the_latency() {
        let (mut ingest, mut rx) = ingest(Some("t"));
        ingest.message("", br#"{"t": 1700000000.5, "v": 1}"#);
        ingest.message("", br#"{"t": 7, "v": 2}"#);
        let batch = handed_over(&mut ingest, &mut rx);
        assert_eq!(batch.msg_times, [1_700_000_000_500_000_000]);
        assert_eq!(batch.points, [(0, 1_700_000_000_500_000_000, 1.0)]);
        assert_eq!(ingest.stats.time_base(), Some(TimeBase::Unix));
        assert_eq!(ingest.stats.parse_errors.load(Ordering::Relaxed), 1);
    }

    #[test]
    fn passwords_are_not_shown() {
        assert_eq!(
            redact("mqtt://bob:s3cret@host:1883/a/#?qos=1"),
            "mqtt://bob:***@host:1883/a/#?qos=1"
        );
        assert_eq!(redact("mqtt://bob@host/a"), "mqtt://bob@host/a");
        assert_eq!(redact("udp://0.0.0.0:9870"), "udp://0.0.0.0:9870");
        let e = Endpoint::parse("foo://u:pw@h/x").unwrap_err();
        assert!(e.contains("u:***@h") && !e.contains("pw"), "{e}");
    }
}
