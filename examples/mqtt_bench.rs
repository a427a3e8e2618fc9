//! MQTT benchmarks of the live series source (issue 15), against a Debian `mosquitto` started
//! here on a free loopback port:
//!
//! 1. Ingest: one publisher (the `rumqttc` crate, QoS 0, as fast as it goes) sends `N` JSON
//!    messages `{"v": k}` on one topic; two subscribers take the same stream in the same run:
//!    `mosquitto_sub -C N > /dev/null` (the broker's own client) and vizdeck's source draining
//!    into a [`Store`] every 16 ms (a 60 Hz frame loop's cadence). Rates are messages over the
//!    time from the first publish to the last message received (stored, for vizdeck).
//! 2. Publish → present latency: the vizdeck binary (`target/release/vizdeck`) charts
//!    `--series-source mqtt://…/lat --time-field t` while a publisher sends 1000 messages/s
//!    whose `t` is the publish time (ns since the Unix epoch); the run's report gives p50 / p99
//!    of present time − `t`. Headless, and in the window when `DISPLAY` is set (run under
//!    `cargo xtask services -- …` for Xvfb).
//!
//! Run: `cargo build --release && cargo run --release --example mqtt_bench -- [N ...]`
//! (default N: 100000 and 400000).

#[allow(dead_code)] // the tests use more of it
#[path = "../tests/common/mosquitto.rs"]
mod mosquitto;

use std::time::{Duration, Instant};

use mosquitto::Broker;
use vizdeck::series::source::net::NetOptions;
use vizdeck::series::source::payload::{PayloadFormat, PayloadOptions};
use vizdeck::series::{Pacing, SeriesSelection, SeriesSource, Store};

fn publisher(port: u16, id: &str) -> (rumqttc::Client, std::thread::JoinHandle<()>) {
    let mut opts = rumqttc::MqttOptions::new(id, "127.0.0.1", port);
    opts.set_keep_alive(Duration::from_secs(30))
        .set_max_packet_size(1 << 20, 1 << 20);
    let (client, mut conn) = rumqttc::Client::new(opts, 10_000);
    let t = std::thread::spawn(move || {
        for e in conn.iter() {
            if e.is_err() {
                return;
            }
        }
    });
    (client, t)
}

fn unix_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i64)
}

/// Ingest rates for `n` messages: (publisher, mosquitto_sub, vizdeck) messages/s, and the
/// messages each subscriber got.
fn ingest(port: u16, n: u64) -> (f64, f64, f64, u64, u64) {
    let topic = format!("bench/{n}");
    let mut src = SeriesSource::open(
        &SeriesSelection::Net(NetOptions {
            url: format!("mqtt://127.0.0.1:{port}/{topic}"),
            payload: PayloadOptions {
                format: PayloadFormat::Json,
                time_field: None,
            },
        }),
        Pacing::WallClock,
    )
    .expect("mqtt source");
    let mut store = Store::default();
    let mut sub = std::process::Command::new("mosquitto_sub")
        .args(["-h", "127.0.0.1", "-p", &port.to_string(), "-t", &topic])
        .args(["-C", &n.to_string()])
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("mosquitto_sub (apt-get install mosquitto-clients)");
    // Both subscriptions in place before the first publish.
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        src.drain_into(&mut store);
        std::thread::sleep(Duration::from_millis(16));
    }
    let (client, pub_thread) = publisher(port, &format!("bench-pub-{n}"));
    let start = Instant::now();
    let pub_done = std::thread::spawn(move || {
        for k in 0..n {
            client
                .publish(
                    format!("bench/{n}"),
                    rumqttc::QoS::AtMostOnce,
                    false,
                    format!("{{\"v\": {k}}}"),
                )
                .unwrap();
        }
        let t = start.elapsed();
        let _ = client.disconnect();
        t
    });
    let mut sub_time = None;
    let mut viz_time = None;
    let deadline = Instant::now() + Duration::from_secs(120);
    while (sub_time.is_none() || viz_time.is_none()) && Instant::now() < deadline {
        src.drain_into(&mut store);
        if viz_time.is_none() && store.points_ingested() >= n {
            viz_time = Some(start.elapsed());
        }
        if sub_time.is_none() && matches!(sub.try_wait(), Ok(Some(_))) {
            sub_time = Some(start.elapsed());
        }
        std::thread::sleep(Duration::from_millis(16));
    }
    let pub_time = pub_done.join().unwrap();
    let _ = pub_thread.join();
    let sub_got = if sub_time.is_some() { n } else { 0 };
    let _ = sub.kill();
    let _ = sub.wait();
    let viz_got = store.points_ingested();
    let rate = |t: Option<Duration>| t.map_or(0.0, |t| n as f64 / t.as_secs_f64());
    (
        rate(Some(pub_time)),
        rate(sub_time),
        rate(viz_time),
        sub_got,
        viz_got,
    )
}

