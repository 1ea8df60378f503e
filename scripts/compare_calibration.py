#!/usr/bin/env python3
"""Scores two calibrations of the repair engine's confidences on the same decodes.

Input: the evidence file that `hamle eval repair` writes with
`HAMLE_EVAL_EVIDENCE=FILE` (one line per decoded ply: noise level, status, the beam's
agreement, the reading's share, flagged neighbours, the confidence given, right). Run it
with `--fit-calibration`, so that `confidence` is the raw one.

Output: per noise level and status, for session 35's beta calibration of the raw
confidence and for the logistic calibration on the evidence (the weights in
`src/decode/mod.rs`, `--hand` for `Calibration::handwritten`): log loss, Brier score,
expected calibration error (the eval's 6 bins), AUROC, and the wrong plies given 0.9 or
more.

    HAMLE_EVAL_EVIDENCE=ev.tsv hamle eval repair datasets/games --games 200 \\
        --noise 0.05,0.10 --seed 21 --fit-calibration
    python3 scripts/compare_calibration.py ev.tsv
"""
import argparse
import csv
import math
import re
from pathlib import Path

STATUSES = ["ok", "corrected", "illegal", "unreadable", "missing"]

# Session 35's triples (a, b, m): sigma(a ln c - b ln(1 - c) + m) of the raw confidence c.
BETA = {
    "ok": (4.997, 0.2079, 4.400),
    "corrected": (0.07412, 0.7970, 2.834),
    "illegal": (1.719, 1.719, 1.473),
    "unreadable": (1.489, 1.489, 2.032),
    "missing": (1.472, 1.472, 1.759),
}
BETA_HAND = {
    "ok": (0.5417, 0.5417, 1.9683),
    "corrected": (0.1859, 0.1859, 2.4859),
    "illegal": (1.5413, 1.5413, 0.8181),
    "unreadable": (1.1986, 1.1986, 1.0978),
    "missing": (1.7364, 1.7364, 1.3520),
}


def weights_from_source(prefix):
    """The weights of `src/decode/mod.rs` (`DEFAULT_OK`, ... or `HAND_OK`, ...)."""
    src = (Path(__file__).resolve().parent.parent / "src/decode/mod.rs").read_text()
    out = {}
    for st in STATUSES:
        m = re.search(rf"const {prefix}_{st.upper()}: CalWeights = \[([^\]]*)\]", src)
        out[st] = [float(x.replace("_", "")) for x in m.group(1).split(",") if x.strip()]
    return out


def sigmoid(z):
    return 1.0 / (1.0 + math.exp(-z))


def features(beam, local, neighbours):
    lo = lambda x: min(max(x, 1e-4), 1.0)
    return [math.log(lo(beam)), -math.log(lo(1 - beam)), math.log(lo(local)),
            -math.log(lo(1 - local)), neighbours, 1.0]


def metrics(ps, ys):
    n = len(ps)
    eps = 1e-6
    ll = -sum(y * math.log(p + eps) + (1 - y) * math.log(1 - p + eps) for p, y in zip(ps, ys)) / n
    brier = sum((p - y) ** 2 for p, y in zip(ps, ys)) / n
    edges = [0, 0.5, 0.7, 0.9, 0.97, 0.99, 1.0001]
    ece = 0.0
    for lo, hi in zip(edges, edges[1:]):
        b = [(p, y) for p, y in zip(ps, ys) if lo <= p < hi]
        if b:
            ece += len(b) / n * abs(sum(p for p, _ in b) / len(b) - sum(y for _, y in b) / len(b))
    order = sorted(range(n), key=lambda i: ps[i])
    ranks = [0] * n
    for r, i in enumerate(order):
        ranks[i] = r
    pos = sum(ys)
    neg = n - pos
    auc = ((sum(r for r, y in zip(ranks, ys) if y) - pos * (pos - 1) / 2) / (pos * neg)
           if pos and neg else float("nan"))
    wrong_conf = sum(1 for p, y in zip(ps, ys) if p >= 0.9 and not y)
    under = sum(1 for p in ps if p < 0.9)
    return (f"plies {n:6d} wrong {n - pos:5d}  log loss {ll:.4f}  Brier {brier:.4f}  "
            f"ECE {ece:.4f}  AUROC {auc:.3f}  wrong at >= 0.9 {wrong_conf:4d}  under 0.9 {under:5d}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("evidence")
    ap.add_argument("--hand", action="store_true", help="the calibrations for --hand")
    args = ap.parse_args()
    beta = BETA_HAND if args.hand else BETA
    weights = weights_from_source("HAND" if args.hand else "DEFAULT")
    rows = [r for r in csv.DictReader(open(args.evidence), delimiter="\t") if r["auto"] == "0"]
    for noise in sorted({r["noise"] for r in rows}) + [None]:
        sel = [r for r in rows if noise is None or r["noise"] == noise]
        print(f"noise {noise or 'all'}")
        for st in STATUSES + [None]:
            part = [r for r in sel if st is None or r["status"] == st]
            if not part:
                continue
            ys = [int(r["right"]) for r in part]
            old, new = [], []
            for r in part:
                c = min(max(float(r["confidence"]), 1e-3), 1 - 1e-3)
                a, b, m = beta[r["status"]]
                old.append(sigmoid(a * math.log(c) - b * math.log(1 - c) + m))
                x = features(float(r["beam"]), float(r["local"]), float(r["neighbours"]))
                new.append(sigmoid(sum(w * v for w, v in zip(weights[r["status"]], x))))
            print(f"  {st or 'all':10} beta (session 35)  {metrics(old, ys)}")
            print(f"  {'':10} evidence          {metrics(new, ys)}")


if __name__ == "__main__":
    main()
