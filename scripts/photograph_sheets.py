#!/usr/bin/env python3
"""Turn labelled scans of scoresheets into phone photos of them: the page at a slant
(perspective) over a darker table, uneven light (a lamp to one side and a vignette), a
slight shadow band, blur, noise and JPEG. For measuring `hamle sheet` on real handwriting
photographed rather than scanned, where no real phone photos of labelled sheets exist.

    python3 scripts/photograph_sheets.py work-tmp/dev-even work-tmp/dev-even-photo --seed 1

Reads `NAME.png|jpg` + `NAME.moves.txt` from SRC (symlinks are followed) and writes
`NAME.jpg` + a copy of `NAME.moves.txt` to OUT. The page's transparency, if any, is laid
on white first. Deterministic for a seed. The outputs are derived from the inputs: keep
them out of the repository when the inputs may not be copied (`../shared/data`).
"""
import argparse
import io
import os
import random
import shutil

import numpy as np
from PIL import Image, ImageFilter

from render_sheets import perspective


def flatten(img):
    """Grey page, transparency laid on white."""
    if img.mode in ("RGBA", "LA") or "transparency" in img.info:
        img = img.convert("RGBA")
        white = Image.new("RGBA", img.size, (255, 255, 255, 255))
        img = Image.alpha_composite(white, img)
    return img.convert("L")


def light(img, rng):
    """Uneven light: a linear gradient towards a random side, a vignette, and sometimes the
    soft shadow band of a phone or a hand across the page."""
    arr = np.asarray(img, np.float32)
    h, w = arr.shape
    y, x = np.mgrid[0:h, 0:w].astype(np.float32)
    ang = rng.uniform(0, 2 * np.pi)
    g = (np.cos(ang) * (x / w - 0.5) + np.sin(ang) * (y / h - 0.5))
    gain = 1.0 - rng.uniform(0.1, 0.35) * (g + 0.5)
    r2 = ((x / w - 0.5) ** 2 + (y / h - 0.5) ** 2) / 0.5
    gain *= 1.0 - rng.uniform(0.05, 0.25) * r2
    if rng.random() < 0.5:
        # a band across the page, 5-15 % of its size, its edges soft
        a2 = rng.uniform(0, np.pi)
        d = np.cos(a2) * (x / w - 0.5) + np.sin(a2) * (y / h - 0.5) - rng.uniform(-0.4, 0.4)
        width = rng.uniform(0.05, 0.15)
        band = np.clip(1.0 - np.abs(d) / width, 0, 1)
        gain *= 1.0 - rng.uniform(0.15, 0.35) * band
    return Image.fromarray(np.clip(arr * gain, 0, 255).astype(np.uint8))


def lens(img, k):
    """Radial lens distortion: each point moved from the centre by a factor 1 + k r^2 (r the
    distance from the centre over the half-diagonal). k > 0 bows straight lines outwards
    (barrel: the edges of a wide phone lens), k < 0 inwards (pincushion)."""
    arr = np.asarray(img, np.float32)
    h, w = arr.shape
    cy, cx = (h - 1) / 2, (w - 1) / 2
    rad = np.hypot(cx, cy)
    y, x = np.mgrid[0:h, 0:w].astype(np.float32)
    u, v = (x - cx) / rad, (y - cy) / rad
    f = 1 + k * (u * u + v * v)
    from scipy.ndimage import map_coordinates
    out = map_coordinates(arr, [cy + v * f * rad, cx + u * f * rad], order=1, mode="nearest")
    return Image.fromarray(np.clip(out, 0, 255).astype(np.uint8))


def camera(img, rng):
    """Phone capture: the page smaller in the frame (downscaled by 0.6-0.9), slight blur,
    sensor noise, JPEG."""
    w, h = img.size
    s = rng.uniform(0.6, 0.9)
    img = img.resize((int(w * s), int(h * s)), Image.BILINEAR)
    img = img.filter(ImageFilter.GaussianBlur(rng.uniform(0.3, 1.0)))
    arr = np.asarray(img, np.float32)
    arr += np.random.default_rng(rng.randint(0, 2**31)).normal(0, rng.uniform(2, 6), arr.shape)
    img = Image.fromarray(np.clip(arr, 0, 255).astype(np.uint8))
    buf = io.BytesIO()
    img.save(buf, "JPEG", quality=rng.randint(70, 90))
    return buf.getvalue()


def labelled_images(src, suffix):
    """(stem, image path, label path) for every `NAME + suffix` label in `src` with an image
    `NAME.png|jpg|jpeg` beside it, in name order."""
    for lab in sorted(f for f in os.listdir(src) if f.endswith(suffix)):
        stem = lab[: -len(suffix)]
        img = next((os.path.join(src, stem + e) for e in (".png", ".jpg", ".jpeg")
                    if os.path.exists(os.path.join(src, stem + e))), None)
        if img is not None:
            yield stem, img, os.path.join(src, lab)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("src")
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--perspective", type=float, default=0.04,
                    help="corners moved by up to this share of the page's size")
    ap.add_argument("--lens", type=float, default=0.0,
                    help="radial lens distortion k (0: none; 0.02-0.05 barrel, < 0 pincushion)")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    os.makedirs(a.out, exist_ok=True)
    done = 0
    for stem, src, lab in labelled_images(a.src, ".moves.txt"):
        img = flatten(Image.open(src))
        img = light(img, rng)
        img = perspective(img, rng, a.perspective)
        if a.lens:
            img = lens(img, a.lens)
        with open(os.path.join(a.out, stem + ".jpg"), "wb") as fh:
            fh.write(camera(img, rng))
        shutil.copyfile(lab, os.path.join(a.out, os.path.basename(lab)))
        done += 1
    print(f"{done} sheets photographed into {a.out}")


if __name__ == "__main__":
    main()
