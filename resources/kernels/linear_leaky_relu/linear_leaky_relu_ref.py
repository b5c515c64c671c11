"""Reference for linear_leaky_relu."""

import numpy as np


def reference(x, weight, bias, multiplier, negative_slope, batch, in_features, out_features):
    """leaky_relu((x @ weight^T + bias) * multiplier) in float64, rounded to float32 once."""
    x64 = x.astype(np.float64).reshape(batch, in_features)
    w64 = weight.astype(np.float64).reshape(out_features, in_features)
    v = (x64 @ w64.T + bias.astype(np.float64)) * multiplier
    return {"out": np.where(v >= 0.0, v, v * negative_slope).astype(np.float32)}
