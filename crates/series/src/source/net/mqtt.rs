//! `mqtt://` and `mqtts://`: a subscription through `rumqttc` (MQTT 3.1.1, or 5 with `v=5`),
//! QoS 0 or 1, user and password, TLS (the webpki roots, or a CA file with `ca=PATH`).
//!
//! The topic of each message prefixes its series names ([`super::super::payload`]). Reconnects
//! with [`Backoff`] after a lost or refused connection; the subscription is made again on every
//! connection whose session the broker did not keep. With QoS 1 the session is persistent by
//! default (`clean=0`, MQTT 5: a session expiry of one hour), so messages published while
//! vizdeck was disconnected are delivered when it reconnects.

use std::sync::Arc;

use super::*;

/// Largest MQTT packet accepted, bytes. A larger one (3.1.1) drops the connection, which is
/// reconnected; MQTT 5 tells the broker, which then does not send it. Payloads above
/// [`super::super::payload::MAX_PAYLOAD_BYTES`] are counted as parse errors.
pub(crate) const MAX_PACKET_BYTES: usize = 16 << 20;
/// MQTT 5 session expiry of a persistent session, seconds.
const SESSION_EXPIRY_S: u32 = 3600;

/// A parsed `mqtt://` URL.
#[derive(Clone, Debug, PartialEq)]
pub struct MqttUrl {
    pub host: String,
    pub port: u16,
    pub user: Option<String>,
    pub password: Option<String>,
    /// Topic filter (`+` and `#` wildcards).
    pub filter: String,
    /// 0 or 1.
    pub qos: u8,
    pub client_id: Option<String>,
    /// Clean session (default: on for QoS 0, off for QoS 1).
    pub clean: bool,
    /// MQTT 5 (`v=5`) instead of 3.1.1.
    pub v5: bool,
    pub tls: bool,
    /// PEM file of the CA that signed the broker's certificate (`ca=PATH`).
    pub ca: Option<String>,
}

impl MqttUrl {
    /// Parses what follows `mqtt://`: `[user[:password]@]host[:port]/filter[?options]` with
    /// options `qos=0|1`, `client_id=ID`, `clean=0|1`, `v=3|5`, `ca=PATH`; `%XX` escapes in the
    /// user, password and filter. Port: 1883, or 8883 with TLS.
    ///
    /// # Errors
    ///
    /// No host, a bad port, no topic filter, an unknown or bad option (one line).
    pub fn parse(rest: &str, tls: bool) -> Result<MqttUrl, String> {
        let (main, query) = rest.split_once('?').unwrap_or((rest, ""));
        let (authority, filter) = main
            .split_once('/')
            .ok_or("no topic filter (mqtt://host:port/topic/#)")?;
        if filter.is_empty() {
            return Err("no topic filter (mqtt://host:port/topic/#)".into());
        }
        check_filter(filter)?;
        let (creds, hostport) = match authority.rsplit_once('@') {
            Some((c, h)) => (Some(c), h),
            None => (None, authority),
        };
        let (user, password) = match creds {
            Some(c) => match c.split_once(':') {
                Some((u, p)) => (Some(unescape(u)?), Some(unescape(p)?)),
                None => (Some(unescape(c)?), None),
            },
            None => (None, None),
        };
        let (host, port) = match hostport.rsplit_once(':') {
            Some((h, p)) => (
                h,
                p.parse::<u16>()
                    .map_err(|_| format!("port '{p}' is not a number from 0 to 65535"))?,
            ),
            None => (hostport, if tls { 8883 } else { 1883 }),
        };
        if host.is_empty() {
            return Err("no host".into());
        }
        let mut url = MqttUrl {
            host: host.trim_start_matches('[').trim_end_matches(']').into(),
            port,
            user,
            password,
            filter: unescape(filter)?,
            qos: 0,
            client_id: None,
            clean: true,
            v5: false,
            tls,
            ca: None,
        };
        let mut clean = None;
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            match k {
                "qos" => {
                    url.qos = match v {
                        "0" => 0,
                        "1" => 1,
                        _ => return Err(format!("qos={v}: QoS 0 or 1")),
                    }
                }
                "client_id" => url.client_id = Some(unescape(v)?),
                "clean" => {
                    clean = Some(match v {
                        "0" | "false" => false,
                        "1" | "true" => true,
                        _ => return Err(format!("clean={v}: 0 or 1")),
                    })
                }
                "v" | "version" => {
                    url.v5 = match v {
                        "3" | "3.1.1" | "4" => false,
                        "5" => true,
                        _ => return Err(format!("v={v}: MQTT version 3 (3.1.1) or 5")),
                    }
                }
                "ca" => url.ca = Some(unescape(v)?),
                other => {
                    return Err(format!(
                        "unknown option '{other}' (qos, client_id, clean, v, ca)"
                    ));
                }
            }
        }
        url.clean = clean.unwrap_or(url.qos == 0);
        Ok(url)
    }

    /// The client id: the one given, else `vizdeck-` and a hash of host, port, user and filter,
    /// so that a persistent session (`clean=0`) is resumed by the next run on the same URL; with
    /// a clean session the process id is added (two vizdecks on one URL must not take each
    /// other's connection).
    pub fn client_id(&self) -> String {
        self.client_id.clone().unwrap_or_else(|| {
            // FNV-1a: the same id on every run and build.
            let mut h: u64 = 0xcbf2_9ce4_8422_2325;
            let key = format!(
                "{}:{}:{:?}:{}",
                self.host, self.port, self.user, self.filter
            );
            for b in key.bytes() {
                h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
            }
            if self.clean {
                format!("vizdeck-{}-{:08x}", std::process::id(), h as u32)
            } else {
                format!("vizdeck-{:016x}", h)
            }
        })
    }
}

