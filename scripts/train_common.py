# SPDX-License-Identifier: GPL-3.0-or-later
"""Shared by the training scripts (train_cells.py, train_squares.py, train_words.py,
train_corners3d.py, train_pieces3d.py):
checkpointing — resume a run after its last finished epoch, or start from another run's
weights, and save each epoch atomically (temp file + rename), so a killed run loses at most the
epoch in progress — and the epoch loop of the CTC recognizers."""
import json
import os
import time

import numpy as np
import torch
import torch.nn as nn


def resume(model, opt, sched, init, ckpt):
    """Loads `ckpt` (model, optimiser, schedule) when it exists, else `init`'s weights when
    given. Returns (first epoch to run, history of the finished epochs)."""
    if init and not os.path.exists(ckpt):
        model.load_state_dict(torch.load(init, weights_only=False)["model"])
        print(f"weights from {init}", flush=True)
    if not os.path.exists(ckpt):
        return 0, []
    st = torch.load(ckpt, weights_only=False)
    model.load_state_dict(st["model"])
    opt.load_state_dict(st["opt"])
    sched.load_state_dict(st["sched"])
    print(f"resumed after epoch {st['epoch']}", flush=True)
    return st["epoch"], st["history"]


def save(model, opt, sched, epochs_done, history, ckpt):
    """Writes the checkpoint after `epochs_done` epochs, atomically."""
    os.makedirs(os.path.dirname(os.path.abspath(ckpt)), exist_ok=True)
    torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "sched": sched.state_dict(),
                "epoch": epochs_done, "history": history}, ckpt + ".tmp")
    os.replace(ckpt + ".tmp", ckpt)


def arg_parser(epochs, ckpt, onnx, bs=64, lr=2e-3):
    """The command line every training script takes: data and validation sets, schedule,
    seed, threads, checkpoint, export path, start weights."""
    import argparse

    ap = argparse.ArgumentParser()
    ap.add_argument("--data", nargs="+", required=True)
    ap.add_argument("--val", nargs="*", default=[])
    ap.add_argument("--epochs", type=int, default=epochs)
    ap.add_argument("--bs", type=int, default=bs)
    ap.add_argument("--lr", type=float, default=lr)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--ckpt", default=ckpt)
    ap.add_argument("--onnx", default=onnx)
    ap.add_argument("--init", help="start from this checkpoint's weights (new optimizer and schedule)")
    return ap


def ctc_arg_parser(epochs, ckpt, onnx):
    """[arg_parser] of the CTC training scripts, with a smoke-test step limit."""
    ap = arg_parser(epochs, ckpt, onnx)
    ap.add_argument("--max-steps", type=int, default=0, help="stop after this many steps (smoke test)")
    return ap


def grey_blur_noise(x, g, grey, noise):
    """The end of the photo augmentations of a batch `x` (B, 3, H, W, in 0..1), drawing from
    generator `g`: a share `grey` of the images made grey, 30 % blurred by a 3 x 3 binomial
    kernel, then Gaussian noise of a deviation up to `noise`."""
    import torch.nn.functional as F

    B = x.shape[0]
    grey = (torch.rand(B, 1, 1, 1, generator=g) < grey).float()
    x = grey * x.mean(1, keepdim=True).expand_as(x) + (1 - grey) * x
    blur = torch.rand(B, generator=g) < 0.3
    if blur.any():
        k = torch.tensor([1.0, 2.0, 1.0])
        k = (k[:, None] * k[None, :] / 16).view(1, 1, 3, 3).repeat(3, 1, 1, 1)
        x[blur] = F.conv2d(F.pad(x[blur], (1, 1, 1, 1), mode="replicate"), k, groups=3)
    return x + torch.randn(x.shape, generator=g) * torch.empty(B, 1, 1, 1).uniform_(0, noise, generator=g)


def seed_all(a):
    """Seeds torch, random and numpy with `a.seed` and sets `a.threads` torch threads."""
    import random

    torch.manual_seed(a.seed)
    random.seed(a.seed)
    np.random.seed(a.seed)
    torch.set_num_threads(a.threads)


