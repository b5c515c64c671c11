"""Reference for vector_add: the elementwise sum, rounded once to float32."""

import numpy as np


def reference(a, b, n):
    """c = a + b. Adding in float64 and rounding once gives the correctly rounded float32 sum."""
    c = a.astype(np.float64) + b.astype(np.float64)
    return {"c": c.astype(np.float32)}
