#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Baseline: the `chessvision` package (PyPI, GPL-3.0; bundles an ONNX square classifier run
with OpenCV's dnn module, fully offline) on a labelled folder of board images, reported like
`hamle eval boards DIR` so the two can be read side by side.

For every image NAME.png|jpg|jpeg in DIR with NAME.fen beside it (the FEN placement field):

 1. `chessvision.BoardDetector().detect(path)` locates the board(s) itself (Otsu/Canny contours,
    perspective dewarp of skewed quads, 8x8 checker test, full-image fallback only for square
    images). If it finds several, the first in its own order (top to bottom, left to right, i.e.
    what its CLI prints as "Board #1") is taken. If it finds none, the image counts as read with
    every square wrong and is listed as a failure (its CLI stops with "No chessboard detected").
 2. `chessvision.BoardPredictor().predict(board, orientation)` cuts the board into 8x8 equal
    squares and classifies them (13 classes).
 3. The placement is compared with the label square by square, with the same conventions as
    `hamle eval boards` (see ../shared/data/README.md):
    - `photo-*` labels are the placement as displayed (top row of the image = first FEN rank), so
      these are predicted with orientation=WHITE, which makes chessvision's FEN exactly the grid
      as seen;
    - all other labels are canonical (White at the bottom), so these are predicted with
      chessvision's default orientation=AUTO (it turns the board 180 degrees when the white
      pieces sit higher in the image than the black ones).
    "Exact up to orientation" also accepts the prediction turned 180 degrees, so orientation
    errors show apart from reading errors. "Squares right" is counted as-is (like hamle).

Seconds per image are wall time of detect + predict for one image (including decoding the file),
one after another, on one thread (OMP_NUM_THREADS=1 etc. are set before numpy/cv2 are imported
and cv2.setNumThreads(1)); the model load and one warm-up forward pass on a blank dummy board
are done before the first image and are excluded.

Needs: pip install chessvision   (tested with 0.13.1; pulls numpy, opencv-python-headless,
pillow, python-chess, pypdfium2, typer)

Usage: python3 scripts/baseline_chessvision.py ../shared/data/boards/dev
       python3 scripts/baseline_chessvision.py ../shared/data/boards/dev --json out.json
