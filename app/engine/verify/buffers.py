"""Host-side buffers for a verification run: random inputs from the spec's `init`, and the
images sent to the worker (guard zone, data or poison, guard zone)."""

from __future__ import annotations

import functools
import hashlib
import math
import os
from enum import StrEnum
from typing import Any

import numpy as np

from app.spec.cases import Resolved
from app.spec.dtypes import DType, lookup
from app.spec.inits import parse_init
from app.spec.model import Arg, Spec

# At least 4 KiB of guard on each side, and a multiple of 256 so the data stays as aligned as
# cudaMalloc's own allocations.
GUARD_BYTES = 4096
# Guard zones hold NaN in the buffer's float type (a kernel that reads past a buffer poisons its
# own output; on an H200 a 0xA5 pattern let an out-of-bounds matmul pass), with a random sign and
# payload drawn afresh for every buffer of every run. A constant fill could be reproduced: on
# x86 a NaN read from one 0xFF guard and stored into another left identical bytes, so an
# off-by-one passed on the CPU backend. Integers get random bytes. The payload's lowest bit is
# set and the next one clear, so no guard element is ever a canonical NaN (0x7FFFFFFF on NVIDIA
# GPUs, a zero payload on x86): a kernel storing any computed NaN changes the bytes.
# (exponent and quiet bit, random bits kept, forced low bits) per float size.
_NAN_LAYOUT = {"float16": (0x7E00, 0x81FF, 0x0001, 0x0002),
               "bfloat16": (0x7FC0, 0x803F, 0x0001, 0x0002),
               "float32": (0x7FC00000, 0x803FFFFF, 0x1, 0x2),
               "float64": (0x7FF8000000000000, 0x8007FFFFFFFFFFFF, 0x1, 0x2)}
# Outputs start as NaN with a recognisable payload (floats) or 0xA5 bytes (integers): an element
# still holding exactly this after the launch was never written.
POISON_BITS = {"float16": 0x7E5A, "bfloat16": 0x7FA5, "float32": 0x7FC0A5A5,
               "float64": 0x7FF8A5A5A5A5A5A5}
INT_POISON_BYTE = 0xA5

Array = np.ndarray[Any, Any]
# The unsigned integer type of each element size: elements compared and built as bit patterns.
UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def poison(dtype: DType, count: int) -> Array:
    """`count` elements of the poison pattern for `dtype`."""
    if dtype.name in POISON_BITS:
        bits = np.full(count, POISON_BITS[dtype.name], dtype=UNSIGNED[dtype.itemsize])
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
    if checked.kind == "gaussian":
        return rng.normal(checked.low, checked.high, size=shape).astype(dtype.numpy)
    if checked.kind == "constant":
        return np.full(shape, checked.low, dtype=dtype.numpy)
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


def new_salt() -> bytes:
    """Fresh randomness for the guard zones of one run."""
    return os.urandom(16)


@functools.lru_cache(maxsize=64)
def guard_fill(dtype_name: str, nbytes: int, salt: bytes, name: str, side: str) -> Array:
    """`nbytes` of guard for one side ("before", "after") of the buffer `name`: NaNs of random
    sign and payload for floats, random bytes otherwise; the same salt gives the same bytes.
    Kept for the few buffers of the latest runs (image_for and expected_guards both ask), as
    a read-only array."""
    # SHAKE-256 as the stream: a third of the time of a seeded NumPy generator at 4 KiB, and
    # every run makes six or more of these.
    stream = hashlib.shake_256(salt + f"\0{name}\0{side}".encode()).digest(nbytes)
    raw = np.frombuffer(stream, dtype=np.uint8).copy()
    layout = _NAN_LAYOUT.get(dtype_name)
    size = lookup(dtype_name).itemsize
    if layout is None or nbytes % size:
        raw.flags.writeable = False
        return raw
    nan, keep, set_bits, clear_bits = layout
    bits = raw.view(UNSIGNED[size])
    bits &= bits.dtype.type(keep & ~clear_bits)
    bits |= bits.dtype.type(nan | set_bits)
    raw.flags.writeable = False
    return raw


