# SPDX-License-Identifier: GPL-3.0-or-later
"""Positions from the real games of datasets/games, as the renderers of physical sets draw
them (scripts/render_3d.py), and the games those draws use (scripts/piece_prior.py leaves
them out)."""
from pathlib import Path

import chess.pgn

GAMES = Path(__file__).resolve().parent.parent / "datasets" / "games"


def load_games():
    games = []
    for name in ["malakhov_master.pgn", "lichess_classical.pgn"]:
        with open(GAMES / name) as fh:
            while True:
                g = chess.pgn.read_game(fh)
                if g is None:
                    break
                games.append(g)
    return games


def draw_positions(rng, games, n):
    """`n` (game, placement) pairs: a random game, played to its end (35 %) or to a random ply
    from the 8th on."""
    out = []
    for _ in range(n):
        g = rng.choice(games)
        moves = list(g.mainline_moves())
        stop = len(moves) if rng.random() < 0.35 else rng.randint(min(8, len(moves)), len(moves))
        b = g.board()
        for m in moves[:stop]:
            b.push(m)
        out.append((g, b.board_fen()))
    return out
