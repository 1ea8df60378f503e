#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Where pieces stand in real games: the square prior of the piece reader for photos of sets
(issue #6), written as src/board/piece_prior.rs.

For every square (canonical, a8 first as in a FEN) and each of the 13 classes of the piece
model (empty, white P N B R Q K, black p n b r q k), log P(class | square) - log P(class), counted
over the positions of the games in datasets/games (every 4th ply, counts + 1). The piece model
already holds P(class) (it learned it from renders of real positions); this adds what the
square says. The games drawn by the test renders (render_3d.py --split test --seed 101 --n 50)
and by the renders the weight was chosen on (--seed 20 and 21, --n 400) are left out.

    python3 scripts/piece_prior.py src/board/piece_prior.rs
"""
import random
import sys
from pathlib import Path

import chess

sys.path.insert(0, str(Path(__file__).resolve().parent))
from game_positions import draw_positions, load_games  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
# (seed, scenes) of the renders whose games are left out: render_3d.py draws them with
# game_positions.draw_positions from one random.Random(seed)
EXCLUDE = [(101, 50), (20, 400), (21, 400)]


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else str(ROOT / "src" / "board" / "piece_prior.rs")
    games = load_games()
    used = {id(g) for seed, n in EXCLUDE for g, _ in draw_positions(random.Random(seed), games, n)}
    counts = [[1.0] * 13 for _ in range(64)]
    positions = 0
    for g in games:
        if id(g) in used:
            continue
        b = g.board()
        for i, m in enumerate(g.mainline_moves()):
            b.push(m)
            if i % 4:
                continue
            positions += 1
            for sq in range(64):
                p = b.piece_at(sq)
                k = 0 if p is None else "PNBRQK".index(p.symbol().upper()) + 1 + (0 if p.color else 6)
                # canonical index, a8 first
                counts[(7 - chess.square_rank(sq)) * 8 + chess.square_file(sq)][k] += 1
    total = [sum(c[k] for c in counts) for k in range(13)]
    grand = sum(total)
    import math
    rows = []
    for c in counts:
        n = sum(c)
        rows.append([math.log(c[k] / n) - math.log(total[k] / grand) for k in range(13)])
    kept = len(games) - len(used)
    with open(out, "w") as f:
        f.write("// Written by scripts/piece_prior.py: do not edit.\n")
        f.write(f"// {kept} games of datasets/games ({len(used)} left out), {positions} positions.\n\n")
        f.write("/// log P(class | square) - log P(class) in real games, per canonical square (a8\n")
        f.write("/// first) and piece-model class (empty, white P N B R Q K, black p n b r q k).\n")
        f.write("#[rustfmt::skip]\n")
        f.write("#[allow(clippy::approx_constant)] // data that happens to come near pi or e\n")
        f.write("pub const PIECE_PRIOR: [[f32; 13]; 64] = [\n")
        for r in rows:
            f.write("    [" + ", ".join(f"{v:.3f}" for v in r) + "],\n")
        f.write("];\n")
    print(f"{kept} games ({len(used)} left out), {positions} positions -> {out}")


if __name__ == "__main__":
    main()
