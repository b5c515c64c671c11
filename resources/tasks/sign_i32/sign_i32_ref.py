"""Reference for the task sign_i32."""

import numpy as np


def reference(x, n):
    return {"y": np.sign(x).astype(np.int32)}
