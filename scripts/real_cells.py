#!/usr/bin/env python3
"""Real labelled cells from scoresheets: the cell images `hamle sheet --dump-cells DIR` cut,
paired with the moves of each sheet's NAME.moves.txt, as an .npz like cells_synth.py writes.

    for f in ../shared/data/sheets/dev/*.png; do
        hamle sheet "$f" --dump-cells work-tmp/devcells --format json > /dev/null; done
    python3 scripts/real_cells.py --cells work-tmp/devcells --labels ../shared/data/sheets/dev \
        --out work-tmp/cells/dev-even.npz --part even

`--part even|odd|all` keeps the sheets at even or odd positions of the sorted list (so a model
fine-tuned on one half is reported on the other).
"""
import argparse
import glob
import os
import re

import numpy as np
from PIL import Image

from cells_synth import ALPHABET, H, W


def moves_of(path):
    """(number, side) → text as written, from a `1. e4 e5` per line label file."""
    out = {}
    text = open(path, encoding="utf-8").read()
    toks = re.sub(r"\{[^}]*\}", " ", text).split()
    n, side = 0, 0
    for t in toks:
        m = re.fullmatch(r"(\d+)\.(\.\.)?(.*)", t)
        if m:
            n, side = int(m.group(1)), 1 if m.group(2) else 0
            t = m.group(3)
            if not t:
                continue
        if t in ("1-0", "0-1", "1/2-1/2", "*"):
            continue
        out[(n, side)] = t
        side = 1 - side
        if side == 0:
            n += 1
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cells", required=True)
    ap.add_argument("--labels", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--part", choices=["even", "odd", "all"], default="all")
    ap.add_argument("--view", choices=["cut", "zoom"], default="cut",
                    help="zoom: a cell's zoomed view (NAME-zoom.png) where hamle made one")
    a = ap.parse_args()
    stems = sorted(os.path.basename(p)[: -len(".moves.txt")] for p in glob.glob(os.path.join(a.labels, "*.moves.txt")))
    if a.part != "all":
        stems = stems[0::2] if a.part == "even" else stems[1::2]
    images, labels, names = [], [], []
    for stem in stems:
        moves = moves_of(os.path.join(a.labels, stem + ".moves.txt"))
        for (n, side), text in sorted(moves.items()):
            p = os.path.join(a.cells, f"{stem}-{n:03d}{'wb'[side]}.png")
            z = p[:-len(".png")] + "-zoom.png"
            if a.view == "zoom" and os.path.exists(z):
                p = z
            if not os.path.exists(p):
                continue
            if not all(c in ALPHABET for c in text):
                continue
            img = Image.open(p).convert("L")
            if img.size != (W, H):
                img = img.resize((W, H))
            images.append(np.asarray(img, np.uint8))
            labels.append(text)
            names.append(f"{stem}-{n}{'wb'[side]}")
    np.savez_compressed(a.out, images=np.stack(images), labels=np.array(labels, dtype=object),
                        names=np.array(names, dtype=object), allow_pickle=True)
    print(f"{len(labels)} cells from {len(stems)} sheets → {a.out}")


if __name__ == "__main__":
    main()
