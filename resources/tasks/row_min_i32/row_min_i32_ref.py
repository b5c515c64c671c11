"""Reference for the task row_min_i32."""

import numpy as np


def reference(x, rows, cols):
    return {"y": x.reshape(rows, cols).min(axis=1).astype(np.int32)}
