#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Probe (issue #6, models/pieces3d.md, session 48): piece models averaged. Each member reads
the crops of `hamle eval dump-pieces` folders as they are and mirrored (the two logits
averaged, as hamle does); every combination of the shipped model and the given members
(state dicts of PieceNet, e.g. from scripts/probe_pieces3d.py --save) is scored on the
crops alone and after the shipped board model (models/board3d.onnx, logits / 1.4 in).

    python3 scripts/probe_piece_ensemble.py work-tmp/r3d/pieces-val,work-tmp/r3d/pieces-test2 \\
        work-tmp/r3d/probe-s1.pt work-tmp/r3d/probe-s2.pt
"""
import itertools
import os
import sys

import numpy as np
import onnxruntime as ort
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from train_pieces3d import PieceNet, load, to_tensor  # noqa: E402
from train_common import init_from_onnx  # noqa: E402

torch.set_num_threads(1)
members = {}
m = PieceNet()
init_from_onnx(m, "models/pieces3d.onnx")
members["shipped"] = m.eval()
for p in sys.argv[2:]:
    m = PieceNet()
    m.load_state_dict(torch.load(p))
    members[os.path.basename(p)[:-3]] = m.eval()
b3 = ort.InferenceSession("models/board3d.onnx")
for d in sys.argv[1].split(","):
    ims, Y = load([d])
    Y = Y.reshape(-1, 64)
    x = to_tensor(ims)
    logits = {}
    with torch.no_grad():
        for k, m in members.items():
            lo = [(m(x[i:i + 512]) + m(x[i:i + 512].flip(3))) / 2 for i in range(0, len(x), 512)]
            logits[k] = torch.cat(lo).numpy().reshape(-1, 64, 13)
    names = list(members)
    for r in range(1, len(names) + 1):
        for combo in itertools.combinations(names, r):
            L = np.mean([logits[k] for k in combo], 0)
            crop = L.argmax(-1)
            P = np.array([b3.run(None, {"logits": (lo / 1.4).T.reshape(1, 13, 8, 8).astype(np.float32)})[0]
                          .reshape(13, 64).argmax(0) for lo in L])
            occ = Y > 0
            print(f"{d.split('/')[-1]:14s} {'+'.join(combo):28s} crop sq {(crop == Y).mean() * 100:.2f} "
                  f"occ {(crop == Y)[occ].mean() * 100:.2f} | board3d sq {(P == Y).mean() * 100:.2f} "
                  f"occ {(P == Y)[occ].mean() * 100:.2f} exact {int((P == Y).all(1).sum())}/{len(Y)}", flush=True)