/// An MQTT topic filter's wildcards: `+` a whole level, `#` a whole last level (MQTT 3.1.1
/// § 4.7.1).
fn check_filter(filter: &str) -> Result<(), String> {
    let levels: Vec<&str> = filter.split('/').collect();
    for (i, level) in levels.iter().enumerate() {
        if level.contains('#') && (*level != "#" || i + 1 != levels.len()) {
            return Err(format!(
                "topic filter '{filter}': '#' must be a whole level, the last one"
            ));
        }
        if level.contains('+') && *level != "+" {
            return Err(format!(
                "topic filter '{filter}': '+' must be a whole level"
            ));
        }
    }
    Ok(())
}

/// Decodes `%XX` escapes.
fn unescape(s: &str) -> Result<String, String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = s
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| format!("bad escape in '{s}'"))?;
            out.push(hex);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| format!("'{s}' is not UTF-8 once unescaped"))
}

/// The TLS configuration: the CA file's certificates, else the webpki roots.
pub fn tls_config(url: &MqttUrl) -> Result<Arc<rustls::ClientConfig>, String> {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    match &url.ca {
        Some(path) => {
            let certs = CertificateDer::pem_file_iter(path)
                .map_err(|e| format!("CA file '{path}': {e}"))?;
            for cert in certs {
                let cert = cert.map_err(|e| format!("CA file '{path}': {e}"))?;
                roots
                    .add(cert)
                    .map_err(|e| format!("CA file '{path}': {e}"))?;
            }
        }
        None => roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned()),
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS: {e}"))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(Arc::new(config))
}

/// Subscribes and receives until `stop`, reconnecting as needed.
pub(super) fn run(url: &MqttUrl, shown: &str, mut ingest: Ingest, stop: &AtomicBool) {
    let transport = if url.tls {
        match tls_config(url) {
            Ok(c) => Some(rumqttc::Transport::tls_with_config(
                rumqttc::TlsConfiguration::Rustls(c),
            )),
            Err(e) => {
                let reason = format!("source '{shown}': {e}");
                ingest.stats.failed(&reason);
                ingest.close(Msg::Error(reason), stop);
                return;
            }
        }
    } else {
        None
    };
    if url.v5 {
        run_v5(url, shown, transport, &mut ingest, stop);
    } else {
        run_v4(url, shown, transport, &mut ingest, stop);
    }
    ingest.flush();
}

/// Why a refused connection is not retried (a wrong password, an id or protocol refused).
fn refusal_is_final(reason: &str) -> bool {
    [
        "UserName",
        "Password",
        "NotAuthorized",
        "Authoriz",
        "ClientId",
        "Protocol",
        "Banned",
    ]
    .iter()
    .any(|k| reason.contains(k))
}

