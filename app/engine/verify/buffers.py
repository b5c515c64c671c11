"""Host-side buffers for a verification run: random inputs from the spec's `init`, and the
images sent to the worker (guard zone, data or poison, guard zone)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from app.cases import Resolved
from app.dtypes import DType, lookup
from app.inits import parse_init
from app.spec import Arg, Spec

# At least 4 KiB of guard on each side, and a multiple of 256 so the data stays as aligned as
# cudaMalloc's own allocations.
GUARD_BYTES = 4096
# 0xFF reads as NaN in every float type and -1 in integers, so a kernel that reads past a buffer
# poisons its own output (DESIGN.md: a 0xA5 pattern let an out-of-bounds matmul pass).
GUARD_FILL = 0xFF
# Outputs start as NaN with a recognisable payload (floats) or 0xA5 bytes (integers): an element
# still holding exactly this after the launch was never written.
POISON_BITS = {"float16": 0x7E5A, "bfloat16": 0x7FA5, "float32": 0x7FC0A5A5,
               "float64": 0x7FF8A5A5A5A5A5A5}
INT_POISON_BYTE = 0xA5

Array = np.ndarray[Any, Any]


def poison(dtype: DType, count: int) -> Array:
    """`count` elements of the poison pattern for `dtype`."""
    if dtype.name in POISON_BITS:
        bits_type = {2: np.uint16, 4: np.uint32, 8: np.uint64}[dtype.itemsize]
        bits = np.full(count, POISON_BITS[dtype.name], dtype=bits_type)
        return bits.view(dtype.numpy)
    return np.full(count * dtype.itemsize, INT_POISON_BYTE, dtype=np.uint8).view(dtype.numpy)


def _integers(rng: np.random.Generator, low: int, high: int, shape: tuple[int, ...],
              dtype: DType) -> Array:
    """Whole numbers of [low, high), a range that parse_init already fitted to the dtype."""
    draw = np.uint64 if high > 2**63 else np.int64  # int64 unless uint64's top half is asked for
    return rng.integers(low, high, size=shape, dtype=draw).astype(dtype.numpy)


def _generate(init: str, shape: tuple[int, ...], dtype: DType,
              rng: np.random.Generator) -> Array:
    """One input array from an `init` description."""
    size = math.prod(shape)
    checked = parse_init(init, dtype)  # checked again: a Spec may be built without the parser
    if checked.kind == "integers":
        return _integers(rng, int(checked.low), int(checked.high), shape, dtype)
    if checked.kind == "reals":
        return rng.uniform(checked.low, checked.high, size=shape).astype(dtype.numpy)
    if init == "ones":
        return np.ones(shape, dtype=dtype.numpy)
    if init == "zeros":
        return np.zeros(shape, dtype=dtype.numpy)
    if init == "arange":
        return np.arange(size).reshape(shape).astype(dtype.numpy)
    if not dtype.is_float:
        low = 0 if np.issubdtype(dtype.numpy, np.unsignedinteger) else -8
        return _integers(rng, low, low + 16, shape, dtype)
    # Draw float32 directly where that is the target (twice as fast as float64 then a cast).
    draw = np.float32 if dtype.numpy == np.float32 else np.float64
    if init == "uniform":
        return rng.random(size=shape, dtype=draw).astype(dtype.numpy, copy=False)
    return rng.standard_normal(size=shape, dtype=draw).astype(dtype.numpy, copy=False)


def generate_inputs(spec: Spec, resolved: Resolved, seed: int, case_index: int) -> dict[str, Array]:
    """Fresh inputs for every in/inout buffer; the same seed and case always give the same."""
    # SFC64: the fastest of NumPy's bit generators, and as reproducible as the default.
    rng = np.random.Generator(np.random.SFC64([seed, case_index, 0x4B53]))
    inputs = {}
    for arg in spec.args:
        if arg.kind in ("in", "inout"):
            assert arg.init is not None
            inputs[arg.name] = _generate(arg.init, resolved.shapes[arg.name], lookup(arg.dtype),
                                         rng)
    return inputs


def image_for(arg: Arg, resolved: Resolved, inputs: dict[str, Array], guard: int) -> Array:
    """The bytes sent to the worker for one buffer: guard, data (or poison), guard."""
    dtype = lookup(arg.dtype)
    count = math.prod(resolved.shapes[arg.name])
    data = inputs[arg.name] if arg.name in inputs else poison(dtype, count)
    body = np.ascontiguousarray(data).reshape(-1).view(np.uint8)
    image = np.full(guard + body.size + guard, GUARD_FILL, dtype=np.uint8)
    image[guard:guard + body.size] = body
    return image


def data_of(image: Array, arg: Arg, resolved: Resolved, guard: int) -> Array:
    """The data part of an image, as an array of the argument's dtype and shape."""
    dtype = lookup(arg.dtype)
    shape = resolved.shapes[arg.name]
    nbytes = math.prod(shape) * dtype.itemsize
    return image[guard:guard + nbytes].view(dtype.numpy).reshape(shape)
