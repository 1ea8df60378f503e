#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Check that a PGN file loads cleanly in python-chess (an independent PGN reader).

For every game in FILE (`-` reads stdin):
  - python-chess must report no error (an illegal or ambiguous move, a bad FEN tag, ...);
  - a game that ends in checkmate must not carry a result for the wrong side
    (`*` is allowed);
  - with --plies N[,N...], the number of mainline plies of game i must equal the i-th N
    (a single N applies to every game); with --games N, the file must hold N games.

Prints one line per game (`game 1: 22 plies, result 1/2-1/2`) and exits 0 when every
check passes, 1 when one fails, 2 on a usage error, 3 when python-chess is missing
(`pip install chess`).

Usage: python3 scripts/check_pgn.py FILE [--plies 22] [--games 1]
       hamle repair game.txt | python3 scripts/check_pgn.py -
"""

from __future__ import annotations

import argparse
import io
import sys

try:
    import chess
    import chess.pgn
except ImportError:  # pragma: no cover - depends on the environment
    print("check_pgn.py: python-chess is not installed (pip install chess)", file=sys.stderr)
    sys.exit(3)


def parse_counts(text: str) -> list[int]:
    try:
        counts = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a list of numbers: {text!r}")
    if not counts or any(c < 0 for c in counts):
        raise argparse.ArgumentTypeError(f"not a list of counts: {text!r}")
    return counts


def check(handle: io.TextIOBase, plies: list[int] | None, games: int | None) -> list[str]:
    """Returns the problems found (empty when the file passes)."""
    problems: list[str] = []
    n = 0
    while True:
        game = chess.pgn.read_game(handle)
        if game is None:
            break
        n += 1
        for err in game.errors:
            problems.append(f"game {n}: {err}")
        board = game.end().board()
        count = len(board.move_stack)
        result = game.headers.get("Result", "*")
        print(f"game {n}: {count} plies, result {result}")
        if board.is_checkmate():
            winner = "0-1" if board.turn == chess.WHITE else "1-0"
            if result not in (winner, "*"):
                problems.append(f"game {n}: checkmate on the board but result {result}")
        if plies is not None:
            want = plies[0] if len(plies) == 1 else (plies[n - 1] if n <= len(plies) else None)
            if want is None:
                problems.append(f"game {n}: no ply count given for it")
            elif want != count:
                problems.append(f"game {n}: {count} mainline plies, expected {want}")
    if n == 0:
        problems.append("no game found")
    if games is not None and n != games:
        problems.append(f"{n} games, expected {games}")
    if plies is not None and len(plies) > 1 and len(plies) != n:
        problems.append(f"{n} games, but {len(plies)} ply counts given")
    return problems


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file", help="PGN file, or - for stdin")
    ap.add_argument("--plies", type=parse_counts, help="expected mainline plies per game")
    ap.add_argument("--games", type=int, help="expected number of games")
    args = ap.parse_args()
    try:
        if args.file == "-":
            handle = io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="strict")
            problems = check(handle, args.plies, args.games)
        else:
            with open(args.file, encoding="utf-8", errors="strict") as handle:
                problems = check(handle, args.plies, args.games)
    except (OSError, UnicodeDecodeError) as e:
        print(f"check_pgn.py: {args.file}: {e}", file=sys.stderr)
        return 1
    for p in problems:
        print(f"check_pgn.py: {args.file}: {p}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
