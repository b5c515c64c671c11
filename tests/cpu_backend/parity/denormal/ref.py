"""Reference for denormal.cu. Plain float32 arithmetic keeps denormals (numpy computes it in
float32 as the GPU does). Of the approximate intrinsics, as measured on an H200, __sinf flushes
a denormal argument to zero while __logf and __expf keep denormals; ops + 100 are references
that get this wrong."""

import numpy as np


def reference(op, x, y, n):
    """What the GPU computes for op."""
    tiny = x * np.float32(1e-39)  # float32 arithmetic, rounded as the kernel's
    table = {
        0: lambda: tiny * y, 1: lambda: tiny + y * np.float32(1e-40),
        2: lambda: np.log(tiny.astype(np.float64)),
        102: lambda: np.full(n, -np.inf, np.float32),
        # The argument is scaled to base 2 in float, as __expf does, then raised exactly.
        3: lambda: np.exp2(((np.float32(-87.5) - y * np.float32(10)) * np.float32(1.44269504))
                           .astype(np.float64)),
        103: lambda: np.exp(-87.5 - (y * np.float32(10)).astype(np.float64)),
        4: lambda: np.zeros(n, np.float32),
        104: lambda: tiny.astype(np.float64) * 1e30,
        5: lambda: np.sqrt(tiny.astype(np.float64)),
    }
    return {"out": np.asarray(table[op]()).astype(np.float32)}
