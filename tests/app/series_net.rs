//! Live network sources of the time-series scene (issue 15) against real peers: UDP datagrams
//! from the test, a Debian `mosquitto` broker the test starts (wildcards, JSON fields, QoS 1
//! through a broker restart, a broker down at start, a wrong password, a 10 MB message, 10,000
//! topics), ZeroMQ publishers (the `zeromq` crate and libzmq through pyzmq). Expected series and
//! values are the ones the test sends.

use crate::common;

use std::time::{Duration, Instant};

use common::mosquitto::{Broker, free_port};
use vizdeck::series::source::net::{LinkState, NetOptions};
use vizdeck::series::source::payload::{PayloadFormat, PayloadOptions, TimeBase};
use vizdeck::series::{Pacing, SeriesSelection, SeriesSource, Store};

/// A UDP source on a free loopback port with `format` and `time_field`, a fresh store, and a
/// socket to send it datagrams from; the port last.
fn udp(
    format: PayloadFormat,
    time_field: Option<&str>,
) -> (SeriesSource, Store, std::net::UdpSocket, u16) {
    let port = free_port();
    let src = open(&format!("udp://127.0.0.1:{port}"), format, time_field);
    let tx = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    (src, Store::default(), tx, port)
}

fn open(url: &str, format: PayloadFormat, time_field: Option<&str>) -> SeriesSource {
    SeriesSource::open(
        &SeriesSelection::Net(NetOptions {
            url: url.to_string(),
            payload: PayloadOptions {
                format,
                time_field: time_field.map(str::to_string),
            },
        }),
        Pacing::WallClock,
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

/// Drains `src` into `store` until `done` holds (panics after `secs` seconds, naming `what`).
fn until(
    src: &mut SeriesSource,
    store: &mut Store,
    secs: u64,
    what: &str,
    mut done: impl FnMut(&SeriesSource, &Store) -> bool,
) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        src.drain_into(store);
        if done(src, store) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{what}: gave up; link {:?}; series {:?}",
            src.link(),
            src.names()
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn values(store: &Store, name: &str) -> Vec<f32> {
    store
        .get(name)
        .map(|s| s.iter().map(|(_, v)| v).collect())
        .unwrap_or_default()
}

/// Values of series `name`, gaps (NaN) as `None`.
fn values_with_gaps(store: &Store, name: &str) -> Vec<Option<f32>> {
    values(store, name)
        .into_iter()
        .map(|v| (!v.is_nan()).then_some(v))
        .collect()
}

fn connected(src: &SeriesSource) -> bool {
    src.link().is_some_and(|l| l.state == LinkState::Connected)
}

#[test]
fn udp_json_datagrams_with_malformed_ones() {
    let (mut src, mut store, tx, port) = udp(PayloadFormat::Auto, None);
    let to = ("127.0.0.1", port);
    let bad: [&[u8]; 3] = [b"{\"a\": ", b"hello there", b"{\"text\": \"no numbers\"}"];
    for k in 0..200 {
        let msg = format!("{{\"a\": {k}, \"b\": {{\"c\": {}}}}}", 2 * k);
        tx.send_to(msg.as_bytes(), to).unwrap();
        if k % 50 == 7 {
            tx.send_to(bad[(k / 50) % 3], to).unwrap();
        }
        // Loopback drops nothing at this pace (the kernel's count is checked below).
        std::thread::sleep(Duration::from_micros(200));
    }
    until(&mut src, &mut store, 10, "udp", |_, s| {
        values(s, "b/c").len() == 200
    });
    assert_eq!(src.names(), ["a", "b/c"]);
    let want_a: Vec<f32> = (0..200).map(|k| k as f32).collect();
    let want_c: Vec<f32> = (0..200).map(|k| 2.0 * k as f32).collect();
    assert_eq!(values(&store, "a"), want_a);
    assert_eq!(values(&store, "b/c"), want_c);
    let link = src.link().unwrap();
    assert_eq!(link.state, LinkState::Connected);
    assert_eq!(link.messages, 204);
    assert_eq!(link.parse_errors, 4);
    assert_eq!(link.errors.len(), 4, "{:?}", link.errors);
    assert!(
        link.errors.iter().any(|e| e.contains("no numeric")),
        "{:?}",
        link.errors
    );
    assert_eq!(link.dropped, 0);
    assert_eq!(link.transport_lost, Some(0));
}

/// Nulls, Python's `NaN` / `Infinity` / `-Infinity` tokens and a MessagePack nil are gaps of
/// the series their path names; a path that never held a number starts no series.
#[test]
fn udp_nulls_and_non_finite_tokens_are_gaps() {
    let (mut src, mut store, tx, port) = udp(PayloadFormat::Auto, None);
    let nil = rmp_serde::to_vec_named(&serde_json::json!({"a": null})).unwrap();
    let datagrams: [&[u8]; 7] = [
        br#"{"a": 1, "n": null}"#,
        br#"{"a": null}"#,
        br#"{"a": NaN, "b": 5}"#,
        br#"{"a": 2, "b": Infinity}"#,
        br#"{"a": -Infinity}"#,
        &nil,
        br#"{"a": 3}"#,
    ];
    for d in datagrams {
        tx.send_to(d, ("127.0.0.1", port)).unwrap();
        std::thread::sleep(Duration::from_millis(2));
    }
    until(&mut src, &mut store, 10, "gaps", |_, s| {
        values(s, "a").len() == 7
    });
    assert_eq!(src.names(), ["a", "b"]);
    assert_eq!(
        values_with_gaps(&store, "a"),
        [Some(1.0), None, None, Some(2.0), None, None, Some(3.0)]
    );
    assert_eq!(values_with_gaps(&store, "b"), [Some(5.0), None]);
    assert_eq!(store.get("a").unwrap().gaps(), 4);
    assert_eq!(store.get("b").unwrap().gaps(), 1);
    assert!(store.get("n").is_none());
    let link = src.link().unwrap();
    assert_eq!(link.messages, 7);
    assert_eq!(link.parse_errors, 0, "{:?}", link.errors);
}

/// A time field below 1e8 (seconds since the publisher started) gives the samples those
/// seconds, on an axis of seconds; a Unix time among them is refused as a parse error; no
/// payload times are handed over for the publish → present latency.
#[test]
fn udp_relative_time_field_is_seconds() {
    use vizdeck::scene::timeseries::axis;
    use vizdeck::series::source::dates::Zone;
    let (mut src, mut store, tx, port) = udp(PayloadFormat::Json, Some("t"));
    for k in 0..20 {
        let msg = format!("{{\"t\": {}, \"v\": {k}}}", 0.5 * k as f64);
        tx.send_to(msg.as_bytes(), ("127.0.0.1", port)).unwrap();
        if k == 10 {
            tx.send_to(br#"{"t": 1700000000000, "v": 99}"#, ("127.0.0.1", port))
                .unwrap();
        }
    }
    until(&mut src, &mut store, 10, "relative", |_, s| {
        values(s, "v").len() == 20
    });
    assert_eq!(src.names(), ["v"]);
    assert_eq!(src.link_time_base(), Some(TimeBase::Relative));
    let series = store.get("v").unwrap();
    // The first message's t = 0 s is the origin: 0 ns, not a date.
    assert_eq!(series.origin_ns(), Some(0));
    let times: Vec<f64> = series.iter().map(|(t, _)| t).collect();
    let want: Vec<f64> = (0..20).map(|k| 0.5 * k as f64).collect();
    assert_eq!(times, want);
    assert_eq!(
        values(&store, "v"),
        (0..20).map(|k| k as f32).collect::<Vec<_>>()
    );
    let link = src.link().unwrap();
    assert_eq!(link.parse_errors, 1);
    assert!(
        link.errors[0].contains("relative seconds"),
        "{:?}",
        link.errors
    );
    let mut times = Vec::new();
    src.take_message_times(&mut times);
    assert!(times.is_empty(), "{times:?}");
    // The chart's axis over the data labels seconds, not dates.
    let origin = Some((series.origin().unwrap(), series.origin_ns()));
    let ticks = axis::time_ticks(origin, 0.0, 9.5, 5.0, Zone::Utc);
    assert!(!ticks.is_empty());
    for (_, label) in &ticks {
        assert!(label.ends_with(" s") && !label.contains(':'), "{ticks:?}");
    }
    assert_eq!(ticks[0].1, "0 s");
}

/// A time field in epoch milliseconds gives each sample its own time, exactly.
#[test]
fn udp_time_field_sets_sample_times() {
    let (mut src, mut store, tx, port) = udp(PayloadFormat::Json, Some("ts"));
    let t0_ms: i64 = 1_700_000_000_000;
    for k in 0..50i64 {
        let msg = format!("{{\"ts\": {}, \"v\": {k}}}", t0_ms + 250 * k);
        tx.send_to(msg.as_bytes(), ("127.0.0.1", port)).unwrap();
    }
    until(&mut src, &mut store, 10, "udp ts", |_, s| {
        values(s, "v").len() == 50
    });
    assert_eq!(src.names(), ["v"]);
    let series = store.get("v").unwrap();
    assert_eq!(series.origin_ns(), Some(t0_ms * 1_000_000));
    let times: Vec<f64> = series
        .iter()
        .map(|(t, _)| t - series.origin().unwrap())
        .collect();
    let want: Vec<f64> = (0..50).map(|k| 0.25 * k as f64).collect();
    assert_eq!(times, want);
}

#[test]
fn bad_urls_name_the_source() {
    for (url, needle) in [
        ("http://example.com/x", "unknown scheme 'http'"),
        ("mqtt://localhost", "topic filter"),
        ("udp://127.0.0.1", "no port"),
        ("zmq+tcp://:5556", "no host"),
        ("mqtt://h/t?qos=2", "qos=2"),
        ("nonsense", "not a URL"),
    ] {
        let e = SeriesSource::open(
            &SeriesSelection::Net(NetOptions {
                url: url.into(),
                payload: PayloadOptions::default(),
            }),
            Pacing::WallClock,
        )
        .err()
        .unwrap()
        .to_string();
        assert!(e.contains(needle) && e.contains(url), "{url}: {e}");
    }
    // A port someone else holds cannot be bound.
    let held = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let url = format!("udp://{}", held.local_addr().unwrap());
    let e = SeriesSource::open(
        &SeriesSelection::Net(NetOptions {
            url: url.clone(),
            payload: PayloadOptions::default(),
        }),
        Pacing::WallClock,
    )
    .err()
    .unwrap()
    .to_string();
    assert!(e.contains(&url) && e.contains("cannot listen"), "{e}");
}

/// Publishes `payload` on `topic` with `mosquitto_pub` (QoS `qos`).
fn mosquitto_pub(port: u16, topic: &str, payload: &str, qos: u8) {
    let ok = std::process::Command::new("mosquitto_pub")
        .args([
            "-h",
            "127.0.0.1",
            "-p",
            &port.to_string(),
            "-q",
            &qos.to_string(),
        ])
        .args(["-t", topic, "-m", payload])
        .status()
        .expect("mosquitto_pub (apt-get install mosquitto-clients)")
        .success();
    assert!(ok, "mosquitto_pub {topic}");
}

/// A publishing client of the `rumqttc` crate driven on its own thread (detached: the event
/// loop keeps its own handle on the request channel, so it does not end with the client).
struct Publisher {
    client: Option<rumqttc::Client>,
}

impl Publisher {
    fn new(port: u16, id: &str, clean: bool) -> Publisher {
        let mut opts = rumqttc::MqttOptions::new(id, "127.0.0.1", port);
        opts.set_clean_session(clean)
            .set_keep_alive(Duration::from_secs(5))
            .set_max_packet_size(32 << 20, 32 << 20);
        let (client, mut conn) = rumqttc::Client::new(opts, 100_000);
        std::thread::spawn(move || {
            for event in conn.iter() {
                if let Err(rumqttc::ConnectionError::RequestsDone) = event {
                    return;
                }
                if event.is_err() {
                    std::thread::sleep(Duration::from_millis(100));
                }
            }
        });
        Publisher {
            client: Some(client),
        }
    }

    fn publish(&self, topic: &str, payload: impl Into<Vec<u8>>, qos1: bool) {
        let qos = if qos1 {
            rumqttc::QoS::AtLeastOnce
        } else {
            rumqttc::QoS::AtMostOnce
        };
        if let Some(c) = &self.client {
            c.publish(topic, qos, false, payload).unwrap();
        }
    }
}

impl Drop for Publisher {
    fn drop(&mut self) {
        if let Some(c) = self.client.take() {
            let _ = c.try_disconnect();
        }
    }
}

#[test]
#[ignore = "needs mosquitto: run through `cargo xtask test`"]
fn mqtt_wildcards_and_json_fields() {
    let mut broker = Broker::new("wild");
    broker.start();
    let url = format!("mqtt://127.0.0.1:{}/lab/+/data", broker.port);
    let mut src = open(&url, PayloadFormat::Auto, None);
    let mut store = Store::default();
    until(&mut src, &mut store, 10, "connect", |s, _| connected(s));
    // The subscription is made on the connection: give the broker its SUBACK.
    std::thread::sleep(Duration::from_millis(200));
    for k in 0..20 {
        mosquitto_pub(broker.port, "lab/a/data", &k.to_string(), 1);
        mosquitto_pub(
            broker.port,
            "lab/b/data",
            &format!("{{\"temp\": {k}.5, \"imu\": {{\"x\": {}}}}}", -k),
            1,
        );
        // Not matched by the filter.
        mosquitto_pub(broker.port, "lab/a/other", "99", 1);
        mosquitto_pub(broker.port, "lab/a/b/data", "98", 1);
    }
    until(&mut src, &mut store, 20, "mqtt", |_, s| {
        values(s, "lab/a/data").len() == 20 && values(s, "lab/b/data/imu/x").len() == 20
    });
    let mut names = src.names().to_vec();
    names.sort();
    assert_eq!(names, ["lab/a/data", "lab/b/data/imu/x", "lab/b/data/temp"]);
    assert_eq!(
        values(&store, "lab/a/data"),
        (0..20).map(|k| k as f32).collect::<Vec<_>>()
    );
    assert_eq!(
        values(&store, "lab/b/data/temp"),
        (0..20).map(|k| k as f32 + 0.5).collect::<Vec<_>>()
    );
    assert_eq!(
        values(&store, "lab/b/data/imu/x"),
        (0..20).map(|k| -k as f32).collect::<Vec<_>>()
    );
    assert_eq!(src.link().unwrap().messages, 40);
}

/// QoS 1 with a persistent session through a broker restart mid-stream: every message the
/// publisher sent arrives (at least once), in order per value.
#[test]
#[ignore = "needs mosquitto: run through `cargo xtask test`"]
fn mqtt_qos1_survives_a_broker_restart() {
    let mut broker = Broker::new("restart");
    broker.start();
    let url = format!("mqtt://127.0.0.1:{}/seq?qos=1", broker.port);
    let mut src = open(&url, PayloadFormat::Number, None);
    let mut store = Store::default();
    until(&mut src, &mut store, 10, "connect", |s, _| connected(s));
    std::thread::sleep(Duration::from_millis(200));
    let publisher = Publisher::new(broker.port, "vizdeck-test-pub", false);
    let n = 300;
    for k in 0..n {
        publisher.publish("seq", k.to_string(), true);
        if k == n / 2 {
            // Let half arrive, then restart the broker (its database keeps both sessions and
            // what is queued for vizdeck).
            until(&mut src, &mut store, 20, "first half", |_, s| {
                values(s, "seq").len() as u32 > n / 4
            });
            broker.stop();
            std::thread::sleep(Duration::from_millis(300));
            broker.start();
        }
    }
    until(&mut src, &mut store, 60, "after restart", |_, s| {
        let mut got: Vec<u32> = values(s, "seq").iter().map(|&v| v as u32).collect();
        got.sort();
        got.dedup();
        got.len() as u32 == n
    });
    let link = src.link().unwrap();
    assert!(link.connects >= 2, "{link:?}");
}

#[test]
#[ignore = "needs mosquitto: run through `cargo xtask test`"]
fn mqtt_broker_down_at_start_then_up() {
    let mut broker = Broker::new("late");
    let url = format!("mqtt://127.0.0.1:{}/late", broker.port);
    let mut src = open(&url, PayloadFormat::Auto, None);
    let mut store = Store::default();
    until(&mut src, &mut store, 10, "reconnecting", |s, _| {
        matches!(
            s.link().unwrap().state,
            LinkState::Reconnecting { ref reason, .. } if reason.contains("refused")
        )
    });
    broker.start();
    until(&mut src, &mut store, 20, "connect", |s, _| connected(s));
    std::thread::sleep(Duration::from_millis(200));
    mosquitto_pub(broker.port, "late", "42", 0);
    until(&mut src, &mut store, 10, "message", |_, s| {
        values(s, "late") == [42.0]
    });
}

#[test]
#[ignore = "needs mosquitto: run through `cargo xtask test`"]
fn mqtt_wrong_password_fails_with_a_reason() {
    let mut broker = Broker::with_config(
        "auth",
        "allow_anonymous false\npassword_file {dir}/passwd\n",
    );
    let ok = std::process::Command::new("mosquitto_passwd")
        .args(["-c", "-b"])
        .arg(broker.dir().join("passwd"))
        .args(["alice", "secret"])
        .status()
        .unwrap()
        .success();
    assert!(ok);
    broker.start();
    let url = format!("mqtt://alice:wrong@127.0.0.1:{}/t", broker.port);
    let mut src = open(&url, PayloadFormat::Auto, None);
    let mut store = Store::default();
    until(&mut src, &mut store, 10, "refusal", |s, _| {
        matches!(s.link().unwrap().state, LinkState::Failed(_))
    });
    let LinkState::Failed(reason) = src.link().unwrap().state else {
        unreachable!()
    };
    // The password is not shown.
    let shown = vizdeck::series::source::net::redact(&url);
    assert!(
        shown.contains("alice:***@") && !reason.contains("wrong"),
        "{reason}"
    );
    assert!(
        reason.contains(&shown) && reason.contains("refused"),
        "{reason}"
    );
    assert_eq!(src.error().as_deref(), Some(reason.as_str()));
    // The right password works.
    let url = format!("mqtt://alice:secret@127.0.0.1:{}/t", broker.port);
    let mut src = open(&url, PayloadFormat::Auto, None);
    until(&mut src, &mut store, 10, "connect", |s, _| connected(s));
}

/// A 10 MB message is refused by the payload cap and counted; the stream goes on. 10,000
/// topics start the first 1024 series and count the rest.
#[test]
#[ignore = "needs mosquitto: run through `cargo xtask test`"]
fn mqtt_huge_message_and_ten_thousand_topics() {
    use vizdeck::series::source::MAX_SERIES;
    let mut broker = Broker::new("huge");
    broker.start();
    let url = format!("mqtt://127.0.0.1:{}/big/#?qos=1", broker.port);
    let mut src = open(&url, PayloadFormat::Auto, None);
    let mut store = Store::default();
    until(&mut src, &mut store, 10, "connect", |s, _| connected(s));
    std::thread::sleep(Duration::from_millis(200));
    let publisher = Publisher::new(broker.port, "vizdeck-test-big", true);
    publisher.publish("big/x", "1", true);
    let mut huge = b"[".to_vec();
    while huge.len() < 10_000_000 {
        huge.extend_from_slice(b"1.0,");
    }
    huge.extend_from_slice(b"1]");
    publisher.publish("big/huge", huge, true);
    publisher.publish("big/x", "2", true);
    until(&mut src, &mut store, 30, "after the huge one", |_, s| {
        values(s, "big/x") == [1.0, 2.0]
    });
    let link = src.link().unwrap();
    assert_eq!(link.parse_errors, 1);
    assert!(
        link.errors[0].contains("big/huge") && link.errors[0].contains("cap"),
        "{:?}",
        link.errors
    );
    for k in 0..10_000 {
        publisher.publish(&format!("big/t{k}"), "3", true);
    }
    // big/x took one series: 1023 of the new topics fit.
    let refused = 10_000 - (MAX_SERIES as u64 - 1);
    until(&mut src, &mut store, 60, "10k topics", |s, _| {
        s.series_refused() >= refused
    });
    assert_eq!(src.link().unwrap().messages, 3 + 10_000);
    assert_eq!(src.series_refused(), refused);
    assert_eq!(src.names().len(), MAX_SERIES);
    assert_eq!(store.series().len(), MAX_SERIES);
}

/// The `zeromq` crate's PUB socket on its own thread, multipart topic + JSON payload, two
/// topics of which the subscription's prefix takes one.
#[test]
fn zmq_multipart_topic_and_prefix() {
    let port = free_port();
    let publisher = std::thread::spawn(move || {
        use zeromq::{Socket, SocketSend};
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let mut publisher = zeromq::PubSocket::new();
            publisher
                .bind(&format!("tcp://127.0.0.1:{port}"))
                .await
                .unwrap();
            for k in 0..2000u32 {
                for topic in ["sensor/a", "other/a"] {
                    let mut msg = zeromq::ZmqMessage::from(topic.to_string());
                    msg.push_back(format!("{{\"v\": {k}}}").into_bytes().into());
                    publisher.send(msg).await.unwrap();
                }
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
        });
    });
    let url = format!("zmq+tcp://127.0.0.1:{port}/sensor");
    let mut src = open(&url, PayloadFormat::Auto, None);
    let mut store = Store::default();
    until(&mut src, &mut store, 30, "zmq", |_, s| {
        values(s, "sensor/a/v").last() == Some(&1999.0)
    });
    publisher.join().unwrap();
    let got = values(&store, "sensor/a/v");
    assert!(got.len() >= 200, "{}", got.len());
    assert_eq!(src.link().unwrap().dropped, 0);
    // Consecutive once joined: every value one more than the one before, none lost.
    assert!(got.windows(2).all(|w| w[1] == w[0] + 1.0), "{got:?}");
    assert_eq!(src.names(), ["sensor/a/v"]);
    assert!(connected(&src) || src.link().unwrap().connects >= 1);
}

/// Three-frame messages (topic, payload, timestamp: a common layout) from the `zeromq` crate's
/// PUB socket: the second frame is the payload, the third (a decimal timestamp on one topic, an
/// 8-byte little-endian integer on the other) is ignored, never charted as a series named after
/// the topic, and no parse error is counted.
#[test]
fn zmq_three_frames_topic_payload_timestamp() {
    let port = free_port();
    let publisher = std::thread::spawn(move || {
        use zeromq::{Socket, SocketSend};
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let mut publisher = zeromq::PubSocket::new();
            publisher
                .bind(&format!("tcp://127.0.0.1:{port}"))
                .await
                .unwrap();
            for k in 0..2000u32 {
                let stamp = 1_700_000_000.0 + f64::from(k) * 0.01;
                let mut msg = zeromq::ZmqMessage::from("sensor/a".to_string());
                msg.push_back(format!("{{\"v\": {k}}}").into_bytes().into());
                msg.push_back(format!("{stamp:.2}").into_bytes().into());
                publisher.send(msg).await.unwrap();
                let mut msg = zeromq::ZmqMessage::from("sensor/b".to_string());
                msg.push_back(format!("{}", 2 * k).into_bytes().into());
                let ns = 1_700_000_000_000_000_000i64 + i64::from(k) * 10_000_000;
                msg.push_back(ns.to_le_bytes().to_vec().into());
                publisher.send(msg).await.unwrap();
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
        });
    });
    let url = format!("zmq+tcp://127.0.0.1:{port}/sensor");
    let mut src = open(&url, PayloadFormat::Auto, None);
    let mut store = Store::default();
    until(&mut src, &mut store, 30, "zmq", |_, s| {
        values(s, "sensor/a/v").last() == Some(&1999.0)
            && values(s, "sensor/b").last() == Some(&3998.0)
    });
    publisher.join().unwrap();
    let a = values(&store, "sensor/a/v");
    let b = values(&store, "sensor/b");
    assert!(a.len() >= 200 && b.len() >= 200, "{} {}", a.len(), b.len());
    // The payloads, consecutive once joined: k for `a`, 2k for `b`; no timestamp among them.
    assert!(a.windows(2).all(|w| w[1] == w[0] + 1.0), "{a:?}");
    assert!(b.windows(2).all(|w| w[1] == w[0] + 2.0), "{b:?}");
    let mut names = src.names().to_vec();
    names.sort();
    assert_eq!(names, ["sensor/a/v", "sensor/b"]);
    let link = src.link().unwrap();
    assert_eq!(link.parse_errors, 0, "{:?}", link.errors);
}

/// libzmq's own PUB socket (pyzmq), single-frame payloads: the pure-Rust SUB speaks to it.
#[test]
#[ignore = "needs python3-zmq: run through `cargo xtask test`"]
fn zmq_from_libzmq_publisher() {
    let port = free_port();
    let script = format!(
        "import zmq, time, sys\n\
         s = zmq.Context().socket(zmq.PUB)\n\
         s.bind('tcp://127.0.0.1:{port}')\n\
         for k in range(3000):\n\
         \x20   s.send_string('%d' % k)\n\
         \x20   time.sleep(0.002)\n"
    );
    let mut py = std::process::Command::new("/usr/bin/python3")
        .args(["-c", &script])
        .spawn()
        .expect("/usr/bin/python3");
    let url = format!("zmq+tcp://127.0.0.1:{port}");
    let mut src = open(&url, PayloadFormat::Number, None);
    let mut store = Store::default();
    until(&mut src, &mut store, 20, "libzmq", |_, s| {
        values(s, "value").len() >= 100
    });
    let _ = py.kill();
    let _ = py.wait();
    let got = values(&store, "value");
    // Consecutive once joined: every value one more than the one before.
    assert!(got.windows(2).all(|w| w[1] == w[0] + 1.0), "{got:?}");
}

/// Runs the app headless on a UDP source (with `args` added), sends it the 100 payloads
/// `payload(k)` (after giving it time to start), stops it, and returns its report's
/// `scenes.timeseries`. `tag` names the report file.
fn headless_udp_run(
    tag: &str,
    args: &[&str],
    payload: impl Fn(u32) -> String,
) -> serde_json::Value {
    let port = free_port();
    let report = std::env::temp_dir().join(format!(
        "vizdeck_net_report_{tag}_{}.json",
        std::process::id()
    ));
    let mut app = std::process::Command::new(env!("CARGO_BIN_EXE_vizdeck"))
        .args(["--headless", "--scene", "timeseries", "--size", "320x200"])
        .args(["--frames", "100000000", "--series-source"])
        .arg(format!("udp://127.0.0.1:{port}"))
        .args(args)
        .arg("--report")
        .arg(&report)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let tx = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    // The socket is bound once the scene opens: send until the app has had time to start,
    // then 100 known messages.
    std::thread::sleep(Duration::from_secs(3));
    for k in 0..100 {
        tx.send_to(payload(k).as_bytes(), ("127.0.0.1", port))
            .unwrap();
        std::thread::sleep(Duration::from_millis(5));
    }
    std::thread::sleep(Duration::from_millis(500));
    let _ = std::process::Command::new("kill")
        .args(["-s", "TERM", &app.id().to_string()])
        .status();
    assert!(app.wait().unwrap().success());
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    std::fs::remove_file(&report).ok();
    json["scenes"]["timeseries"].clone()
}

/// The app, headless, charting UDP datagrams sent while it runs: the report lists the series
/// and the link's counters.
#[test]
fn headless_app_charts_a_udp_stream() {
    let ts = headless_udp_run("plain", &[], |k| format!("{{\"x\": {k}, \"y\": -1}}"));
    assert_eq!(ts["series_count"], 2, "{ts}");
    assert_eq!(ts["link"]["messages"], 100, "{ts}");
    assert_eq!(ts["link"]["parse_errors"], 0, "{ts}");
    assert_eq!(ts["link"]["state"], "connected", "{ts}");
    // No time field: no latency, no time base.
    assert_eq!(ts["publish_to_present_ms"], serde_json::Value::Null, "{ts}");
    assert_eq!(ts["link"]["time_base"], serde_json::Value::Null, "{ts}");
}

/// Payload times 5 s ahead of this machine's clock (a publisher whose clock runs ahead): every
/// message's latency is negative, clamped to 1 µs and counted, with the largest lead (at most
/// 5000 ms: each message is presented after it was sent).
#[test]
fn headless_app_counts_payload_times_ahead_of_its_clock() {
    let unix_ms = || {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as u64
    };
    let ts = headless_udp_run("ahead", &["--time-field", "t"], |k| {
        format!("{{\"t\": {}, \"v\": {k}}}", unix_ms() + 5000)
    });
    assert_eq!(ts["link"]["messages"], 100, "{ts}");
    assert_eq!(ts["link"]["parse_errors"], 0, "{ts}");
    assert_eq!(ts["link"]["time_base"], "unix", "{ts}");
    let lat = &ts["publish_to_present_ms"];
    assert_eq!(lat["messages"], 100, "{ts}");
    assert_eq!(lat["ahead_of_clock"], 100, "{ts}");
    assert_eq!(lat["beyond_1h"], 0, "{ts}");
    // All clamped to 1 µs.
    assert_eq!(lat["p50"], 0.001, "{ts}");
    assert_eq!(lat["max"], 0.001, "{ts}");
    let lead = lat["max_lead_ms"].as_f64().unwrap();
    assert!(lead > 0.0 && lead <= 5000.0, "{ts}");
}

/// Relative times (seconds since the publisher started): charted, but no publish → present
/// latency (they are not wall-clock); the report says which times the source has.
#[test]
fn headless_app_relative_times_give_no_latency() {
    let ts = headless_udp_run("relative", &["--time-field", "t"], |k| {
        format!("{{\"t\": {}, \"v\": {k}}}", 0.1 * k as f64)
    });
    assert_eq!(ts["link"]["messages"], 100, "{ts}");
    assert_eq!(ts["link"]["parse_errors"], 0, "{ts}");
    assert_eq!(ts["link"]["time_base"], "relative", "{ts}");
    assert_eq!(ts["publish_to_present_ms"], serde_json::Value::Null, "{ts}");
    assert_eq!(ts["series"][0]["points"], 100, "{ts}");
    // 0 to 9.9 s (k = 0 … 99 tenths): seconds, not Unix times.
    let range = &ts["series"][0]["time_range_s"];
    let (a, b) = (range[0].as_f64().unwrap(), range[1].as_f64().unwrap());
    assert!(a.abs() < 1e-9 && (b - 9.9).abs() < 1e-9, "{ts}");
}

/// A refused password before anything arrived: the run ends non-zero with the broker's answer.
#[test]
#[ignore = "needs mosquitto: run through `cargo xtask test`"]
fn headless_app_exits_non_zero_on_a_refused_login() {
    let mut broker = Broker::with_config(
        "cli_auth",
        "allow_anonymous false\npassword_file {dir}/passwd\n",
    );
    std::fs::write(broker.dir().join("passwd"), "").unwrap();
    broker.start();
    let url = format!("mqtt://bob:nope@127.0.0.1:{}/t", broker.port);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_vizdeck"))
        .args(["--headless", "--scene", "timeseries", "--size", "320x200"])
        .args(["--frames", "120", "--series-source", &url])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    let shown = vizdeck::series::source::net::redact(&url);
    assert!(
        stderr.contains(&shown) && stderr.contains("refused"),
        "{stderr}"
    );
    assert!(!stderr.contains("nope"), "{stderr}");
    // Said once.
    assert_eq!(stderr.matches("refused").count(), 1, "{stderr}");
}

/// A broker nobody runs: the run ends non-zero saying nothing arrived and why.
#[test]
fn headless_app_exits_non_zero_when_nothing_arrives() {
    let url = format!("mqtt://127.0.0.1:{}/t", free_port());
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_vizdeck"))
        .args(["--headless", "--scene", "timeseries", "--size", "320x200"])
        .args(["--frames", "60", "--series-source", &url])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains(&url) && stderr.contains("nothing to show"),
        "{stderr}"
    );
}

