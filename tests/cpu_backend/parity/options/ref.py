"""Reference for options.cu: the exact result (what the default options give)."""

import numpy as np


def reference(op, x, y, n):
    """The exact value for op, rounded once to float32."""
    a = x.astype(np.float64)
    table = {0: lambda: a / (y * np.float32(1e30)).astype(np.float64),
             1: lambda: (x * np.float32(1e-39)) * y, 2: lambda: np.sqrt(a),
             3: lambda: np.exp(a)}
    return {"out": np.asarray(table[op % 100]()).astype(np.float32)}
