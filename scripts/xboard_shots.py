#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Held-out app screenshots for `hamle eval boards`: real XBoard windows showing positions from
real games, captured from a virtual X screen, with the placement beside each.

    python3 scripts/xboard_shots.py work-tmp/xboard --n 40 --seed 1
    hamle eval boards work-tmp/xboard --kind auto

Nothing of hamle draws these: XBoard (Debian `xboard`, 4.9) draws its own window — menus,
clocks, the button bar, the board with its wood textures or flat colours, coordinates, the
last move highlighted or drawn as an arrow — and the screen is captured as it is (ImageMagick
`import`, under `Xvfb`). hamle's square model trained on XBoard's SVG pieces among 30 sets
(scripts/boards/assets.py), never on its window, its textures or its arrows, and no part of
hamle was tuned on these images.

Each image is `mixed-xb-NNN.png` with `mixed-xb-NNN.fen` (placement, canonical: White at the
bottom, as the dev set's `mixed-*` labels). The game is a real one from datasets/games
(scripts/game_positions.py's draw), loaded into XBoard as a PGN cut at the drawn ply, so the
last move is shown as XBoard shows it. What varies, by the seed: the square size (33–72 px),
XBoard's wood textures (a third; hatched dark squares on
wood in a sixth) or one of six flat colour pairs (half), coordinates on or off, the board flipped (Black at
the bottom), the last move drawn as an arrow or as highlighted squares, and how much of the
screen around the window is kept (the window alone, or the window on a bare desktop).

Needs Debian `xvfb xboard imagemagick` and python-chess.
"""

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import chess
import chess.pgn

sys.path.insert(0, str(Path(__file__).resolve().parent))
from game_positions import load_games  # noqa: E402

XBOARD = "/usr/games/xboard"
TEXTURES = "/usr/share/games/xboard/themes/textures"
SIZES = [33, 37, 40, 45, 49, 54, 58, 64, 72]
FLAT = [
    ("#f0d9b5", "#b58863"),  # lichess brown
    ("#eeeed2", "#769656"),  # green
    ("#dee3e6", "#8ca2ad"),  # blue-grey
    ("#ffffff", "#c0c0c0"),  # white and grey
    ("#e8e8e8", "#7d945d"),
    ("#c8c365", "#77a26d"),  # XBoard's own non-texture colours
]


def shoot(display, pgn_path, opts, out_png, screen, crop_window):
    args = [XBOARD, "-ncp", "-lgf", pgn_path, "-startupMessage", "", "-autoFlipView", "false",
            "-timeDelay", "0", "-autoDisplayTags", "false", "-autoDisplayComment", "false"] + opts
    env = dict(os.environ, DISPLAY=display, HOME=tempfile.mkdtemp())
    p = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(2.5)
        tmp = out_png.with_suffix(".full.png")
        subprocess.run(["import", "-window", "root", str(tmp)], env=env, check=True)
    finally:
        p.terminate()
        p.wait()
    from PIL import Image

    im = Image.open(tmp).convert("RGB")
    tmp.unlink()
    # The window sits at the top left of the bare (black) screen; its extent is where the
    # screen stops being black.
    px = im.load()
    w, h = im.size
    right = max(x for x in range(w) if px[x, 5] != (0, 0, 0)) + 1
    bottom = max(y for y in range(h) if px[5, y] != (0, 0, 0)) + 1
    if crop_window:
        im = im.crop((0, 0, right, bottom))
    else:
        im = im.crop((0, 0, min(w, right + screen[0]), min(h, bottom + screen[1])))
    im.save(out_png)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--n", type=int, default=40)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--display", default=":97")
    a = ap.parse_args()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    rng = random.Random(a.seed)
    games = load_games()
    xvfb = subprocess.Popen(["Xvfb", a.display, "-screen", "0", "1600x1200x24"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1.5)
    try:
        for i in range(a.n):
            g = rng.choice(games)
            moves = list(g.mainline_moves())
            stop = rng.randint(min(12, len(moves)), len(moves))
            cut = chess.pgn.Game()
            node = cut
            b = g.board()
            for m in moves[:stop]:
                node = node.add_variation(m)
                b.push(m)
            for k in ["Event", "White", "Black", "Date"]:
                cut.headers[k] = g.headers.get(k, "?")
            cut.headers["Result"] = "*"
            opts = ["-size", str(rng.choice(SIZES))]
            style = rng.random()
            if style < 0.5:
                light, dark = rng.choice(FLAT)
                opts += ["-useBoardTexture", "false", "-lightSquareColor", light,
                         "-darkSquareColor", dark]
            elif style < 0.85:
                opts += ["-useBoardTexture", "true", "-liteBackTextureFile", f"{TEXTURES}/wood_l.png",
                         "-darkBackTextureFile", f"{TEXTURES}/wood_d.png"]
            else:
                opts += ["-useBoardTexture", "true", "-liteBackTextureFile", f"{TEXTURES}/wood_l.png",
                         "-darkBackTextureFile", f"{TEXTURES}/hatch.png"]
            opts += ["-showCoords", "true" if rng.random() < 0.6 else "false"]
            opts += ["-flipView", "true" if rng.random() < 0.25 else "false"]
            opts += ["-highlightMoveWithArrow", "true" if rng.random() < 0.5 else "false",
                     "-highlightLastMove", "true"]
            name = f"mixed-xb-{i:03d}"
            with tempfile.NamedTemporaryFile("w", suffix=".pgn", delete=False) as fh:
                fh.write(str(cut) + "\n")
                pgn_path = fh.name
            crop_window = rng.random() < 0.6
            screen = (rng.randint(0, 400), rng.randint(0, 300))
            shoot(a.display, pgn_path, opts, out / f"{name}.png", screen, crop_window)
            os.unlink(pgn_path)
            (out / f"{name}.fen").write_text(b.board_fen() + "\n")
            print(name, " ".join(opts), "window" if crop_window else f"screen+{screen}")
    finally:
        xvfb.terminate()


if __name__ == "__main__":
    main()
