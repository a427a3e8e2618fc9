"""tsdownsample's M4 on the data that benches/tsdownsample_ref.sh hands to vizdeck.

Writes N float32 values (a seeded random walk) to DATA as raw little-endian f32, times
tsdownsample's M4Downsampler into COLS bins (n_out = 4 * COLS), single-threaded (its default)
and parallel, index-based and with an f64 x array, and writes the selected indices of the
index-based run to DATA.idx (little-endian u64) for the cross-check on the vizdeck side.
The last line printed is `TSD_MS=<median ms of the single-threaded index-based run>`.
"""

import argparse
import statistics
import time

import numpy as np
import tsdownsample
from tsdownsample import M4Downsampler


def median_ms(fn, reps):
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        out = fn()
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times), out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, required=True)
    p.add_argument("--cols", type=int, required=True)
    p.add_argument("--reps", type=int, required=True)
    p.add_argument("--data", required=True)
    a = p.parse_args()
    if a.n <= 0 or a.cols <= 0 or a.reps <= 0:
        raise SystemExit("tsdownsample_ref.py: --n, --cols and --reps must be positive")

    rng = np.random.default_rng(5)
    y = np.cumsum(rng.uniform(-0.5, 0.5, a.n).astype(np.float32), dtype=np.float32)
    y.astype("<f4").tofile(a.data)
    x = np.arange(a.n, dtype=np.float64)
    m4 = M4Downsampler()
    n_out = 4 * a.cols
    m4.downsample(y, n_out=n_out)  # warm-up

    print(f"tsdownsample {tsdownsample.__version__}, numpy {np.__version__}; "
          f"{a.n} float32 values into {a.cols} columns, median of {a.reps}")
    rows = [
        ("index bins, 1 thread", lambda: m4.downsample(y, n_out=n_out)),
        ("index bins, parallel", lambda: m4.downsample(y, n_out=n_out, parallel=True)),
        ("f64 x bins, 1 thread", lambda: m4.downsample(x, y, n_out=n_out)),
        ("f64 x bins, parallel", lambda: m4.downsample(x, y, n_out=n_out, parallel=True)),
    ]
    first = None
    for name, fn in rows:
        ms, out = median_ms(fn, a.reps)
        print(f"  tsdownsample M4 ({name}): {ms:9.2f} ms  {a.n / ms / 1e6:6.2f} G values/s")
        if first is None:
            first = ms
            np.asarray(out, dtype="<u8").tofile(a.data + ".idx")
    print(f"TSD_MS={first:.4f}")


if __name__ == "__main__":
    main()
