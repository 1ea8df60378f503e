#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Contact sheet of what `hamle board --kind physical` makes of photos of sets: each photo with
the board outline found (a1 marked by a circle, the a1-h1 edge thicker) and the position read,
drawn as letters (upper case White), canonical (White at the bottom).

    python3 scripts/look_3d.py ../shared/data/boards/photos-3d-unlabelled --out work-tmp/look3d.png

Also prints one line per photo: name, FEN placement, orientation, confidence, error. Used to
describe what works and what fails on the real, unlabelled photos (README).
"""
import argparse
import glob
import json
import os
import subprocess

from PIL import Image, ImageDraw

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def diagram(placement, size):
    im = Image.new("RGB", (size, size), "white")
    d = ImageDraw.Draw(im)
    s = size / 8
    for r, row in enumerate(placement.split("/")):
        c = 0
        for ch in row:
            if ch.isdigit():
                for k in range(int(ch)):
                    if (r + c + k) % 2:
                        d.rectangle([(c + k) * s, r * s, (c + k + 1) * s, (r + 1) * s], fill=(200, 200, 200))
                c += int(ch)
            else:
                if (r + c) % 2:
                    d.rectangle([c * s, r * s, (c + 1) * s, (r + 1) * s], fill=(200, 200, 200))
                d.text((c * s + s * 0.3, r * s + s * 0.15), ch, fill=(0, 0, 0) if ch.isupper() else (180, 0, 0))
                c += 1
    return im


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--out", default="work-tmp/look3d.png")
    ap.add_argument("--hamle", default=os.path.join(ROOT, "target", "release", "hamle"))
    ap.add_argument("--cols", type=int, default=4)
    a = ap.parse_args()
    files = sorted(glob.glob(os.path.join(a.dir, "*.jpg")) + glob.glob(os.path.join(a.dir, "*.png")))
    tiles = []
    for f in files:
        p = subprocess.run([a.hamle, "board", "--kind", "physical", "--format", "json", f],
                           capture_output=True, text=True)
        im = Image.open(f).convert("RGB")
        scale = 360 / max(im.size)
        im = im.resize((max(1, int(im.width * scale)), max(1, int(im.height * scale))))
        d = ImageDraw.Draw(im)
        tile = Image.new("RGB", (560, 370), "white")
        name = os.path.basename(f)
        if p.stdout.strip():
            r = json.loads(p.stdout.splitlines()[0])
            c = [(x * scale, y * scale) for x, y in r["corners"]]   # TL, TR, BR, BL of the frame
            d.line(c + [c[0]], fill=(255, 0, 0), width=2)
            tile.paste(diagram(r["placement"], 190), (365, 10))
            info = f"{r['orientation']} conf {r['confidence']:.2f}"
            print(f"{name}\t{r['placement']}\t{r['orientation']}\t{r['confidence']:.3f}\t{r['seconds']:.3f}s")
        else:
            info = p.stderr.strip().splitlines()[-1][:60] if p.stderr.strip() else "no output"
            print(f"{name}\t-\t-\t-\t{info}")
        tile.paste(im, (0, 0))
        ImageDraw.Draw(tile).text((365, 210), name, fill=(0, 0, 0))
        ImageDraw.Draw(tile).text((365, 225), info[:30], fill=(0, 0, 0))
        ImageDraw.Draw(tile).text((365, 240), info[30:60], fill=(0, 0, 0))
        tiles.append(tile)
    rows = (len(tiles) + a.cols - 1) // a.cols
    sheet = Image.new("RGB", (a.cols * 560, rows * 370), "white")
    for k, t in enumerate(tiles):
        sheet.paste(t, ((k % a.cols) * 560, (k // a.cols) * 370))
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    sheet.save(a.out)
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
