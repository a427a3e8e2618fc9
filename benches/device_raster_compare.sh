#!/usr/bin/env bash
# Point-cloud rasterizer, two binaries on one card in one command (the device machine): the Vulkan
# loader debs in .gl/ unpacked, .fz/vizdeck-old.xz and .fz/vizdeck-new.xz (stripped, xz) unpacked,
# then `vizdeck bench --kernels pointcloud` at 10^8 and 10^9 points, 1920x1080, alternating, $REPS rounds (default 3);
# prints the data row of each table. Both binaries there predate the lab (issue 35); a later
# binary's table is `vizdeck-lab --kernels pointcloud`, the same arguments. Run: bash benches/device_raster_compare.sh (carry .gl and .fz).
set -u
for f in .gl/*.deb; do dpkg -x $f / >/dev/null 2>&1; done; ldconfig
for b in old new; do xz -dc .fz/vizdeck-$b.xz > .fz/vizdeck-$b; chmod +x .fz/vizdeck-$b; done
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
echo "binary rep | points | compute 64-bit ms | M/s | compute 32-bit ms | M/s | primitives ms | M/s | 64/prim | 32/prim | quantized ms | M/s | quantized+filter ms | ..."
for rep in $(seq 1 ${REPS:-3}); do for b in old new; do for n in 100000000 1000000000; do
  printf "%s %s " $b $rep
  timeout 120 .fz/vizdeck-$b bench --backend vulkan --scenes none --kernels pointcloud --pointcloud-counts $n --size 1920x1080 2>/dev/null | grep -E "^\| *[0-9]" | head -1
done; done; done
