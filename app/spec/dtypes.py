"""The element types a spec may name, with their NumPy types and default tolerances."""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class DType:
    """One spec dtype: its NumPy type, its C type, and how results of it are compared."""

    name: str
    itemsize: int
    c_type: str
    is_float: bool
    rtol: float
    atol: float

    @property
    def numpy(self) -> np.dtype[np.generic]:
        """The NumPy dtype (bfloat16's comes from ml_dtypes, loaded on first use: about 0.3 s
        of every command's start-up otherwise, `--help` included)."""
        return _numpy_dtype(self.name)


@functools.cache
def _numpy_dtype(name: str) -> np.dtype[np.generic]:
    """The NumPy dtype called `name`, importing ml_dtypes only for bfloat16."""
    if name == "bfloat16":
        import ml_dtypes

        bfloat16: np.dtype[np.generic] = np.dtype(ml_dtypes.bfloat16)
        return bfloat16
    return np.dtype(name)


def _float(name: str, itemsize: int, c_type: str, tol: float) -> DType:
    """A floating-point dtype with the same relative and absolute default tolerance."""
    return DType(name, itemsize, c_type, True, tol, tol)


def _int(name: str, itemsize: int, c_type: str) -> DType:
    """An integer dtype, compared exactly."""
    return DType(name, itemsize, c_type, False, 0.0, 0.0)


DTYPES: dict[str, DType] = {d.name: d for d in (
    _float("float16", 2, "__half", 1e-2),
    _float("bfloat16", 2, "__nv_bfloat16", 1e-2),
    _float("float32", 4, "float", 1e-5),
    _float("float64", 8, "double", 1e-8),
    _int("int8", 1, "signed char"),
    _int("uint8", 1, "unsigned char"),
    _int("int16", 2, "short"),
    _int("uint16", 2, "unsigned short"),
    _int("int32", 4, "int"),
    _int("uint32", 4, "unsigned int"),
    _int("int64", 8, "long long"),
    _int("uint64", 8, "unsigned long long"),
)}


def lookup(name: str) -> DType:
    """The DType called `name`; KeyError lists the valid names."""
    try:
        return DTYPES[name]
    except KeyError:
        raise KeyError(f"unknown dtype {name!r}; use one of {', '.join(DTYPES)}") from None
