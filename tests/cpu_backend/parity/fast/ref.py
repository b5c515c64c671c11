"""Reference for fast.cu: the exact value (float64), or the GPU's documented result where the
intrinsic departs from it (__fdividef is 0 for divisors above 2^126). Directed roundings are
applied to exact float64 values (the operands are chosen so the float64 result is exact)."""

import numpy as np


def rounded(exact, mode):
    """float32 of a float64 value that is exact, rounded toward zero, up or down."""
    near = exact.astype(np.float32)
    wide = near.astype(np.float64)
    if mode == "up":
        return np.where(wide < exact, np.nextafter(near, np.float32(np.inf)), near)
    if mode == "down":
        return np.where(wide > exact, np.nextafter(near, np.float32(-np.inf)), near)
    away = np.abs(wide) > np.abs(exact)
    return np.where(away, np.nextafter(near, np.float32(0)), near)


def reference(op, x, y, n):
    """What the GPU computes for op."""
    a, b = x.astype(np.float64), y.astype(np.float64)
    big = (y * np.float32(1e30)).astype(np.float64)
    exact = {
        0: lambda: a / b, 1: lambda: np.zeros_like(a), 101: lambda: a / big,
        2: lambda: a / big, 3: lambda: np.exp(a), 103: lambda: np.exp(a),
        4: lambda: 10.0 ** a, 5: lambda: np.log(a), 6: lambda: np.log2(a),
        7: lambda: np.log10(a), 8: lambda: np.sin(a), 9: lambda: np.cos(a),
        10: lambda: np.tan(a), 11: lambda: np.sin(a) + 2 * np.cos(a),
        12: lambda: a ** b, 13: lambda: 1 / a, 14: lambda: np.sqrt(a),
        15: lambda: 1 / np.sqrt(a), 16: lambda: np.clip(a, 0, 1),
        17: lambda: a * b + a, 21: lambda: a / b,
    }
    if op in exact:
        return {"out": exact[op]().astype(np.float32)}
    small = (y * np.float32(1e-3)).astype(np.float64)
    directed = {
        18: lambda: rounded(a * b - a, "zero"), 19: lambda: rounded(a + small, "up"),
        20: lambda: rounded(a * b, "down"), 22: lambda: rounded(a - small, "zero"),
    }
    if op in directed:
        return {"out": directed[op]()}
    if op == 23:  # a / b is not exact in float64: step from the nearest float32
        near = (a / b).astype(np.float32)
        wide = near.astype(np.float64)
        below = wide * b < a  # exact: a float32 times a float32 fits in float64
        return {"out": np.where(below, np.nextafter(near, np.float32(np.inf)), near)}
    raise ValueError(f"no reference for op {op}")
