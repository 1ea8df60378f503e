#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Train the cell recognizer on a large synthetic pool, made on the spot by many processes,
then fine-tune it with real cells mixed in: the one-script run for a machine with many cores
and a GPU (it also runs on a CPU, slowly).

    python3 scripts/train_cells_pool.py --workers 15 --shards 180 --shard-size 2000 \\
        --steps 7000 --tune-steps 3000 --tune real=work-tmp/cells/dev-odd.npz \\
        --val work-tmp/cells/test-tr.npz work-tmp/cells/test-en.npz work-tmp/cells/dev-even.npz \\
        --out work-tmp/cells/v4

1. **Pool**: `--shards` shards of `--shard-size` cells (`cells_synth.generate`, training fonts,
   shard k seeded by `--seed` × 100000 + k), made by `--workers` processes. The pool is fixed
   by the seed and the shard count, whatever the number of workers.
2. **Synthetic stage**: `--steps` steps of `--bs` cells (AdamW, one-cycle lr `--lr`, the
   random shift/scale of `train_cells.augment_batch`), from scratch or `--init`. Exported as
   OUT-synth.onnx.
3. **Fine-tuning stages**, one per `--tune NAME=NPZ`, each from the synthetic stage's weights:
   `--tune-steps` more steps (cosine lr from `--tune-lr`) where `--extra-share` of each batch
   comes from those real cells. Exported as OUT-NAME.onnx (with the check pair
   OUT-NAME.check-in.txt / OUT-NAME.check-out.txt for the Rust test).

