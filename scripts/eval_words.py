#!/usr/bin/env python3
"""Book word recognizer accuracy (greedy CTC decoding) of an exported ONNX model on .npz word
sets made by words_synth.py.

    python3 scripts/eval_words.py --onnx models/words.onnx work-tmp/words/test-en.npz \
        work-tmp/words/test-tr.npz work-tmp/words/test-fig.npz

Prints, per set: words read exactly, character error rate, the same per kind of word (moves
`en`/`tr`/`fig`, bare move numbers `num`, `result`, `ann`) and per typeface, and a few
misreadings. With the model's reference pair (NAME.check-in.txt / NAME.check-out.txt next to
the ONNX file) it first prints onnxruntime's largest difference from PyTorch's output.
"""
import argparse
import os
import time
from collections import defaultdict

import numpy as np

from ctc_text import cer, onnx_read, onnx_session
from words_synth import ALPHABET


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--onnx", required=True)
    ap.add_argument("--show", type=int, default=10)
    ap.add_argument("sets", nargs="*")
    a = ap.parse_args()
    sess = onnx_session(a.onnx)
    for io_ in sess.get_inputs() + sess.get_outputs():
        print(f"{io_.name}: {io_.shape} {io_.type}")
    cin, cout = a.onnx.replace(".onnx", ".check-in.txt"), a.onnx.replace(".onnx", ".check-out.txt")
    if os.path.exists(cin) and os.path.exists(cout):
        x = np.loadtxt(cin, dtype=np.float32).reshape(1, 1, 32, 128)
        ref = np.loadtxt(cout, dtype=np.float32)
        out = sess.run(None, {"image": x})[0]
        print(f"reference pair: onnxruntime vs PyTorch max |diff| = {np.abs(out.ravel() - ref).max():.2e} "
              f"(output shape {out.shape})")
    for path in a.sets:
        z = np.load(path, allow_pickle=True)
        ims, labs = z["images"], list(z["labels"])
        kinds = list(z["kinds"]) if "kinds" in z else ["?"] * len(labs)
        faces = [f.split("/")[0] for f in z["fonts"]] if "fonts" in z else ["?"] * len(labs)
        stats = defaultdict(lambda: [0, 0, 0, 0])  # right, n, edits, chars
        wrong = []
        t0 = time.perf_counter()
        for img, lab, kind, face in zip(ims, labs, kinds, faces):
            p = onnx_read(sess, img, ALPHABET)
            for key in ("all", "kind " + kind, "typeface " + face):
                st = stats[key]
                st[0] += p == lab
                st[1] += 1
                st[2] += cer(p, lab)
                st[3] += max(1, len(lab))
            if p != lab:
                wrong.append((lab, p))
        ms = 1000 * (time.perf_counter() - t0) / max(1, len(labs))
        print(f"{os.path.basename(path)}: ({ms:.2f} ms per word, onnxruntime, 1 thread, with decoding)")
        for key in sorted(stats, key=lambda k: (k != "all", k)):
            r, n, e, c = stats[key]
            print(f"  {key:22s} {r:5d}/{n:<5d} exact = {100 * r / n:5.1f}%  CER {100 * e / c:4.1f}%")
        print("  e.g. " + ", ".join(f"{t}→{p}" for t, p in wrong[: a.show]))


if __name__ == "__main__":
    main()
