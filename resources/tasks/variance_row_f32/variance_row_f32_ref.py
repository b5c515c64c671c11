"""Reference for the task variance_row_f32."""

import numpy as np


def reference(x, rows, cols):
    return {"y": x.astype(np.float64).reshape(rows, cols).var(axis=1).astype(np.float32)}