def train_ctc(model, a, ims, labs, vals, encode, evaluate, export, augment=None):
    """Trains a CTC recognizer for `a.epochs` epochs of `len(labs) // a.bs` steps (AdamW,
    one-cycle lr `a.lr`, gradient clip 5, batch order seeded by `a.seed` and the epoch),
    evaluating on `vals` and saving + exporting after every epoch; resumes from `a.ckpt`.
    `augment(x, g)` (optional) changes each batch, with a generator seeded by `a.seed`.
    Images are uint8 (N, H, W); labels are strings `encode` turns into class indices."""
    opt = torch.optim.AdamW(model.parameters(), lr=a.lr, weight_decay=1e-4)
    steps_per_epoch = len(labs) // a.bs
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=a.lr, total_steps=a.epochs * steps_per_epoch,
                                                pct_start=0.1)
    ctc = nn.CTCLoss(blank=0, zero_infinity=True)
    start_epoch, history = resume(model, opt, sched, a.init, a.ckpt)
    g = torch.Generator().manual_seed(a.seed)
    for epoch in range(start_epoch, a.epochs):
        perm = np.random.default_rng(a.seed * 1000 + epoch).permutation(len(labs))
        t0, tot, n = time.time(), 0.0, 0
        for s in range(steps_per_epoch):
            idx = perm[s * a.bs:(s + 1) * a.bs]
            x = torch.from_numpy(ims[idx]).float().unsqueeze(1) / 255.0
            if augment is not None:
                x = augment(x, g)
            targets = [encode(labs[i]) for i in idx]
            tl = torch.tensor([len(t) for t in targets], dtype=torch.long)
            flat = torch.tensor([c for t in targets for c in t], dtype=torch.long)
            logp = model(x)
            il = torch.full((len(idx),), logp.shape[0], dtype=torch.long)
            loss = ctc(logp, flat, il, tl)
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            opt.step()
            sched.step()
            tot += loss.item()
            n += 1
            if s % 200 == 0:
                print(f"epoch {epoch + 1} step {s}/{steps_per_epoch} loss {tot / n:.4f} "
                      f"{(time.time() - t0) / (s + 1):.3f}s/step", flush=True)
            if a.max_steps and s + 1 >= a.max_steps:
                break
        rec = {"epoch": epoch + 1, "loss": tot / max(1, n), "seconds": time.time() - t0}
        for k, (vi, vl) in vals.items():
            rec[k] = evaluate(model, vi, vl)
        history.append(rec)
        print(json.dumps(rec), flush=True)
        save(model, opt, sched, epoch + 1, history, a.ckpt)
        export(model, a.onnx, a.ckpt, history)
        model.train()
        if a.max_steps:
            break


def init_from_onnx(model, path):
    """Loads the weights of an exported model, whose batch norms the export folded into its
    convs. The convs are matched to the graph's Conv nodes in order. A conv followed by a
    batch norm gets the folded kernel, and its batch norm becomes the identity plus the folded
    bias; a conv without one gets the bias itself. Other weights (linear layers) are copied by
    name. Train such a model with its batch norms frozen (`freeze_bn`)."""
    import onnx
    from onnx import numpy_helper
    g = onnx.load(path).graph
    w = {i.name: numpy_helper.to_array(i) for i in g.initializer}
    convs = [n for n in g.node if n.op_type == "Conv"]
    mods = [m for m in model.modules() if isinstance(m, (nn.Conv2d, nn.BatchNorm2d))]
    pairs, i = [], 0
    while i < len(mods):
        bn = mods[i + 1] if i + 1 < len(mods) and isinstance(mods[i + 1], nn.BatchNorm2d) else None
        pairs.append((mods[i], bn))
        i += 2 if bn is not None else 1
    assert len(pairs) == len(convs), (len(pairs), len(convs))
    params = dict(model.named_parameters())
    with torch.no_grad():
        for node, (conv, bn) in zip(convs, pairs):
            conv.weight.copy_(torch.from_numpy(w[node.input[1]].copy()))
            b = torch.from_numpy(w[node.input[2]].copy())
            if bn is None:
                conv.bias.copy_(b)
            else:
                bn.weight.fill_(1.0)
                bn.bias.copy_(b)
                bn.running_mean.zero_()
                bn.running_var.fill_(1.0 - bn.eps)
        for k, v in w.items():
            if k in params:
                params[k].copy_(torch.from_numpy(v.copy()))


def freeze_bn(model):
    """Puts every batch norm of `model` in eval mode (its statistics stay as they are)."""
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.eval()
