"""Shared by the cell and word scripts: greedy CTC collapse and the edit distance for CER."""

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
