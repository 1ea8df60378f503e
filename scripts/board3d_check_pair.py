#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""The check pair of `models/board3d.onnx` for `model::tests::board_model_matches_pytorch`:
the first board of an npz of `dump_piece_logits.py` (tempered logits, ÷ 1.4) in, and
onnxruntime's output of the model out, one value per line, class-major ([13, 8, 8]).

    python3 scripts/board3d_check_pair.py models/board3d.onnx work-tmp/r3d/pieces-val2/logits.npz
"""
import argparse

import numpy as np
import onnxruntime as ort

TEMPERATURE = 1.4


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("onnx")
    ap.add_argument("npz")
    ap.add_argument("--out", default="models/board3d")
    args = ap.parse_args()
    x = (np.load(args.npz)["L"][0] / TEMPERATURE).astype(np.float32).T.reshape(1, 13, 8, 8)
    y = ort.InferenceSession(args.onnx).run(None, {"logits": x})[0]
    for name, v in [("check-in", x), ("check-out", y)]:
        with open(f"{args.out}.{name}.txt", "w") as f:
            f.writelines(f"{float(a):.6f}\n" for a in v.ravel())
    print("wrote", f"{args.out}.check-in.txt", f"{args.out}.check-out.txt")


if __name__ == "__main__":
    main()
