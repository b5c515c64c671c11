"""Reference for warp.cu: each warp of 32 lanes computed lane by lane."""

import numpy as np


def lanes(op, w):
    """The results of one warp whose lanes hold w (Python ints)."""
    n = 32
    if op == 0:
        return [w[5]] * n
    if op == 1:
        return [w[(lane & ~7) + 3] for lane in range(n)]
    if op == 2:
        return [w[lane - 3] if lane % 16 >= 3 else w[lane] for lane in range(n)]
    if op == 3:
        return [w[lane + 5] if lane + 5 < n else w[lane] for lane in range(n)]
    if op == 4:
        return [sum(w)] * n
    if op == 5:
        return [w[lane ^ 9] for lane in range(n)]
    if op == 6:
        mask = sum(1 << lane for lane in range(n) if w[lane] > 0)
        return [mask - (1 << 32) if mask >> 31 else mask] * n
    if op == 7:
        return [int(any(v > 990 for v in w)) * 2 + int(all(v > -1000 for v in w))] * n
    if op == 8:
        return [-1] * n
    if op == 9:
        total = sum(w) & 0xFFFFFFFF
        return [total - (1 << 32) if total >> 31 else total] * n
    if op == 10:
        return [min(w) + 3 * max(w)] * n
    if op == 11:
        out = []
        for lane in range(n):
            mask = sum(1 << k for k in range(n) if (w[k] & 3) == (w[lane] & 3))
            out.append(mask - (1 << 32) if mask >> 31 else mask)
        return out
    if op == 12:
        bits = 0
        for v in w:
            bits |= v & 0xFF0
        return [bits] * n
    raise ValueError(f"no reference for op {op}")


def reference(op, x, n):
    """What the GPU computes for op."""
    values = [int(v) for v in x]
    out = []
    for start in range(0, n, 32):
        out += lanes(op, values[start:start + 32])
    return {"out": np.array(out, np.int32)}
