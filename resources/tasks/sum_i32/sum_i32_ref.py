"""Reference for the task sum_i32."""

import numpy as np


def reference(x, total, n):
    return {"total": np.array([x.astype(np.int64).sum()], dtype=np.int32)}
