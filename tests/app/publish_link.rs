//! The publisher's connection (`src/publish/link.rs`) against a real mosquitto: a keyframe sent
//! retained is what a subscriber that joins afterwards gets, byte for byte and decoded; deltas
//! reach a subscriber in order; a link started with no broker listening keeps its frames until
//! one comes up. Subscribers are mosquitto's own `mosquitto_sub` (payloads printed in hex).

use crate::common;

use std::process::{Command, Stdio};
use std::time::Duration;

use common::mosquitto::{Broker, free_port};
use vizdeck::publish::link::Link;
use vizdeck::publish::protocol::{
    Body, Envelope, SeriesDelta, SeriesKeyframe, SeriesSamples, SeriesView, decode, encode,
};

fn envelope(seq: u64, key: bool, n: u32) -> Envelope {
    let samples = SeriesSamples {
        id: 0,
        name: "a".into(),
        first_index: seq * 100,
        origin: 1.5,
        origin_ns: None,
        times: (0..n).map(|i| f64::from(i) * 0.5 + seq as f64).collect(),
        values: (0..n).map(|i| i as f32 * 0.25).collect(),
    };
    Envelope {
        publisher: 77,
        seq,
        frame: seq * 2,
        stream_s: seq as f64 / 60.0,
        sent_unix_ns: 1_700_000_000_000_000_000 + seq as i64,
        scene: "timeseries".into(),
        body: if key {
            Body::SeriesKey(SeriesKeyframe {
                generation: 0,
                view: SeriesView {
                    window_s: 10.0,
                    follow: true,
                    paused: (0.0, 10.0),
                    fixed_y: None,
                },
                series: vec![samples],
            })
        } else {
            Body::SeriesDelta(SeriesDelta {
                series: vec![samples],
                view: None,
            })
        },
    }
}

/// `mosquitto_sub` on `topic`, waiting for `count` messages (at most 20 s); returns each
/// payload's bytes.
fn subscribe(port: u16, topic: &str, count: usize) -> std::process::Child {
    Command::new("mosquitto_sub")
        .args(["-h", "127.0.0.1", "-p", &port.to_string(), "-t", topic])
        .args(["-C", &count.to_string(), "-W", "20", "-F", "%x"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("mosquitto_sub (apt-get install mosquitto-clients; `cargo xtask test` installs it)")
}

fn payloads(child: std::process::Child) -> Vec<Vec<u8>> {
    let out = child.wait_with_output().expect("mosquitto_sub");
    assert!(
        out.status.success(),
        "mosquitto_sub: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|hex| {
            (0..hex.len() / 2)
                .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).expect("hex"))
                .collect()
        })
        .collect()
}

#[test]
#[ignore = "needs mosquitto: run through `cargo xtask test`"]
fn retained_keyframe_and_ordered_deltas_reach_subscribers() {
    let mut broker = Broker::new("publink");
    broker.start();
    let url = format!("mqtt://127.0.0.1:{}/vizdeck/lab", broker.port);
    let deltas = subscribe(broker.port, "vizdeck/lab/timeseries/delta", 5);
    std::thread::sleep(Duration::from_millis(500));
    let key = encode(&envelope(1, true, 3000)).expect("encode");
    let sent: Vec<Vec<u8>> = (2..7)
        .map(|s| encode(&envelope(s, false, 4)).expect("encode"))
        .collect();
    {
        let link = Link::start(&url).expect("link");
        assert_eq!(link.base(), "vizdeck/lab");
        assert!(link.send("timeseries/key", true, key.clone()));
        for d in &sent {
            assert!(link.send("timeseries/delta", false, d.clone()));
        }
        // Dropping the link publishes what is queued, then disconnects.
    }
    assert_eq!(payloads(deltas), sent, "deltas in order, byte for byte");
    // A subscriber joining now gets the retained keyframe.
    let got = payloads(subscribe(broker.port, "vizdeck/lab/timeseries/key", 1));
    assert_eq!(got, vec![key.clone()]);
    assert_eq!(decode(&got[0]).expect("decode"), envelope(1, true, 3000));
}

