#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""What the board model does to the piece model's reading of photos of sets (issue #6):
pieces it erases, spill it removes, kinds it mends.

Reads every labelled photo of DIR (`NAME.jpg|png` beside `NAME.fen`) with `hamle board
--kind physical` and `HAMLE_SET_DUMP` set, which writes the piece model's and the board
model's log-odds of each square, then compares both with the label, square by square, in
the orientation hamle chose (a board turned wrong counts as read wrong):

    python3 scripts/set_erasures.py work-tmp/h3d19
    HAMLE_BOARD3D_MODEL=candidate.onnx python3 scripts/set_erasures.py work-tmp/r3d/val

Occupied squares: right kind and colour by each model, read empty by each, and *erased*
(the piece model saw a piece, the board model reads the square empty). Empty squares: read
occupied by each (pieces spilling into the squares behind them). Last, hamle's final
reading (after the rule fixes): its squares read at a confidence of 0.9 or more, right and
wrong, and how many of each the two models disagree on as to occupancy (the piece model's
probability of empty under 0.1 where the reading is empty, over 0.9 where it is a piece).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from baseline_chessvision import expand  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
CLASSES = ".PNBRQKpnbrqk"


def canonical(orientation: str, r: int, c: int) -> tuple[int, int]:
    """Displayed (row, column) to the canonical board's (row 0 = rank 8, column 0 = file a),
    as `board::canonical_rc`."""
    return {"White": (r, c), "Black": (7 - r, 7 - c), "Left": (7 - c, r), "Right": (c, 7 - r)}[orientation]


def best(v: list[float]) -> str:
    return CLASSES[max(range(13), key=lambda k: v[k])]


def p_empty(logits: list[float]) -> float:
    m = max(logits)
    e = [math.exp(v - m) for v in logits]
    return e[0] / sum(e)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir", type=Path)
    ap.add_argument("--hamle", type=Path, default=ROOT / "target" / "release" / "hamle")
    ap.add_argument("--list", action="store_true", help="name each erased piece")
    args = ap.parse_args()
    photos = sorted(p for p in args.dir.iterdir()
                    if p.suffix.lower() in (".jpg", ".jpeg", ".png") and p.with_suffix(".fen").exists())
    if not photos:
        sys.exit(f"{args.dir}: no labelled photos (NAME.jpg beside NAME.fen)")
    total, read = Counter(), 0
    with tempfile.TemporaryDirectory() as tmp:
        for photo in photos:
            dump = Path(tmp) / "dump.jsonl"
            dump.unlink(missing_ok=True)
            env = dict(os.environ, HAMLE_SET_DUMP=str(dump))
            run = subprocess.run([str(args.hamle), "board", str(photo), "--kind", "physical", "--format", "json"],
                                 env=env, capture_output=True, text=True)
            if not dump.exists() or run.returncode != 0:
                print(f"{photo.name}: no set read", file=sys.stderr)
                continue
            d = json.loads(dump.read_text().splitlines()[-1])
            final = {sq["square"]: (sq["confidence"], sq["piece"] or ".") for sq in json.loads(run.stdout)["squares"]}
            truth = expand(photo.with_suffix(".fen").read_text())
            read += 1
            c, erased = Counter(), []
            for i in range(64):
                r, f = canonical(d["orientation"], i // 8, i % 8)
                t, name = truth[r * 8 + f], f"{'abcdefgh'[f]}{8 - r}"
                p, b = best(d["piece"][i]), best(d["board"][i])
                if t != ".":
                    c["occupied"] += 1
                    c["piece right"] += p == t
                    c["board right"] += b == t
                    c["piece empty"] += p == "."
                    c["board empty"] += b == "."
                    if p != "." and b == ".":
                        c["erased"] += 1
                        erased.append(f"{name}:{t}")
                else:
                    c["empty"] += 1
                    c["piece occupied"] += p != "."
                    c["board occupied"] += b != "."
                conf, fp = final[name]
                if conf >= 0.9:
                    pe = p_empty(d["piece"][i])
                    key = "sure right" if fp == t else "sure wrong"
                    c[key] += 1
                    c[key + " disagree"] += (fp == "." and pe < 0.1) or (fp != "." and pe > 0.9)
            total += c
            if args.list and erased:
                print(f"{photo.name} ({d['orientation']}): erased {' '.join(erased)}")
    print(f"{read} of {len(photos)} photos read as sets")
    o, e = total["occupied"], total["empty"]
    print(f"occupied squares {o}: right kind piece model {total['piece right']}, board model {total['board right']}; "
          f"read empty piece model {total['piece empty']}, board model {total['board empty']} "
          f"(erased: {total['erased']})")
    print(f"empty squares {e}: read occupied piece model {total['piece occupied']}, "
          f"board model {total['board occupied']}")
    print(f"final reading, squares at confidence >= 0.9: right {total['sure right']} "
          f"({total['sure right disagree']} with the models disagreeing on occupancy), "
          f"wrong {total['sure wrong']} ({total['sure wrong disagree']})")


if __name__ == "__main__":
    main()
