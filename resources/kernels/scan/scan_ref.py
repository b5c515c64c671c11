"""Reference for the row-wise inclusive scan."""

import numpy as np


def reference(x, rows, cols):
    """Cumulative sum along each row, accumulated in float64."""
    y = np.cumsum(x.astype(np.float64).reshape(rows, cols), axis=1)
    return {"y": y.astype(np.float32)}
