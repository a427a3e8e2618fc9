#!/usr/bin/env python3
"""Reference values of the committed point-cloud files, read by laspy (with lazrs for LAZ), an
independent reader: tests/pointcloud_files.rs compares vizdeck's loader against them.

    python3 -m venv /tmp/v && /tmp/v/bin/pip install laspy lazrs numpy
    /tmp/v/bin/python tests/data/pointcloud/make_reference.py > tests/data/pointcloud/reference.json
"""
import json
import pathlib
import sys

import laspy
import numpy as np

here = pathlib.Path(__file__).parent
out = {}
for path in sorted(here.glob("*.la[sz]")):
    try:
        las = laspy.read(path)
    except Exception as e:  # noqa: BLE001 - the reference records the failure
        out[path.name] = {"error": str(e)}
        continue
    h = las.header
    pts = las.points
    raw = [np.asarray(getattr(las, d), dtype=np.int64) for d in "XYZ"]
    scales = [float(v) for v in h.scales]
    offsets = [float(v) for v in h.offsets]

    def coord(k, integer):
        # The LAS formula, integer * scale + offset, in Python floats (numpy's bulk scaling of
        # las.x may round the last bit differently).
        return float(int(integer)) * scales[k] + offsets[k]

    classes, counts = np.unique(np.asarray(las.classification), return_counts=True)
    out[path.name] = {
        "version": f"{h.version.major}.{h.version.minor}",
        "point_format": int(h.point_format.id),
        "header_point_count": int(h.point_count),
        "points": int(len(pts)),
        "scale": [float(v) for v in h.scales],
        "offset": [float(v) for v in h.offsets],
        "header_min": [float(v) for v in h.mins],
        "header_max": [float(v) for v in h.maxs],
        # Bounds of the points (scales are positive: the extreme integers give them).
        "min": [coord(k, raw[k].min()) for k in range(3)] if len(pts) else None,
        "max": [coord(k, raw[k].max()) for k in range(3)] if len(pts) else None,
        # Sums of the raw integer coordinates: every point read exactly.
        "sum_raw": [int(r.sum()) for r in raw],
        "class_counts": {str(int(c)): int(n) for c, n in zip(classes, counts)},
        "intensity_sum": int(np.asarray(las.intensity, dtype=np.int64).sum()),
        "first": {
            "x": coord(0, raw[0][0]),
            "y": coord(1, raw[1][0]),
            "z": coord(2, raw[2][0]),
            "intensity": int(las.intensity[0]),
            "classification": int(las.classification[0]),
            "return_number": int(las.return_number[0]),
        }
        if len(pts)
        else None,
    }
json.dump(out, sys.stdout, indent=1, sort_keys=True)
sys.stdout.write("\n")
