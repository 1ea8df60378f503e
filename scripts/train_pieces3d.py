#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Train the piece classifier for photos of physical sets (issue #6) and export it to ONNX for
tract (models/pieces3d.onnx).

The crops are cut by hamle itself, so training sees exactly what the reader sees: for each
render of scripts/render_3d.py, `hamle eval dump-pieces` takes the true board corners (moved by
a random error, as the corner model's would be), builds the camera and writes one mosaic PNG of
the 64 boxes (8 x 8 tiles of 32 x 64, rank 8 at the top, the a-file at the left):

    target/release/hamle eval dump-pieces work-tmp/r3d/train work-tmp/r3d/pieces-train \
        --jitter 0.06 --copies 2 --seed 1
    python3 scripts/train_pieces3d.py --data work-tmp/r3d/pieces-train --val work-tmp/r3d/pieces-test \
        --epochs 8 --seed 1 --ckpt work-tmp/r3d/pieces.pt --onnx models/pieces3d.onnx

Seeded and resumable (a checkpoint after every epoch).

Contract: input float32 [64, 3, 64, 32] (one board: the crops of a1, b1, ... h1, a2, ... h8),
RGB planes in 0..1; output [64, 13] logits, class order 0 empty, 1..6 white P N B R Q K,
7..12 black p n b r q k (as models/squares.onnx).
"""
import glob
import json
import os
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from train_common import arg_parser, freeze_bn, grey_blur_noise, init_from_onnx, resume, save, seed_all  # noqa: E402
from split_pools import split_pools_file  # noqa: E402

W, H = 32, 64
CLASSES = "-PNBRQKpnbrqk"


class PieceNet(nn.Module):
    def __init__(self):
        super().__init__()

        def conv(i, o):
            return nn.Sequential(nn.Conv2d(i, o, 3, padding=1, bias=False), nn.BatchNorm2d(o), nn.ReLU(inplace=True))

        self.f = nn.Sequential(conv(3, 16), nn.MaxPool2d(2),          # 32 x 16
                               conv(16, 32), nn.MaxPool2d(2),         # 16 x 8
                               conv(32, 48), conv(48, 48), nn.MaxPool2d(2),   # 8 x 4
                               conv(48, 64))
        self.head = nn.Sequential(nn.Flatten(), nn.Dropout(0.2), nn.Linear(64 * 8 * 4, 128), nn.ReLU(inplace=True),
                                  nn.Linear(128, 13))

    def forward(self, x):
        x = x - 0.5
        return self.head(self.f(x))


def labels_of(fen):
    rows = fen.split()[0].split("/")
    out = []
    for row in rows:
        for ch in row:
            if ch.isdigit():
                out += [0] * int(ch)
            else:
                out.append(CLASSES.index(ch))
    assert len(out) == 64, fen
    return out


def load(dirs):
    """Mosaics -> crops (N, 64, 32, 3) uint8 and labels, in FEN order (a8 first)."""
    ims, labs = [], []
    for d in dirs:
        for f in sorted(glob.glob(os.path.join(d, "*.png"))):
            fen = open(f[:-4] + ".fen").read()
            m = np.asarray(Image.open(f).convert("RGB"))
            lab = labels_of(fen)
            for r in range(8):
                for c in range(8):
                    ims.append(m[r * H:(r + 1) * H, c * W:(c + 1) * W])
                    labs.append(lab[r * 8 + c])
    return np.stack(ims), np.array(labs, np.int64)


def stretch(x, g, amount):
    """Scales each crop's content up or down by up to `amount` (height and width drawn
    apart, the width by half as much), about the middle of its bottom edge, where the piece
    stands: sets differ in how tall each kind is, so the height of a piece alone must not
    name it. Pixels from outside the crop repeat its edge, as hamle's crops do."""
    B = x.shape[0]
    sy = 1 + torch.empty(B).uniform_(-amount, amount, generator=g)
    sx = 1 + torch.empty(B).uniform_(-amount / 2, amount / 2, generator=g)
    theta = torch.zeros(B, 2, 3)
    # output (u, v) in -1..1 samples the input at (u / sx, 1 - (1 - v) / sy): the bottom
    # edge (v = 1) stays put and the content grows by sy upwards
    theta[:, 0, 0] = 1 / sx
    theta[:, 1, 1] = 1 / sy
    theta[:, 1, 2] = 1 - 1 / sy
    grid = F.affine_grid(theta, list(x.shape), align_corners=False)
    return F.grid_sample(x, grid, mode="bilinear", padding_mode="border", align_corners=False)


