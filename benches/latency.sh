#!/usr/bin/env bash
# End-to-end spectrogram latency through the real PulseAudio server (issue 3): a 1 kHz tone is
# played into the test sink while vizdeck analyses its monitor (FFT 1024, hop 256, 48 kHz) and
# reports capture→present latency (last, p50, p99 over up to the last 512 columns) and the frame
# breakdown from its per-frame CSV.
#
# Run: cargo build --release && cargo xtask services -- benches/latency.sh [VIZDECK FLAGS...]
# (xtask starts Xvfb and a private PulseAudio with the null sink named in
# VIZDECK_TEST_PULSE_SINK). Default flags: --headless --frames 600 --size 320x200.
set -euo pipefail
: "${VIZDECK_TEST_PULSE_SINK:?run through cargo xtask services (starts PulseAudio)}"
bin=${VIZDECK_BIN:-target/release/vizdeck}
dir=$(mktemp -d)
trap 'kill "${player:-0}" 2>/dev/null || true; rm -rf "$dir"' EXIT
sox -n -r 48000 -c 1 -b 16 "$dir/tone.wav" synth 60 sine 1000 vol 0.5
paplay -d "$VIZDECK_TEST_PULSE_SINK" "$dir/tone.wav" &
player=$!
sleep 0.5
flags=("$@")
[ ${#flags[@]} -gt 0 ] || flags=(--headless --frames 600 --size 320x200)
"$bin" "${flags[@]}" --scene spectrogram --audio default --fft-size 1024 --hop 256 \
  --report "$dir/report.json" --record-stats "$dir/frames.csv" >"$dir/log.txt" 2>&1 ||
  { cat "$dir/log.txt"; exit 1; }
python3 - "$dir/report.json" "$dir/frames.csv" <<'PY'
import csv, json, statistics, sys
r = json.load(open(sys.argv[1]))
m = r["scenes"]["spectrogram"]
lat = m.get("latency_ms") or {}
print(f"adapter: {r['adapter']['name']}; source {m.get('source')} at {m.get('sample_rate')} Hz")
print(f"latency capture->present ms: p50 {lat.get('p50', float('nan')):.2f}, "
      f"p99 {lat.get('p99', float('nan')):.2f}, n {lat.get('n')}")
rows = list(csv.DictReader(open(sys.argv[2])))[50:]
for k in ["MsBetweenPresents", "MsCPUBusy", "MsUI", "MsGPUCompute", "MsGPURender", "MsGPUUI"]:
    v = [float(x[k]) for x in rows if x[k]]
    if v:
        print(f"{k}: median {statistics.median(v):.3f} ms")
PY
