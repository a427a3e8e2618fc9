#!/usr/bin/env bash
# CPU M4 of 50M float32 values into 2,000 columns: tsdownsample (installed from PyPI into a venv
# under target/) against vizdeck's decimate_m4 (src/series/decimate.rs), same data, same run.
#
#   benches/tsdownsample_ref.sh            # N=50000000 COLS=2000 REPS=7
#   N=10000000 REPS=3 benches/tsdownsample_ref.sh
#
# Prints both timings, the ratio (goal: vizdeck >= 1.0x tsdownsample's speed, single thread
# each) and a cross-check of vizdeck's columns against tsdownsample's selected points.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-50000000}
COLS=${COLS:-2000}
REPS=${REPS:-7}
VENV=${VENV:-target/tsdownsample-venv}
DATA=${DATA:-target/m4-ref-data.f32}

if [ ! -x "$VENV/bin/python" ]; then
    python3 -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install -q --disable-pip-version-check tsdownsample numpy
cargo build --release --quiet -p vizdeck-lab --example m4_compare
PEER=$("$VENV/bin/python" benches/tsdownsample_ref.py --n "$N" --cols "$COLS" --reps "$REPS" --data "$DATA" | tee /dev/stderr | sed -n 's/^TSD_MS=//p')
target/release/examples/m4_compare "$DATA" "$COLS" "$REPS" "$PEER"
rm -f "$DATA" "$DATA.idx"
