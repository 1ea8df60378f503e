#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Probes of what limits the piece model for photos of sets (issue #6; results in
models/pieces3d.md, sessions 47-48). Trains `PieceNet` from scratch on the crops of the
first `--scenes` scenes of a `hamle eval dump-pieces` folder, then reports the share of
squares and of occupied squares named right on held-out scenes of the same folder (scene
`--heldout-from` on, the jittered copy `-1` only) and on `--eval` folders (e.g. the
validation renders: a set, board and light never trained on).

    # does the crop's resolution limit the kinds? (--degrade 2: 16 x 32 content, scaled back)
    python3 scripts/probe_pieces3d.py --data work-tmp/r3d/pieces-t46 --scenes 150 --heldout-from 150 \\
        --eval work-tmp/r3d/pieces-val --steps 3600 --every 300 [--degrade 2]
    # lathe-turned sets only (all their scenes); the renders of the mesh sets held out, per set
    python3 scripts/probe_pieces3d.py --data work-tmp/r3d/pieces-t46 --scenes 225 --heldout-from 200 \\
        --renders work-tmp/r3d/train46 --train-sets lathe --eval work-tmp/r3d/pieces-val --steps 3000
    # a learning curve in scenes (sets): --scenes 25 | 200, held out from scene 200
    python3 scripts/probe_pieces3d.py --data work-tmp/r3d/pieces-t46 --scenes 25 --heldout-from 200 \\
        --eval work-tmp/r3d/pieces-val --steps 3000

    # the shipped model on the same sets (one look, no mirror)
    python3 scripts/probe_pieces3d.py --data work-tmp/r3d/pieces-t46 --scenes 0 --heldout-from 200 \\
        --eval work-tmp/r3d/pieces-val --onnx models/pieces3d.onnx

    # renders at twice the pixels, crops of 64 x 128 (models/pieces3d.md, "At twice the pixels")
    work-tmp/bpyenv/bin/python scripts/render_3d.py --out work-tmp/r3d/train46-x2 --n 25 --views 2 --seed 46 \\
        --samples 10 --no-denoise --styles --lathe-share 6 --scale 2   # train46's first 25 scenes
    hamle eval dump-pieces work-tmp/r3d/train46-x2 work-tmp/r3d/pieces-t46-x2 --copies 2 --jitter 0.06 \\
        --seed 46 --crop-scale 2
    python3 scripts/probe_pieces3d.py --data work-tmp/r3d/pieces-t46-x2 --tile-scale 2 --scenes 25 \\
        --heldout-from 400 --steps 1200 --every 400 --save work-tmp/r3d/x2.pt
    python3 scripts/probe_pieces3d.py --data work-tmp/r3d/pieces-t46-x2 --tile-scale 2 --scenes 0 \\
        --heldout-from 400 --eval work-tmp/r3d/pieces-val-x2 --load work-tmp/r3d/x2.pt

