"""The `init` of an input buffer (docs/spec.md): how its values are made.

An init is parsed and checked once, against the buffer's dtype, both when the spec loads and
again before any values are drawn, so that no spec can ask for values the generator cannot
draw (`randint(5, 1)`), that no dtype can hold (`randint(1e30, 2e30)` for int64), or that are
not numbers at all (`uniform(nan, 1)`). Bounds outside what the dtype holds are clipped to it,
as before; a range left empty by the clipping is refused.
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass

import numpy as np

from app.spec.dtypes import DType

PLAIN = ("normal", "uniform", "ones", "zeros", "arange")
CALLS = ("uniform", "randint", "normal")
# `randint(-9223372036854775808, 9223372036854775807)` is 48; a longer init is not one.
MAX_LENGTH = 200
# Integers are drawn as int64 (uint64 only above its range): the generator's own limits.
INT64 = (-(2**63), 2**63 - 1)
UINT64_MAX = 2**64 - 1
USAGE = ("use normal, normal(mean, std), uniform, uniform(lo, hi), randint(lo, hi), ones, "
         "zeros, full(value) or arange")


class InitError(ValueError):
    """An init that cannot make values for its buffer; the message says why and what to do."""


@dataclass(frozen=True)
class Init:
    """A checked init. `kind` is one of PLAIN, or `integers` (whole numbers of [low, high),
    already clipped to the dtype), `reals` (uniform over [low, high), clipped likewise),
    `gaussian` (normal with mean `low` and deviation `high`) or `constant` (every element
    `low`)."""

    kind: str
    low: int | float = 0
    high: int | float = 1


def largest_finite(dtype: DType) -> float:
    """The largest finite value of a float dtype. NumPy knows its own floats; bfloat16 is
    ml_dtypes', and only then is that loaded (its import takes 0.6-0.9 s on a 2-core machine,
    which every float scalar or init used to cost each process: the window, the job, the
    worker)."""
    if dtype.name != "bfloat16":
        return float(np.finfo(dtype.numpy).max)  # type: ignore[type-var]
    import ml_dtypes

    return float(ml_dtypes.finfo(dtype.numpy).max)  # type: ignore[no-untyped-call]


def parse_init(text: str, dtype: DType) -> Init:
    """The init `text` for a buffer of `dtype`, or InitError naming the problem."""
    if text in PLAIN:
        return Init(text)
    if len(text) > MAX_LENGTH:
        raise InitError(f"init {text[:40]!r}... is {len(text)} characters long (at most "
                        f"{MAX_LENGTH}); {USAGE}")
    if text.startswith("full("):
        return _constant(text, dtype)
    call = _call(text)
    if call is None:
        raise InitError(f"unknown init {text!r} ({USAGE})")
    kind, bounds = call
    if kind == "normal":
        mean, deviation = (_bound(text, bound) for bound in bounds)
        return _gaussian(text, mean, deviation, dtype)
    low, high = (_bound(text, bound) for bound in bounds)
    if not low < high:
        raise InitError(f"{text!r}: the low bound must be below the high bound (values are "
                        "drawn from [lo, hi))")
    if kind == "randint" or not dtype.is_float:
        first, last = _whole_range(text, kind, low, high, dtype)
        return Init("integers", first, last + 1)
    return _real_range(text, low, high, dtype)


def _call(text: str) -> tuple[str, tuple[str, str]] | None:
    """(name, (lo, hi)) of `name(lo, hi)` with spaces allowed around the bounds, or None.
    Split by hand: a regex whose lazy bounds sat between runs of optional spaces tried every
    split of a long run of spaces."""
    name, opened, rest = text.partition("(")
    if name not in CALLS or not opened or not rest.endswith(")"):
        return None
    inner = rest[:-1]
    if "(" in inner or ")" in inner or inner.count(",") != 1:
        return None
    low, high = (part.strip() for part in inner.split(","))
    return (name, (low, high)) if low and high else None


def _bound(text: str, bound: str) -> int | float:
    """One bound: a finite number written as a literal (kept exact when whole, since a float
    cannot tell 2**64 - 1 from 2**64)."""
    with contextlib.suppress(ValueError):
        return int(bound)
    try:
        value = float(bound)
    except ValueError:
        raise InitError(f"bound {bound!r} of {text!r} is not a number") from None
    if not math.isfinite(value):
        raise InitError(f"bound {bound!r} of {text!r} is not a finite number")
    return value


def _whole_range(text: str, kind: str, low: int | float, high: int | float,
                 dtype: DType) -> tuple[int, int]:
    """The first and last whole number of [low, high) that the dtype (and the generator)
    can hold."""
    if kind == "randint" and not (float(low).is_integer() and float(high).is_integer()):
        raise InitError(f"{text!r}: randint's bounds must be whole numbers")
    smallest, largest = _holds(dtype)
    first = max(math.ceil(low), smallest)
    last = min(math.ceil(high) - 1, largest)
    if first > last:
        raise InitError(f"{text!r}: no whole number in [{low:g}, {high:g}) fits {dtype.name} "
                        f"(from {smallest:g} to {largest:g}); choose bounds inside that range")
    return first, last


def _holds(dtype: DType) -> tuple[int, int]:
    """The smallest and largest whole numbers drawn for `dtype`."""
    if dtype.is_float:
        largest = min(math.floor(largest_finite(dtype)), INT64[1])
        return -largest, largest
    info = np.iinfo(dtype.numpy)  # type: ignore[type-var]
    return max(int(info.min), INT64[0]), min(int(info.max), UINT64_MAX)


def _real_range(text: str, low: int | float, high: int | float, dtype: DType) -> Init:
    """`uniform(lo, hi)` of a float dtype, its bounds clipped to the dtype's finite range."""
    largest = largest_finite(dtype)
    low, high = max(float(low), -largest), min(float(high), largest)
    if not low < high:
        raise InitError(f"{text!r}: no value in the range fits {dtype.name} (magnitude at most "
                        f"{largest:g})")
    if not math.isfinite(high - low):
        raise InitError(f"{text!r}: the range is wider than float64 can hold; narrow it")
    return Init("reals", low, high)


