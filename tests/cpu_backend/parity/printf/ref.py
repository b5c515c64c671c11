"""Reference for printf.cu."""

import numpy as np


def reference(a, n):
    """2a + 1, rounded once."""
    return {"c": (2.0 * a.astype(np.float64) + 1.0).astype(np.float32)}
