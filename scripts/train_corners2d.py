#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Train the board finder for diagrams, screens and photos of pages (issue #4) and export it to
ONNX for tract (models/corners2d.onnx).

    python3 scripts/train_corners2d.py --data ../shared/data/boards/train/corners-3lc --epochs 20 --steps 80 --seed 1 --threads 2 \
        --init-onnx models/corners3d.onnx --ckpt work-tmp/c2d/c128.pt --onnx models/corners2d.onnx

Same network, targets and contract as models/corners3d.onnx (scripts/train_corners3d.py), at
a quarter of the cost: input float32 [1, 3, 128, 128] RGB 0..1 (`--side`), output [1, 4, 32, 32]:
the outer-corner and lattice logits and the points' offsets. Data: the real photos, scans and screenshots of
`../shared/data/boards/train/corners-3lc` (256 x 256, a board mask each; the corners are the
mask's extreme points, as `examples/locate_eval.rs` takes them). Only the *even* half (by name
order, as locate_eval splits) is used, and of it only three quarters for training: every fourth
even image (`--tune`) is kept apart for choosing how hamle combines this model with its lattice
locator. The odd half, where the held-out labelled boards (datasets/boards-heldout) come from,
is never seen. Starts from the weights of models/corners3d.onnx (`--init-onnx`; batch norms
frozen, as they are folded in the export). Seeded and resumable.
"""
import json
import os
import sys
import time

import numpy as np
import torch
from PIL import Image

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from train_common import arg_parser, freeze_bn, init_from_onnx, resume, save, seed_all  # noqa: E402
import train_corners3d as T3  # noqa: E402
from train_corners3d import CornerNet, evaluate, export, train_epoch  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "..", "shared", "data", "boards", "train", "corners-3lc")
# The check pair's input (committed beside the model): our own bundled sample, not a dataset image.
CHECK = os.path.join(HERE, "..", "samples", "board-page.png")


def mask_corners(mask):
    """The mask's extreme points, as locate_eval takes them: top left (least x + y), top right,
    bottom right, bottom left, pixel edges on the outer side."""
    ys, xs = np.nonzero(mask >= 128)
    if len(xs) == 0:
        return None
    xs, ys = xs.astype(np.float64), ys.astype(np.float64)
    keys = [xs + ys, -(xs - ys), -(xs + ys), xs - ys]
    c = [[xs[np.argmin(k)], ys[np.argmin(k)]] for k in keys]
    c[1][0] += 1
    c[2][0] += 1
    c[2][1] += 1
    c[3][1] += 1
    return np.array(c, np.float64)


def lattice(c):
    """The 81 square corners of the board with corners `c` (TL, TR, BR, BL), row-major, through
    the projective map of the unit square onto them."""
    src = np.array([[0, 0], [8, 0], [8, 8], [0, 8]], np.float64)
    A = []
    for (x, y), (u, v) in zip(src, c):
        A.append([x, y, 1, 0, 0, 0, -u * x, -u * y, -u])
        A.append([0, 0, 0, x, y, 1, -v * x, -v * y, -v])
    H = np.linalg.svd(np.array(A))[2][-1].reshape(3, 3)
    pts = []
    for y in range(9):
        for x in range(9):
            p = H @ np.array([x, y, 1.0])
            pts.append(p[:2] / p[2])
    return np.array(pts, np.float32)


def split():
    """Image names in name order: (train, tune, odd)."""
    names = sorted(os.listdir(os.path.join(DATA, "images")))
    even = names[0::2]
    tune = even[3::4]
    train = [n for i, n in enumerate(even) if i % 4 != 3]
    return train, tune, names[1::2]


def load(names):
    ims, pts, kept = [], [], []
    for n in names:
        stem = os.path.splitext(n)[0]
        m = np.asarray(Image.open(os.path.join(DATA, "masks", stem + ".png")).convert("L"))
        c = mask_corners(m)
        if c is None:
            continue
        im = Image.open(os.path.join(DATA, "images", n)).convert("RGB")
        S = T3.S
        if im.size != (S, S):
            sx, sy = S / im.size[0], S / im.size[1]
            c = c * [sx, sy]
            im = im.resize((S, S), Image.BILINEAR)
        ims.append(np.asarray(im))
        pts.append(lattice(c))
        kept.append(n)
    return np.stack(ims), np.stack(pts), kept


def main():
    ap = arg_parser(20, "work-tmp/c2d/c128.pt", "models/corners2d.onnx", bs=16, lr=1e-3)
    ap.add_argument("--steps", type=int, default=80, help="steps per epoch")
    ap.add_argument("--init-onnx", help="start from an exported CornerNet (batch norms frozen)")
    ap.add_argument("--side", type=int, default=128,
                    help="input side (the maps are a quarter of it); the whole image is resized to it")
    a = ap.parse_args()
    seed_all(a)
    T3.S, T3.R = a.side, a.side // 4
    global DATA
    DATA = a.data[0]
    train, tune, _odd = split()
    ims, pts, _ = load(train)
    vims, vpts, _ = load(tune)
    print(f"{len(ims)} training images, {len(vims)} tuning images (even half)", flush=True)
    model = CornerNet()
    if a.init_onnx:
        init_from_onnx(model, a.init_onnx)
    opt = torch.optim.AdamW(model.parameters(), lr=a.lr, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, a.lr, total_steps=a.epochs * a.steps, pct_start=0.1)
    start, history = resume(model, opt, sched, a.init, a.ckpt)
    if a.init_onnx:
        freeze_bn(model)
    if start == 0:
        acc, dist = evaluate(model, vims, vpts)
        print(f"start: tune corners all within 3 px {acc:.3f}, mean {dist:.2f} px", flush=True)
    g = torch.Generator().manual_seed(a.seed)
    for ep in range(start, a.epochs):
        g.manual_seed(a.seed * 1000 + ep)
        t0 = time.time()
        batches = (torch.randint(len(ims), (a.bs,), generator=g).numpy() for _ in range(a.steps))
        tot = train_epoch(model, opt, sched, ims, pts, batches, g)
        acc, dist = evaluate(model, vims, vpts)
        if a.init_onnx:
            freeze_bn(model)
        history.append({"epoch": ep + 1, "loss": tot / a.steps, "tune_exact4": acc, "tune_dist": dist})
        print(f"epoch {ep + 1}: loss {tot / a.steps:.3f}, tune corners all within 3 px {acc:.3f}, "
              f"mean {dist:.2f} px, {time.time() - t0:.0f} s", flush=True)
        save(model, opt, sched, ep + 1, history, a.ckpt)
        export(model, a.onnx, np.asarray(Image.open(CHECK).convert("RGB").resize((T3.S, T3.S), Image.BILINEAR)))
        if a.init_onnx:
            freeze_bn(model)
    json.dump(history, open(a.ckpt + ".history.json", "w"), indent=1)


if __name__ == "__main__":
    main()