One thread; about 0.25 s a step of 128 crops on this machine. `--save` keeps the weights
(a state dict of `PieceNet`).
"""
import argparse
import functools
import glob
import json
import os
import re
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from train_common import init_from_onnx  # noqa: E402
from train_pieces3d import PieceNet, augment, conv, load_files, to_tensor  # noqa: E402


def scene(path):
    return int(re.search(r"-(\d{5})-\d-\d\.png$", path).group(1))


class LargePieceNet(PieceNet):
    """PieceNet for crops twice as large each way (64 x 128): one more convolution and pool
    in front, the same layers after it."""

    def __init__(self):
        super().__init__()
        self.f = nn.Sequential(conv(3, 16), nn.MaxPool2d(2),          # 64 x 32
                               conv(16, 16), nn.MaxPool2d(2),         # 32 x 16
                               conv(16, 32), nn.MaxPool2d(2),         # 16 x 8
                               conv(32, 48), conv(48, 48), nn.MaxPool2d(2),   # 8 x 4
                               conv(48, 64))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", required=True, help="dump-pieces folder of training-style renders")
    ap.add_argument("--scenes", type=int, required=True, help="train on scenes below this")
    ap.add_argument("--heldout-from", type=int, required=True, help="held-out scenes: this one on")
    ap.add_argument("--renders", help="the renders' folder (NAME.json), to tell their sets apart")
    ap.add_argument("--train-sets", nargs="*", default=[],
                    help="with --renders: train only on these sets; the others' renders are held out")
    ap.add_argument("--eval", nargs="*", default=[], help="further dump-pieces folders to report")
    ap.add_argument("--steps", type=int, default=3000)
    ap.add_argument("--every", type=int, default=600, help="report every this many steps")
    ap.add_argument("--degrade", type=float, default=1.0,
                    help="shrink each crop by this factor and scale it back (train and eval)")
    ap.add_argument("--tile-scale", type=int, choices=[1, 2], default=1,
                    help="2: mosaics of `hamle eval dump-pieces --crop-scale 2` (64 x 128 crops), "
                         "read by LargePieceNet")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--save")
    ap.add_argument("--onnx", help="score this exported model on the same sets instead of training one")
    ap.add_argument("--load", help="score these saved weights (--save) instead of training")
    args = ap.parse_args()
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)
    files = sorted(glob.glob(os.path.join(args.data, "*.png")))

    @functools.lru_cache(maxsize=None)
    def set_of(f):
        if not args.renders:
            return "all"
        name = os.path.basename(f).rsplit("-", 1)[0] + ".json"
        return json.load(open(os.path.join(args.renders, name)))["set"]

    def trained(f):
        return not args.train_sets or set_of(f) in args.train_sets

    train = [f for f in files if scene(f) < args.scenes and trained(f)]
    taken = set(train)
    held = [f for f in files if f.endswith("-1.png") and f not in taken
            and (scene(f) >= args.heldout_from or not trained(f))]
    ts = args.tile_scale
    if args.onnx and ts != 1:
        ap.error("--onnx reads 32 x 64 crops: --tile-scale 1")
    ims, labs = load_files(train, ts)
    sets = []
    for name in sorted({set_of(f) for f in held}):
        sets.append((f"held out, {name}", *load_files([f for f in held if set_of(f) == name], ts)))
    sets += [(os.path.basename(d.rstrip("/")), *load_files(sorted(glob.glob(os.path.join(d, "*.png"))), ts))
             for d in args.eval]
    print(f"{len(ims)} training crops; " + ", ".join(f"{n} {len(a)}" for n, a, _ in sets), flush=True)

    def degrade(x):
        if args.degrade == 1:
            return x
        h, w = x.shape[2:]
        y = F.interpolate(x, size=(int(h / args.degrade), int(w / args.degrade)), mode="area")
        return F.interpolate(y, size=(h, w), mode="bilinear", align_corners=False)

    model = PieceNet() if ts == 1 else LargePieceNet()
    counts = np.bincount(labs, minlength=13) + 1.0
    weight = torch.tensor((counts.sum() / counts) ** 0.5, dtype=torch.float32)
    weight /= weight.mean()
    bs = 128
    per_epoch = min(len(ims) // bs, args.steps)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, 3e-3, total_steps=args.steps, pct_start=0.15)
    g = torch.Generator().manual_seed(1 + args.seed)

    def score(a, lab):
        model.eval()
        with torch.no_grad():
            p = torch.cat([model(degrade(to_tensor(a[i:i + 512]))).argmax(1)
                           for i in range(0, len(a), 512)]).numpy()
        model.train()
        occ = lab > 0
        return f"squares {(p == lab).mean() * 100:.2f} %, occupied {(p[occ] == lab[occ]).mean() * 100:.2f} %"

    if args.onnx or args.load:
        if args.onnx:
            init_from_onnx(model, args.onnx)
        else:
            model.load_state_dict(torch.load(args.load))
        print(f"{args.onnx or args.load} | " + " | ".join(f"{n}: {score(a, lab)}" for n, a, lab in sets), flush=True)
        return
    done, total, t0 = 0, 0.0, time.time()
    while done < args.steps:
        order = torch.randperm(len(ims), generator=g).numpy()
        for s in range(per_epoch):
            if done >= args.steps:
                break
            idx = order[s * bs:(s + 1) * bs]
            x = degrade(augment(to_tensor(ims[idx]), g))
            loss = F.cross_entropy(model(x), torch.from_numpy(labs[idx]), weight=weight)
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += loss.item()
            done += 1
            if done % args.every == 0 or done == args.steps:
                msg = " | ".join(f"{n}: {score(a, lab)}" for n, a, lab in sets)
                print(f"step {done} loss {total / args.every:.3f} | {msg} | {time.time() - t0:.0f} s", flush=True)
                total = 0.0
    if args.save:
        torch.save(model.state_dict(), args.save)
        print("saved", args.save)


if __name__ == "__main__":
    main()
