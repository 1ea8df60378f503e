#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Can one photo of an unseen set in the starting position teach the piece model that set?

An arbiter can photograph a board of the round's sets before play starts; every square of
that photo is known. This measures, on crops (mosaics of `hamle eval dump-pieces`), what such
reference crops give the shipped model (models/pieces3d.onnx) without retraining its
convolutions:

- `proto`: each class's mean penultimate feature (128, after the ReLU) over the reference
  crops; a crop is named by its cosine-nearest class mean;
- `probe`: the last layer (128 -> 13) refitted on the reference crops' features, starting
  from the shipped one and pulled back towards it (L2, `--pull`);
- `finetune` (with `--finetune STEPS`): every weight trained on the reference crops
  (batches of 128, mirrored at random, brightness x 0.8-1.2, Adam at 3e-4, batch norms
  frozen): what the reference can teach at most, though hamle could not do it at run time.

    python3 scripts/reference_pieces3d.py --ref work-tmp/r3d/pieces-ref --eval work-tmp/r3d/pieces-val
"""
import argparse
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from adapt_pieces3d import tensor  # noqa: E402
from train_common import freeze_bn, init_from_onnx  # noqa: E402
from train_pieces3d import PieceNet, load  # noqa: E402


def features(m, x, mirror):
    t = tensor(x)
    outs = []
    with torch.no_grad():
        for i in range(0, len(t), 256):
            b = t[i:i + 256]
            e = m.head[:4](m.f(b - 0.5))
            if mirror:
                e = (e + m.head[:4](m.f(b.flip(3) - 0.5))) / 2
            outs.append(e)
    return torch.cat(outs)


def report(name, pred, y):
    occ = y > 0
    return (f"{name}: squares {np.mean(pred == y):.4f}, occupied {np.mean(pred[occ] == y[occ]):.4f}, "
            f"kind (colour aside) {np.mean((pred[occ] - 1) % 6 == (y[occ] - 1) % 6):.4f}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--onnx", default="models/pieces3d.onnx")
    ap.add_argument("--ref", nargs="+", required=True)
    ap.add_argument("--eval", nargs="+", required=True)
    ap.add_argument("--mirror", action="store_true")
    ap.add_argument("--pull", type=float, nargs="+", default=[1e-3, 1e-2, 1e-1])
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--finetune", type=int, default=0)
    args = ap.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    m = PieceNet()
    init_from_onnx(m, args.onnx)
    m.eval()
    xr, yr = load(args.ref)
    fr = features(m, xr, args.mirror)
    yr_t = torch.from_numpy(yr)
    print(f"reference: {len(xr)} crops, classes {np.bincount(yr, minlength=13).tolist()}")
    protos = torch.stack([F.normalize(fr[yr_t == k].mean(0), dim=0) for k in range(13)])
    w0 = m.head[4].weight.detach().clone()
    b0 = m.head[4].bias.detach().clone()
    # class weights: the reference is mostly empty squares and pawns
    counts = torch.bincount(yr_t, minlength=13).float().clamp(min=1)
    cw = (counts.sum() / counts) ** 0.5
    probes = {}
    for pull in args.pull:
        w = w0.clone().requires_grad_(True)
        b = b0.clone().requires_grad_(True)
        opt = torch.optim.Adam([w, b], lr=1e-2)
        for _ in range(args.steps):
            loss = F.cross_entropy(fr @ w.T + b, yr_t, weight=cw)
            loss = loss + pull * ((w - w0) ** 2).sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
        probes[pull] = (w.detach(), b.detach())
    evals = [load([d]) for d in args.eval]
    for d, (x, y) in zip(args.eval, evals):
        f = features(m, x, args.mirror)
        print(f"{d}: {len(x) // 64} boards")
        shipped = (f @ w0.T + b0).argmax(1).numpy()
        print("  " + report("shipped", shipped, y))
        proto = (F.normalize(f, dim=1) @ protos.T).argmax(1).numpy()
        print("  " + report("proto", proto, y))
        for pull, (w, b) in probes.items():
            pred = (f @ w.T + b).argmax(1).numpy()
            print("  " + report(f"probe pull {pull}", pred, y))
    if args.finetune:
        finetune(args, xr, yr_t, cw, evals)


def finetune(args, xr, yr, cw, evals):
    m = PieceNet()
    init_from_onnx(m, args.onnx)
    tr = tensor(xr)
    opt = torch.optim.Adam(m.parameters(), lr=3e-4)
    for step in range(1, args.finetune + 1):
        m.train()
        freeze_bn(m)
        idx = torch.randint(0, len(tr), (128,))
        x = tr[idx]
        flip = torch.rand(128) < 0.5
        x[flip] = x[flip].flip(3)
        x = (x * (0.8 + 0.4 * torch.rand(128, 1, 1, 1))).clamp(0, 1)
        loss = F.cross_entropy(m(x), yr[idx], weight=cw)
        opt.zero_grad()
        loss.backward()
        opt.step()
    m.eval()
    for d, (x, y) in zip(args.eval, evals):
        t = tensor(x)
        with torch.no_grad():
            pred = torch.cat([m(t[i:i + 256]) for i in range(0, len(t), 256)]).argmax(1).numpy()
        print(f"{d}: " + report(f"finetune {args.finetune} steps", pred, y))


if __name__ == "__main__":
    main()
