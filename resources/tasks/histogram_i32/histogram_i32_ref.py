"""Reference for the task histogram_i32."""

import numpy as np


def reference(x, counts, n):
    return {"counts": np.bincount(x, minlength=64).astype(np.int32)}
