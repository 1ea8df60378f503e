#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Strict-parser baseline for reading noisy Turkish move text.

For every game in the given PGN files:

 1. render the mainline as Turkish notation text, e.g.
        1. e4 e5 2. Af3 Ac6 3. Fb5 a6 ... 10. 0-0 Vxd8+ ... 1-0
    (piece letters K->Ş, Q->V, R->K, B->F, N->A; castling 0-0 / 0-0-0; promotion g8V;
    check/mate marks + and # as in SAN; no e.p. suffix);
 2. corrupt the text with character-level noise at rate p (see `corrupt`): each character is,
    with probability p, substituted (OCR confusion table, else a random character), deleted, or
    gets a random character inserted after it. The random stream is seeded per
    (seed, p, file, game index), so results do not depend on the order or
    directory of the arguments (only on the file names);
 3. read it back the "strict" way: split on whitespace, skip tokens that are exactly a move
    number (`12.` / `12...`), swap letters naively back to English (Ş/S->K, V->Q, K->R, F->B,
    A->N, 0->O, simultaneously) and call python-chess `board.parse_san` token by token, stopping
    at the first token that does not parse or parses to a move other than the one played.
    A result token (1-0, 0-1, 1/2-1/2, *) is skipped wherever it stands.

Reported per noise level: % of plies right (plies read correctly before the first failure,
over all plies) and % of games fully right (every ply of the game read correctly; anything
after the last ply is ignored).

Usage: python3 scripts/baseline_strict.py datasets/games/*.pgn --noise 0.05 0.10 --seed 1
"""

from __future__ import annotations

import argparse
import os
import random
import re
import sys
import time

try:
    import chess
    import chess.pgn
except ImportError:  # pragma: no cover
    sys.exit("python-chess is required: pip install chess")

# --- rendering -----------------------------------------------------------------------------

EN_TO_TR_PIECE = {"K": "Ş", "Q": "V", "R": "K", "B": "F", "N": "A"}


def san_to_turkish(san: str) -> str:
    if san.startswith("O-O"):
        return san.replace("O", "0")
    head = EN_TO_TR_PIECE.get(san[0], san[0])
    body = san[1:]
    # promotion: e8=Q -> e8V (the only other upper-case letter a SAN move can hold)
    body = re.sub(r"=([QRBN])", lambda m: EN_TO_TR_PIECE[m.group(1)], body)
    return head + body


def render_turkish(game: chess.pgn.Game) -> tuple[str, list[chess.Move]]:
    board = game.board()
    parts: list[str] = []
    moves: list[chess.Move] = []
    for move in game.mainline_moves():
        if board.turn == chess.WHITE:
            parts.append(f"{board.fullmove_number}.")
        elif not moves:
            parts.append(f"{board.fullmove_number}...")
        parts.append(san_to_turkish(board.san(move)))
        moves.append(move)
        board.push(move)
    parts.append(game.headers.get("Result", "*"))
    return " ".join(parts), moves


# --- noise ---------------------------------------------------------------------------------

# OCR / handwriting confusions, both directions where they make sense.
CONFUSION = {
    "0": "O", "O": "0",
    "1": "l", "l": "1",
    "5": "S", "S": "5",
    "6": "b", "b": "6",
    "9": "g", "g": "9",
    "A": "4", "4": "A",
    "F": "E", "E": "F",
    "e": "c", "c": "e",
    "a": "o", "o": "a",
    "Ş": "S$",
    "8": "B3", "B": "8", "3": "8",
    "h": "b",
    "x": "X",
    "V": "U",
    "K": "X",
    "f": "t",
    "d": "a",
    "2": "Z",
    "+": "t",
}
# Characters used for insertions and for substitutions of characters not in the table.
NOISE_ALPHABET = "abcdefgh12345678ŞVKFAx+-0.O "
P_SUBSTITUTE, P_DELETE = 0.6, 0.2  # insertion takes the rest (0.2)


def corrupt(text: str, p: float, rng: random.Random) -> str:
    out: list[str] = []
    for ch in text:
        if rng.random() >= p:
            out.append(ch)
            continue
        r = rng.random()
        if r < P_SUBSTITUTE:
            choices = CONFUSION.get(ch)
            if choices:
                out.append(rng.choice(choices))
            else:
                out.append(rng.choice([c for c in NOISE_ALPHABET if c != ch]))
        elif r < P_SUBSTITUTE + P_DELETE:
            pass
        else:
            out.append(ch)
            out.append(rng.choice(NOISE_ALPHABET))
    return "".join(out)


# --- strict reading ------------------------------------------------------------------------

TR_TO_EN = str.maketrans({"Ş": "K", "S": "K", "V": "Q", "K": "R", "F": "B", "A": "N", "0": "O"})
MOVE_NUMBER = re.compile(r"^\d+\.(\.\.)?$")
RESULT_TOKENS = {"1-0", "0-1", "1/2-1/2", "*"}


def strict_read(text: str, truth: list[chess.Move]) -> int:
    """Number of plies read correctly before the first failure."""
    board = chess.Board()
    ok = 0
    for token in text.split():
        if MOVE_NUMBER.match(token) or token in RESULT_TOKENS:
            continue
        if ok == len(truth):
            break
        try:
            move = board.parse_san(token.translate(TR_TO_EN))
        except ValueError:
            break
        if move != truth[ok]:
            break
        board.push(move)
        ok += 1
    return ok


# --- driver --------------------------------------------------------------------------------


def load_games(paths: list[str]):
    for path in paths:
        with open(path, encoding="utf-8") as fh:
            index = 0
            while True:
                game = chess.pgn.read_game(fh)
                if game is None:
                    break
                if "FEN" in game.headers or game.errors:
                    index += 1
                    continue
                text, moves = render_turkish(game)
                yield path, index, text, moves
                index += 1


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("pgn", nargs="+", help="PGN files")
    ap.add_argument("--noise", type=float, nargs="+", default=[0.05, 0.10], help="character noise rates")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--show", type=int, default=0, help="print N example noisy texts per level")
    args = ap.parse_args()

    t0 = time.time()
    games = list(load_games(args.pgn))
    n_games = len(games)
    n_plies = sum(len(m) for _, _, _, m in games)
    print(f"strict baseline: {n_games} games, {n_plies} plies from {len(args.pgn)} file(s), seed {args.seed}")
    print(f"{'noise':>6}  {'plies right':>12}  {'games fully right':>18}  {'mean plies before 1st failure':>30}")
    for p in args.noise:
        plies_ok = games_ok = 0
        shown = 0
        for path, index, text, moves in games:
            rng = random.Random(f"{args.seed}:{p!r}:{os.path.basename(path)}:{index}")
            noisy = corrupt(text, p, rng)
            ok = strict_read(noisy, moves)
            plies_ok += ok
            games_ok += ok == len(moves)
            if shown < args.show:
                print(f"  [{path}#{index}] {noisy[:160]}")
                shown += 1
        print(
            f"{p:>6.2f}  {100.0 * plies_ok / n_plies:>11.2f}%  {100.0 * games_ok / n_games:>17.2f}%"
            f"  {plies_ok / n_games:>30.1f}"
        )
    print(f"({time.time() - t0:.1f} s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
