#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Train the piece classifier for photos of sets (issue #6) with a second task: each occupied
crop's piece height, in squares, as the renderer built it (`heights` in a render's JSON,
`render_3d.py`, since session 52). Exports the classifier alone (models/pieces3d.onnx, the
contract of scripts/train_pieces3d.py: input [64, 3, 64, 32] RGB in 0..1, output [64, 13]
logits); the height head is a training aid and is not exported.

Session 52 (models/pieces3d.md): trained on the crops of 449 renders of seed 46, this recipe
names about 60 % of the unseen set's occupied crops, against 45-50 % for the shipped model of
session 16 and for the session-47 probes. What differs from scripts/train_pieces3d.py: half
of each batch is occupied squares, each crop is stretched up or down by up to 20 % (its
height label with it) instead of stretching the kinds apart, and the height loss.

    hamle eval dump-pieces work-tmp/r3d/train46 work-tmp/r3d/pieces-t46 --copies 2 --jitter 0.06 --seed 46
    python3 scripts/train_pieces3d_heights.py --data work-tmp/r3d/pieces-t46 --renders work-tmp/r3d/train46 \\
        --steps 6000 --seed 1 --onnx models/pieces3d.onnx

Seeded; a checkpoint (`--ckpt`) every 500 steps, from which a stopped run resumes.
"""
import argparse
import glob
import json
import os
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from train_common import grey_blur_noise  # noqa: E402
from train_pieces3d import CLASSES, PieceNet, export, load_files, stretch_by, to_tensor  # noqa: E402

KIND = dict(zip("pnbrqk", ["pawn", "knight", "bishop", "rook", "queen", "king"]))


def load_with_heights(mosaic_dirs, render_dirs):
    """Crops, classes and heights (0 for empty squares) of every mosaic in `mosaic_dirs`; a
    mosaic `NAME-k.png` is render `NAME`, whose JSON is looked for in `render_dirs`."""
    files = [f for d in mosaic_dirs for f in sorted(glob.glob(os.path.join(d, "*.png")))]
    ims, labs = load_files(files)
    hs = np.zeros(len(labs), np.float32)
    for b, f in enumerate(files):
        render = os.path.basename(f)[:-4].rsplit("-", 1)[0]
        js = [os.path.join(d, render + ".json") for d in render_dirs]
        js = [j for j in js if os.path.exists(j)]
        if not js:
            sys.exit(f"no render JSON for {f} in {render_dirs}")
        heights = json.load(open(js[0])).get("heights")
        if heights is None:
            sys.exit(f"{js[0]} has no heights: run render_3d.py --meta-only on its folder")
        for k in range(64):
            lab = labs[b * 64 + k]
            if lab:
                hs[b * 64 + k] = heights[KIND[CLASSES[lab].lower()]]
    return ims, labs, hs


class HeightNet(PieceNet):
    """PieceNet whose last layer also gives the height (output 13)."""

    def __init__(self):
        super().__init__()
        self.head[-1] = nn.Linear(128, 14)

    def classifier(self):
        """A PieceNet with the same weights and the 13 logits only, for export."""
        net = PieceNet()
        sd = {k: v.clone() for k, v in self.state_dict().items()}
        sd["head.4.weight"] = sd["head.4.weight"][:13]
        sd["head.4.bias"] = sd["head.4.bias"][:13]
        net.load_state_dict(sd)
        return net


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", nargs="+", required=True, help="folders of hamle eval dump-pieces mosaics")
    ap.add_argument("--renders", nargs="+", required=True, help="folders of the renders' JSON")
    ap.add_argument("--steps", type=int, default=6000)
    ap.add_argument("--bs", type=int, default=128)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--height-weight", type=float, default=4.0, help="0: no height task")
    ap.add_argument("--stretch", type=float, default=0.2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--ckpt", default="work-tmp/r3d/pieces-heights.pt")
    ap.add_argument("--onnx", default="models/pieces3d.onnx")
    a = ap.parse_args()
    torch.manual_seed(a.seed)
    torch.set_num_threads(a.threads)
    ims, labs, hs = load_with_heights(a.data, a.renders)
    occ = np.nonzero(labs)[0]
    print(f"{len(labs) // 64} mosaics, {len(occ)} occupied crops", flush=True)
    net = HeightNet()
    opt = torch.optim.AdamW(net.parameters(), a.lr, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, a.lr, total_steps=a.steps)
    start = 0
    if os.path.exists(a.ckpt):
        ck = torch.load(a.ckpt)
        net.load_state_dict(ck["net"])
        opt.load_state_dict(ck["opt"])
        sched.load_state_dict(ck["sched"])
        start = ck["step"]
        print(f"resumed at step {start}", flush=True)
    t0 = time.time()
    for step in range(start, a.steps):
        # the batch's draws depend on the seed and the step only, so a resumed run goes on
        # as the run it resumes
        g = torch.Generator().manual_seed(a.seed * 1_000_003 + step)
        rng = np.random.default_rng(a.seed * 1_000_003 + step)
        half = a.bs // 2
        idx = np.concatenate([rng.choice(occ, half), rng.integers(0, len(labs), a.bs - half)])
        x = to_tensor(ims[idx])
        y = torch.from_numpy(labs[idx])
        h = torch.from_numpy(hs[idx])
        sy = 1 + torch.empty(a.bs).uniform_(-a.stretch, a.stretch, generator=g)
        x = stretch_by(x, sy, 1 + (sy - 1) / 2)
        h = h * sy   # the content grows upwards from the bottom edge, the piece with it
        x = x * torch.empty(a.bs, 3, 1, 1).uniform_(0.8, 1.2, generator=g) \
            * torch.empty(a.bs, 1, 1, 1).uniform_(0.6, 1.4, generator=g)
        flip = torch.rand(a.bs, generator=g) < 0.5
        x[flip] = x[flip].flip(3)
        x = grey_blur_noise(x, g, 0.1, 0.06).clamp(0, 1)
        out = net(x)
        loss = F.cross_entropy(out[:, :13], y)
        m = y > 0
        if a.height_weight > 0 and m.any():
            loss = loss + a.height_weight * F.smooth_l1_loss(out[m, 13], h[m], beta=0.1)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        if (step + 1) % 500 == 0 or step + 1 == a.steps:
            print(f"step {step + 1} loss {loss.item():.3f} {time.time() - t0:.0f} s", flush=True)
            torch.save({"net": net.state_dict(), "opt": opt.state_dict(), "sched": sched.state_dict(),
                        "step": step + 1}, a.ckpt)
    export(net.classifier(), a.onnx, ims[:64])


if __name__ == "__main__":
    main()
