"""Piece sprites for the synthetic board renderer (scripts/boards_synth.py).

Sources (not copied into the repository; extracted from Debian packages into work-tmp):
    mkdir -p work-tmp/boards/pkgs && cd work-tmp/boards/pkgs && \
        apt-get download pychess xboard scid-data && for f in *.deb; do dpkg -x $f x; done
  - pychess: SVG piece sets (pieces/<set>/{w,b}{p,n,b,r,q,k}.svg) and 18 TTF diagram fonts
  - xboard: SVG pieces (themes/default/{White,Black}{Pawn,...}.svg)
  - scid-data: raster piece strips (img/pieces/<set>/<set>_<size>.{gif,png}, 12 pieces in a row)
  - python-chess: chess.svg.piece (cburnett)
Every sprite is an RGBA float array of SIZE x SIZE where the square is the whole array.
"""
import glob
import io
import os

import numpy as np
from PIL import Image, ImageDraw, ImageFont

SIZE = 128
PIECES = "PNBRQK"  # class 1..6 white, 7..12 black in this order
PKG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "work-tmp", "boards", "pkgs", "x")
CACHE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "work-tmp", "boards", "assets.npz")

SVG_SETS = ["alfonso", "alpha", "cburnett", "chessicons", "chessmonk", "freestaunton", "kilfiger",
            "kosal", "leipzig", "magnetic", "maya", "merida", "merida_new", "metaltops", "pirat", "regular"]
SCID_SETS = ["Alpha", "Cburnett", "Eboard", "Fantasy2", "Good Companion", "Kingdom", "Leipzig", "Merida",
             "Merida1"]
XBOARD_NAMES = ["Pawn", "Knight", "Bishop", "Rook", "Queen", "King"]
# sets whose pieces are drawn in black ink on white (suitable for printed diagrams)
BOOKISH = {"alpha", "leipzig", "merida", "merida_new", "cburnett", "regular", "kilfiger", "chessicons",
           "scid-Alpha", "scid-Leipzig", "scid-Merida", "scid-Merida1", "scid-Good Companion", "xboard",
           "chess.svg"}


def _svg(data):
    import cairosvg
    png = cairosvg.svg2png(bytestring=data, output_width=SIZE, output_height=SIZE)
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGBA"), dtype=np.float32) / 255.0


def _flood_outside(ink):
    """Boolean mask of pixels reachable from the border without crossing ink."""
    h, w = ink.shape
    out = np.zeros_like(ink)
    free = ~ink
    out[0, :] = free[0, :]
    out[-1, :] = free[-1, :]
    out[:, 0] |= free[:, 0]
    out[:, -1] |= free[:, -1]
    while True:
        grown = out.copy()
        grown[1:, :] |= out[:-1, :]
        grown[:-1, :] |= out[1:, :]
        grown[:, 1:] |= out[:, :-1]
        grown[:, :-1] |= out[:, 1:]
        grown &= free
        if (grown == out).all():
            return out
        out = grown


