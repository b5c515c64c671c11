"""Reference for the task attention_softmax_f32."""

import numpy as np


def reference(Q, K, L, D, scale):
    s = np.float32(scale) * (Q.astype(np.float64).reshape(L, D) @ K.astype(np.float64).reshape(L, D).T)
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return {"P": (e / e.sum(axis=1, keepdims=True)).astype(np.float32)}
