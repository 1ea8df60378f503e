"""Shared by the cell and word scripts: greedy CTC collapse, the edit distance for CER, and
greedy reading with an exported ONNX model (eval_cells.py, eval_words.py)."""

import numpy as np

from cells_synth import ALPHABET


def collapse(best, alphabet=ALPHABET):
    """Class indices of a best path (0 = blank) → text in `alphabet` (the cell model's by
    default): repeats merged, blanks dropped."""
    s, prev = [], 0
    for k in best:
        if k != prev and k != 0:
            s.append(alphabet[k - 1])
        prev = k
    return "".join(s)


def cer(a, b):
    """Edit distance between two strings."""
    d = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        prev, d[0] = d[0], i
        for j, cb in enumerate(b, 1):
            cur = min(d[j] + 1, d[j - 1] + 1, prev + (ca != cb))
            prev, d[j] = d[j], cur
    return d[len(b)]


def onnx_session(path):
    """An onnxruntime session of the ONNX model at `path`, on one thread."""
    import onnxruntime as ort  # here: the training scripts import this module without it

    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    return ort.InferenceSession(path, so)


def onnx_read(sess, img, alphabet=ALPHABET):
    """Greedy reading of one (32, 128) uint8 image by the CTC model of `sess` (input `image`
    (1, 1, 32, 128) in 0..1, output (T, 1, C)) as text in `alphabet`."""
    x = (img.astype(np.float32) / 255.0)[None, None]
    out = sess.run(None, {"image": x})[0][:, 0, :]
    return collapse(out.argmax(-1), alphabet)
