"""Reference for the NF4 dequantize-and-multiply (bitsandbytes' layout at blocksize 64, with
double quantization of the absmax values). The contract: each NF4 code is used rounded to
bfloat16 (the tensor cores' input type), times its block's float32 absmax."""

import numpy as np

# bitsandbytes' NF4 code table.
NF4 = np.array([-1.0, -0.6961928009986877, -0.5250730514526367, -0.39491748809814453,
                -0.28444138169288635, -0.18477343022823334, -0.09105003625154495, 0.0,
                0.07958029955625534, 0.16093020141124725, 0.24611230194568634,
                0.33791524171829224, 0.44070982933044434, 0.5626170039176941,
                0.7229568362236023, 1.0], dtype=np.float32)


def to_bf16(values):
    """float32 values rounded to the nearest bfloat16 (ties to even), as float32."""
    bits = values.astype(np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return rounded.astype(np.uint32).view(np.float32)


CODES = to_bf16(NF4)


def widen(a):
    """bfloat16 data as float64 (it may arrive as raw 16-bit words: a float32's upper half)."""
    if a.dtype.kind == "V" or a.dtype == np.uint16:
        return (a.view(np.uint16).astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return a.astype(np.float64)


def block_maxima(absmax_q, code2, scale2, offset):
    """The float32 absmax of every block of 64 weights, as bitsandbytes dequantizes them: the
    8-bit value's code times its group's scale (256 values a group), then the offset, each step
    rounded to float32."""
    groups = np.repeat(scale2.astype(np.float32), 256)[: absmax_q.size]
    scaled = code2.astype(np.float32)[absmax_q.astype(np.int64)] * groups
    return scaled + np.float32(offset)


def dequantize(w, absmax, N, K):
    """The weights [N, K]: each byte's high nibble is the even element, its low nibble the odd
    one; each run of 64 weights is its bf16 codes times the block's absmax (exact in float64:
    the kernels scale each block's float32 sum)."""
    packed = w.reshape(N, K // 2).astype(np.uint8)
    codes = np.empty((N, K), dtype=np.uint8)
    codes[:, 0::2] = packed >> 4
    codes[:, 1::2] = packed & 0xF
    scales = np.repeat(absmax.reshape(N, K // 64).astype(np.float32), 64, axis=1)
    return CODES[codes].astype(np.float64) * scales.astype(np.float64)


def reference(x, w, absmax_q, code2, scale2, offset, M, N, K):
    """x [M, K] times the dequantized weights transposed, accumulated in float64."""
    absmax = block_maxima(absmax_q.reshape(-1), code2, scale2, offset)
    result = widen(x).reshape(M, K) @ dequantize(w, absmax, N, K).T
    return {"out": result.astype(np.float32)}
