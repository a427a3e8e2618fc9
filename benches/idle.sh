#!/usr/bin/env bash
# Idle cost of the window (issues 13, 16): vizdeck in a 1280×720 window on Xvfb (lavapipe) in a
# state that needs no frames, and the CPU time of the process over SECONDS (default 30) from
# /proc/PID/stat (utime + stime, every thread: lavapipe's, audio, egui).
#
# SCENE picks the state (Deck::next_redraw draws only while the scene is `animating`):
#   spectrogram (default)  a 20 s sound file (made with sox): analysed whole when it opens, then
#                          it stands still; measured from 10 s after start.
#   particles              the simulation runs 10 s (measured too), then Space pauses it.
# (A frozen spectrogram of live or synthetic input does not idle: freezing stops the view, and
# the analysis goes on.)
#
# Run: cargo build --release && cargo xtask services -- benches/idle.sh [SECONDS]
#      cargo xtask services -- env SCENE=particles benches/idle.sh [SECONDS]
set -euo pipefail
: "${DISPLAY:?run through cargo xtask services (starts Xvfb)}"
bin=${VIZDECK_BIN:-target/release/vizdeck}
idle_s=${1:-30}
scene=${SCENE:-spectrogram}
work=$(mktemp -d)
case "$scene" in
spectrogram)
    wav="$work/idle.wav"
    sox -n -r 48000 -c 1 -b 16 "$wav" synth 20 sine 100:8000 gain -6
    args=(--scene spectrogram --audio-file "$wav")
    ;;
particles) args=(--scene particles) ;;
*)
    echo "SCENE: spectrogram or particles" >&2
    exit 2
    ;;
esac
RUST_LOG=${RUST_LOG:-vizdeck=debug} "$bin" --no-settings "${args[@]}" --size 1280x720 \
    >/tmp/vizdeck-idle.log 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT
cpu_ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
hz=$(getconf CLK_TCK)
sleep 5 # start-up
t0=$(cpu_ticks)
sleep 10
t1=$(cpu_ticks)
first=$(awk -v a="$t0" -v b="$t1" -v hz="$hz" 'BEGIN { printf "%.1f", (b - a) / hz / 10 * 100 }')
if [ "$scene" = particles ]; then
    echo "particles running (10 s): ${first} % of one core"
    win=$(xdotool search --sync --onlyvisible --pid "$pid" | head -1)
    xdotool mousemove --window "$win" 900 400
    xdotool windowfocus --sync "$win" 2>/dev/null || true
    xdotool click 1
    sleep 0.5
    xdotool keydown space
    sleep 0.1
    xdotool keyup space
    sleep 2 # the pause takes effect, toasts end
    state="paused"
else
    echo "spectrogram of a 20 s file, 5–15 s after start (analysed, standing still): ${first} % of one core"
    state="file analysed"
fi
t2=$(cpu_ticks)
sleep "$idle_s"
t3=$(cpu_ticks)
idle=$(awk -v a="$t2" -v b="$t3" -v hz="$hz" -v s="$idle_s" 'BEGIN { printf "%.2f", (b - a) / hz / s * 100 }')
echo "$state (${idle_s} s): ${idle} % of one core ($((t3 - t2)) ticks of 1/${hz} s)"
