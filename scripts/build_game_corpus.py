#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Rebuild datasets/games/*.pgn from PGN files shipped inside installed packages.

Sources (see datasets/games/SOURCE.md for licences and provenance):

  malakhov_master.pgn   <- PyPI  PySimpleGUI-chess 0.0.3, PySimpleGUI-chess/Malakhov.pgn
                           (over-the-board games of GM Vladimir Malakhov, 1992-2018)
  lichess_classical.pgn <- npm   chess.js 1.4.0, benchmarks/benchmark.pgn
                           (100 rated classical lichess.org games, Dec 2012)

Install the sources first (or pass --install to have this script do it):

  pip install chess==1.11.2
  pip install --no-deps PySimpleGUI-chess==0.0.3
  npm install -g chess.js@1.4.0

Cleaning, per game:
  * parsed with python-chess; games with parse errors, a FEN/SetUp tag (non-standard
    start), fewer than --min-plies plies, or a Result other than 1-0 / 0-1 / 1/2-1/2 are
    dropped;
  * only the mainline is kept: comments, variations and NAGs are stripped;
  * a tag line with stray characters after its closing bracket is repaired (the junk is cut);
  * tags with an empty value are dropped, except the Seven Tag Roster (python-chess always
    writes those);
  * exact duplicates (same players and same moves) are dropped, first one kept;
  * the written file is read back and every game replayed from the standard start position.

The output is a pure function of the input files (source order is kept). With --max-games N a
source is sub-sampled to N games with random.Random(--seed), keeping the original order.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.metadata
import io
import json
import random
import re
import subprocess
import sys
from pathlib import Path

try:
    import chess
    import chess.pgn
except ImportError:  # pragma: no cover
    sys.exit("python-chess is required: pip install chess")

RESULTS = {"1-0", "0-1", "1/2-1/2"}
# A tag line with stray text after its closing bracket (Malakhov.pgn has one: `[Round "2"]f`);
# python-chess would drop the whole tag, so the junk is cut off before parsing.
TAG_TRAILING_JUNK = re.compile(r'^(\[[A-Za-z0-9_]+ +"(?:[^"\\]|\\.)*"\])[ \t]*[^\s].*$', re.M)
STR_TAGS = ["Event", "Site", "Date", "Round", "White", "Black", "Result"]

INSTALL_COMMANDS = [
    [sys.executable, "-m", "pip", "install", "--no-deps", "PySimpleGUI-chess==0.0.3"],
    ["npm", "install", "-g", "chess.js@1.4.0"],
]


def find_pysimplegui_chess() -> tuple[Path, str]:
    dist = importlib.metadata.distribution("PySimpleGUI-chess")
    for f in dist.files or []:
        if str(f).replace("\\", "/") == "PySimpleGUI-chess/Malakhov.pgn":
            return Path(dist.locate_file(f)), f"PySimpleGUI-chess {dist.version} (PyPI)"
    raise FileNotFoundError("PySimpleGUI-chess is installed but Malakhov.pgn is missing")


def find_chessjs() -> tuple[Path, str]:
    roots = []
    try:
        out = subprocess.run(["npm", "root", "-g"], capture_output=True, text=True, check=True)
        roots.append(Path(out.stdout.strip()))
    except (OSError, subprocess.CalledProcessError):
        pass
    roots += [Path("/usr/lib/node_modules"), Path("/usr/local/lib/node_modules"), Path("node_modules")]
    for root in roots:
        pkg = root / "chess.js"
        pgn = pkg / "benchmarks" / "benchmark.pgn"
        if pgn.is_file():
            version = json.loads((pkg / "package.json").read_text())["version"]
            return pgn, f"chess.js {version} (npm)"
    raise FileNotFoundError("chess.js (npm) not found; run: npm install -g chess.js@1.4.0")


SOURCES = [
    ("malakhov_master.pgn", find_pysimplegui_chess),
    ("lichess_classical.pgn", find_chessjs),
]


