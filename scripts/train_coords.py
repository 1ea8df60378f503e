#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Train the printed-coordinate reader (models/coords.onnx): one small CNN that reads the
glyph of a board's printed coordinate — a file letter a-h (or A-H) or a rank digit 1-8 — or
says there is none, from a crop cut where hamle looks for coordinates around and inside a
located diagram (`src/board/coords.rs`). hamle then tells White-at-the-bottom from
Black-at-the-bottom by whether the letters run a..h or h..a left to right and the digits
8..1 or 1..8 top to bottom.

    python3 scripts/train_coords.py --n 160000 --epochs 6 --seed 1 --threads 2 \
        --ckpt work-tmp/coords/coords.pt --onnx models/coords.onnx

Data: synthetic only, made here on the fly and seeded. Each sample is one crop as hamle cuts
it (the crop sites are below), with the board square `s` 12-100 pixels:
- outside the board (book diagrams, boards drawn with a margin): a crop 0.8 s square beside
  each file or rank, 0.02 s off the board's edge, holding the coordinate (font size 0.18-0.75
  s, near the middle or anywhere it fits, often near the board), maybe the board's frame
  lines on the board's side, on paper or a screen's background, light on dark or dark on
  light;
- inside the edge squares (screens): a crop 0.4 s square in a square's corner, holding a
  small coordinate (font size 0.14-0.35 s) in that corner, on the square's colour or a book hatching,
  maybe with part of a piece.
Negatives (class 0, 40 %): the same scenes with nothing, frame lines, other letters and
digits (i-z, I-Z, 0, 9, punctuation, two-letter fragments of a caption), parts of pieces, dark
square patterns. Then the photo's damage: downscale to the crop's real size, blur, noise,
JPEG, and hamle's own resampling to 24 x 24 and contrast normalisation (ink dark).

Fonts: every serif, sans and mono font fontconfig lists (Debian fonts-urw-base35,
fonts-freefont-ttf, fonts-linuxlibertine, fonts-texgyre, fonts-roboto, fonts-open-sans,
fonts-droid-fallback, fonts-dejavu) except the held-out families (Liberation, Caladea,
Carlito, EB Garamond), which only the validation set uses.

