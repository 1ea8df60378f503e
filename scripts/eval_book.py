#!/usr/bin/env python3
"""Scores `hamle read` on a test book made by scripts/make_test_book.py.

    python3 scripts/eval_book.py work-tmp/book/book.pdf [--truth work-tmp/book/book.truth.json]

Each game of the truth is compared with the read game near its place (within 4) that agrees
with it on most plies, each read game used once (a game hamle splits or merges shows as a
count mismatch and as wrong plies); a ply is right when its English SAN
equals the truth's. Diagrams are right when the placement is exact (matched by placement, each board read used once). Also prints what hamle's own diagram-vs-game check said, and the wall time.
"""

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("pdf")
    ap.add_argument("--truth")
    ap.add_argument("--hamle", default=str(ROOT / "target" / "release" / "hamle"))
    args = ap.parse_args()
    pdf = Path(args.pdf)
    truth_path = Path(args.truth) if args.truth else pdf.with_name("book.truth.json")
    truth = json.loads(truth_path.read_text())
    t0 = time.time()
    r = subprocess.run([args.hamle, "read", str(pdf), "--format", "json"], capture_output=True, text=True)
    wall = time.time() - t0
    if r.returncode != 0:
        print(r.stderr, file=sys.stderr)
    recs = [json.loads(l) for l in r.stdout.splitlines()]
    games = [x for x in recs if x.get("kind") in ("game", "text")]
    boards = [x for x in recs if x.get("kind") == "board"]
    right = total = exact = 0
    wrong_flagged = wrong = ok = ok_right = 0
    per_game = {}
    used = set()
    for i, t in enumerate(truth["games"]):
        # The game read for it: of the unused ones near its place, the one agreeing on most
        # plies (a game split in two or a merged pair shifts the places after it).
        best, best_r = None, -1
        for j in range(max(0, i - 4), min(len(games), i + 5)):
            if j in used:
                continue
            sans = [m["san"] for m in games[j]["moves"]]
            r_ = sum(1 for a, b in zip(sans, t["sans"]) if a == b)
            if r_ > best_r:
                best, best_r = j, r_
        if best is not None:
            used.add(best)
        moves = games[best]["moves"] if best is not None else []
        got = [m["san"] for m in moves]
        r_ = sum(1 for a, b in zip(got, t["sans"]) if a == b)
        right += r_
        total += len(t["sans"])
        exact += int(got == t["sans"])
        # Doubt: of the plies read wrong, how many say so; of the `ok` plies, how many are right.
        for m, want in zip(moves, t["sans"]):
            flagged = m["status"] != "ok"
            if m["san"] != want:
                wrong += 1
                wrong_flagged += flagged
                per_game[i] = per_game.get(i, 0) + 1
            if not flagged:
                ok += 1
                ok_right += m["san"] == want
    flagged = sum(1 for g in games for m in g["moves"] if m["status"] != "ok")
    plies = sum(len(g["moves"]) for g in games)
    # A diagram is right when a board read from the book has its exact placement (each board
    # read counts once): the order of diagrams on a page is the layout's, not the truth's.
    d_right = 0
    unused = [b["placement"] for b in boards]
    for t in truth["diagrams"]:
        if t["fen"] in unused:
            unused.remove(t["fen"])
            d_right += 1
    checks = {}
    for b in boards:
        c = (b.get("check") or {}).get("result", "none")
        checks[c] = checks.get(c, 0) + 1
    nd = len(truth["diagrams"])
    print(f"{pdf}: {wall:.1f} s")
    print(f"games: {len(games)} read, {len(truth['games'])} in the book; exact {exact}")
    print(f"plies right: {right}/{total} = {100 * right / max(total, 1):.2f} %; flagged {flagged} of {plies}")
    worst = sorted(per_game.items(), key=lambda kv: -kv[1])[:3]
    print(f"wrong plies flagged: {wrong_flagged}/{wrong}; ok plies right: {ok_right}/{ok} = "
          f"{100 * ok_right / max(ok, 1):.2f} %; wrong plies in {len(per_game)} games, the worst: "
          + ", ".join(f"game {g + 1} ({n})" for g, n in worst))
    print(f"diagrams: {len(boards)} read, {nd} in the book; exact {d_right}/{nd} = {100 * d_right / max(nd, 1):.1f} %")
    print(f"diagram checks: {checks}")


if __name__ == "__main__":
    main()
