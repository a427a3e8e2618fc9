//! MQTT benchmarks of the live series source (issue 15), against a Debian `mosquitto` started
//! here on a free loopback port:
//!
//! 1. Ingest: one publisher (the `rumqttc` crate, QoS 0, as fast as it goes) sends `N` JSON
//!    messages `{"v": k}` on one topic; two subscribers take the same stream in the same run:
//!    `mosquitto_sub -C N > /dev/null` (the broker's own client) and vizdeck's source draining
//!    into a [`Store`] every 16 ms (a 60 Hz frame loop's cadence). Rates are messages over the
//!    time from the first publish to the last message received (for vizdeck also: stored),
//!    polled every 1 ms. Both readers take the stream at the rate the broker fans it out, so
//!    the CPU each spends per message (mosquitto_sub's user + system time; vizdeck's source
//!    thread and its draining) says which could go faster: messages per CPU-second is the
//!    rate each would reach on one core of its own.
//! 2. Publish → present latency: the vizdeck binary (`target/release/vizdeck`) charts
//!    `--series-source mqtt://…/lat --time-field t` while a publisher sends 1000 messages/s
//!    whose `t` is the publish time (ns since the Unix epoch); the run's report gives p50 / p99
//!    of present time − `t`. Headless, and in the window when `DISPLAY` is set (run under
//!    `cargo xtask services -- …` for Xvfb).
//!
//! Run: `cargo run --release -p vizdeck-lab --example mqtt_bench -- [N ...]`
//! (default N: 100000 and 400000).

#[allow(dead_code)] // the tests use more of it
#[path = "../../../tests/common/mosquitto.rs"]
mod mosquitto;

use std::time::{Duration, Instant};

use mosquitto::Broker;
use vizdeck::series::source::net::{LinkState, NetOptions};
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

/// One ingest run of `n` messages: rates (messages/s) and CPU per message (µs).
struct Ingest {
    /// The publisher's send rate (what the broker took in).
    publisher: f64,
    /// mosquitto_sub: received (it exits after the n-th message).
    sub: f64,
    /// vizdeck: received by its source thread, and stored (drained every 16 ms).
    viz_received: f64,
    viz_stored: f64,
    /// Messages each subscriber got.
    sub_got: u64,
    viz_got: u64,
    /// CPU time per message: mosquitto_sub (user + system, from `wait4`), and vizdeck's source
    /// thread (receive, MQTT parse, JSON decode, ring) plus the draining thread (into the store).
    sub_cpu_us: f64,
    viz_cpu_us: f64,
}

