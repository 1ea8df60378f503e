#!/usr/bin/env python3
"""Train the printed book word recognizer (CRNN + CTC) and export it to ONNX for tract.

    python3 scripts/train_words.py --data work-tmp/words/train1.npz work-tmp/words/train2.npz \
        --val work-tmp/words/val.npz --epochs 4 --ckpt work-tmp/words/ckpt.pt \
        --onnx work-tmp/words/words.onnx

The network is the cell model's (`train_cells.CRNN`), narrower: conv widths 24-32-48-48-64-64,
a 128-wide feature, a 2-layer BiLSTM of 96 per direction, and the word alphabet
(`words_synth.ALPHABET`, blank = class 0). Input: raw grey pixels (0..1, paper white) of shape
(1, 1, 32, 128) made by `words_synth.preprocess`; the network normalises each image itself.
Output: log-probabilities (T=32, 1, C). Seeded and resumable (checkpoint after every epoch,
`train_common.py`); rerunning the same command continues where it stopped. Exported at a fixed
batch of 1, opset 17, legacy exporter, with the reference pair NAME.check-in.txt /
NAME.check-out.txt next to the ONNX file (same text format as the cell model's).
"""
import os
import sys

import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from words_synth import ALPHABET, H, W  # noqa: E402
from train_cells import CRNN, export, load  # noqa: E402
import train_cells  # noqa: E402

# export() is the cell model's: it draws its reference input at the cell model's size.
assert (H, W) == (train_cells.H, train_cells.W), "the word and cell models share an input size"
from train_common import ctc_arg_parser, seed_all, train_ctc  # noqa: E402
from ctc_text import collapse  # noqa: E402

C = len(ALPHABET) + 1
CHANS = (24, 32, 48, 48, 64, 64, 128)
HIDDEN = 96


class WordCRNN(CRNN):
    """The cell model's network (`train_cells.CRNN`: same layers and forward, so the same ONNX
    graph shape) with other widths and this alphabet's number of classes."""

    def __init__(self, hidden=HIDDEN, n_classes=C, chans=CHANS):
        nn.Module.__init__(self)

        def block(cin, cout):
            return [nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True)]

        c1, c2, c3, c4, c5, c6, feat = chans
        self.conv = nn.Sequential(
            *block(1, c1), nn.MaxPool2d(2),            # 16 x 64
            *block(c1, c2), nn.MaxPool2d(2),           # 8 x 32
            *block(c2, c3), *block(c3, c4), nn.MaxPool2d((2, 1)),  # 4 x 32
            *block(c4, c5), *block(c5, c6), nn.MaxPool2d((2, 1)),  # 2 x 32
            nn.Conv2d(c6, feat, (2, 1), bias=False), nn.BatchNorm2d(feat), nn.ReLU(inplace=True),  # 1 x 32
        )
        self.rnn = nn.LSTM(feat, hidden, num_layers=2, bidirectional=True, dropout=0.1)
        self.fc = nn.Linear(2 * hidden, n_classes)


def make_model():
    return WordCRNN()


def encode(label):
    return [ALPHABET.index(c) + 1 for c in label]


def greedy(logp):
    """(T, B, C) → strings."""
    return [collapse(row, ALPHABET) for row in logp.argmax(2).transpose(0, 1).cpu().numpy()]


def evaluate(model, ims, labs, bs=256):
    """The cell model's evaluation (`train_cells.evaluate`) with the word alphabet, exact
    readings reported as `word_acc`."""
    return train_cells.evaluate(model, ims, labs, bs, decode=greedy, acc_key="word_acc")


def main():
    ap = ctc_arg_parser(epochs=4, ckpt="work-tmp/words/ckpt.pt", onnx="work-tmp/words/words.onnx")
    a = ap.parse_args()
    seed_all(a)

    ims, labs = load(a.data)
    vals = {os.path.basename(p): load([p]) for p in a.val}
    print(f"train {len(labs)} words; val {[(k, len(v[1])) for k, v in vals.items()]}", flush=True)
    model = make_model()
    print(f"parameters: {sum(p.numel() for p in model.parameters())}", flush=True)
    train_ctc(model, a, ims, labs, vals, encode, evaluate, export)


if __name__ == "__main__":
    main()
