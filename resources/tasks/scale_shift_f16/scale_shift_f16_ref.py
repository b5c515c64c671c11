"""Reference for the task scale_shift_f16."""

import numpy as np


def reference(x, gamma, beta, rows, cols):
    v = x.astype(np.float64).reshape(rows, cols)
    y = v * gamma.astype(np.float64) + beta.astype(np.float64)
    return {"y": y.astype(np.float16)}
