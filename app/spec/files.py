"""Finding the spec of a kernel source and the source of a spec (files only, no Qt)."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from app.spec.limits import loads_bounded

MAX_CANDIDATES = 50


def _kernel_table(spec_path: Path) -> dict[str, Any]:
    """The [kernel] table of a spec file, or {} when it cannot be read."""
    try:
        kernel = loads_bounded(spec_path.read_text(encoding="utf-8")).get("kernel", {})
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return {}
    return kernel if isinstance(kernel, dict) else {}


def spec_for(source: Path) -> Path | None:
    """The spec of a kernel source: <stem>.toml beside it, or a .toml there naming it."""
    if source.suffix == ".toml":
        return source
    beside = source.with_suffix(".toml")
    if beside.is_file():
        return beside
    for candidate in sorted(source.parent.glob("*.toml"))[:MAX_CANDIDATES]:
        if _kernel_table(candidate).get("source") == source.name:
            return candidate
    return None


def source_of(spec_path: Path) -> Path | None:
    """The kernel source a spec names, if it exists."""
    source = spec_path.parent / str(_kernel_table(spec_path).get("source", ""))
    return source if source.is_file() and source.suffix != ".toml" else None
