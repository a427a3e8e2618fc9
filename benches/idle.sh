#!/usr/bin/env bash
# Idle cost of the window (issue 13): vizdeck in a 1280×720 window on Xvfb (lavapipe) with the
# spectrogram on the synthetic signal; CPU time of the process over 10 s while it runs, then the
# view is frozen (Space, as a user would) and the CPU time over the next 30 s is measured, from
# /proc/PID/stat (utime + stime, every thread: lavapipe's, audio, egui).
#
# Run: cargo build --release && cargo xtask services -- benches/idle.sh [SECONDS]
#      SCENE=particles benches/idle.sh ...   (Space pauses the particle simulation)
set -euo pipefail
: "${DISPLAY:?run through cargo xtask services (starts Xvfb)}"
bin=${VIZDECK_BIN:-target/release/vizdeck}
idle_s=${1:-30}
scene=${SCENE:-spectrogram}
RUST_LOG=${RUST_LOG:-vizdeck=debug} "$bin" --scene "$scene" --audio synthetic --size 1280x720 >/tmp/vizdeck-idle.log 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null || true' EXIT
cpu_ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
hz=$(getconf CLK_TCK)
sleep 5 # start-up
t0=$(cpu_ticks); sleep 10; t1=$(cpu_ticks)
running=$(awk -v a="$t0" -v b="$t1" -v hz="$hz" 'BEGIN { printf "%.1f", (b - a) / hz / 10 * 100 }')
win=$(xdotool search --sync --onlyvisible --pid "$pid" | head -1)
xdotool mousemove --window "$win" 900 400
xdotool windowfocus --sync "$win" 2>/dev/null || true; xdotool click 1; sleep 0.5; xdotool keydown space; sleep 0.1; xdotool keyup space
sleep 2 # the freeze takes effect, toasts end
t2=$(cpu_ticks); sleep "$idle_s"; t3=$(cpu_ticks)
idle=$(awk -v a="$t2" -v b="$t3" -v hz="$hz" -v s="$idle_s" 'BEGIN { printf "%.2f", (b - a) / hz / s * 100 }')
echo "$scene running (10 s): ${running} % of one core"
echo "paused (${idle_s} s): ${idle} % of one core ($((t3 - t2)) ticks of 1/${hz} s)"
