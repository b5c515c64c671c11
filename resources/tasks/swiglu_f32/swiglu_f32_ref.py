"""Reference for the task swiglu_f32."""

import numpy as np


def reference(X, W1, W2, M, N, K):
    x = X.astype(np.float64).reshape(M, K)
    g = x @ W1.astype(np.float64).reshape(N, K).T
    u = x @ W2.astype(np.float64).reshape(N, K).T
    return {"Y": (g / (1 + np.exp(-g)) * u).astype(np.float32)}
