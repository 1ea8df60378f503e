#!/usr/bin/env python3
"""Synthetic printed chess words for the book word recognizer (models/words.onnx).

Each sample is one word as a book-page segmenter cuts it: a move in English SAN, Turkish SAN or
figurine notation (maybe with a move number glued on and an annotation), a bare move number or
a result, printed in a book typeface, put on a page line between neighbouring words, scanned
(rotation, shear, stroke weight, blur, low resolution, noise, JPEG or binarisation), cut at the
word's tight ink box + 2 px (with the segmenter's jitter, sometimes a sliver of a neighbour's
ink) and normalised by `preprocess` — the contract the Rust side mirrors. Output: an .npz with
`images` (N, 32, 128) uint8 (white paper = 255), `labels` (N,) strings over `ALPHABET` and
`kinds` (N,) strings (`en`, `tr`, `fig` for moves; `num`, `result`, `ann` for the other words).

    python3 scripts/words_synth.py --out work-tmp/words/train1.npz --n 64000 --seed 1
    python3 scripts/words_synth.py --out work-tmp/words/test-fig.npz --n 1500 --split test --lang fig --seed 103

Fonts: the system's book typefaces (fontconfig, `fc-list`); `HELD_OUT` typefaces are used only
for `--split test`. Figurines (♔♕♖♗♘ ♚♛♜♝♞) are drawn with the fonts that have the chess
glyphs (checked with fontconfig's charset and by rendering, so no tofu), sized to the text
font's capital height; they are labelled as the English letters K Q R B N.
"""
import argparse
import io
import math
import os
import random
import subprocess
import sys
from multiprocessing import Pool

import numpy as np
from PIL import Image, ImageFilter, ImageFont, ImageDraw

import chess

from cells_synth import default_games, game_moves, write_preview

# The CTC alphabet of models/words.onnx; class 0 is the CTC blank, ALPHABET[i] is class i + 1.
ALPHABET = "abcdefgh0123456789KQRBNŞVFAx+#=O-.!?/½*"
H, W = 32, 128


# ------------------------------------------------------------- the contract


def preprocess(crop):
    """THE input contract of words.onnx (mirrored by the Rust side).

    `crop`: a greyscale PIL image (mode "L", ink dark on light paper) of the page cut at the
    word's tight ink bounding box enlarged by 2 px on each side (clamped to the page).
    Returns a (32, 128) uint8 array:
      - new_w = max(1, floor(w * 32 / h + 0.5))  (aspect kept, height 32);
      - if new_w > 128: the crop resized to exactly 128 x 32 (squeezed);
      - else: the crop resized to new_w x 32 and pasted at the left (x = 0) of a 128 x 32 canvas
        filled with 255 (pure white, not the crop's paper level).
    Resizing is PIL's `Image.BILINEAR` (a triangle filter whose support widens by the scale
    factor when shrinking, i.e. antialiased; Rust `image::imageops::resize` with
    `FilterType::Triangle` does the same). The model input is then float32 pixel / 255 with
    shape (1, 1, 32, 128).
    """
    w, h = crop.size
    new_w = max(1, int(math.floor(w * H / h + 0.5)))
    if new_w > W:
        return np.asarray(crop.resize((W, H), Image.BILINEAR), np.uint8)
    out = Image.new("L", (W, H), 255)
    out.paste(crop.resize((new_w, H), Image.BILINEAR), (0, 0))
    return np.asarray(out, np.uint8)


# ------------------------------------------------------------------- fonts

# fontconfig family -> typeface (clones of one design share a typeface, so holding one out
# holds out all its clones)
TYPEFACES = {
    # serif
    "DejaVu Serif": "dejavu-serif", "Liberation Serif": "liberation-serif", "FreeSerif": "freeserif",
    "Noto Serif": "noto-serif", "Noto Serif Display": "noto-serif", "C059": "century",
    "TeX Gyre Schola": "century", "Nimbus Roman": "times", "TeX Gyre Termes": "times",
    "URW Bookman": "bookman", "TeX Gyre Bonum": "bookman", "Caladea": "caladea",
    "EB Garamond": "garamond", "Linux Libertine O": "libertine", "P052": "palatino",
    "TeX Gyre Pagella": "palatino",
    # sans
    "DejaVu Sans": "dejavu-sans", "Liberation Sans": "liberation-sans",
    "Liberation Sans Narrow": "liberation-sans", "FreeSans": "freesans", "Noto Sans": "noto-sans",
    "Nimbus Sans": "helvetica", "Nimbus Sans Narrow": "helvetica", "TeX Gyre Heros": "helvetica",
    "TeX Gyre Heros Cn": "helvetica", "Linux Biolinum O": "biolinum", "URW Gothic": "avantgarde",
    "TeX Gyre Adventor": "avantgarde", "Carlito": "carlito",
}
SERIF = {"dejavu-serif", "liberation-serif", "freeserif", "noto-serif", "century", "times", "bookman",
         "caladea", "garamond", "libertine", "palatino"}
