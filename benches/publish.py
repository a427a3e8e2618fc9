#!/usr/bin/env python3
"""Publish/follow through one mosquitto on this machine (issue 17), every scene and follower
count in one command.

For each scene and each follower count N: a broker on a free loopback port; N headless followers
(320x200) subscribed first; one headless publisher paced at 60 frames a second (--realtime) for
SECONDS (default 10) at 1280x720; then the followers are stopped (SIGTERM: each writes its
report). Printed per run:

- lag p50 / p99 / max, ms, of the slowest follower (by p99): the publisher's wall clock when it
  handed the frame's message to its connection (right after that frame's ingest) to the
  follower's present of the frame that applied it (one machine: one clock);
- the publisher's bytes per second and its last keyframe's size, against the raw data rate
  (time series: 12 bytes a sample, an f64 time and an f32 value);
- the publisher's frame time p99, and messages dropped anywhere.

Run: cargo build --release && python3 benches/publish.py [SECONDS] [SCENES] [COUNTS]
     e.g. python3 benches/publish.py 10 timeseries,particles,spectrogram 1,4,10
"""

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

BIN = os.environ.get("VIZDECK_BIN", "target/release/vizdeck")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, timeout=10.0):
    end = time.time() + timeout
    while time.time() < end:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return
        except OSError:
            time.sleep(0.02)
    raise SystemExit("mosquitto did not start")


def wait_subscribed(proc):
    """Reads the follower's stderr until it has subscribed; returns the lines read."""
    seen = []
    for line in proc.stderr:
        seen.append(line)
        if "subscribed to" in line:
            return seen
    raise SystemExit("a follower did not subscribe:\n" + "".join(seen))


def run(scene, followers, seconds, work):
    port = free_port()
    conf = os.path.join(work, "mosquitto.conf")
    with open(conf, "w") as f:
        f.write(f"listener {port} 127.0.0.1\nallow_anonymous true\npersistence false\n"
                "max_queued_messages 100000\n")
    broker = subprocess.Popen(["mosquitto", "-c", conf], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        wait_port(port)
        url = f"mqtt://127.0.0.1:{port}/bench/{scene}"
        common = [BIN, "--headless", "--no-settings"]
        procs = []
        for i in range(followers):
            p = subprocess.Popen(
                common + ["--size", "320x200", "--scene", scene, "--follow", url,
                          "--frames", "100000000", "--report", os.path.join(work, f"f{i}.json")],
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            procs.append(p)
        for p in procs:
            wait_subscribed(p)
        frames = int(seconds * 60)
        pub = subprocess.run(
            common + ["--size", "1280x720", "--scene", scene, "--publish", url, "--realtime",
                      "--frames", str(frames), "--report", os.path.join(work, "p.json")],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if pub.returncode != 0:
            raise SystemExit(f"publisher failed: {pub.stderr}")
        time.sleep(2.0)
        for p in procs:
            p.send_signal(signal.SIGTERM)
        for p in procs:
            p.wait(timeout=60)
        rep = json.load(open(os.path.join(work, "p.json")))
        fol = [json.load(open(os.path.join(work, f"f{i}.json"))) for i in range(followers)]
    finally:
        broker.terminate()
        broker.wait()
    pub_m = rep["publish"]
    stream_s = frames / 60.0
    lags = [f["follow"]["lag_ms"] for f in fol if f["follow"].get("lag_ms")]
    slowest = max(lags, key=lambda l: l["p99"]) if lags else None
    raw = None
    if scene == "timeseries":
        raw = rep["scenes"]["timeseries"]["points_ingested"] * 12 / stream_s
    dropped = pub_m["dropped"] + sum(f["follow"]["dropped_behind"] for f in fol)
    gaps = sum(sum(s["gaps"] for s in f["follow"]["scenes"].values()) for f in fol)
    return {
        "scene": scene,
        "followers": followers,
        "lag_p50": slowest["p50"] if slowest else None,
        "lag_p99": slowest["p99"] if slowest else None,
        "lag_max": slowest["max"] if slowest else None,
        "bytes_s": pub_m["bytes_sent"] / stream_s,
        "raw_s": raw,
        "key_bytes": pub_m["last_keyframe_bytes"],
        "pub_p99": rep["summary"]["p99_ms"] if "p99_ms" in rep["summary"] else None,
        "dropped": dropped,
        "gaps": gaps,
        "applied": [f["follow"]["messages_applied"] for f in fol],
        "sent": pub_m["messages_sent"],
    }


def mib(x):
    return "-" if x is None else f"{x / 2**20:.2f}"


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 10.0
    scenes = (sys.argv[2] if len(sys.argv) > 2 else "timeseries").split(",")
    counts = [int(c) for c in (sys.argv[3] if len(sys.argv) > 3 else "1,4,10").split(",")]
    if not shutil.which("mosquitto"):
        raise SystemExit("needs mosquitto (apt-get install mosquitto)")
    print(f"{seconds:g} s per run, publisher 1280x720 --realtime, followers 320x200; "
          "lag = publisher send -> follower present, slowest follower")
    print("| scene | followers | lag p50 ms | lag p99 ms | lag max ms | MiB/s sent | raw MiB/s "
          "| keyframe MiB | messages sent / applied (min) | dropped | gaps |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for scene in scenes:
        for n in counts:
            work = tempfile.mkdtemp(prefix="vizdeck_pubbench_")
            try:
                r = run(scene, n, seconds, work)
            finally:
                shutil.rmtree(work, ignore_errors=True)
            fmt = lambda v: "-" if v is None else f"{v:.1f}"
            print(f"| {scene} | {n} | {fmt(r['lag_p50'])} | {fmt(r['lag_p99'])} | "
                  f"{fmt(r['lag_max'])} | {mib(r['bytes_s'])} | {mib(r['raw_s'])} | "
                  f"{mib(r['key_bytes'])} | {r['sent']} / {min(r['applied'])} | "
                  f"{r['dropped']} | {r['gaps']} |", flush=True)


if __name__ == "__main__":
    main()
