"""Reference for the task row_sum_f32."""

import numpy as np


def reference(x, rows, cols):
    return {"y": x.astype(np.float64).reshape(rows, cols).sum(axis=1).astype(np.float32)}
