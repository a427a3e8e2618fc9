#!/usr/bin/env bash
# LAZ decode speed: vizdeck's loader (crates/pointcloud/src/file.rs, the `las` crate with its `laz`
# feature) against laspy with lazrs (installed from PyPI into a venv under target/), the same
# file, one thread each, then both on all cores (lazrs's parallel decoder on each side). The file is COPIES copies of tests/data/pointcloud/autzen_trim.laz
# (110,000 points each) written by laspy.
#
#   benches/laz_decode_ref.sh            # COPIES=20 REPS=5 ROUNDS=3 (2.2M points)
#
# Each round times laspy, then vizdeck, on the same file (alternating, so a busy moment of a
# shared machine hits both sides); prints both timings and the ratio per round (goal: vizdeck ≥
# 1.0× laspy's speed).
set -euo pipefail
cd "$(dirname "$0")/.."
COPIES=${COPIES:-20}
REPS=${REPS:-5}
ROUNDS=${ROUNDS:-3}
VENV=${VENV:-target/laspy-venv}
DATA=${DATA:-target/laz-decode-ref.laz}

if [ ! -x "$VENV/bin/python" ]; then
    python3 -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install -q --disable-pip-version-check laspy lazrs numpy
cargo build --release --quiet -p vizdeck-lab --example laz_decode
reuse=()
for round in $(seq "$ROUNDS"); do
    echo "round $round"
    OUT=$("$VENV/bin/python" benches/laz_decode_ref.py --source tests/data/pointcloud/autzen_trim.laz \
        --copies "$COPIES" --reps "$REPS" --data "$DATA" ${reuse[@]+"${reuse[@]}"})
    echo "$OUT"
    PEER=$(echo "$OUT" | sed -n 's/^PEER_MS=//p')
    PEER2=$(echo "$OUT" | sed -n 's/^PEER2_MS=//p')
    reuse=(--reuse)
    target/release/examples/laz_decode "$DATA" "$REPS" "$PEER" "$PEER2"
done
rm -f "$DATA"
