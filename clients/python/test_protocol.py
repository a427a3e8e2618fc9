#!/usr/bin/env python3
"""The --share protocol from Python, without CUDA (lavapipe has none): starts a headless vizdeck
sharing 1024 particles, connects with vizdeck_share.connect, checks the description and the fd,
says frame 1 (and 2) complete without writing, and checks vizdeck releases them. Prints PASS/FAIL.

    python3 clients/python/test_protocol.py [path/to/vizdeck]

The binary: the argument, else $VIZDECK, else /tmp/vz-client-test, else target/release/vizdeck.
"""

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
        deadline = time.monotonic() + 30
        while not os.path.exists(sock):
            if proc.poll() is not None or time.monotonic() > deadline:
                log.seek(0)
                print(log.read()[-3000:])
                print("FAIL: vizdeck did not create the socket")
                return 1
            time.sleep(0.05)

        share = vizdeck_share.connect(sock, timeout=30)
        d = share.description
        b = share.buffers[0]
        print("description:", d)
        check(d["protocol"] == 1, "protocol 1")
        check(d["scene"] == "particles", "scene particles")
        check(len(share.device_uuid) == 32 and int(share.device_uuid, 16) >= 0, "device UUID: 32 hex digits")
        check(d["semaphore"] is None, "no semaphore (socket handshake)")
        check(len(d["buffers"]) == 1, "one buffer")
        check(b["dtype"] == "f32", "dtype f32")
        check(b["shape"] == [COUNT, 8], f"shape [{COUNT}, 8]")
        check(b["strides"] == [32, 4], "strides [32, 4]")
        check(b["offset"] == 0 and b["size"] == COUNT * 32 <= b["allocation_size"], "size 32 bytes a particle")
        check(len(share.fds) == 1, "1 fd received")
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
        check(len(again.fds) == 1 and again.buffers[0]["shape"] == [COUNT, 8], "a second producer is handed the buffer")
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
    if failures:
        log.seek(0)
        print(log.read()[-2000:])
        print(f"FAIL ({len(failures)}): " + "; ".join(failures))
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
