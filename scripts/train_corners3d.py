#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Train the board finder for photos of physical sets (issue #6) and export it to ONNX for tract
(models/corners3d.onnx).

    python3 scripts/train_corners3d.py --data work-tmp/r3d/train --val work-tmp/r3d/test \
        --epochs 12 --seed 1 --ckpt work-tmp/r3d/corners.pt --onnx models/corners3d.onnx

Data: the renders of scripts/render_3d.py (NAME.jpg + NAME.json: `corners` and the camera matrix
`P`). Seeded and resumable (a checkpoint after every epoch; rerunning continues).

Contract: input float32 [1, 3, 256, 256], RGB 0..1, the whole photo resized to 256 x 256 (aspect
not kept); output [1, 2, 128, 128] logits, one pixel per 2 input pixels: channel 0 peaks at the
playing area's four outer corners, channel 1 at all 81 points of the 9 x 9 lattice of square
corners (the four outer corners included). The board's lattice is then fitted to the peaks in
Rust (src/board/physical.rs). Corner order is not predicted: which corner is a1 is decided from
the pieces.
"""
import glob
import json
import math
import os
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from train_common import arg_parser, grey_blur_noise, resume, save, seed_all  # noqa: E402

S = 256      # input side
R = 64       # output side
SIGMA = 1.0  # target peak width, output pixels


def block(cin, cout, stride=1, dil=1):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, stride, padding=dil, dilation=dil, bias=False),
                         nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


class CornerNet(nn.Module):
    """A small U-Net: 256 -> 8 px of context, back up to 64."""

    def __init__(self):
        super().__init__()
        self.e1 = block(3, 16, 2)                                         # 128
        self.e2 = nn.Sequential(block(16, 32, 2), block(32, 32))         # 64
        self.e3 = nn.Sequential(block(32, 48, 2), block(48, 48))         # 32
        self.e4 = nn.Sequential(block(48, 64, 2), block(64, 64))         # 16
        self.e5 = nn.Sequential(block(64, 96, 2), block(96, 96, dil=2), block(96, 96, dil=2))  # 8
        self.d4 = block(96 + 64, 64)
        self.d3 = block(64 + 48, 48)
        self.d2 = nn.Sequential(block(48 + 32, 32), block(32, 32))
        self.head = nn.Conv2d(32, 4, 1)
        self.head.bias.data[:2].fill_(-4.0)

    def forward(self, x):
        x = x - 0.5
        e1 = self.e1(x)
        e2 = self.e2(e1)
        e3 = self.e3(e2)
        e4 = self.e4(e3)
        e5 = self.e5(e4)
        up = lambda a, b: torch.cat([F.interpolate(a, size=b.shape[-2:], mode="bilinear", align_corners=False), b], 1)  # noqa: E731
        d = self.d4(up(e5, e4))
        d = self.d3(up(d, e3))
        d = self.d2(up(d, e2))
        return self.head(d)


def lattice_points(P):
    P = np.array(P)
    pts = []
    for y in range(9):
        for x in range(9):
            v = P @ np.array([x, y, 0, 1.0])
            pts.append(v[:2] / v[2])
    return np.array(pts, np.float32)


def load(dirs, limit=0, skip=()):
    """Renders of `dirs` (sorted by name, those in `skip` left out): images resized to S x S
    and their 81 lattice points. Returns (images, points, names)."""
    ims, pts = [], []
    files = sorted(f for d in dirs for f in glob.glob(os.path.join(d, "*.json")) if f not in skip)
    if limit:
        files = files[:limit]
    for f in files:
        j = json.load(open(f))
        im = Image.open(f[:-5] + ".jpg").convert("RGB")
        w, h = im.size
        ims.append(np.asarray(im.resize((S, S), Image.BILINEAR)))
        p = lattice_points(j["P"])
        p[:, 0] *= S / w
        p[:, 1] *= S / h
        pts.append(p)
    if not ims:
        return np.zeros((0, S, S, 3), np.uint8), np.zeros((0, 81, 2), np.float32), files
    return np.stack(ims), np.stack(pts), files


CORNER_IDX = [0, 8, 80, 72]


def heatmaps(pts, valid):
    """pts (B, 81, 2) in input pixels -> (B, 2, R, R) Gaussian peaks (max over points)."""
    B = pts.shape[0]
    g = torch.arange(R, dtype=torch.float32) + 0.5
    p = pts * (R / S)
    dx = (g.view(1, 1, R) - p[:, :, 0:1]) ** 2            # B, 81, R
    dy = (g.view(1, 1, R) - p[:, :, 1:2]) ** 2
    v = valid.float().view(B, 81, 1, 1)
    m = torch.exp(-(dy.unsqueeze(3) + dx.unsqueeze(2)) / (2 * SIGMA ** 2)) * v   # B, 81, R, R
    corners = m[:, CORNER_IDX].amax(1)
    lattice = m.amax(1)
    return torch.stack([corners, lattice], 1)


def offsets(pts, valid):
    """Each point's offset from its cell's centre (B, 2, R, R) and where it is defined."""
    B = pts.shape[0]
    p = pts * (R / S)
    cell = p.floor().long().clamp(0, R - 1)
    off = p - cell.float() - 0.5
    tgt = torch.zeros(B, 2, R, R)
    mask = torch.zeros(B, 1, R, R)
    for b in range(B):
        v = valid[b]
        tgt[b, 0, cell[b, v, 1], cell[b, v, 0]] = off[b, v, 0]
        tgt[b, 1, cell[b, v, 1], cell[b, v, 0]] = off[b, v, 1]
        mask[b, 0, cell[b, v, 1], cell[b, v, 0]] = 1
    return tgt, mask


def loss_fn(out, pts, valid):
    hm = heatmaps(pts, valid)
    tgt, mask = offsets(pts, valid)
    l1 = ((out[:, 2:4] - tgt).abs() * mask).sum() / mask.sum().clamp(min=1)
    return focal_loss(out[:, :2], hm) + l1


def focal_loss(logits, target):
    """CenterNet's penalty-reduced focal loss on Gaussian targets."""
    p = torch.sigmoid(logits).clamp(1e-4, 1 - 1e-4)
    pos = target.ge(0.99).float()
    neg = 1 - pos
    pl = -torch.log(p) * (1 - p) ** 2 * pos
    nl = -torch.log(1 - p) * p ** 2 * (1 - target) ** 4 * neg
    n = pos.sum().clamp(min=1)
    return (pl.sum() + nl.sum()) / n


