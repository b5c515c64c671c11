"""Reference for half.cu: the exact result in float64, rounded once to the output type (the
GPU's half and bfloat16 instructions round once)."""

import ml_dtypes
import numpy as np


def reference(op, x, y, n):
    """What the GPU computes for op (the dtype of x says half or bfloat16)."""
    if x.dtype.kind == "V":  # bfloat16 as raw 16-bit words
        x, y = (v.view(np.uint16).view(ml_dtypes.bfloat16) for v in (x, y))
    a, b = x.astype(np.float64), y.astype(np.float64)
    kind = x.dtype
    if kind == np.float16:
        table = {0: lambda: a + b, 1: lambda: a * b, 2: lambda: a * b + a, 3: lambda: a / b,
                 4: lambda: np.sqrt(np.abs(a)), 5: lambda: np.abs(a - b),
                 6: lambda: a * b + a}
    else:
        table = {0: lambda: a + b, 1: lambda: a * b, 2: lambda: a * b + a, 3: lambda: a * b}
    if kind == ml_dtypes.bfloat16:
        # float64 -> bfloat16 through float32 would round twice; these are exact in float32
        return {"out": table[op]().astype(np.float32).astype(kind).astype(np.float32)}
    return {"out": table[op]().astype(kind)}