# Typefaces never used for training: the test sets render with these only.
HELD_OUT = {"palatino", "carlito"}

FIG_WHITE = {"K": "♔", "Q": "♕", "R": "♖", "B": "♗", "N": "♘"}
FIG_BLACK = {"K": "♚", "Q": "♛", "R": "♜", "B": "♝", "N": "♞"}
FIG_LABEL = {v: k for d in (FIG_WHITE, FIG_BLACK) for k, v in d.items()}
TR_LETTERS = {"K": "Ş", "Q": "V", "R": "K", "B": "F", "N": "A"}


def fc_list(pattern=None):
    cmd = ["fc-list", "--format", "%{family[0]}\t%{style[0]}\t%{weight}\t%{slant}\t%{file}\n"]
    if pattern:
        cmd.insert(1, pattern)
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    rows = []
    for ln in out.splitlines():
        parts = ln.split("\t")
        if len(parts) == 5 and parts[4].lower().endswith((".ttf", ".otf")):
            rows.append(parts)
    return rows


def style_of(weight, slant):
    bold = int(weight) >= 180
    italic = int(slant) >= 100
    return ("bold" if bold else "") + ("italic" if italic else "") or "regular"


def renders(path, ch):
    """True when the font draws `ch` as a real glyph (not empty, not the .notdef box)."""
    f = ImageFont.truetype(path, 48)
    m = np.asarray(f.getmask(ch))
    if m.size == 0 or m.max() == 0:
        return False
    nd = np.asarray(f.getmask("\U0010fffd"))
    return not (m.shape == nd.shape and np.array_equal(m, nd))


def load_fonts(split):
    """{typeface: [(file, style)]} of the split, and the list of figurine font files."""
    faces = {}
    seen = set()
    for fam, _style, weight, slant, path in fc_list(":charset=15e bd"):  # Ş and ½
        tf = TYPEFACES.get(fam)
        if tf is None or path in seen or int(weight) < 50:
            continue
        if (split == "train") == (tf in HELD_OUT):
            continue
        seen.add(path)
        faces.setdefault(tf, []).append((path, style_of(weight, slant)))
    fig = sorted({r[4] for r in fc_list(":charset=2654-2658 265a-265e")})
    fig = [p for p in fig if "Mono" not in p and all(renders(p, c) for c in "♔♕♖♗♘♚♛♜♝♞")]
    if not faces or not fig:
        sys.exit("no fonts: install fonts-dejavu, fonts-freefont-ttf, fonts-urw-base35, ... (models/words.md)")
    return faces, fig


_FONT_CACHE = {}


def font(path, size):
    key = (path, size)
    f = _FONT_CACHE.get(key)
    if f is None:
        if len(_FONT_CACHE) > 600:
            _FONT_CACHE.clear()
        f = _FONT_CACHE[key] = ImageFont.truetype(path, size)
    return f


# ------------------------------------------------------------------- texts


def load_moves(paths, max_games):
    """(move number, white to move, SAN) of every mainline move of the games."""
    return [(b.fullmove_number, b.turn == chess.WHITE, b.san(mv)) for b, mv in game_moves(paths, max_games)]


def spell_move(san, notation, rng, black_set):
    """The printed form of a SAN move (figurines as glyphs)."""
    s = san
    if s.startswith("O-O"):
        zero = {"en": 0.15, "tr": 0.85, "fig": 0.4}[notation]
        if rng.random() < zero:
            s = s.replace("O", "0")
        return s
    if "=" in s:
        keep_eq = {"en": 0.8, "tr": 0.4, "fig": 0.6}[notation]
        if rng.random() >= keep_eq:
            s = s.replace("=", "")
    if notation == "tr":
        s = "".join(TR_LETTERS.get(c, c) for c in s)
    elif notation == "fig":
        table = FIG_BLACK if black_set else FIG_WHITE
        s = "".join(table.get(c, c) for c in s)
    return s


ANNOTATIONS = ["!", "?", "!?", "?!", "!!", "??"]
RESULTS = ["1-0", "0-1", "1/2-1/2", "½-½", "*"]


