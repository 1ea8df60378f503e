#!/usr/bin/env python3
"""Synthetic chess-board images and square crops for the square classifier (models/squares.onnx).

    python3 scripts/boards_synth.py --seed 100 --boards 400 --p-empty 0.35 --out work-tmp/boards/synth-val.npz
    for s in 1 2 3 4; do python3 scripts/boards_synth.py --seed $s --boards 3000 --p-empty 0.35 \
        --out work-tmp/boards/synth-$s.npz; done
    python3 scripts/boards_synth.py --seed 3 --boards 8 --sheet work-tmp/boards/sheet.png  # look at it

Renders whole boards (positions from datasets/games plus sparse and random placements) in many styles:
printed book diagrams (hatched / dotted / grey dark squares, frames, outside coordinates, scans) and
screen styles (colour pairs, last-move and check highlights, move dots, arrows, circles, coordinates
inside the squares), then degrades the whole image (perspective, illumination, glare, moire, blur,
low resolution, noise, JPEG), records the four board corners, and cuts the 64 squares the way the
Rust side will: the square (margin M = 0) with jitter imitating imperfect localisation
(shift +-6 % of a square, scale +-6 %, rotation +-2 deg, slight perspective), grey
(0.2126 R + 0.7152 G + 0.0722 B), resized to S x S with bilinear filtering.
Same seed -> same output. Output .npz: images uint8 [N, S, S], labels uint8 [N] (class order below),
style uint8 [N] (0 book, 1 screen).
Class order: 0 empty, 1..6 white P N B R Q K, 7..12 black p n b r q k.
"""
import argparse
import io
import math
import os
import random
import sys

import numpy as np
from PIL import Image, ImageDraw, ImageFilter, ImageFont

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "boards"))
import assets as A  # noqa: E402

S = 32          # model input size
MARGIN = 0.0    # crop margin, fraction of a square on every side
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
GAMES = [os.path.join(ROOT, "datasets/games", f) for f in ("lichess_classical.pgn", "malakhov_master.pgn")]
FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
FONT_B = "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"
LAST = {}  # what the last render() drew (see there)
SYM = "PNBRQKpnbrqk"

SCREEN_PALETTES = [  # (light, dark)
    ((240, 217, 181), (181, 136, 99)),   # lichess brown
    ((238, 238, 210), (118, 150, 86)),   # chess.com green
    ((222, 227, 230), (140, 162, 173)),  # blue-grey
    ((234, 233, 210), (75, 115, 153)),   # blue
    ((232, 235, 239), (125, 135, 150)),  # grey
    ((255, 255, 255), (200, 200, 200)),  # very light
    ((240, 240, 240), (160, 160, 160)),
    ((238, 238, 238), (140, 140, 140)),
    ((255, 206, 158), (209, 139, 71)),   # wood-ish
    ((240, 241, 240), (196, 216, 228)),  # pale blue
    ((230, 220, 240), (140, 110, 170)),  # purple
    ((250, 230, 210), (200, 120, 110)),  # coral
    ((245, 245, 220), (150, 120, 80)),
    ((210, 210, 210), (90, 90, 90)),     # dark theme
    ((180, 180, 180), (110, 110, 110)),
    ((255, 255, 255), (120, 120, 120)),
]


# ----------------------------------------------------------------------------- positions
_GAMES = None


def load_games():
    global _GAMES
    if _GAMES is None:
        import chess.pgn
        _GAMES = []
        for p in GAMES:
            with open(p) as fh:
                while True:
                    g = chess.pgn.read_game(fh)
                    if g is None:
                        break
                    _GAMES.append([m for m in g.mainline_moves()])
    return _GAMES


