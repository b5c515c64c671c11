"""Reference for the task conv2d_f32."""

import numpy as np


def reference(x, w, H, W):
    v = np.lib.stride_tricks.sliding_window_view(x.astype(np.float64).reshape(H, W), (3, 3))
    return {"y": np.einsum("ijab,ab->ij", v, w.astype(np.float64).reshape(3, 3)).astype(np.float32)}
