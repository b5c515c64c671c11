"""Running a spec's Python reference on the host, in the parent process, so that the expected
values never sit in memory a kernel can reach.

A reference is code, trusted like any script the user runs. A spec that arrives from someone
else must not have its reference run without the user's consent: callers pass `trusted=False`
for such specs and get ReferenceError until the user agrees.
"""

from __future__ import annotations

import importlib.util
import math
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from app.cases import Resolved
from app.spec import Spec

Array = np.ndarray[Any, Any]


class ReferenceError(Exception):
    """The reference cannot be loaded, raised an error, or returned something unusable."""


def load_reference(path: Path) -> Callable[..., Any]:
    """The `reference` function defined in a Python file."""
    module_spec = importlib.util.spec_from_file_location(f"ks_reference_{abs(hash(path))}", path)
    if module_spec is None or module_spec.loader is None:
        raise ReferenceError(f"cannot load {path}")
    module = importlib.util.module_from_spec(module_spec)
    try:
        module_spec.loader.exec_module(module)
    except Exception as error:
        raise ReferenceError(f"{path.name} failed to load: {type(error).__name__}: {error}") \
            from None
    function = getattr(module, "reference", None)
    if not callable(function):
        raise ReferenceError(f"{path.name} defines no function `reference(**inputs)`")
    return function  # type: ignore[no-any-return]


def _last_frame(error: BaseException) -> str:
    """Where in the reference an error happened, for the message."""
    frames = traceback.extract_tb(error.__traceback__)
    return f" (line {frames[-1].lineno})" if frames else ""


def expected_outputs(function: Callable[..., Any], spec: Spec, resolved: Resolved,
                     inputs: dict[str, Array]) -> dict[str, Array]:
    """Call the reference with copies of the inputs and the scalars; check what it returns."""
    arguments: dict[str, Any] = {name: array.copy() for name, array in inputs.items()}
    arguments.update(resolved.scalars)
    try:
        returned = function(**arguments)
    except Exception as error:
        raise ReferenceError(f"the reference raised {type(error).__name__}: {error}"
                             f"{_last_frame(error)}") from None
    if not isinstance(returned, dict):
        raise ReferenceError(f"the reference must return a dict of outputs, not "
                             f"{type(returned).__name__}")
    return {arg.name: _shaped(returned, arg.name, resolved.shapes[arg.name], arg.dtype)
            for arg in spec.args if arg.kind in ("out", "inout")}


def _shaped(returned: dict[str, Any], name: str, shape: tuple[int, ...], dtype: str) -> Array:
    """One returned output as an array of the spec's shape."""
    if name not in returned:
        raise ReferenceError(f"the reference returned no value for output {name!r} "
                             f"(it returned: {', '.join(map(str, returned)) or 'nothing'})")
    array = np.asarray(returned[name])
    if array.size != math.prod(shape):
        raise ReferenceError(f"the reference returned {array.size} element(s) for {name!r}; "
                             f"the spec's shape {shape} has {math.prod(shape)}")
    if array.dtype.kind not in "biufV":
        raise ReferenceError(f"the reference returned {array.dtype} data for {name!r}; "
                             f"expected numbers ({dtype})")
    return array.reshape(shape)