#[test]
#[ignore = "needs mosquitto: run through `cargo xtask test`"]
fn frames_wait_for_a_broker_that_comes_up_later() {
    let port = free_port();
    let mut broker = Broker::new("publate");
    // The link starts against a port nothing listens on yet.
    broker.port = port;
    std::fs::write(
        broker.dir().join("mosquitto.conf"),
        format!("listener {port} 127.0.0.1\nallow_anonymous true\npersistence false\n"),
    )
    .expect("config");
    let link = Link::start(&format!("mqtt://127.0.0.1:{port}/late")).expect("link");
    let key = encode(&envelope(1, true, 10)).expect("encode");
    assert!(link.send("timeseries/key", true, key.clone()));
    std::thread::sleep(Duration::from_millis(800));
    assert!(
        !link
            .stats()
            .connected
            .load(std::sync::atomic::Ordering::Relaxed)
    );
    assert!(link.stats().error.lock().expect("lock").is_some());
    broker.start();
    drop(link);
    let got = payloads(subscribe(port, "late/timeseries/key", 1));
    assert_eq!(got, vec![key]);
    assert!(
        Link::start("mqtt://127.0.0.1:1/a/#").is_err(),
        "a wildcard in the base topic is refused"
    );
}

/// Waits until `done` holds (at most 30 s: the broker on loopback is far quicker), polling.
fn wait_until(mut done: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while !done() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
#[ignore = "needs mosquitto: run through `cargo xtask test`"]
fn a_follower_that_does_not_keep_up_drops_and_holds_a_bounded_queue() {
    use std::sync::atomic::Ordering::Relaxed;
    use vizdeck::publish::link::QUEUE_IN;
    let mut broker = Broker::new("pubslow");
    broker.start();
    let url = format!("mqtt://127.0.0.1:{}/slow", broker.port);
    let follower = Link::follow(&url).expect("follow");
    wait_until(|| follower.stats().connected.load(Relaxed));
    // Subscribed once the broker has answered both subscriptions: a message round trip shows it.
    std::thread::sleep(Duration::from_millis(300));
    let n = QUEUE_IN as u64 + 500;
    {
        let publisher = Link::start(&url).expect("link");
        for seq in 0..n {
            // The publisher's own queue holds 256: pace it by its acknowledgements.
            let frame = encode(&envelope(seq, false, 2)).expect("encode");
            while !publisher.send("timeseries/delta", false, frame.clone()) {
                std::thread::sleep(Duration::from_millis(1));
            }
            wait_until(|| publisher.stats().acked.load(Relaxed) + 200 > seq);
        }
    }
    // The follower's frame never took a message: it received all, kept QUEUE_IN, dropped the rest.
    wait_until(|| follower.stats().received.load(Relaxed) >= n);
    let s = follower.stats();
    assert_eq!(s.received.load(Relaxed), n);
    assert_eq!(s.dropped.load(Relaxed), n - QUEUE_IN as u64);
    let mut kept = Vec::new();
    while let Some(heard) = follower.try_recv() {
        kept.push(heard.expect("decodes").0.seq);
    }
    // The oldest were kept (the newest dropped): the sequence shows the gap, and the follower
    // waits for the next keyframe.
    assert_eq!(kept, (0..QUEUE_IN as u64).collect::<Vec<_>>());
}

#[test]
#[ignore = "needs mosquitto: run through `cargo xtask test`"]
fn a_second_publisher_on_the_same_topic_is_reported() {
    use std::sync::atomic::Ordering::Relaxed;
    let mut broker = Broker::new("pubtwo");
    broker.start();
    let url = format!("mqtt://127.0.0.1:{}/two", broker.port);
    let hello = |id: u64| {
        let h = serde_json::json!({ "publisher": format!("{id:016x}"), "protocol": 1 });
        Some((id, h.to_string().into_bytes()))
    };
    let first = Link::publish(&url, hello(0xaaaa)).expect("first");
    wait_until(|| first.stats().connected.load(Relaxed));
    let second = Link::publish(&url, hello(0xbbbb)).expect("second");
    let other = |l: &Link| l.stats().other_publisher.lock().expect("lock").clone();
    wait_until(|| other(&second).is_some() && other(&first).is_some());
    // Each hears the other's retained hello (the second the first's, the first the second's).
    assert_eq!(other(&second).as_deref(), Some("000000000000aaaa"));
    assert_eq!(other(&first).as_deref(), Some("000000000000bbbb"));
    drop(second);
    drop(first);
    // Both gone: their hellos are cleared, so a third one starting now hears nobody.
    let third = Link::publish(&url, hello(0xcccc)).expect("third");
    wait_until(|| third.stats().connected.load(Relaxed));
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(other(&third), None);
}
