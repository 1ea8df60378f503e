#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Final positions of labelled scoresheets, for `hamle eval sheets DIR --final-boards OUT`.

For each `NAME.moves.txt` in the sheet folders given, plays the labelled moves (up to the
first one that does not parse: real labels keep players' unfinished moves) and writes the
final position as a line `NAME FEN-placement` to stdout. With `--diagrams OUT` it also draws
each position as a flat diagram `OUT/NAME.png` (python-chess + cairosvg): a clean "photo"
that isolates what the decoder does with a final position from how well a photo is read.
Photos of a real set are rendered from the same list by

    python3 scripts/final_boards.py SHEETS > fens.txt
    bpy-python scripts/render_3d.py --fens fens.txt --out OUT --split test --seed 201 \\
        --samples 8 --no-denoise

    pip install chess cairosvg
"""
import argparse
import pathlib
import re

import chess


def final_position(label: pathlib.Path) -> chess.Board:
    b = chess.Board()
    for tok in label.read_text().split():
        if re.fullmatch(r"\d+\.+", tok) or tok in ("1-0", "0-1", "1/2-1/2", "*"):
            continue
        try:
            b.push_san(tok.rstrip("=").replace("0-0-0", "O-O-O").replace("0-0", "O-O"))
        except ValueError:
            break
    return b


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("sheets", nargs="+", help="folders of NAME.moves.txt labels")
    ap.add_argument("--diagrams", help="also draw each position as OUT/NAME.png")
    args = ap.parse_args()
    out = pathlib.Path(args.diagrams) if args.diagrams else None
    if out:
        import cairosvg
        import chess.svg
        out.mkdir(parents=True, exist_ok=True)
    for d in args.sheets:
        for label in sorted(pathlib.Path(d).glob("*.moves.txt")):
            name = label.name[: -len(".moves.txt")]
            board = final_position(label)
            print(f"{name} {board.board_fen()}")
            if out:
                svg = chess.svg.board(board, size=400, coordinates=True)
                cairosvg.svg2png(bytestring=svg.encode(), write_to=str(out / f"{name}.png"))


if __name__ == "__main__":
    main()
