"""Reference for the task row_argmax_i32."""

import numpy as np


def reference(x, rows, cols):
    return {"idx": x.reshape(rows, cols).argmax(axis=1).astype(np.int32)}
