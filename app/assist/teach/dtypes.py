"""How each dtype the generator uses reads and writes in CUDA C++ and in a NumPy reference."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DType:
    """One element type: its C++ type, header, conversions to and from float, and short name."""

    name: str
    ctype: str
    short: str
    include: str
    to_float: str      # C++ with {v}: the value as float
    from_float: str    # C++ with {v}: a float rounded once to this type
    floating: bool


DTYPES = {
    "float32": DType("float32", "float", "f32", "", "{v}", "{v}", True),
    "float16": DType("float16", "__half", "f16", "#include <cuda_fp16.h>\n",
                     "__half2float({v})", "__float2half_rn({v})", True),
    "bfloat16": DType("bfloat16", "__nv_bfloat16", "bf16", "#include <cuda_bf16.h>\n",
                      "__bfloat162float({v})", "__float2bfloat16_rn({v})", True),
    "int32": DType("int32", "int", "i32", "", "{v}", "{v}", False),
}
FLOATS = ("float32", "float16", "bfloat16")

# Every reference starts with this: bfloat16 may arrive as raw 16-bit words (NumPy has no
# bfloat16), so inputs are widened to float64 (or int64) before any arithmetic.
REF_HEADER = '''"""Reference for the generated kernel {name}."""

import math

import numpy as np


def erf(a):
    """The error function element by element, in float64 (NumPy has none of its own)."""
    return np.vectorize(math.erf, otypes=[np.float64])(a)


def widen(a):
    """An input as float64 (floats, bfloat16 words included) or int64 (integers)."""
    if a.dtype.kind == "V" or a.dtype == np.uint16:
        return (a.view(np.uint16).astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    if a.dtype.kind in "iu":
        return a.astype(np.int64)
    return a.astype(np.float64)

'''


def numpy_out(dtype: str) -> str:
    """The NumPy type a reference returns for an output of this dtype (16-bit floats as float32:
    the verifier compares with the dtype's tolerance)."""
    return {"int32": "np.int32", "int64": "np.int64"}.get(dtype, "np.float32")


def includes(*names: str) -> str:
    """The headers these dtypes need, each once."""
    return "".join(dict.fromkeys(DTYPES[n].include for n in names))