def placement(rng):
    """8x8 int array, row 0 = rank 8, col 0 = file a; values 0..12."""
    import chess
    grid = np.zeros((8, 8), np.uint8)
    r = rng.random()
    if r < 0.72:
        moves = rng.choice(load_games())
        b = chess.Board()
        k = rng.randint(0, len(moves)) if rng.random() < 0.8 else rng.randint(len(moves) // 2, len(moves))
        for m in moves[:k]:
            b.push(m)
        pm = b.piece_map()
        if rng.random() < 0.12:  # thin out: endgame-like / study-like
            keep = [sq for sq in pm if pm[sq].piece_type == chess.KING or rng.random() < 0.4]
            pm = {sq: pm[sq] for sq in keep}
    else:  # random legal-looking placement
        pm = {}
        n = rng.choice([2, 3, 4, 5, 6, 8, 10, 14, 20, 26, 32])
        squares = rng.sample(range(64), n)
        for i, sq in enumerate(squares):
            if i < 2:
                sym = "Kk"[i]
            else:
                sym = rng.choice("PPPPppppNNnnBBbbRRrrQqKk" if rng.random() < 0.05 else "PPPPppppNNnnBBbbRRrrQq")
                if sym in "Pp" and chess.square_rank(sq) in (0, 7):
                    sym = rng.choice("NBRQnbrq")
            pm[sq] = chess.Piece.from_symbol(sym)
    for sq, pc in pm.items():
        grid[7 - chess.square_rank(sq), chess.square_file(sq)] = SYM.index(pc.symbol()) + 1
    return grid


# ----------------------------------------------------------------------------- helpers
def homography(src, dst):
    """3x3 H with dst ~ H @ src for 4 point pairs."""
    a = []
    for (x, y), (u, v) in zip(src, dst):
        a.append([x, y, 1, 0, 0, 0, -u * x, -u * y])
        a.append([0, 0, 0, x, y, 1, -v * x, -v * y])
    h = np.linalg.solve(np.array(a, np.float64), np.array(dst, np.float64).ravel())
    return np.append(h, 1).reshape(3, 3)


def apply_h(h, pts):
    pts = np.asarray(pts, np.float64)
    p = np.c_[pts, np.ones(len(pts))] @ h.T
    return p[:, :2] / p[:, 2:3]


def luma(rgb, rng=None):
    w = np.array([0.2126, 0.7152, 0.0722])
    if rng is not None and rng.random() < 0.5:
        w = w + np.array([rng.uniform(-0.08, 0.08), rng.uniform(-0.08, 0.08), rng.uniform(-0.04, 0.04)])
        w = np.clip(w, 0.02, None)
        w /= w.sum()
    return rgb @ w


def smooth_noise(rng, h, w, cells):
    g = np.asarray(Image.fromarray((np.random.default_rng(rng.randint(0, 2**31)).random((cells, cells)) * 255)
                                   .astype(np.uint8)).resize((w, h), Image.BICUBIC), np.float32) / 255.0
    return g


# ----------------------------------------------------------------------------- rendering
def dark_pattern(rng, h, w, n):
    """Book-style dark-square texture as ink coverage 0..1 over an h x w area."""
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    kind = rng.choices(["hatch", "hatch2", "dots", "grey", "cross", "stipple"], [0.5, 0.1, 0.08, 0.16, 0.08, 0.08])[0]
    if kind in ("hatch", "hatch2", "cross"):
        period = rng.uniform(2.2, max(2.6, n / 6.0)) if kind != "hatch2" else rng.uniform(max(3, n / 10), max(4, n / 4))
        width = rng.uniform(0.25, 0.6) * period
        ang = rng.choice([45, -45, 45, 135, rng.uniform(30, 60), 0, 90]) * math.pi / 180
        if kind == "cross":
            ang = 45 * math.pi / 180
        t = xx * math.cos(ang) + yy * math.sin(ang)
        d = np.abs((t / period) % 1.0 - 0.5) * period  # distance to line centre
        cov = np.clip(width / 2 - d + 0.5, 0, 1)
        if kind == "cross":
            t2 = xx * math.cos(-ang) + yy * math.sin(-ang)
            d2 = np.abs((t2 / period) % 1.0 - 0.5) * period
            cov = np.maximum(cov, np.clip(width / 2 - d2 + 0.5, 0, 1))
        return cov * rng.uniform(0.7, 1.0), kind
    if kind == "dots":
        period = rng.uniform(2.5, max(3, n / 6))
        r = rng.uniform(0.2, 0.4) * period
        dx = (xx / period) % 1.0 - 0.5
        dy = (yy / period) % 1.0 - 0.5
        d = np.sqrt(dx ** 2 + dy ** 2) * period
        return np.clip(r - d + 0.5, 0, 1), kind
    if kind == "stipple":
        p = rng.uniform(0.2, 0.6)
        return (np.random.default_rng(rng.randint(0, 2**31)).random((h, w)) < p).astype(np.float32), kind
    return np.full((h, w), rng.uniform(0.15, 0.55), np.float32), kind


def piece_sprite(rng, sprite, n, scale, tone):
    a = np.asarray(sprite, np.float32)
    sz = max(4, int(round(n * scale)))
    im = Image.fromarray((a * 255).astype(np.uint8), "RGBA").resize((sz, sz), Image.LANCZOS)
    a = np.asarray(im, np.float32) / 255.0
    if tone is not None:  # remap luminance (grey-ish pieces, low contrast sets)
        lo, hi = tone
        l = luma(a[..., :3])
        a[..., :3] = (lo + (hi - lo) * l)[..., None] * (a[..., :3] / np.maximum(l, 1e-3)[..., None]).clip(0, 1.5)
        a[..., :3] = a[..., :3].clip(0, 1)
    return a


def render(rng, grid, sets, book_sets, other_sets, marks=False, flip=None, coords=None, fonts=None):
    """Returns (rgb float32 HxWx3 0..255, corners 4x2 [tl, tr, br, bl] in pixel coords, style).

    `marks` (off in the recipes before session 11, so that they still rebuild byte for byte)
    adds print and screen marks that are not pieces, and heavily inked white pieces in books
    (see `heavy_ink` and `stray_marks`).

    `flip` (True/False) and `coords` (True: always draw coordinates when there is room)
    override the random choices without changing the random stream; `fonts` replaces the
    two coordinate fonts (scripts/coords_eval.py draws them in fonts the coordinate reader
    never saw). `LAST["coords"]` says afterwards whether coordinates were drawn."""
    LAST["coords"] = None
    style = "book" if rng.random() < 0.45 else "screen"
    n = rng.randint(18, 76) if rng.random() < 0.85 else rng.randint(76, 110)
    B = 8 * n
    if style == "book":
        setname = rng.choice(book_sets) if rng.random() < 0.75 else rng.choice(other_sets)
        paper = rng.uniform(215, 255)
        ink = rng.uniform(0, 70)
        light = np.array([paper] * 3)
        bg = light.copy()
        frame = rng.choice([0, 1, 2, 3, 4, 6]) if rng.random() < 0.85 else 0
    else:
        setname = rng.choice(list(sets))
        lt, dk = rng.choice(SCREEN_PALETTES)
        jit = lambda c: np.clip(np.array(c, np.float32) + np.array([rng.uniform(-12, 12) for _ in range(3)]), 0, 255)  # noqa: E731
        light, dark = jit(lt), jit(dk)
        if rng.random() < 0.1:
            light, dark = dark, light
        bg = np.array(rng.choice([(255, 255, 255), (48, 46, 43), (38, 36, 33), (22, 21, 18), (240, 240, 240),
                                  (60, 60, 60)]), np.float32)
        frame = rng.choice([0, 0, 0, 2, 6, 12]) if rng.random() < 0.5 else 0
    pad = int(frame + rng.uniform(0.0, 0.8) * n)
    Wc = B + 2 * pad
    img = np.ones((Wc, Wc, 3), np.float32) * bg
    x0 = pad
    # squares
    yy, xx = np.mgrid[0:B, 0:B]
    darkmask = ((yy // n + xx // n) % 2 == 1)
    board = np.ones((B, B, 3), np.float32) * light
    if style == "book":
        cov, pattern = dark_pattern(rng, B, B, n)
        dk = paper * (1 - cov) + ink * cov
        board[darkmask] = dk[darkmask][:, None]
    else:
        board[darkmask] = dark
        if rng.random() < 0.15:  # wood / texture
            tex = smooth_noise(rng, B, B, rng.randint(4, 40))
            stripes = np.sin(xx * rng.uniform(0.05, 0.4) + tex * 6)[..., None] * rng.uniform(3, 15)
            board += stripes
        if rng.random() < 0.3:  # gradient-shaded squares
            board += (smooth_noise(rng, B, B, 8)[..., None] - 0.5) * rng.uniform(5, 25)
    img[x0:x0 + B, x0:x0 + B] = board
    pil = Image.fromarray(img.clip(0, 255).astype(np.uint8), "RGB")
    dr = ImageDraw.Draw(pil, "RGBA")
    # frame
    if frame:
        fc = (int(ink),) * 3 if style == "book" else tuple(int(c) for c in dark * 0.6)
        for i in range(frame):
            dr.rectangle([x0 - 1 - i, x0 - 1 - i, x0 + B + i, x0 + B + i], outline=fc)
        if style == "book" and rng.random() < 0.3 and pad > frame + 4:
            g = frame + rng.randint(2, 4)
            dr.rectangle([x0 - 1 - g, x0 - 1 - g, x0 + B + g, x0 + B + g], outline=fc)
    flipped = rng.random() < 0.15
    if flip is not None:
        flipped = flip
    font_files = fonts or [FONT, FONT_B]
    files = "abcdefgh"[::-1] if flipped else "abcdefgh"
    ranks = "12345678" if flipped else "87654321"
    # screen overlays under the pieces: last move, check, selected square
    occupied = [(r, c) for r in range(8) for c in range(8) if grid[r, c]]
    empty = [(r, c) for r in range(8) for c in range(8) if not grid[r, c]]
    if style == "screen":
        if rng.random() < 0.6:
            col = rng.choice([(255, 255, 0), (205, 210, 106), (170, 162, 58), (246, 246, 105), (130, 150, 255),
                              (255, 170, 0), (155, 199, 0)])
            al = rng.randint(70, 180)
            for (r, c) in rng.sample(occupied[:1] + empty[:1] + rng.sample(empty + occupied, 2), 2):
                dr.rectangle([x0 + c * n, x0 + r * n, x0 + (c + 1) * n - 1, x0 + (r + 1) * n - 1], fill=col + (al,))
        if rng.random() < 0.15:
            ks = [(r, c) for (r, c) in occupied if grid[r, c] in (6, 12)]
            if ks:
                r, c = rng.choice(ks)
                for k in range(6, 0, -1):
                    rad = n * 0.5 * k / 6 * 1.2
                    cx, cy = x0 + (c + 0.5) * n, x0 + (r + 0.5) * n
                    dr.ellipse([cx - rad, cy - rad, cx + rad, cy + rad], fill=(255, 0, 0, 40))
        if rng.random() < 0.25 or coords:  # coordinates inside the squares' corners
            LAST["coords"] = "inside"
            f = ImageFont.truetype(rng.choice(font_files), max(6, int(n * rng.uniform(0.16, 0.28))))
            for i in range(8):
                cl = tuple(int(v) for v in (dark if i % 2 == 0 else light))
                dr.text((x0 + 2, x0 + i * n + 1), ranks[i], font=f, fill=cl)
                cl = tuple(int(v) for v in (dark if (7 + i) % 2 == 0 else light))
                dr.text((x0 + (i + 1) * n - 2, x0 + B - 2), files[i], font=f, fill=cl, anchor="rb")
    elif pad > n * 0.25 and (rng.random() < 0.6 or coords):  # outside coordinates (book)
        LAST["coords"] = "outside"
        f = ImageFont.truetype(rng.choice(font_files), max(6, int(min(pad - frame, n) * rng.uniform(0.5, 0.8))))
        cl = (int(ink),) * 3
        for i in range(8):
            dr.text((x0 - frame - 3, x0 + (i + 0.5) * n), ranks[i], font=f, fill=cl, anchor="rm")
            dr.text((x0 + (i + 0.5) * n, x0 + B + frame + 2), files[i], font=f, fill=cl, anchor="mt")
    # pieces
    sp = sets[setname]
    scale = rng.uniform(0.8, 1.05)
    tones = [None, None]
    if rng.random() < 0.25:
        tones[0] = (rng.uniform(0.0, 0.3), rng.uniform(0.7, 1.0))
    if rng.random() < 0.25:
        tones[1] = (rng.uniform(0.0, 0.35), rng.uniform(0.6, 1.0))
    cache = {}
    heavy = marks and style == "book" and rng.random() < 0.3
    halo = style == "book" and rng.random() < 0.5
    halo_r = rng.choice([3, 3, 5]) if n > 30 else 3
    for (r, c) in occupied:
        k = int(grid[r, c])
        if k not in cache:
            a = piece_sprite(rng, sp[k - 1], n, scale, tones[(k - 1) // 6])
            if style == "book":  # print: grey ink / paper tones
                l = luma(a[..., :3])
                l = np.where(l > 0.5, 1.0, l) if rng.random() < 0.5 else l
                a[..., :3] = (ink + (paper - ink) * l)[..., None] / 255.0
                if heavy and k <= 6:
                    a = heavy_ink(rng, a, n, paper / 255.0)
            cache[k] = a
        a = cache[k]
        sz = a.shape[0]
        ox = int(round(x0 + c * n + (n - sz) / 2 + rng.uniform(-0.03, 0.03) * n))
        oy = int(round(x0 + r * n + (n - sz) / 2 + rng.uniform(-0.03, 0.03) * n))
        im = Image.fromarray((a * 255).astype(np.uint8), "RGBA")
        if halo and (r + c) % 2 == 1:
            al = im.getchannel("A").point(lambda v: 255 if v > 40 else 0).filter(ImageFilter.MaxFilter(halo_r))
            white = Image.new("RGBA", im.size, (int(paper),) * 3 + (255,))
            pil.paste(white, (ox, oy), al)
        pil.paste(im, (ox, oy), im)
    # screen overlays above the pieces: move dots, rings, arrows, circles
    if style == "screen":
        dcol = rng.choice([(0, 0, 0, 40), (20, 85, 30, 120), (0, 0, 0, 25), (100, 100, 100, 110)])
        if rng.random() < 0.25 and empty:
            for (r, c) in rng.sample(empty, min(len(empty), rng.randint(1, 10))):
                rad = n * rng.uniform(0.1, 0.18)
                cx, cy = x0 + (c + 0.5) * n, x0 + (r + 0.5) * n
                dr.ellipse([cx - rad, cy - rad, cx + rad, cy + rad], fill=dcol)
            for (r, c) in rng.sample(occupied, min(len(occupied), rng.randint(0, 2))):
                w = max(2, int(n * 0.08))
                dr.ellipse([x0 + c * n, x0 + r * n, x0 + (c + 1) * n - 1, x0 + (r + 1) * n - 1], outline=dcol, width=w)
        if rng.random() < 0.2:
            for _ in range(rng.randint(1, 3)):
                col = rng.choice([(21, 120, 27), (255, 170, 0), (136, 32, 32), (0, 48, 136)]) + (rng.randint(120, 220),)
                r0, c0, r1, c1 = [rng.randint(0, 7) for _ in range(4)]
                p0 = (x0 + (c0 + 0.5) * n, x0 + (r0 + 0.5) * n)
                p1 = (x0 + (c1 + 0.5) * n, x0 + (r1 + 0.5) * n)
                if p0 == p1:
                    continue
                w = max(2, int(n * rng.uniform(0.12, 0.22)))
                dr.line([p0, p1], fill=col, width=w)
                ang = math.atan2(p1[1] - p0[1], p1[0] - p0[0])
                hl = n * 0.35
                pts = [p1, (p1[0] - hl * math.cos(ang - 0.5), p1[1] - hl * math.sin(ang - 0.5)),
                       (p1[0] - hl * math.cos(ang + 0.5), p1[1] - hl * math.sin(ang + 0.5))]
                dr.polygon(pts, fill=col)
        if rng.random() < 0.1:
            for _ in range(rng.randint(1, 3)):
                r, c = rng.randint(0, 7), rng.randint(0, 7)
                col = rng.choice([(21, 120, 27), (255, 170, 0), (136, 32, 32)]) + (rng.randint(120, 220),)
                dr.ellipse([x0 + c * n + 2, x0 + r * n + 2, x0 + (c + 1) * n - 3, x0 + (r + 1) * n - 3], outline=col,
                           width=max(2, int(n * 0.08)))
    if marks and rng.random() < 0.4:
        stray_marks(rng, dr, x0, n, style, ink if style == "book" else 40.0)
    rgb = np.asarray(pil.convert("RGB"), np.float32)
    corners = np.array([[x0, x0], [x0 + B, x0], [x0 + B, x0 + B], [x0, x0 + B]], np.float64)
    return rgb, corners, style if style == "screen" or pattern == "grey" else "book-bw"


def heavy_ink(rng, a, n, paper):
    """A white piece printed with too much ink: its outline thickened and its inside greyed,
    as in old books and photocopies where White's pieces come out dark grey (RGBA 0..1)."""
    rgb = Image.fromarray((a[..., :3] * 255).astype(np.uint8), "RGB")
    size = 3 if n < 50 else 5
    thick = np.asarray(rgb.filter(ImageFilter.MinFilter(size)), np.float32) / 255.0
    out = a.copy()
    out[..., :3] = np.minimum(a[..., :3], thick)
    inside = luma(out[..., :3]) > 0.5 * paper
    out[..., :3] = np.where(inside[..., None], out[..., :3] * rng.uniform(0.55, 0.9), out[..., :3])
    return out


def stray_marks(rng, dr, x0, n, style, ink):
    """Marks that are not pieces, on random squares: ink specks and dots, soft grey smudges,
    and light flecks (dust, glare), each well inside one square."""
    for _ in range(rng.randint(1, 6)):
        r, c = rng.randint(0, 7), rng.randint(0, 7)
        cx = x0 + (c + rng.uniform(0.25, 0.75)) * n
        cy = x0 + (r + rng.uniform(0.25, 0.75)) * n
        kind = rng.random()
        if kind < 0.45:  # speck or dot of ink
            rad = n * rng.uniform(0.02, 0.08)
            g = int(ink + rng.uniform(0, 60))
            col = (g, g, g, rng.randint(140, 255))
        elif kind < 0.8:  # soft grey smudge
            rad = n * rng.uniform(0.08, 0.22)
            g = int(rng.uniform(60, 160))
            col = (g, g, g, rng.randint(30, 100))
        else:  # light fleck
            rad = n * rng.uniform(0.02, 0.1)
            g = int(rng.uniform(200, 255))
            col = (g, g, g, rng.randint(120, 230))
        rx, ry = rad * rng.uniform(0.6, 1.4), rad * rng.uniform(0.6, 1.4)
        dr.ellipse([cx - rx, cy - ry, cx + rx, cy + ry], fill=col)


def degrade(rng, rgb, corners, style):
    """Whole-image degradations; returns grey float32 image 0..255 and the moved corners."""
    h, w = rgb.shape[:2]
    photo = rng.random() < (0.35 if style == "screen" else 0.25)
    book = style.startswith("book")
    # perspective / rotation
    if photo or rng.random() < 0.3:
        amt = rng.uniform(0.0, 0.07 if photo else 0.015) * w
        src = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float64)
        dst = src + np.array([[rng.uniform(-amt, amt), rng.uniform(-amt, amt)] for _ in range(4)])
        rot = rng.uniform(-3, 3) * math.pi / 180
        cx, cy = w / 2, h / 2
        dst = np.array([[cx + (x - cx) * math.cos(rot) - (y - cy) * math.sin(rot),
                         cy + (x - cx) * math.sin(rot) + (y - cy) * math.cos(rot)] for x, y in dst])
        mn = dst.min(0) - rng.uniform(0, 0.1) * w
        dst -= mn
        ow, oh = int(dst[:, 0].max() + rng.uniform(0, 0.1) * w), int(dst[:, 1].max() + rng.uniform(0, 0.1) * h)
        hinv = homography(dst, src)  # output -> input
        coeffs = (hinv / hinv[2, 2]).ravel()[:8]
        fill = tuple(int(v) for v in rgb[0, 0])
        im = Image.fromarray(rgb.clip(0, 255).astype(np.uint8)).transform(
            (ow, oh), Image.PERSPECTIVE, coeffs, Image.BILINEAR, fillcolor=fill)
        corners = apply_h(homography(src, dst), corners)
        rgb = np.asarray(im, np.float32)
        h, w = rgb.shape[:2]
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    if photo:
        if rng.random() < 0.4:  # moire
            f1, f2 = rng.uniform(0.15, 0.5), rng.uniform(0.15, 0.5)
            a1 = rng.uniform(0, 2 * math.pi)
            rgb = rgb + (np.sin(2 * math.pi * (f1 * xx * math.cos(a1) + f2 * yy * math.sin(a1)))
                         * rng.uniform(3, 14))[..., None]
        # uneven illumination
        g = 1 + (smooth_noise(rng, h, w, 3) - 0.5) * rng.uniform(0.2, 0.7)
        g *= 1 + ((xx / w - 0.5) * rng.uniform(-0.4, 0.4) + (yy / h - 0.5) * rng.uniform(-0.4, 0.4))
        rgb = rgb * g[..., None] * rng.uniform(0.6, 1.05)
        rgb = rgb + rng.uniform(-20, 30)
        if rng.random() < 0.35:  # glare
            cx, cy, rad = rng.uniform(0, w), rng.uniform(0, h), rng.uniform(0.1, 0.5) * w
            rgb = rgb + (np.exp(-((xx - cx) ** 2 + (yy - cy) ** 2) / (2 * rad ** 2)) * rng.uniform(30, 120))[..., None]
        if rng.random() < 0.5:  # colour cast
            rgb = rgb * np.array([rng.uniform(0.85, 1.15) for _ in range(3)])
    elif book and rng.random() < 0.3:  # scan: paper tone, slight unevenness
        g = 1 + (smooth_noise(rng, h, w, 4) - 0.5) * rng.uniform(0.05, 0.25)
        rgb = rgb * g[..., None]
    if rng.random() < 0.3:  # contrast / gamma
        gam = rng.uniform(0.6, 1.6)
        rgb = 255 * (rgb.clip(0, 255) / 255) ** gam
    grey = luma(rgb.clip(0, 255), rng)
    if style == "book-bw" and not photo and rng.random() < 0.12:  # harsh binarisation (bitmap PDF, photocopy)
        lo, hi = np.percentile(grey, 2), np.percentile(grey, 98)
        t = lo + (hi - lo) * rng.uniform(0.4, 0.65)
        grey = np.where(grey > t, rng.uniform(220, 255), rng.uniform(0, 50))
    im = Image.fromarray(grey.clip(0, 255).astype(np.uint8), "L")
    if rng.random() < 0.5:
        im = im.filter(ImageFilter.GaussianBlur(rng.uniform(0.2, 1.6 if photo else 1.0)))
    if rng.random() < 0.3:  # low resolution
        f = rng.uniform(0.35, 0.9)
        small = im.resize((max(16, int(w * f)), max(16, int(h * f))), rng.choice([Image.BILINEAR, Image.NEAREST, Image.BOX]))
        if rng.random() < 0.5:
            im = small.resize((w, h), Image.BILINEAR)
        else:  # keep the low resolution, scale the corners
            corners = corners * np.array([small.size[0] / w, small.size[1] / h])
            im = small
    a = np.asarray(im, np.float32)
    if rng.random() < 0.6:
        a = a + np.random.default_rng(rng.randint(0, 2**31)).normal(0, rng.uniform(1, 10), a.shape)
    im = Image.fromarray(a.clip(0, 255).astype(np.uint8), "L")
    if rng.random() < 0.6:
        buf = io.BytesIO()
        im.save(buf, "JPEG", quality=rng.randint(15, 92))
        im = Image.open(io.BytesIO(buf.getvalue())).convert("L")
    return np.asarray(im, np.float32), corners


def cut_squares(rng, grey, corners, jitter=True):
    """The 64 crops (row-major from the image's top-left square), [64, S, S] uint8."""
    h_b2i = homography([[0, 0], [8, 0], [8, 8], [0, 8]], corners)
    im = Image.fromarray(grey.clip(0, 255).astype(np.uint8), "L")
    native = np.linalg.norm(corners[1] - corners[0]) / 8
    out = np.zeros((64, S, S), np.uint8)
    for r in range(8):
        for c in range(8):
            if jitter:
                big = rng.random() < 0.15
                sh = 0.1 if big else 0.06
                dx, dy = rng.uniform(-sh, sh), rng.uniform(-sh, sh)
                sc = 1 + rng.uniform(-0.06, 0.06)
                rot = rng.uniform(-2, 2) * math.pi / 180
                pj = 0.02
            else:
                dx = dy = rot = pj = 0.0
                sc = 1.0
            half = 0.5 * sc * (1 + 2 * MARGIN)
            cx, cy = c + 0.5 + dx, r + 0.5 + dy
            pts = []
            for (u, v) in [(-1, -1), (-1, 1), (1, 1), (1, -1)]:  # UL, LL, LR, UR (PIL QUAD order)
                x = u * half * math.cos(rot) - v * half * math.sin(rot) + (rng.uniform(-pj, pj) if pj else 0)
                y = u * half * math.sin(rot) + v * half * math.cos(rot) + (rng.uniform(-pj, pj) if pj else 0)
                pts.append((cx + x, cy + y))
            q = apply_h(h_b2i, pts).ravel().tolist()
            if jitter and rng.random() < 0.3:
                k = S  # direct bilinear sampling at the model size (aliased)
            else:
                k = max(S, int(round(native * (1 + 2 * MARGIN) * (rng.uniform(0.8, 1.3) if jitter else 1))))
            sq = im.transform((k, k), Image.QUAD, q, Image.BILINEAR)
            if k != S:
                sq = sq.resize((S, S), Image.BILINEAR)
            out[r * 8 + c] = np.asarray(sq)
    return out


def make(seed, boards, p_empty=0.45, sheet=None, marks=False):
    rng = random.Random(seed)
    sets = A.load()
    book_sets = sorted(k for k in sets if k in A.BOOKISH or k.startswith("ttf-"))
    other_sets = sorted(k for k in sets if k not in book_sets)
    ims, labs, styles, views = [], [], [], []
    for b in range(boards):
        grid = placement(rng)
        rgb, corners, style = render(rng, grid, sets, book_sets, other_sets, marks)
        grey, corners = degrade(rng, rgb, corners, style)
        crops = cut_squares(rng, grey, corners)
        lab = grid.ravel()
        if sheet is not None and len(views) < 8:
            views.append((grey, corners, crops))
        for i in range(64):
            if lab[i] == 0 and rng.random() > p_empty:
                continue
            ims.append(crops[i])
            labs.append(lab[i])
            styles.append(0 if style.startswith("book") else 1)
        if b % 200 == 0:
            print(f"seed {seed}: board {b}/{boards}, {len(labs)} crops", flush=True)
    if sheet is not None:
        tiles = []
        for grey, corners, crops in views:
            im = Image.fromarray(grey.clip(0, 255).astype(np.uint8), "L").convert("RGB")
            ImageDraw.Draw(im).polygon([tuple(p) for p in corners], outline=(255, 0, 0))
            im.thumbnail((256, 256))
            t = Image.new("RGB", (512, 256), "white")
            t.paste(im, (0, 0))
            g = Image.new("L", (8 * S, 8 * S))
            for i in range(64):
                g.paste(Image.fromarray(crops[i]), ((i % 8) * S, (i // 8) * S))
            t.paste(g.resize((256, 256)).convert("RGB"), (256, 0))
            tiles.append(t)
        sh = Image.new("RGB", (1024, 256 * ((len(tiles) + 1) // 2)), "white")
        for i, t in enumerate(tiles):
            sh.paste(t, ((i % 2) * 512, (i // 2) * 256))
        sh.save(sheet)
    return np.stack(ims), np.array(labs, np.uint8), np.array(styles, np.uint8)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--boards", type=int, default=1000)
    ap.add_argument("--p-empty", type=float, default=0.45, help="keep this share of the empty squares")
    ap.add_argument("--out")
    ap.add_argument("--sheet", help="write a contact sheet of the first 8 boards and their crops")
    ap.add_argument("--marks", action="store_true",
                    help="also draw specks, smudges and flecks, and heavily inked white book pieces")
    a = ap.parse_args()
    ims, labs, styles = make(a.seed, a.boards, a.p_empty, a.sheet, a.marks)
    print(f"{len(labs)} crops; per class {np.bincount(labs, minlength=13).tolist()}", flush=True)
    if a.out:
        os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
        np.savez_compressed(a.out + ".tmp.npz", images=ims, labels=labs, style=styles, S=S, margin=MARGIN)
        os.replace(a.out + ".tmp.npz", a.out)


if __name__ == "__main__":
    main()