def augment(x, g, amount=0.0):
    B = x.shape[0]
    if amount > 0:
        x = stretch(x, g, amount)
    x = x * torch.empty(B, 3, 1, 1).uniform_(0.8, 1.2, generator=g) * torch.empty(B, 1, 1, 1).uniform_(0.6, 1.4, generator=g)
    m = x.mean((1, 2, 3), keepdim=True)
    x = (x - m) * torch.empty(B, 1, 1, 1).uniform_(0.6, 1.4, generator=g) + m
    flip = torch.rand(B, generator=g) < 0.5
    x[flip] = x[flip].flip(3)
    x = grey_blur_noise(x, g, 0.1, 0.06)
    return x.clamp(0, 1)


def to_tensor(a):
    return torch.from_numpy(a).permute(0, 3, 1, 2).float() / 255


def evaluate(model, ims, labs, bs=512):
    model.eval()
    right = 0
    boards_right = 0
    with torch.no_grad():
        pred = torch.cat([model(to_tensor(ims[i:i + bs])).argmax(1) for i in range(0, len(ims), bs)])
    ok = (pred.numpy() == labs)
    right = ok.mean()
    boards_right = ok.reshape(-1, 64).all(1).mean()
    model.train()
    return float(right), float(boards_right)


def export(model, path, check):
    model.eval()
    x = to_tensor(check)
    torch.onnx.export(model, x, path, input_names=["pieces"], output_names=["logits"], opset_version=17,
                      dynamo=False)
    split_pools_file(path)  # the same values, faster in tract
    with torch.no_grad():
        ref = model(x).numpy()
    Image.fromarray(np.concatenate([np.concatenate(list(check[r * 8:(r + 1) * 8]), 1) for r in range(8)], 0)).save(
        path.replace(".onnx", ".check-in.png"))
    np.savetxt(path.replace(".onnx", ".check-out.txt"), ref.ravel(), fmt="%.5f")
    print(f"exported {path} ({os.path.getsize(path) / 1e6:.2f} MB)", flush=True)
    model.train()


def main():
    ap = arg_parser(8, "work-tmp/r3d/pieces.pt", "models/pieces3d.onnx", bs=128, lr=3e-3)
    ap.add_argument("--stretch", type=float, default=0.0,
                    help="scale each crop's content by up to this fraction about its bottom middle "
                         "(0: off, as the shipped model was trained)")
    ap.add_argument("--init-onnx", help="start from an exported model's weights (its batch norms folded "
                    "into the convs, so they stay frozen)")
    a = ap.parse_args()
    seed_all(a)
    ims, labs = load(a.data)
    vims, vlabs = load(a.val) if a.val else (ims[:64 * 20], labs[:64 * 20])
    print(f"{len(ims)} training crops ({len(ims) // 64} boards), {len(vims)} validation; "
          f"class counts {np.bincount(labs, minlength=13).tolist()}", flush=True)
    model = PieceNet()
    if a.init_onnx:
        init_from_onnx(model, a.init_onnx)
        freeze_bn(model)
        print(f"weights from {a.init_onnx}", flush=True)
    print(f"{sum(p.numel() for p in model.parameters())} parameters", flush=True)
    # empty squares are most of a board: weigh the classes towards balance (square root)
    counts = np.bincount(labs, minlength=13).astype(np.float64) + 1
    weight = torch.tensor((counts.sum() / counts) ** 0.5, dtype=torch.float32)
    weight = weight / weight.mean()
    steps = len(ims) // a.bs
    opt = torch.optim.AdamW(model.parameters(), lr=a.lr, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, a.lr, total_steps=max(1, a.epochs * steps), pct_start=0.15)
    start, history = resume(model, opt, sched, a.init, a.ckpt)
    g = torch.Generator().manual_seed(a.seed)
    for ep in range(start, a.epochs):
        g.manual_seed(a.seed * 1000 + ep)
        order = torch.randperm(len(ims), generator=g).numpy()
        t0, tot = time.time(), 0.0
        for s in range(steps):
            idx = order[s * a.bs:(s + 1) * a.bs]
            x = augment(to_tensor(ims[idx]), g, a.stretch)
            loss = F.cross_entropy(model(x), torch.from_numpy(labs[idx]), weight=weight)
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            tot += loss.item()
        sq, bd = evaluate(model, vims, vlabs)
        if a.init_onnx:
            freeze_bn(model)
        history.append({"epoch": ep + 1, "loss": tot / max(1, steps), "val_squares": sq, "val_boards": bd})
        print(f"epoch {ep + 1}: loss {tot / max(1, steps):.4f}, val squares {sq:.4f}, boards {bd:.3f}, "
              f"{time.time() - t0:.0f} s", flush=True)
        save(model, opt, sched, ep + 1, history, a.ckpt)
    export(model, a.onnx, vims[:64])
    json.dump(history, open(a.ckpt + ".history.json", "w"), indent=1)


if __name__ == "__main__":
    main()
