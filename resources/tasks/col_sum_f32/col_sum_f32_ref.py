"""Reference for the task col_sum_f32."""

import numpy as np


def reference(x, rows, cols):
    return {"y": x.astype(np.float64).reshape(rows, cols).sum(axis=0).astype(np.float32)}
