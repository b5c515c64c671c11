"""Reference for the task l2_normalize_f32."""

import numpy as np


def reference(x, rows, cols):
    v = x.astype(np.float64).reshape(rows, cols)
    return {"y": (v / np.sqrt((v * v).sum(axis=1, keepdims=True))).astype(np.float32)}
