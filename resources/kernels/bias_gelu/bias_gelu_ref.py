"""Reference for the fused bias + GELU, in the same tanh form as the kernel."""

import numpy as np


def reference(x, bias, rows, cols):
    """gelu(x + bias) with the tanh approximation, computed in float64, rounded to float16."""
    v = x.astype(np.float64).reshape(rows, cols) + bias.astype(np.float64)
    inner = np.sqrt(2.0 / np.pi) * (v + 0.044715 * v**3)
    y = 0.5 * v * (1.0 + np.tanh(inner))
    return {"y": y.astype(np.float16)}
