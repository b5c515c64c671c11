"""Reference for the task dot_f32."""

import numpy as np


def reference(a, b, total, n):
    return {"total": np.array([np.dot(a.astype(np.float64), b)], dtype=np.float32)}
