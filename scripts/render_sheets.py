#!/usr/bin/env python3
"""Render labelled synthetic scoresheets: real games handwritten (in fonts kept out of the cell
recognizer's training) on printed forms, then scanned (skew, blur, noise, JPEG).

    python3 scripts/render_sheets.py --out work-tmp/sheets-tr --n 40 --lang tr --seed 3

Forms: the Turkish Chess Federation style (2 blocks × 30 rows, moves 1–60, "Beyaz / Siyah"),
a 2 × 25 form like the dev sheets, and a generic 3 × 20 form. Writes NAME.png beside
NAME.moves.txt (the game in English SAN, numbered), the layout `hamle eval sheets` reads.
"""
import argparse
import io
import os
import random

import numpy as np
from PIL import Image, ImageDraw, ImageFilter, ImageFont

import chess
import chess.pgn

from cells_synth import REPO, load_fonts, render_text, spell

PRINT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
PRINT_BOLD = "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"

FORMS = {
    "tsf": dict(blocks=2, rows=30, title="TÜRKİYE SATRANÇ FEDERASYONU — HAMLE KAĞIDI", cols=("Beyaz", "Siyah")),
    "dev": dict(blocks=2, rows=25, title="OFFICIAL SCORE SHEET", cols=("WHITE", "BLACK")),
    "three": dict(blocks=3, rows=20, title="SCORESHEET", cols=("White", "Black")),
}


def games(path, rng, n):
    out = []
    with open(path, encoding="utf-8") as fh:
        while True:
            g = chess.pgn.read_game(fh)
            if g is None:
                break
            moves = list(g.mainline_moves())
            if len(moves) >= 20:
                out.append(g)
    rng.shuffle(out)
    return out[:n]


