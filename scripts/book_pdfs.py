#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Cuts the chess diagrams out of real typeset PDFs into a labelled folder for `hamle eval boards`.

The PDFs are the documentation of TeX Live's chess packages (Debian `texlive-games`: skak,
xskak, chessboard), typeset by their authors with the SkakNew diagram fonts, which no hamle
model was trained on (models/squares.md lists the piece sets used). Nothing of them is copied
into the repository: the package is downloaded and unpacked under work-tmp.

The label of each diagram comes from the PDF's own text layer, not from looking at it: a
SkakNew diagram is eight lines of eight glyphs, one per square, and the glyph names the piece
and the square's colour (`p n b r q k` a black piece on a light square, `o m a s l j` on a dark
one, capitals the white pieces, `0` and `Z` empty light and dark squares). A diagram is kept
only when every glyph decodes and the square colours alternate as on a board (a1 dark), so
partial boards and glyph art are left out. The rows are as displayed; a board shown from
Black's side is recognised by the file letters printed under or over it (`h g f ... a`), and
the label is turned to White at the bottom, as `hamle eval boards` compares book-* images.
A diagram with no printed letters is taken as shown from White's side; the number of those
whose kings stand as in a turned board (the white king in the upper half, the black king in
the lower) is printed so that they can be looked at.

Each diagram is rendered from the PDF's vectors at a resolution between 80 and 200 dpi and
cropped with a margin of 0.2 to 0.7 squares (both chosen by a hash of the diagram's name, so
that the folder is the same on every run), then saved as `book-DOC-PAGE-N.png` beside
`book-DOC-PAGE-N.fen`. Positions repeated within a document (the doc of skak shows the same
opening several times) are kept once, and so are only placements that could be a game's
(one king of each colour, no pawn on the first or last rank).

