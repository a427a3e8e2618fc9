"""cuFFT reference (through CuPy) for vizdeck's GPU FFT table (`scene::spectrogram::fft::bench_table`).

Usage: python3 benches/cufft_ref.py [BATCH ...]   (default 256)

For every batch and N in 1024..32768: `cupy.fft.rfft` of a BATCH x N float32 array already in
device memory (R2C, complex64 out, plan cached by CuPy), timed with CUDA events over REPS
back-to-back calls after a warm-up; prints a markdown table (ms per batch, columns/s, input GB/s)
and the device-to-device copy bandwidth for scale. Prints "no cupy" and exits 0 without CuPy.
"""
import sys

try:
    import cupy as cp
except Exception as e:  # noqa: BLE001 - any import failure means "no reference here"
    print("no cupy:", e)
    sys.exit(0)

REPS = 200
batches = [int(a) for a in sys.argv[1:]] or [256]
sizes = [1024, 2048, 4096, 8192, 16384, 32768]
print("| N | batch | cuFFT rfft ms/batch | columns/s | input GB/s |")
print("|---:|---:|---:|---:|---:|")
for batch in batches:
    for n in sizes:
        x = cp.random.standard_normal((batch, n), dtype=cp.float32)
        for _ in range(5):
            y = cp.fft.rfft(x, axis=1)
        cp.cuda.Device().synchronize()
        s, e = cp.cuda.Event(), cp.cuda.Event()
        s.record()
        for _ in range(REPS):
            y = cp.fft.rfft(x, axis=1)
        e.record()
        e.synchronize()
        ms = cp.cuda.get_elapsed_time(s, e) / REPS
        print(f"| {n} | {batch} | {ms:.4f} | {batch / ms * 1e3:.0f} | {batch * n * 4 / ms / 1e6:.1f} |")
        del x, y
for mb in [256, 1024]:
    a = cp.empty(mb * 2**20 // 4, dtype=cp.float32)
    b = cp.empty_like(a)
    for _ in range(3):
        b[...] = a
    cp.cuda.Device().synchronize()
    s, e = cp.cuda.Event(), cp.cuda.Event()
    s.record()
    for _ in range(20):
        b[...] = a
    e.record()
    e.synchronize()
    ms = cp.cuda.get_elapsed_time(s, e) / 20
    print(f"D2D copy {mb} MiB: {2 * mb * 2**20 / ms / 1e6:.0f} GB/s (read+write)")