/// MQTT 5 (`v=5`) over TLS with the broker's CA given by `ca=`: a CA and a server certificate
/// for 127.0.0.1 made here with openssl; plain-number payloads on a wildcard filter.
#[test]
#[ignore = "needs mosquitto and openssl: run through `cargo xtask test`"]
fn mqtt5_over_tls_with_a_ca_file() {
    let mut broker = Broker::with_config(
        "tls",
        "allow_anonymous true\ncafile {dir}/ca.pem\ncertfile {dir}/server.pem\nkeyfile {dir}/server.key\n",
    );
    let dir = broker.dir().to_path_buf();
    let openssl = |args: &[&str]| {
        let ok = std::process::Command::new("openssl")
            .args(args)
            .current_dir(&dir)
            .stderr(std::process::Stdio::null())
            .status()
            .expect("openssl")
            .success();
        assert!(ok, "openssl {args:?}");
    };
    openssl(&[
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "2",
        "-subj",
        "/CN=test CA",
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
    ]);
    openssl(&[
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-subj",
        "/CN=127.0.0.1",
        "-keyout",
        "server.key",
        "-out",
        "server.csr",
    ]);
    std::fs::write(dir.join("ext.cnf"), "subjectAltName=IP:127.0.0.1\n").unwrap();
    openssl(&[
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-days",
        "2",
        "-extfile",
        "ext.cnf",
        "-out",
        "server.pem",
    ]);
    // The broker runs as the `mosquitto` user when started as root: it must read its key.
    for f in ["server.key", "server.pem", "ca.pem"] {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir.join(f), std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    broker.start();
    let ca = dir.join("ca.pem");
    let url = format!(
        "mqtts://127.0.0.1:{}/dev/+?v=5&ca={}",
        broker.port,
        ca.display()
    );
    let mut src = open(&url, PayloadFormat::Number, None);
    let mut store = Store::default();
    until(&mut src, &mut store, 15, "tls connect", |s, _| connected(s));
    std::thread::sleep(Duration::from_millis(200));
    for k in 0..10 {
        let ok = std::process::Command::new("mosquitto_pub")
            .args(["-h", "127.0.0.1", "-p", &broker.port.to_string(), "-V", "5"])
            .arg("--cafile")
            .arg(&ca)
            .args(["-t", "dev/a", "-m", &k.to_string(), "-q", "1"])
            .status()
            .unwrap()
            .success();
        assert!(ok);
    }
    until(&mut src, &mut store, 15, "tls messages", |_, s| {
        values(s, "dev/a").len() == 10
    });
    assert_eq!(
        values(&store, "dev/a"),
        (0..10).map(|k| k as f32).collect::<Vec<_>>()
    );
    // Without the CA the broker's certificate is not trusted: the reason says so.
    let url = format!("mqtts://127.0.0.1:{}/dev/+", broker.port);
    let mut src = open(&url, PayloadFormat::Number, None);
    until(&mut src, &mut store, 15, "untrusted", |s, _| {
        matches!(
            s.link().unwrap().state,
            LinkState::Reconnecting { ref reason, .. } if reason.to_lowercase().contains("cert")
        )
    });
}

/// A host name that does not resolve: the source keeps trying and says why.
#[test]
fn mqtt_unknown_host_is_reported_while_retrying() {
    let mut src = open(
        "mqtt://no-such-host.invalid:1883/t",
        PayloadFormat::Auto,
        None,
    );
    let mut store = Store::default();
    until(&mut src, &mut store, 20, "unknown host", |s, _| {
        matches!(s.link().unwrap().state, LinkState::Reconnecting { .. })
    });
    let LinkState::Reconnecting { reason, .. } = src.link().unwrap().state else {
        unreachable!()
    };
    assert!(!reason.is_empty(), "{reason}");
}

/// MessagePack and CBOR datagrams (auto-detected) give the same series as their JSON.
#[test]
fn udp_msgpack_and_cbor_payloads() {
    let (mut src, mut store, tx, port) = udp(PayloadFormat::Auto, None);
    for k in 0..50 {
        let value = serde_json::json!({"m": {"x": k, "y": [k * 2, 0.5]}});
        let packed = rmp_serde::to_vec_named(&value).unwrap();
        tx.send_to(&packed, ("127.0.0.1", port)).unwrap();
        let value = serde_json::json!({"c": -k});
        let mut cbor = Vec::new();
        ciborium::into_writer(&value, &mut cbor).unwrap();
        tx.send_to(&cbor, ("127.0.0.1", port)).unwrap();
        std::thread::sleep(Duration::from_micros(300));
    }
    until(&mut src, &mut store, 10, "msgpack+cbor", |_, s| {
        values(s, "c").len() == 50
    });
    let mut names = src.names().to_vec();
    names.sort();
    assert_eq!(names, ["c", "m/x", "m/y/0", "m/y/1"]);
    assert_eq!(
        values(&store, "m/x"),
        (0..50).map(|k| k as f32).collect::<Vec<_>>()
    );
    assert_eq!(
        values(&store, "m/y/0"),
        (0..50).map(|k| 2.0 * k as f32).collect::<Vec<_>>()
    );
    assert_eq!(values(&store, "m/y/1"), vec![0.5; 50]);
    assert_eq!(
        values(&store, "c"),
        (0..50).map(|k| -k as f32).collect::<Vec<_>>()
    );
    assert_eq!(src.link().unwrap().parse_errors, 0);
}
