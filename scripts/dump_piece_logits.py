#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""The piece model's logits for mosaics of `hamle eval dump-pieces` (8 x 8 crops of 32 x 64,
rank 8 at the top), each crop read as it is and mirrored and the two averaged, as
`hamle board --kind physical` reads them: an npz with L [boards, 64, 13] (raw logits,
canonical order, a8 first) and Y [boards, 64] (true classes, from NAME.fen).

    python3 scripts/dump_piece_logits.py MOSAIC_DIR OUT.npz [--model models/pieces3d.onnx] [--features]

With `--features` the npz also holds F [boards, 64, 128]: the model's penultimate layer (after
its ReLU), mirror-averaged the same way (scripts/probe_board_features.py).
"""
import argparse
import glob

import numpy as np
import onnxruntime as ort
from PIL import Image

CLASSES = ".PNBRQKpnbrqk"
# the penultimate layer of models/pieces3d.onnx: the ReLU after its first linear layer
FEATURES = "/head/head.3/Relu_output_0"


def labels(fen: str) -> list[int]:
    out = []
    for row in fen.split()[0].split("/"):
        for ch in row:
            out += [0] * int(ch) if ch.isdigit() else [CLASSES.index(ch)]
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("out")
    ap.add_argument("--model", default="models/pieces3d.onnx")
    ap.add_argument("--features", action="store_true")
    args = ap.parse_args()
    model = args.model
    if args.features:
        import onnx
        m = onnx.load(args.model)
        m.graph.output.append(onnx.helper.make_tensor_value_info(FEATURES, onnx.TensorProto.FLOAT, [64, 128]))
        model = m.SerializeToString()
    s = ort.InferenceSession(model)
    L, F, Y = [], [], []
    for p in sorted(glob.glob(args.dir + "/*.png")):
        a = np.asarray(Image.open(p).convert("RGB"), dtype=np.float32) / 255
        crops = np.stack([a[r * 64:(r + 1) * 64, c * 32:(c + 1) * 32].transpose(2, 0, 1)
                          for r in range(8) for c in range(8)])
        o1 = s.run(None, {"pieces": crops})
        o2 = s.run(None, {"pieces": crops[:, :, :, ::-1].copy()})
        L.append((o1[0] + o2[0]) / 2)
        if args.features:
            F.append((o1[1] + o2[1]) / 2)
        Y.append(labels(open(p[:-4] + ".fen").read()))
    extra = {"F": np.array(F, dtype=np.float32)} if args.features else {}
    np.savez(args.out, L=np.array(L, dtype=np.float32), Y=np.array(Y), **extra)
    print(args.out, len(L), "boards")


if __name__ == "__main__":
    main()