def clean_game(game: chess.pgn.Game) -> chess.pgn.Game:
    out = chess.pgn.Game()
    out.headers.clear()
    for tag in STR_TAGS:
        out.headers[tag] = game.headers.get(tag, "?")
    for tag, value in game.headers.items():
        if tag in STR_TAGS or not value.strip():
            continue
        out.headers[tag] = value
    node = out
    for move in game.mainline_moves():
        node = node.add_main_variation(move)
    return out


def process(path: Path, min_plies: int, stats: dict) -> list[chess.pgn.Game]:
    text = path.read_bytes().decode("utf-8", errors="replace").replace("\r\n", "\n")
    text, fixed = TAG_TRAILING_JUNK.subn(r"\1", text)
    stats["tag_lines_repaired"] = fixed
    handle = io.StringIO(text)
    games = []
    seen = set()
    while True:
        game = chess.pgn.read_game(handle)
        if game is None:
            break
        stats["read"] += 1
        if game.errors:
            stats["parse_error"] += 1
            continue
        if "FEN" in game.headers or "SetUp" in game.headers or game.board() != chess.Board():
            stats["nonstandard_start"] += 1
            continue
        moves = list(game.mainline_moves())
        if len(moves) < min_plies:
            stats["too_short"] += 1
            continue
        if game.headers.get("Result") not in RESULTS:
            stats["no_result"] += 1
            continue
        key = (game.headers.get("White"), game.headers.get("Black"), tuple(m.uci() for m in moves))
        if key in seen:
            stats["duplicate"] += 1
            continue
        seen.add(key)
        games.append(clean_game(game))
    return games


def render(games: list[chess.pgn.Game]) -> str:
    exporter_args = dict(headers=True, variations=False, comments=False)
    parts = []
    for g in games:
        parts.append(g.accept(chess.pgn.StringExporter(**exporter_args)))
    return "\n\n".join(parts) + "\n"


def verify(path: Path) -> tuple[int, int]:
    n = plies = 0
    with path.open(encoding="utf-8") as fh:
        while True:
            game = chess.pgn.read_game(fh)
            if game is None:
                break
            assert not game.errors, (path, n, game.errors)
            assert "FEN" not in game.headers
            board = chess.Board()
            count = 0
            for node in game.mainline():
                assert not node.comment and not node.nags, (path, n)
                assert len(node.parent.variations) == 1, (path, n)
                assert board.is_legal(node.move), (path, n, node.move)
                board.push(node.move)
                count += 1
            assert count >= 20 and game.headers["Result"] in RESULTS
            n += 1
            plies += count
    return n, plies


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="datasets/games", help="output folder (default: datasets/games)")
    ap.add_argument("--min-plies", type=int, default=20)
    ap.add_argument("--max-games", type=int, default=0, help="cap per source (0 = keep all)")
    ap.add_argument("--seed", type=int, default=1, help="seed for --max-games sampling")
    ap.add_argument("--install", action="store_true", help="pip/npm install the source packages first")
    args = ap.parse_args()

    if args.install:
        for cmd in INSTALL_COMMANDS:
            print("+", " ".join(cmd), file=sys.stderr)
            subprocess.run(cmd, check=True)

    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    total = 0
    for name, finder in SOURCES:
        src, pkg = finder()
        stats = dict(tag_lines_repaired=0, read=0, parse_error=0, nonstandard_start=0, too_short=0, no_result=0, duplicate=0)
        games = process(src, args.min_plies, stats)
        if args.max_games and len(games) > args.max_games:
            rng = random.Random(args.seed)
            keep = sorted(rng.sample(range(len(games)), args.max_games))
            games = [games[i] for i in keep]
        dest = out_dir / name
        dest.write_text(render(games), encoding="utf-8")
        n, plies = verify(dest)
        total += n
        sha_src = hashlib.sha256(src.read_bytes()).hexdigest()
        sha_out = hashlib.sha256(dest.read_bytes()).hexdigest()
        print(f"{dest}: {n} games, {plies} plies, {dest.stat().st_size} bytes, sha256 {sha_out[:16]}")
        print(f"  from {pkg}: {src} (sha256 {sha_src[:16]})")
        print("  " + ", ".join(f"{k}={v}" for k, v in stats.items()))
    print(f"total: {total} games")
    return 0


if __name__ == "__main__":
    sys.exit(main())
