"""Reference for align.cu, for the aligned offsets (a misaligned one has no right answer: the
GPU faults)."""

import numpy as np


def reference(op, x, shift, n):
    """What an aligned load gives."""
    base = x[shift:]
    if op == 0:
        pairs = base[:2 * n].reshape(n, 2).astype(np.float64)
        return {"out": pairs.sum(axis=1).astype(np.float32)}
    if op == 1:
        quads = base[:4 * n].reshape(n, 4)
        out = ((quads[:, 0] + quads[:, 1]) + quads[:, 2]) + quads[:, 3]
        return {"out": out.astype(np.float32)}
    if op == 2:
        return {"out": base[:2 * n].view(np.float64).astype(np.float32)}
    return {"out": np.zeros(n, np.float32)}
