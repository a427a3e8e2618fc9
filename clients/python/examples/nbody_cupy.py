#!/usr/bin/env python3
"""CuPy particles written straight into vizdeck's GPU memory (`vizdeck --share`, issue 18).

N test particles (N from vizdeck's `--particles`) orbit a few heavy bodies that themselves
circle the origin: a restricted n-body (each particle feels the K bodies, softened; O(N*K), so
it scales to 16M particles), integrated with leapfrog in CuPy. Each frame the positions,
velocities and age are written into the shared [N, 8] f32 array, the frame is declared complete
and the release awaited (with vizdeck's timeline semaphores, on the GPU: the CuPy stream waits
for the last release before writing and signals the frame written; the CPU runs one frame
ahead at most). Prints frames/s and the time per frame spent in CuPy (GPU time of the
step and the write, by CUDA events), then exits.

    vizdeck --headless --scene particles --particles 1048576 --share /tmp/vz.sock --frames 100000 &
    python3 examples/nbody_cupy.py /tmp/vz.sock 600 [--via host]

`--via host` (the comparison of issue 18): the same step on the GPU into a CuPy array of its
own, then each frame a pinned cudaMemcpy device-to-host into vizdeck's host memfd (mapped and
cudaHostRegister'ed), "frame n complete (host)", and vizdeck uploads it through its upload path.
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import cupy as cp  # noqa: E402

import vizdeck_share  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("socket", help="vizdeck's --share PATH")
    ap.add_argument("frames", type=int, help="frames to write, then exit")
    ap.add_argument("--bodies", type=int, default=3, help="heavy bodies (default 3)")
    ap.add_argument("--dt", type=float, default=1 / 60, help="time step, s (default 1/60)")
    ap.add_argument("--wait-timeout", type=float, default=30.0, help="s to wait for each release")
    ap.add_argument("--via", choices=["device", "host"], default="device",
                    help="device: write vizdeck's GPU memory (zero copy); host: copy to its host memfd")
    args = ap.parse_args()

    t_connect = time.perf_counter()
    share = vizdeck_share.connect(args.socket)
    b = share.buffers[0]
    if share.scene != "particles" or b["dtype"] != "f32" or b["shape"][1] != 8:
        sys.exit(f"not a particle share: scene {share.scene}, {b['dtype']} {b['shape']}")
    n = b["shape"][0]
    with cp.cuda.Device(share.cuda_device):
        if args.via == "device":
            shared = share.cuda_array(share.buffer_index("device"))  # [n, 8] f32 on vizdeck's memory
        else:
            shared = cp.zeros((n, 8), dtype=cp.float32)  # the producer's own frame
            host_ptr = share.host_register()  # vizdeck's memfd, pinned
        print(f"connected: {n} particles, {b['size'] / 2**20:.1f} MiB shared, CUDA device "
              f"{share.cuda_device} (UUID {share.device_uuid}), runtime {vizdeck_share.cuda_runtime().where}, "
              f"import {1e3 * (time.perf_counter() - t_connect):.1f} ms")

        rng = cp.random.RandomState(1)
        k = args.bodies
        gm = cp.float32(0.6 / k)  # each body's G*M
        eps2 = cp.float32(0.02)  # softening^2
        r_orbit, w_orbit = 0.6, 0.5  # bodies circle the origin at this radius and rate

        def bodies(t):
            ang = w_orbit * t + 2 * cp.pi * cp.arange(k, dtype=cp.float32) / k
            return cp.stack([r_orbit * cp.cos(ang), 0.1 * cp.sin(2 * ang), r_orbit * cp.sin(ang)], axis=1).astype(cp.float32)

        def accel(p, t):
            a = cp.zeros_like(p)
            for j, q in enumerate(bodies(t)):
                d = q[None, :] - p
                r2 = (d * d).sum(axis=1, keepdims=True) + eps2
                a += gm * d * r2 ** cp.float32(-1.5)
            return a

        # A thin disc with near-circular velocities about the origin.
        r = (0.3 + 1.0 * rng.random_sample(n)).astype(cp.float32)
        th = (2 * cp.pi * rng.random_sample(n)).astype(cp.float32)
        pos = cp.stack([r * cp.cos(th), (0.03 * rng.standard_normal(n)).astype(cp.float32), r * cp.sin(th)], axis=1)
        v = cp.sqrt(cp.float32(0.6) / cp.sqrt(r * r + eps2)).astype(cp.float32)
        vel = cp.stack([-v * cp.sin(th), cp.zeros_like(v), v * cp.cos(th)], axis=1)
        t = 0.0
        dt = cp.float32(args.dt)
        acc = accel(pos, t)
        shared[:, 7] = 0  # lifetime 0: immortal

        # With semaphores (device memory): nothing waits on the CPU but the bound on how far it
        # runs ahead (one frame); the stream waits for vizdeck's release of the last frame
        # before writing (begin_frame) and signals the frame written (frame_complete).
        on_gpu = args.via == "device" and share.semaphores
        events = [(cp.cuda.Event(), cp.cuda.Event()) for _ in range(2)]
        gpu_ms = []
        wait_ms = []
        cp.cuda.Device().synchronize()
        t0 = time.perf_counter()
        for frame in range(1, args.frames + 1):
            start, stop = events[frame % 2]
            start.record()
            # leapfrog (kick-drift-kick)
            vel += 0.5 * dt * acc
            pos += dt * vel
            t += args.dt
            acc = accel(pos, t)
            vel += 0.5 * dt * acc
            share.begin_frame()
            shared[:, 0:3] = pos
            shared[:, 3] = t
            shared[:, 4:7] = vel
            if args.via == "host":
                cp.cuda.runtime.memcpyAsync(host_ptr, shared.data.ptr, shared.nbytes,
                                            cp.cuda.runtime.memcpyDeviceToHost,
                                            cp.cuda.get_current_stream().ptr)
            stop.record()
            w = time.perf_counter()
            if on_gpu:
                share.frame_complete(frame)  # the stream signals ready = frame
                if frame > 1:
                    share.wait_released(frame - 1, timeout=args.wait_timeout)
                    s0, s1 = events[(frame - 1) % 2]
                    gpu_ms.append(cp.cuda.get_elapsed_time(s0, s1))
            else:
                stop.synchronize()
                gpu_ms.append(cp.cuda.get_elapsed_time(start, stop))
                w = time.perf_counter()
                share.frame_complete(frame, synchronize=False, memory=args.via)  # stream synchronised above
                share.wait_released(frame, timeout=args.wait_timeout)
            wait_ms.append(1e3 * (time.perf_counter() - w))
        if on_gpu:
            share.wait_released(args.frames, timeout=args.wait_timeout)
        wall = time.perf_counter() - t0

    gpu_ms.sort()
    wait_ms.sort()
    med = lambda xs: xs[len(xs) // 2]  # noqa: E731
    sync = "semaphores on the GPU" if on_gpu else "socket handshake"
    through = "0 bytes through the host" if args.via == "device" else \
        f"{b['size'] / 2**20:.1f} MiB a frame through pinned host memory"
    print(f"via {args.via}: frames {args.frames}, {wall:.2f} s, {args.frames / wall:.1f} frames/s; per frame: "
          f"CuPy step+write{'+D2H' if args.via == 'host' else ''} {sum(gpu_ms) / len(gpu_ms):.3f} ms mean (median {med(gpu_ms):.3f}), "
          f"{'CPU wait for the last release' if on_gpu else 'complete->released'} "
          f"{sum(wait_ms) / len(wait_ms):.3f} ms mean (median {med(wait_ms):.3f}); {sync}; "
          f"{n} particles, {b['size'] / 2**20:.1f} MiB a frame, {through}")
    share.close()


if __name__ == "__main__":
    main()
