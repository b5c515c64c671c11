"""Reference for the task maxpool2d_f32."""

import numpy as np


def reference(x, H, W):
    v = x.reshape(H, W)[: H // 2 * 2, : W // 2 * 2]
    v = v.reshape(H // 2, 2, W // 2, 2)
    return {"y": v.max(axis=(1, 3))}
