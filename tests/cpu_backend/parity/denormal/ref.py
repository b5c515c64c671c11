"""Reference for denormal.cu. Plain float32 arithmetic keeps denormals (numpy computes it in
float32 as the GPU does); the approximate intrinsics flush denormal inputs and results to
zero (libdevice's __nv_fast_expf/logf/sinf notes), and ops + 100 are references that forget it."""

import numpy as np


def reference(op, x, y, n):
    """What the GPU computes for op."""
    tiny = x * np.float32(1e-39)  # float32 arithmetic, rounded as the kernel's
    table = {
        0: lambda: tiny * y, 1: lambda: tiny + y * np.float32(1e-40),
        2: lambda: np.full(n, -np.inf, np.float32),
        102: lambda: np.log(tiny.astype(np.float64)),
        3: lambda: np.zeros(n, np.float32),
        103: lambda: np.exp(-87.5 - (y * np.float32(10)).astype(np.float64)),
        4: lambda: np.zeros(n, np.float32),
        104: lambda: tiny.astype(np.float64) * 1e30,
        5: lambda: np.sqrt(tiny.astype(np.float64)),
    }
    return {"out": np.asarray(table[op]()).astype(np.float32)}
