#!/usr/bin/env python3
"""Rough board-level check of models/squares.onnx on the real dev boards (../shared/data/boards/dev).

    python3 scripts/eval_squares.py --model models/squares.onnx [--locate full|grid|both] [--show N]

There is no real board localisation here (that is done later in Rust): the board is taken to be either
the whole image (`full`) or the axis-aligned box found by a small grid heuristic (`grid`: the square
lattice whose 9 vertical and 9 horizontal lines best match the image's gradient profiles). The box is
cut into 8 x 8 squares (margin 0), each resized to S x S (bilinear, antialiased) and the 64 crops are
classified in one batch. Reports, per prefix (book / mixed / photo): exact boards and square accuracy,
as-is and best of the two orientations (some book diagrams are printed from Black's side while their
labels are canonical). A rough indication only; do not tune the model to these 63 images.
"""
import argparse
import glob
import os

import numpy as np
from PIL import Image

DEV = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "data", "boards", "dev")
SYM = "PNBRQKpnbrqk"


def fen_grid(fen):
    g = np.zeros((8, 8), np.int64)
    for r, row in enumerate(fen.split()[0].split("/")):
        c = 0
        for ch in row:
            if ch.isdigit():
                c += int(ch)
            else:
                g[r, c] = SYM.index(ch) + 1
                c += 1
    return g


def grey(im):
    a = np.asarray(im.convert("RGB"), np.float32)
    return a @ np.array([0.2126, 0.7152, 0.0722], np.float32)


def best_lattice(p, lo_frac=0.35):
    """(start, size) of 9 equally spaced positions maximising mean(p at lines) - mean(p between)."""
    n = len(p)
    best = (0.0, 0, n - 1)
    q = np.maximum(p, np.maximum(np.r_[p[1:], 0], np.r_[0, p[:-1]]))  # 1 px tolerance
    for size in range(int(n * lo_frac), n):
        step = size / 8.0
        starts = np.arange(0, n - size)
        if len(starts) == 0:
            continue
        ks = np.arange(9)
        lines = np.rint(starts[:, None] + ks[None, :] * step).astype(int).clip(0, n - 1)
        mids = np.rint(starts[:, None] + (ks[None, :8] + 0.5) * step).astype(int).clip(0, n - 1)
        score = q[lines].mean(1) - p[mids].mean(1)
        i = int(score.argmax())
        if score[i] > best[0]:
            best = (float(score[i]), int(starts[i]), size)
    return best[1], best[2]


def locate_grid(g):
    from PIL import ImageFilter
    # blur first so hatched / dotted dark squares become flat grey and only square borders give edges
    b = np.asarray(Image.fromarray(g.clip(0, 255).astype(np.uint8)).filter(ImageFilter.BoxBlur(2)), np.float32)
    gx = np.abs(b[:, 2:] - b[:, :-2])
    gy = np.abs(b[2:] - b[:-2])
    h, w = g.shape
    y0, y1 = 0, h - 1
    x0, x1 = 0, w - 1
    for _ in range(2):
        px = gx[y0:y1].mean(0)
        xs, xsz = best_lattice(px)
        x0, x1 = xs, xs + xsz
        py = gy[:, x0:x1].mean(1)
        ys, ysz = best_lattice(py)
        y0, y1 = ys, ys + ysz
    return x0 + 1, y0 + 1, x1 + 1, y1 + 1


def crops(g, box, S):
    im = Image.fromarray(g.clip(0, 255).astype(np.uint8), "L")
    x0, y0, x1, y1 = box
    sw, sh = (x1 - x0) / 8, (y1 - y0) / 8
    out = np.zeros((64, 1, S, S), np.float32)
    for r in range(8):
        for c in range(8):
            sq = im.resize((S, S), Image.BILINEAR, box=(x0 + c * sw, y0 + r * sh, x0 + (c + 1) * sw, y0 + (r + 1) * sh))
            out[r * 8 + c, 0] = np.asarray(sq, np.float32) / 255.0
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="models/squares.onnx")
    ap.add_argument("--locate", default="both", choices=["full", "grid", "both"])
    ap.add_argument("--show", type=int, default=0, help="print the N worst boards")
    a = ap.parse_args()
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    sess = ort.InferenceSession(a.model, so, providers=["CPUExecutionProvider"])
    S = sess.get_inputs()[0].shape[2]
    files = sorted(f for f in glob.glob(os.path.join(DEV, "*")) if f.rsplit(".", 1)[1].lower() in ("png", "jpg", "jpeg"))
    modes = ["full", "grid"] if a.locate == "both" else [a.locate]
    for mode in modes:
        stats = {}
        rows = []
        for f in files:
            name = os.path.basename(f)
            prefix = name.split("-")[0]
            want = fen_grid(open(f.rsplit(".", 1)[0] + ".fen").read())
            g = grey(Image.open(f))
            box = (0, 0, g.shape[1], g.shape[0]) if mode == "full" else locate_grid(g)
            x = crops(g, box, S)
            got = sess.run(None, {sess.get_inputs()[0].name: x})[0].argmax(1).reshape(8, 8)
            ok = int((got == want).sum())
            ok_rot = int((got[::-1, ::-1] == want).sum())
            st = stats.setdefault(prefix, [0, 0, 0, 0, 0])
            st[0] += 1
            st[1] += ok == 64
            st[2] += max(ok, ok_rot) == 64
            st[3] += ok
            st[4] += max(ok, ok_rot)
            rows.append((max(ok, ok_rot), ok, name, box))
        print(f"== board = {mode} image box" if mode == "full" else "== board = grid-heuristic box")
        tot = [0] * 5
        for p in sorted(stats):
            n, ex, exb, sq, sqb = stats[p]
            tot = [t + v for t, v in zip(tot, stats[p])]
            print(f"{p:6s} n={n:2d}  exact as-is {ex:2d}/{n} ({ex / n:.0%})  best-of-2 {exb:2d}/{n} ({exb / n:.0%})  "
                  f"squares as-is {sq / (64 * n):.3f}  best-of-2 {sqb / (64 * n):.3f}")
        n, ex, exb, sq, sqb = tot
        print(f"{'all':6s} n={n:2d}  exact as-is {ex:2d}/{n} ({ex / n:.0%})  best-of-2 {exb:2d}/{n} ({exb / n:.0%})  "
              f"squares as-is {sq / (64 * n):.3f}  best-of-2 {sqb / (64 * n):.3f}")
        for best, ok, name, box in sorted(rows)[:a.show]:
            print(f"   {name}: {ok}/64 as-is, {best}/64 best, box {tuple(round(v) for v in box)}")


if __name__ == "__main__":
    main()
