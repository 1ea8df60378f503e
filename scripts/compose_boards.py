#!/usr/bin/env python3
"""Two diagrams on one page, or a diagram cut by the image's edge, made from labelled
board images: for checking what `hamle board` answers for them (the board issue asks for
the largest of two boards, and a flag for a half-visible one).

    python3 scripts/compose_boards.py work-tmp/texbooks work-tmp/two --mode two --seed 1
    hamle eval boards work-tmp/two
    python3 scripts/compose_boards.py work-tmp/texbooks work-tmp/half --mode half --seed 1 \\
        --hamle target/release/hamle

- `two`: each diagram beside (or above) another one of the folder, scaled to 0.55-0.8 of
  its size, on a white page with a margin; the label is the larger board's
  (`NAME.fen`), the smaller one's is `NAME.small.fen`. With `--hamle`, `hamle read`
  reads each page and the boards it finds are matched against both.
- `half`: each diagram with 25-45 % of it cut off on one side (the image's edge cuts the
  board; the printed coordinates on that side go too). With `--hamle`, each is read and
  sorted: no board found, a reading with flags or unsure squares, or a reading that
  looks sure (no flag, no square under 0.5); the last is what should not happen. The
  label written beside each is the whole board's, which no reading can match.

Deterministic for a seed. The outputs are derived from the inputs: keep them out of the
repository when the inputs may not be copied.
"""
import argparse
import collections
import json
import os
import random
import shutil
import subprocess

from PIL import Image

from photograph_sheets import flatten, labelled_images


def two(img, other, rng):
    """`img` beside or above `other` scaled down, on a white page."""
    s = rng.uniform(0.55, 0.8) * max(img.size) / max(other.size)
    small = other.resize((max(8, round(other.width * s)), max(8, round(other.height * s))),
                         Image.BICUBIC)
    gap = int(0.1 * max(img.size))
    side = rng.random() < 0.5
    if side:
        w, h = img.width + gap + small.width, max(img.height, small.height)
    else:
        w, h = max(img.width, small.width), img.height + gap + small.height
    m = int(0.08 * max(w, h))
    page = Image.new("L", (w + 2 * m, h + 2 * m), 255)
    first = rng.random() < 0.5
    a, b = (img, small) if first else (small, img)
    page.paste(a, (m, m))
    page.paste(b, (m + a.width + gap, m) if side else (m, m + a.height + gap))
    return page


def half(img, rng):
    """`img` with 25-45 % cut off one side."""
    k = rng.uniform(0.25, 0.45)
    w, h = img.size
    box = [(int(w * k), 0, w, h), (0, 0, int(w * (1 - k)), h),
           (0, int(h * k), w, h), (0, 0, w, int(h * (1 - k)))][rng.randrange(4)]
    return img.crop(box)


def report(hamle, out):
    files = sorted(os.path.join(out, f) for f in os.listdir(out) if f.endswith(".png"))
    kinds = collections.Counter()
    sure = []
    for f in files:
        p = subprocess.run([hamle, "board", f, "--format", "json"], capture_output=True, text=True)
        line = p.stdout.strip().splitlines()
        if not line:
            kinds["no board found"] += 1
            continue
        d = json.loads(line[0])
        if d.get("flags") or d.get("low_confidence"):
            kinds["read, with flags or unsure squares"] += 1
        else:
            kinds["read, looking sure"] += 1
            sure.append(f"{os.path.basename(f)} {d['fen']} {d['confidence']}")
    for k, v in kinds.most_common():
        print(f"{v:4d}  {k}")
    for s in sure:
        print("   sure:", s)


def report_two(hamle, out):
    """`hamle read` on each two-board page: how many boards it gives, and whether they are
    the two boards (placements compared)."""
    counts = collections.Counter()
    both = 0
    pages = sorted(f for f in os.listdir(out) if f.endswith(".png"))
    for f in pages:
        stem = f[: -len(".png")]
        want = {open(os.path.join(out, stem + e)).read().split()[0] for e in (".fen", ".small.fen")}
        p = subprocess.run([hamle, "read", os.path.join(out, f), "--format", "json"],
                           capture_output=True, text=True)
        got = [json.loads(x) for x in p.stdout.splitlines() if x.strip()]
        got = [g["fen"].split()[0] for g in got if g.get("kind") == "board"]
        counts[len(got)] += 1
        both += set(got) == want
    print(f"{len(pages)} pages; boards found per page: {dict(sorted(counts.items()))}; "
          f"both boards right: {both}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("src")
    ap.add_argument("out")
    ap.add_argument("--mode", choices=["two", "half"], required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--hamle", help="read what was made with this hamle: `half` sorts the "
                    "answers, `two` matches the boards `hamle read` finds against both labels")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    os.makedirs(a.out, exist_ok=True)
    items = [(stem, flatten(Image.open(src)), lab) for stem, src, lab in labelled_images(a.src, ".fen")]
    if a.mode == "two" and len(items) < 2:
        ap.error(f"--mode two needs at least two labelled images in {a.src}")
    for i, (stem, img, lab) in enumerate(items):
        if a.mode == "two":
            j = rng.randrange(len(items) - 1)
            j += j >= i
            page = two(img, items[j][1], rng)
            shutil.copyfile(items[j][2], os.path.join(a.out, stem + ".small.fen"))
        else:
            page = half(img, rng)
        page.save(os.path.join(a.out, stem + ".png"))
        shutil.copyfile(lab, os.path.join(a.out, stem + ".fen"))
    print(f"{len(items)} images ({a.mode}) written to {a.out}")
    if a.hamle:
        (report if a.mode == "half" else report_two)(a.hamle, a.out)


if __name__ == "__main__":
    main()
