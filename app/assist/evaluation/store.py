"""The local results store of evaluations: one JSON line per run, appended, in the data folder
(eval/results.jsonl), so that runs can be compared over time. A line that cannot be read is
skipped and counted, never fatal: the store outlives versions of the format.

Each line is a `StoredRun` through app.base.codec: the format and version it was written with,
and the run (EvalResult.as_dict's data, kept as data: runs of older versions differ in what
they hold, and the Eval view reads what it finds). Keys are sorted, as they always were."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import msgspec

from app.base import codec
from app.base.paths import data_dir

STORE_FOLDER = "eval"
STORE_NAME = "results.jsonl"
FORMAT = "kernel-studio-eval"
VERSION = 1


class StoredRun(msgspec.Struct, frozen=True):
    """What every line of the store says of itself; the rest of the line is the run."""

    format: str
    version: int = VERSION


def store_path() -> Path:
    """Where evaluation results are appended."""
    return data_dir() / STORE_FOLDER / STORE_NAME


def store_line(result: dict[str, Any]) -> str:
    """One run's line: its format and version beside the run's own keys, sorted."""
    return json.dumps({**codec.to_object(StoredRun(FORMAT)), **result}, sort_keys=True)


def append_result(result: dict[str, Any], path: Path | None = None) -> Path:
    """Append one run's result as a line (flushed and synced: a crash later keeps it)."""
    target = path or store_path()
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("a", encoding="utf-8") as handle:
        handle.write(store_line(result) + "\n")
        handle.flush()
        os.fsync(handle.fileno())
    return target


def read_line(line: str) -> dict[str, Any] | None:
    """The run a line holds, or None when it is not one of this store's lines (another
    format, not JSON, or a header with the wrong types: CodecError's field)."""
    try:
        data = json.loads(line)
        header = codec.from_data(StoredRun, data, "stored evaluation")
    except (ValueError, RecursionError):
        return None
    return data if header.format == FORMAT else None


def load_results(path: Path | None = None) -> tuple[list[dict[str, Any]], int]:
    """Every stored run, oldest first, and how many lines could not be read (blank ones
    included, as always)."""
    target = path or store_path()
    try:
        lines = target.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return [], 0
    results = [run for run in map(read_line, lines) if run is not None]
    return results, len(lines) - len(results)
