#!/usr/bin/env python3
"""The HCS scoresheets' move lists, as their players wrote them, read by `hamle repair`.

../shared/data/hcs-labels/training_tags.txt holds, per scoresheet cell, what 200 real
players wrote (`PxP`, `cd`, `Bxf`, wrong moves). There is no ground truth of the games
played, so this prints what hamle makes of them: plies per status, tokens left out, and
how the captures written by the piece they take (`QxQ`, `exN`) came back, and the
confidences given to `ok`, `corrected` and `illegal` plies.

    python3 scripts/hcs_games.py --hamle target/release/hamle [--hand] [--kinds]

`--kinds` also sorts the `corrected` plies by how the text differs from the move hamle
chose (another rank, file, piece, ...) and counts the letter and digit pairs: what the
players and the transcribers got wrong, as far as hamle's reading is right.

Games are the pages of one game number joined in move order (157 games); an empty cell
is written `?`. Nothing is copied into the repository.
"""

import argparse
import collections
import json
import os
import re
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TAGS = os.path.join(REPO, "..", "shared", "data", "hcs-labels", "training_tags.txt")
NAMED = re.compile(r"^[KQRBNPa-h]?x[KQRBNP][+#]*$")


def games(path):
    out = collections.defaultdict(dict)
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            parts = line.rstrip("\n").split(" ", 1)
            m = re.match(r"(\d+)_(\d+)_(\d+)_(white|black)\.png", parts[0])
            if not m or len(parts) < 2:
                continue
            g, _page, mv, col = m.groups()
            out[g][(int(mv), col == "black")] = parts[1].strip()
    for g, cells in sorted(out.items()):
        toks = []
        for mv, black in sorted(cells):
            if not black:
                toks.append(f"{mv}.")
            elif (mv, False) not in cells:
                toks.append(f"{mv}...")
            toks.append(cells[(mv, black)] or "?")
        yield g, " ".join(toks)


SQUARE_MOVE = re.compile(r"([KQRBN]?)([a-h]?[1-8]?)([a-h][1-8])([QRBN]?)")


def plain(t):
    """A move's text without capture, check and promotion marks."""
    return re.sub(r"[+#x=-]", "", t)


def kind(read, san):
    """How the text `read` differs from the move `san` (both English), and for a rank or
    file off, the two characters (sorted, `c/e`), else None."""
    r, s = plain(read), plain(san)
    if s.startswith("OO") or r.startswith(("OO", "00")):
        return "castling", None
    mr, ms = SQUARE_MOVE.fullmatch(r), SQUARE_MOVE.fullmatch(s)
    if not mr or not ms:
        return "spelling (incomplete, extra characters)", None
    pr, tr, ps, ts = mr.group(1), mr.group(3), ms.group(1), ms.group(3)
    df = abs(ord(tr[0]) - ord(ts[0]))
    dr = abs(int(tr[1]) - int(ts[1]))
    pair = lambda j: "/".join(sorted((tr[j], ts[j])))
    if pr == ps and tr == ts:
        return "same square and piece (origin, capture or check)", None
    if pr == ps and df == 0:
        return ("rank off by one" if dr == 1 else "rank off by more"), pair(1)
    if pr == ps and dr == 0:
        return ("file off by one" if df == 1 else "file off by more"), pair(0)
    if pr == ps:
        return "another square", None
    if tr == ts:
        return ("no piece letter" if pr == "" else
                "a piece letter for a pawn" if ps == "" else "another piece"), None
    return "another piece and square", None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--hamle", default=os.path.join(REPO, "target", "release", "hamle"))
    ap.add_argument("--tags", default=TAGS)
    ap.add_argument("--out", help="also keep each game's text and JSON in this folder")
    ap.add_argument("--hand", action="store_true",
                    help="run `hamle repair --hand` (the calibration for players' slips)")
    ap.add_argument("--kinds", action="store_true",
                    help="sort the corrected plies by how their text differs from the move")
    a = ap.parse_args()
    if not os.path.exists(a.tags):
        print(f"no HCS labels at {a.tags}", file=sys.stderr)
        return 1
    status = collections.Counter()
    named = collections.Counter()
    left_out = n = 0
    conf = collections.defaultdict(list)
    kinds = collections.Counter()
    pairs = {"file": collections.Counter(), "rank": collections.Counter()}
    with tempfile.TemporaryDirectory() as tmp:
        for g, text in games(a.tags):
            path = os.path.join(tmp, f"g{g}.txt")
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(text + "\n")
            out = subprocess.run(
                [a.hamle, "repair", path, "--lang", "en", "--format", "json"] + (["--hand"] if a.hand else []),
                capture_output=True, text=True,
            ).stdout
            if not out.strip():
                continue
            game = json.loads(out.splitlines()[0])
            if a.out:
                os.makedirs(a.out, exist_ok=True)
                with open(os.path.join(a.out, f"g{g}.txt"), "w", encoding="utf-8") as fh:
                    fh.write(text + "\n")
                with open(os.path.join(a.out, f"g{g}.json"), "w", encoding="utf-8") as fh:
                    fh.write(out)
            n += 1
            left_out += len(game["ignored"])
            for m in game["moves"]:
                status[m["status"]] += 1
                conf[m["status"]].append(m["confidence"])
                if m.get("read") and NAMED.match(m["read"]):
                    named[m["status"]] += 1
                if a.kinds and m["status"] == "corrected" and m.get("read") and m.get("san"):
                    k, pair = kind(m["read"], m["san"])
                    kinds[k] += 1
                    if pair:
                        pairs[k.split()[0]][pair] += 1
            named["left out"] += sum(1 for t in game["ignored"] if NAMED.match(t))
    print(f"{n} games, {sum(status.values())} plies: {dict(sorted(status.items()))}")
    print(f"tokens left out: {left_out}")
    for st in ("ok", "corrected", "illegal"):
        cs = conf.get(st, [])
        if cs:
            high = sum(1 for c in cs if c >= 0.9)
            print(f"{st}: mean confidence {sum(cs) / len(cs):.3f}, {high} of {len(cs)} at >= 0.9")
    print(f"named captures (QxQ, exN): {dict(sorted(named.items()))}")
    if a.kinds:
        total = sum(kinds.values())
        print(f"corrected plies by kind ({total}):")
        for k, v in kinds.most_common():
            print(f"  {v:5d} {100 * v / max(total, 1):5.1f} %  {k}")
        for what, c in pairs.items():
            print(f"  {what} pairs: " + ", ".join(f"{p} {v}" for p, v in c.most_common(10)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
