#!/usr/bin/env python3
"""Print-and-scan or photograph labelled board images: for measuring `hamle board` on
book diagrams as they come off a scanner or a phone, where no real scanned pages with
labels are at hand (the typeset diagrams of `scripts/book_pdfs.py` are clean vectors).

    python3 scripts/degrade_boards.py work-tmp/texbooks work-tmp/texbooks-scan --mode scan --seed 1
    python3 scripts/degrade_boards.py work-tmp/texbooks work-tmp/texbooks-photo --mode photo --seed 1

Reads `NAME.png|jpg` + `NAME.fen` from SRC and writes the degraded image and a copy of the
`.fen` to OUT (the layout `hamle eval boards` reads). Deterministic for a seed.

- `scan`: the page printed and scanned in grey: the diagram 300-700 pixels on its longer
  side, ink spread (blur, darker or lighter strokes), paper tone with a blotchy texture,
  the page a little askew (up to 2 degrees), sensor noise, JPEG (quality 50-90).
  Black-and-white scans are not made: the sources' hatching is drawn at 80-200 dpi,
  where its lines are grey, and a threshold wipes it out, which a real 300 dpi scan of
  printed lines does not.
- `photo`: the diagram on its page photographed with a phone: the diagram 350-800 pixels
  on its longer side, a paper margin of 15-40 % of its side around it, uneven light (a gradient, a vignette, sometimes a shadow band),
  a slant (corners moved by up to 7 %) over a darker table, then the phone's downscale,
  blur, noise and JPEG (`photograph_sheets.py`).

`--native` keeps the sources' own size (the photos' boards then span about 90 pixels).

The outputs are derived from the inputs: keep them out of the repository when the
inputs may not be copied.
"""
import argparse
import io
import os
import random
import shutil

import numpy as np
from PIL import Image, ImageFilter

from photograph_sheets import camera, flatten, labelled_images, light
from render_sheets import perspective


def paper_texture(h, w, rng, sigma):
    """Low-frequency blotches: noise on a grid 1/24 of the size, smoothly enlarged."""
    gh, gw = max(2, h // 24), max(2, w // 24)
    g = np.random.default_rng(rng.randint(0, 2**31)).normal(0, sigma, (gh, gw)).astype(np.float32)
    im = Image.fromarray(g, mode="F").resize((w, h), Image.BICUBIC)
    return np.asarray(im, np.float32)


def resized(img, rng, lo, hi):
    """The image scaled so that its longer side is between `lo` and `hi` pixels."""
    side = rng.uniform(lo, hi)
    s = side / max(img.size)
    return img.resize((max(8, round(img.width * s)), max(8, round(img.height * s))), Image.BICUBIC)


def scan(img, rng, native=False):
    """Printed, then scanned: returns (bytes, extension)."""
    if not native:
        img = resized(img, rng, 300, 700)
    img = img.filter(ImageFilter.GaussianBlur(rng.uniform(0.3, 1.0)))
    arr = np.asarray(img, np.float32) / 255.0
    # Ink heavier or lighter than the typesetter's.
    arr = arr ** rng.uniform(0.75, 1.35)
    paper = rng.uniform(215, 245)
    ink = rng.uniform(15, 60)
    arr = ink + (paper - ink) * arr
    arr += paper_texture(arr.shape[0], arr.shape[1], rng, rng.uniform(2, 7))
    img = Image.fromarray(np.clip(arr, 0, 255).astype(np.uint8))
    # The page askew on the glass; what the rotation uncovers is paper.
    pad = int(0.06 * max(img.size))
    framed = Image.new("L", (img.width + 2 * pad, img.height + 2 * pad), int(paper))
    framed.paste(img, (pad, pad))
    img = framed.rotate(rng.uniform(-2.0, 2.0), Image.BICUBIC, fillcolor=int(paper))
    arr = np.asarray(img, np.float32)
    arr += np.random.default_rng(rng.randint(0, 2**31)).normal(0, rng.uniform(2, 6), arr.shape)
    img = Image.fromarray(np.clip(arr, 0, 255).astype(np.uint8))
    buf = io.BytesIO()
    img.save(buf, "JPEG", quality=rng.randint(50, 90))
    return buf.getvalue(), ".jpg"


def photo(img, rng, native=False, slant=0.07):
    """The diagram on its page, photographed: returns (bytes, extension)."""
    if not native:
        img = resized(img, rng, 350, 800)
    side = max(img.size)
    pad = int(side * rng.uniform(0.15, 0.4))
    page = Image.new("L", (img.width + 2 * pad, img.height + 2 * pad), 255)
    page.paste(img, (pad, pad))
    page = light(page, rng)
    page = perspective(page, rng, rng.uniform(0.02, slant))
    return camera(page, rng), ".jpg"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("src")
    ap.add_argument("out")
    ap.add_argument("--mode", choices=["scan", "photo"], required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--native", action="store_true",
                    help="keep the sources' own size (130-450 pixels) instead of the sizes above")
    ap.add_argument("--slant", type=float, default=0.07,
                    help="photos: the page's corners moved by up to this share of its size")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    os.makedirs(a.out, exist_ok=True)
    done = 0
    for stem, src, lab in labelled_images(a.src, ".fen"):
        img = flatten(Image.open(src))
        if a.mode == "scan":
            data, ext = scan(img, rng, a.native)
        else:
            data, ext = photo(img, rng, a.native, a.slant)
        with open(os.path.join(a.out, stem + ext), "wb") as fh:
            fh.write(data)
        shutil.copyfile(lab, os.path.join(a.out, os.path.basename(lab)))
        done += 1
    print(f"{done} boards ({a.mode}) written to {a.out}")


if __name__ == "__main__":
    main()