def make_word(moves, notation, rng):
    """(printed text, kind): a move in `notation`, or sometimes a number, result, annotation."""
    b = rng.random()  # figurines: black glyphs for all moves, for Black's moves only, or never
    r = rng.random()
    num, white, san = rng.choice(moves)
    if rng.random() < 0.05:
        num = rng.randint(1, 150)
    if r < 0.08:
        return f"{num}." if rng.random() < 0.7 else f"{num}...", "num"
    if r < 0.11:
        return rng.choice(RESULTS), "result"
    if r < 0.12:
        return rng.choice(ANNOTATIONS), "ann"
    s = spell_move(san, notation, rng, b < 0.2 or (b < 0.4 and not white))
    if rng.random() < 0.12:
        s += rng.choice(ANNOTATIONS)
    if white and rng.random() < 0.35:
        s = f"{num}.{s}"
    elif not white and rng.random() < 0.15:
        s = f"{num}...{s}"
    return s, notation


def label_of(text):
    return "".join(FIG_LABEL.get(c, c) for c in text)


# ---------------------------------------------------------------- drawing


class Typesetter:
    """Draws a word with a text font, figurines with a chess-glyph font sized to the capitals."""

    def __init__(self, faces, fig_fonts, rng):
        self.faces, self.fig_fonts = faces, fig_fonts
        tf = rng.choice(sorted(faces))
        files = faces[tf]
        want = rng.choices(["regular", "bold", "italic", "bolditalic"], [0.55, 0.2, 0.17, 0.08])[0]
        pick = [f for f in files if f[1] == want] or [f for f in files if f[1] == "regular"] or files
        self.path, self.style = rng.choice(pick)
        self.typeface = tf
        # x-height 12..48 px (log-uniform): text font size ~ x-height / 0.5
        self.size = int(round(math.exp(rng.uniform(math.log(12), math.log(48))) / 0.5))
        self.font = font(self.path, self.size)
        cap = self.font.getbbox("H", anchor="ls")
        self.cap = max(4, -cap[1])
        same = [p for p in fig_fonts if p == self.path]
        fpath = same[0] if same and rng.random() < 0.7 else rng.choice(fig_fonts)
        g = font(fpath, 100).getbbox("♘", anchor="ls")
        gh = max(1, g[3] - g[1])
        self.fig_font = font(fpath, max(6, int(round(100 * self.cap * rng.uniform(0.95, 1.25) / gh))))
        self.fig_path = fpath
        self.space = self.font.getlength(" ")

    def runs(self, text):
        out = []
        for ch in text:
            is_fig = ch in FIG_LABEL
            if out and out[-1][1] == is_fig:
                out[-1][0] += ch
            else:
                out.append([ch, is_fig])
        return out

    def width(self, text):
        return sum((self.fig_font if f else self.font).getlength(t) for t, f in self.runs(text))

    def draw(self, d, x, baseline, text):
        for t, f in self.runs(text):
            fnt = self.fig_font if f else self.font
            d.text((x, baseline), t, font=fnt, fill=255, anchor="ls")
            x += fnt.getlength(t)
        return x


def ink_box(a, thr=100):
    ys = np.where(a.max(1) >= thr)[0]
    xs = np.where(a.max(0) >= thr)[0]
    if len(xs) == 0:
        return None
    return xs[0], ys[0], xs[-1], ys[-1]


def affine(img, rng, angle, shear):
    """Rotate by `angle` degrees and shear horizontally about the image centre (bilinear)."""
    w, h = img.size
    cx, cy = w / 2, h / 2
    a = math.radians(angle)
    ca, sa = math.cos(a), math.sin(a)
    # inverse map: output (x, y) -> input; rotation then shear
    m = np.array([[ca, -sa], [sa, ca]]) @ np.array([[1, shear], [0, 1]])
    inv = np.linalg.inv(m)
    c = np.array([cx, cy]) - inv @ np.array([cx, cy])
    return img.transform((w, h), Image.AFFINE, (inv[0, 0], inv[0, 1], c[0], inv[1, 0], inv[1, 1], c[1]),
                         resample=Image.BILINEAR)


