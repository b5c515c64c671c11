"""Reference for the task cumsum_i32."""

import numpy as np


def reference(x, rows, cols):
    return {"y": np.cumsum(x.astype(np.int64).reshape(rows, cols), axis=1).astype(np.int32)}
