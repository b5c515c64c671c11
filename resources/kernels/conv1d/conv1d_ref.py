"""Reference for conv1d ("same" output, zero padding, window not flipped)."""

import numpy as np


def reference(x, w, n, ksize):
    """y[i] = sum_k w[k] * x[i + k - ksize // 2], with x = 0 outside its bounds, in float64."""
    left = ksize // 2
    padded = np.pad(x.astype(np.float64), (left, ksize - 1 - left))
    y = np.zeros(n, dtype=np.float64)
    for k in range(ksize):
        y += float(w[k]) * padded[k:k + n]
    return {"y": y.astype(np.float32)}
