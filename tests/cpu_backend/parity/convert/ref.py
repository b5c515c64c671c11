"""Reference for convert.cu: CUDA's conversions saturate (NaN gives 0), round as their suffix
says, and half/bfloat16 results are compared by their bits."""

import ml_dtypes
import numpy as np

SPECIALS = [np.nan, np.inf, -np.inf, 3e9, -3e9, 1e20, -0.5, 2.5]


def with_specials(x):
    """The kernel's special(i, x[i]) for every i, in float64."""
    v = x.astype(np.float64)
    slot = np.arange(len(v)) % 16
    for position, value in enumerate(SPECIALS):
        v[slot == position] = value
    return v


def to_int(v, rounding, lo, hi):
    """Round, then saturate to [lo, hi]; NaN gives 0, or 0x8000000000000000 for 64-bit results
    (measured on an H200)."""
    wide = hi >= 2**63 - 1
    whole = rounding(np.nan_to_num(v, nan=0.0, posinf=hi, neginf=lo))
    out = [int(max(lo, min(hi, int(w)))) for w in whole]
    return np.array([-2**63 if wide and np.isnan(t) else o
                     for t, o in zip(v, out, strict=True)], np.int64)


def toward(narrow, exact, mode, kind):
    """Step a nearest-rounded `narrow` array one unit when it is on the wrong side of exact."""
    wide = narrow.astype(np.float64)
    if mode == "zero":
        step = np.abs(wide) > np.abs(exact)
        target = np.zeros_like(narrow)
    elif mode == "down":
        step, target = wide > exact, np.full_like(narrow, -np.inf)
    else:
        step, target = wide < exact, np.full_like(narrow, np.inf)
    moved = (_bf16_step(narrow, target) if kind is ml_dtypes.bfloat16
             else np.nextafter(narrow, target))
    return np.where(step, moved, narrow)


def _bf16_step(narrow, target):
    """nextafter for bfloat16 (ml_dtypes has none): one step of the bit pattern."""
    bits = narrow.view(np.uint16).astype(np.int32)
    toward_zero = np.abs(target.astype(np.float64)) < np.abs(narrow.astype(np.float64))
    bits = np.where(toward_zero, bits - 1, bits + 1)
    return bits.astype(np.uint16).view(ml_dtypes.bfloat16)


def bits(values):
    """The bit patterns of a float array as int64."""
    view = {2: np.uint16, 4: np.uint32}[values.dtype.itemsize]
    return values.view(view).astype(np.int64)


def reference(op, x, k, n):
    """What the GPU computes for op."""
    v, w = with_specials(x), x.astype(np.float64)
    i32, u32, i64 = (-2**31, 2**31 - 1), (0, 2**32 - 1), (-2**63, 2**63 - 1)
    half = x.astype(np.float16).astype(np.float64)
    table = {
        0: lambda: to_int(v, np.trunc, *i32), 1: lambda: to_int(v, np.rint, *i32),
        2: lambda: to_int(v, np.floor, *i32), 3: lambda: to_int(v, np.trunc, *u32),
        4: lambda: to_int(v, np.trunc, *i64),
        5: lambda: np.array([t - 2**64 if t >= 2**63 else t for t in to_int_u64(v)], np.int64),
        6: lambda: to_int(v, np.trunc, *i32), 7: lambda: to_int(w, np.trunc, *i32),
        8: lambda: bits(toward(k.astype(np.int32).astype(np.float32), k.astype(np.int32)
                               .astype(np.float64), "zero", np.float32)),
        9: lambda: bits(np.array([np.float32(float(int(t))) for t in k], np.float32)),
        10: lambda: bits(toward(k.astype(np.uint32).astype(np.float32),
                                k.astype(np.uint32).astype(np.float64), "zero", np.float32)),
        11: lambda: bits(x.astype(np.float16)),
        12: lambda: bits(toward(x.astype(np.float16), w, "zero", np.float16)),
        13: lambda: bits(toward(x.astype(np.float16), w, "down", np.float16)),
        14: lambda: bits(toward(x.astype(np.float16), w, "up", np.float16)),
        15: lambda: bits(x.astype(ml_dtypes.bfloat16)),
        16: lambda: bits(toward(x.astype(ml_dtypes.bfloat16), w, "zero", ml_dtypes.bfloat16)),
        17: lambda: to_int(half, np.trunc, *i32),
        18: lambda: to_int(half, np.rint, -2**15, 2**15 - 1),
        19: lambda: to_int(half, np.trunc, 0, 2**16 - 1),
        20: lambda: to_int(half, np.trunc, *i64),
        21: lambda: to_int((x * np.float32(1e6)).astype(ml_dtypes.bfloat16).astype(np.float64),
                           np.trunc, *i32),
        22: lambda: to_int(w * 1e6, np.trunc, *i32),
    }
    return {"out": table[op]()}


def to_int_u64(v):
    """__float2ull_ru of each value: round up, saturate to [0, 2^64 - 1]; NaN gives
    0x8000000000000000 (measured on an H200)."""
    out = []
    for value in v:
        if np.isnan(value):
            out.append(2**63)
        elif value == np.inf:
            out.append(2**64 - 1)
        elif value == -np.inf:
            out.append(0)
        else:
            out.append(max(0, min(2**64 - 1, int(np.ceil(value)))))
    return out