def augment(x, pts, g):
    """Random affine (scale, rotation, shift, mirror) applied to images and points, then colour,
    blur and noise. x (B,3,S,S) float 0..1, pts (B,81,2)."""
    B = x.shape[0]
    sc = torch.empty(B).uniform_(0.75, 1.3, generator=g)
    rot = torch.empty(B).uniform_(-0.35, 0.35, generator=g)
    tx = torch.empty(B).uniform_(-0.15, 0.15, generator=g)
    ty = torch.empty(B).uniform_(-0.15, 0.15, generator=g)
    flip = (torch.rand(B, generator=g) < 0.5).float() * -2 + 1
    # output normalised coord u -> input coord A u + t (affine_grid convention)
    c, s = torch.cos(rot), torch.sin(rot)
    A = torch.stack([torch.stack([c * flip, -s], 1), torch.stack([s * flip, c], 1)], 1) / sc.view(B, 1, 1)
    t = torch.stack([tx, ty], 1)
    theta = torch.cat([A, t.unsqueeze(2)], 2)
    grid = F.affine_grid(theta, x.shape, align_corners=False)
    x = F.grid_sample(x, grid, mode="bilinear", padding_mode="reflection", align_corners=False)
    # points: input normalised q -> output u = A^-1 (q - t)
    q = pts / S * 2 - 1
    u = torch.linalg.solve(A, (q - t.unsqueeze(1)).transpose(1, 2)).transpose(1, 2)
    pts = (u + 1) / 2 * S
    valid = (pts[..., 0] >= 0) & (pts[..., 0] < S) & (pts[..., 1] >= 0) & (pts[..., 1] < S)
    # colour
    gain = torch.empty(B, 3, 1, 1).uniform_(0.75, 1.25, generator=g)
    x = x * gain * torch.empty(B, 1, 1, 1).uniform_(0.6, 1.3, generator=g)
    mean = x.mean((1, 2, 3), keepdim=True)
    x = (x - mean) * torch.empty(B, 1, 1, 1).uniform_(0.6, 1.4, generator=g) + mean
    x = grey_blur_noise(x, g, 0.15, 0.05)
    return x.clamp(0, 1), pts, valid


def train_epoch(model, opt, sched, ims, pts, batches, g):
    """One pass over `batches` (index arrays into ims/pts) with augmentation; the summed loss."""
    tot = 0.0
    for idx in batches:
        x = torch.from_numpy(ims[idx]).permute(0, 3, 1, 2).float() / 255
        p = torch.from_numpy(pts[idx])
        x, p, valid = augment(x, p, g)
        loss = loss_fn(model(x), p, valid)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        tot += loss.item()
    return tot


