#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""How honest `hamle board`'s confidences are on labelled folders (`NAME.jpg|png` beside
`NAME.fen`): square confidences against squares right and board confidences against boards
exact (expected calibration error, 10 bins), and with `--checker` each board's light/dark
contrast in standard errors as `board::physical::checker_contrast` measures it (the four
points near each square's corners, the median of each square, Welch's t of the two colours).

    python3 scripts/board_calibration.py --kind physical work-tmp/r3d/test work-tmp/h3d
    python3 scripts/board_calibration.py --kind physical --checker IMAGES...
"""
import argparse
import glob
import json
import os
import subprocess

import numpy as np
from PIL import Image


def expand(placement):
    out = []
    for row in placement.split("/"):
        for c in row:
            out += [None] * int(c) if c.isdigit() else [c]
    return out


def ece(conf, right, bins=10):
    conf, right = np.asarray(conf), np.asarray(right, float)
    e = 0.0
    for b in range(bins):
        m = (conf > b / bins) & (conf <= (b + 1) / bins) if b else (conf <= 1 / bins)
        if m.any():
            e += m.mean() * abs(conf[m].mean() - right[m].mean())
    return e


def readings(exe, kind, images):
    out = subprocess.run([exe, "board", "--kind", kind, "--format", "json", *images],
                         capture_output=True, text=True)
    for line in out.stderr.splitlines():
        print("  ", line)
    return [json.loads(l) for l in out.stdout.splitlines()]


def homography(src, dst):
    a = []
    for (x, y), (u, v) in zip(src, dst):
        a += [[x, y, 1, 0, 0, 0, -u * x, -u * y, -u], [0, 0, 0, x, y, 1, -v * x, -v * y, -v]]
    return np.linalg.svd(np.array(a))[2][-1].reshape(3, 3)


def checker_t(path, corners):
    g = np.asarray(Image.open(path).convert("L"), float) / 255
    a8, h8, h1, a1 = corners
    h = homography([(0, 0), (8, 0), (8, 8), (0, 8)], [a1, h1, h8, a8])
    even, odd = [], []
    for r in range(8):
        for f in range(8):
            v = []
            for u, w in [(.15, .15), (.85, .15), (.85, .85), (.15, .85)]:
                p = h @ [f + u, r + w, 1]
                x, y = p[0] / p[2], p[1] / p[2]
                if 0 <= x < g.shape[1] and 0 <= y < g.shape[0]:
                    v.append(g[int(y), int(x)])
            if len(v) >= 2:
                (even if (f + r) % 2 == 0 else odd).append(np.median(v))
    even, odd = np.array(even), np.array(odd)
    se = np.sqrt(even.var(ddof=1) / len(even) + odd.var(ddof=1) / len(odd))
    return abs(odd.mean() - even.mean()) / max(se, 1e-4)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("paths", nargs="+", help="labelled folders, or images with --checker")
    ap.add_argument("--kind", default="physical")
    ap.add_argument("--exe", default="target/release/hamle")
    ap.add_argument("--checker", action="store_true")
    args = ap.parse_args()
    if args.checker:
        rs = readings(args.exe, args.kind, args.paths)
        ts = sorted((checker_t(r["file"], r["corners"]), r["file"]) for r in rs)
        for t, f in ts[:5]:
            print(f"{t:7.2f} {f}")
        print(f"{len(ts)} boards found; contrast min {ts[0][0]:.2f}" if ts else "no boards found")
        return
    sc, sr, bc, br = [], [], [], []
    for d in args.paths:
        imgs = sorted(glob.glob(os.path.join(d, "*.jpg")) + glob.glob(os.path.join(d, "*.png")))
        imgs = [i for i in imgs if os.path.exists(os.path.splitext(i)[0] + ".fen")]
        for r in readings(args.exe, args.kind, imgs):
            want = open(os.path.splitext(r["file"])[0] + ".fen").read().split()[0]
            sq = {s["square"]: s for s in r["squares"]}
            for i, p in enumerate(expand(want)):
                s = sq["abcdefgh"[i % 8] + str(8 - i // 8)]
                sc.append(s["confidence"])
                sr.append(s["piece"] == p)
            bc.append(r["confidence"])
            br.append(r["placement"] == want)
    sc, sr, bc, br = map(np.asarray, (sc, sr, bc, br))
    print(f"{len(bc)} boards: squares {sr.mean() * 100:.2f} % right, ECE {ece(sc, sr):.4f}; "
          f"boards exact {br.mean() * 100:.1f} %, mean board confidence {bc.mean():.3f}, "
          f"ECE {ece(bc, br):.4f}")
    for lo, hi in [(0, .5), (.5, .8), (.8, .9), (.9, .95), (.95, .99), (.99, 1.01)]:
        m = (sc >= lo) & (sc < hi)
        if m.any():
            print(f"  squares at [{lo}, {min(hi, 1)}): {m.sum():5d}, right {sr[m].mean():.3f}, "
                  f"mean confidence {sc[m].mean():.3f}")


if __name__ == "__main__":
    main()