/// p50, p99 and count of publish → present latency (ms) from a run of the app.
fn latency(port: u16, headless: bool) -> Option<(f64, f64, u64)> {
    let exe = std::env::current_exe().ok()?;
    let vizdeck = exe.parent()?.parent()?.join("vizdeck");
    let report = std::env::temp_dir().join(format!(
        "vizdeck_mqtt_lat_{}_{headless}.json",
        std::process::id()
    ));
    let topic = if headless { "lat/h" } else { "lat/w" };
    let mut cmd = std::process::Command::new(&vizdeck);
    if headless {
        cmd.args(["--headless", "--frames", "100000000"]);
    }
    let mut app = cmd
        .args([
            "--scene",
            "timeseries",
            "--size",
            "1280x720",
            "--series-source",
        ])
        .arg(format!("mqtt://127.0.0.1:{port}/{topic}"))
        .args(["--time-field", "t", "--report"])
        .arg(&report)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .ok()?;
    std::thread::sleep(Duration::from_secs(4));
    let (client, pub_thread) = publisher(port, &format!("lat-pub-{headless}"));
    // 1000 messages/s for 5 s.
    let start = Instant::now();
    for k in 0..5000u32 {
        let due = start + Duration::from_micros(1000 * k as u64);
        if let Some(wait) = due.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
        let payload = format!("{{\"t\": {}, \"v\": {k}}}", unix_ns());
        client
            .publish(topic, rumqttc::QoS::AtMostOnce, false, payload)
            .ok()?;
    }
    std::thread::sleep(Duration::from_millis(500));
    let _ = client.disconnect();
    let _ = pub_thread.join();
    let _ = std::process::Command::new("kill")
        .args(["-s", "TERM", &app.id().to_string()])
        .status();
    let _ = app.wait();
    let text = std::fs::read_to_string(&report).ok()?;
    let _ = std::fs::remove_file(&report);
    let json: serde_json::Value = serde_json::from_str(&text).ok()?;
    let l = &json["scenes"]["timeseries"]["publish_to_present_ms"];
    Some((
        l["p50"].as_f64()?,
        l["p99"].as_f64()?,
        l["messages"].as_u64()?,
    ))
}

fn main() {
    let sizes: Vec<u64> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let sizes = if sizes.is_empty() {
        vec![100_000, 400_000]
    } else {
        sizes
    };
    let mut broker = Broker::new("bench");
    broker.start();
    println!("MQTT ingest through mosquitto on loopback, QoS 0, JSON {{\"v\": k}}, one topic");
    println!(
        "| messages | publisher msg/s (broker intake) | mosquitto_sub msg/s | vizdeck msg/s | vizdeck / mosquitto_sub | received (sub, vizdeck) |"
    );
    println!("|---:|---:|---:|---:|---:|---|");
    for &n in &sizes {
        let (p, s, v, sg, vg) = ingest(broker.port, n);
        println!(
            "| {n} | {p:.0} | {s:.0} | {v:.0} | {:.2}× | {sg}, {vg} |",
            if s > 0.0 { v / s } else { f64::NAN }
        );
    }
    println!();
    println!("Publish → present latency, 1000 messages/s for 5 s, payload time field");
    println!("| run | p50 ms | p99 ms | messages |");
    println!("|---|---:|---:|---:|");
    let mut runs = vec![("headless", true)];
    if std::env::var_os("DISPLAY").is_some() {
        runs.push(("window", false));
    }
    for (name, headless) in runs {
        match latency(broker.port, headless) {
            Some((p50, p99, n)) => println!("| {name} | {p50:.2} | {p99:.2} | {n} |"),
            None => println!("| {name} | – | – | no report |"),
        }
    }
}
