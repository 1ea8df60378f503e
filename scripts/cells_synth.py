#!/usr/bin/env python3
"""Synthetic scoresheet cells for the cell recognizer (hamle issue #3).

Each sample is one move cell as the layout stage cuts it from a sheet: a handwritten move
(sampled from real games, written in Turkish or English in the spellings people use) drawn with
a handwriting font and per-character jitter, over paper with the printed cell box lines and bits
of the neighbouring cells, then blurred, noised and JPEG-compressed. Output: an .npz with
`images` (N, 32, 128) uint8 (white paper = 255) and `labels` (N,) strings over `ALPHABET`.

    python3 scripts/cells_synth.py --out work-tmp/cells/train.npz --n 150000 --split train --seed 1
    python3 scripts/cells_synth.py --out work-tmp/cells/test-tr.npz --n 4000 --split test --lang tr --seed 2

Fonts: the handwriting fonts of ../shared/assets/fonts/handwriting (with Ş) and the npm
`@fontsource/*` families installed by `npm install --prefix scripts/fonts` (see
scripts/fonts/package.json). `HELD_OUT` families are never used for `--split train`.
"""
import argparse
import glob
import io
import os
import random
import sys

import numpy as np
from PIL import Image, ImageDraw, ImageFilter, ImageFont

import chess
import chess.pgn

# Must match src/model (the CTC alphabet); index 0 is the CTC blank.
ALPHABET = "abcdefgh12345678KQRBNŞSVFAx+#=O0-.p"
H, W = 32, 128

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
# Each path can be moved by an environment variable (the GPU run carries copies of them).
SHARED_FONTS = os.environ.get("HAMLE_SHARED_FONTS",
                              os.path.join(REPO, "..", "shared", "assets", "fonts", "handwriting"))
NPM_FONTS = os.environ.get("HAMLE_NPM_FONTS", os.path.join(HERE, "fonts", "node_modules", "@fontsource"))
HCS = os.environ.get("HAMLE_HCS", os.path.join(REPO, "..", "shared", "data", "hcs-labels", "training_tags.txt"))

# Families kept out of training: the Turkish test renders with these only.
HELD_OUT = {"kalam", "patrick-hand", "mali", "sedgwick-ave", "just-me-again-down-here"}

# Share of cells written small (text 20–45 % of the cell height): 0 for the shipped v1/v2
# data; the v3 trial used 0.35 (see models/cells.md).
SMALL_TEXT = float(os.environ.get("CELLS_SMALL_TEXT", "0"))

TR_LETTERS = {"K": "Ş", "Q": "V", "R": "K", "B": "F", "N": "A"}


class Font:
    """One family: a main file (latin) and maybe a latin-ext file (Ş)."""

    def __init__(self, name, main, ext):
        self.name = name
        self.main = main
        self.ext = ext
        self.cache = {}

    def get(self, size, ch):
        path = self.main
        if ch == "Ş" and self.ext is not None:
            path = self.ext
        key = (path, size)
        if key not in self.cache:
            self.cache[key] = ImageFont.truetype(path, size)
        return self.cache[key]

    def has_s_cedilla(self):
        return self.ext is not None


def load_fonts(split):
    fonts = []
    for path in sorted(glob.glob(os.path.join(SHARED_FONTS, "*.ttf"))):
        name = os.path.basename(path).rsplit("-", 1)[0]
        fonts.append(Font(name, path, path))
    for d in sorted(glob.glob(os.path.join(NPM_FONTS, "*"))):
        name = os.path.basename(d)
        if any(f.name == name for f in fonts):
            continue
        # .woff2 as npm installs it; .ttf where it was converted (scripts/train_cells_pool.py)
        main = glob.glob(os.path.join(d, "files", f"{name}-latin-400-normal.woff2")) or \
            glob.glob(os.path.join(d, "files", f"{name}-latin-400-normal.ttf"))
        if not main:
            continue
        ext = glob.glob(os.path.join(d, "files", f"{name}-latin-ext-400-normal.woff2")) or \
            glob.glob(os.path.join(d, "files", f"{name}-latin-ext-400-normal.ttf"))
        fonts.append(Font(name, main[0], ext[0] if ext else None))
    if split == "train":
        fonts = [f for f in fonts if f.name not in HELD_OUT]
    else:
        fonts = [f for f in fonts if f.name in HELD_OUT]
    if not fonts:
        sys.exit("no fonts found: run `npm install --prefix scripts/fonts` and check ../shared")
    return fonts


