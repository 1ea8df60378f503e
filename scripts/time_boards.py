#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Time `hamle eval boards` on one core, several binaries taking turns.

    python3 scripts/time_boards.py --runs 3 DIR OLD_BINARY NEW_BINARY [--core 1] [--kind auto]

Each run calls every binary once, in turn (`RAYON_NUM_THREADS=1 taskset -c CORE BIN eval
boards DIR --kind KIND --json`), so that a slow spell of the machine falls on all of them.
Prints, per binary, each run's mean and slowest seconds per image, and each image's fastest
time over the runs: its mean, its slowest image, and the four slowest. The fastest of a few
runs is the image's own cost; a single run also carries whatever else the machine did.
"""

import argparse
import collections
import json
import os
import subprocess


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("bins", nargs="+")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--core", default="1")
    ap.add_argument("--kind", default="auto")
    a = ap.parse_args()
    times = {b: collections.defaultdict(list) for b in a.bins}
    env = dict(os.environ, RAYON_NUM_THREADS="1")
    for _ in range(a.runs):
        for b in a.bins:
            out = subprocess.run(
                ["taskset", "-c", a.core, b, "eval", "boards", a.dir, "--kind", a.kind, "--json"],
                capture_output=True, text=True, env=env, check=True,
            ).stdout
            for o in json.loads(out)["outcomes"]:
                times[b][o["name"]].append(o["seconds"])
    for b in a.bins:
        t = times[b]
        means = [sum(v[i] for v in t.values()) / len(t) for i in range(a.runs)]
        maxes = [max(v[i] for v in t.values()) for i in range(a.runs)]
        best = {k: min(v) for k, v in t.items()}
        top = sorted(best.items(), key=lambda x: -x[1])[:4]
        print(b)
        print("  per run: mean", [round(x, 4) for x in means], "slowest", [round(x, 3) for x in maxes])
        print("  fastest of %d per image: mean %.4f, slowest %.3f" % (
            a.runs, sum(best.values()) / len(best), max(best.values())),
            [(k, round(v, 3)) for k, v in top])


if __name__ == "__main__":
    main()