def draw_form(form, W, H, rng):
    img = Image.new("L", (W, H), 255)
    d = ImageDraw.Draw(img)
    f_title = ImageFont.truetype(PRINT_BOLD, 56)
    f_small = ImageFont.truetype(PRINT, 30)
    f_head = ImageFont.truetype(PRINT_BOLD, 32)
    d.text((W * 0.08, H * 0.05), form["title"], font=f_title, fill=30)
    left, right = int(W * 0.07), int(W * 0.93)
    top = int(H * 0.1)
    # header fields
    for i, label in enumerate(["Turnuva / Event", "Tur / Round", "Beyaz / White", "Siyah / Black"]):
        y = top + i * 60
        d.rectangle([left, y, right, y + 60], outline=40, width=3)
        d.text((left + 12, y + 14), label, font=f_small, fill=40)
    grid_top = top + 4 * 60 + 40
    grid_bottom = int(H * 0.93)
    blocks, rows = form["blocks"], form["rows"]
    row_h = (grid_bottom - grid_top) // (rows + 1)
    block_w = (right - left) // blocks
    num_w = int(block_w * rng.uniform(0.11, 0.16))
    lw = rng.choice([2, 3, 3, 4])
    cells = {}
    for b in range(blocks):
        x0 = left + b * block_w
        xw = x0 + num_w
        xb = xw + (block_w - num_w) // 2
        x1 = x0 + block_w
        # header row
        d.rectangle([x0, grid_top, x1, grid_top + row_h], fill=rng.choice([255, 225, 210]))
        d.text((xw + (xb - xw) // 2 - 40, grid_top + row_h // 4), form["cols"][0], font=f_head, fill=30)
        d.text((xb + (x1 - xb) // 2 - 40, grid_top + row_h // 4), form["cols"][1], font=f_head, fill=30)
        shade = rng.choice([255, 235, 220])
        for r in range(rows):
            y0 = grid_top + (r + 1) * row_h
            d.rectangle([x0, y0, xw, y0 + row_h], fill=shade)
            n = b * rows + r + 1
            tw = d.textlength(str(n), font=f_small)
            d.text((x0 + (num_w - tw) / 2, y0 + row_h * 0.2), str(n), font=f_small, fill=30)
            cells[(n, 0)] = (xw, y0, xb, y0 + row_h)
            cells[(n, 1)] = (xb, y0, x1, y0 + row_h)
        for x, y_start in [(x0, grid_top), (xw, grid_top + row_h), (xb, grid_top), (x1, grid_top)]:
            d.line([(x, y_start), (x, grid_top + (rows + 1) * row_h)], fill=30, width=lw)
    for r in range(rows + 2):
        y = grid_top + r * row_h
        d.line([(left, y), (left + blocks * block_w, y)], fill=30, width=lw)
    return img, cells


def write_moves(img, cells, game, lang, fonts, rng):
    arr = np.asarray(img, np.float32).copy()
    font = rng.choice(fonts)
    ink = rng.uniform(0, 120)
    size_base = rng.randint(40, 56)
    stroke = rng.choice([0, 0, 1])
    b = game.board()
    sans = []
    cap = max(n for n, _ in cells)
    for i, mv in enumerate(game.mainline_moves()):
        n, side = i // 2 + 1, i % 2
        if n > cap:
            break
        san = b.san(mv)
        text = spell(san, b.is_en_passant(mv), lang, rng)
        sans.append(san)
        b.push(mv)
        x0, y0, x1, y1 = cells[(n, side)]
        layer = render_text(text, font, max(20, int(size_base * rng.uniform(0.9, 1.1))), rng, not font.has_s_cedilla(), stroke)
        if layer is None:
            continue
        lw_, lh_ = layer.size
        scale = min(1.0, (x1 - x0) * 0.85 / lw_, (y1 - y0) * 0.95 / lh_)
        if scale < 1.0:
            layer = layer.resize((max(1, int(lw_ * scale)), max(1, int(lh_ * scale))), Image.BILINEAR)
            lw_, lh_ = layer.size
        cx = x0 + (x1 - x0 - lw_) * min(1, max(0, rng.gauss(0.5, 0.15)))
        cy = y0 + (y1 - y0 - lh_) / 2 + rng.gauss(0, (y1 - y0) * 0.06)
        a = np.asarray(layer, np.float32) / 255.0
        xi, yi = int(cx), int(cy)
        h, w = a.shape
        ys, xs = max(0, yi), max(0, xi)
        ye, xe = min(arr.shape[0], yi + h), min(arr.shape[1], xi + w)
        a = a[ys - yi:ye - yi, xs - xi:xe - xi]
        arr[ys:ye, xs:xe] = arr[ys:ye, xs:xe] * (1 - a) + ink * a
    return Image.fromarray(np.clip(arr, 0, 255).astype(np.uint8)), sans


def scan(img, rng):
    img = img.rotate(rng.uniform(-3, 3), resample=Image.BILINEAR, expand=False, fillcolor=255)
    if rng.random() < 0.7:
        img = img.filter(ImageFilter.GaussianBlur(rng.uniform(0.3, 1.2)))
    arr = np.asarray(img, np.float32)
    arr = arr * rng.uniform(0.85, 1.0) + rng.uniform(0, 20)
    arr += np.random.default_rng(rng.randint(0, 2**31)).normal(0, rng.uniform(1, 6), arr.shape)
    img = Image.fromarray(np.clip(arr, 0, 255).astype(np.uint8))
    buf = io.BytesIO()
    img.save(buf, "JPEG", quality=rng.randint(60, 92))
    return Image.open(io.BytesIO(buf.getvalue())).convert("L")


def perspective(img, rng, amount):
    """A phone held at a slant: each corner of the page moved by up to `amount` of the page's
    size (mostly inwards), over a darker table."""
    w, h = img.size
    dst = [(0, 0), (w, 0), (w, h), (0, h)]
    sign = [(1, 1), (-1, 1), (-1, -1), (1, -1)]
    src = [(x + sx * rng.uniform(-0.2, 1) * amount * w, y + sy * rng.uniform(-0.2, 1) * amount * h)
           for (x, y), (sx, sy) in zip(dst, sign)]
    # Coefficients mapping each output pixel (the photo) to the flat page: solve for the
    # projective map that takes the moved corners `src` back to the page's corners `dst`.
    rows, rhs = [], []
    for (X, Y), (x, y) in zip(src, dst):
        rows.append([X, Y, 1, 0, 0, 0, -x * X, -x * Y])
        rhs.append(x)
        rows.append([0, 0, 0, X, Y, 1, -y * X, -y * Y])
        rhs.append(y)
    coeffs = np.linalg.solve(np.array(rows, float), np.array(rhs, float))
    table = rng.randint(60, 160)
    return img.transform((w, h), Image.PERSPECTIVE, tuple(coeffs), Image.BILINEAR, fillcolor=table)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--n", type=int, default=20)
    ap.add_argument("--lang", choices=["tr", "en"], default="tr")
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--fonts", choices=["test", "train"], default="test")
    ap.add_argument("--pairs", action="store_true",
                    help="also write NAME.second.png: the opponent's copy (another hand, same form)")
    ap.add_argument("--perspective", type=float, default=0.0,
                    help="photograph the pages at a slant: corners moved by up to this share of the size")
    ap.add_argument("--games", default=os.path.join(REPO, "datasets", "games", "lichess_classical.pgn"))
    a = ap.parse_args()
    rng = random.Random(a.seed)
    fonts = load_fonts(a.fonts)
    gs = games(a.games, rng, a.n)
    os.makedirs(a.out, exist_ok=True)
    for i, g in enumerate(gs):
        name = list(FORMS)[i % len(FORMS)]
        form = FORMS[name]
        img, cells = draw_form(form, 2100, 2970, rng)
        img, sans = write_moves(img, cells, g, a.lang, fonts, rng)
        if a.perspective > 0:
            img = perspective(img, rng, a.perspective)
        img = scan(img, rng)
        stem = f"{a.lang}-{name}-{i:03d}"
        img.save(os.path.join(a.out, stem + ".png"))
        if a.pairs:
            img2, cells2 = draw_form(form, 2100, 2970, rng)
            img2, _ = write_moves(img2, cells2, g, a.lang, fonts, rng)
            scan(img2, rng).save(os.path.join(a.out, stem + ".second.png"))
        with open(os.path.join(a.out, stem + ".moves.txt"), "w", encoding="utf-8") as fh:
            for k in range(0, len(sans), 2):
                fh.write(f"{k // 2 + 1}. {' '.join(sans[k:k + 2])}\n")
    print(f"wrote {len(gs)} sheets to {a.out}")


if __name__ == "__main__":
    main()