"""

from __future__ import annotations

import os

for _v in (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "NUMEXPR_NUM_THREADS",
    "OPENCV_FOR_THREADS_NUM",
):
    os.environ.setdefault(_v, "1")

import argparse
import json
import sys
import time
from pathlib import Path

IMAGE_EXTS = ("png", "jpg", "jpeg", "PNG", "JPG", "JPEG")


def expand(placement: str) -> str:
    """FEN placement -> 64 chars, rank 8 first, '.' for empty."""
    rows = placement.strip().split()[0].split("/")
    if len(rows) != 8:
        raise ValueError(f"not a FEN placement: {placement!r}")
    out = []
    for row in rows:
        r = "".join("." * int(c) if c.isdigit() else c for c in row)
        if len(r) != 8:
            raise ValueError(f"not a FEN placement: {placement!r}")
        out.append(r)
    return "".join(out)


def compress(grid: str) -> str:
    rows = []
    for i in range(8):
        r, n = "", 0
        for c in grid[8 * i : 8 * i + 8]:
            if c == ".":
                n += 1
            else:
                r += (str(n) if n else "") + c
                n = 0
        rows.append(r + (str(n) if n else ""))
    return "/".join(rows)


def same(a: str, b: str) -> int:
    return sum(x == y for x, y in zip(a, b))


def labelled(folder: Path) -> list[tuple[Path, Path]]:
    pairs = []
    for fen in sorted(folder.glob("*.fen")):
        for ext in IMAGE_EXTS:
            img = fen.with_suffix("." + ext)
            if img.is_file():
                pairs.append((img, fen))
                break
    return pairs


def figures(rows: list[dict]) -> dict:
    n = len(rows)
    secs = [r["seconds"] for r in rows]
    sq = sum(r["right"] for r in rows)
    return {
        "images": n,
        "exact": sum(r["right"] == 64 for r in rows),
        "exact_up_to_orientation": sum(r["right_any_orientation"] == 64 for r in rows),
        "squares": 64 * n,
        "squares_right": sq,
        "square_accuracy": sq / max(64 * n, 1),
        "failures": sum(r["error"] is not None for r in rows),
        "mean_seconds": sum(secs) / max(n, 1),
        "max_seconds": max(secs, default=0.0),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir", type=Path, help="folder of NAME.png|jpg beside NAME.fen")
    ap.add_argument("--json", type=Path, help="also write the full report here")
    args = ap.parse_args()

    try:
        import cv2
        import numpy as np
        from PIL import Image

        import chessvision
        from chessvision import BoardDetector, BoardPredictor, Orientation
    except ImportError as e:
        print(f"chessvision not importable ({e}); pip install chessvision", file=sys.stderr)
        return 2
    cv2.setNumThreads(1)

    pairs = labelled(args.dir)
    if not pairs:
        print(f"no labelled boards in {args.dir}", file=sys.stderr)
        return 2

    # Model load + one warm-up forward pass (not timed per image).
    t0 = time.perf_counter()
    detector = BoardDetector()
    predictor = BoardPredictor()
    dummy = np.zeros((512, 512, 3), np.uint8)
    dummy[(np.indices((512, 512)).sum(0) // 64) % 2 == 0] = 200
    predictor.predict(Image.fromarray(dummy))
    load_s = time.perf_counter() - t0

    rows = []
    for img, fen in pairs:
        want = expand(fen.read_text())
        name = img.name
        prefix = name.split("-")[0]
        orient = Orientation.WHITE if prefix == "photo" else Orientation.AUTO
        row = {
            "name": name,
            "prefix": prefix,
            "label": compress(want),
            "read": None,
            "right": 0,
            "right_any_orientation": 0,
            "boards_detected": 0,
            "any_detection_exact_up_to_orientation": False,
            "orientation": None,
            "confidence": None,
            "seconds": 0.0,
            "error": None,
        }
        t = time.perf_counter()
        try:
            boards = detector.detect(img)
            row["boards_detected"] = len(boards)
            if not boards:
                raise RuntimeError("no chessboard detected")
            pred = predictor.predict(boards[0], orientation=orient)
            row["seconds"] = time.perf_counter() - t
            got = expand(pred.fen)
            row["read"] = compress(got)
            row["right"] = same(got, want)
            row["right_any_orientation"] = max(row["right"], same(got[::-1], want))
            row["orientation"] = str(pred.orientation)
            row["confidence"] = pred.confidence
            # Diagnostic only (untimed): would any other detected board have matched?
            hit = row["right_any_orientation"] == 64
            for b in boards[1:]:
                if hit:
                    break
                g = expand(predictor.predict(b, orientation=orient).fen)
                hit = want in (g, g[::-1])
            row["any_detection_exact_up_to_orientation"] = hit
        except Exception as e:  # noqa: BLE001 - any failure counts as a wrong board
            row["seconds"] = time.perf_counter() - t
            row["error"] = f"{type(e).__name__}: {e}"
        rows.append(row)

    print(
        f"chessvision {chessvision.__version__}, opencv {cv2.__version__}, numpy {np.__version__}; "
        f"cv2 threads {cv2.getNumThreads()}, OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}; "
        f"model load + warm-up {load_s:.2f} s (excluded)"
    )
    print()
    print("image                       right  any-orient  dets  orient  confidence  seconds  read / problem")
    for r in rows:
        conf = f"{r['confidence']:.3f}" if r["confidence"] is not None else "-"
        tail = r["error"] if r["error"] else r["read"]
        print(
            f"{r['name']:<27} {r['right']:>5}  {r['right_any_orientation']:>10}  "
            f"{r['boards_detected']:>4}  {r['orientation'] or '-':<6}  {conf:>10}  "
            f"{r['seconds']:>7.3f}  {tail}"
        )
    print()
    groups = {}
    for p in sorted({r["prefix"] for r in rows}):
        groups[p] = figures([r for r in rows if r["prefix"] == p])
    groups["all"] = figures(rows)
    print(
        "group   images  exact          exact up to orientation  squares right     "
        "no board  seconds mean/max"
    )
    for p, g in groups.items():
        n = max(g["images"], 1)
        print(
            f"{p:<7} {g['images']:>6}  {g['exact']:>3} ({100 * g['exact'] / n:5.1f}%)   "
            f"{g['exact_up_to_orientation']:>3} ({100 * g['exact_up_to_orientation'] / n:5.1f}%)"
            f"              {g['squares_right']:>4}/{g['squares']:<5} ({100 * g['square_accuracy']:5.1f}%)"
            f"  {g['failures']:>8}  {g['mean_seconds']:.3f}/{g['max_seconds']:.3f}"
        )
    any_det = sum(r["any_detection_exact_up_to_orientation"] for r in rows)
    print()
    print(
        f"(diagnostic: {any_det}/{len(rows)} exact up to orientation if the best of all detected "
        f"boards were taken instead of the first)"
    )
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "chessvision": chessvision.__version__,
                    "load_seconds": load_s,
                    "groups": groups,
                    "outcomes": rows,
                },
                indent=1,
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
