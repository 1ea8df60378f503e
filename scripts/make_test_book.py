#!/usr/bin/env python3
"""Makes a test book for `hamle read` on printed books: a PDF of real games with diagrams,
typeset by headless Chromium in several typefaces and notations, and its truth beside it.

    python3 scripts/make_test_book.py --out work-tmp/book --games 24 --seed 1
    python3 scripts/make_test_book.py --out work-tmp/book-p052 --games 60 --seed 5 --scanned \
        --fonts P052 Carlito     # typefaces the word recognizer never trained on

Writes OUT/book.pdf (a born-digital book: real text, vector diagrams), OUT/book.html (its
source) and OUT/book.truth.json:

    {"games": [{"white", "black", "sans": [English SAN...], "result", "notation", "font"}],
     "diagrams": [{"game": i, "ply": k, "fen": placement after ply k}]}

Games come from datasets/games (real games), taken evenly spaced, cut to at most 80 plies.
Each game is set in one of: English SAN, Turkish SAN (Ş V K F A), figurine SAN (♘f3), and in
one of the system's typefaces (DejaVu Serif/Sans, Liberation Serif/Sans); pages are A5 or
A4 in one or two columns. Every second game gets a diagram after a move in its middle,
drawn by python-chess (`chess.svg`, the cburnett pieces), captioned "Diagram after 23...Qd7"
the way books print them.

With --scanned, also OUT/book-scanned.pdf: every page drawn at 200 dpi by hamle
(`examples/pdf_pages.rs`), then turned by up to 1.2°, blurred a little, given paper grain and
noise, and stored as a JPEG in an image-only PDF — what a scanner gives. Same truth.

Needs python-chess (`pip install chess`) and Chromium (Debian `chromium`); --scanned also
Pillow and a release build of the `pdf_pages` example.
"""

import argparse
import html
import json
import random
import subprocess
from pathlib import Path

import chess
import chess.pgn
import chess.svg

ROOT = Path(__file__).resolve().parent.parent
FONTS = ["DejaVu Serif", "Liberation Serif", "DejaVu Sans", "Liberation Sans"]
TR = {"K": "Ş", "Q": "V", "R": "K", "B": "F", "N": "A"}
FIG = {"K": "♔", "Q": "♕", "R": "♖", "B": "♗", "N": "♘"}


