"""The checks made on the images a worker sends back: guard zones, unchanged inputs, unwritten
outputs, NaN and Inf placement, and tolerance (docs/spec.md, "What a verdict means")."""

from __future__ import annotations

from typing import Any

import numpy as np

from app.engine.verify.buffers import UNSIGNED, poison
from app.engine.verify.results import Finding, Status
from app.spec.dtypes import DType, lookup

FIRST = 5
Array = np.ndarray[Any, Any]
# Every bit set, per unsigned type (keeps a complemented mask inside the type's range).
_ONES = {t: (1 << (8 * np.dtype(t).itemsize)) - 1 for t in UNSIGNED.values()}


def _indices(mask: Array) -> list[list[int]]:
    """The first few positions where mask is true, as index lists."""
    return [[int(i) for i in index] for index in np.argwhere(mask)[:FIRST]]


def _values(array: Array, mask: Array) -> list[Any]:
    """The first few values where mask is true, as plain Python numbers."""
    picked = array[mask][:FIRST]
    if picked.dtype.kind in "fV":  # "V": ml_dtypes' bfloat16
        picked = picked.astype(np.float64)
    return [v.item() for v in picked]


def _elements(offsets: Array, itemsize: int) -> Array:
    """The distinct element slots (0 = the first past the edge) that changed bytes fall in."""
    return np.unique(offsets // itemsize)


def _plural(count: int, word: str) -> str:
    """'1 element', '3 elements'."""
    return f"{count} {word}{'' if count == 1 else 's'}"


def check_guards(name: str, image: Array, guard: int, nbytes: int,
                 expected: tuple[Array, Array], itemsize: int = 1) -> Finding | None:
    """Both guard zones must still hold exactly the bytes they were given (expected_guards).
    A write outside is told by element: which flat index of the buffer it hit (the buffer's
    own length is the first past its end), so an off-by-one reads as one, whichever bytes of
    the value happened to equal the guard's."""
    before = np.flatnonzero(image[:guard] != expected[0])
    after = np.flatnonzero(image[guard + nbytes:] != expected[1])
    if before.size == 0 and after.size == 0:
        return None
    length = nbytes // itemsize
    parts, indices = [], []
    if after.size:
        slots = _elements(after, itemsize)
        indices = [[length + int(slot)] for slot in slots[:FIRST]]
        listed = ", ".join(str(length + int(slot)) for slot in slots[:FIRST])
        parts.append(f"{_plural(slots.size, 'element')} past the end changed: index {listed}"
                     f"{', ...' if slots.size > FIRST else ''} of {name}, which holds "
                     f"{_plural(length, 'element')} (first at byte {int(after[0])} past the end)")
    if before.size:
        slots = _elements(guard - 1 - before, itemsize)
        parts.append(f"{_plural(slots.size, 'element')} before the start changed, the nearest "
                     f"{_plural(int(slots[0]) + 1, 'element')} before index 0 (first at byte "
                     f"{guard - int(before[-1])} before it)")
    return Finding(Status.GUARD_ZONE, name, "wrote outside the buffer: " + "; ".join(parts),
                   count=int(_elements(after, itemsize).size + _elements(
                       guard - 1 - before, itemsize).size), first_indices=indices)


def _bits(array: Array) -> Array:
    """The elements as unsigned integers of the same size: one vector compare per element
    (much faster than comparing bytes, and exact where floats are not: NaN equals NaN)."""
    flat = np.ascontiguousarray(array).reshape(-1)
    return flat.view(UNSIGNED[flat.itemsize])


def check_unchanged(name: str, original: Array, after: Array) -> Finding | None:
    """An `in` buffer must come back byte for byte as it went."""
    changed = _bits(original) != _bits(after)
    if not changed.any():
        return None
    mask = changed.reshape(original.shape)
    return Finding(Status.INPUT_CHANGED, name, f"the kernel changed {int(changed.sum())} of "
                   f"{changed.size} element(s) of this input", count=int(changed.sum()),
                   total=int(changed.size), first_indices=_indices(mask),
                   expected=_values(original, mask), actual=_values(after, mask))


def _unwritten_mask(actual: Array, expected: Array, dtype: DType) -> Array:
    """Elements still holding the poison bytes, where the reference does not expect them."""
    pattern = _bits(poison(dtype, 1))[0]
    still_poison = _bits(actual) == pattern
    if not still_poison.any():
        return np.zeros(actual.shape, dtype=bool)
    meant = _bits(expected.astype(dtype.numpy)) == pattern
    mask: Array = (still_poison & ~meant).reshape(actual.shape)
    return mask


def _error_stats(got: Array, want: Array, bad: Array) -> tuple[float, float]:
    """Largest absolute and relative errors over the failing elements; an infinity or a NaN
    where the reference has something else is an unbounded error (inf), never 0."""
    g, w = got[bad], want[bad]
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.abs(g - w)
        diff[np.isnan(diff)] = np.inf
        rel = diff / np.maximum(np.abs(w), np.finfo(np.float64).tiny)
    rel[np.isnan(rel)] = np.inf
    return float(diff.max()), float(rel.max())


def median_magnitude(values: Array) -> float:
    """The median |x| over the finite elements of a float array (0.0 when there are none),
    equal to np.median over them in float64. Found on the bit patterns: with the sign bit
    cleared, unsigned integers order exactly as the magnitudes do (see _kth)."""
    flat = np.ascontiguousarray(values).reshape(-1)
    unsigned = UNSIGNED[flat.itemsize]
    magnitudes = flat.view(unsigned) & unsigned(~(1 << (8 * flat.itemsize - 1)) & _ONES[unsigned])
    finite = magnitudes[magnitudes < np.array(np.inf, dtype=flat.dtype).view(unsigned)]
    if finite.size == 0:
        return 0.0
    top = (finite >> (8 * flat.itemsize - 16)).astype(np.intp)
    below = np.cumsum(np.bincount(top, minlength=1 << 16))
    middle = finite.size // 2
    high = float(_kth(finite, middle, top, below).view(flat.dtype)[0])
    if finite.size % 2:
        return high
    low = float(_kth(finite, middle - 1, top, below).view(flat.dtype)[0])
    return (low + high) / 2


def _kth(values: Array, k: int, top: Array, counted: Array) -> Array:
    """The k-th smallest (from 0) of unsigned integers, as a one-element array. `top` holds
    their top 16 bits and `counted` the running count of each top value: only the elements
    sharing the k-th's top bits are partitioned (a few per cent of them, against all of them
    for np.partition: three times faster at 1M float32)."""
    bucket = int(np.searchsorted(counted, k, side="right"))
    before = int(counted[bucket - 1]) if bucket else 0
    members = values[top == bucket]
    members.partition(k - before)
    selected: Array = members[k - before:k - before + 1]
    return selected


def default_atol(dtype: DType, expected: Array) -> float:
    """The dtype's atol, scaled by the output's typical magnitude when that is below 1.

    An absolute 1e-5 is loose against outputs of 2e-4 (a softmax over 4099 columns): a kernel
    that dropped one term of its sums erred by 6e-8 and passed. The typical magnitude is the
    median |expected| of the finite elements; outputs mostly zero keep the plain atol."""
    scale = median_magnitude(expected)
    return dtype.atol * min(1.0, scale) if scale > 0 else dtype.atol


def _bad_mask(got: Array, want: Array, rtol: float, atol: float, is_float: bool) -> Array:
    """Elements outside tolerance, or with NaN/Inf where the reference has none (or back)."""
    if not is_float:
        return np.asarray(got != want)
    with np.errstate(invalid="ignore", over="ignore"):
        # |got - want| <= atol + rtol * |want|, in place: two temporaries instead of five.
        error = np.subtract(got, want)
        np.abs(error, out=error)
        allowed = np.abs(want)
        allowed *= rtol
        allowed += atol
        close = error <= allowed
    # An infinite reference makes the tolerance infinite too: such elements are suspects.
    bad: Array = ~close | np.isinf(want)
    if not bad.any():
        return bad
    # Only the few elements that failed the plain test can be NaN or Inf: look at those.
    suspects = np.flatnonzero(bad)
    g, w = got.reshape(-1)[suspects], want.reshape(-1)[suspects]
    same_nan = np.isnan(g) & np.isnan(w)
    same_inf = np.isinf(g) & np.isinf(w) & (np.sign(g) == np.sign(w))
    bad.reshape(-1)[suspects[same_nan | same_inf]] = False
    return bad


def check_output(name: str, actual: Array, expected: Array, dtype_name: str,
                 rtol: float | None, atol: float | None) -> list[Finding]:
    """An output against the reference: unwritten elements first, then values."""
    dtype = lookup(dtype_name)
    rtol = dtype.rtol if rtol is None else rtol
    wide = np.float64 if dtype.is_float else np.int64
    narrow = expected.astype(dtype.numpy, copy=False)  # the values the kernel can hold
    if narrow.shape == actual.shape and np.array_equal(_bits(actual), _bits(narrow)):
        # Bit for bit what the reference holds: within any tolerance, and no element still
        # holds the poison unless the reference does too. One compare instead of widening
        # both to 64 bits (a warm verify of vector_add spent a third of its checks there).
        return []
    want = narrow.astype(wide)
    if atol is None:  # the median of the narrow values: the same numbers, half the bytes
        atol = default_atol(dtype, narrow) if dtype.is_float else 0.0
    findings = []
    unwritten = _unwritten_mask(actual, expected, dtype)
    if unwritten.any():
        findings.append(Finding(
            Status.UNWRITTEN, name, f"{int(unwritten.sum())} of {unwritten.size} element(s) were "
            "never written (they still hold the poison value)", count=int(unwritten.sum()),
            total=int(unwritten.size), first_indices=_indices(unwritten),
            expected=_values(expected, unwritten), actual=["unwritten"] * min(
                FIRST, int(unwritten.sum()))))
    got = actual.astype(wide)
    bad = _bad_mask(got, want, rtol, atol, dtype.is_float) & ~unwritten
    if bad.any():
        max_abs, max_rel = _error_stats(got, want, bad) if dtype.is_float else \
            _error_stats(got.astype(np.float64), want.astype(np.float64), bad)
        tolerance = f"atol {atol:g} + rtol {rtol:g} * |expected|" if dtype.is_float else "exact"
        findings.append(Finding(
            Status.MISMATCH, name, f"{int(bad.sum())} of {bad.size} element(s) differ from the "
            f"reference ({tolerance})", count=int(bad.sum()), total=int(bad.size),
            first_indices=_indices(bad), expected=_values(want, bad), actual=_values(got, bad),
            max_abs_error=max_abs, max_rel_error=max_rel))
    return findings
