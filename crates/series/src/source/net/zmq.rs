//! `zmq+tcp://host:port[/prefix]`: a ZeroMQ SUB socket (the pure-Rust `zeromq` crate, ZMTP 3)
//! connected to a PUB socket, subscribed to `prefix` (every message when empty). A multipart
//! message is topic + payload (the first frame names the series, the second is decoded); frames
//! after the payload (a timestamp frame, say: topic, payload, timestamp is a common layout) are
//! ignored, never decoded as data (times come from the payload's time field, or arrival). A
//! single-frame message is a payload with no topic. When the publisher goes away the socket is
//! made again and reconnected with [`Backoff`].

use zeromq::{Socket, SocketEvent, SocketRecv, SubSocket};

use super::*;

/// How long one connection attempt may take before it counts as failed.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

/// Subscribes and receives until `stop`, reconnecting as needed.
pub(super) fn run(addr: &str, prefix: &str, shown: &str, mut ingest: Ingest, stop: &AtomicBool) {
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            let reason = format!("source '{shown}': cannot start its runtime: {e}");
            ingest.stats.failed(&reason);
            ingest.close(Msg::Error(reason), stop);
            return;
        }
    };
    let endpoint = format!("tcp://{addr}");
    let mut backoff = Backoff::new();
    let mut topic = String::new();
    while !stop.load(Ordering::Relaxed) {
        let reason = rt.block_on(async {
            let mut socket = SubSocket::new();
            let mut monitor = socket.monitor();
            match tokio::time::timeout(CONNECT_TIMEOUT, socket.connect(&endpoint)).await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => return describe(&e.to_string()),
                Err(_) => return "no answer (is the publisher running?)".to_string(),
            }
            if let Err(e) = socket.subscribe(prefix).await {
                return format!("subscribe: {e}");
            }
            backoff.reset();
            ingest.stats.connected();
            loop {
                tokio::select! {
                    received = socket.recv() => match received {
                        Ok(msg) => {
                            let (name, payload) = match msg.len() {
                                0 => continue,
                                1 => (None, msg.get(0)),
                                // Topic, payload, then anything (a timestamp frame): ignored.
                                _ => (msg.get(0), msg.get(1)),
                            };
                            topic.clear();
                            if let Some(n) = name {
                                topic.push_str(&String::from_utf8_lossy(n));
                            }
                            if let Some(p) = payload {
                                ingest.message(&topic, p);
                            }
                        }
                        Err(e) => return format!("receive failed: {e}"),
                    },
                    _ = tokio::time::sleep(Duration::from_millis(FLUSH_MS)) => {
                        if stop.load(Ordering::Relaxed) {
                            return String::new();
                        }
                        while let Ok(event) = monitor.try_recv() {
                            if matches!(event, SocketEvent::Disconnected(_) | SocketEvent::Closed) {
                                return "the publisher went away".to_string();
                            }
                        }
                    }
                }
                ingest.tick();
            }
        });
        ingest.flush();
        if stop.load(Ordering::Relaxed) || !backoff.wait(&ingest.stats, &reason, stop) {
            return;
        }
    }
}

/// A connection error as one line.
fn describe(e: &str) -> String {
    if e.contains("Connection refused") || e.contains("connection refused") {
        "connection refused (is the publisher running?)".into()
    } else {
        e.to_string()
    }
}
