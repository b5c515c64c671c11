"""Reference for the task conv1d_f32."""

import numpy as np


def reference(x, w, n, k):
    v = np.lib.stride_tricks.sliding_window_view(x.astype(np.float64), k)
    return {"y": (v @ w.astype(np.float64)).astype(np.float32)}
