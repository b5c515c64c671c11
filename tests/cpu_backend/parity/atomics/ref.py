"""Reference for atomics.cu: each slot's final value after every thread's atomic."""

import ml_dtypes
import numpy as np

SLOTS = 16


def per_slot(x):
    """The values of the threads of each slot, in thread order."""
    return [x[s::SLOTS].astype(np.int64) for s in range(SLOTS)]


def bf16(a):
    """bfloat16 data as ml_dtypes' bfloat16 (it may arrive as raw 16-bit words)."""
    return a.view(np.uint16).view(ml_dtypes.bfloat16) if a.dtype.kind == "V" else a


def reference(op, x, ai, au, al, aul, af, ad, ah, ab, n):
    """What the accumulators hold after the kernel (bfloat16 returned as float32, exact)."""
    ab = bf16(ab)
    out = {"ai": ai.copy(), "au": au.copy(), "al": al.copy(), "aul": aul.copy(),
           "af": af.copy(), "ad": ad.copy(), "ah": ah.copy(), "ab": ab.copy()}
    groups = per_slot(x)
    m32, m64 = (1 << 32) - 1, (1 << 64) - 1
    for s, v in enumerate(groups):
        vs = [int(t) for t in v]
        if op == 0:
            out["ai"][s] = ai[s] + sum(t - 4 for t in vs)
        elif op == 1:
            out["au"][s] = (int(au[s]) + sum(t << 28 for t in vs)) & m32
        elif op == 2:
            out["aul"][s] = (int(aul[s]) + sum(t << 60 for t in vs)) & m64
        elif op == 3:
            out["af"][s] = np.float32(float(af[s]) + sum(t * 0.375 for t in vs))
        elif op == 4:
            out["ad"][s] = float(ad[s]) + sum(t * 0.1 for t in vs)
        elif op == 5:
            out["ah"][2 * s] = np.float16(float(ah[2 * s]) + sum(vs))
            out["ah"][2 * s + 1] = np.float16(float(ah[2 * s + 1]) - sum(vs))
        elif op == 6:
            out["ab"][2 * s] = ml_dtypes.bfloat16(float(ab[2 * s]) + sum(vs))
            out["ab"][2 * s + 1] = ml_dtypes.bfloat16(float(ab[2 * s + 1]) + 2 * sum(vs))
        elif op == 7:
            out["ah"][s] = np.float16(float(ah[s]) + sum(vs))
        elif op == 8:
            out["ai"][s] = ai[s] - sum(vs)
            out["au"][s] = (int(au[s]) - sum(vs)) & m32
        elif op == 9:
            out["ai"][s] = vs[0]
            out["au"][s] = (int(ai[s]) + 1) & m32
        elif op == 10:
            out["ai"][s] = min([int(ai[s])] + [t - 4 for t in vs])
            out["au"][s] = max([int(au[s])] + [(t * 0x20000001) & m32 for t in vs])
        elif op == 11:
            out["al"][s] = min([int(al[s])] + [(t - 4) << 40 for t in vs])
            out["aul"][s] = max([int(aul[s])] + [(t << 61) & m64 for t in vs])
        elif op == 12:
            a, o, e = int(au[s]), int(ai[s]) & m32, int(aul[s])
            for t in vs:
                a &= ~(1 << t) & m32
                o |= 1 << (t + 8)
                e ^= 1 << (t * 7)
            out["au"][s], out["ai"][s], out["aul"][s] = a, o - (1 << 32) if o >> 31 else o, e
        elif op in (13, 14):
            value = int(au[s])
            for _ in vs:
                if op == 13:
                    value = 0 if value >= 5 else value + 1
                else:
                    value = 5 if value == 0 or value > 5 else value - 1
            out["au"][s] = value
        elif op == 15:
            out["ai"][s] = ai[s] + sum(vs)
            out["aul"][s] = (int(aul[s]) * 3 ** len(vs)) & m64
    out["ab"] = out["ab"].astype(np.float32)
    return out
