"""laspy + lazrs, the peer of vizdeck's LAZ loader in benches/laz_decode_ref.sh.

Makes DATA (a LAZ of COPIES copies of tests/data/pointcloud/autzen_trim.laz, each shifted by
1 km in x, so one file of COPIES x 110,000 points written by laspy with lazrs), then times
laspy.read of it with the single-threaded lazrs backend (the same decoder crate, laz-rs, that
vizdeck's `las` crate uses; parallel decoding off on both sides) and with lazrs's parallel
backend (all cores; vizdeck's parallel decode uses the same crate's parallel decoder), and
prints the medians as `PEER_MS=<ms>` and `PEER2_MS=<ms>`.
"""

import argparse
import statistics
import time

import laspy
import numpy as np


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--source", required=True)
    p.add_argument("--copies", type=int, required=True)
    p.add_argument("--reps", type=int, required=True)
    p.add_argument("--data", required=True)
    p.add_argument("--reuse", action="store_true", help="DATA exists: only time it")
    a = p.parse_args()
    if a.copies <= 0 or a.reps <= 0:
        raise SystemExit("laz_decode_ref.py: --copies and --reps must be positive")

    if not a.reuse:
        write_copies(a)
    time_reads(a)


def write_copies(a):
    src = laspy.read(a.source)
    header = laspy.LasHeader(point_format=src.header.point_format, version=src.header.version)
    header.scales = src.header.scales
    header.offsets = src.header.offsets
    with laspy.open(a.data, mode="w", header=header, laz_backend=laspy.LazBackend.Lazrs) as w:
        for i in range(a.copies):
            pts = src.points.copy()
            pts.X = pts.X + np.int32(i * 100_000)  # 1 km at the 1 cm scale
            w.write_points(pts)


def time_reads(a):
    # Single-threaded lazrs (PEER_MS), then lazrs's parallel decoder on all cores (PEER2_MS).
    for backend, label, key in [
        (laspy.LazBackend.Lazrs, "1 thread", "PEER_MS"),
        (laspy.LazBackend.LazrsParallel, "all cores", "PEER2_MS"),
    ]:
        times = []
        n = 0
        for _ in range(a.reps):
            t = time.perf_counter()
            las = laspy.read(a.data, laz_backend=backend)
            n = len(las.points)
            # Touch the scaled coordinates as vizdeck does (f64 file coordinates).
            _ = las.x[-1] + las.y[-1] + las.z[-1]
            times.append((time.perf_counter() - t) * 1e3)
        ms = statistics.median(times)
        print(f"laspy {laspy.__version__} + lazrs ({label}): {n} points, median of {a.reps}: "
              f"{ms:.1f} ms, {n / ms / 1e3:.2f} M points/s")
        print(f"{key}={ms:.3f}")


if __name__ == "__main__":
    main()
