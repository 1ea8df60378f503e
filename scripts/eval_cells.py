#!/usr/bin/env python3
"""Cell recognizer accuracy (greedy CTC decoding) of an exported ONNX model on .npz cell sets.

    python3 scripts/eval_cells.py --onnx models/cells.onnx work-tmp/cells/test-tr.npz work-tmp/cells/dev-all.npz

Prints, per set: cells read exactly, character error rate, and a few misreadings.
"""
import argparse
import os

import numpy as np

from ctc_text import cer, onnx_read, onnx_session


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--onnx", required=True)
    ap.add_argument("--show", type=int, default=8)
    ap.add_argument("sets", nargs="+")
    a = ap.parse_args()
    sess = onnx_session(a.onnx)
    for path in a.sets:
        z = np.load(path, allow_pickle=True)
        ims, labs = z["images"], list(z["labels"])
        right, errs, chars, wrong = 0, 0, 0, []
        for img, lab in zip(ims, labs):
            p = onnx_read(sess, img)
            right += p == lab
            errs += cer(p, lab)
            chars += max(1, len(lab))
            if p != lab:
                wrong.append((lab, p))
        print(f"{os.path.basename(path)}: {right}/{len(labs)} cells exact = {100 * right / len(labs):.1f}%, "
              f"CER {100 * errs / chars:.1f}%   e.g. " + ", ".join(f"{t}→{p}" for t, p in wrong[: a.show]))


if __name__ == "__main__":
    main()
