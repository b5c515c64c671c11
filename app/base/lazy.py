"""Package exports that are imported when first used, not when the package is.

Why: a package's `__init__` runs whenever any of its modules is imported. The assistant's
re-exports the model session, the prompts and (through them) the verify engine, so a GUI module
that only needed the evaluation store paid for all of it before the window could open.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def exports(package: str, homes: dict[str, str]) -> Callable[[str], Any]:
    """A module `__getattr__` for `package` that imports each name of `homes` (name -> the
    module defining it) on first use and keeps it in the package."""

    def get(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home), name)
        setattr(importlib.import_module(package), name, value)
        return value

    return get