def peaks(hm, off, k):
    """Top k local maxima of one (R,R) map, as input-pixel coordinates."""
    mx = F.max_pool2d(hm[None, None], 3, 1, 1)[0, 0]
    keep = (hm == mx) & (hm > 0.1)
    ys, xs = torch.nonzero(keep, as_tuple=True)
    v = hm[ys, xs]
    o = torch.argsort(v, descending=True)[:k]
    ys, xs = ys[o], xs[o]
    return torch.stack([xs + 0.5 + off[0, ys, xs], ys + 0.5 + off[1, ys, xs]], 1).float() * (S / R)


def evaluate(model, ims, pts, bs=32):
    """Share of images whose 4 strongest corner peaks each lie within 3 px (of 256) of a true
    corner, and the mean distance of matched corners."""
    model.eval()
    good, dists = 0, []
    with torch.no_grad():
        for i in range(0, len(ims), bs):
            x = torch.from_numpy(ims[i:i + bs]).permute(0, 3, 1, 2).float() / 255
            out = model(x)
            hm = torch.sigmoid(out[:, :2])
            for b in range(x.shape[0]):
                pk = peaks(hm[b, 0], out[b, 2:4], 4)
                true = torch.from_numpy(pts[i + b][CORNER_IDX])
                if len(pk) < 4:
                    continue
                d = torch.cdist(true, pk).min(1).values
                dists += d.tolist()
                good += int((d < 3).all())
    model.train()
    return good / len(ims), float(np.mean(dists)) if dists else float("nan")


def export(model, path, check):
    model.eval()
    x = torch.from_numpy(check).permute(2, 0, 1).unsqueeze(0).float() / 255
    torch.onnx.export(model, x, path, input_names=["image"], output_names=["heatmaps"], opset_version=17,
                      dynamo=False)
    with torch.no_grad():
        out = model(x).numpy().ravel()
    Image.fromarray(check).save(path.replace(".onnx", ".check-in.png"))
    np.savetxt(path.replace(".onnx", ".check-out.txt"), out[::97], fmt="%.5f")
    print(f"exported {path} ({os.path.getsize(path) / 1e6:.2f} MB)", flush=True)
    model.train()


def main():
    ap = arg_parser(12, "work-tmp/r3d/corners.pt", "models/corners3d.onnx", bs=16, lr=2e-3)
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--steps", type=int, default=0,
                    help="steps per epoch (default: one pass over the data); with --grow, new renders "
                         "in the data folders join at each epoch (training while the renderer runs)")
    ap.add_argument("--grow", action="store_true")
    a = ap.parse_args()
    seed_all(a)
    ims, pts, seen = load(a.data, a.limit)
    vims, vpts, _ = load(a.val) if a.val else (ims[:64], pts[:64], None)
    print(f"{len(ims)} training photos, {len(vims)} validation", flush=True)
    model = CornerNet()
    print(f"{sum(p.numel() for p in model.parameters())} parameters", flush=True)
    steps = a.steps or len(ims) // a.bs
    opt = torch.optim.AdamW(model.parameters(), lr=a.lr, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, a.lr, total_steps=a.epochs * steps, pct_start=0.15)
    start, history = resume(model, opt, sched, a.init, a.ckpt)
    g = torch.Generator().manual_seed(a.seed)
    for ep in range(start, a.epochs):
        if a.grow:
            more, mpts, new = load(a.data, 0, set(seen))
            if len(new):
                ims, pts, seen = np.concatenate([ims, more]), np.concatenate([pts, mpts]), seen + new
                print(f"{len(ims)} training photos", flush=True)
        g.manual_seed(a.seed * 1000 + ep)
        order = torch.randperm(len(ims), generator=g)
        t0 = time.time()
        batches = (order[(s * a.bs) % len(ims):(s * a.bs) % len(ims) + a.bs].numpy() for s in range(steps))
        tot = train_epoch(model, opt, sched, ims, pts, batches, g)
        acc, dist = evaluate(model, vims, vpts)
        history.append({"epoch": ep + 1, "loss": tot / steps, "val_exact4": acc, "val_dist": dist})
        print(f"epoch {ep + 1}: loss {tot / steps:.3f}, val corners all within 3 px {acc:.3f}, "
              f"mean {dist:.2f} px, {time.time() - t0:.0f} s", flush=True)
        save(model, opt, sched, ep + 1, history, a.ckpt)
    export(model, a.onnx, vims[0])
    json.dump(history, open(a.ckpt + ".history.json", "w"), indent=1)


if __name__ == "__main__":
    main()
