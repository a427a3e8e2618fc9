//! Loader threads (`vizdeck-pointcloud-load-N`): decode the nodes the frame asks for, most
//! wanted first, off the frame thread, and hand them back through a bounded channel (so a
//! frame that uploads slowly holds the loaders back instead of letting decoded nodes pile up).
//! Each frame replaces the wanted list ([`Loader::want`]): priorities follow the camera, and a
//! node that left the view is no longer decoded. A decoded node is also put in Morton order and
//! quantized here ([`QuantizedNode::new`]), so the frame only uploads it.

use std::collections::HashSet;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Instant;

use super::PointCloudError;
use super::source::NodeSource;
use crate::quantize::QuantizedNode;

/// A decoded node (or why it could not be).
pub struct Loaded {
    /// The node.
    pub node: u32,
    /// Its points, in Morton order and quantized.
    pub result: Result<QuantizedNode, PointCloudError>,
    /// Seconds the decode took (not counting the quantization).
    pub seconds: f64,
}

#[derive(Default)]
struct State {
    wanted: Vec<u32>,
    in_flight: HashSet<u32>,
    stop: bool,
}

struct Shared {
    state: Mutex<State>,
    wake: Condvar,
}

/// Called by a loader thread each time it hands a node over (from that thread): wakes whoever
/// waits for nodes (the window's event loop, which sleeps while nodes decode).
pub type Waker = Arc<dyn Fn() + Send + Sync>;

/// The loader threads of one source.
pub struct Loader {
    shared: Arc<Shared>,
    results: Receiver<Loaded>,
    threads: usize,
}

impl Loader {
    /// `threads` (≥ 1) loader threads over `source`; at most `queue` decoded nodes wait for the
    /// frame. Elevations are stored above the lowest z of the source's bounds.
    pub fn new(source: Arc<dyn NodeSource>, threads: usize, queue: usize) -> Loader {
        Loader::with_waker(source, threads, queue, None)
    }

    /// As [`new`](Loader::new), and `waker` is called after every node handed over (decoded or
    /// failed), once the node is out of [`busy`](Loader::busy)'s count, so a frame loop that
    /// sleeps while nodes decode draws the node as soon as it is there.
    pub fn with_waker(
        source: Arc<dyn NodeSource>,
        threads: usize,
        queue: usize,
        waker: Option<Waker>,
    ) -> Loader {
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            wake: Condvar::new(),
        });
        let (tx, rx) = sync_channel(queue.max(1));
        let threads = threads.max(1);
        for t in 0..threads {
            let (shared, source, tx) = (shared.clone(), source.clone(), tx.clone());
            let waker = waker.clone();
            let spawned = std::thread::Builder::new()
                .name(format!("vizdeck-pointcloud-load-{t}"))
                .spawn(move || run(&shared, source.as_ref(), &tx, waker.as_deref()));
            if let Err(e) = spawned {
                log::error!("point cloud: cannot start a loader thread: {e}");
            }
        }
        Loader {
            shared,
            results: rx,
            threads,
        }
    }

    /// Replaces the wanted list (most wanted first); nodes already being decoded stay so.
    pub fn want(&self, nodes: &[u32]) {
        if let Ok(mut s) = self.shared.state.lock() {
            s.wanted.clear();
            let in_flight = std::mem::take(&mut s.in_flight);
            s.wanted
                .extend(nodes.iter().copied().filter(|n| !in_flight.contains(n)));
            s.in_flight = in_flight;
            if !s.wanted.is_empty() {
                self.shared.wake.notify_all();
            }
        }
    }

    /// Nodes being decoded now.
    pub fn busy(&self) -> usize {
        self.shared
            .state
            .lock()
            .map(|s| s.in_flight.len())
            .unwrap_or(0)
    }

    /// Loader threads.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// A decoded node, if one is ready (never blocks).
    pub fn try_recv(&self) -> Option<Loaded> {
        self.results.try_recv().ok()
    }

    /// Waits up to `timeout` for a decoded node (tests and tools; never the frame loop).
    pub fn recv_timeout(&self, timeout: std::time::Duration) -> Option<Loaded> {
        self.results.recv_timeout(timeout).ok()
    }
}

impl Drop for Loader {
    /// Stops the threads after their current node (not joined: the frame never waits on a
    /// decode; a thread blocked on the full channel wakes when the receiver is dropped).
    fn drop(&mut self) {
        if let Ok(mut s) = self.shared.state.lock() {
            s.stop = true;
            s.wanted.clear();
        }
        self.shared.wake.notify_all();
    }
}

fn run(
    shared: &Shared,
    source: &dyn NodeSource,
    tx: &SyncSender<Loaded>,
    waker: Option<&(dyn Fn() + Send + Sync)>,
) {
    loop {
        let node = {
            let Ok(mut s) = shared.state.lock() else {
                return;
            };
            loop {
                if s.stop {
                    return;
                }
                if !s.wanted.is_empty() {
                    let n = s.wanted.remove(0);
                    s.in_flight.insert(n);
                    break n;
                }
                s = match shared.wake.wait(s) {
                    Ok(s) => s,
                    Err(_) => return,
                };
            }
        };
        let start = Instant::now();
        let result = source.load(node);
        let seconds = start.elapsed().as_secs_f64();
        let elev_base = source.info().bounds.0[2];
        let spacing = source
            .hierarchy()
            .nodes
            .get(node as usize)
            .map_or(0.0, |m| m.spacing);
        let loaded = Loaded {
            node,
            result: result.map(|data| QuantizedNode::new(data, spacing, elev_base)),
            seconds,
        };
        let sent = tx.send(loaded).is_ok();
        if let Ok(mut s) = shared.state.lock() {
            s.in_flight.remove(&node);
        }
        if !sent {
            return;
        }
        // After the node left `in_flight`: the frame this wakes sees it received and not busy.
        if let Some(w) = waker {
            w();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synthetic::Synthetic;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn a_finished_node_wakes_the_waker_after_it_is_there() {
        let source = Arc::new(Synthetic::new(20_000, 3).unwrap());
        let nodes = source.hierarchy().nodes.len().min(5) as u32;
        // The waker records, when it is called, the wake count; the test thread blocks on
        // the channel (the frame loop asleep) until a wake comes.
        let (tx, rx) = std::sync::mpsc::channel::<usize>();
        let calls = Arc::new(AtomicUsize::new(0));
        let (c, tx) = (calls.clone(), Mutex::new(tx));
        let waker: Waker = Arc::new(move || {
            let n = c.fetch_add(1, Ordering::SeqCst) + 1;
            if let Ok(tx) = tx.lock() {
                let _ = tx.send(n);
            }
        });
        let loader = Loader::with_waker(source.clone(), 2, 8, Some(waker));
        let want: Vec<u32> = (0..nodes).collect();
        loader.want(&want);
        let mut got = Vec::new();
        while got.len() < want.len() {
            // Asleep until woken: the n-th wake comes after n nodes were handed over, so the
            // frame it wakes receives them all.
            let n = rx.recv().expect("a wake for every node");
            while let Some(l) = loader.try_recv() {
                assert!(l.result.is_ok());
                got.push(l.node);
            }
            assert!(got.len() >= n, "wake {n} found {} node(s)", got.len());
        }
        got.sort_unstable();
        assert_eq!(got, want);
        assert_eq!(
            calls.load(Ordering::SeqCst),
            want.len(),
            "one wake per node"
        );
        assert_eq!(loader.busy(), 0, "no node left in flight after its wake");
    }
}
