#!/usr/bin/env bash
# The issue-18 figures on a machine with an NVIDIA GPU (the device tool's H200), one run per
# call, every table of that run printed. Built here, carried there:
#   strip copies of target/release/vizdeck and target/release/vizdeck-lab (the lab's tables), the
#   FFT bench (`cargo bench -p vizdeck-lab --no-run --bench fft`)
#   and the interop tests (`cargo test --release --no-run --test shared_buffer --test
#   share_particles --test share_timeseries --test upload_strategies`) packed as h200/bin.tgz
#   (vizdeck vizdeck-lab fft and the four test names), the Vulkan/GL loader and libasound2 .debs in .gl/
#   (../shared/PLATFORM.md). Carry h200 and .gl; then:  bash benches/h200.sh RUN
# RUN: scenes (the four scenes at 1920x1080), uploads (upload strategies against PyTorch H2D
#      copies, pinned and pageable), fft (the GPU FFT against cuFFT, batches 256 and 4096),
#      pointcloud (every point rasterized, 16-byte and quantized paths up to 10^9 points, then
#      streamed with LOD, 1920x1080), interop (the --share tests on the NVIDIA driver, then the
#      CuPy n-body and the PyTorch time series through clients/python/run_h200.sh), all.
set -u
run=${1:-all}
for f in .gl/*.deb; do dpkg -x "$f" /; done
ldconfig
tar xzf h200/bin.tgz -C h200
B=h200/vizdeck
L=h200/vizdeck-lab
quiet() { grep -vE "INFO|^\s*$"; }
if [[ $run == scenes || $run == all ]]; then
    echo "== scenes 1920x1080 =="
    $B bench --backend vulkan --frames 600 --warmup 60 --size 1920x1080 --out /tmp/bs 2>&1 | quiet | tail -12
fi
if [[ $run == uploads || $run == all ]]; then
    echo "== uploads =="
    $L --backend vulkan --upload all --upload-frames 10 --out /tmp/bu 2>&1 | grep -E "^\|"
    python3 - <<'PY'
import torch, time
for s in (65536, 1 << 20, 16 << 20, 256 << 20):
    d = torch.empty(s, dtype=torch.uint8, device="cuda")
    for pinned in (False, True):
        h = torch.empty(s, dtype=torch.uint8)
        h = h.pin_memory() if pinned else h
        d.copy_(h); torch.cuda.synchronize(); t = time.perf_counter()
        for _ in range(10): d.copy_(h)
        torch.cuda.synchronize(); dt = (time.perf_counter() - t) / 10
        print(f"torch H2D {s} B pinned={pinned}: {dt*1e3:.3f} ms, {s/dt/1e9:.2f} GB/s")
PY
fi
if [[ $run == fft || $run == all ]]; then
    echo "== fft =="
    # Every fused variant (8, 16 and 32 values per thread, with and without wgpu's runtime
    # checks) and the multi-pass path, then cuFFT on the same sizes.
    for b in 256 4096; do
        $L --backend vulkan --kernels fft --fft-batch $b --fft-reps 200 --out /tmp/bf 2>&1 | grep -E "^\|"
    done
    python3 benches/cufft_ref.py 256 4096
fi
if [[ $run == pointcloud || $run == all ]]; then
    echo "== point clouds: every point rasterized =="
    # One count a process: each cloud's buffers fresh (the bench warms up until stable).
    for n in 10000000 100000000 260000000 400000000 600000000 800000000 1000000000; do
        $L --backend vulkan --kernels pointcloud --pointcloud-counts $n --size 1920x1080 --out /tmp/bk 2>&1 | grep -E "^\| [0-9]|skipped"
    done
    for budget in "" "--pointcloud-budget 100000000"; do
        echo "== point clouds: streamed with LOD, ${budget:-the default budget} =="
        $L --backend vulkan --kernels pointcloud-stream --pointcloud-clouds synthetic:100M,synthetic:1G $budget --size 1920x1080 --out /tmp/bk2 2>&1 | quiet | tail -6
    done
fi
if [[ $run == interop || $run == all ]]; then
    mkdir -p target/release && cp $B target/release/vizdeck
    for t in shared_buffer share_particles share_timeseries upload_strategies; do
        echo "== $t on this driver =="
        h200/$t --test-threads=1 2>&1 | grep -E "^test |test result|skipped"
    done
    bash clients/python/run_h200.sh $B 16777216 300
    bash clients/python/run_h200.sh $B 1048576 600
fi
