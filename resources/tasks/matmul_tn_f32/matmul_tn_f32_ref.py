"""Reference for the task matmul_tn_f32."""

import numpy as np


def reference(A, B, M, N, K):
    a = A.astype(np.float64).reshape(K, M)
    a = a.T
    c = a @ B.astype(np.float64).reshape(K, N)
    return {"C": c.astype(np.float32)}
