#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""A board-level reader for photos of sets (issue #6): the piece model's 64 square readings
of one board in, the 64 squares' classes out, learnt from where pieces stand in real games.

The piece model reads each crop alone. On an unseen set it confuses kinds (pawns read as
bishops or knights), and the square prior (`src/board/piece_prior.rs`) only says what one
square is likely to hold. This network sees the whole board: pawn chains, one king a side,
at most eight pawns, the back rank behind them. It is trained on positions of real games
(datasets/games, left out: the games the test and validation renders were drawn from) with
simulated readings: for each square, the piece model's (tempered) logits of a real crop of
that class, drawn from renders the network never sees at test time (`--pool`), plus a shift
shared by all squares of one class on a board (`--shift`), as an unseen set shifts all its
pawns alike.

    python3 scripts/dump_piece_logits.py work-tmp/r3d/pieces-train141 work-tmp/r3d/pool141.npz
    python3 scripts/train_board_denoise.py --pool work-tmp/r3d/pool141.npz \\
        --eval work-tmp/r3d/pieces-val2/logits.npz --onnx models/board3d.onnx

Input `logits`: float32 [1, 13, 8, 8], the tempered logits (divided by 1.4) in canonical
order (row 0 = rank 8, column 0 = file a; White at the bottom). Output `classes`: float32
[1, 13, 8, 8], log-odds of each class per square.
"""
from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

import chess
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parent))
from game_positions import draw_positions, load_games  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
TEMPERATURE = 1.4
PRIOR_WEIGHT = 0.5
# (seed, scenes) of render sets whose games are held out: test, validation
EXCLUDE = [(101, 50), (102, 25)]


def classes_of(board: chess.Board) -> np.ndarray:
    out = np.zeros(64, dtype=np.int64)
    for sq in range(64):
        p = board.piece_at(sq)
        if p is not None:
            k = "PNBRQK".index(p.symbol().upper()) + 1 + (0 if p.color else 6)
            out[(7 - chess.square_rank(sq)) * 8 + chess.square_file(sq)] = k
    return out


def positions(every: int, seed: int):
    games = load_games()
    used = {id(g) for s, n in EXCLUDE for g, _ in draw_positions(random.Random(s), games, n)}
    out = []
    for g in games:
        if id(g) in used:
            continue
        b = g.board()
        moves = list(g.mainline_moves())
        for i, m in enumerate(moves):
            b.push(m)
            if (i >= 7 and i % every == seed % every) or i == len(moves) - 1:
                out.append(classes_of(b))
    return np.stack(out), len(games) - len(used)


def prior_table() -> np.ndarray:
    rows = []
    for line in (ROOT / "src" / "board" / "piece_prior.rs").read_text().splitlines():
        line = line.strip()
        if line.startswith("[") and line.endswith("],"):
            rows.append([float(v) for v in line[1:-2].split(",") if v.strip()])
    t = np.array(rows, dtype=np.float32)
    assert t.shape == (64, 13), t.shape
    return t


class Denoiser(nn.Module):
    """Residual convolutions over the board with a global summary fed back at each block:
    the output is the input logits plus a correction."""

    def __init__(self, ch: int = 64, blocks: int = 4, extra: int = 0):
        """`extra`: further input planes after the 13 logits (scripts/probe_board_features.py);
        the correction is still added to the logits."""
        super().__init__()
        self.extra = extra
        self.inp = nn.Conv2d(13 + extra + 16, ch, 3, padding=1)
        self.blocks = nn.ModuleList(nn.Conv2d(ch, ch, 3, padding=1) for _ in range(blocks))
        self.glob = nn.ModuleList(nn.Linear(ch, ch) for _ in range(blocks))
        self.out = nn.Conv2d(ch, 13, 1)
        pos = torch.zeros(16, 8, 8)
        for r in range(8):
            pos[r, r, :] = 1.0
            pos[8 + r, :, r] = 1.0
        self.register_buffer("pos", pos.unsqueeze(0))

    def forward(self, x):
        h = F.relu(self.inp(torch.cat([x, self.pos.expand(x.shape[0], -1, -1, -1)], 1)))
        for conv, g in zip(self.blocks, self.glob):
            s = g(h.mean(dim=(2, 3)))[:, :, None, None]
            h = h + F.relu(conv(h) + s)
        return (x[:, :13] if self.extra else x) + self.out(h)


def kind_swaps(rng: np.random.Generator, n: int, swap: float) -> np.ndarray:
    """Per board, the class whose crops stand in for each class [n, 13]: each piece class
    (not the empty square) takes, with probability `swap`, another kind of its colour
    (uniformly), and keeps its own otherwise."""
    src = np.tile(np.arange(13), (n, 1))
    if swap <= 0:
        return src
    hit = rng.random((n, 13)) < swap
    hit[:, 0] = False
    other = rng.integers(1, 6, size=(n, 13))          # 1..5 kinds further on, within the colour
    kind = (np.arange(13) - 1) % 6                     # 0..5 for classes 1..12
    colour = np.where(np.arange(13) >= 7, 7, 1)
    swapped = colour + (kind + other) % 6
    src[hit] = swapped[hit]
    return src


def simulate(rng: np.random.Generator, cls: np.ndarray, pool: list[np.ndarray], shift: float,
             renders: list[list[np.ndarray]] | None = None, grouped: float = 0.0,
             swap: float = 0.0):
    """Tempered logits [n, 13, 8, 8] for boards of classes `cls` [n, 64]. With probability
    `grouped` a board draws its readings of each class from one render's crops of that
    class (`renders[r][c]`, when that render has any): one set, one light, the same
    confusions for all its pawns, as in a real photo. With `swap` > 0 each piece class of a
    board may be read as another kind of its colour throughout that board (`kind_swaps`):
    an unseen set whose knights all look to the piece model like its pawns, say; the
    occupancy and colour stay. A reading may carry more values after its 13 logits
    (scripts/probe_board_features.py): they come along as planes 13 on, and the shift
    touches the logits only."""
    n = cls.shape[0]
    true_cls = cls
    if swap > 0:
        cls = np.take_along_axis(kind_swaps(rng, n, swap), cls, 1)
    out = np.empty((n, 64, pool[0].shape[-1]), dtype=np.float32)
    for c in range(13):
        idx = np.nonzero(cls == c)
        k = len(idx[0])
        if k == 0:
            continue
        out[idx] = pool[c][rng.integers(0, len(pool[c]), k)]
    if renders and grouped > 0:
        for b in np.nonzero(rng.random(n) < grouped)[0]:
            src = renders[rng.integers(0, len(renders))]
            for c in np.unique(cls[b]):
                if len(src[c]):
                    sq = np.nonzero(cls[b] == c)[0]
                    out[b, sq] = src[c][rng.integers(0, len(src[c]), len(sq))]
    if shift > 0:
        bias = rng.normal(0, shift, size=(n, 13, 13)).astype(np.float32)
        bias[:, 0, :] *= 0.3   # empty squares look alike across sets
        out[:, :, :13] += np.take_along_axis(bias, true_cls[:, :, None].repeat(13, 2), 1)
    return out.transpose(0, 2, 1).reshape(n, -1, 8, 8)


def evaluate(model, path, prior):
    z = np.load(path)
    L, Y = z["L"].astype(np.float32) / TEMPERATURE, z["Y"]
    base = (L + PRIOR_WEIGHT * prior[None]).argmax(-1)
    with torch.no_grad():
        x = torch.from_numpy(L.transpose(0, 2, 1).reshape(-1, 13, 8, 8).copy())
        out = model(x).numpy().reshape(-1, 13, 64).transpose(0, 2, 1).argmax(-1)

    def f(p):
        return f"{(p == Y).mean() * 100:.2f} % squares, {int((p == Y).all(1).sum())}/{len(Y)} exact"

    return f"prior: {f(base)}; board model: {f(out)}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pool", nargs="+", required=True, help="npz of L (raw logits) and Y")
    ap.add_argument("--eval", nargs="*", default=[])
    ap.add_argument("--steps", type=int, default=6000)
    ap.add_argument("--bs", type=int, default=128)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--shift", type=float, default=1.0)
    ap.add_argument("--grouped", type=float, default=0.0,
                    help="share of boards whose readings come from one render's crops")
    ap.add_argument("--swap", type=float, default=0.0,
                    help="probability that a piece class of a board reads as another kind of its colour")
    ap.add_argument("--channels", type=int, default=64)
    ap.add_argument("--blocks", type=int, default=4)
    ap.add_argument("--every", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--onnx")
    args = ap.parse_args()
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    rng = np.random.default_rng(args.seed)
    L, Y, renders = [], [], []
    for p in args.pool:
        z = np.load(p)
        L.append(z["L"].reshape(-1, 13) / TEMPERATURE)
        Y.append(z["Y"].reshape(-1))
        for lr, yr in zip(z["L"].astype(np.float32) / TEMPERATURE, z["Y"]):
            renders.append([lr[yr == c] for c in range(13)])
    L, Y = np.concatenate(L).astype(np.float32), np.concatenate(Y)
    pool = [L[Y == c] for c in range(13)]
    print("pool:", [len(p) for p in pool], flush=True)
    boards, kept = positions(args.every, args.seed)
    print(f"{len(boards)} positions from {kept} games", flush=True)
    prior = prior_table()
    model = Denoiser(args.channels, args.blocks)
    print(sum(p.numel() for p in model.parameters()), "parameters", flush=True)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, args.lr, total_steps=args.steps)
    for step in range(1, args.steps + 1):
        cls = boards[rng.integers(0, len(boards), args.bs)]
        sim = simulate(rng, cls, pool, args.shift, renders, args.grouped, args.swap)
        x = torch.from_numpy(sim)
        y = torch.from_numpy(cls.reshape(-1, 8, 8))
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        if step % 500 == 0 or step == args.steps:
            msg = f"step {step} loss {loss.item():.4f}"
            model.eval()
            for p in args.eval:
                msg += f"\n  {Path(p).parent.name}: {evaluate(model, p, prior)}"
            model.train()
            print(msg, flush=True)
    model.eval()
    if args.onnx:
        torch.onnx.export(model, torch.zeros(1, 13, 8, 8), args.onnx, input_names=["logits"],
                          output_names=["classes"], opset_version=17, dynamo=False)
        print("wrote", args.onnx)


if __name__ == "__main__":
    main()