/// How long one poll of the event loop may wait: [`FLUSH_MS`] while connected (batches are handed
/// over between polls), a second while connecting: a poll cut short in the middle of a connection
/// attempt would drop it and start another.
fn poll_timeout(stats: &LinkStats) -> Duration {
    if stats.state() == LinkState::Connected {
        Duration::from_millis(FLUSH_MS)
    } else {
        Duration::from_secs(1)
    }
}

/// After a connection error (`reason`; `refused`: the broker answered the CONNECT with a
/// refusal): a final refusal fails the source; anything else waits the backoff. Returns
/// whether to go on.
fn after_error(
    shown: &str,
    reason: String,
    refused: bool,
    ingest: &mut Ingest,
    backoff: &mut Backoff,
    stop: &AtomicBool,
) -> bool {
    if refused && refusal_is_final(&reason) {
        let reason = format!("source '{shown}': {reason}");
        ingest.stats.failed(&reason);
        ingest.close(Msg::Error(reason), stop);
        return false;
    }
    ingest.flush();
    backoff.wait(&ingest.stats, &reason, stop)
}

/// A SUBACK that refused the filter fails the source.
fn subscription_refused(shown: &str, filter: &str, ingest: &mut Ingest, stop: &AtomicBool) {
    let reason = format!("source '{shown}': the broker refused the subscription to '{filter}'");
    ingest.stats.failed(&reason);
    ingest.close(Msg::Error(reason), stop);
}

/// A CONNACK: the connection is up; subscribes unless the broker kept the session's
/// subscription.
fn connected(
    session_present: bool,
    url: &MqttUrl,
    subscribe: impl FnOnce() -> Result<(), String>,
    ingest: &Ingest,
    backoff: &mut Backoff,
    shown: &str,
) {
    backoff.reset();
    ingest.stats.connected();
    if (!session_present || url.clean)
        && let Err(e) = subscribe()
    {
        log::warn!("source '{shown}': subscribe: {e}");
    }
}

/// A connection error as one line.
fn describe(e: &dyn std::fmt::Display) -> String {
    let s = e.to_string();
    if s.contains("Connection refused (os error") || s.contains("ConnectionRefused") {
        "connection refused (is the broker running?)".into()
    } else {
        s
    }
}

