#!/usr/bin/env python3
"""A PyTorch time series written straight into vizdeck's GPU memory (`vizdeck --share`, issue 18).

A damped 1-D wave equation on a string of M points (fixed at the far end, driven at the near end
by a few sines, plucked now and then) is integrated on the GPU with PyTorch (leapfrog finite
differences, `--substeps` steps a frame, replayed as one CUDA graph); S probes along the string (S from vizdeck's
`--share-series`) record the displacement at every step. vizdeck's shared array is the window
of the newest N samples of each probe (f32 [S, N], N from `--share-samples`, oldest first): the
probes' samples go into a ring of the producer's own, and each frame the ring is written into
the shared tensor in time order (two slice copies, or `--roll`: torch.roll of a window and one
copy). Each frame is declared complete and its release awaited (with vizdeck's timeline
semaphores, on the GPU: the default stream waits for the last release before writing and
signals the frame written; the CPU runs one frame ahead at most). Prints frames/s and the GPU
time per frame (CUDA events), then exits.

    vizdeck --headless --backend vulkan --scene timeseries --share /tmp/vz.sock \\
        --share-series 8 --share-samples 65536 --frames 100000000 &
    python3 examples/timeseries_torch.py /tmp/vz.sock 600

The samples are one integration step apart: `--share-rate` with the rate this prints puts the
x axis in seconds of the string's time.
"""

import argparse
import os
import random
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import torch  # noqa: E402