Usage:
  mkdir -p work-tmp/tex && (cd work-tmp/tex && apt-get download texlive-games && dpkg -x texlive-games_*.deb x)
  pip install pymupdf
  python3 scripts/book_pdfs.py work-tmp/tex/x/usr/share/doc/texlive-doc/latex work-tmp/texbooks
  hamle eval boards work-tmp/texbooks
  python3 scripts/book_pdfs.py work-tmp/tex/x/usr/share/doc/texlive-doc/latex work-tmp/texpages --pages
  hamle eval boards work-tmp/texpages      # the pages are named mixed-*: the board is a part of the image
  python3 scripts/book_pdfs.py work-tmp/tex/x/usr/share/doc/texlive-doc/latex work-tmp/texneg --no-diagram
  hamle board work-tmp/texneg/*.png --format json | grep -c '"kind":"diagram"'   # boards found on pages without one
"""

import argparse
import hashlib
import os
import sys

DOCS = [
    ("skakdoc", "skak/skakdoc.pdf"),
    ("xskak", "xskak/xskak.pdf"),
    ("xskakbeamer", "xskak/xskak_and_beamer.pdf"),
    ("chessboard", "chessboard/chessboard.pdf"),
    ("chessbeamer", "chessboard/chessboard_and_beamer.pdf"),
    ("skakps", "chessboard/chessboard-skakps.pdf"),
    ("comment", "xskak/skak-comment-test.pdf"),
    ("longmoves", "xskak/skak-longmoves-test-new.pdf"),
]

# glyph -> (piece letter as in FEN or None for empty, square is dark)
GLYPHS = {}
for i, (light, dark) in enumerate(zip("pnbrqk", "omaslj")):
    GLYPHS[light] = (light, False)
    GLYPHS[dark] = ("pnbrqk"[i], True)
    GLYPHS[light.upper()] = ("PNBRQK"[i], False)
    GLYPHS[dark.upper()] = ("PNBRQK"[i], True)
GLYPHS["0"] = (None, False)
GLYPHS["Z"] = (None, True)


def frac(name, salt):
    h = hashlib.sha256(f"{salt}:{name}".encode()).digest()
    return int.from_bytes(h[:4], "big") / 2**32


def glyph_lines(page):
    """How many lines of SkakNew diagram glyphs the page holds (of any length)."""
    n = 0
    for b in page.get_text("rawdict")["blocks"]:
        for line in b.get("lines", []):
            n += any(s["font"].startswith("SkakNew-Diagram") and any(c["c"] != " " for c in s["chars"]) for s in line["spans"])
    return n


def rows_of(page):
    """Every line of exactly eight SkakNew diagram glyphs."""
    out = []
    for b in page.get_text("rawdict")["blocks"]:
        for line in b.get("lines", []):
            chars = []
            for s in line["spans"]:
                if s["font"].startswith("SkakNew-Diagram"):
                    chars += [c for c in s["chars"] if c["c"] != " "]
            if len(chars) == 8 and all(c["c"] in GLYPHS for c in chars):
                out.append(chars)
    return out


def boards_of(page):
    """Groups of eight rows stacked one square apart at the same x."""
    rows = sorted(rows_of(page), key=lambda r: (round(r[0]["origin"][0]), r[0]["origin"][1]))
    boards, i = [], 0
    while i + 8 <= len(rows):
        group = rows[i:i + 8]
        x0 = group[0][0]["origin"][0]
        size = (group[0][7]["origin"][0] - x0) / 7
        ok = size > 0 and all(abs(r[0]["origin"][0] - x0) < 0.5 for r in group)
        ok = ok and all(abs(group[k + 1][0]["origin"][1] - group[k][0]["origin"][1] - size) < 0.25 * size
                        for k in range(7))
        if ok:
            boards.append(group)
            i += 8
        else:
            i += 1
    return boards


def rank_fen(cells):
    """One FEN rank from its eight cells ('.' empty, else the piece letter)."""
    out, empty = "", 0
    for ch in cells:
        if ch == ".":
            empty += 1
        else:
            out += (str(empty) if empty else "") + ch
            empty = 0
    return out + (str(empty) if empty else "")


def placement(group):
    """The FEN placement as displayed, or None when the colours are not a board's."""
    ranks = []
    for r, row in enumerate(group):
        cells = ""
        for f, c in enumerate(row):
            piece, dark = GLYPHS[c["c"]]
            if dark != ((r + f) % 2 == 1):
                return None
            cells += piece or "."
        ranks.append(rank_fen(cells))
    return "/".join(ranks)


def turned(fen):
    """Rotates a placement by 180 degrees (a board shown from Black's side)."""
    rows = ["".join("." * int(ch) if ch.isdigit() else ch for ch in rank) for rank in fen.split("/")]
    return "/".join(rank_fen(cells[::-1]) for cells in reversed(rows))


def file_letters(page, box, size):
    """The order of single file letters printed just under or over the board, if any."""
    letters = []
    for b in page.get_text("rawdict")["blocks"]:
        for line in b.get("lines", []):
            for s in line["spans"]:
                if s["font"].startswith("SkakNew"):
                    continue
                for c in s["chars"]:
                    x, y = c["origin"]
                    near = box[1] - 1.2 * size < y < box[1] or box[3] < y < box[3] + 1.2 * size
                    if c["c"] in "abcdefgh" and box[0] - 0.2 * size < x < box[2] + 0.2 * size and near:
                        letters.append((y, x, c["c"]))
    if len(letters) < 8:
        return None
    letters.sort()
    first_row = [l for l in letters if abs(l[0] - letters[0][0]) < 1]
    order = "".join(l[2] for l in sorted(first_row, key=lambda l: l[1]))
    return order if len(order) == 8 else None


def chess_position(fen):
    """One king of each colour and no pawn on the first or last rank: the documents also
    show empty boards, boards of four kings and other demonstrations of the macros."""
    rows = fen.split("/")
    return (fen.count("K") == 1 and fen.count("k") == 1
            and not any(c in "Pp" for c in rows[0] + rows[7]))


def kings_look_turned(fen):
    rows = fen.split("/")
    wk = next((r for r, rank in enumerate(rows) if "K" in rank), None)
    bk = next((r for r, rank in enumerate(rows) if "k" in rank), None)
    return wk is not None and bk is not None and wk < 4 <= bk


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("latex", help="texlive-doc/latex folder of the unpacked texlive-games package")
    ap.add_argument("out", help="folder to write book-*.png and book-*.fen into")
    ap.add_argument("--pages", action="store_true",
                    help="write whole pages instead (mixed-DOC-PAGE.png): each page that holds "
                         "exactly one diagram and no other board glyphs, rendered at 70 to 150 dpi, the board small among text")
    ap.add_argument("--no-diagram", action="store_true",
                    help="write the pages with no diagram glyphs at all instead (none-DOC-PAGE.png, "
                         "no .fen; 70 to 150 dpi): text, tables and code, where no board should be found")
    args = ap.parse_args()
    try:
        import pymupdf
    except ImportError:
        print("needs PyMuPDF: pip install pymupdf", file=sys.stderr)
        return 2
    if not os.path.isdir(args.latex):
        print(f"no folder {args.latex} (see the usage in this script's docstring)", file=sys.stderr)
        return 2
    os.makedirs(args.out, exist_ok=True)
    total, by_letters, look = 0, 0, []
    for doc_name, rel in DOCS:
        path = os.path.join(args.latex, rel)
        if not os.path.exists(path):
            print(f"missing {path}; skipped", file=sys.stderr)
            continue
        doc = pymupdf.open(path)
        seen, kept = set(), 0
        for pno, page in enumerate(doc):
            if args.no_diagram:
                if glyph_lines(page) == 0:
                    name = f"none-{doc_name}-{pno + 1:02d}"
                    pix = page.get_pixmap(dpi=70 + int(80 * frac(name, "dpi")), colorspace=pymupdf.csGRAY)
                    pix.save(os.path.join(args.out, name + ".png"))
                    kept += 1
                continue
            groups = boards_of(page)
            if args.pages and (len(groups) != 1 or glyph_lines(page) != 8):
                continue
            for n, group in enumerate(groups):
                fen = placement(group)
                if fen is None:
                    continue
                size = (group[0][7]["origin"][0] - group[0][0]["origin"][0]) / 7
                left = group[0][0]["origin"][0]
                bottom = group[7][0]["origin"][1]
                # SkakNew's glyphs sit on the baseline and are one square high
                box = (left, bottom - 8 * size, left + 8 * size, bottom)
                order = file_letters(page, box, size)
                if order == "hgfedcba":
                    fen = turned(fen)
                    by_letters += 1
                name = f"book-{doc_name}-{pno + 1:02d}-{n + 1}"
                if args.pages:
                    name = f"mixed-{doc_name}-{pno + 1:02d}"
                if fen in seen or not chess_position(fen):
                    continue
                seen.add(fen)
                if order is None and kings_look_turned(fen):
                    look.append(name)
                if args.pages:
                    pix = page.get_pixmap(dpi=70 + int(80 * frac(name, "dpi")), colorspace=pymupdf.csGRAY)
                else:
                    margin = (0.2 + 0.5 * frac(name, "margin")) * size
                    clip = pymupdf.Rect(box[0] - margin, box[1] - margin, box[2] + margin, box[3] + margin)
                    dpi = 80 + int(120 * frac(name, "dpi"))
                    pix = page.get_pixmap(clip=clip, dpi=dpi, colorspace=pymupdf.csGRAY)
                pix.save(os.path.join(args.out, name + ".png"))
                with open(os.path.join(args.out, name + ".fen"), "w") as f:
                    f.write(fen + "\n")
                kept += 1
        print(f"{doc_name}: {kept} {'pages' if args.no_diagram else 'diagrams'}")
        total += kept
    if args.no_diagram:
        print(f"{total} pages without a diagram in {args.out}")
        return 0
    print(f"{total} diagrams in {args.out}; {by_letters} turned by their printed letters")
    if look:
        print("kings as in a board shown from Black's side, no letters printed (look at them): " + " ".join(look))
    return 0


if __name__ == "__main__":
    sys.exit(main())