def load_games(n, seed):
    games = []
    for p in sorted((ROOT / "datasets" / "games").glob("*.pgn")):
        with open(p, encoding="utf-8", errors="replace") as f:
            while True:
                g = chess.pgn.read_game(f)
                if g is None:
                    break
                if len(list(g.mainline_moves())) >= 30:
                    games.append(g)
    step = max(1, len(games) // n)
    rng = random.Random(seed)
    start = rng.randrange(step)
    return [games[start + i * step] for i in range(n) if start + i * step < len(games)]


def spell(san, style):
    if style == "en":
        return san
    table = TR if style == "tr" else FIG
    head = san[0]
    if head in table:
        san = table[head] + san[1:]
    if "=" in san:
        a, b = san.split("=", 1)
        pb = b[0]
        san = a + ("=" if style == "fig" else "") + table.get(pb, pb) + b[1:]
    if style == "tr":
        san = san.replace("O-O", "0-0")
    return san


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="work-tmp/book")
    ap.add_argument("--games", type=int, default=24)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--scanned", action="store_true")
    ap.add_argument("--fonts", nargs="+", default=FONTS,
                    help="typefaces the chapters cycle through (default: DejaVu and Liberation)")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rng = random.Random(args.seed)
    games = load_games(args.games, args.seed)
    truth = {"games": [], "diagrams": []}
    parts = []
    # Chapters: each with its own typeface, notation, page layout.
    per_chapter = 4
    for c in range(0, len(games), per_chapter):
        font = args.fonts[(c // per_chapter) % len(args.fonts)]
        style = ["en", "tr", "fig"][(c // per_chapter) % 3]
        cols = 2 if (c // per_chapter) % 2 == 1 else 1
        parts.append(
            f'<div class="chapter" style="font-family: \'{font}\'; column-count: {cols}">'
            f"<h2>Chapter {c // per_chapter + 1}</h2>"
        )
        for gi in range(c, min(c + per_chapter, len(games))):
            g = games[gi]
            board = g.board()
            moves = list(g.mainline_moves())[:80]
            sans = []
            white = g.headers.get("White", "?")
            black = g.headers.get("Black", "?")
            result = g.headers.get("Result", "*") if len(list(g.mainline_moves())) <= 80 else "*"
            parts.append(f'<p class="head"><b>Game {gi + 1}</b><br>{html.escape(white)} – '
                         f'{html.escape(black)}<br><i>{html.escape(g.headers.get("Event", ""))} '
                         f'{html.escape(g.headers.get("Date", "")[:4])}</i></p>')
            diagram_ply = len(moves) // 2 + rng.randrange(-4, 5) if gi % 2 == 0 else None
            words = []
            for i, mv in enumerate(moves):
                san = board.san(mv)
                sans.append(san)
                board.push(mv)
                text = spell(san, style)
                if i % 2 == 0:
                    words.append(f"{i // 2 + 1}.{text}" if rng.random() < 0.3 else f"{i // 2 + 1}. {text}")
                else:
                    words.append(text)
                if diagram_ply is not None and i + 1 == diagram_ply:
                    parts.append('<p class="moves">' + html.escape(" ".join(words)) + "</p>")
                    words = []
                    svg = chess.svg.board(board, size=260, coordinates=False)
                    n = i // 2 + 1
                    cap = f"{n}.{spell(san, style)}" if i % 2 == 0 else f"{n}...{spell(san, style)}"
                    parts.append(f'<div class="diagram">{svg}<br><span class="cap">Diagram after '
                                 f"{html.escape(cap)}</span></div>")
                    truth["diagrams"].append({"game": gi, "ply": i + 1,
                                              "fen": board.board_fen()})
                    # A diagram is followed by the move text again, with "N..." when Black moves.
                    if i % 2 == 0 and i + 1 < len(moves):
                        words.append(f"{i // 2 + 1}...")
            words.append(result)
            parts.append('<p class="moves">' + html.escape(" ".join(words)) + "</p>")
            truth["games"].append({"white": white, "black": black, "sans": sans, "result": result,
                                   "notation": style, "font": font})
        parts.append("</div>")
    page = f"""<!doctype html><html><head><meta charset="utf-8"><style>
@page {{ size: A5; margin: 14mm 12mm; }}
body {{ font-size: 10.5pt; line-height: 1.35; }}
.chapter {{ break-before: page; column-gap: 8mm; }}
h2 {{ column-span: all; font-size: 14pt; }}
.head {{ margin: 1.2em 0 .3em; break-after: avoid; }}
.moves {{ text-align: justify; margin: .2em 0; }}
.diagram {{ text-align: center; margin: .6em 0; break-inside: avoid; }}
.diagram svg {{ width: 52mm; height: 52mm; }}
.cap {{ font-size: 9pt; font-style: italic; }}
</style></head><body>{''.join(parts)}</body></html>"""
    (out / "book.html").write_text(page, encoding="utf-8")
    (out / "book.truth.json").write_text(json.dumps(truth, ensure_ascii=False, indent=1), encoding="utf-8")
    pdf = out / "book.pdf"
    subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--no-pdf-header-footer",
                    f"--print-to-pdf={pdf.resolve()}", (out / "book.html").resolve().as_uri()],
                   check=True, capture_output=True)
    print(f"{pdf}: {len(truth['games'])} games, {len(truth['diagrams'])} diagrams")
    if args.scanned:
        scanned(pdf, out / "book-scanned.pdf", rng)


def scanned(pdf, dest, rng):
    import io
    import shutil
    import sys
    from PIL import Image, ImageFilter

    sys.path.insert(0, str(ROOT / "scripts"))
    from batch_check import write_pdf

    pages_dir = dest.parent / "pages"
    shutil.rmtree(pages_dir, ignore_errors=True)
    subprocess.run(["cargo", "build", "--release", "--example", "pdf_pages"], cwd=ROOT, check=True,
                   capture_output=True)
    subprocess.run([str(ROOT / "target" / "release" / "examples" / "pdf_pages"), str(pdf), str(pages_dir)],
                   check=True)
    pages = []
    for p in sorted(pages_dir.glob("page-*.png")):
        im = Image.open(p).convert("L")
        im = im.rotate(rng.uniform(-1.2, 1.2), resample=Image.BICUBIC, expand=False, fillcolor=250)
        im = im.filter(ImageFilter.GaussianBlur(rng.uniform(0.4, 0.9)))
        w, h = im.size
        grain = Image.effect_noise((w, h), rng.uniform(6, 12))
        im = Image.blend(im, grain, 0.12)
        buf = io.BytesIO()
        im.save(buf, "JPEG", quality=rng.randint(55, 75))
        pages.append((buf.getvalue(), (w, h)))
    write_pdf(dest, pages)
    print(f"{dest}: {len(pages)} scanned-looking pages")


if __name__ == "__main__":
    main()