def make_sample(text, moves, notation, faces, fig_fonts, rng):
    ts = Typesetter(faces, fig_fonts, rng)
    nrng = random.Random(rng.random())
    left = make_word(moves, notation, nrng)[0] if rng.random() < 0.7 else None
    right = make_word(moves, notation, nrng)[0] if rng.random() < 0.7 else None
    gap_l = ts.space * rng.uniform(0.4, 1.6)
    gap_r = ts.space * rng.uniform(0.4, 1.6)
    margin = int(ts.size * 0.6) + 12
    tw = ts.width(text)
    lw = ts.width(left) if left else 0
    rw = ts.width(right) if right else 0
    cw = int(margin * 2 + lw + gap_l + tw + gap_r + rw) + 4
    chh = int(ts.size * 1.9) + 2 * 12
    baseline = int(12 + ts.size * 1.25)
    tgt = Image.new("L", (cw, chh), 0)
    nb = Image.new("L", (cw, chh), 0)
    x0 = margin + lw + gap_l
    ts.draw(ImageDraw.Draw(tgt), x0, baseline, text)
    dn = ImageDraw.Draw(nb)
    if left:
        ts.draw(dn, margin, baseline, left)
    if right:
        ts.draw(dn, x0 + tw + gap_r, baseline, right)
    box = ink_box(np.asarray(tgt))
    if box is None:
        return None
    # work only on the neighbourhood of the word
    pad = 24
    region = (max(0, box[0] - pad), max(0, box[1] - pad), min(cw, box[2] + pad + 1), min(chh, box[3] + pad + 1))
    tgt, nb = tgt.crop(region), nb.crop(region)
    # geometry: rotation ±1°, small shear
    angle = rng.uniform(-1, 1) if rng.random() < 0.7 else 0.0
    shear = rng.uniform(-0.08, 0.08) if rng.random() < 0.3 else 0.0
    if angle or shear:
        tgt, nb = affine(tgt, rng, angle, shear), affine(nb, rng, angle, shear)
    # stroke weight (ink is bright in these layers: MaxFilter thickens)
    r = rng.random()
    if LEGACY_AUG:  # how train1/train2/val of the shipped model were made (models/words.md)
        thin_ok = ts.size >= 44
    else:  # a 3x3 erosion wipes out hairlines and the thin outlines of white figurines
        thin_ok = ts.size >= 64 and not any(c in FIG_LABEL for c in text)
    if r < 0.12:
        tgt, nb = tgt.filter(ImageFilter.MaxFilter(3)), nb.filter(ImageFilter.MaxFilter(3))
    elif r < 0.22 and thin_ok:
        tgt, nb = tgt.filter(ImageFilter.MinFilter(3)), nb.filter(ImageFilter.MinFilter(3))
    t = np.asarray(tgt, np.float32) / 255.0
    n = np.asarray(nb, np.float32) / 255.0
    box = ink_box(np.asarray(tgt))
    nbox = np.where(n.max(0) >= 0.4)[0]
    if box is None:
        return None
    # print + scan: paper, ink, blur, low resolution, noise, JPEG or binarisation
    alpha = np.maximum(t, n)
    paper = rng.uniform(190, 255) if rng.random() < 0.85 else rng.uniform(150, 200)
    ink = rng.uniform(0, 70) if rng.random() < 0.85 else rng.uniform(60, 120)
    if rng.random() < 0.3:  # uneven light
        h_, w_ = alpha.shape
        gx = np.linspace(-1, 1, w_)[None, :] * rng.uniform(-15, 15) + np.linspace(-1, 1, h_)[:, None] * rng.uniform(-10, 10)
        paper = np.clip(paper + gx, 120, 255)
    page = paper - (paper - ink) * alpha
    img = Image.fromarray(np.clip(page, 0, 255).astype(np.uint8))
    if rng.random() < 0.5:
        img = img.filter(ImageFilter.GaussianBlur(rng.uniform(0.3, 1.2) * max(1.0, ts.size / 48)))
    if rng.random() < 0.3:  # low-resolution scan
        f = rng.uniform(1.5, 3.5)
        w_, h_ = img.size
        img = img.resize((max(1, int(w_ / f)), max(1, int(h_ / f))), rng.choice([Image.BILINEAR, Image.BOX]))
        img = img.resize((w_, h_), rng.choice([Image.BILINEAR, Image.BICUBIC, Image.NEAREST]))
    arr = np.asarray(img, np.float32)
    if rng.random() < 0.7:
        arr = arr + np.random.default_rng(rng.randrange(2**31)).normal(0, rng.uniform(1, 10), arr.shape)
    img = Image.fromarray(np.clip(arr, 0, 255).astype(np.uint8))
    r = rng.random()
    if r < 0.1:
        if LEGACY_AUG:
            thr = rng.uniform(0.35, 0.65) * 255
        else:  # between the ink and the paper level, so that light print does not vanish
            thr = float(np.min(ink)) + (float(np.mean(paper)) - float(np.min(ink))) * rng.uniform(0.35, 0.65)
        img = Image.fromarray(np.where(np.asarray(img) < thr, 0, 255).astype(np.uint8))
    elif r < 0.6:
        buf = io.BytesIO()
        img.save(buf, "JPEG", quality=rng.randint(40, 90))
        img = Image.open(io.BytesIO(buf.getvalue())).convert("L")
    # the segmenter's box: tight ink box + 2 px, ±1–2 px jitter, sometimes a neighbour's sliver
    x0, y0, x1, y1 = box
    jit = [rng.choice([-2, -1, 0, 0, 1, 2]) if rng.random() < 0.5 else 0 for _ in range(4)]
    bx0, by0, bx1, by1 = x0 - 2 + jit[0], y0 - 2 + jit[1], x1 + 2 + 1 + jit[2], y1 + 2 + 1 + jit[3]
    if rng.random() < 0.15 and len(nbox):
        lefts, rights = nbox[nbox < x0], nbox[nbox > x1]
        if len(lefts) and (rng.random() < 0.5 or not len(rights)):
            bx0 = min(bx0, lefts[-1] - rng.randint(0, 4))
        elif len(rights):
            bx1 = max(bx1, rights[0] + rng.randint(1, 5))
    w_, h_ = img.size
    bx0, by0, bx1, by1 = max(0, bx0), max(0, by0), min(w_, bx1), min(h_, by1)
    if bx1 - bx0 < 2 or by1 - by0 < 2:
        return None
    return preprocess(img.crop((bx0, by0, bx1, by1))), ts