/// CPU time this thread has used, ns (`CLOCK_THREAD_CPUTIME_ID`).
fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the call.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// CPU time, ns, of this process's threads named `vizdeck-series…` (the source's producer
/// threads), from `/proc/self/task/*/schedstat` (its first field: time on a CPU, ns).
fn source_threads_cpu_ns() -> u64 {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return 0;
    };
    tasks
        .flatten()
        .filter(|t| {
            std::fs::read_to_string(t.path().join("comm"))
                .is_ok_and(|c| c.starts_with("vizdeck-series"))
        })
        .filter_map(|t| std::fs::read_to_string(t.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .sum()
}

/// Reaps child `pid` if it has exited: its user + system CPU time, µs.
fn reap(pid: u32) -> Option<f64> {
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value; wait4 writes it for a reaped child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointers to `status` and `usage`; WNOHANG: never blocks.
    let r = unsafe { libc::wait4(pid as libc::pid_t, &mut status, libc::WNOHANG, &mut usage) };
    (r == pid as libc::pid_t).then(|| {
        let us = |t: libc::timeval| t.tv_sec as f64 * 1e6 + t.tv_usec as f64;
        us(usage.ru_utime) + us(usage.ru_stime)
    })
}

/// Ingest of `n` messages through the broker at `port` (see the module docs).
#[allow(clippy::zombie_processes)] // mosquitto_sub is reaped by `reap` (wait4), else waited
fn ingest(port: u16, n: u64) -> Ingest {
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
    let source_cpu0 = source_threads_cpu_ns();
    let mut drain_cpu = 0u64;
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
    let (mut sub_time, mut sub_cpu) = (None, None);
    let (mut viz_received, mut viz_stored, mut source_cpu) = (None, None, 0);
    let mut next_drain = Instant::now();
    let deadline = Instant::now() + Duration::from_secs(120);
    // Completion is polled every 1 ms; the store is drained every 16 ms, as a frame loop would.
    while (sub_time.is_none() || viz_stored.is_none()) && Instant::now() < deadline {
        if viz_received.is_none() && src.link().is_some_and(|l| l.messages >= n) {
            viz_received = Some(start.elapsed());
            source_cpu = source_threads_cpu_ns() - source_cpu0;
        }
        if Instant::now() >= next_drain {
            let c = thread_cpu_ns();
            src.drain_into(&mut store);
            drain_cpu += thread_cpu_ns() - c;
            next_drain += Duration::from_millis(16);
            if viz_stored.is_none() && store.points_ingested() >= n {
                viz_stored = Some(start.elapsed());
            }
        }
        if sub_time.is_none()
            && let Some(cpu) = reap(sub.id())
        {
            sub_time = Some(start.elapsed());
            sub_cpu = Some(cpu);
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    let pub_time = pub_done.join().unwrap();
    let _ = pub_thread.join();
    let sub_got = if sub_time.is_some() { n } else { 0 };
    if sub_time.is_none() {
        let _ = sub.kill();
        let _ = sub.wait();
    }
    let viz_got = store.points_ingested();
    let rate = |t: Option<Duration>| t.map_or(0.0, |t| n as f64 / t.as_secs_f64());
    Ingest {
        publisher: rate(Some(pub_time)),
        sub: rate(sub_time),
        viz_received: rate(viz_received),
        viz_stored: rate(viz_stored),
        sub_got,
        viz_got,
        sub_cpu_us: sub_cpu.map_or(f64::NAN, |c| c / n as f64),
        viz_cpu_us: (source_cpu + drain_cpu) as f64 / 1e3 / n as f64,
    }
}

/// Backlog run: `n` messages queued by the broker for two offline persistent sessions
/// (mosquitto_sub's and vizdeck's), then both reconnect at once and take their backlog as
/// fast as each can read it. The broker sends a queued backlog without waiting for a
/// publisher, so here the readers are the limit. Returns (mosquitto_sub msg/s, vizdeck msg/s
/// received, vizdeck msg/s stored, messages each got).
#[allow(clippy::zombie_processes)] // mosquitto_sub is reaped by `reap` (wait4), else waited
fn backlog(port: u16, n: u64) -> (f64, f64, f64, u64, u64) {
    let topic = format!("backlog/{n}");
    let viz_url = format!("mqtt://127.0.0.1:{port}/{topic}?clean=0&client_id=bench-viz-{n}");
    let sub_args = |count: Option<u64>| {
        let mut c = std::process::Command::new("mosquitto_sub");
        c.args(["-h", "127.0.0.1", "-p", &port.to_string(), "-t", &topic])
            .args(["-c", "-i", &format!("bench-sub-{n}")])
            .stdout(std::process::Stdio::null());
        match count {
            Some(k) => c.args(["-C", &k.to_string()]),
            None => c.arg("-E"), // subscribe, then exit: the session stays on the broker
        };
        c
    };
    let open = || {
        SeriesSource::open(
            &SeriesSelection::Net(NetOptions {
                url: viz_url.clone(),
                payload: PayloadOptions {
                    format: PayloadFormat::Json,
                    time_field: None,
                },
            }),
            Pacing::WallClock,
        )
        .expect("mqtt source")
    };
    // 1. Both sessions subscribe, then go offline.
    let status = sub_args(None).status().expect("mosquitto_sub");
    assert!(status.success(), "mosquitto_sub -E: {status}");
    let mut store = Store::default();
    {
        let mut src = open();
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline
            && !src
                .link()
                .is_some_and(|l| matches!(l.state, LinkState::Connected))
        {
            src.drain_into(&mut store);
            std::thread::sleep(Duration::from_millis(10));
        }
        std::thread::sleep(Duration::from_millis(500)); // the SUBACK
    }
    // 2. The backlog: published while both are away.
    let (client, pub_thread) = publisher(port, &format!("bench-backlog-pub-{n}"));
    for k in 0..n {
        client
            .publish(
                topic.clone(),
                rumqttc::QoS::AtMostOnce,
                false,
                format!("{{\"v\": {k}}}"),
            )
            .unwrap();
    }
    let _ = client.disconnect();
    let _ = pub_thread.join();
    std::thread::sleep(Duration::from_secs(1));
    // 3. Both come back at once.
    let start = Instant::now();
    let mut sub = sub_args(Some(n)).spawn().expect("mosquitto_sub");
    let mut src = open();
    let mut store = Store::default();
    let (mut sub_time, mut viz_received, mut viz_stored) = (None, None, None);
    let mut next_drain = Instant::now();
    let deadline = Instant::now() + Duration::from_secs(120);
    while (sub_time.is_none() || viz_stored.is_none()) && Instant::now() < deadline {
        if viz_received.is_none() && src.link().is_some_and(|l| l.messages >= n) {
            viz_received = Some(start.elapsed());
        }
        if Instant::now() >= next_drain {
            src.drain_into(&mut store);
            next_drain += Duration::from_millis(16);
            if viz_stored.is_none() && store.points_ingested() >= n {
                viz_stored = Some(start.elapsed());
            }
        }
        if sub_time.is_none() && reap(sub.id()).is_some() {
            sub_time = Some(start.elapsed());
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    if sub_time.is_none() {
        let _ = sub.kill();
        let _ = sub.wait();
    }
    let rate = |t: Option<Duration>| t.map_or(0.0, |t| n as f64 / t.as_secs_f64());
    (
        rate(sub_time),
        rate(viz_received),
        rate(viz_stored),
        if sub_time.is_some() { n } else { 0 },
        store.points_ingested(),
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
    // QoS 0 messages are queued for offline persistent sessions too, without a cap (the
    // backlog run).
    let mut broker = Broker::with_config(
        "bench",
        "allow_anonymous true\nqueue_qos0_messages true\nmax_queued_messages 0\n",
    );
    broker.start();
    println!("MQTT ingest through mosquitto on loopback, QoS 0, JSON {{\"v\": k}}, one topic");
    println!(
        "| messages | publisher msg/s (broker intake) | mosquitto_sub msg/s | vizdeck received msg/s | vizdeck stored msg/s | received: vizdeck / mosquitto_sub | received (sub, vizdeck) | CPU µs/msg mosquitto_sub | CPU µs/msg vizdeck | msg/s per CPU-second: vizdeck / mosquitto_sub |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|");
    for &n in &sizes {
        let r = ingest(broker.port, n);
        let ratio = |a: f64, b: f64| if b > 0.0 { a / b } else { f64::NAN };
        println!(
            "| {n} | {:.0} | {:.0} | {:.0} | {:.0} | {:.2}× | {}, {} | {:.2} | {:.2} | {:.2}× |",
            r.publisher,
            r.sub,
            r.viz_received,
            r.viz_stored,
            ratio(r.viz_received, r.sub),
            r.sub_got,
            r.viz_got,
            r.sub_cpu_us,
            r.viz_cpu_us,
            ratio(r.sub_cpu_us, r.viz_cpu_us),
        );
    }
    println!();
    println!(
        "Backlog: N messages queued for two offline persistent sessions, both reconnect at once"
    );
    println!(
        "| messages | mosquitto_sub msg/s | vizdeck received msg/s | vizdeck stored msg/s | received: vizdeck / mosquitto_sub | received (sub, vizdeck) |"
    );
    println!("|---:|---:|---:|---:|---:|---|");
    for &n in &sizes {
        let (s, vr, vs, sg, vg) = backlog(broker.port, n);
        println!(
            "| {n} | {s:.0} | {vr:.0} | {vs:.0} | {:.2}× | {sg}, {vg} |",
            if s > 0.0 { vr / s } else { f64::NAN }
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
