#!/usr/bin/env python3
"""Checks `hamle batch` the way issue #5 asks, and prints the figures the README quotes.

    python3 scripts/batch_check.py folder [--count 200] [--kill-after 40]
    python3 scripts/batch_check.py pdf [--pages 500]

`folder`: builds a folder of COUNT files — COUNT-10 scoresheet scans (the real dev sheets of
../shared/data/sheets/dev, copied round-robin under new names) and 10 bad files (cut, empty,
not chess) — then runs `hamle batch` on it at --jobs 1 and --jobs 2 (wall time, pages/s, peak
memory), checks that every good file has its outputs and every bad one is listed once in
errors.jsonl, and kills a third run after KILL_AFTER seconds, resumes it, and checks that its
outputs equal the uninterrupted run's (the `seconds` fields aside). It also scores the games
against the sheets' labels.

`pdf`: writes a PAGES-page scanned-style PDF (each page one dev sheet as a JPEG) and runs
`hamle batch` on it at --jobs 2, reporting wall time and peak memory (the issue's bound:
1 GB).

Needs Pillow (for the JPEG pages and the bad images) and GNU time (/usr/bin/time). Work
files go to work-tmp/batch-check (ignored by git). Nothing here is used by the tests.
"""

import argparse
import io
import json
import random
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHEETS = ROOT.parent / "shared" / "data" / "sheets" / "dev"
HAMLE = ROOT / "target" / "release" / "hamle"
WORK = ROOT / "work-tmp" / "batch-check"


