"""Reference for the task cumsum_f32."""

import numpy as np


def reference(x, rows, cols):
    return {"y": np.cumsum(x.astype(np.float64).reshape(rows, cols), axis=1).astype(np.float32)}
