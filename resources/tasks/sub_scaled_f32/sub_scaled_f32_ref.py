"""Reference for the task sub_scaled_f32."""

import numpy as np


def reference(a, b, alpha, n):
    return {"c": (a.astype(np.float64) - np.float32(alpha) * b.astype(np.float64)).astype(np.float32)}
