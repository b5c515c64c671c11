"""Reference for the task depthwise_conv2d_f32."""

import numpy as np


def reference(x, w, C, H, W):
    v = np.pad(x.astype(np.float64).reshape(C, H, W), ((0, 0), (1, 1), (1, 1)))
    v = np.lib.stride_tricks.sliding_window_view(v, (3, 3), axis=(1, 2))
    y = np.einsum("cijab,cab->cij", v, w.astype(np.float64).reshape(C, 3, 3))
    return {"y": y.astype(np.float32)}