def _constant(text: str, dtype: DType) -> Init:
    """`full(value)`: every element the value, which the dtype must hold (whole for integer
    dtypes). The Model's own constant parameters (PReLU's 0.25, say) are drawn this way."""
    inner = text[len("full("):]
    if not inner.endswith(")") or "(" in inner[:-1] or ")" in inner[:-1] or "," in inner:
        raise InitError(f"{text!r}: write full(value), one number")
    value = _bound(text, inner[:-1].strip())
    smallest, largest = (-largest_finite(dtype), largest_finite(dtype)) if dtype.is_float \
        else _holds(dtype)
    if dtype.is_float is False and not float(value).is_integer():
        raise InitError(f"{text!r}: {dtype.name} holds whole numbers only")
    if not smallest <= value <= largest:
        raise InitError(f"{text!r}: {dtype.name} cannot hold {value:g}")
    return Init("constant", value, value)


def _gaussian(text: str, mean: int | float, deviation: int | float, dtype: DType) -> Init:
    """`normal(mean, std)` of a float dtype, with a positive deviation (torch's normal_ and
    the initial values of embeddings and custom parameters, `torch.randn(n) * 0.02`)."""
    if not dtype.is_float:
        raise InitError(f"{text!r}: normal(mean, std) is for float dtypes; use randint(lo, hi) "
                        "for integers")
    if not deviation > 0:
        raise InitError(f"{text!r}: the deviation must be above 0 (use full(value) for a "
                        "constant)")
    if abs(mean) + 10 * deviation > largest_finite(dtype):
        raise InitError(f"{text!r}: such values overflow {dtype.name}; narrow it")
    return Init("gaussian", mean, deviation)
