"""Timing options between the GUI and its job process: app.engine.bench.runner.BenchOptions as JSON
and back (no Qt; the dialog builds the options, the job process runs them)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

# What the GUI sets; everything else keeps the engine's defaults.
FIELDS = ("mode", "budget_ms", "sweep", "vs", "case")


def options_to_json(options: Any) -> dict[str, Any]:
    """The fields of a BenchOptions that the GUI sets, as JSON-ready data."""
    data = {name: getattr(options, name) for name in FIELDS}
    if data["sweep"] is not None:
        variable, values = data["sweep"]
        data["sweep"] = [str(variable), list(values)]
    if isinstance(data["vs"], Path):
        data["vs"] = str(data["vs"])
    return data


def options_from_json(data: dict[str, Any], backend: str = "auto") -> Any:
    """A BenchOptions from options_to_json's data (the engine's defaults for the rest)."""
    from app.engine.bench.runner import BenchOptions

    fields = {name: data[name] for name in FIELDS if data.get(name) is not None}
    if "sweep" in fields:
        variable, values = fields["sweep"]
        fields["sweep"] = (str(variable), list(values))
    if "vs" in fields:
        fields["vs"] = Path(fields["vs"])
    return dataclasses.replace(BenchOptions(backend=backend), **fields)
