#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""How many pixels a square spans (the playing area's perimeter / 32), in renders and in
photos of sets at hamle's working size for sets (the long side brought down to
`board::physical::WORK_SIDE` = 1280 px): the renders' from their NAME.json corners, the
photos' from the corners `hamle board --kind physical --format json` finds.

    python3 scripts/square_sizes.py --renders work-tmp/r3d/val work-tmp/r3d/test \\
        --photos work-tmp/h3d19 --hamle target/release/hamle
"""
import argparse
import glob
import json
import math
import os
import subprocess

import numpy as np
from PIL import Image

WORK_SIDE = 1280


def side(c):
    return sum(math.dist(c[i], c[(i + 1) % 4]) for i in range(4)) / 32


def report(name, s):
    s = np.array(s)
    print(f"{name}: {len(s)} images, square side median {np.median(s):.1f} px, "
          f"10 % {np.percentile(s, 10):.1f}, 90 % {np.percentile(s, 90):.1f}, max {s.max():.1f}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--renders", nargs="*", default=[])
    ap.add_argument("--photos", nargs="*", default=[])
    ap.add_argument("--hamle", default="target/release/hamle")
    args = ap.parse_args()
    for d in args.renders:
        report(d, [side(json.load(open(f))["corners"]) for f in sorted(glob.glob(os.path.join(d, "*.json")))])
    for d in args.photos:
        s = []
        for f in sorted(glob.glob(os.path.join(d, "*.jpg"))):
            out = subprocess.run([args.hamle, "board", f, "--kind", "physical", "--format", "json"],
                                 capture_output=True, text=True)
            if out.returncode != 0:
                continue
            w, h = Image.open(f).size
            s.append(side(json.loads(out.stdout)["corners"]) * min(1.0, WORK_SIDE / max(w, h)))
        report(d, s)


if __name__ == "__main__":
    main()