def bad_files(folder: Path, rng: random.Random, sheet: Path) -> dict:
    """Writes 10 bad files; returns name -> what it is."""
    from PIL import Image

    data = sheet.read_bytes()
    im = Image.open(sheet).convert("L")
    jpg = io.BytesIO()
    im.save(jpg, "JPEG", quality=85)
    jpg = jpg.getvalue()
    bad = {
        "scan-cut.png": (data[: len(data) // 2], "PNG cut in half"),
        "scan-cut.jpg": (jpg[: len(jpg) * 2 // 3], "JPEG cut short"),
        "empty.jpg": (b"", "empty file"),
        "zeros.png": (bytes(4096), "zero bytes"),
        "readme.txt": ("Round 3 scans. Board 7 missing; ask the arbiter.\n".encode(), "prose"),
        "photos.zip": (b"PK\x03\x04" + bytes(rng.randrange(256) for _ in range(500)), "archive"),
        "index.html": (b"<!doctype html><html><body>results</body></html>", "web page"),
        "damaged.pdf": (b"%PDF-1.5\n1 0 obj\n<< /Type /Catalog", "damaged PDF"),
    }
    noise = Image.frombytes("L", (1200, 1600), bytes(rng.randrange(256) for _ in range(1200 * 1600)))
    buf = io.BytesIO()
    noise.save(buf, "PNG")
    bad["noise.png"] = (buf.getvalue(), "noise image")
    grad = Image.new("RGB", (1600, 1200))
    grad.putdata([(x % 256, (x + y) % 256, 180) for y in range(1200) for x in range(1600)])
    buf = io.BytesIO()
    grad.save(buf, "JPEG", quality=80)
    bad["holiday.jpg"] = (buf.getvalue(), "photo of no chess")
    for name, (b, _) in bad.items():
        (folder / name).write_bytes(b)
    return {k: v[1] for k, v in bad.items()}


def timed(args, out_json=None):
    """Runs hamle under GNU time; returns (rc, wall s, peak RSS MiB, stdout)."""
    t = subprocess.run(
        ["/usr/bin/time", "-f", "TIME %e %M"] + [str(a) for a in args],
        capture_output=True,
        text=True,
    )
    m = re.search(r"TIME ([\d.]+) (\d+)", t.stderr)
    wall, rss = (float(m.group(1)), int(m.group(2)) / 1024) if m else (float("nan"), float("nan"))
    return t.returncode, wall, rss, t.stdout


def records(out: Path) -> dict:
    """Every output JSON file, the `seconds` fields dropped, by relative name."""
    res = {}
    for p in sorted(out.rglob("*.json")):
        rel = p.relative_to(out)
        if rel.parts[0] == ".hamle" or rel.name == "summary.json":
            continue
        lines = []
        for line in p.read_text().splitlines():
            v = json.loads(line)
            v.pop("seconds", None)
            lines.append(v)
        res[str(rel)] = lines
    return res


def label_sans(path: Path):
    words = path.read_text().split()
    return [w for w in words if not re.fullmatch(r"\d+\.(\.\.)?", w)]


def sheets_and_work(name):
    """The dev sheet scans (exits when they are missing), and WORK/NAME emptied and made anew."""
    if not SHEETS.is_dir():
        sys.exit(f"{SHEETS} is missing")
    sheets = sorted(SHEETS.glob("*.png"))
    work = WORK / name
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    return sheets, work


def folder(args):
    sheets, work = sheets_and_work("folder")
    src = work / "in"
    src.mkdir()
    rng = random.Random(5)
    truth = {}
    for i in range(args.count - 10):
        s = sheets[i % len(sheets)]
        name = f"table{i + 1:03d}"
        shutil.copyfile(s, src / f"{name}.png")
        truth[name] = label_sans(s.with_name(s.stem + ".moves.txt"))
    bad = bad_files(src, rng, sheets[0])
    print(f"folder: {len(truth)} sheet scans + {len(bad)} bad files in {src}")

    results = {}
    for jobs in (1, 2):
        out = work / f"out-j{jobs}"
        rc, wall, rss, stdout = timed([HAMLE, "batch", src, "-o", out, "--jobs", jobs])
        summary = json.loads((out / "summary.json").read_text())
        results[jobs] = (rc, wall, rss, summary)
        print(f"--jobs {jobs}: exit {rc}, {wall:.1f} s wall, {summary['pages_per_second']:.3f} pages/s, "
              f"peak RSS {rss:.0f} MiB")
        print("   ", stdout.strip().splitlines()[0])
    out = work / "out-j2"

    # Every good file has outputs; every bad one is listed once, with its reason.
    missing = [n for n in truth if not (out / f"{n}.pgn").is_file() or not (out / f"{n}.json").is_file()]
    errors = [json.loads(l) for l in (out / "errors.jsonl").read_text().splitlines()]
    listed = {}
    for e in errors:
        listed.setdefault(Path(e["file"]).name, []).append(e["reason"])
    print(f"good files without outputs: {len(missing)} {missing[:5]}")
    for name, what in bad.items():
        print(f"  {name:14} ({what}): {listed.get(name, 'NOT LISTED')}")
    extra = [n for n in listed if n not in bad]
    print(f"listed but not bad: {extra}")

    # Accuracy against the labels.
    right = total = exact = 0
    for name, sans in truth.items():
        recs = [json.loads(l) for l in (out / f"{name}.json").read_text().splitlines()]
        got = [m["san"] for m in recs[0]["moves"]] if recs else []
        r = sum(1 for a, b in zip(got, sans) if a == b)
        right += r
        total += len(sans)
        exact += int(got == sans)
    print(f"plies right: {right}/{total} = {100 * right / total:.2f} %; games exact {exact}/{len(truth)}")

    # Kill a run part-way, resume it, compare with the uninterrupted run.
    killed = work / "out-killed"
    p = subprocess.Popen([str(HAMLE), "batch", str(src), "-o", str(killed), "--jobs", "2"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(args.kill_after)
    p.send_signal(signal.SIGKILL)
    p.wait()
    done = len(list((killed / ".hamle" / "done").glob("*.json")))
    rc, wall, rss, stdout = timed([HAMLE, "batch", src, "-o", killed, "--jobs", "2", "--resume"])
    s = json.loads((killed / "summary.json").read_text())
    same = records(killed) == records(out)
    print(f"killed after {args.kill_after} s with {done} inputs finished; resume: exit {rc}, "
          f"{s['files_resumed']} finished earlier, {s['files_read']} read now, {wall:.1f} s; "
          f"outputs equal to the uninterrupted run: {same}")


def pdf(args):
    from PIL import Image

    sheets, work = sheets_and_work("pdf")
    jpegs = []
    for s in sheets:
        im = Image.open(s).convert("L")
        buf = io.BytesIO()
        im.save(buf, "JPEG", quality=80)
        jpegs.append((buf.getvalue(), im.size))
    path = work / f"scans-{args.pages}.pdf"
    write_pdf(path, [jpegs[i % len(jpegs)] for i in range(args.pages)])
    print(f"{path}: {args.pages} pages, {path.stat().st_size / 2**20:.1f} MiB")
    out = work / "out"
    rc, wall, rss, stdout = timed([HAMLE, "batch", path, "-o", out, "--jobs", str(args.jobs)])
    s = json.loads((out / "summary.json").read_text())
    print(f"--jobs {args.jobs}: exit {rc}, {wall:.1f} s, {s['pages_per_second']:.3f} pages/s, "
          f"games {s['games']}, peak RSS {rss:.0f} MiB")


def write_pdf(path: Path, pages):
    """A PDF with one grey JPEG per page, drawn over the page at 150 dpi (as scanners write)."""
    n = len(pages)
    with open(path, "wb") as f:
        offsets = []

        def obj(num, body: bytes):
            offsets.append((num, f.tell()))
            f.write(f"{num} 0 obj\n".encode() + body + b"\nendobj\n")

        f.write(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
        obj(1, b"<< /Type /Catalog /Pages 2 0 R >>")
        kids = " ".join(f"{3 + 3 * i} 0 R" for i in range(n))
        obj(2, f"<< /Type /Pages /Kids [{kids}] /Count {n} >>".encode())
        for i, (data, (w, h)) in enumerate(pages):
            pw, ph = w * 72 / 150, h * 72 / 150
            page, content, image = 3 + 3 * i, 4 + 3 * i, 5 + 3 * i
            obj(page, (f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {pw:.2f} {ph:.2f}] "
                       f"/Resources << /XObject << /Im0 {image} 0 R >> >> /Contents {content} 0 R >>").encode())
            draw = f"q {pw:.2f} 0 0 {ph:.2f} 0 0 cm /Im0 Do Q".encode()
            obj(content, f"<< /Length {len(draw)} >>\nstream\n".encode() + draw + b"\nendstream")
            obj(image, (f"<< /Type /XObject /Subtype /Image /Width {w} /Height {h} /ColorSpace /DeviceGray "
                        f"/BitsPerComponent 8 /Filter /DCTDecode /Length {len(data)} >>\nstream\n").encode()
                + data + b"\nendstream")
        xref = f.tell()
        total = 3 + 3 * n
        f.write(f"xref\n0 {total}\n0000000000 65535 f \n".encode())
        for _, off in sorted(offsets):
            f.write(f"{off:010d} 00000 n \n".encode())
        f.write(f"trailer\n<< /Size {total} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode())


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("folder")
    a.add_argument("--count", type=int, default=200)
    a.add_argument("--kill-after", type=float, default=40.0)
    b = sub.add_parser("pdf")
    b.add_argument("--pages", type=int, default=500)
    b.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    if not HAMLE.exists():
        sys.exit("build first: cargo build --release")
    {"folder": folder, "pdf": pdf}[args.cmd](args)


if __name__ == "__main__":
    main()
