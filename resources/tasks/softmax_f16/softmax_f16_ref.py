"""Reference for the task softmax_f16."""

import numpy as np


def reference(x, rows, cols):
    v = x.astype(np.float64).reshape(rows, cols)
    e = np.exp(v - v.max(axis=1, keepdims=True))
    return {"y": (e / e.sum(axis=1, keepdims=True)).astype(np.float16)}
