#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Makes the bundled board sample samples/board-page.png (+ .fen): the final position of the
first game of datasets/games/lichess_classical.pgn, drawn by python-chess (cburnett pieces,
coordinates) and rasterised by cairosvg, on a page beside the game's moves.

    pip install chess cairosvg && python3 scripts/make_board_sample.py
"""
import io

import cairosvg
import chess
import chess.pgn
import chess.svg
from PIL import Image, ImageDraw, ImageFont

with open("datasets/games/lichess_classical.pgn") as f:
    game = chess.pgn.read_game(f)
moves = list(game.mainline_moves())
board = game.board()
for m in moves:
    board.push(m)
svg = chess.svg.board(board, size=360, coordinates=True,
                      colors={"square light": "#f0d9b5", "square dark": "#b58863"})
png = cairosvg.svg2png(bytestring=svg.encode())
diagram = Image.open(io.BytesIO(png)).convert("RGB")
page = Image.new("RGB", (820, 620), "white")
draw = ImageDraw.Draw(page)
try:
    font = ImageFont.truetype("/usr/share/fonts/truetype/dejavu/DejaVuSerif.ttf", 18)
except OSError:
    font = ImageFont.load_default()
text = game.board().variation_san(moves)
lines, line = [], ""
for w in text.split():
    if len(line) + len(w) > 38:
        lines.append(line)
        line = ""
    line += w + " "
lines.append(line)
for i, l in enumerate(lines[:20]):
    draw.text((420, 30 + 26 * i), l, fill="black", font=font)
page.paste(diagram, (30, 120))
draw.text((30, 500), "Final position", fill="black", font=font)
page.save("samples/board-page.png")
with open("samples/board-page.fen", "w") as f:
    f.write(board.board_fen() + "\n")
print(board.board_fen())

# samples/board-flipped.png: an endgame shown from Black's side, printed in a book's black and
# white with coordinates (h..a below, 1..8 down the left). Its kings and pawns stand the way
# White's would with White at the bottom, so only the coordinates tell the side (issue #4).
flipped = chess.Board("8/8/6K1/5P1P/1p6/p1k5/8/8 w - - 0 1")
svg = chess.svg.board(flipped, size=300, coordinates=True, flipped=True,
                      colors={"square light": "#ffffff", "square dark": "#b0b0b0",
                              "margin": "#ffffff", "coord": "#000000"})
png = cairosvg.svg2png(bytestring=svg.encode())
Image.open(io.BytesIO(png)).convert("L").save("samples/board-flipped.png")
with open("samples/board-flipped.fen", "w") as f:
    f.write(flipped.board_fen() + "\n")
print(flipped.board_fen(), "(shown from Black's side)")
