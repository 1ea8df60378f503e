#!/usr/bin/env python3
"""Train the scoresheet cell recognizer (CRNN + CTC) and export it to ONNX for tract.

    python3 scripts/train_cells.py --data work-tmp/cells/train1.npz work-tmp/cells/train2.npz \
        --val work-tmp/cells/test-tr.npz --epochs 8 --ckpt work-tmp/cells/ckpt.pt \
        --onnx models/cells.onnx

Seeded and resumable: the checkpoint holds model, optimizer, scheduler and epoch; rerunning the
same command continues where it stopped. The network takes raw grey pixels (0..1, paper white)
of shape (1, 1, 32, 128), normalises each image itself (so Rust feeds plain pixels) and returns
log-probabilities (T=32, 1, C) over the blank + ALPHABET. The ONNX graph is exported at a fixed
batch of 1 (tract's LSTM wants a fixed batch; hamle runs cells in parallel with rayon).
"""
import json
import os
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cells_synth import ALPHABET, H, W  # noqa: E402
from train_common import ctc_arg_parser, seed_all, train_ctc  # noqa: E402
from ctc_text import cer, collapse  # noqa: E402
from split_pools import split_pools_file  # noqa: E402

C = len(ALPHABET) + 1


class CRNN(nn.Module):
    def __init__(self, hidden=128):
        super().__init__()

        def block(cin, cout):
            return [nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True)]

        self.conv = nn.Sequential(
            *block(1, 32), nn.MaxPool2d(2),            # 16 x 64
            *block(32, 48), nn.MaxPool2d(2),           # 8 x 32
            *block(48, 64), *block(64, 64), nn.MaxPool2d((2, 1)),  # 4 x 32
            *block(64, 96), *block(96, 96), nn.MaxPool2d((2, 1)),  # 2 x 32
            nn.Conv2d(96, 160, (2, 1), bias=False), nn.BatchNorm2d(160), nn.ReLU(inplace=True),  # 1 x 32
        )
        self.rnn = nn.LSTM(160, hidden, num_layers=2, bidirectional=True, dropout=0.1)
        self.fc = nn.Linear(2 * hidden, C)

    def forward(self, x):
        # x: (B, 1, H, W) in 0..1; per-image normalisation inside the graph
        mean = x.mean(dim=(2, 3), keepdim=True)
        std = ((x - mean) ** 2).mean(dim=(2, 3), keepdim=True).sqrt()
        x = (x - mean) / (std + 0.02)
        f = self.conv(x)  # (B, 160, 1, T)
        f = f.squeeze(2).permute(2, 0, 1)  # (T, B, 160)
        f, _ = self.rnn(f)
        return F.log_softmax(self.fc(f), dim=2)  # (T, B, C)


def encode(label):
    return [ALPHABET.index(c) + 1 for c in label]


def greedy(logp):
    """(T, B, C) → strings."""
    return [collapse(row) for row in logp.argmax(2).transpose(0, 1).cpu().numpy()]


def load(paths):
    ims, labs = [], []
    for p in paths:
        z = np.load(p, allow_pickle=True)
        ims.append(z["images"])
        labs.extend(list(z["labels"]))
    return np.concatenate(ims), labs


def augment_batch(x, g):
    """Cheap on-the-fly variation: random shift/scale of the cell content. The parameters are
    drawn on the CPU from the CPU generator `g` (so the same seed gives the same batches on any
    device); the sampling runs on `x`'s device."""
    b = x.shape[0]
    theta = torch.zeros(b, 2, 3)
    sx = torch.empty(b).uniform_(0.9, 1.12, generator=g)
    sy = torch.empty(b).uniform_(0.9, 1.1, generator=g)
    theta[:, 0, 0] = sx
    theta[:, 1, 1] = sy
    theta[:, 0, 2] = torch.empty(b).uniform_(-0.06, 0.06, generator=g)
    theta[:, 1, 2] = torch.empty(b).uniform_(-0.08, 0.08, generator=g)
    grid = F.affine_grid(theta.to(x.device), x.shape, align_corners=False)
    return F.grid_sample(x, grid, padding_mode="border", align_corners=False)


def evaluate(model, ims, labs, bs=256, device="cpu", decode=greedy, acc_key="cell_acc"):
    """Greedy reading of the uint8 images `ims` in batches of `bs` on `device`, against the
    labels `labs`: {acc_key: share read exactly, "cer": character error rate, "n": count}.
    `decode` turns the model's (T, B, C) output into strings (the cell alphabet by default)."""
    model.eval()
    right, errs, chars = 0, 0, 0
    with torch.no_grad():
        for i in range(0, len(labs), bs):
            x = torch.from_numpy(ims[i:i + bs]).to(device).float().unsqueeze(1) / 255.0
            pred = decode(model(x))
            for p, t in zip(pred, labs[i:i + bs]):
                right += p == t
                errs += cer(p, t)
                chars += max(1, len(t))
    model.train()
    return {acc_key: right / len(labs), "cer": errs / chars, "n": len(labs)}


def main():
    ap = ctc_arg_parser(epochs=8, ckpt="work-tmp/cells/ckpt.pt", onnx="models/cells.onnx")
    ap.add_argument("--extra", nargs="*", default=[],
                    help="more training sets as PATH:REPEAT (e.g. real cells, repeated to weigh more)")
    a = ap.parse_args()
    seed_all(a)

    ims, labs = load(a.data)
    for spec in a.extra:
        path, rep = spec.rsplit(":", 1)
        ei, el = load([path])
        ims = np.concatenate([ims] + [ei] * int(rep))
        labs = labs + el * int(rep)
    vals = {os.path.basename(p): load([p]) for p in a.val}
    print(f"train {len(labs)} cells; val {[(k, len(v[1])) for k, v in vals.items()]}", flush=True)
    model = CRNN()
    print(f"parameters: {sum(p.numel() for p in model.parameters())}", flush=True)
    train_ctc(model, a, ims, labs, vals, encode, evaluate, export, augment=augment_batch)


def export(model, onnx_path, ckpt, history):
    model.eval()
    x = torch.rand(1, 1, H, W, generator=torch.Generator().manual_seed(7))
    torch.onnx.export(model, x, onnx_path, input_names=["image"], output_names=["logp"], opset_version=17,
                      dynamo=False)
    split_pools_file(onnx_path)  # the same values, faster in tract
    with torch.no_grad():
        ref = model(x).numpy()
    # a reference input/output pair for the Rust test that checks tract against PyTorch
    np.savetxt(onnx_path.replace(".onnx", ".check-in.txt"), x.numpy().ravel(), fmt="%.6f")
    np.savetxt(onnx_path.replace(".onnx", ".check-out.txt"), ref.ravel(), fmt="%.6f")
    with open(ckpt + ".history.json", "w") as fh:
        json.dump(history, fh, indent=1)
    print(f"exported {onnx_path} ({os.path.getsize(onnx_path) / 1e6:.2f} MB)", flush=True)


if __name__ == "__main__":
    main()
