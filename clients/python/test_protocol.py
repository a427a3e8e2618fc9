#!/usr/bin/env python3
"""The --share protocol from Python, without CUDA (lavapipe has none): starts a headless vizdeck
sharing 1024 particles, connects with vizdeck_share.connect, checks the description and the fd,
says frame 1 (and 2) complete without writing, and checks vizdeck releases them. Prints PASS/FAIL.

    python3 clients/python/test_protocol.py [path/to/vizdeck]

The binary: the argument, else $VIZDECK, else /tmp/vz-client-test, else target/release/vizdeck.
"""

import json
import os
import stat
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import vizdeck_share  # noqa: E402

COUNT = 1024


def binary():
    if len(sys.argv) > 1:
        return sys.argv[1]
    for b in (os.environ.get("VIZDECK"), "/tmp/vz-client-test",
              os.path.join(HERE, "..", "..", "target", "release", "vizdeck")):
        if b and os.access(b, os.X_OK):
            return b
    sys.exit("FAIL: no vizdeck binary (give its path)")


def socket_created(sock, proc, timeout=30):
    """Whether vizdeck (`proc`) created its socket `sock` within `timeout` s (False: it exited
    first, or the time ran out)."""
    deadline = time.monotonic() + timeout
    while not os.path.exists(sock):
        if proc.poll() is not None or time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def main():
    sock = f"/tmp/vizdeck-pytest-{os.getpid()}.sock"
    if os.path.exists(sock):
        os.unlink(sock)
    cmd = [binary(), "--headless", "--no-settings", "--realtime", "--scene", "particles",
           "--particles", str(COUNT), "--share", sock, "--frames", "600", "--size", "320x200"]
    log = open(f"/tmp/vizdeck-pytest-{os.getpid()}.log", "w+")
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    failures = []

    def check(ok, what):
        print(("ok   " if ok else "FAIL ") + what)
        if not ok:
            failures.append(what)

    try:
        if not socket_created(sock, proc):
            log.seek(0)
            print(log.read()[-3000:])
            print("FAIL: vizdeck did not create the socket")
            return 1

        share = vizdeck_share.connect(sock, timeout=30)
        d = share.description
        b = share.buffers[0]
        print("description:", d)
        check(d["protocol"] == 1, "protocol 1")
        check(d["scene"] == "particles", "scene particles")
        check(len(share.device_uuid) == 32 and int(share.device_uuid, 16) >= 0, "device UUID: 32 hex digits")
        check("semaphores" in d, "the semaphores field")
        if d["semaphores"] is not None:
            print("SKIP: this device shares semaphores; the frames below need CUDA to signal them")
            return 0
        check(not share.semaphores, "no semaphores on this device (socket handshake)")
        check(len(d["buffers"]) == 2, "two buffers (device, host)")
        check([x.get("memory") for x in d["buffers"]] == ["device", "host"], "memory device, host")
        check(d["buffers"][1]["shape"] == [COUNT, 8] and d["buffers"][1]["size"] == COUNT * 32,
              "the host buffer has the same layout")
        check(b["dtype"] == "f32", "dtype f32")
        check(b["shape"] == [COUNT, 8], f"shape [{COUNT}, 8]")
        check(b["strides"] == [32, 4], "strides [32, 4]")
        check(b["offset"] == 0 and b["size"] == COUNT * 32 <= b["allocation_size"], "size 32 bytes a particle")
        check(len(share.fds) == 2, "2 fds received")
        try:
            st = os.fstat(share.fd(0))
            check(True, f"the fd is valid (fstat mode {stat.filemode(st.st_mode)})")
        except OSError as e:
            check(False, f"the fd is valid ({e})")
        import fcntl
        check(bool(fcntl.fcntl(share.fd(0), fcntl.F_GETFD) & fcntl.FD_CLOEXEC), "the fd is close-on-exec")

        for n in (1, 2):
            share.frame_complete(n, synchronize=False)
            try:
                m = share.wait_released(n, timeout=20)
                check(m == n, f"released {n} (got {m})")
            except Exception as e:  # noqa: BLE001
                check(False, f"released {n}: {e}")
        try:
            share.frame_complete(2)
            check(False, "frame numbers must increase")
        except ValueError:
            check(True, "a repeated frame number is refused")
        share.close()

        # vizdeck accepts the next producer after this one left.
        again = vizdeck_share.connect(sock, timeout=30)
        check(len(again.fds) == 2 and again.buffers[0]["shape"] == [COUNT, 8], "a second producer is handed the buffer")
        again.frame_complete(1, synchronize=False)
        check(again.wait_released(1, timeout=20) == 1, "the second producer's frame 1 is released")

        # vizdeck exits: the producer gets one clear error.
        proc.terminate()
        proc.wait(timeout=20)
        try:
            again.frame_complete(2, synchronize=False)
            again.wait_released(2, timeout=10)
            check(False, "vizdeck gone is reported")
        except vizdeck_share.VizdeckGone as e:
            check(True, f"vizdeck gone is reported: {e}")
        again.close()

        try:
            vizdeck_share.connect(sock, timeout=5)
            check(False, "connecting with no vizdeck fails")
        except vizdeck_share.VizdeckGone as e:
            check(True, f"connecting with no vizdeck fails clearly: {e}")

        # Without CUDA here, the CUDA path says so in one line (or, on a CUDA machine, the
        # lavapipe UUID matches no CUDA device).
        fake = vizdeck_share.Share(None, dict(d), [])
        try:
            fake.cuda_device
            print("note: a CUDA device matched lavapipe's UUID?")
        except (vizdeck_share.CudaUnavailable, vizdeck_share.DeviceMismatch) as e:
            check(True, f"CUDA path refuses clearly: {type(e).__name__}: {e}")
    except Exception as e:  # noqa: BLE001
        check(False, f"unexpected {type(e).__name__}: {e}")
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
        if os.path.exists(sock):
            os.unlink(sock)
    if not failures:
        for strategy in ("write-buffer", "host-import"):
            host_mode(check, strategy)
        timeseries_mode(check)
    if failures:
        log.seek(0)
        print(log.read()[-2000:])
        print(f"FAIL ({len(failures)}): " + "; ".join(failures))
        return 1
    print("PASS")
    return 0