fn run_v4(
    url: &MqttUrl,
    shown: &str,
    transport: Option<rumqttc::Transport>,
    ingest: &mut Ingest,
    stop: &AtomicBool,
) {
    use rumqttc::{Client, ConnectionError, Event, MqttOptions, Packet, QoS, RecvTimeoutError};
    let mut opts = MqttOptions::new(url.client_id(), url.host.clone(), url.port);
    opts.set_keep_alive(Duration::from_secs(5))
        .set_clean_session(url.clean)
        .set_max_packet_size(MAX_PACKET_BYTES, 64 * 1024);
    if let Some(user) = &url.user {
        opts.set_credentials(user.clone(), url.password.clone().unwrap_or_default());
    }
    if let Some(t) = transport {
        opts.set_transport(t);
    }
    let qos = if url.qos == 1 {
        QoS::AtLeastOnce
    } else {
        QoS::AtMostOnce
    };
    let (client, mut connection) = Client::new(opts, 16);
    let mut backoff = Backoff::new();
    while !stop.load(Ordering::Relaxed) {
        match connection.recv_timeout(poll_timeout(&ingest.stats)) {
            Ok(Ok(Event::Incoming(Packet::Publish(p)))) => ingest.message(&p.topic, &p.payload),
            Ok(Ok(Event::Incoming(Packet::ConnAck(ack)))) => {
                let subscribe = || {
                    client
                        .try_subscribe(url.filter.clone(), qos)
                        .map_err(|e| e.to_string())
                };
                connected(
                    ack.session_present,
                    url,
                    subscribe,
                    ingest,
                    &mut backoff,
                    shown,
                );
            }
            Ok(Ok(Event::Incoming(Packet::SubAck(ack)))) => {
                if ack
                    .return_codes
                    .iter()
                    .any(|c| matches!(c, rumqttc::SubscribeReasonCode::Failure))
                {
                    return subscription_refused(shown, &url.filter, ingest, stop);
                }
            }
            Ok(Ok(_)) => {}
            Ok(Err(e)) => {
                let (reason, refused) = match &e {
                    ConnectionError::ConnectionRefused(code) => {
                        (format!("the broker refused the connection: {code:?}"), true)
                    }
                    other => (describe(other), false),
                };
                if !after_error(shown, reason, refused, ingest, &mut backoff, stop) {
                    return;
                }
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => return,
        }
        ingest.tick();
    }
    let _ = client.try_disconnect();
}

fn run_v5(
    url: &MqttUrl,
    shown: &str,
    transport: Option<rumqttc::Transport>,
    ingest: &mut Ingest,
    stop: &AtomicBool,
) {
    use rumqttc::v5::mqttbytes::QoS;
    use rumqttc::v5::mqttbytes::v5::Packet;
    use rumqttc::v5::{Client, ConnectionError, Event, MqttOptions};
    let mut opts = MqttOptions::new(url.client_id(), url.host.clone(), url.port);
    opts.set_keep_alive(Duration::from_secs(5))
        .set_clean_start(url.clean)
        .set_max_packet_size(Some(MAX_PACKET_BYTES as u32));
    if !url.clean {
        opts.set_session_expiry_interval(Some(SESSION_EXPIRY_S));
    }
    if let Some(user) = &url.user {
        opts.set_credentials(user.clone(), url.password.clone().unwrap_or_default());
    }
    if let Some(t) = transport {
        opts.set_transport(t);
    }
    let qos = if url.qos == 1 {
        QoS::AtLeastOnce
    } else {
        QoS::AtMostOnce
    };
    let (client, mut connection) = Client::new(opts, 16);
    let mut backoff = Backoff::new();
    let mut topic = String::new();
    while !stop.load(Ordering::Relaxed) {
        match connection.recv_timeout(poll_timeout(&ingest.stats)) {
            Ok(Ok(Event::Incoming(Packet::Publish(p)))) => {
                topic.clear();
                topic.push_str(&String::from_utf8_lossy(&p.topic));
                ingest.message(&topic, &p.payload);
            }
            Ok(Ok(Event::Incoming(Packet::ConnAck(ack)))) => {
                let subscribe = || {
                    client
                        .try_subscribe(url.filter.clone(), qos)
                        .map_err(|e| e.to_string())
                };
                connected(
                    ack.session_present,
                    url,
                    subscribe,
                    ingest,
                    &mut backoff,
                    shown,
                );
            }
            Ok(Ok(Event::Incoming(Packet::SubAck(ack)))) => {
                use rumqttc::v5::mqttbytes::v5::SubscribeReasonCode as R;
                if ack.return_codes.iter().any(|c| !matches!(c, R::Success(_))) {
                    return subscription_refused(shown, &url.filter, ingest, stop);
                }
            }
            Ok(Ok(_)) => {}
            Ok(Err(e)) => {
                let (reason, refused) = match &e {
                    ConnectionError::ConnectionRefused(code) => {
                        (format!("the broker refused the connection: {code:?}"), true)
                    }
                    other => (describe(other), false),
                };
                if !after_error(shown, reason, refused, ingest, &mut backoff, stop) {
                    return;
                }
            }
            Err(rumqttc::v5::RecvTimeoutError::Timeout) => {}
            Err(rumqttc::v5::RecvTimeoutError::Disconnected) => return,
        }
        ingest.tick();
    }
    let _ = client.try_disconnect();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        let u = MqttUrl::parse("bob:p%40ss@broker.lan:1884/lab/+/temp?qos=1&v=5", false).unwrap();
        assert_eq!(
            (
                u.host.as_str(),
                u.port,
                u.user.as_deref(),
                u.password.as_deref()
            ),
            ("broker.lan", 1884, Some("bob"), Some("p@ss"))
        );
        assert_eq!(
            (u.filter.as_str(), u.qos, u.clean, u.v5),
            ("lab/+/temp", 1, false, true)
        );
        let u = MqttUrl::parse("localhost/#", true).unwrap();
        assert_eq!((u.port, u.qos, u.clean, u.tls), (8883, 0, true, true));
        assert!(
            MqttUrl::parse("localhost", false)
                .unwrap_err()
                .contains("topic")
        );
        assert!(
            MqttUrl::parse("h:99999/t", false)
                .unwrap_err()
                .contains("99999")
        );
        assert!(
            MqttUrl::parse("h/t?qos=2", false)
                .unwrap_err()
                .contains("qos=2")
        );
        assert!(
            MqttUrl::parse("h/t?x=1", false)
                .unwrap_err()
                .contains("'x'")
        );
    }
}