class Start(StrEnum):
    """What an `out` buffer holds when a run starts (an `inout` buffer holds its inputs).

    Each start catches kernels the others let pass, so every case runs with each of the first
    two at least once (app.engine.verify.runs.plan_runs):
    - POISON: a NaN with a recognisable payload (0xA5 bytes for integers). The only start that
      tells an element never written from one written with the right value wherever that value
      is 0: an element still holding the poison was never written (checks._unwritten_mask).
    - ZEROS: what callers' buffers usually hold (cudaMemset, torch.zeros). A kernel that writes
      only where it finds something non-zero (`if (c[i] != 0)`), or only where it finds NaN,
      leaves them, which fails wherever the reference expects a non-zero value; an element
      left unwritten where the reference expects 0 cannot be seen here, hence POISON runs.
    - VALUES: ordinary values drawn afresh for every run (output_fill), which no kernel can
      predict or recognise.
    """

    POISON = "poison"
    ZEROS = "zeros"
    VALUES = "values"


# Seed s starts its outputs as START_CYCLE[s % 3]: the spec's usual seeds 0, 1, 2 see every
# start, a fresh seed (drawn at random) gets a random one, and a replay of a seed starts as the
# run it replays did.
START_CYCLE = (Start.POISON, Start.VALUES, Start.ZEROS)


def start_for(seed: int) -> Start:
    """How outputs start in the runs of `seed`."""
    return START_CYCLE[seed % len(START_CYCLE)]


def output_fill(dtype: DType, count: int, salt: bytes, name: str) -> Array:
    """Ordinary values for an output (random, from `salt`), in place of the poison: on such a
    run a kernel that only computes where it finds the poison (or any NaN) leaves these values,
    which the reference does not expect, and fails."""
    seed = hashlib.sha256(salt + f"\0{name}\0fill".encode()).digest()
    rng = np.random.Generator(np.random.SFC64(list(seed[:16])))
    if dtype.is_float:
        return rng.uniform(-1000.0, 1000.0, size=count).astype(dtype.numpy)
    raw = rng.integers(0, 256, size=count * dtype.itemsize, dtype=np.uint8)
    return raw.view(dtype.numpy)


def output_start(dtype: DType, count: int, salt: bytes, name: str, start: Start) -> Array:
    """What an `out` buffer holds before the launch (Start)."""
    if start == Start.VALUES:
        return output_fill(dtype, count, salt, name)
    if start == Start.ZEROS:
        return np.zeros(count, dtype=dtype.numpy)
    return poison(dtype, count)


def image_parts(arg: Arg, resolved: Resolved, inputs: dict[str, Array], guard: int,
                salt: bytes = b"", start: Start = Start.POISON) -> tuple[Array, Array, Array]:
    """The bytes sent to the worker for one buffer, in three parts: guard, data (inputs, or for
    an output what `start` says), guard; the guards come from `salt` (guard_fill), so the
    checks can tell exactly what they held. Written part by part, a large buffer is copied once
    (into its file), not first into an image of its own."""
    dtype = lookup(arg.dtype)
    count = math.prod(resolved.shapes[arg.name])
    if arg.name in inputs:
        data = inputs[arg.name]
    elif arg.is_scratch:  # whatever the outputs start as, scratch always holds the poison
        data = poison(dtype, count)
    else:
        data = output_start(dtype, count, salt, arg.name, start)
    body = np.ascontiguousarray(data).reshape(-1).view(np.uint8)
    return (guard_fill(arg.dtype, guard, salt, arg.name, "before"), body,
            guard_fill(arg.dtype, guard, salt, arg.name, "after"))


def image_for(arg: Arg, resolved: Resolved, inputs: dict[str, Array], guard: int,
              salt: bytes = b"", start: Start = Start.POISON) -> Array:
    """image_parts as one array (a copy the caller may change)."""
    return np.concatenate(image_parts(arg, resolved, inputs, guard, salt, start))


def expected_guards(arg: Arg, guard: int, salt: bytes) -> tuple[Array, Array]:
    """What the guard zones of an image made by image_for must still hold after a launch."""
    return (guard_fill(arg.dtype, guard, salt, arg.name, "before"),
            guard_fill(arg.dtype, guard, salt, arg.name, "after"))


def data_of(image: Array, arg: Arg, resolved: Resolved, guard: int) -> Array:
    """The data part of an image, as an array of the argument's dtype and shape."""
    dtype = lookup(arg.dtype)
    shape = resolved.shapes[arg.name]
    nbytes = math.prod(shape) * dtype.itemsize
    return image[guard:guard + nbytes].view(dtype.numpy).reshape(shape)
