"""The element types a spec may name, with their NumPy types and default tolerances."""

from __future__ import annotations

from dataclasses import dataclass

import ml_dtypes
import numpy as np


@dataclass(frozen=True)
class DType:
    """One spec dtype: its NumPy type, its C type, and how results of it are compared."""

    name: str
    numpy: np.dtype[np.generic]
    c_type: str
    is_float: bool
    rtol: float
    atol: float

    @property
    def itemsize(self) -> int:
        """Bytes per element."""
        return int(self.numpy.itemsize)


def _float(name: str, numpy_type: object, c_type: str, tol: float) -> DType:
    """A floating-point dtype with the same relative and absolute default tolerance."""
    return DType(name, np.dtype(numpy_type), c_type, True, tol, tol)  # type: ignore[call-overload]


def _int(name: str, numpy_type: object, c_type: str) -> DType:
    """An integer dtype, compared exactly."""
    return DType(name, np.dtype(numpy_type), c_type, False, 0.0, 0.0)  # type: ignore[call-overload]


DTYPES: dict[str, DType] = {d.name: d for d in (
    _float("float16", np.float16, "__half", 1e-2),
    _float("bfloat16", ml_dtypes.bfloat16, "__nv_bfloat16", 1e-2),
    _float("float32", np.float32, "float", 1e-5),
    _float("float64", np.float64, "double", 1e-8),
    _int("int8", np.int8, "signed char"),
    _int("uint8", np.uint8, "unsigned char"),
    _int("int16", np.int16, "short"),
    _int("uint16", np.uint16, "unsigned short"),
    _int("int32", np.int32, "int"),
    _int("uint32", np.uint32, "unsigned int"),
    _int("int64", np.int64, "long long"),
    _int("uint64", np.uint64, "unsigned long long"),
)}


def lookup(name: str) -> DType:
    """The DType called `name`; KeyError lists the valid names."""
    try:
        return DTYPES[name]
    except KeyError:
        raise KeyError(f"unknown dtype {name!r}; use one of {', '.join(DTYPES)}") from None
