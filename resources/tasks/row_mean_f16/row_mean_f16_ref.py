"""Reference for the task row_mean_f16."""

import numpy as np


def reference(x, rows, cols):
    return {"y": x.astype(np.float64).reshape(rows, cols).mean(axis=1).astype(np.float16)}
