#!/usr/bin/env python3
"""Train the chess square classifier and export it to ONNX for tract (models/squares.onnx).

Phase 1, synthetic only (the shipped model's first stage):
    python3 scripts/train_squares.py --data work-tmp/boards/synth-1.npz work-tmp/boards/synth-2.npz \
        work-tmp/boards/synth-3.npz --val work-tmp/boards/synth-val.npz --epochs 5 --lr 3e-3 --seed 1 \
        --ckpt work-tmp/boards/syn.pt --onnx work-tmp/boards/squares-syn.onnx
Phase 2, fine-tune with the real squares-3lc training crops mixed in (x4; synthetic kept):
    python3 scripts/train_squares.py --data work-tmp/boards/synth-{1,2,3,4}.npz \
        --val work-tmp/boards/synth-val.npz --real-train 4 --init work-tmp/boards/syn.pt \
        --epochs 3 --lr 1e-3 --seed 2 --ckpt work-tmp/boards/final.pt --onnx models/squares.onnx

Seeded and resumable: the checkpoint (model, optimizer, scheduler, epoch) is written after every
epoch and rerunning the same command continues after the last finished epoch. Every epoch reports
accuracy on the synthetic validation shard and on squares-3lc/validation (never trained on).

Contract: input float32 [64, 1, S, S] grey 0..1 (S = 32), one board square per crop (margin 0,
bilinear resize); the graph normalises each crop itself; output [64, 13] logits in the class order
0 empty, 1..6 white P N B R Q K, 7..12 black p n b r q k.
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
from PIL import Image

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from boards_synth import S  # noqa: E402
from train_common import freeze_bn, init_from_onnx, resume, save, seed_all  # noqa: E402
from split_pools import split_pools_file  # noqa: E402

CLASSES = ["empty", "P", "N", "B", "R", "Q", "K", "p", "n", "b", "r", "q", "k"]
REAL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "data", "boards", "train",
                    "squares-3lc")
REAL_DIRS = {"f": 0, "P": 1, "N": 2, "B": 3, "R": 4, "Q": 5, "K": 6,
             "_p": 7, "_n": 8, "_b": 9, "_r": 10, "_q": 11, "_k": 12}


class SquareNet(nn.Module):
    def __init__(self):
        super().__init__()

        def block(cin, cout):
            return [nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True)]

        self.conv = nn.Sequential(
            *block(1, 16), nn.MaxPool2d(2),    # 16x16
            *block(16, 32), nn.MaxPool2d(2),   # 8x8
            *block(32, 64), nn.MaxPool2d(2),   # 4x4
            *block(64, 64),
        )
        self.head = nn.Sequential(nn.Flatten(), nn.Dropout(0.2), nn.Linear(64 * 4 * 4, 128), nn.ReLU(inplace=True),
                                  nn.Linear(128, 13))

    def forward(self, x):
        # x: (B, 1, S, S) grey 0..1; per-crop normalisation inside the graph
        mean = x.mean(dim=(2, 3), keepdim=True)
        std = ((x - mean) ** 2).mean(dim=(2, 3), keepdim=True).sqrt()
        x = (x - mean) / (std + 0.05)
        return self.head(self.conv(x))


def load_real(split):
    ims, labs = [], []
    for d, k in REAL_DIRS.items():
        for f in sorted(glob.glob(os.path.join(REAL, split, d, "*"))):
            im = Image.open(f).convert("L")
            if im.size != (S, S):
                im = im.resize((S, S), Image.BILINEAR)
            ims.append(np.asarray(im))
            labs.append(k)
    return np.stack(ims), np.array(labs, np.uint8)


FEN_CLASS = {c: k for k, c in enumerate(CLASSES) if k}


def placement_classes(placement):
    """A FEN placement (top row first) as 64 class indices, row-major from the top left."""
    out = []
    for row in placement.split("/"):
        for ch in row:
            out.extend([0] * int(ch) if ch.isdigit() else [FEN_CLASS[ch]])
    if len(out) != 64:
        raise ValueError(f"bad placement {placement}")
    return np.array(out, np.uint8).reshape(8, 8)


def load_boards(prefix, views=7):
    """Crops of labelled real boards cut by hamle (`cargo run --release --example dump_squares --
    DIR PREFIX`): PREFIX.u8 holds `views` x 64 crops per board, PREFIX.tsv name, placement and the
    model's argmax on the found box. Boards whose box is off are left out: those where the label
    moved by one rank or file agrees with the model better than the label itself, or where
    fewer than 48 squares agree."""
    raw = np.fromfile(prefix + ".u8", np.uint8).reshape(-1, views, 64, S, S)
    ims, labs, kept, off = [], [], 0, []
    for b, line in enumerate(open(prefix + ".tsv", encoding="utf-8")):
        name, placement, pred = line.rstrip("\n").split("\t")
        lab = placement_classes(placement)
        pred = np.array([int(v) for v in pred.split(",")]).reshape(8, 8)
        agree = int((lab == pred).sum())
        shifted = []
        for axis in (0, 1):
            for d in (-1, 1):
                m = np.roll(lab, d, axis=axis)
                if axis == 0:
                    m[0 if d == 1 else 7, :] = 0
                else:
                    m[:, 0 if d == 1 else 7] = 0
                shifted.append(int((m == pred).sum()))
        if agree < 48 or max(shifted) > agree:
            off.append(name)
            continue
        kept += 1
        ims.append(raw[b].reshape(-1, S, S))
        labs.append(np.tile(lab.ravel(), views))
    print(f"{prefix}: {kept} boards kept, {len(off)} left out (box off): {off}", flush=True)
    return np.concatenate(ims), np.concatenate(labs).astype(np.uint8)


def load_npz(paths):
    ims, labs = [], []
    for p in paths:
        z = np.load(p)
        ims.append(z["images"])
        labs.append(z["labels"])
    return np.concatenate(ims), np.concatenate(labs)


def augment(x, g):
    """Photometric variation and mirror (a mirrored piece keeps its class)."""
    b = x.shape[0]
    flip = torch.rand(b, generator=g) < 0.5
    x = torch.where(flip[:, None, None, None], x.flip(3), x)
    gam = torch.exp(torch.empty(b, 1, 1, 1).uniform_(-0.4, 0.4, generator=g))
    x = x.clamp(0, 1) ** gam
    c = torch.empty(b, 1, 1, 1).uniform_(0.6, 1.2, generator=g)
    o = torch.empty(b, 1, 1, 1).uniform_(-0.15, 0.15, generator=g)
    x = (x - 0.5) * c + 0.5 + o
    nz = torch.empty(b, 1, 1, 1).uniform_(0, 0.04, generator=g)
    x = x + torch.randn(x.shape, generator=g) * nz
    return x.clamp(0, 1)


def evaluate(model, ims, labs, bs=512):
    model.eval()
    pred = []
    with torch.no_grad():
        for i in range(0, len(labs), bs):
            x = torch.from_numpy(ims[i:i + bs]).float().unsqueeze(1) / 255.0
            pred.append(model(x).argmax(1).numpy())
    model.train()
    pred = np.concatenate(pred)
    per = {CLASSES[k]: round(float((pred[labs == k] == k).mean()), 4) for k in range(13) if (labs == k).any()}
    conf = np.zeros((13, 13), int)
    np.add.at(conf, (labs, pred), 1)
    return {"acc": round(float((pred == labs).mean()), 4), "n": int(len(labs)), "per_class": per,
            "confusion": conf.tolist()}


def export(model, onnx_path, check_x):
    model.eval()
    x = torch.from_numpy(check_x).float().unsqueeze(1) / 255.0  # (64, 1, S, S)
    x = torch.from_numpy(np.array([float(f"{v:.6f}") for v in x.numpy().ravel()], np.float32).reshape(x.shape))
    torch.onnx.export(model, x, onnx_path, input_names=["squares"], output_names=["logits"], opset_version=17,
                      dynamo=False)
    split_pools_file(onnx_path)  # the same values, faster in tract
    with torch.no_grad():
        ref = model(x).numpy()
    np.savetxt(onnx_path.replace(".onnx", ".check-in.txt"), x.numpy().ravel(), fmt="%.6f")
    np.savetxt(onnx_path.replace(".onnx", ".check-out.txt"), ref.ravel(), fmt="%.6f")
    try:
        import onnxruntime as ort
        so = ort.SessionOptions()
        so.intra_op_num_threads = 1
        sess = ort.InferenceSession(onnx_path, so, providers=["CPUExecutionProvider"])
        out = sess.run(None, {"squares": x.numpy()})[0]
        print(f"onnxruntime max |diff| {np.abs(out - ref).max():.2e}", flush=True)
    except ImportError:
        pass
    print(f"exported {onnx_path} ({os.path.getsize(onnx_path) / 1e6:.2f} MB)", flush=True)
    model.train()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", nargs="+", required=True, help="synthetic .npz shards (boards_synth.py)")
    ap.add_argument("--val", nargs="*", default=[])
    ap.add_argument("--real-train", type=int, default=0, help="mix squares-3lc/training in, repeated N times")
    ap.add_argument("--epochs", type=int, default=6)
    ap.add_argument("--bs", type=int, default=128)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--ckpt", default="work-tmp/boards/syn.pt")
    ap.add_argument("--onnx", default="work-tmp/boards/squares-syn.onnx")
    ap.add_argument("--init", help="start from this checkpoint's weights (new optimizer and schedule)")
    ap.add_argument("--max-steps", type=int, default=0)
    ap.add_argument("--init-onnx", help="start from an exported model's weights (use with --freeze-bn)")
    ap.add_argument("--freeze-bn", action="store_true", help="keep the batch norms as they are")
    ap.add_argument("--real-boards", nargs="*", default=[],
                    help="crops of labelled real boards (dump_squares PREFIX), mixed in")
    ap.add_argument("--real-boards-repeat", type=int, default=1)
    a = ap.parse_args()
    seed_all(a)

    ims, labs = load_npz(a.data)
    n_syn = len(labs)
    if a.real_train:
        ri, rl = load_real("training")
        ims = np.concatenate([ims] + [ri] * a.real_train)
        labs = np.concatenate([labs] + [rl] * a.real_train)
    for prefix in a.real_boards:
        bi, bl = load_boards(prefix)
        ims = np.concatenate([ims] + [bi] * a.real_boards_repeat)
        labs = np.concatenate([labs] + [bl] * a.real_boards_repeat)
    vals = {os.path.basename(p): load_npz([p]) for p in a.val}
    if os.path.isdir(os.path.join(REAL, "validation")):
        vals["3lc-validation"] = load_real("validation")
    check_x = (vals[os.path.basename(a.val[0])][0] if a.val else ims)[:64]
    print(f"train {len(labs)} crops ({n_syn} synthetic); per class {np.bincount(labs, minlength=13).tolist()}; "
          f"val {[(k, len(v[1])) for k, v in vals.items()]}", flush=True)
    model = SquareNet()
    print(f"parameters: {sum(p.numel() for p in model.parameters())}", flush=True)
    opt = torch.optim.AdamW(model.parameters(), lr=a.lr, weight_decay=1e-4)
    steps_per_epoch = len(labs) // a.bs
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=a.lr, total_steps=a.epochs * steps_per_epoch,
                                                pct_start=0.15 if not (a.init or a.init_onnx) else 0.05)
    if a.init_onnx:
        init_from_onnx(model, a.init_onnx)
    start_epoch, history = resume(model, opt, sched, a.init, a.ckpt)
    if a.freeze_bn:
        freeze_bn(model)
    g = torch.Generator().manual_seed(a.seed)
    for epoch in range(start_epoch, a.epochs):
        g.manual_seed(a.seed * 1000 + epoch)
        perm = np.random.default_rng(a.seed * 1000 + epoch).permutation(len(labs))
        t0, tot, right, n = time.time(), 0.0, 0, 0
        for s in range(steps_per_epoch):
            idx = np.sort(perm[s * a.bs:(s + 1) * a.bs])
            x = torch.from_numpy(ims[idx]).float().unsqueeze(1) / 255.0
            y = torch.from_numpy(labs[idx].astype(np.int64))
            x = augment(x, g)
            out = model(x)
            loss = F.cross_entropy(out, y, label_smoothing=0.05)
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            tot += loss.item()
            right += (out.argmax(1) == y).sum().item()
            n += 1
            if s % 500 == 0:
                print(f"epoch {epoch + 1} step {s}/{steps_per_epoch} loss {tot / n:.4f} "
                      f"acc {right / (n * a.bs):.4f} {(time.time() - t0) / (s + 1):.3f}s/step", flush=True)
            if a.max_steps and s + 1 >= a.max_steps:
                break
        rec = {"epoch": epoch + 1, "loss": tot / max(1, n), "train_acc": right / max(1, n * a.bs),
               "seconds": round(time.time() - t0)}
        for k, (vi, vl) in vals.items():
            rec[k] = evaluate(model, vi, vl)
            if a.freeze_bn:
                freeze_bn(model)
        history.append(rec)
        print(json.dumps({k: (v if not isinstance(v, dict) else {kk: vv for kk, vv in v.items() if kk != "confusion"})
                          for k, v in rec.items()}), flush=True)
        save(model, opt, sched, epoch + 1, history, a.ckpt)
        with open(a.ckpt + ".history.json", "w") as fh:
            json.dump(history, fh, indent=1)
        export(model, a.onnx, check_x)
        if a.freeze_bn:
            freeze_bn(model)
        if a.max_steps:
            break


if __name__ == "__main__":
    main()
