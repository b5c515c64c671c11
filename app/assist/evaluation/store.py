"""The local results store of evaluations: one JSON line per run, appended, in the data folder
(eval/results.jsonl), so that runs can be compared over time. A line that cannot be read is
skipped and counted, never fatal: the store outlives versions of the format."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from app.base.paths import data_dir

STORE_FOLDER = "eval"
STORE_NAME = "results.jsonl"
FORMAT = "kernel-studio-eval"
VERSION = 1


def store_path() -> Path:
    """Where evaluation results are appended."""
    return data_dir() / STORE_FOLDER / STORE_NAME


def append_result(result: dict[str, Any], path: Path | None = None) -> Path:
    """Append one run's result as a line (flushed and synced: a crash later keeps it)."""
    target = path or store_path()
    target.parent.mkdir(parents=True, exist_ok=True)
    line = json.dumps({"format": FORMAT, "version": VERSION, **result}, sort_keys=True)
    with target.open("a", encoding="utf-8") as handle:
        handle.write(line + "\n")
        handle.flush()
        os.fsync(handle.fileno())
    return target


def load_results(path: Path | None = None) -> tuple[list[dict[str, Any]], int]:
    """Every stored run, oldest first, and how many lines could not be read."""
    target = path or store_path()
    try:
        lines = target.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return [], 0
    results, skipped = [], 0
    for line in lines:
        try:
            data = json.loads(line)
        except ValueError:
            skipped += 1
            continue
        if isinstance(data, dict) and data.get("format") == FORMAT:
            results.append(data)
        elif line.strip():
            skipped += 1
    return results, skipped
