#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Probe (issue #6, models/pieces3d.md, session 48): where the piece model's crop readings go
wrong on renders it never trained on. Reads the npz of scripts/dump_piece_logits.py (the
shipped model's mirror-averaged logits of a `hamle eval dump-pieces` folder) and the renders'
NAME.json (camera matrix `P`, elevation, set), and splits the occupied squares of the
jittered copies (NAME-1) by camera elevation, set, kind, distance from the camera, and
whether a piece nearer the camera stands in front of the square's piece in the image.

    python3 scripts/dump_piece_logits.py work-tmp/r3d/pieces-t46 work-tmp/r3d/pool46.npz
    python3 scripts/probe_piece_errors.py work-tmp/r3d/pool46.npz work-tmp/r3d/pieces-t46 work-tmp/r3d/train46
"""
import glob
import json
import os
import sys
from collections import defaultdict

import numpy as np


def project(P, x, y, z):
    u = P @ np.array([x, y, z, 1.0])
    return u[:2] / u[2], u[2]


def main():
    z = np.load(sys.argv[1])
    names = sorted(glob.glob(os.path.join(sys.argv[2], "*.png")))
    pred, Y = z["L"].argmax(-1), z["Y"]
    assert len(names) == len(Y)
    groups = defaultdict(lambda: [0, 0])
    for name, p, y in zip(names, pred, Y):
        stem = os.path.basename(name)[:-4]
        if not stem.endswith("-1"):
            continue
        meta = json.load(open(os.path.join(sys.argv[3], stem.rsplit("-", 1)[0] + ".json")))
        P = np.array(meta["P"])
        kh = meta.get("king_height", 1.5)
        # square i of the mosaic: FEN order, a8 first; board coordinates: file, rank, up
        sq = [(i % 8 + 0.5, 7 - i // 8 + 0.5) for i in range(64)]
        base = [project(P, fx, fy, 0.0) for fx, fy in sq]
        top = [project(P, fx, fy, 0.8 * kh)[0] for fx, fy in sq]
        mid = [project(P, fx, fy, 0.35 * kh)[0] for fx, fy in sq]
        depth = np.array([d for _, d in base])
        order = np.argsort(np.argsort(depth))  # 0 = nearest the camera
        near = (order // 8).astype(int)
        side = np.linalg.norm(project(P, 4.5, 4, 0)[0] - project(P, 3.5, 4, 0)[0])
        el = meta["elevation"]
        elb = f"elevation {int(el // 15 * 15)}-{int(el // 15 * 15 + 15)}"
        for i in range(64):
            if y[i] == 0:
                continue
            hidden = False
            for t in range(64):
                if t == i or y[t] == 0 or depth[t] >= depth[i]:
                    continue
                (bx, by), ty = base[t][0], top[t][1]
                if abs(mid[i][0] - bx) < 0.45 * side and ty <= mid[i][1] <= by:
                    hidden = True
                    break
            ok = int(p[i] == y[i])
            kind = "-PNBRQK"[(y[i] - 1) % 6 + 1]
            for key in ["all", elb, f"set {meta['set']}", f"kind {kind}",
                        f"distance rank {near[i] // 2 * 2}-{near[i] // 2 * 2 + 1} (0 nearest)",
                        "a piece in front" if hidden else "nothing in front"]:
                groups[key][0] += ok
                groups[key][1] += 1
    for key in sorted(groups):
        right, n = groups[key]
        print(f"{key:40s} {right:5d}/{n:5d} = {right / n * 100:5.1f} %")


if __name__ == "__main__":
    main()
