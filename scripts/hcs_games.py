#!/usr/bin/env python3
"""The HCS scoresheets' move lists, as their players wrote them, read by `hamle repair`.

../shared/data/hcs-labels/training_tags.txt holds, per scoresheet cell, what 200 real
players wrote (`PxP`, `cd`, `Bxf`, wrong moves). There is no ground truth of the games
played, so this prints what hamle makes of them: plies per status, tokens left out, and
how the captures written by the piece they take (`QxQ`, `exN`) came back, and the
confidences given to `ok`, `corrected` and `illegal` plies.

    python3 scripts/hcs_games.py --hamle target/release/hamle [--hand]

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


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--hamle", default=os.path.join(REPO, "target", "release", "hamle"))
    ap.add_argument("--tags", default=TAGS)
    ap.add_argument("--out", help="also keep each game's text and JSON in this folder")
    ap.add_argument("--hand", action="store_true",
                    help="run `hamle repair --hand` (the calibration for players' slips)")
    a = ap.parse_args()
    if not os.path.exists(a.tags):
        print(f"no HCS labels at {a.tags}", file=sys.stderr)
        return 1
    status = collections.Counter()
    named = collections.Counter()
    left_out = n = 0
    conf = collections.defaultdict(list)
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
            named["left out"] += sum(1 for t in game["ignored"] if NAMED.match(t))
    print(f"{n} games, {sum(status.values())} plies: {dict(sorted(status.items()))}")
    print(f"tokens left out: {left_out}")
    for st in ("ok", "corrected", "illegal"):
        cs = conf.get(st, [])
        if cs:
            high = sum(1 for c in cs if c >= 0.9)
            print(f"{st}: mean confidence {sum(cs) / len(cs):.3f}, {high} of {len(cs)} at >= 0.9")
    print(f"named captures (QxQ, exN): {dict(sorted(named.items()))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