def host_mode(check, strategy):
    """The host path: a producer writes known bytes into the host memfd (no CUDA), says frame 1
    complete (host), then frame 2 complete (device); vizdeck's report shows the host frame's
    bytes uploaded through its uploader (COUNT*32) and the device frame's none."""
    sock = f"/tmp/vizdeck-pytest-host-{os.getpid()}.sock"
    report = f"/tmp/vizdeck-pytest-host-{os.getpid()}.json"
    for f in (sock, report):
        if os.path.exists(f):
            os.unlink(f)
    cmd = [binary(), "--headless", "--no-settings", "--realtime", "--scene", "particles",
           "--particles", str(COUNT), "--share", sock, "--frames", "180", "--size", "320x200",
           "--report", report, "--upload-strategy", strategy]
    print(f"host mode, --upload-strategy {strategy}")
    log = open(f"/tmp/vizdeck-pytest-host-{os.getpid()}.log", "w+")
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    try:
        if not socket_created(sock, proc):
            check(False, "host mode: vizdeck did not create the socket")
            return
        share = vizdeck_share.connect(sock, timeout=30)
        hi = share.buffer_index("host")
        check(hi == 1 and share.buffer_index("device") == 0, "host buffer 1, device buffer 0")
        view = share.host_view()
        pattern = bytes(range(256)) * (COUNT * 32 // 256)
        view[:] = pattern
        check(os.pread(share.fd(hi), 256, 0) == bytes(range(256)), "the mapping writes the memfd")
        view.release()
        share.frame_complete(1, synchronize=False, memory="host")
        check(share.wait_released(1, timeout=20) == 1, "host frame 1 released")
        share.frame_complete(2, synchronize=False)
        check(share.wait_released(2, timeout=20) == 2, "device frame 2 released")
        share.close()
        proc.wait(timeout=60)
        with open(report) as f:
            r = json.load(f)
        m = find_key(r, "shared")
        print("host mode shared metrics:", m)
        check(m is not None and m["frames_shown"] == 2 and m["frames_host"] == 1,
              "host mode: 2 frames shown, 1 from host memory")
        check(m is not None and m["host_bytes_uploaded"] == COUNT * 32,
              f"host mode: {COUNT * 32} bytes uploaded from host memory (the device frame: none)")
        up = find_key(r, "BytesUploaded")
        print("report BytesUploaded:", up)
        if isinstance(up, dict) and "max" in up:
            check(up["max"] >= COUNT * 32, "the report's BytesUploaded max covers the host frame")
    except Exception as e:  # noqa: BLE001
        check(False, f"host mode: unexpected {type(e).__name__}: {e}")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for f in (sock, report):
            if os.path.exists(f):
                os.unlink(f)


def timeseries_mode(check, series=3, samples=1000):
    """The time-series scene's share: vizdeck --scene timeseries --share-series 3
    --share-samples 1000 describes an f32 [3, 1000] window (strides [4000, 4]) and releases a
    frame said complete (nothing written: on lavapipe without CUDA the values are whatever the
    memory holds)."""
    sock = f"/tmp/vizdeck-pytest-ts-{os.getpid()}.sock"
    if os.path.exists(sock):
        os.unlink(sock)
    cmd = [binary(), "--headless", "--no-settings", "--realtime", "--scene", "timeseries",
           "--share", sock, "--share-series", str(series), "--share-samples", str(samples),
           "--frames", "600", "--size", "320x200"]
    print("time-series mode")
    log = open(f"/tmp/vizdeck-pytest-ts-{os.getpid()}.log", "w+")
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    try:
        if not socket_created(sock, proc):
            log.seek(0)
            print(log.read()[-2000:])
            check(False, "time-series mode: vizdeck did not create the socket")
            return
        share = vizdeck_share.connect(sock, timeout=30)
        d = share.description
        b = share.buffers[0]
        check(d["scene"] == "timeseries", "time-series mode: scene timeseries")
        check(b["dtype"] == "f32" and b["shape"] == [series, samples],
              f"time-series mode: f32 [{series}, {samples}]")
        check(b["strides"] == [4 * samples, 4], f"time-series mode: strides [{4 * samples}, 4]")
        check(b["size"] == series * samples * 4, "time-series mode: 4 bytes a sample")
        check(d["buffers"][1]["shape"] == [series, samples], "time-series mode: the host buffer too")
        if d["semaphores"] is None:
            share.frame_complete(1, synchronize=False)
            check(share.wait_released(1, timeout=20) == 1, "time-series mode: frame 1 released")
        share.close()
    except Exception as e:  # noqa: BLE001
        check(False, f"time-series mode: unexpected {type(e).__name__}: {e}")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if os.path.exists(sock):
            os.unlink(sock)


def find_key(obj, key):
    """The first value of `key` anywhere in a JSON tree."""
    if isinstance(obj, dict):
        if obj.get(key) is not None:
            return obj[key]
        vals = obj.values()
    elif isinstance(obj, list):
        vals = obj
    else:
        return None
    for v in vals:
        got = find_key(v, key)
        if got is not None:
            return got
    return None


if __name__ == "__main__":
    sys.exit(main())
