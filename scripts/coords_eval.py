#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""A labelled folder of synthetic diagrams with printed coordinates, half of them shown from
Black's side, for `hamle eval boards` (orientation from coordinates, issue #4):

    python3 scripts/coords_eval.py --out work-tmp/coords-eval --n 200 --seed 41

Each board is drawn by `boards_synth.render` (book and screen styles, the photo damage of
`degrade`) with its coordinates forced on (outside the board in books when the margin has
room, in the corners of the edge squares on screens) in a font the coordinate reader never
trained on (Liberation, Caladea, Carlito, EB Garamond), and turned 180 degrees for Black at
the bottom. NAME.fen holds the canonical placement; NAME.json the truth
(`orientation`, `coords`: outside / inside / none, `style`). Positions: half from real games
at any move, half thinned to endgames, where the pieces alone say little about the side.
"""
import argparse
import glob
import json
import os
import random
import sys

import chess
import numpy as np
from PIL import Image

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import boards_synth as B  # noqa: E402
from boards import assets as A  # noqa: E402

HELD_OUT = ["/usr/share/fonts/truetype/liberation/*.ttf", "/usr/share/fonts/truetype/crosextra/*.ttf",
            "/usr/share/fonts/opentype/ebgaramond/*.otf"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--seed", type=int, default=41)
    a = ap.parse_args()
    fonts = sorted(f for g in HELD_OUT for f in glob.glob(g))
    if not fonts:
        sys.exit("no held-out fonts: apt-get install fonts-liberation fonts-crosextra-caladea "
                 "fonts-crosextra-carlito fonts-ebgaramond")
    rng = random.Random(a.seed)
    sets = A.load()
    book_sets = sorted(k for k in sets if k in A.BOOKISH or k.startswith("ttf-"))
    other_sets = sorted(k for k in sets if k not in book_sets)
    os.makedirs(a.out, exist_ok=True)
    counts = {}
    for i in range(a.n):
        grid = B.placement(rng)
        if rng.random() < 0.5:  # an endgame: kings and a few pieces
            keep = np.array([[v in (6, 12) or rng.random() < 0.25 for v in row] for row in grid])
            grid = np.where(keep, grid, 0).astype(np.uint8)
        black = i % 2 == 1
        shown = np.rot90(grid, 2).copy() if black else grid
        font = rng.choice(fonts)
        rgb, corners, style = B.render(rng, shown, sets, book_sets, other_sets, marks=True, flip=black,
                                       coords=True, fonts=[font])
        drawn = B.LAST.get("coords") or "none"
        grey, corners = B.degrade(rng, rgb, corners, style)
        name = f"coords-{i:04d}"
        Image.fromarray(grey.clip(0, 255).astype(np.uint8), "L").save(os.path.join(a.out, name + ".png"))
        board = chess.BaseBoard.empty()
        for r in range(8):
            for c in range(8):
                if grid[r, c]:
                    board.set_piece_at(chess.square(c, 7 - r), chess.Piece.from_symbol(B.SYM[grid[r, c] - 1]))
        with open(os.path.join(a.out, name + ".fen"), "w") as f:
            f.write(board.board_fen() + "\n")
        with open(os.path.join(a.out, name + ".json"), "w") as f:
            json.dump({"orientation": "black" if black else "white", "coords": drawn, "style": style,
                       "font": os.path.basename(font)}, f)
        counts[drawn] = counts.get(drawn, 0) + 1
    print(f"{a.n} boards in {a.out}: coordinates {counts}")


if __name__ == "__main__":
    main()
