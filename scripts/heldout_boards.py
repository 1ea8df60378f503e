#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Builds the held-out board folder for `hamle eval boards` from datasets/boards-heldout.

The labels (`datasets/boards-heldout/labels.tsv`) are ours: placements typed by hand for 32
images of `../shared/data/boards/train/corners-3lc/images` (every tenth image of the half of
corners-3lc that the locator was never tuned on; see datasets/boards-heldout/README.md). The
images themselves stay in ../shared/data (no license to copy them): this script links them
into OUT as `photo-NAME.jpg` beside `photo-NAME.fen`, so that `hamle eval boards OUT` (and
`scripts/baseline_chessvision.py OUT`) compare each placement as displayed, like the dev
set's `photo-*` images. Excluded rows (placement `-`) are left out.

Usage: python3 scripts/heldout_boards.py OUT [--set 1|2|3|4|5|6|all] [--images DIR] [--labels FILE]
       hamle eval boards OUT
`--labels datasets/boards-finetune/labels.tsv --set A|B|all` links the boards typed for
fine-tuning the square classifier instead (from the even half of corners-3lc; not held out).
Exits with status 2 (and a message) when the images are missing.
"""

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
LABELS = os.path.join(HERE, "..", "datasets", "boards-heldout", "labels.tsv")
IMAGES = os.path.join(HERE, "..", "..", "shared", "data", "boards", "train", "corners-3lc", "images")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", help="folder to create (emptied of earlier photo-* links first)")
    ap.add_argument("--images", default=IMAGES, help="the corners-3lc images folder")
    ap.add_argument("--set", default="all",
                    help="which labelled set: 1 to 6 (typed in that order), or all; "
                         "A or B with --labels datasets/boards-finetune/labels.tsv")
    ap.add_argument("--labels", default=LABELS, help="the labels file (default: the held-out boards)")
    ap.add_argument("--prefix", default="photo",
                    help="name prefix: `photo` (compared as displayed by hamle eval boards) or another "
                         "(compared with the canonical FEN), e.g. `set` for datasets/boards-3d-real")
    args = ap.parse_args()
    if not os.path.isdir(args.images):
        print(f"no images at {args.images} (../shared/data is missing)", file=sys.stderr)
        return 2
    os.makedirs(args.out, exist_ok=True)
    for old in os.listdir(args.out):
        if old.startswith(args.prefix + "-"):
            os.remove(os.path.join(args.out, old))
    n = 0
    with open(args.labels, encoding="utf-8") as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            name, placement, which = line.rstrip("\n").split("\t")[:3]
            if placement == "-" or args.set not in ("all", which):
                continue
            src = os.path.abspath(os.path.join(args.images, name))
            if not os.path.isfile(src):
                print(f"missing image {src}", file=sys.stderr)
                return 2
            stem = os.path.splitext(name)[0]
            os.symlink(src, os.path.join(args.out, f"{args.prefix}-{stem}.jpg"))
            with open(os.path.join(args.out, f"{args.prefix}-{stem}.fen"), "w", encoding="utf-8") as g:
                g.write(placement + "\n")
            n += 1
    print(f"{n} labelled images linked into {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
