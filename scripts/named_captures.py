#!/usr/bin/env python3
"""Real games with every capture written by the captured piece's letter, read back by hamle.

Many players still write a capture by the piece it takes instead of its square: `QxQ`,
`RxR+`, `BxN`, `PxP`, `exN` (about 0.7 % of the cells of the HCS scoresheets in
../shared/data/hcs-labels). This script writes real games from datasets/games that way,
in English and in Turkish (`VxV`, `FxA`, `exP`; P for a pawn taken, as Turkish has no pawn
letter), with no other noise; runs `hamle repair --format json` on each; and counts the
plies that come back as the move really played.

    python3 scripts/named_captures.py --hamle target/release/hamle --games 100

Needs python-chess (`pip install chess`). Pawn captures name the pawn by its file
(`exN`), or in English by `P` half of the time (seeded).
"""

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile

import chess
import chess.pgn

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TR = {"K": "Ş", "Q": "V", "R": "K", "B": "F", "N": "A", "P": "P"}


def load_games(n):
    games = []
    for name in sorted(os.listdir(os.path.join(REPO, "datasets", "games"))):
        if not name.endswith(".pgn"):
            continue
        with open(os.path.join(REPO, "datasets", "games", name), encoding="utf-8") as fh:
            while True:
                g = chess.pgn.read_game(fh)
                if g is None:
                    break
                games.append(g)
    step = max(1, len(games) // n)
    return games[::step][:n]


def letter(piece_type, lang):
    s = chess.piece_symbol(piece_type).upper()
    return TR[s] if lang == "tr" else s


def written(board, mv, lang, rng):
    """The move as the player writes it: named if a capture (not a promotion)."""
    san = board.san(mv)
    suffix = "#" if san.endswith("#") else "+" if san.endswith("+") else ""
    if board.is_capture(mv) and not mv.promotion:
        mover = board.piece_at(mv.from_square).piece_type
        taken = chess.PAWN if board.is_en_passant(mv) else board.piece_at(mv.to_square).piece_type
        if mover == chess.PAWN:
            if lang == "en" and rng.random() < 0.5:
                m = "P"
            else:
                m = chess.square_name(mv.from_square)[0]
        else:
            m = letter(mover, lang)
        return f"{m}x{letter(taken, lang)}{suffix}"
    if lang == "en":
        return san
    # Turkish SAN: piece letters, promotion without `=`, castling with zeros.
    out = san.replace("O-O-O", "0-0-0").replace("O-O", "0-0")
    if out[0] in "KQRBN":
        out = TR[out[0]] + out[1:]
    if "=" in out:
        head, tail = out.split("=")
        out = head + TR[tail[0]] + tail[1:]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--hamle", default=os.path.join(REPO, "target", "release", "hamle"))
    ap.add_argument("--games", type=int, default=100)
    ap.add_argument("--seed", type=int, default=5)
    a = ap.parse_args()
    games = load_games(a.games)
    for lang in ["en", "tr"]:
        rng = random.Random(a.seed)
        plies = right = full = named = 0
        statuses = {}
        wrong = []
        with tempfile.TemporaryDirectory() as tmp:
            for k, g in enumerate(games):
                board = g.board()
                toks, truth = [], []
                for mv in g.mainline_moves():
                    if board.turn == chess.WHITE:
                        toks.append(f"{board.fullmove_number}.")
                    t = written(board, mv, lang, rng)
                    named += "x" in t and not any(c in "12345678" for c in t)
                    toks.append(t)
                    truth.append(mv.uci())
                    board.push(mv)
                path = os.path.join(tmp, f"{lang}{k:03d}.txt")
                with open(path, "w", encoding="utf-8") as fh:
                    fh.write(" ".join(toks) + "\n")
                out = subprocess.run(
                    [a.hamle, "repair", path, "--format", "json"],
                    capture_output=True, text=True, check=True,
                ).stdout
                game = json.loads(out.splitlines()[0])
                got = {m["ply"]: m for m in game["moves"]}
                ok = 0
                for i, u in enumerate(truth):
                    m = got.get(i + 1)
                    if m is not None and m.get("uci") == u:
                        ok += 1
                    elif m is not None:
                        wrong.append(f"{lang}{k:03d} ply {i + 1}: {m['read']} -> {m['san']}")
                for m in game["moves"]:
                    statuses[m["status"]] = statuses.get(m["status"], 0) + 1
                plies += len(truth)
                right += ok
                full += ok == len(truth) and len(game["moves"]) == len(truth)
        print(
            f"{lang}: {len(games)} games, {plies} plies ({named} named captures): "
            f"{right / plies:.2%} of plies right, {full} games fully right; statuses {statuses}"
        )
        for w in wrong[:20]:
            print("  wrong:", w)
    return 0


if __name__ == "__main__":
    sys.exit(main())
