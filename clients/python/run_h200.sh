#!/bin/bash
# The CUDA path on an NVIDIA machine in one command, from the repository root:
#   bash clients/python/run_h200.sh [VIZDECK_BINARY] [PARTICLES] [FRAMES]
# (defaults: target/release/vizdeck, 1048576, 600). Unpacks the Vulkan/GL loader debs in .gl/
# if there are any (the H200 machine has no loader installed), starts vizdeck headless sharing
# PARTICLES particles, runs the CuPy example for FRAMES frames, stops vizdeck, prints both
# summaries (the example's frames/s and CuPy ms a frame; vizdeck's frame times), once per mode:
# device (CuPy writes vizdeck's GPU memory) and host (CuPy copies to vizdeck's pinned host memfd,
# vizdeck uploads it with --upload-strategy $UPLOAD, default host-import: the GPU copies from
# the memfd in place), same N and FRAMES; the two "via" lines are the issue 18 comparison.
# Then the time series: vizdeck --scene timeseries sharing TS_SERIES x TS_SAMPLES f32 (defaults
# 8 x 65536), the PyTorch wave-equation example (examples/timeseries_torch.py) writing it for
# FRAMES frames; its "timeseries:" line and vizdeck's shared summary. ONLY=particles or
# ONLY=timeseries runs one half.
set -u
B=${1:-target/release/vizdeck}
N=${2:-1048576}
F=${3:-600}
UPLOAD=${UPLOAD:-host-import}
if ls .gl/*.deb >/dev/null 2>&1 && ! ldconfig -p | grep -q libvulkan.so.1; then
  for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
fi
S=/tmp/vizdeck-h200-$$.sock
nvidia-smi --query-gpu=name,driver_version,uuid --format=csv,noheader
python3 -c "import cupy; print('cupy', cupy.__version__, 'CUDA runtime', cupy.cuda.runtime.runtimeGetVersion())"
one() {
  rm -f "$S"
  "$B" --headless --no-settings --backend vulkan --scene particles --particles "$N" \
    --share "$S" --frames 100000000 --size 1920x1080 --upload-strategy "$UPLOAD" \
    --report /tmp/vizdeck-h200-$$-$1.json > /tmp/vizdeck-h200-$$.log 2>&1 &
  VZ=$!
  for _ in $(seq 200); do [ -S "$S" ] && break; sleep 0.1; done
  [ -S "$S" ] || { echo "vizdeck did not listen:"; tail -20 /tmp/vizdeck-h200-$$.log; kill $VZ; return 1; }
  python3 clients/python/examples/nbody_cupy.py "$S" "$F" --via "$1" | tee -a /tmp/vizdeck-h200-$$.lines
  local rc=${PIPESTATUS[0]}
  kill -TERM $VZ; wait $VZ
  grep -E "adapter|particles:|error|Error|refus|import" /tmp/vizdeck-h200-$$.log | tail -8
  python3 - "/tmp/vizdeck-h200-$$-$1.json" <<'PY'
import json, sys
def find(o, k):
    if isinstance(o, dict):
        if k in o: return o[k]
        o = list(o.values())
    if isinstance(o, list):
        for v in o:
            r = find(v, k)
            if r is not None: return r
try:
    r = json.load(open(sys.argv[1]))
    m = find(r, "shared") or {}
    print("vizdeck shared:", {k: m.get(k) for k in ("sync", "frames_shown", "frames_host", "frames_dropped", "host_bytes_uploaded", "given_up", "last_error")})
except Exception as e:
    print("no report:", e)
PY
  return $rc
}
TS_SERIES=${TS_SERIES:-8}
TS_SAMPLES=${TS_SAMPLES:-65536}
ONLY=${ONLY:-all}
timeseries() {
  rm -f "$S"
  "$B" --headless --no-settings --backend vulkan --scene timeseries --share "$S" \
    --share-series "$TS_SERIES" --share-samples "$TS_SAMPLES" --frames 100000000 --size 1920x1080 \
    --report /tmp/vizdeck-h200-$$-ts.json > /tmp/vizdeck-h200-$$.log 2>&1 &
  VZ=$!
  for _ in $(seq 200); do [ -S "$S" ] && break; sleep 0.1; done
  [ -S "$S" ] || { echo "vizdeck did not listen:"; tail -20 /tmp/vizdeck-h200-$$.log; kill $VZ; return 1; }
  python3 clients/python/examples/timeseries_torch.py "$S" "$F" | tee -a /tmp/vizdeck-h200-$$.lines
  local rc=${PIPESTATUS[0]}
  kill -TERM $VZ; wait $VZ
  grep -E "adapter|error|Error|refus" /tmp/vizdeck-h200-$$.log | tail -8
  python3 - "/tmp/vizdeck-h200-$$-ts.json" <<'PY'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
    ts = r.get("scenes", r).get("timeseries") or {}
    m = ts.get("shared") or {}
    print("vizdeck timeseries shared:", {k: m.get(k) for k in ("sync", "series", "samples", "frames_shown", "frames_dropped", "host_bytes_uploaded", "given_up", "last_error")})
    print("vizdeck timeseries view:", ts.get("view"), "points drawn", ts.get("points_drawn"), "raster", ts.get("raster"))
except Exception as e:
    print("no report:", e)
PY
  return $rc
}
RC=0
if [ "$ONLY" != timeseries ]; then
  one device || RC=1
  one host || RC=1
  echo "== issue 18 comparison, N=$N, $F frames =="
  grep "^via" /tmp/vizdeck-h200-$$.lines
fi
if [ "$ONLY" != particles ]; then
  timeseries || RC=1
  echo "== time series, $TS_SERIES x $TS_SAMPLES, $F frames =="
  grep "^timeseries" /tmp/vizdeck-h200-$$.lines
fi
exit $RC