Contract: input float32 [64, 1, 24, 24] in 0..1 (ink dark), output [64, 17] logits:
0 none, 1..8 files a..h, 9..16 ranks 1..8.
"""
import io
import os
import random
import subprocess
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image, ImageDraw, ImageFilter, ImageFont

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from train_common import resume, save, seed_all  # noqa: E402
from split_pools import split_pools_file  # noqa: E402

S = 24
CLASSES = ["none"] + list("abcdefgh") + list("12345678")
HELD_OUT = ("liberation", "caladea", "carlito", "ebgaramond", "EBGaramond")
DISTRACT = list("ijklmnopqrstuvwxyzIJKLMNOPQRSTUVWXYZ09+-=#!?.,:;()") + ["Wh", "to", "Bl", "ck", "..", "1.", "24",
                                                                            "10", "ite", "Ex", "wi"]


def fonts():
    out = subprocess.run(["fc-list", "--format", "%{file}\n"], capture_output=True, text=True).stdout.split()
    out = sorted(set(f for f in out if f.lower().endswith((".ttf", ".otf", ".pfb", ".t1")) and "math" not in f.lower()
                     and "handwriting" not in f and "Symbol" not in f and "Dingbat" not in f and "d050000l" not in f
                     and "s050000l" not in f))
    ok = []
    for f in out:
        try:
            ft = ImageFont.truetype(f, 40)
            # a font without the glyphs draws them as its missing-glyph box
            masks = [np.asarray(ft.getmask(ch)).tobytes() for ch in ("a", "8", "\ue000")]
            if ft.getbbox("a")[2] > 0 and masks[0] != masks[2] and masks[1] != masks[2]:
                ok.append(f)
        except Exception:
            pass
    train = [f for f in ok if not any(h in f for h in HELD_OUT)]
    held = [f for f in ok if any(h in f for h in HELD_OUT)]
    return train, held


def hatch(rng, w, h, ink, paper):
    a = np.full((h, w), paper, np.float32)
    kind = rng.random()
    yy, xx = np.mgrid[0:h, 0:w]
    per = rng.uniform(3, 9)
    if kind < 0.5:
        m = ((xx + yy) % per) < per * rng.uniform(0.25, 0.5)
    elif kind < 0.7:
        m = ((xx - yy) % per) < per * rng.uniform(0.25, 0.5)
    elif kind < 0.85:
        m = ((xx % per) < 1.5) & ((yy % per) < 1.5)
    else:
        return np.full((h, w), paper * 0.6 + ink * 0.4, np.float32)
    a[m] = ink
    return a


def sample(rng, fonts_list, want_pos):
    """One crop (S x S float32 0..1, ink dark) and its class."""
    inner = rng.random() < 0.35
    s = rng.uniform(12, 100)  # board square, pixels in the image
    c = (0.4 if inner else 0.8) * s  # crop side, pixels in the image
    k = max(1, int(round(96 / max(c, 1))))  # supersampling for drawing
    C = max(8, int(round(c * k)))
    sk = s * k
    dark_bg = rng.random() < (0.35 if inner else 0.15)
    if dark_bg:
        bg = rng.uniform(15, 120)
        ink = rng.uniform(min(255, bg + 70), 255)
    else:
        bg = rng.uniform(150, 255)
        ink = rng.uniform(0, max(1, bg - 80))
    if inner and not dark_bg and rng.random() < 0.2:
        base = hatch(rng, C, C, rng.uniform(0, 80), bg)
    else:
        base = np.full((C, C), bg, np.float32)
        if rng.random() < 0.3:
            base += (np.linspace(0, 1, C)[None, :] * rng.uniform(-25, 25)).astype(np.float32)
    im = Image.fromarray(base.clip(0, 255).astype(np.uint8), "L")
    dr = ImageDraw.Draw(im)
    side = rng.choice(["bottom", "top", "left", "right"])  # where the board is, seen from the crop
    corner = rng.choice(["tl", "tr", "bl", "br"])
    # frame lines along the board's side of an outside crop
    if not inner and rng.random() < 0.6:
        for _ in range(rng.choice([1, 1, 2, 3])):
            off = rng.uniform(-0.02, 0.2) * sk
            wid = max(1, int(rng.uniform(0.005, 0.06) * sk))
            col = int(ink if rng.random() < 0.8 else (ink + bg) / 2)
            if side == "bottom":  # board above the crop
                dr.rectangle([0, off, C, off + wid], fill=col)
            elif side == "top":
                dr.rectangle([0, C - off - wid, C, C - off], fill=col)
            elif side == "left":  # board right of the crop
                dr.rectangle([C - off - wid, 0, C - off, C], fill=col)
            else:
                dr.rectangle([off, 0, off + wid, C], fill=col)
    # part of a piece (inside crops) or of the board (outside, a corner of squares)
    if inner and rng.random() < 0.5:
        r = rng.uniform(0.25, 0.45) * sk
        cx = {"tl": C + r * 0.3, "tr": -r * 0.3, "bl": C + r * 0.3, "br": -r * 0.3}[corner] + rng.uniform(-0.1, 0.1) * sk
        cy = {"tl": C + r * 0.3, "tr": C + r * 0.3, "bl": -r * 0.3, "br": -r * 0.3}[corner] + rng.uniform(-0.1, 0.1) * sk
        fill = int(rng.choice([ink, 255 - ink, rng.uniform(0, 255)]))
        dr.ellipse([cx - r, cy - r, cx + r, cy + r], fill=fill, outline=int(ink), width=max(1, int(0.02 * sk)))
    label = 0
    pos = want_pos
    if pos:
        label = rng.randint(1, 16)
        ch = CLASSES[label]
        if label <= 8 and rng.random() < 0.12:
            ch = ch.upper()
    else:
        r = rng.random()
        ch = rng.choice(DISTRACT) if r < 0.55 else None
    if ch is not None:
        font = rng.choice(fonts_list)
        # font size in squares: books print coordinates 0.2-0.7 square, screens 0.14-0.35
        fs = rng.uniform(0.14, 0.35) if inner else rng.uniform(0.18, 0.75)
        try:
            ft = ImageFont.truetype(font, max(6, int(fs * sk)))
        except Exception:
            ft = ImageFont.load_default()
        bb = dr.textbbox((0, 0), ch, font=ft)
        gw, ghh = bb[2] - bb[0], bb[3] - bb[1]
        if inner:
            m = rng.uniform(0.02, 0.08) * sk
            x = m if corner in ("tl", "bl") else C - m - gw
            y = m if corner in ("tl", "tr") else C - m - ghh
        elif rng.random() < 0.4:
            x = C / 2 - gw / 2 + rng.uniform(-0.1, 0.1) * sk
            y = C / 2 - ghh / 2 + rng.uniform(-0.12, 0.12) * sk
        else:  # anywhere it fits, often near the board
            x = rng.uniform(0, max(0.0, C - gw))
            y = rng.uniform(0, max(0.0, C - ghh))
            if rng.random() < 0.5:
                if side == "bottom":
                    y = rng.uniform(0, max(0.0, (C - ghh) * 0.4))
                elif side == "top":
                    y = C - ghh - rng.uniform(0, max(0.0, (C - ghh) * 0.4))
                elif side == "left":
                    x = C - gw - rng.uniform(0, max(0.0, (C - gw) * 0.4))
                else:
                    x = rng.uniform(0, max(0.0, (C - gw) * 0.4))
        if not inner and not pos and rng.random() < 0.3:  # a clipped glyph at the edge
            x += rng.choice([-1, 1]) * C * 0.55
        dr.text((x - bb[0], y - bb[1]), ch, font=ft, fill=int(ink))
    # the photo: to the crop's real size, blur, noise, JPEG
    real = max(4, int(round(c)))
    im = im.resize((real, real), Image.BILINEAR if rng.random() < 0.5 else Image.LANCZOS)
    if rng.random() < 0.5:
        im = im.filter(ImageFilter.GaussianBlur(rng.uniform(0.2, 0.9)))
    a = np.asarray(im, np.float32)
    if rng.random() < 0.6:
        a = a + np.random.default_rng(rng.randint(0, 1 << 30)).normal(0, rng.uniform(1, 12), a.shape)
    im = Image.fromarray(a.clip(0, 255).astype(np.uint8), "L")
    if rng.random() < 0.5:
        buf = io.BytesIO()
        im.save(buf, "JPEG", quality=rng.randint(25, 90))
        im = Image.open(io.BytesIO(buf.getvalue())).convert("L")
    im = im.resize((S, S), Image.BILINEAR)
    return normalise(np.asarray(im, np.float32) / 255.0), label


def normalise(a):
    """hamle's contrast normalisation of a crop (`coords::normalise`): stretched to 0..1, then
    turned so that the background (the median) is light."""
    lo, hi = float(a.min()), float(a.max())
    a = (a - lo) / max(hi - lo, 1e-3)
    if np.median(a) < 0.5:
        a = 1.0 - a
    return a.astype(np.float32)


def make(n, seed, fonts_list):
    rng = random.Random(seed)
    np.random.seed(seed)
    xs = np.zeros((n, S, S), np.uint8)
    ys = np.zeros(n, np.int64)
    for i in range(n):
        x, y = sample(rng, fonts_list, rng.random() < 0.6)
        xs[i] = (x * 255).round().astype(np.uint8)
        ys[i] = y
    return xs, ys


class Net(nn.Module):
    def __init__(self, width=8):
        super().__init__()
        c1, c2, c3 = width, 2 * width, 4 * width

        def block(a, b):
            return nn.Sequential(nn.Conv2d(a, b, 3, padding=1, bias=False), nn.BatchNorm2d(b), nn.ReLU())

        self.f = nn.Sequential(block(1, c1), nn.MaxPool2d(2), block(c1, c2), nn.MaxPool2d(2), block(c2, c3),
                               nn.MaxPool2d(2))
        self.head = nn.Sequential(nn.Flatten(), nn.Dropout(0.2), nn.Linear(c3 * 3 * 3, 8 * width), nn.ReLU(),
                                  nn.Linear(8 * width, len(CLASSES)))

    def forward(self, x):
        return self.head(self.f(x - 0.5))


def evaluate(model, xs, ys):
    model.eval()
    with torch.no_grad():
        x = torch.from_numpy(xs).float().unsqueeze(1) / 255.0
        p = torch.cat([model(x[i:i + 1024]) for i in range(0, len(x), 1024)]).argmax(1).numpy()
    model.train()
    pos = ys > 0
    return {"acc": round(float((p == ys).mean()), 4), "pos_acc": round(float((p[pos] == ys[pos]).mean()), 4),
            "false_glyph": round(float((p[~pos] > 0).mean()), 4), "missed": round(float((p[pos] == 0).mean()), 4)}


def export(model, path, check):
    model.eval()
    x = torch.from_numpy(check).float().unsqueeze(1) / 255.0
    torch.onnx.export(model, x, path, input_names=["crops"], output_names=["logits"], opset_version=17, dynamo=False)
    split_pools_file(path)  # the same values, faster in tract
    with torch.no_grad():
        ref = model(x).numpy()
    Image.fromarray(np.concatenate([np.concatenate(list(check[r * 8:(r + 1) * 8]), 1) for r in range(8)], 0)).save(
        path.replace(".onnx", ".check-in.png"))
    np.savetxt(path.replace(".onnx", ".check-out.txt"), ref.ravel(), fmt="%.6f")
    import onnxruntime as ort
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    out = sess.run(None, {"crops": x.numpy()})[0]
    print(f"onnxruntime max |diff| {np.abs(out - ref).max():.2e}; {os.path.getsize(path) / 1e3:.0f} kB", flush=True)
    model.train()


def main():
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=160000)
    ap.add_argument("--val", type=int, default=8000)
    ap.add_argument("--epochs", type=int, default=6)
    ap.add_argument("--bs", type=int, default=128)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--ckpt", default="work-tmp/coords/coords.pt")
    ap.add_argument("--onnx", default="models/coords.onnx")
    ap.add_argument("--width", type=int, default=8, help="channels of the first conv (then x2, x4)")
    ap.add_argument("--dump", help="write 256 training crops as a mosaic PNG and stop")
    a = ap.parse_args()
    seed_all(a)
    train_fonts, held_fonts = fonts()
    print(f"{len(train_fonts)} training fonts, {len(held_fonts)} held-out fonts", flush=True)
    if a.dump:
        xs, ys = make(256, a.seed, train_fonts)
        Image.fromarray(np.concatenate([np.concatenate(list(xs[r * 16:(r + 1) * 16]), 1) for r in range(16)], 0)).resize(
            (16 * 48, 16 * 48), Image.NEAREST).save(a.dump)
        print(" ".join(CLASSES[y] for y in ys[:32]))
        return
    cache = os.path.join(os.path.dirname(a.ckpt), f"data-{a.n}-{a.seed}.npz")
    t0 = time.time()
    if os.path.exists(cache):
        d = np.load(cache)
        xs, ys, vx, vy, hx, hy = (d[k] for k in ("xs", "ys", "vx", "vy", "hx", "hy"))
    else:
        xs, ys = make(a.n, a.seed, train_fonts)
        vx, vy = make(a.val, a.seed + 1000, train_fonts)
        hx, hy = make(a.val, a.seed + 2000, held_fonts)
        os.makedirs(os.path.dirname(cache), exist_ok=True)
        np.savez_compressed(cache, xs=xs, ys=ys, vx=vx, vy=vy, hx=hx, hy=hy)
    print(f"data ready in {time.time() - t0:.0f} s: {len(xs)} train, {len(vx)} val, {len(hx)} held-out fonts", flush=True)
    model = Net(a.width)
    print(f"{sum(p.numel() for p in model.parameters())} parameters", flush=True)
    opt = torch.optim.AdamW(model.parameters(), lr=a.lr, weight_decay=1e-4)
    steps = a.epochs * (len(xs) // a.bs)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=a.lr, total_steps=steps)
    start, history = resume(model, opt, sched, None, a.ckpt)
    g = torch.Generator().manual_seed(a.seed)
    X = torch.from_numpy(xs)
    Y = torch.from_numpy(ys)
    for ep in range(start, a.epochs):
        g.manual_seed(a.seed * 1000 + ep)
        perm = torch.randperm(len(xs), generator=g)
        tl = 0.0
        for b in range(len(xs) // a.bs):
            idx = perm[b * a.bs:(b + 1) * a.bs]
            x = X[idx].float().unsqueeze(1) / 255.0
            loss = F.cross_entropy(model(x), Y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            tl += loss.item()
        rec = {"epoch": ep + 1, "loss": round(tl / (len(xs) // a.bs), 4), "val": evaluate(model, vx, vy),
               "held_out_fonts": evaluate(model, hx, hy), "seconds": round(time.time() - t0)}
        history.append(rec)
        print(rec, flush=True)
        save(model, opt, sched, ep + 1, history, a.ckpt)
    export(model, a.onnx, hx[:64])


if __name__ == "__main__":
    main()