# ---------------------------------------------------------------- driver


_WORKER = {}
# --legacy-aug: the first revision's stroke thinning (from 44 px, figurines too) and absolute
# binarisation threshold, with which the shipped model's training data was generated
LEGACY_AUG = False


def init_worker(legacy):
    global LEGACY_AUG
    LEGACY_AUG = legacy


def shard(args):
    seed, n, split, lang, games, max_games = args
    rng = random.Random(seed)
    key = (split, tuple(games), max_games)
    if key not in _WORKER:  # once per worker process
        _WORKER[key] = load_fonts(split), load_moves(games, max_games)
    (faces, fig_fonts), moves = _WORKER[key]
    images = np.zeros((n, H, W), np.uint8)
    labels, kinds, fonts = [], [], []
    i = 0
    while i < n:
        notation = lang if lang != "mix" else rng.choices(["en", "tr", "fig"], [0.36, 0.32, 0.32])[0]
        text, kind = make_word(moves, notation, rng)
        out = make_sample(text, moves, notation, faces, fig_fonts, rng)
        if out is None:
            continue
        images[i] = out[0]
        lab = label_of(text)
        assert all(c in ALPHABET for c in lab), lab
        labels.append(lab)
        kinds.append(kind)
        fonts.append(f"{out[1].typeface}/{out[1].style}/{os.path.basename(out[1].fig_path) if kind == 'fig' else ''}")
        i += 1
    return images, labels, kinds, fonts


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--split", choices=["train", "test"], default="train")
    ap.add_argument("--lang", choices=["mix", "en", "tr", "fig"], default="mix")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--games", nargs="*", default=default_games())
    ap.add_argument("--max-games", type=int, default=5000)
    ap.add_argument("--preview", help="write a PNG sheet of the first 48 samples")
    ap.add_argument("--legacy-aug", action="store_true",
                    help="the first revision's thinning and binarisation (reproduces the shipped training data)")
    a = ap.parse_args()
    faces, fig_fonts = load_fonts(a.split)
    print(f"{a.split}: typefaces {sorted(faces)} ({sum(len(v) for v in faces.values())} files); "
          f"figurine fonts {[os.path.basename(p) for p in fig_fonts]}", file=sys.stderr)
    # shards of 2,000 samples, each seeded from (seed, shard index): the output does not depend
    # on --workers
    jobs, left, k = [], a.n, 0
    while left > 0:
        m = min(2000, left)
        jobs.append((a.seed * 100003 + k, m, a.split, a.lang, a.games, a.max_games))
        left -= m
        k += 1
    with Pool(a.workers, initializer=init_worker, initargs=(a.legacy_aug,)) as pool:
        parts = pool.map(shard, jobs, chunksize=1)
    images = np.concatenate([p[0] for p in parts])
    labels = [x for p in parts for x in p[1]]
    kinds = [x for p in parts for x in p[2]]
    fonts = [x for p in parts for x in p[3]]
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    np.savez_compressed(a.out, images=images, labels=np.array(labels, dtype=object),
                        kinds=np.array(kinds, dtype=object), fonts=np.array(fonts, dtype=object))
    print(f"wrote {a.out}: {len(labels)} words", file=sys.stderr)
    if a.preview:
        write_preview(a.preview, images, labels)


if __name__ == "__main__":
    main()
