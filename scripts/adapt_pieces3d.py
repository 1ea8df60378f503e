#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Does the piece model (models/pieces3d.onnx) read an unseen set better when each board's
own crops set the statistics of its layers (AdaBN: Li et al. 2016, "Revisiting batch
normalization for practical domain adaptation")?

The export folded every batch norm into its conv. Here each conv's output is standardised
per channel with the statistics of the crops at hand and rescaled to the statistics the
same layer has on crops of the training styles (`--source`), before the folded bias and the
ReLU. `--source` and the evaluated directories hold mosaics of `hamle eval dump-pieces`.

    python3 scripts/adapt_pieces3d.py --source work-tmp/r3d/pieces-src \
        --eval work-tmp/r3d/pieces-test work-tmp/r3d/pieces-val

Prints, per evaluated directory, the share of crops right with the model as shipped and
with each board's own statistics (its 64 crops; `--mirror` adds their mirror images, as
`hamle board --kind physical` reads them), each `--blend` mixing the board's statistics
with the source's (1: the board's alone).
"""
import argparse
import os
import sys

import numpy as np
import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from train_common import init_from_onnx  # noqa: E402
from train_pieces3d import CLASSES, PieceNet, load  # noqa: E402


class Align(nn.Module):
    """In place of a folded batch norm (identity plus bias): in `mode` "source" it collects the
    per-channel mean and variance of its input; in "adapt" it standardises its input with the
    batch's own statistics and rescales to the source's; in "plain" it adds the bias only."""

    def __init__(self, bn):
        super().__init__()
        self.bias = bn.bias.detach().clone()
        self.mode = "plain"
        self.sums = None
        self.blend = 1.0

    def forward(self, x):
        if self.mode in ("source", "target"):
            s = x.double()
            n = s.shape[0] * s.shape[2] * s.shape[3]
            part = (s.sum((0, 2, 3)), (s * s).sum((0, 2, 3)), n)
            self.sums = part if self.sums is None else tuple(a + b for a, b in zip(self.sums, part))
        elif self.mode in ("adapt", "pooled"):
            if self.mode == "adapt":
                mu = x.mean((0, 2, 3), keepdim=True)
                sd = (x.var((0, 2, 3), keepdim=True, unbiased=False) + 1e-5).sqrt()
            else:
                mu = self.tgt_mu.view(1, -1, 1, 1)
                sd = self.tgt_sd.view(1, -1, 1, 1)
            ref_mu = self.ref_mu.view(1, -1, 1, 1)
            ref_sd = self.ref_sd.view(1, -1, 1, 1)
            a = self.blend
            mu = a * mu + (1 - a) * ref_mu
            sd = a * sd + (1 - a) * ref_sd
            x = (x - mu) / sd * ref_sd + ref_mu
        return x + self.bias.view(1, -1, 1, 1)

    def finish(self):
        s, q, n = self.sums
        self.sums = None
        mu = s / n
        var = q / n - mu * mu
        return mu.float(), (var.clamp(min=0) + 1e-5).sqrt().float()


def model_from(onnx_path):
    m = PieceNet()
    init_from_onnx(m, onnx_path)
    m.eval()
    aligns = []
    for seq in m.f:
        if isinstance(seq, nn.Sequential):
            for k, layer in enumerate(seq):
                if isinstance(layer, nn.BatchNorm2d):
                    a = Align(layer)
                    seq[k] = a
                    aligns.append(a)
    return m, aligns


def tensor(x):
    return torch.from_numpy(x).permute(0, 3, 1, 2).float() / 255.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--onnx", default="models/pieces3d.onnx")
    ap.add_argument("--source", nargs="+", required=True)
    ap.add_argument("--eval", nargs="+", required=True)
    ap.add_argument("--mirror", action="store_true")
    ap.add_argument("--blend", type=float, nargs="+", default=[1.0])
    args = ap.parse_args()
    torch.set_num_threads(1)
    m, aligns = model_from(args.onnx)
    xs, _ = load(args.source)
    for a in aligns:
        a.mode = "source"
    with torch.no_grad():
        for i in range(0, len(xs), 256):
            m(tensor(xs[i:i + 256]))
    for a in aligns:
        a.ref_mu, a.ref_sd = a.finish()
    print(f"source: {len(xs)} crops from {', '.join(args.source)}")

    def read(x, mode, blend=1.0):
        for a in aligns:
            a.mode, a.blend = mode, blend
        with torch.no_grad():
            t = tensor(x)
            if args.mirror:
                both = torch.cat([t, t.flip(3)])
                out = m(both)
                return (out[:len(t)] + out[len(t):]) / 2
            return m(t)

    for d in args.eval:
        x, y = load([d])
        boards = len(x) // 64
        plain = np.concatenate([read(x[b * 64:(b + 1) * 64], "plain").argmax(1).numpy() for b in range(boards)])
        line = f"{d}: {boards} boards; shipped {np.mean(plain == y):.4f}"
        for bl in args.blend:
            own = np.concatenate([read(x[b * 64:(b + 1) * 64], "adapt", bl).argmax(1).numpy()
                                  for b in range(boards)])
            line += f"; own board (blend {bl}) {np.mean(own == y):.4f}"
        # The whole directory's statistics, layer by layer (each layer's taken after the
        # earlier ones are aligned): one set photographed many times.
        for k, a in enumerate(aligns):
            for b in aligns[:k]:
                b.mode = "pooled"
            a.mode = "target"
            for c in aligns[k + 1:]:
                c.mode = "plain"
            with torch.no_grad():
                for i in range(0, len(x), 256):
                    m(tensor(x[i:i + 256]))
            a.tgt_mu, a.tgt_sd = a.finish()
        pooled = np.concatenate([read(x[b * 64:(b + 1) * 64], "pooled").argmax(1).numpy() for b in range(boards)])
        line += f"; whole directory {np.mean(pooled == y):.4f} (occupied {np.mean(pooled[y > 0] == y[y > 0]):.4f})"
        # `own` is the last blend's reading.
        line += "; occupied only: shipped {:.4f}, own (blend {}) {:.4f}".format(
            np.mean(plain[y > 0] == y[y > 0]), args.blend[-1], np.mean(own[y > 0] == y[y > 0]))
        print(line, flush=True)
        conf = np.zeros((13, 13), int)
        for t, p in zip(y, own):
            conf[t, p] += 1
        print(f"  own-board confusion, blend {args.blend[-1]} (rows true " + CLASSES + "):")
        for k in range(13):
            print("   ", CLASSES[k], " ".join(f"{v:4d}" for v in conf[k]))


if __name__ == "__main__":
    main()