def _font_set(path, chars):
    font = ImageFont.truetype(path, int(SIZE * 1.5))
    glyphs = []
    for ch in chars:
        im = Image.new("L", (SIZE * 3, SIZE * 3), 0)
        ImageDraw.Draw(im).text((SIZE // 2, SIZE // 2), ch, font=font, fill=255)
        glyphs.append(np.asarray(im, dtype=np.float32) / 255.0)
    boxes = []
    for g in glyphs:
        ys, xs = np.nonzero(g > 0.3)
        if len(ys) == 0:
            return None
        boxes.append((ys.min(), ys.max() + 1, xs.min(), xs.max() + 1))
    hmax = max(b[1] - b[0] for b in boxes)
    wmax = max(b[3] - b[2] for b in boxes)
    scale = 0.9 * SIZE / max(hmax, wmax)
    base = max(b[1] for b in boxes)
    sprites = []
    for g, (y0, y1, x0, x1) in zip(glyphs, boxes):
        ink = g > 0.5
        inside = ~_flood_outside(ink) & ~ink
        alpha = np.clip(g + inside, 0, 1)
        rgb = np.repeat((1.0 - g)[..., None], 3, axis=2)  # black ink, white interior
        rgba = np.concatenate([rgb, alpha[..., None]], axis=2)
        # common scale and baseline: crop [base-hmax, base] x [x0, x1] centred
        top = base - hmax
        crop = rgba[top:base, x0:x1]
        im = Image.fromarray((crop * 255).astype(np.uint8), "RGBA")
        nw, nh = max(1, round((x1 - x0) * scale)), max(1, round(hmax * scale))
        im = im.resize((nw, nh), Image.LANCZOS)
        canvas = Image.new("RGBA", (SIZE, SIZE), (255, 255, 255, 0))
        canvas.paste(im, ((SIZE - nw) // 2, (SIZE - nh) // 2))
        sprites.append(np.asarray(canvas, dtype=np.float32) / 255.0)
    return sprites


def build():
    sets = {}
    import chess
    import chess.svg
    sets["chess.svg"] = [_svg(chess.svg.piece(chess.Piece.from_symbol(c if w else c.lower())).encode())
                         for w in (True, False) for c in PIECES]
    for s in SVG_SETS:
        d = os.path.join(PKG, "usr/share/pychess/pieces", s)
        try:
            sets[s] = [_svg(open(os.path.join(d, f"{col}{p.lower()}.svg"), "rb").read())
                       for col in "wb" for p in PIECES]
        except Exception as e:  # noqa: BLE001
            print("skip", s, e)
    d = os.path.join(PKG, "usr/share/games/xboard/themes/default")
    sets["xboard"] = [_svg(open(os.path.join(d, f"{col}{n}.svg"), "rb").read())
                      for col in ("White", "Black") for n in XBOARD_NAMES]
    for s in SCID_SETS:
        files = glob.glob(os.path.join(PKG, "usr/share/scid/img/pieces", s, "*_*.*"))
        files = [f for f in files if f.rsplit(".", 1)[1] in ("gif", "png")]
        if not files:
            continue
        f = max(files, key=lambda f: int(f.rsplit("_", 1)[1].split(".")[0]))
        strip = Image.open(f).convert("RGBA")
        n = strip.size[1]
        sp = []
        for i in range(12):
            im = strip.crop((i * n, 0, (i + 1) * n, n)).resize((SIZE, SIZE), Image.LANCZOS)
            sp.append(np.asarray(im, dtype=np.float32) / 255.0)
        sets["scid-" + s] = sp
    for f in sorted(glob.glob(os.path.join(PKG, "usr/share/pychess/pieces/ttf/*.ttf"))):
        name = os.path.splitext(os.path.basename(f))[0]
        # pychess's char map: white pieces on light squares, then black ones
        try:
            sp = _font_set(f, "pnbrqk" if name not in ("alpha", "berlin", "cheq") else "phbrqk")
            spb = _font_set(f, "omvtwl" if name not in ("alpha", "berlin", "cheq") else "ojntwl")
        except Exception as e:  # noqa: BLE001
            print("skip", name, e)
            continue
        if sp is None or spb is None:
            continue
        sets["ttf-" + name] = sp + spb
    return sets


def load():
    if os.path.exists(CACHE):
        z = np.load(CACHE)
        return {k: [z[k][i] for i in range(12)] for k in z.files}
    sets = build()
    np.savez_compressed(CACHE, **{k: np.stack(v).astype(np.float16) for k, v in sets.items()})
    return {k: [v[i].astype(np.float16) for i in range(12)] for k, v in sets.items()}


if __name__ == "__main__":
    s = load()
    print(len(s), sorted(s))
    # contact sheet
    names = sorted(s)
    sheet = Image.new("RGB", (12 * 48, len(names) * 48), (120, 160, 90))
    for j, k in enumerate(names):
        for i in range(12):
            a = np.asarray(s[k][i], dtype=np.float32)
            im = Image.fromarray((a * 255).astype(np.uint8), "RGBA").resize((48, 48), Image.LANCZOS)
            bg = Image.new("RGBA", (48, 48), (181, 136, 99, 255) if (i + j) % 2 else (240, 217, 181, 255))
            bg.alpha_composite(im)
            sheet.paste(bg.convert("RGB"), (i * 48, j * 48))
    sheet.save(os.path.join(os.path.dirname(CACHE), "assets_sheet.png"))
