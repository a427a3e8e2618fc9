#!/usr/bin/env bash
# A live MQTT chart in a real window (issue 34): a local mosquitto, one message every 50 ms
# (about 20 a second, a sine on `lab/temp`), the time-series scene subscribed at 900×520; after
# 5 s, 20 s of the process's CPU time (/proc/PID/stat) and, from `--report`, the frames that
# began after the window waited (`idle_intervals`: frames drawn on an arrival) and the samples
# ingested. Run under `cargo xtask services --` (Xvfb, lavapipe); give one or more binaries to
# compare them in one command: benches/mqtt_live.sh OLD_BIN NEW_BIN.
set -u
PORT=18839
for BIN in "${@:-target/release/vizdeck}"; do
    mosquitto -p $PORT >/dev/null 2>&1 & MQ=$!
    sleep 0.5
    ( i=0; while true; do
        mosquitto_pub -p $PORT -t lab/temp -m "$(awk -v i=$i 'BEGIN{printf "%.3f", 20+sin(i/10)}')"
        i=$((i+1)); sleep 0.05
    done ) & PUB=$!
    REPORT=$(mktemp --suffix .json)
    "$BIN" --scene timeseries --series-source mqtt://127.0.0.1:$PORT/lab/temp --size 900x520 \
        --report "$REPORT" >/dev/null 2>&1 & APP=$!
    sleep 5
    T0=$(awk '{print $14+$15}' /proc/$APP/stat); W0=$(date +%s.%N)
    sleep 20
    T1=$(awk '{print $14+$15}' /proc/$APP/stat); W1=$(date +%s.%N)
    kill $APP; wait $APP 2>/dev/null
    kill $PUB $MQ 2>/dev/null; wait $MQ 2>/dev/null
    python3 - "$BIN" "$REPORT" "$T0" "$T1" "$W0" "$W1" "$(getconf CLK_TCK)" <<'PY'
import json, sys
b, report, t0, t1, w0, w1, tck = sys.argv[1], sys.argv[2], *map(float, sys.argv[3:])
r = json.load(open(report))
s = r["summary"]
ts = r["scenes"]["timeseries"]
print(f"{b}: CPU {100 * (t1 - t0) / tck / (w1 - w0):.0f} % of a core over 20 s; "
      f"frames after a wait {r['idle_intervals']}, frames drawn back to back {s['frames']} "
      f"({s['duration_s']:.1f} s); samples ingested {ts['points_ingested']}")
PY
    rm -f "$REPORT"
done
