#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Probe (issue #6, models/board3d.md, session 48): does the board model read better when it
also sees the piece model's penultimate features of each crop, not only its 13 logits? With
them it could compare an unseen set's pieces with each other (one set per photo: the
shortest common piece is a pawn). Trains the board model of scripts/train_board_denoise.py
(same positions, same simulated readings: crops of one render for `--grouped` of the boards,
a per-board shift of the logits) with `--nfeat` principal components of the features as
further input planes (0: logits only, the control), and reports the validation boards.

    python3 scripts/dump_piece_logits.py work-tmp/r3d/pieces-t46 work-tmp/r3d/pool46f.npz --features
    python3 scripts/dump_piece_logits.py work-tmp/r3d/pieces-val work-tmp/r3d/val-f.npz --features
    python3 scripts/probe_board_features.py --pool work-tmp/r3d/pool46f.npz --eval work-tmp/r3d/val-f.npz \\
        --nfeat 32   # and --nfeat 0

One thread, about 15 minutes for 6,000 steps.
"""
import argparse
import os
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import train_board_denoise as tb  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pool", required=True)
    ap.add_argument("--eval", required=True)
    ap.add_argument("--nfeat", type=int, default=0, help="0: logits only; else PCA dims of features")
    ap.add_argument("--steps", type=int, default=6000)
    ap.add_argument("--grouped", type=float, default=0.8)
    ap.add_argument("--shift", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--save")
    args = ap.parse_args()
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)
    rng = np.random.default_rng(args.seed)
    z = np.load(args.pool)
    Lp = z["L"].astype(np.float32) / tb.TEMPERATURE
    Fp = z["F"].astype(np.float32)
    Y = z["Y"]
    mu = Fp.reshape(-1, 128).mean(0)
    if args.nfeat:
        X = Fp.reshape(-1, 128) - mu
        u, s, vt = np.linalg.svd(X[rng.integers(0, len(X), 20000)], full_matrices=False)
        proj = (vt[:args.nfeat].T / (s[:args.nfeat] / np.sqrt(20000))).astype(np.float32)
    V = Lp if not args.nfeat else np.concatenate([Lp, (Fp - mu) @ proj], -1)
    D = V.shape[-1]
    pool = [V.reshape(-1, D)[Y.reshape(-1) == c] for c in range(13)]
    renders = [[v[y == c] for c in range(13)] for v, y in zip(V, Y)]
    ze = np.load(args.eval)
    Le = ze["L"].astype(np.float32) / tb.TEMPERATURE
    Ve = Le if not args.nfeat else np.concatenate([Le, (ze["F"] - mu) @ proj], -1)
    Ye = ze["Y"]
    boards, kept = tb.positions(3, 1)
    print(len(boards), "positions", D, "inputs", flush=True)
    model = tb.Denoiser(64, 4, extra=args.nfeat)
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, 2e-3, total_steps=args.steps)
    t0 = time.time()
    for step in range(1, args.steps + 1):
        cls = boards[rng.integers(0, len(boards), 128)]
        x = torch.from_numpy(tb.simulate(rng, cls, pool, args.shift, renders, args.grouped))
        loss = F.cross_entropy(model(x), torch.from_numpy(cls.reshape(-1, 8, 8)))
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        if step % 500 == 0 or step == args.steps:
            model.eval()
            with torch.no_grad():
                xe = torch.from_numpy(Ve.transpose(0, 2, 1).reshape(-1, D, 8, 8).copy())
                p = model(xe).numpy().reshape(-1, 13, 64).transpose(0, 2, 1).argmax(-1)
            model.train()
            occ = Ye > 0
            print(f"step {step} loss {loss.item():.4f} val {(p == Ye).mean() * 100:.2f} % sq, "
                  f"occ {(p == Ye)[occ].mean() * 100:.2f} %, exact {int((p == Ye).all(1).sum())}/{len(Ye)} "
                  f"{time.time() - t0:.0f}s", flush=True)
    if args.save:
        torch.save({"model": model.state_dict(), "mu": mu, "proj": proj if args.nfeat else None}, args.save)


if __name__ == "__main__":
    main()
