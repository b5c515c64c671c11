"""Reference for the task linear_gelu_f16."""

import numpy as np


def reference(X, W, bias, M, N, K):
    v = X.astype(np.float64).reshape(M, K) @ W.astype(np.float64).reshape(N, K).T + bias.astype(np.float64)
    v = 0.5 * v * (1 + np.tanh(np.sqrt(2 / np.pi) * (v + 0.044715 * v**3)))
    return {"Y": v.astype(np.float16)}