# ---------------------------------------------------------------- move texts


def default_games():
    """The PGN files the move texts come from by default (here and in words_synth.py)."""
    return [os.path.join(REPO, "datasets", "games", "malakhov_master.pgn"),
            os.path.join(REPO, "datasets", "games", "lichess_classical.pgn")]


def game_moves(paths, max_games):
    """(board before the move, move) of every mainline move of the first `max_games` games of
    the PGN files `paths`, read in order (also words_synth.py's move source)."""
    n = 0
    for path in paths:
        with open(path, encoding="utf-8", errors="replace") as fh:
            while n < max_games:
                g = chess.pgn.read_game(fh)
                if g is None:
                    break
                n += 1
                b = g.board()
                for mv in g.mainline_moves():
                    yield b, mv
                    b.push(mv)


def load_moves(paths, max_games):
    """(SAN, is en passant) of every mainline move of the games."""
    return [(b.san(mv), b.is_en_passant(mv)) for b, mv in game_moves(paths, max_games)]


def load_hcs():
    try:
        with open(HCS, encoding="utf-8") as fh:
            texts = [ln.split(maxsplit=1)[1].strip() for ln in fh if len(ln.split()) == 2]
    except OSError:
        return []
    return [t for t in texts if t and all(c in ALPHABET for c in t)]


def spell(san, ep, lang, rng):
    """One way a person writes this SAN move."""
    s = san
    if s.startswith("O-O"):
        r = rng.random()
        if lang == "tr":
            s = s.replace("O", "0") if r < 0.75 else s
        else:
            s = s.replace("O", "0") if r < 0.35 else s
        if rng.random() < 0.05:
            s = s.replace("-", "")
    if "x" in s and rng.random() < 0.12:
        s = s.replace("x", "")
    if s.endswith("#"):
        r = rng.random()
        s = s[:-1] + ("++" if r < 0.3 else "+" if r < 0.5 else "#")
    elif s.endswith("+") and rng.random() < 0.25:
        s = s[:-1]
    if "=" in s and rng.random() < 0.45:
        s = s.replace("=", "")
    if lang == "tr":
        s = "".join(TR_LETTERS.get(c, c) for c in s)
        if ep and rng.random() < 0.6:
            s += "e.p." if rng.random() < 0.7 else "ep"
        if rng.random() < 0.03:
            s += "="  # draw offer
    return s


def random_text(rng):
    n = rng.randint(1, 7)
    return "".join(rng.choice(ALPHABET) for _ in range(n))


# ---------------------------------------------------------------- rendering


def paper(w, h, rng):
    base = rng.randint(215, 255) if rng.random() < 0.8 else rng.randint(170, 230)
    img = np.full((h, w), base, np.float32)
    if rng.random() < 0.5:  # uneven lighting
        gx = np.linspace(0, 1, w)[None, :] * rng.uniform(-30, 30)
        gy = np.linspace(0, 1, h)[:, None] * rng.uniform(-20, 20)
        img += gx + gy
    img += np.random.default_rng(rng.randint(0, 2**31)).normal(0, rng.uniform(0, 6), (h, w))
    return img


