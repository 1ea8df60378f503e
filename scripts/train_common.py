# SPDX-License-Identifier: GPL-3.0-or-later
"""Checkpointing shared by the training scripts (train_cells.py, train_squares.py): resume a
run after its last finished epoch, or start from another run's weights, and save each epoch
atomically (temp file + rename), so a killed run loses at most the epoch in progress."""
import os

import torch


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
