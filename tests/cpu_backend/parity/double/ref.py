"""Reference for double.cu: IEEE double results, directed roundings from exact rationals."""

import math
from fractions import Fraction

import numpy as np


def directed(value, mode):
    """The double nearest `value` (a Fraction) in the direction `mode`."""
    near = float(value)  # Fraction -> float rounds to nearest
    if mode == "zero" and abs(Fraction(near)) > abs(value):
        return math.nextafter(near, 0.0)
    if mode == "up" and Fraction(near) < value:
        return math.nextafter(near, math.inf)
    if mode == "down" and Fraction(near) > value:
        return math.nextafter(near, -math.inf)
    return near


def reference(op, x, y, n):
    """What the GPU computes for op."""
    if op == 0:
        return {"out": x / y}  # numpy's division is IEEE round to nearest
    if op == 1:
        return {"out": np.sqrt(x)}
    pairs = [(Fraction(float(a)), Fraction(float(b))) for a, b in zip(x, y, strict=True)]
    if op == 2:
        small = [Fraction(float(b) * 1e-9) for b in y]
        out = [directed(a + s, "zero") for (a, _), s in zip(pairs, small, strict=True)]
    elif op == 3:
        out = [directed(a * b, "up") for a, b in pairs]
    else:
        out = [directed(a * b - a, "down") for a, b in pairs]
    return {"out": np.array(out, np.float64)}