import vizdeck_share  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("socket", help="vizdeck's --share PATH")
    ap.add_argument("frames", type=int, help="frames to write, then exit")
    ap.add_argument("--points", type=int, default=4096, help="points on the string (default 4096)")
    ap.add_argument("--substeps", type=int, default=64,
                    help="integration steps (new samples per probe) a frame (default 64)")
    ap.add_argument("--damping", type=float, default=2e-4, help="damping per step (default 2e-4)")
    ap.add_argument("--no-graph", action="store_true",
                    help="run the steps eagerly instead of replaying a CUDA graph of them")
    ap.add_argument("--roll", action="store_true",
                    help="keep the window with torch.roll instead of a ring")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--wait-timeout", type=float, default=30.0, help="s to wait for each release")
    args = ap.parse_args()

    t_connect = time.perf_counter()
    share = vizdeck_share.connect(args.socket)
    b = share.buffers[0]
    if share.scene != "timeseries" or b["dtype"] != "f32" or len(b["shape"]) != 2:
        sys.exit(f"not a time-series share: scene {share.scene}, {b['dtype']} {b['shape']}")
    s, n = b["shape"]
    dev = torch.device(f"cuda:{share.cuda_device}")
    torch.cuda.set_device(dev)
    shared = share.torch_tensor(share.buffer_index("device"))  # [S, N] f32 on vizdeck's memory
    print(f"connected: {s} series x {n} samples, {b['size'] / 2**20:.1f} MiB shared, CUDA device "
          f"{share.cuda_device} (UUID {share.device_uuid}), runtime {vizdeck_share.cuda_runtime().where}, "
          f"import {1e3 * (time.perf_counter() - t_connect):.1f} ms")

    m, k = args.points, args.substeps
    if k > n:
        sys.exit(f"--substeps {k} is more than the window's {n} samples")
    rng = random.Random(args.seed)  # on the CPU: nothing in the loop waits for the GPU
    dx = 1.0 / m
    dt = 0.5 * dx  # Courant number 0.5 (c = 1)
    c2 = (dt / dx) ** 2
    gam = args.damping
    x = torch.arange(m, device=dev, dtype=torch.float32) * dx
    u = torch.exp(-((x - 0.3) / 0.02) ** 2)  # a pluck
    u_prev = u.clone()
    u_next = torch.zeros_like(u)
    probes = torch.linspace(0.05 * m, 0.95 * m, s, device=dev).long().clamp(1, m - 2)
    # The drive at the near end, cycles per unit time between the string's modes (n / 2).
    freqs = torch.tensor([3.3, 7.7, 17.9], device=dev)[:, None]
    offsets = torch.arange(k, device=dev, dtype=torch.float32) * dt
    t_dev = torch.zeros((), device=dev, dtype=torch.float32)  # the string's time
    drive = torch.empty(k, device=dev, dtype=torch.float32)
    block = torch.empty((s, k), device=dev, dtype=torch.float32)
    ring = torch.zeros((s, n), device=dev, dtype=torch.float32)  # or the window, with --roll
    head = 0  # the ring's oldest sample

    def integrate():
        """k leapfrog steps on the static buffers; block[:, j] = the probes after step j."""
        drive.copy_((0.2 * torch.sin(2 * torch.pi * freqs * (t_dev + offsets)[None, :])).sum(0))
        for j in range(k):
            u_next[1:-1] = ((2 - gam) * u[1:-1] - (1 - gam) * u_prev[1:-1]
                            + c2 * (u[2:] - 2 * u[1:-1] + u[:-2]))
            u_next[0] = drive[j]
            u_prev.copy_(u)
            u.copy_(u_next)
            block[:, j] = u.index_select(0, probes)
        t_dev.add_(k * dt)

    step = integrate
    if not args.no_graph:
        # The k steps (a few hundred small kernels) captured once, replayed as one launch.
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            integrate()  # warm-up (also the first frame's steps)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            integrate()
        step = graph.replay

    def advance():
        step()
        # A random pluck now and then keeps the string alive: a displacement at rest (added to
        # both time levels, so no velocity is injected).
        if rng.random() < 0.05:
            c = rng.uniform(0.1, 0.9)
            bump = 0.5 * torch.exp(-((x - c) / 0.01) ** 2)
            u.add_(bump)
            u_prev.add_(bump)

    on_gpu = share.semaphores
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(2)]
    gpu_ms = []
    wait_ms = []
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for frame in range(1, args.frames + 1):
        start, stop = events[frame % 2]
        start.record()
        advance()
        if args.roll:
            ring = torch.roll(ring, -k, dims=1)
            ring[:, n - k:] = block
        else:
            end = head + k
            if end <= n:
                ring[:, head:end] = block
            else:
                ring[:, head:] = block[:, :n - head]
                ring[:, :end - n] = block[:, n - head:]
            head = end % n
        share.begin_frame()  # with semaphores: the stream waits for the last release
        if args.roll:
            shared.copy_(ring)
        else:
            # The ring in time order: oldest (head) first.
            shared[:, :n - head].copy_(ring[:, head:])
            shared[:, n - head:].copy_(ring[:, :head])
        stop.record()
        w = time.perf_counter()
        if on_gpu:
            share.frame_complete(frame)  # the stream signals ready = frame
            if frame > 1:
                share.wait_released(frame - 1, timeout=args.wait_timeout)
                s0, s1 = events[(frame - 1) % 2]
                gpu_ms.append(s0.elapsed_time(s1))
        else:
            stop.synchronize()
            gpu_ms.append(start.elapsed_time(stop))
            w = time.perf_counter()
            share.frame_complete(frame, synchronize=False)  # synchronised above
            share.wait_released(frame, timeout=args.wait_timeout)
        wait_ms.append(1e3 * (time.perf_counter() - w))
    if on_gpu:
        share.wait_released(args.frames, timeout=args.wait_timeout)
    wall = time.perf_counter() - t0

    gpu_ms.sort()
    wait_ms.sort()
    med = lambda xs: xs[len(xs) // 2] if xs else float("nan")  # noqa: E731
    mean = lambda xs: sum(xs) / len(xs) if xs else float("nan")  # noqa: E731
    sync = "semaphores on the GPU" if on_gpu else "socket handshake"
    print(f"timeseries: frames {args.frames}, {wall:.2f} s, {args.frames / wall:.1f} frames/s; per frame: "
          f"torch {k} steps{'' if args.no_graph else ' (CUDA graph)'} + window {mean(gpu_ms):.3f} ms mean (median {med(gpu_ms):.3f}), "
          f"{'CPU wait for the last release' if on_gpu else 'complete->released'} "
          f"{mean(wait_ms):.3f} ms mean (median {med(wait_ms):.3f}); {sync}; "
          f"{s} series x {n} samples ({'torch.roll' if args.roll else 'ring'}), "
          f"{b['size'] / 2**20:.1f} MiB a frame, 0 bytes through the host; "
          f"{k * args.frames / wall:.0f} samples/s per series, string time step {dt:.3g} "
          f"(--share-rate {1 / dt:.6g} for seconds)")
    share.close()


if __name__ == "__main__":
    main()