def render_text(text, font, size, rng, s_hook, stroke=None):
    """Text drawn character by character with jitter, on a transparent L layer."""
    pad = size
    width = int(size * (len(text) + 2) * 1.2) + 2 * pad
    height = size * 3
    layer = Image.new("L", (width, height), 0)
    x = pad
    base_y = size
    if stroke is None:
        stroke = rng.choice([0, 0, 0, 1, 1, 2]) if size > 50 else rng.choice([0, 0, 0, 1])
    spacing = rng.uniform(0.85, 1.2)
    drift = rng.uniform(-0.08, 0.08) * size  # baseline wobble over the word
    for i, ch in enumerate(text):
        glyph = ch
        hook = False
        if ch == "Ş" and (s_hook or rng.random() < 0.15):
            glyph, hook = "S", True
        cs = max(8, int(size * rng.uniform(0.88, 1.12)))
        f = font.get(cs, glyph)
        cw = max(1, int(f.getlength(glyph)))
        tile = Image.new("L", (cw + 2 * cs, 3 * cs), 0)
        d = ImageDraw.Draw(tile)
        d.text((cs, cs), glyph, font=f, fill=255, stroke_width=stroke, stroke_fill=255)
        if hook:  # a cedilla drawn as a short hook under the S
            bb = d.textbbox((cs, cs), glyph, font=f)
            cx = (bb[0] + bb[2]) // 2 + rng.randint(-2, 2)
            y0 = bb[3] + 1
            lw = max(1, cs // 14 + stroke)
            d.line([(cx, y0 - 2), (cx + cs // 10, y0 + cs // 6), (cx - cs // 10, y0 + cs // 4)], fill=255, width=lw)
        tile = tile.rotate(rng.uniform(-7, 7), resample=Image.BILINEAR)
        dy = int(rng.gauss(0, size * 0.04) + drift * i / max(1, len(text)))
        layer.paste(255, (x - cs, base_y - cs + dy), tile)
        x += int(cw * spacing) + rng.randint(-1, 2)
        if ch in "x-" and rng.random() < 0.3:
            x += int(size * 0.15)
    bbox = layer.getbbox()
    if bbox is None:
        return None
    layer = layer.crop(bbox)
    # slant: shear the whole word
    sh = rng.uniform(-0.35, 0.25)
    w, h = layer.size
    nw = w + int(abs(sh) * h) + 2
    layer = layer.transform((nw, h), Image.AFFINE, (1, sh, -abs(sh) * h if sh > 0 else 0, 0, 1, 0), resample=Image.BILINEAR)
    layer = layer.rotate(rng.uniform(-3, 3), expand=True, resample=Image.BILINEAR)
    return layer


def elastic(arr, rng, alpha):
    """Smooth random displacement of a float image."""
    h, w = arr.shape
    g = np.random.default_rng(rng.randint(0, 2**31))
    cw, ch = max(2, w // 24), max(2, h // 12)
    dx = g.normal(0, alpha, (ch, cw)).astype(np.float32)
    dy = g.normal(0, alpha, (ch, cw)).astype(np.float32)
    dx = np.array(Image.fromarray(dx).resize((w, h), Image.BICUBIC))
    dy = np.array(Image.fromarray(dy).resize((w, h), Image.BICUBIC))
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    sx = np.clip(xx + dx, 0, w - 1)
    sy = np.clip(yy + dy, 0, h - 1)
    x0, y0 = sx.astype(int), sy.astype(int)
    x1, y1 = np.minimum(x0 + 1, w - 1), np.minimum(y0 + 1, h - 1)
    fx, fy = sx - x0, sy - y0
    return (arr[y0, x0] * (1 - fx) * (1 - fy) + arr[y0, x1] * fx * (1 - fy)
            + arr[y1, x0] * (1 - fx) * fy + arr[y1, x1] * fx * fy)


def draw_ink(canvas, layer, x, y, ink):
    """Darken canvas (float array) by the layer's alpha towards the ink value."""
    a = np.asarray(layer, np.float32) / 255.0
    h, w = a.shape
    ch, cw = canvas.shape
    x0, y0 = max(0, x), max(0, y)
    x1, y1 = min(cw, x + w), min(ch, y + h)
    if x1 <= x0 or y1 <= y0:
        return
    a = a[y0 - y:y1 - y, x0 - x:x1 - x]
    region = canvas[y0:y1, x0:x1]
    canvas[y0:y1, x0:x1] = region * (1 - a) + ink * a


def make_cell(text, fonts, texts_for_neighbours, rng):
    ch = 80
    cw = int(ch * rng.uniform(3.5, 5.4))
    canvas = paper(cw, ch, rng)
    font = rng.choice(fonts)
    ink = rng.uniform(0, 150)
    # printed box lines (the cut is inside or across them)
    line_ink = rng.uniform(40, 170)
    img = Image.fromarray(np.zeros((ch, cw), np.uint8))
    d = ImageDraw.Draw(img)
    for edge in ("top", "bottom", "left", "right"):
        p = 0.55 if edge in ("top", "bottom") else 0.35
        if rng.random() > p:
            continue
        t = rng.randint(1, 4)
        off = rng.randint(-2, 7)
        if edge == "top":
            d.rectangle([0, off, cw, off + t], fill=255)
        elif edge == "bottom":
            d.rectangle([0, ch - 1 - off - t, cw, ch - 1 - off], fill=255)
        elif edge == "left":
            d.rectangle([off, 0, off + t, ch], fill=255)
            if rng.random() < 0.3:  # the grey move-number column beside the white cell
                canvas[:, : max(0, off)] = canvas[:, : max(0, off)] * 0.8
        else:
            d.rectangle([cw - 1 - off - t, 0, cw - 1 - off, ch], fill=255)
    draw_ink(canvas, img, 0, 0, line_ink)
    # bits of the neighbouring cells' writing above or below
    if rng.random() < 0.3 and texts_for_neighbours:
        nb = render_text(rng.choice(texts_for_neighbours), rng.choice(fonts), rng.randint(28, 44), rng, False)
        if nb is not None:
            if rng.random() < 0.5:
                y = -nb.size[1] + rng.randint(3, 14)
            else:
                y = ch - rng.randint(3, 14)
            draw_ink(canvas, nb, rng.randint(-10, cw - 20), y, rng.uniform(0, 150))
    if text:
        size = rng.randint(36, 62)
        layer = render_text(text, font, size, rng, not font.has_s_cedilla())
        if layer is not None:
            lw, lh = layer.size
            max_w = cw * rng.uniform(0.6, 0.95)
            # Some writers (and some fonts) leave most of the cell empty.
            max_h = ch * (rng.uniform(0.2, 0.45) if rng.random() < SMALL_TEXT else rng.uniform(0.55, 0.9))
            scale = min(1.0, max_w / lw, max_h / lh)
            if scale < 1.0:
                layer = layer.resize((max(1, int(lw * scale)), max(1, int(lh * scale))), Image.BILINEAR)
                lw, lh = layer.size
            # cross-out: a wrong move struck through, the right one beside it
            x_start = None
            if rng.random() < 0.04 and lw < cw * 0.5:
                wrong = render_text(random_text(rng), font, size, rng, True)
                if wrong is not None:
                    ww = min(wrong.size[0], int(cw * 0.4))
                    wrong = wrong.resize((ww, min(wrong.size[1], int(ch * 0.7))))
                    wx, wy = rng.randint(0, 8), (ch - wrong.size[1]) // 2
                    draw_ink(canvas, wrong, wx, wy, ink)
                    sc = Image.new("L", (ww + 8, wrong.size[1]), 0)
                    sd = ImageDraw.Draw(sc)
                    for _ in range(rng.randint(1, 4)):
                        sd.line([(0, rng.randint(0, sc.size[1])), (ww + 8, rng.randint(0, sc.size[1]))], fill=255, width=rng.randint(2, 4))
                    draw_ink(canvas, sc, wx - 4, wy, ink)
                    x_start = wx + ww + rng.randint(4, 12)
            if x_start is None:
                free = max(0, cw - lw)
                x_start = int(free * min(1, max(0, rng.gauss(0.5, 0.18))))
            y = (ch - lh) // 2 + int(rng.gauss(0, ch * 0.07))
            draw_ink(canvas, layer, x_start, y, ink)
    if rng.random() < 0.5:
        canvas = elastic(canvas, rng, rng.uniform(0.5, 2.0))
    img = Image.fromarray(np.clip(canvas, 0, 255).astype(np.uint8))
    if rng.random() < 0.6:
        img = img.filter(ImageFilter.GaussianBlur(rng.uniform(0.3, 1.4)))
    img = img.resize((W, H), rng.choice([Image.BILINEAR, Image.BOX, Image.LANCZOS]))
    arr = np.asarray(img, np.float32)
    # contrast / brightness
    lo = rng.uniform(0, 50)
    hi = rng.uniform(225, 255) if rng.random() < 0.8 else rng.uniform(180, 240)
    arr = lo + arr * (hi - lo) / 255.0
    arr += np.random.default_rng(rng.randint(0, 2**31)).normal(0, rng.uniform(0, 8), arr.shape)
    img = Image.fromarray(np.clip(arr, 0, 255).astype(np.uint8))
    if rng.random() < 0.5:
        buf = io.BytesIO()
        img.save(buf, "JPEG", quality=rng.randint(25, 90))
        img = Image.open(io.BytesIO(buf.getvalue())).convert("L")
    return np.asarray(img, np.uint8)


def generate(n, seed, lang_mix, fonts, moves, hcs, progress=False):
    """`n` cells drawn with `fonts` from the moves `moves` (and the HCS spellings `hcs`),
    seeded by `seed`: (images (n, H, W) uint8, labels)."""
    rng = random.Random(seed)
    np.random.seed(seed)
    images = np.zeros((n, H, W), np.uint8)
    labels = []
    neighbours = [m[0] for m in moves[:5000]]
    for i in range(n):
        lang = lang_mix if lang_mix != "mix" else ("tr" if rng.random() < 0.5 else "en")
        r = rng.random()
        if r < 0.04:
            text = ""
        elif r < 0.08:
            text = random_text(rng)
        elif lang == "en" and hcs and r < 0.2:
            text = rng.choice(hcs)
        else:
            san, ep = rng.choice(moves)
            text = spell(san, ep, lang, rng)
        images[i] = make_cell(text, fonts, neighbours, rng)
        labels.append(text)
        if progress and (i + 1) % 5000 == 0:
            print(f"{i + 1}/{n}", file=sys.stderr)
    return images, labels


def write_preview(path, images, labels):
    """A PNG sheet of the first 48 samples `images` (N, h, w), 4 a row on grey, shown at twice
    their size; their `labels` go to stderr (also words_synth.py's --preview)."""
    h, w = images.shape[1:]
    k = min(48, len(images))
    sheet = np.full((h * 12 + 11 * 2, w * 4 + 3 * 2), 128, np.uint8)
    for j in range(k):
        r_, c_ = divmod(j, 4)
        sheet[r_ * (h + 2):r_ * (h + 2) + h, c_ * (w + 2):c_ * (w + 2) + w] = images[j]
    Image.fromarray(sheet).resize((sheet.shape[1] * 2, sheet.shape[0] * 2)).save(path)
    print(" | ".join(labels[:k]), file=sys.stderr)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--split", choices=["train", "test"], default="train")
    ap.add_argument("--lang", choices=["mix", "tr", "en"], default="mix")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--games", nargs="*", default=default_games())
    ap.add_argument("--max-games", type=int, default=2000)
    ap.add_argument("--preview", help="write a PNG sheet of the first 48 samples")
    a = ap.parse_args()
    fonts = load_fonts(a.split)
    moves = load_moves(a.games, a.max_games)
    hcs = load_hcs() if a.split == "train" else []
    print(f"{len(fonts)} fonts, {len(moves)} moves, {len(hcs)} HCS spellings", file=sys.stderr)
    images, labels = generate(a.n, a.seed, a.lang, fonts, moves, hcs, progress=True)
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    np.savez_compressed(a.out, images=images, labels=np.array(labels, dtype=object), allow_pickle=True)
    if a.preview:
        write_preview(a.preview, images, labels)


if __name__ == "__main__":
    main()
