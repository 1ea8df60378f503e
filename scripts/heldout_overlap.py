#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Do the held-out board photos (datasets/boards-heldout) overlap the real training crops of
squares-3lc (which the square classifier trained on)?

Every labelled piece of the held-out photos is cut from the true board corners (the
corners-3lc mask), and its best match among the training crops is found (32 x 32 grey,
normalised correlation). The same is printed for the squares-3lc validation crops, which the
classifier never trained on: if the held-out pieces were among the training crops, their
best matches would be far closer than those.

Needs numpy and opencv-python (e.g. the chessvision venv of the README).
Usage: python3 scripts/heldout_overlap.py
"""

import glob
import os

import cv2
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "..", "shared", "data", "boards", "train")
LABELS = os.path.join(HERE, "..", "datasets", "boards-heldout", "labels.tsv")
S = 32


def crop_vector(grey):
    return cv2.resize(grey, (S, S), interpolation=cv2.INTER_AREA).astype(np.float32).ravel()


def crops_in(folder):
    """The crops of a squares-3lc folder (one subfolder per class) and their classes."""
    files = sorted(glob.glob(os.path.join(folder, "*", "*.JPG")))
    vectors = np.stack([crop_vector(cv2.imread(f, cv2.IMREAD_GRAYSCALE)) for f in files])
    classes = [os.path.basename(os.path.dirname(f)) for f in files]
    return vectors, classes


def normalised(x):
    x = x - x.mean(1, keepdims=True)
    return x / (np.linalg.norm(x, axis=1, keepdims=True) + 1e-6)


def board_corners(mask):
    """Top-left, top-right, bottom-right, bottom-left corners of a board mask."""
    ys, xs = np.nonzero(mask > 127)
    pts = np.stack([xs, ys], 1).astype(np.float32)
    s, d = pts.sum(1), pts[:, 0] - pts[:, 1]
    return np.float32([pts[s.argmin()], pts[d.argmax()], pts[s.argmax()], pts[d.argmin()]])


def heldout_pieces():
    """One vector per labelled piece of the held-out photos."""
    out = []
    with open(LABELS, encoding="utf-8") as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            name, placement, _set, _how = line.rstrip("\n").split("\t")
            if placement == "-":
                continue
            stem = os.path.splitext(name)[0]
            img = cv2.imread(os.path.join(DATA, "corners-3lc", "images", name), cv2.IMREAD_GRAYSCALE)
            mask = cv2.imread(os.path.join(DATA, "corners-3lc", "masks", stem + ".png"), cv2.IMREAD_GRAYSCALE)
            side = 8 * 64
            h = cv2.getPerspectiveTransform(board_corners(mask), np.float32([[0, 0], [side, 0], [side, side], [0, side]]))
            board = cv2.warpPerspective(img, h, (side, side))
            rows = ["".join("." * int(ch) if ch.isdigit() else ch for ch in r) for r in placement.split("/")]
            for i, row in enumerate(rows):
                for j, ch in enumerate(row):
                    if ch != ".":
                        out.append(crop_vector(board[i * 64:(i + 1) * 64, j * 64:(j + 1) * 64]))
    return np.stack(out)


def main():
    train, _ = crops_in(os.path.join(DATA, "squares-3lc", "training"))
    train = normalised(train)
    val, val_classes = crops_in(os.path.join(DATA, "squares-3lc", "validation"))
    val = normalised(val[np.array([c != "f" for c in val_classes])])  # pieces only
    held = normalised(heldout_pieces())
    for name, x in [("validation (non-empty) vs training", val), ("held-out pieces vs training", held)]:
        best = (x @ train.T).max(1)
        print(f"{name} {len(best)} median {np.median(best):.3f}  >0.95: {100 * (best > 0.95).mean():.1f}%"
              f"  >0.98: {100 * (best > 0.98).mean():.1f}%  >0.99: {100 * (best > 0.99).mean():.1f}%")


if __name__ == "__main__":
    main()
