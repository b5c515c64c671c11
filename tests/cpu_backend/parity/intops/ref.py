"""Reference for intops.cu, in Python integers: 32-bit arithmetic wraps modulo 2^32."""

import numpy as np

M32, M64 = (1 << 32) - 1, (1 << 64) - 1


def s32(v):
    """v as a signed 32-bit value."""
    v &= M32
    return v - (1 << 32) if v >> 31 else v


def s64(v):
    """v as a signed 64-bit value."""
    v &= M64
    return v - (1 << 64) if v >> 63 else v


def clz(v, width):
    """Leading zeros of the width-bit pattern of v."""
    v &= (1 << width) - 1
    return width - v.bit_length()


def ffs(v, width):
    """Position (from 1) of the lowest set bit, 0 for none."""
    v &= (1 << width) - 1
    return (v & -v).bit_length()


def brev(v, width):
    """The bits of v reversed."""
    return int(format(v & ((1 << width) - 1), f"0{width}b")[::-1], 2)


def byte_perm(x, y, s):
    """__byte_perm: bytes of y:x picked by the low 3 bits of s's nibbles."""
    pool = (y & M32) << 32 | (x & M32)
    return sum(((pool >> (8 * ((s >> (4 * k)) & 7))) & 0xFF) << (8 * k) for k in range(4))


def funnel(lo, hi, shift, left, clamp):
    """__funnelshift_l / _rc: the 64-bit hi:lo shifted, the upper or lower 32 bits kept."""
    shift = min(shift, 32) if clamp else shift & 31
    pool = (hi & M32) << 32 | (lo & M32)
    return ((pool << shift) >> 32) & M32 if left else (pool >> shift) & M32


def one(op, a, b):
    """The kernel's result for one element."""
    ua, ub = a & M32, b & M32
    big_a, big_b = s64((a << 32) | ub), s64((b << 32) | ua)
    results = {
        0: lambda: s32(a + b), 1: lambda: s32(a * b), 2: lambda: (ua * ub) & M32,
        3: lambda: (a * b) >> 32, 4: lambda: (ua * ub) >> 32,
        5: lambda: s64((big_a * big_b) >> 64),
        6: lambda: s64(((big_a & M64) * (big_b & M64)) >> 64),
        7: lambda: bin(ua).count("1") * 100 + bin(big_a & M64).count("1"),
        8: lambda: clz(a, 32) * 100 + clz(big_a, 64),
        9: lambda: ffs(a, 32) * 100 + ffs(big_a, 64),
        10: lambda: brev(ua, 32), 11: lambda: s64(brev(big_a, 64)),
        12: lambda: byte_perm(ua, ub, ub & 0x7777),
        13: lambda: s64(funnel(ua, ub, ub & 63, True, False) * 2**32
                        + funnel(ua, ub, (ub >> 8) & 63, False, True)),
        14: lambda: ((abs(a - b) + 7) & M32) + abs(ua - ub) * 3,
        15: lambda: (ua << (ub & 63)) & M32 if (ub & 63) < 32 else 0,
        16: lambda: ((a + b) >> 1) * 2**32 + ((a + b + 1) >> 1),
    }
    return results[op]()


def reference(op, x, y, n):
    """What the GPU computes for op."""
    a = [0 if i % 64 == 0 else int(v) for i, v in enumerate(x)]
    return {"out": np.array([one(op, p, int(q)) for p, q in zip(a, y, strict=True)],
                            np.int64)}
