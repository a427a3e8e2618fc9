//! The publisher's connection (`src/publish/link.rs`) against a real mosquitto: a keyframe sent
//! retained is what a subscriber that joins afterwards gets, byte for byte and decoded; deltas
//! reach a subscriber in order; a link started with no broker listening keeps its frames until
//! one comes up. Subscribers are mosquitto's own `mosquitto_sub` (payloads printed in hex).

mod common;

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