Each stage is evaluated on the `--val` sets (greedy decoding, cells read exactly, CER), and
everything is logged to OUT.log and OUT.json. Batch order and augmentation are seeded; a GPU's
CTC backward pass is not bit-for-bit deterministic.
"""
import argparse
import json
import math
import multiprocessing as mp
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def make_shard(job):
    """Worker: one pool shard, written to its file (temp + rename)."""
    k, a = job
    import cells_synth as cs

    path = os.path.join(a.pool, f"shard-{k:05d}.npz")
    if os.path.exists(path):
        return path
    if not hasattr(make_shard, "ctx"):
        fonts = cs.load_fonts("train")
        moves = cs.load_moves(a.games, a.max_games)
        make_shard.ctx = (fonts, moves, cs.load_hcs())
    fonts, moves, hcs = make_shard.ctx
    ims, labs = cs.generate(a.shard_size, a.seed * 100000 + k, "mix", fonts, moves, hcs)
    np.savez(path + ".tmp.npz", images=ims, labels=np.array(labs, dtype=object))
    os.replace(path + ".tmp.npz", path)
    return path


def log(fh, msg):
    print(msg, flush=True)
    fh.write(msg + "\n")
    fh.flush()


def main():
    import cells_synth as cs

    ap = argparse.ArgumentParser()
    ap.add_argument("--pool", default="work-tmp/cells/pool")
    ap.add_argument("--workers", type=int, default=max(1, os.cpu_count() - 1))
    ap.add_argument("--shards", type=int, default=180)
    ap.add_argument("--shard-size", type=int, default=2000)
    ap.add_argument("--games", nargs="*", default=cs.default_games())
    ap.add_argument("--max-games", type=int, default=4000)
    ap.add_argument("--gen-seconds", type=float, default=0,
                    help="stop making shards after this many seconds (0: make them all); logged")
    ap.add_argument("--steps", type=int, default=7000)
    ap.add_argument("--tune-steps", type=int, default=3000)
    ap.add_argument("--bs", type=int, default=256)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--tune-lr", type=float, default=5e-4)
    ap.add_argument("--tune", action="append", default=[], metavar="NAME=NPZ[,NPZ...]",
                    help="a fine-tuning stage, from the synthetic stage's weights, with these real cells "
                         "mixed in; written as OUT-NAME.onnx (repeatable)")
    ap.add_argument("--extra-share", type=float, default=0.05)
    ap.add_argument("--val", nargs="*", default=[])
    ap.add_argument("--init", help="start the synthetic stage from this checkpoint's weights")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--train-seconds", type=float, default=0, help="end each stage early after this long (logged)")
    ap.add_argument("--out", required=True, help="path prefix of the outputs")
    a = ap.parse_args()
    os.makedirs(a.pool, exist_ok=True)
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    fh = open(a.out + ".log", "a")
    report = {"args": vars(a)}

    # 1. the pool, made before torch starts (forked workers, no CUDA state in them)
    t0 = time.time()
    paths = []
    with mp.get_context("fork").Pool(a.workers) as pool:
        it = pool.imap(make_shard, [(k, a) for k in range(a.shards)])
        for k in range(a.shards):
            if a.gen_seconds and time.time() - t0 > a.gen_seconds:
                log(fh, f"pool: stopped after {k} shards at {time.time() - t0:.0f} s (--gen-seconds)")
                pool.terminate()
                break
            paths.append(it.next())
            if (k + 1) % 10 == 0:
                log(fh, f"pool: {k + 1}/{a.shards} shards, {time.time() - t0:.0f} s")
    report["pool"] = {"shards": len(paths), "cells": len(paths) * a.shard_size, "seconds": time.time() - t0}
    log(fh, json.dumps(report["pool"]))

    import torch
    import torch.nn as nn
    from train_cells import CRNN, augment_batch, encode, evaluate

    torch.manual_seed(a.seed)
    dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    log(fh, f"device {dev} {torch.cuda.get_device_name(0) if dev.type == 'cuda' else ''}")

    def load(ps):
        ims, labs = [], []
        for p in ps:
            z = np.load(p, allow_pickle=True)
            ims.append(z["images"])
            labs.extend(str(t) for t in z["labels"])
        return np.concatenate(ims), labs

    ims, labs = load(paths)
    x_all = torch.from_numpy(ims).to(dev)  # uint8 on the device
    enc = [encode(t) for t in labs]
    tunes = []
    for spec in a.tune:
        name, files = spec.split("=", 1)
        ei, el = load(files.split(","))
        tunes.append((name, torch.from_numpy(ei).to(dev), [encode(t) for t in el]))
    vals = {os.path.basename(p): load([p]) for p in a.val}

    model = CRNN().to(dev)
    if a.init:
        model.load_state_dict(torch.load(a.init, weights_only=False, map_location="cpu")["model"])
    log(fh, f"train pool {len(labs)} cells, real {[(t[0], len(t[2])) for t in tunes]}, parameters "
            f"{sum(p.numel() for p in model.parameters())}")
    ctc = nn.CTCLoss(blank=0, zero_infinity=True)
    g = torch.Generator().manual_seed(a.seed)
    rng = np.random.default_rng(a.seed)

    def stage(name, steps, lr, extra, extra_share, onecycle):
        extra_x, extra_enc = extra if extra else (None, [])
        opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-4)
        if onecycle:
            sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=steps, pct_start=0.1)
        else:
            sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 0.5 * (1 + math.cos(math.pi * s / steps)))
        n_extra = int(round(a.bs * extra_share)) if extra_x is not None else 0
        t1, done = time.time(), 0
        model.train()
        for s in range(steps):
            idx = rng.integers(0, len(enc), a.bs - n_extra)
            xb = x_all[torch.from_numpy(idx).to(dev)]
            tg = [enc[i] for i in idx]
            if n_extra:
                eidx = rng.integers(0, len(extra_enc), n_extra)
                xb = torch.cat([xb, extra_x[torch.from_numpy(eidx).to(dev)]])
                tg += [extra_enc[i] for i in eidx]
            x = xb.float().unsqueeze(1) / 255.0
            x = augment_batch(x, g)
            tl = torch.tensor([len(t) for t in tg], dtype=torch.long)
            flat = torch.tensor([c for t in tg for c in t], dtype=torch.long)
            logp = model(x)
            il = torch.full((len(tg),), logp.shape[0], dtype=torch.long)
            loss = ctc(logp.float(), flat.to(dev), il.to(dev), tl.to(dev))
            opt.zero_grad(set_to_none=True)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            opt.step()
            sched.step()
            done = s + 1
            if s % 500 == 0:
                log(fh, f"{name} step {s}/{steps} loss {loss.item():.4f} {(time.time() - t1) / (s + 1) * 1000:.1f} ms/step")
            if a.train_seconds and time.time() - t1 > a.train_seconds:
                log(fh, f"{name}: stopped at step {done} of {steps} (--train-seconds)")
                break
        rec = {"steps": done, "seconds": time.time() - t1,
               "val": {k: evaluate(model, vi, vl, bs=1024, device=dev) for k, (vi, vl) in vals.items()}}
        log(fh, f"{name}: " + json.dumps(rec))
        return rec

    report["synth"] = stage("synth", a.steps, a.lr, None, 0.0, True)
    save_and_export(model, a.out + "-synth", report, torch)
    synth_weights = {k: v.clone() for k, v in model.state_dict().items()}
    for name, ex, ee in tunes:
        model.load_state_dict(synth_weights)
        report["tune-" + name] = stage("tune-" + name, a.tune_steps, a.tune_lr, (ex, ee), a.extra_share, False)
        save_and_export(model, f"{a.out}-{name}", report, torch)
    with open(a.out + ".json", "w") as out:
        json.dump(report, out, indent=1)
    log(fh, "done")


def save_and_export(model, prefix, report, torch):
    from train_cells import export

    dev = next(model.parameters()).device
    model.cpu()
    torch.save({"model": model.state_dict(), "report": report}, prefix + ".pt")
    try:
        export(model, prefix + ".onnx", prefix + ".pt", report)
    except Exception as e:  # the weights are saved: export them again elsewhere
        print(f"export of {prefix} failed: {e!r}", flush=True)
    model.to(dev)


if __name__ == "__main__":
    main()
