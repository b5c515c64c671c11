"""Reference for the task batched_matmul_f32."""

import numpy as np


def reference(A, B, batch, M, N, K):
    c = A.astype(np.float64).reshape(batch, M, K) @ B.astype(np.float64).reshape(batch, K, N)
    return {"C": c.astype(np.float32)}
