"""Reference for the task lerp_f32."""

import numpy as np


def reference(a, b, t, n):
    a64 = a.astype(np.float64)
    return {"y": (a64 + np.float32(t) * (b - a64)).astype(np.float32)}
